#!/bin/sh
# CPU-bound overhead: 4k random reads from an uncapped null_blk through
# dm-linear and through ioband with 1, 8, 64 and 1000 attached cgroups
# (the reader in the last of them), and 10,000 attached by message (the
# reader in the first), in the same boot, alternating. Prints
# "@@OVERHEAD <groups> linear|ioband <IOPS of each repetition>..." lines.
. /ioband/lib.sh
set -eu

RUNTIME=${OVERHEAD_RUNTIME:-8}
REPS=${OVERHEAD_REPS:-3}
dev=$(make_nullb ovh 1024)
size=$(blockdev --getsz "$dev")

iops() { # DEVICE CGROUP: read IOPS of the job, run in CGROUP
	cg_run "$2" fio --name=ovh --filename="$1" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --rw=randread --bs=4k --time_based \
		--runtime="$RUNTIME" --ramp_time=2 --group_reporting \
		--output-format=terse --output=ovh.terse
	cut -d';' -f8 ovh.terse
}

# measure LABEL READER: the IOPS of the reader's cgroup on dm-linear and on
# ovh-ioband, REPS times each, alternated so that a slow spell of the host
# (a TCG guest's CPU is a host thread) hits both alike; removes both.
measure() {
	dm_create ovh-linear "0 $size linear $dev 0" >/dev/null
	linear='' ioband=''
	r=0
	while [ $r -lt "$REPS" ]; do
		linear="$linear $(iops /dev/mapper/ovh-linear "$2")"
		ioband="$ioband $(iops /dev/mapper/ovh-ioband "$2")"
		r=$((r + 1))
	done
	dmsetup remove ovh-linear
	dmsetup remove ovh-ioband
	echo "@@OVERHEAD $1 linear$linear"
	echo "@@OVERHEAD $1 ioband$ioband"
}

cg_create ovh
for n in 1 8 64 1000; do
	groups=
	i=0
	while [ $i -lt $n ]; do
		[ -d /sys/fs/cgroup/ovh/g$i ] || mkdir /sys/fs/cgroup/ovh/g$i
		groups="$groups $(cg_id ovh/g$i):$((1 + i % 500))"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # one word per group
	dm_create ovh-ioband "0 $size ioband $dev ovh 0 0 cgroup weight 0 :100$groups" >/dev/null
	measure "$n" "ovh/g$((n - 1))"
done
# 10,000 groups attached one message at a time, as iobandctl attaches
# them, the reader's first: the group index must grow with them (one sized
# at load for none kept 64 buckets, some 156 groups a chain).
dm_create ovh-ioband "0 $size ioband $dev ovh 0 0 cgroup weight 0 :100" >/dev/null
dmsetup message ovh-ioband 0 attach "$(cg_id ovh/g0):1"
i=1
while [ $i -lt 10000 ]; do
	dmsetup message ovh-ioband 0 attach "$((1000000 + i)):$((1 + i % 500))"
	i=$((i + 1))
done
measure 10000-by-message ovh/g0
remove_nullb ovh
