# shellcheck shell=sh disable=SC2317 # the functions are called by the tests
# Helpers of the storage-stack tests (tests/stack-*.sh): ioband over (or
# under) LVM, dm-crypt, md RAID1 and a loop file, each with its shares and
# its data checked. A test sources lib.sh, then this file:
#
#   . /ioband/lib.sh
#   . /ioband/lib-stack.sh
#
# and tears its stack down itself (stack_cleanup in an EXIT trap): the
# harness knows dm devices, loop devices and null_blk, not md arrays or
# volume groups.

# The share check's load, per group: deep direct IO. Today's scheduler
# holds shares only while hundreds of bios per group wait in it (the
# rewrite of issue 16 is to need far fewer): lighten this once it lands.
STACK_LOAD="--rw=randread --bs=4k --direct=1 --ioengine=libaio --numjobs=8 --iodepth=32"
# The bottom device's cap (null_blk mbps=): the device, not the emulated
# CPU, is the bottleneck (/work/shared/notes/guest-benchmarking.md).
STACK_MBPS=${STACK_MBPS:-16}
STACK_WINDOW=15 # seconds over which the shares are counted

# need_tool COMMAND PACKAGE: fail unless the guest has COMMAND.
need_tool() {
	command -v "$1" >/dev/null 2>&1 ||
		fail "$1 is not in the guest: tests/vm/build-initramfs copies it from the host (apt-get install $2)"
}

# stack_nullb NAME SIZE_MIB: a capped, memory-backed null_blk (the data
# must stay for fio's verify and for the metadata of the stacks).
stack_nullb() {
	make_nullb "$1" "$2" mbps="$STACK_MBPS" memory_backed=1
}

# stack_lv NULLB VG: a 512 MiB stack_nullb NULLB as the one physical volume
# of a new volume group VG, with a 256 MiB logical volume lv1 (after
# lvm_setup).
stack_lv() {
	_sl_dev=$(stack_nullb "$1" 512)
	lvm pvcreate -q "$_sl_dev"
	lvm vgcreate -q "$2" "$_sl_dev"
	lvm lvcreate -q -n lv1 -L 256m "$2"
	[ -b "/dev/$2/lv1" ] || fail "no /dev/$2/lv1 after lvcreate"
}

# lvm_setup [DEVICE...]: an lvm.conf for the guest: no udev (lvm makes the
# nodes), no dmeventd, null_blk accepted as a physical volume, and each
# DEVICE hidden from LVM (a global_filter, as for the paths below
# multipath).
lvm_setup() {
	need_tool lvm lvm2
	mkdir -p /etc/lvm /run/lock/lvm
	_ls_filter=
	for _ls_dev in "$@"; do
		_ls_filter="$_ls_filter\"r|^$_ls_dev\$|\", "
	done
	cat >/etc/lvm/lvm.conf <<-EOF
		devices {
			global_filter = [ $_ls_filter"a|.*|" ]
			types = [ "nullb", 16 ]
			obtain_device_list_from_udev = 0
			external_device_info_source = "none"
			use_devicesfile = 0
		}
		activation {
			udev_sync = 0
			udev_rules = 0
			monitoring = 0
		}
		global {
			locking_dir = "/run/lock/lvm"
		}
	EOF
}

# group_sectors IOBAND ID: sectors read and written by group ID of ioband
# device IOBAND (its status: <domain>, then 7 fields a group: id, reads,
# delayed reads, read sectors, writes, delayed writes, write sectors).
group_sectors() {
	dmsetup status "$1" | awk -v id="$2" '{
		for (i = 5; i + 6 <= NF; i += 7)
			if ($i == id) { print $(i + 3) + $(i + 6); found = 1 }
	} END { if (!found) print "none" }'
}

# stack_shares IOBAND_A TARGET_A IOBAND_B TARGET_B: cgroup stack-a, weight
# 200 on ioband device IOBAND_A, and stack-b, weight 100 on IOBAND_B (the
# same device, or another of its bandwidth domain), each run $STACK_LOAD
# on their TARGET (the ioband device, or a device stacked on it). Over
# STACK_WINDOW seconds of steady load, the sectors ioband let through for
# them are 2:1 +-10%, and the cap of the device below bound them.
stack_shares() {
	cg_create stack-a
	cg_create stack-b
	iobandctl attach "$1" stack-a 200
	iobandctl attach "$3" stack-b 100
	_ss_ida=$(cg_id stack-a)
	_ss_idb=$(cg_id stack-b)
	_ss_runtime=$(($(scaled 10) + STACK_WINDOW + 5))
	# shellcheck disable=SC2086 # STACK_LOAD is a list of options
	cg_run stack-a fio --name=a --filename="$2" $STACK_LOAD --time_based \
		--runtime="$_ss_runtime" --output=/dev/null &
	_ss_pa=$!
	# shellcheck disable=SC2086
	cg_run stack-b fio --name=b --filename="$4" $STACK_LOAD --time_based \
		--runtime="$_ss_runtime" --output=/dev/null &
	_ss_pb=$!
	wait_io "$2" stack-a
	wait_io "$4" stack-b
	sleep "$(scaled 3)" # every job of both under way
	_ss_a0=$(group_sectors "$1" "$_ss_ida")
	_ss_b0=$(group_sectors "$3" "$_ss_idb")
	sleep "$STACK_WINDOW"
	_ss_da=$(($(group_sectors "$1" "$_ss_ida") - _ss_a0))
	_ss_db=$(($(group_sectors "$3" "$_ss_idb") - _ss_b0))
	stop_fio "$_ss_pa" "$_ss_pb" # the runtime is only a ceiling
	assert_ge "$_ss_db" 1 "sectors of stack-b in the window"
	_ss_ratio=$((_ss_da * 100 / _ss_db))
	log "shares over ${STACK_WINDOW} s: stack-a $_ss_da sectors, stack-b $_ss_db sectors, ratio $_ss_ratio/100 (weights 200:100)"
	perf_check assert_within_pct 200 "$_ss_ratio" 10 "stack-a:stack-b (x100)"
	# The cap bound the IO (80%: an emulated guest on a busy host falls a
	# little short of it), so the shares were ioband's to decide.
	perf_check assert_ge $(((_ss_da + _ss_db) / STACK_WINDOW)) \
		$((STACK_MBPS * 2048 * 80 / 100)) "sectors per second of both groups"
	iobandctl detach "$1" stack-a
	iobandctl detach "$3" stack-b
	cg_remove stack-a
	cg_remove stack-b
}

