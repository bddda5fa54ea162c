#!/bin/sh
# Guest side of bench/run-modeldev (which prepends the MB_ settings and
# runs it through tests/vm/run): the scenarios of issue 41 on the model
# block device (tests/modeldev), each under every variant, one after
# another in one boot, shares counted in the device's own account of its
# time (cgroup_time). The runs are MB_RUNS, "DEVICE/SCENARIO/VARIANT" words
# in the order to run them (the host shuffles them); without it, every
# device, scenario and variant of MB_DEVICES, MB_SCENARIOS, MB_VARIANTS in
# that order. Prints per run and group
#   RESULT <device> <scenario> <variant> <phase> <group> <weight> <device_ns> <ios> <bytes> <secs>
# (phase "run"; the idle scenario: "both", "idle" and "back"; the slow
# scenario: "run", then "slow" and "after", each from MB_SETTLE s after the
# slow phase's start and end to MB_SLOW s after it), per run
#   RUNTIME <device> <scenario> <variant> <wall seconds>
# or SKIP <device> <scenario> <variant> <why>, per device
#   MODEL <device> <parameter> <value> ...
# and the host turns them into tables.
#
# Devices (MB_DEVICES words): ssd, the ssd preset's costs 30 times over on
# 2 channels (a 4 KiB read 2.30 ms, a 4 KiB write 0.99 ms, a 256 KiB write
# 59.4 ms): TCG cannot keep the preset itself busy; hdd, the hdd preset's
# costs (seeks included) MB_HDD_SCALE (4) times over on its 1 channel (a
# 4 KiB random read about 51 ms, a 256 KiB sequential write 5.6 ms).
# Variants: none (dm-linear alone); ioband:POLICY; bfq[:KNOB=VALUE...]
# (BFQ's iosched knobs, or nr_requests, on model0's queue); iocost:true
# (io.cost.model from the device's true costs, its best case) and
# iocost:default (the kernel's own model), both with qos max 400 so that
# vrate may move both ways. Every variant runs on a dm-linear or ioband
# device over model0; BFQ and iocost act on model0's queue.
# harness-timeout: 900
# shellcheck source=../../tests/vm/lib.sh
. /ioband/lib.sh

: "${MB_WARMUP:=2}" "${MB_SECS:=6}" "${MB_IDLE:=2}" "${MB_BACK:=1}"
: "${MB_SLOW:=6}" "${MB_SETTLE:=2}" "${MB_SLOW_FACTORS:=1 4}"
: "${MB_DEVICES:=ssd hdd}" "${MB_HDD_SCALE:=4}"
: "${MB_SCENARIOS:=rrsw8 rw11 rr8-4 rr8-32 eq8-4 eq8-32 bw2 idle slow}"
: "${MB_VARIANTS:=none ioband:weight-iosize ioband:weight-time bfq bfq:slice_idle=0 bfq:low_latency=0 bfq:strict_guarantees=1 bfq:nr_requests=512 iocost:true iocost:default}"
: "${MB_BW_JOBS:=16}" "${MB_BW_SIZE_MB:=4}" "${MB_BW_BS:=64k}" "${MB_BW_DIRTY_MB:=32}"
if [ -z "${MB_RUNS:-}" ]; then
	for d in $MB_DEVICES; do
		for s in $MB_SCENARIOS; do
			for v in $MB_VARIANTS; do MB_RUNS="${MB_RUNS:-} $d/$s/$v"; done
		done
	done
fi
SYS=/sys/block/model0
SIZE_MB=512
ALL_GROUPS="a b g1 g2 g3 g4 g5 g6 g7 g8"
# set -e holds in a trap too: every command of it may fail.
trap 'killall -KILL fio 2>/dev/null || true; umount mnt 2>/dev/null || true
	dm_remove mb 2>/dev/null || true; rmmod ioband_model 2>/dev/null || true' EXIT

