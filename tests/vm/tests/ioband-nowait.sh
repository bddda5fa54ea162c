#!/bin/sh
# NOWAIT submitters (io_uring with RWF_NOWAIT) are served, not failed: the
# ioband device is a nowait queue (DM_TARGET_NOWAIT), so fio's io_uring
# engine with nowait=1 completes every IO from two cgroups, with no error,
# while ioband holds bios (null_blk capped at 20 MB/s, io_limit 4). On a
# dm device without NOWAIT, io_uring fails each such IO with EAGAIN. The
# cgroups and the null_blk are new, so map creates each cgroup's blkg of
# the device below (bio_set_dev()) for a NOWAIT bio.
#
# Then a held bio loses REQ_NOWAIT: the worker that sends it down cannot
# wait, and a BLK_STS_AGAIN from below would fail it after its group was
# charged for it. io_uring (without nowait=1) first issues every read with
# IOCB_NOWAIT; two such tenants at io_limit 4 over a dm-linear that is
# suspended for 2 s (dm fails a NOWAIT bio to a suspended device with
# BLK_STS_AGAIN, and queues any other): every read completes, none fails.
# With the flag kept, 6.1's fio failed with EAGAIN (error 11): io_uring
# retries an EAGAIN only in the submitter's own context, not the worker's.
. /ioband/lib.sh
set -eu

dev=$(make_nullb nw 256 mbps=20)
size=$(blockdev --getsz "$dev")
cg_create nw-a
cg_create nw-b
a=$(cg_id nw-a)
b=$(cg_id nw-b)
dm_create nw "0 $size ioband $dev nw 0 4 cgroup weight 0 :100 $a:300 $b:100"
majmin=$(dmsetup info -c --noheadings -o major,minor --separator : nw)
nowait=/sys/dev/block/$majmin/queue/nowait
[ ! -f "$nowait" ] || assert_eq "$(cat "$nowait")" 1 "queue/nowait of the ioband device"

run_fio() { # CGROUP
	cg_run "$1" fio --name="$1" --filename=/dev/mapper/nw --direct=1 \
		--ioengine=io_uring --nowait=1 --rw=randread --bs=4k --iodepth=16 \
		--time_based --runtime=3 --output-format=terse --terse-version=3 >"fio-$1.out" 2>"fio-$1.err"
}
run_fio nw-a &
pa=$!
run_fio nw-b &
pb=$!
rc=0
wait "$pa" || rc=$?
wait "$pb" || rc=$((rc + $?))
cat fio-nw-a.err fio-nw-b.err
assert_eq "$rc" 0 "exit status of fio (io_uring, nowait=1)"
# Terse v3: field 5 is the job's error, 8 its read IOs.
for g in nw-a nw-b; do
	err=$(cut -d';' -f5 "fio-$g.out")
	ios=$(cut -d';' -f8 "fio-$g.out")
	echo "$g: fio error $err, $ios reads"
	assert_eq "$err" 0 "fio's error in $g"
	assert_ge "$ios" 100 "reads done by $g"
done
stats=$(dmsetup message nw 0 stats)
echo "$stats" | grep -E '^group='
held=$(echo "$stats" | sed -n 's/.*delayed_reads=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
echo "reads held by ioband: $held"
dmsetup remove nw
remove_nullb nw

dev=$(make_nullb nw2 256 mbps=20)
size=$(blockdev --getsz "$dev")
dm_create nw2-low "0 $size linear $dev 0" >/dev/null
dm_create nw2 "0 $size ioband /dev/mapper/nw2-low nw2 0 4 cgroup weight 0 :100 $a:300 $b:100" >/dev/null
run_fio2() { # CGROUP
	cg_run "$1" fio --name="$1" --filename=/dev/mapper/nw2 --direct=1 \
		--ioengine=io_uring --rw=randread --bs=4k --iodepth=16 \
		--time_based --runtime=6 --output-format=terse --terse-version=3 >"fio2-$1.out" 2>"fio2-$1.err"
}
run_fio2 nw-a &
pa=$!
run_fio2 nw-b &
pb=$!
sleep 2
dmsetup suspend --nolockfs nw2-low
sleep 2
dmsetup resume nw2-low
rc=0
wait "$pa" || rc=$?
wait "$pb" || rc=$((rc + $?))
cat fio2-nw-a.err fio2-nw-b.err
for g in nw-a nw-b; do
	echo "$g over a suspended device: fio error $(tail -n 1 "fio2-$g.out" | cut -d';' -f5), $(tail -n 1 "fio2-$g.out" | cut -d';' -f8) reads/s"
done
dmsetup message nw2 0 stats | grep -E '^group='
assert_eq "$rc" 0 "exit status of fio (io_uring) over a suspended device"
for g in nw-a nw-b; do
	assert_eq "$(tail -n 1 "fio2-$g.out" | cut -d';' -f5)" 0 "fio's error in $g over a suspended device"
done
dmsetup remove nw2
dmsetup remove nw2-low
remove_nullb nw2
