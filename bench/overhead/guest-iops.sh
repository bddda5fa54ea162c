#!/bin/sh
# CPU-bound overhead: 4k random reads from an uncapped null_blk through
# dm-linear and through ioband with 1, 8, 64 and 1000 attached cgroups
# (the reader in the last of them), in the same boot, alternating. Prints
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

cg_create ovh
for n in 1 8 64 1000; do
	groups=
	i=0
	while [ $i -lt $n ]; do
		[ -d /sys/fs/cgroup/ovh/g$i ] || mkdir /sys/fs/cgroup/ovh/g$i
		groups="$groups $(cg_id ovh/g$i):$((1 + i % 500))"
		i=$((i + 1))
	done
	reader=ovh/g$((n - 1))
	dm_create ovh-linear "0 $size linear $dev 0" >/dev/null
	# shellcheck disable=SC2086 # one word per group
	dm_create ovh-ioband "0 $size ioband $dev ovh 0 0 cgroup weight 0 :100$groups" >/dev/null
	# Alternated, REPS times each, so that a slow spell of the host
	# (a TCG guest's CPU is a host thread) hits both alike.
	linear='' ioband=''
	r=0
	while [ $r -lt "$REPS" ]; do
		linear="$linear $(iops /dev/mapper/ovh-linear "$reader")"
		ioband="$ioband $(iops /dev/mapper/ovh-ioband "$reader")"
		r=$((r + 1))
	done
	dmsetup remove ovh-linear
	dmsetup remove ovh-ioband
	echo "@@OVERHEAD $n linear$linear"
	echo "@@OVERHEAD $n ioband$ioband"
done
remove_nullb ovh