# stack_verify TARGET [TARGET_B]: two cgroups write 16 MiB each at once
# through ioband (on TARGET, or stack-b on TARGET_B), each its own half,
# with checksums, and read them back: fio fails on any mismatch.
stack_verify() {
	cg_create stack-va
	cg_create stack-vb
	_sv_opts="--bs=4k --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite --size=16M --verify=crc32c --verify_fatal=1 --do_verify=1"
	# shellcheck disable=SC2086
	cg_run stack-va fio --name=va --filename="$1" --offset=0 $_sv_opts \
		--output=verify-a.log &
	_sv_pa=$!
	# shellcheck disable=SC2086
	cg_run stack-vb fio --name=vb --filename="${2:-$1}" --offset=16M $_sv_opts \
		--output=verify-b.log &
	_sv_pb=$!
	_sv_ok=1
	wait "$_sv_pa" || _sv_ok=0
	wait "$_sv_pb" || _sv_ok=0
	if [ "$_sv_ok" = 0 ]; then
		cat verify-a.log verify-b.log
		fail "fio verify failed on $1 ${2:-}"
	fi
	log "verify: 2 x 16 MiB written and read back intact"
	cg_remove stack-va
	cg_remove stack-vb
}

# stack_cleanup CMD...: run each teardown command (a string), the last
# stacked first, going on past a failure; for an EXIT trap.
stack_cleanup() {
	for _sc_cmd in "$@"; do
		eval "$_sc_cmd" >/dev/null 2>&1 || echo "stack cleanup: '$_sc_cmd' failed" >&2
	done
}

# iobandctl stat --json --interval 0.1 DEVICE | share_samples ID_A ID_B:
# "<ms> <sectors of a> <sectors of b> <weight of a> <weight of b>" a line
# a sample, for share_crossing. One iobandctl stat process, not a command
# per sample, which would load the emulated CPUs the guest runs
# everything on. The time is the module's (elapsed_ns), of the counters:
# a sampler that the guest's scheduler delays measures no delay of
# ioband's. It ends a pipeline and execs awk, so that $! of the pipeline
# in the background is awk's: killed, iobandctl ends on its next write.
share_samples() {
	exec awk -v a="$1" -v b="$2" '
		function num(s) { gsub(/[^0-9-]/, "", s); return s }
		/"elapsed_ns":/ { t = int(num($2) / 1000000) }
		/"id":/ { id = num($2) }
		/"weight":/ { if (id == a) wa = num($2); if (id == b) wb = num($2) }
		/"read_bytes":|"write_bytes":/ {
			if (id == a) sa += num($2)
			if (id == b) sb += num($2)
		}
		/^}/ { print t, int(sa / 512), int(sb / 512), wa, wb; fflush(); sa = 0; sb = 0 }'
}

# share_crossing SAMPLES FROM_MS a|b PCT: ms from FROM_MS until that
# group's share of the last second in share_samples' SAMPLES first
# reaches PCT%, or -1 if it never does; between two samples the time is
# interpolated linearly.
share_crossing() {
	awk -v t0="$2" -v col="$([ "$3" = a ] && echo 2 || echo 3)" -v pct="$4" '
		{ n++; ts[n] = $1; sa[n] = $2; sb[n] = $3; sg[n] = $col }
		END {
			for (i = 1; i <= n; i++) {
				for (j = i; j > 1 && ts[j] > ts[i] - 1000; j--) ;
				d = sa[i] - sa[j] + sb[i] - sb[j]
				share = d ? (sg[i] - sg[j]) * 100 / d : 0
				if (ts[i] >= t0 && share >= pct) {
					t = ts[i]
					if (ts[i - 1] >= t0 && share > prev)
						t = ts[i - 1] + (pct - prev) / (share - prev) * (ts[i] - ts[i - 1])
					print int(t - t0 + 0.5)
					exit
				}
				prev = share
			}
			print -1 }' "$1"
}
