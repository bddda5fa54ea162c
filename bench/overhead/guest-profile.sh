#!/bin/sh
# Where the guest's CPU goes per IO, through dm-linear and through ioband
# (bench/run-overhead --profile): the uncapped scenario's load, 4 KiB
# random reads from an uncapped null_blk by two cgroups (weight 100 each
# in ioband's table), one fio of iodepth 32 in each. Each device runs
# PROFILE_REPS times, the two back to back in alternating order. Once a
# run's IO is under way, perf samples both vCPUs for 10 s (cpu-clock at
# 1,000 Hz: a TCG guest has no PMU), and the null_blk's reads completed
# over those 10 s give the IOPS. Prints "@@WINDOW <device> <rep>
# start|end" around those 10 s (bench/overhead/qemu-cpu.py measures the
# host CPU that QEMU had in them), "@@IRQ <device> <rep>" with the
# interrupt counts before and after them, "@@PROFILE <device> <rep>
# <IOPS>" per run, then "@@SYM <device> <rep> <percent> kernel|user
# <symbol>" per symbol of its samples. Needs perf in the guest
# (IOBAND_EXTRA_BINARIES).
. /ioband/lib.sh
set -eu

REPS=${PROFILE_REPS:-2}
command -v perf >/dev/null || fail "no perf in the guest (IOBAND_EXTRA_BINARIES=/usr/bin/perf)"
# Kernel and module symbols for perf report, from /proc/kallsyms.
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
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
	perf record -q -a -F 1000 -o "/tmp/perf.$1.$2" -- sleep 10 >/dev/null 2>&1 ||
		fail "perf record failed"
	echo "@@WINDOW $1 $2 end"
	_r1=$(reads)
	echo "@@IRQ $1 $2 $_i0 $(interrupts)"
	# shellcheck disable=SC2086 # one pid a word
	stop_fio $_pids
	dm_remove prof-dm
	echo "@@PROFILE $1 $2 $(((_r1 - _r0) / 10))"
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
