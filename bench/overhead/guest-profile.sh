#!/bin/sh
# Where the guest's CPU goes per IO, through dm-linear and through ioband
# (bench/run-overhead --profile, --icount and --host-profile): the uncapped
# scenario's load, 4 KiB random reads from an uncapped null_blk by two
# cgroups (weight 100 each in ioband's table), one fio of iodepth 32 in
# each. Each device runs PROFILE_REPS times, the two back to back in
# alternating order. Once a run's IO is under way, a window of 10 s starts:
# "@@WINDOW <device> <rep> start|end" around it (the host's watcher,
# bench/overhead/window-watch.py, measures QEMU's host CPU in it, and the
# guest's instructions or the host's samples of QEMU when asked), then
# "@@IRQ <device> <rep>" with the interrupt counts before and after it,
# "@@READS <device> <rep> <reads>" with the null_blk's reads completed in
# it, and "@@PROFILE <device> <rep> <IOPS>".
# PROFILE_SAMPLER=perf (default): perf samples both vCPUs over the window
# (cpu-clock at 1,000 Hz: a TCG guest has no PMU), and "@@SYM <device>
# <rep> <percent> kernel|user <symbol>" follows per symbol of its samples.
# Needs perf in the guest (IOBAND_EXTRA_BINARIES).
# PROFILE_SAMPLER=none: the window is only timed; at the end, the kernel's
# and modules' text symbols, gzipped and in base64, one "@@KSYMS <line>"
# each, for the plugin's and the host profile's guest addresses
# (bench/overhead/guest_console.py reads them).
. /ioband/lib.sh
set -eu

REPS=${PROFILE_REPS:-2}
SAMPLER=${PROFILE_SAMPLER:-perf}
case $SAMPLER in
perf)
	command -v perf >/dev/null ||
		fail "no perf in the guest (IOBAND_EXTRA_BINARIES=/usr/bin/perf)"
	echo -1 >/proc/sys/kernel/perf_event_paranoid ;;
none) ;;
*) fail "PROFILE_SAMPLER is perf or none, not $SAMPLER" ;;
esac
# Kernel and module symbols' addresses in /proc/kallsyms.
echo 0 >/proc/sys/kernel/kptr_restrict
dev=$(make_nullb prof 1024)
size=$(blockdev --getsz "$dev")
stat=/sys/dev/block/$(dev_majmin "$dev")/stat
cg_create prof-a
cg_create prof-b
ib_table="0 $size ioband $dev prof 0 0 cgroup weight 0 :100 $(cg_id prof-a):100 $(cg_id prof-b):100"

reads() { awk '{ print $1 }' "$stat"; }
# The timer, rescheduling, function-call and TLB-shootdown interrupts,
# summed over the CPUs.
interrupts() {
	awk '$1 ~ /^(LOC|RES|CAL|TLB):$/ {
		n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i
		printf "%s%s=%d", sep, substr($1, 1, 3), n; sep = " " }' /proc/interrupts
}

profile() { # DEVICE REP
	case $1 in
	linear) dm_create prof-dm "0 $size linear $dev 0" >/dev/null ;;
	ioband) dm_create prof-dm "$ib_table" >/dev/null ;;
	esac
	_pids=
	for _g in prof-a prof-b; do
		cg_run "$_g" fio --name="$_g" --filename=/dev/mapper/prof-dm --rw=randread \
			--bs=4k --direct=1 --ioengine=libaio --iodepth=32 --time_based \
			--runtime=3600 --norandommap --randrepeat=0 --output=/dev/null \
			>/dev/null 2>&1 &
		_pids="$_pids $!"
	done
	wait_io "$dev" prof-a
	wait_io "$dev" prof-b
	sleep 1
	_i0=$(interrupts)
	_r0=$(reads)
	echo "@@WINDOW $1 $2 start"
	if [ "$SAMPLER" = perf ]; then
		perf record -q -a -F 1000 -o "/tmp/perf.$1.$2" -- sleep 10 >/dev/null 2>&1 ||
			fail "perf record failed"
	else
		sleep 10
	fi
	_r1=$(reads)
	echo "@@WINDOW $1 $2 end"
	echo "@@IRQ $1 $2 $_i0 $(interrupts)"
	# shellcheck disable=SC2086 # one pid a word
	stop_fio $_pids
	dm_remove prof-dm
	echo "@@READS $1 $2 $((_r1 - _r0))"
	echo "@@PROFILE $1 $2 $(((_r1 - _r0) / 10))"
	[ "$SAMPLER" = perf ] || return 0
	perf report -i "/tmp/perf.$1.$2" --stdio --no-children --sort sym \
		--percent-limit 0 2>/dev/null |
		awk -v d="$1" -v r="$2" '$1 ~ /%$/ && $2 ~ /^\[.\]$/ {
			p = $1; sub(/%$/, "", p)
			m = $2 == "[k]" ? "kernel" : "user"
			$1 = ""; $2 = ""; sub(/^ +/, "")
			print "@@SYM", d, r, p, m, $0 }'
	rm -f "/tmp/perf.$1.$2"
}

rep=1
while [ "$rep" -le "$REPS" ]; do
	if [ $((rep % 2)) = 1 ]; then
		profile linear "$rep"
		profile ioband "$rep"
	else
		profile ioband "$rep"
		profile linear "$rep"
	fi
	rep=$((rep + 1))
done
remove_nullb prof
if [ "$SAMPLER" = none ]; then
	awk '$2 ~ /^[tT]$/ { print $1, $3, $4 }' /proc/kallsyms | gzip -c | base64 |
		sed 's/^/@@KSYMS /'
fi