# device_on DEVICE: load the model device with DEVICE's costs; sets CH and
# the costs iocost:true is given (RIO RKIB WIO WKIB, and SEEK, a random
# IO's mean seek).
device_on() {
	case $1 in
	ssd)
		CH=2 RIO=1470000 RKIB=207900 WIO=60000 WKIB=231900 SEEK=0
		modprobe ioband_model preset=ssd size_mb=$SIZE_MB channels=$CH read_io_ns=$RIO \
			read_kib_ns=$RKIB write_io_ns=$WIO write_kib_ns=$WKIB || fail "modprobe ioband_model (ssd)" ;;
	hdd)
		# The preset's figures (tests/modeldev/README.md) times the scale;
		# the seek's per-GiB cost spans the 22.5 ms stroke over the device.
		_x=$MB_HDD_SCALE
		CH=1 RIO=$((100000 * _x)) RKIB=$((5120 * _x)) WIO=$((100000 * _x)) WKIB=$((5120 * _x))
		_smin=$((5170000 * _x)) _stroke=$((22500000 * _x))
		SEEK=$((_smin + _stroke / 3))
		modprobe ioband_model preset=hdd size_mb=$SIZE_MB channels=$CH read_io_ns=$RIO \
			read_kib_ns=$RKIB write_io_ns=$WIO write_kib_ns=$WKIB seek_min_ns=$_smin \
			seek_ns_per_gib=$((_stroke * 1024 / SIZE_MB)) max_seek_ns=$((_smin + _stroke)) ||
			fail "modprobe ioband_model (hdd)" ;;
	*) fail "unknown device $1" ;;
	esac
	wait_for 10 test -b /dev/model0
	DEVICE=$1
	NR_REQUESTS=$(cat "$SYS/queue/nr_requests")
	echo "MODEL $1 $(tr '\n' ' ' <"$SYS/model/params")"
	size=$(dev_sectors /dev/model0)
	mm=$(dev_majmin /dev/model0)
}

device_off() {
	rmmod ioband_model || fail "rmmod ioband_model"
	DEVICE=
}

# iocost's linear model of the device: per-byte cost from bps, per-IO cost
# from 4 KiB IOPS less its pages (blk-iocost.c calc_lcoefs), sequential
# without a seek, random with the mean seek, at the device's full
# parallelism.
iocost_model() {
	awk -v ch="$CH" -v rio="$RIO" -v rkib="$RKIB" -v wio="$WIO" -v wkib="$WKIB" -v seek="$SEEK" 'BEGIN {
		rbps = int(ch * 1024e9 / rkib); wbps = int(ch * 1024e9 / wkib)
		rseq = int(ch * 1e9 / (rio + 4 * rkib)); wseq = int(ch * 1e9 / (wio + 4 * wkib))
		rrand = int(ch * 1e9 / (rio + 4 * rkib + seek)); wrand = int(ch * 1e9 / (wio + 4 * wkib + seek))
		printf "rbps=%d rseqiops=%d rrandiops=%d wbps=%d wseqiops=%d wrandiops=%d",
			rbps, rseq, rrand, wbps, wseq, wrand }'
}

echo "KERNEL $(uname -r)"
cg_create mb
for g in $ALL_GROUPS; do
	cg_create "mb/$g"
	eval "ID_$g=$(cg_id "mb/$g")"
done
group_id() { eval "echo \$ID_$1"; }

# variant_on VARIANT: the device /dev/mapper/mb and the controller, for
# the groups and weights of WEIGHTS ("name:weight ..."); false (and a SKIP
# line) when the kernel lacks what it needs.
variant_on() {
	_table=
	for _gw in $WEIGHTS; do _table="$_table $(group_id "${_gw%:*}"):${_gw#*:}"; done
	case $1 in
	ioband:*)
		dm_create mb "0 $size ioband /dev/model0 mb 0 0 cgroup ${1#ioband:} 0 :100$_table" >/dev/null ;;
	*)
		dm_create mb "0 $size linear /dev/model0 0" >/dev/null ;;
	esac
	case $1 in
	bfq | bfq:*)
		echo bfq >"$SYS/queue/scheduler" 2>/dev/null || { echo "SKIP $RUN no bfq"; return 1; }
		for _kv in $(echo "${1#bfq}" | tr ':' ' '); do
			_f=$SYS/queue/iosched/${_kv%=*}
			[ "${_kv%=*}" != nr_requests ] || _f=$SYS/queue/nr_requests
			echo "${_kv#*=}" >"$_f" 2>/dev/null || { echo "SKIP $RUN cannot set $_kv"; return 1; }
		done
		for _gw in $WEIGHTS; do echo "${_gw#*:}" >"$CGROOT/mb/${_gw%:*}/io.bfq.weight"; done ;;
	iocost:*)
		case $1 in
		iocost:true) echo "$mm ctrl=user model=linear $(iocost_model)" >"$CGROOT/io.cost.model" ;;
		iocost:default) echo "$mm ctrl=auto" >"$CGROOT/io.cost.model" ;;
		*) echo "SKIP $RUN unknown iocost model"; return 1 ;;
		esac
		echo "$mm enable=1 ctrl=user rpct=95 rlat=50000 wpct=95 wlat=50000 min=25 max=400" >"$CGROOT/io.cost.qos"
		for _gw in $WEIGHTS; do echo "${_gw#*:}" >"$CGROOT/mb/${_gw%:*}/io.weight"; done
		log "$RUN: $(grep "^$mm " "$CGROOT/io.cost.model") | $(grep "^$mm " "$CGROOT/io.cost.qos")" ;;
	none | ioband:*) ;;
	*) echo "SKIP $RUN unknown variant"; return 1 ;;
	esac
}

