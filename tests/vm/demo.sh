#!/bin/sh
# make demo: the job a newcomer runs first. Two cgroups, weighted 200:100,
# each run dm-ioband's own buffered-write test (fio --rw=write
# --numjobs=50, seed 004, sizes scaled to the guest) on ext4 over an
# ioband device on a null_blk capped at 32 MiB/s; `iobandctl stat` shows
# how the writes are split between the groups, during and after the run.
. /ioband/lib.sh
set -eu

dev=$(make_nullb demo 2048 memory_backed=1 mbps=32)
cg_create tenant-a
cg_create tenant-b
banner() { printf '\n==== %s\n' "$*"; }

banner "iobandctl create ioband1 $dev --weight tenant-a=200 --weight tenant-b=100"
iobandctl create ioband1 "$dev" --weight tenant-a=200 --weight tenant-b=100
banner "dmsetup table ioband1"
dmsetup table ioband1

mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/ioband1
mkdir -p /mnt/ioband1
mount -t ext4 /dev/mapper/ioband1 /mnt/ioband1
mkdir /mnt/ioband1/a /mnt/ioband1/b
sync
echo 1 >/proc/sys/vm/drop_caches

job="--rw=write --size=4m --numjobs=50 --group_reporting --output-format=terse"
banner "fio $job, in tenant-a and in tenant-b at once"
# shellcheck disable=SC2086 # $job is a list of options
cg_run tenant-a fio $job --name=tenant-a --directory=/mnt/ioband1/a --output=a.log &
a_pid=$!
# shellcheck disable=SC2086
cg_run tenant-b fio $job --name=tenant-b --directory=/mnt/ioband1/b --output=b.log &
b_pid=$!
for i in 1 2 3; do
	sleep 4
	banner "iobandctl stat ioband1 (after $((i * 4)) s)"
	iobandctl stat ioband1
done
wait "$a_pid"
wait "$b_pid"
sync
banner "iobandctl stat ioband1 (after the run and a sync)"
iobandctl stat ioband1
banner "dmsetup status ioband1"
dmsetup status ioband1

umount /mnt/ioband1
iobandctl remove ioband1
remove_nullb demo
