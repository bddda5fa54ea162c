#!/bin/sh
# CPU-bound overhead with every group backlogged: 4 KiB random reads from
# an uncapped null_blk, so that the guest's CPU is the bottleneck, by N
# cgroups at once (N of OVERHEAD_GROUPS, each its own fio, iodepth
# max(4, 64 / N)), through dm-linear and through ioband with those N groups
# attached, in the same boot. The IOPS are the null_blk's reads completed
# over OVERHEAD_WINDOW seconds that start once every group's IO is seen
# moving (32 fio processes take seconds to start in a TCG guest, so they
# wait at a start gate until all have started, and fio's own figures would
# cover times when not all of them ran). OVERHEAD_REPS pairs
# per N; within a pair the two devices run back to back, in alternating
# order (linear first in odd pairs, ioband first in even ones), so that a
# slow spell of the host (a TCG guest's CPU is a host thread) hits both
# alike. Prints "@@OVERHEAD <N> <pair> <linear IOPS> <ioband IOPS>" lines.
. /ioband/lib.sh
set -eu

WINDOW=${OVERHEAD_WINDOW:-4}
REPS=${OVERHEAD_REPS:-10}
NGROUPS=${OVERHEAD_GROUPS:-1 8 32}
dev=$(make_nullb ovh 1024)
size=$(blockdev --getsz "$dev")
stat=/sys/dev/block/$(dev_majmin "$dev")/stat

# group_reads N MAJ:MIN: a line for each of the groups ovh/g0 to g(N-1),
# the reads its io.stat counts on the device. One awk reads every group's
# file: the checks below poll ten times a second while up to 64 fio
# processes hold both vCPUs, and a fork per group per poll would take
# the harness's shell that much longer to get through.
group_reads() {
	_files=
	_j=0
	while [ "$_j" -lt "$1" ]; do
		_files="$_files $CGROOT/ovh/g$_j/io.stat"
		_j=$((_j + 1))
	done
	# shellcheck disable=SC2086 # one word per file
	awk -v mm="$2" -v n="$1" '$1 == mm {
		g = FILENAME; sub(/.*\/g/, "", g); sub(/\/io\.stat$/, "", g)
		for (i = 2; i <= NF; i++) if ($i ~ /^rios=/) r[g] += substr($i, 6)
	} END { for (g = 0; g < n; g++) print r[g] + 0 }' $_files
}

# all_reading N MAJ:MIN: each of the N groups has read more than base.txt's
# line for it says.
all_reading() {
	group_reads "$1" "$2" | awk 'NR == FNR { base[FNR] = $1; next } $1 <= base[FNR] { exit 1 }' base.txt -
}

# ovh_empty: no process left in any group.
ovh_empty() { grep -q '^populated 0$' "$CGROOT/ovh/cgroup.events"; }

# all_ready N: N fio jobs wait at the start gate (each made its ready.*).
all_ready() {
	_n=0
	for _f in ready.*; do [ ! -e "$_f" ] || _n=$((_n + 1)); done
	[ "$_n" -ge "$1" ]
}

# iops DEVICE N DEPTH: the IOPS of N fio readers at once, one per cgroup.
# Each job waits at a gate (fio's exec_prerun) until all N have started:
# fio takes about a second of CPU to start a job in the emulated guest,
# and on 6.12 the jobs already reading starved the ones still starting so
# long that 32 groups were not all reading after 120 s (a monitor at nice
# -20 saw 8 of 32 fio parents runnable and childless after 40 s).
iops() {
	_mm=$(dev_majmin "$1")
	group_reads "$2" "$_mm" >base.txt
	rm -f go ready.*
	_i=0
	_pids=
	while [ "$_i" -lt "$2" ]; do
		cg_run "ovh/g$_i" fio --name="g$_i" --filename="$1" --direct=1 --ioengine=libaio \
			--iodepth="$3" --numjobs=1 --rw=randread --bs=4k --norandommap --randrepeat=0 \
			--exec_prerun="touch $PWD/ready.g$_i; while [ ! -e $PWD/go ]; do sleep 0.5; done" \
			--time_based --runtime=300 --output=/dev/null >/dev/null 2>&1 &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	wait_for 120 all_ready "$2"
	touch go
	wait_for 30 all_reading "$2" "$_mm"
	sleep 1
	_t0=$(cut -d' ' -f1 /proc/uptime) _c0=$(awk '{ print $1 }' "$stat")
	sleep "$WINDOW"
	_t1=$(cut -d' ' -f1 /proc/uptime) _c1=$(awk '{ print $1 }' "$stat")
	# Every process of the groups' cgroups goes (the pids above are the
	# shells that run fio, not fio's job processes, which hold the device):
	# one write kills the whole subtree.
	echo 1 >"$CGROOT/ovh/cgroup.kill"
	wait_for 30 ovh_empty
	for _p in $_pids; do wait "$_p" 2>/dev/null || :; done
	awk -v a="$_c0" -v b="$_c1" -v t0="$_t0" -v t1="$_t1" 'BEGIN { printf "%.0f\n", (b - a) / (t1 - t0) }'
}

cg_create ovh
for n in $NGROUPS; do
	groups=
	i=0
	while [ "$i" -lt "$n" ]; do
		[ -d "$CGROOT/ovh/g$i" ] || cg_create "ovh/g$i"
		groups="$groups $(cg_id "ovh/g$i"):100"
		i=$((i + 1))
	done
	depth=$((64 / n))
	[ "$depth" -ge 4 ] || depth=4
	dm_create ovh-linear "0 $size linear $dev 0" >/dev/null
	# shellcheck disable=SC2086 # one word per group
	dm_create ovh-ioband "0 $size ioband $dev ovh 0 0 cgroup weight 0 :100$groups" >/dev/null
	r=1
	while [ "$r" -le "$REPS" ]; do
		if [ $((r % 2)) = 1 ]; then
			l=$(iops /dev/mapper/ovh-linear "$n" "$depth")
			b=$(iops /dev/mapper/ovh-ioband "$n" "$depth")
		else
			b=$(iops /dev/mapper/ovh-ioband "$n" "$depth")
			l=$(iops /dev/mapper/ovh-linear "$n" "$depth")
		fi
		echo "@@OVERHEAD $n $r $l $b"
		r=$((r + 1))
	done
	echo "@@OVERHEAD-STATS $n $(dmsetup message ovh-ioband 0 stats | head -n 1)"
	dmsetup remove ovh-linear
	dmsetup remove ovh-ioband
done
remove_nullb ovh
for g in "$CGROOT"/ovh/g*; do rmdir "$g"; done
cg_remove ovh