variant_off() {
	case $1 in
	bfq | bfq:*)
		echo none >"$SYS/queue/scheduler"
		echo "$NR_REQUESTS" >"$SYS/queue/nr_requests" || true ;;
	iocost:*)
		echo "$mm enable=0" >"$CGROOT/io.cost.qos"
		echo "$mm ctrl=auto" >"$CGROOT/io.cost.model" ;;
	esac
	dm_remove mb || fail "cannot remove mb"
}

job() { # GROUP FIO-ARGS...
	_g=$1
	shift
	cg_run "mb/$_g" fio --name="$_g" --filename=/dev/mapper/mb --direct=1 \
		--ioengine=libaio --time_based --runtime=3600 --output=/dev/null "$@" || true
}

# writers GROUP: GROUP's buffered writers (seed 004's fio --rw=write
# --numjobs, smaller) into its folder of the ext4 on mnt.
writers() {
	cg_run "mb/$1" fio --name="$1" --directory="mnt/$1" --rw=write --bs="$MB_BW_BS" \
		--size="${MB_BW_SIZE_MB}m" --numjobs="$MB_BW_JOBS" --time_based --runtime=3600 \
		--output=/dev/null || true
}

# every_group_busy: each group of WEIGHTS has device time in cgroup_time.
every_group_busy() {
	for _gw in $WEIGHTS; do
		grep -q "^$(group_id "${_gw%:*}") " "$SYS/model/cgroup_time" || return 1
	done
}

# snap FILE: cgroup_time and the time now, in FILE.
snap() {
	{ cut -d' ' -f1 /proc/uptime; cat "$SYS/model/cgroup_time"; } >"$1"
}

# result PHASE FROM TO: a RESULT line per group of the device time between
# two snaps.
result() {
	for _gw in $WEIGHTS; do
		awk -v run="$RUN" -v p="$1" -v g="${_gw%:*}" -v w="${_gw#*:}" -v id="$(group_id "${_gw%:*}")" '
			FNR == 1 { t[FILENAME] = $1; next }
			$1 == id { ns[FILENAME] = $2; by[FILENAME] = $3; io[FILENAME] = $4 }
			END {
				f = ARGV[1]; e = ARGV[2]
				split(run, r, "/")
				printf "RESULT %s %s %s %s %s %s %.0f %.0f %.0f %.3f\n", r[1], r[2], r[3], p, g, w,
					ns[e] - ns[f], io[e] - io[f], by[e] - by[f], t[e] - t[f] }' "$2" "$3"
	done
}

# dirty_restore BYTES BACKGROUND_BYTES RATIO BACKGROUND_RATIO: the dirty
# limits as they were (a ratio, or bytes when those were set).
dirty_restore() {
	echo "$3" >/proc/sys/vm/dirty_ratio
	echo "$4" >/proc/sys/vm/dirty_background_ratio
	[ "$1" = 0 ] || echo "$1" >/proc/sys/vm/dirty_bytes
	[ "$2" = 0 ] || echo "$2" >/proc/sys/vm/dirty_background_bytes
}

# slow_phase "READ WRITE": the device's service times that many times the
# model's from now on; snaps s2 MB_SETTLE s later and s3 MB_SLOW s after
# the change.
slow_phase() {
	echo "$1" >"$SYS/model/slowdown" || fail "model/slowdown $1"
	sleep "$MB_SETTLE"
	snap s2
	sleep $((MB_SLOW - MB_SETTLE))
	snap s3
}

