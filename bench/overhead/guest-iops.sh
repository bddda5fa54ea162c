#!/bin/sh
# CPU-bound overhead: 4k random reads from an uncapped null_blk through
# dm-linear and through ioband with 1, 8, 64 and 1000 attached cgroups
# (the reader in the last of them), in the same boot. Prints one
# "@@OVERHEAD <groups> <linear IOPS> <ioband IOPS>" line per group count.
. /ioband/lib.sh
set -eu

RUNTIME=${OVERHEAD_RUNTIME:-8}
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
	linear=$(iops /dev/mapper/ovh-linear "$reader")
	dmsetup remove ovh-linear
	# shellcheck disable=SC2086 # one word per group
	dm_create ovh-ioband "0 $size ioband $dev ovh 0 0 cgroup weight 0 :100$groups" >/dev/null
	ioband=$(iops /dev/mapper/ovh-ioband "$reader")
	dmsetup remove ovh-ioband
	echo "@@OVERHEAD $n $linear $ioband"
done
remove_nullb ovh