# run DEVICE SCENARIO VARIANT: start the scenario's jobs under the variant,
# wait until each group has reached the device and MB_WARMUP more, then
# measure its window(s).
run() {
	RUN=$1/$2/$3
	_scen=$2 _var=$3
	_r0=$(cut -d' ' -f1 /proc/uptime)
	[ "$DEVICE" = "$1" ] || { [ -z "$DEVICE" ] || device_off; device_on "$1"; }
	_fs=
	case $_scen in
	rrsw8) WEIGHTS="a:800 b:100" ;;
	rr8-*) WEIGHTS="a:800 b:100" ;;
	eq8-*) WEIGHTS="g1:100 g2:100 g3:100 g4:100 g5:100 g6:100 g7:100 g8:100" ;;
	rw11) WEIGHTS="a:100 b:100" ;;
	bw2) WEIGHTS="a:200 b:100" _fs=1 ;;
	idle) WEIGHTS="a:100 b:200" ;;
	slow) WEIGHTS="a:100 b:100" ;;
	*) fail "unknown scenario $2" ;;
	esac
	if ! variant_on "$_var"; then
		variant_off "$_var"
		return 0
	fi
	echo reset >"$SYS/model/cgroup_time"
	case $_scen in
	rrsw8)	# 4 KiB random reader at 8 against a 256 KiB sequential writer at 1
		job a --rw=randread --bs=4k --iodepth=16 --size=128m &
		job b --rw=write --bs=256k --iodepth=4 --offset=256m --size=128m & ;;
	rr8-*)	# two 4 KiB random readers at 8:1, DEPTH outstanding each
		job a --rw=randread --bs=4k --iodepth="${_scen#rr8-}" --size=128m &
		job b --rw=randread --bs=4k --iodepth="${_scen#rr8-}" --offset=256m --size=128m & ;;
	eq8-*)	# eight 4 KiB random readers at equal weights, DEPTH outstanding each
		_i=0
		for _gw in $WEIGHTS; do
			job "${_gw%:*}" --rw=randread --bs=4k --iodepth="${_scen#eq8-}" \
				--offset=$((_i * 64))m --size=64m &
			_i=$((_i + 1))
		done ;;
	rw11 | slow)	# 4 KiB random reads against 4 KiB random writes at
		# 1:1; slow: then writes MB_SLOW_FACTORS times dearer for MB_SLOW s
		job a --rw=randread --bs=4k --iodepth=16 --size=128m &
		job b --rw=randwrite --bs=4k --iodepth=16 --offset=256m --size=128m & ;;
	bw2)	# seed 004's buffered writers at 2:1 on one ext4, under lowered
		# dirty limits (as bench/fairness's bw2) so that the device paces them
		_dirty="$(cat /proc/sys/vm/dirty_bytes) $(cat /proc/sys/vm/dirty_background_bytes)"
		_dirty="$_dirty $(cat /proc/sys/vm/dirty_ratio) $(cat /proc/sys/vm/dirty_background_ratio)"
		echo $((MB_BW_DIRTY_MB << 20)) >/proc/sys/vm/dirty_bytes
		echo $((MB_BW_DIRTY_MB << 18)) >/proc/sys/vm/dirty_background_bytes
		mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1,nodiscard /dev/mapper/mb
		mkdir -p mnt
		mount -t ext4 -o noinit_itable /dev/mapper/mb mnt
		mkdir mnt/a mnt/b
		echo reset >"$SYS/model/cgroup_time"
		writers a &
		writers b & ;;
	idle)	# b (weight 200) against a (100), 4 KiB random readers; b idles
		# MB_IDLE s, then returns
		job a --rw=randread --bs=4k --iodepth=16 --size=128m &
		job b --rw=randread --bs=4k --iodepth=16 --offset=256m --size=128m & ;;
	esac
	if within 60 every_group_busy; then
		sleep "$MB_WARMUP"
		echo reset >"$SYS/model/cgroup_time"
		snap s0
		sleep "$MB_SECS"
		snap s1
		if [ "$_scen" = slow ]; then
			result run s0 s1
			slow_phase "$MB_SLOW_FACTORS"
			result slow s2 s3
			slow_phase "1 1"
			result after s2 s3
		elif [ "$_scen" = idle ]; then
			result both s0 s1
			echo 1 >"$CGROOT/mb/b/cgroup.freeze"
			snap s2
			sleep "$MB_IDLE"
			snap s3
			echo 0 >"$CGROOT/mb/b/cgroup.freeze"
			snap s4
			sleep "$MB_BACK"
			snap s5
			result idle s2 s3
			result back s4 s5
		else
			result run s0 s1
		fi
	else
		echo "SKIP $RUN a group had no device time within 60 s"
	fi
	[ "${_var#ioband:}" = "$_var" ] || log "$RUN: $(dmsetup message mb 0 stats | head -n 1 | tr ' ' '\n' | grep '^time_' | tr '\n' ' ')"
	killall -KILL fio 2>/dev/null || true
	within 60 no_fio || fail "fio still running"
	wait
	if [ -n "$_fs" ]; then
		umount mnt
		# shellcheck disable=SC2086 # the four saved values, one per word
		dirty_restore $_dirty
	fi
	variant_off "$_var"
	awk -v run="$RUN" -v t0="$_r0" -v t1="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { split(run, r, "/"); printf "RUNTIME %s %s %s %.1f\n", r[1], r[2], r[3], t1 - t0 }'
}
no_fio() { ! pidof fio >/dev/null; }

DEVICE=
for r in $MB_RUNS; do
	run "${r%%/*}" "$(echo "$r" | cut -d/ -f2)" "${r#*/*/}"
done
[ -z "$DEVICE" ] || device_off
for g in $ALL_GROUPS; do cg_remove "mb/$g"; done
cg_remove mb
