#!/bin/sh
# Discards are held and charged by size. A tenant that discards (fio
# randtrim, 128 KiB, 8 jobs: null_blk never serves a request larger than
# the 320 KiB budget of one of its ticks) and one that reads (4 KiB random, 4 x 16
# outstanding) share a null_blk capped at 16 MiB/s, which charges
# discards to its budget like writes, at equal weights under
# weight-iosize: each gets about half of the sectors that went down (the
# ioband's status, counted when a bio goes down; 350-650 per mille), and the
# discarder's bios were held (delayed) in ioband. Before discards were
# scheduled they bypassed ioband uncounted: 0 sectors for the discarder.
. /ioband/lib.sh
set -eu

# The bounds tell charging by size from the two ways it can go wrong, not
# how exact the share is (make bench measures shares): discards that
# bypass ioband leave the discarder 0 sectors (a share of 1000), and
# discards charged as one bio of a read's size would get about 32 times
# the reader's sectors (a share near 30). 350-650 holds those apart with
# room for the guest's noise: full suite runs gave the reader 585 (6.1, an
# 8 s window after 3 s of warm-up) and 561 (6.1, CI on 2026-12-02, 12 s
# after 4 s), six runs alone 496-513.
WINDOW=$(scaled 12)
nb=$(make_nullb dc 1024 memory_backed=1 discard=1 mbps=16)
size=$(dev_sectors "$nb")
cg_create dc-t
cg_create dc-r
t=$(cg_id dc-t)
r=$(cg_id dc-r)
dm_create dc "0 $size ioband $nb dc 0 0 cgroup weight-iosize 0 :100 $t:100 $r:100" >/dev/null

# group_field ID N: field N (1: reads ... 6: write sectors) of group ID
# in dmsetup status.
group_field() {
	dmsetup status dc | awk -v id="$1" -v n="$2" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + n) }'
}

cg_run dc-t fio --name=trim --filename=/dev/mapper/dc --rw=randtrim --bs=128k \
	--numjobs=8 --offset=256M --size=256M --time_based --runtime=600 \
	--output=/dev/null >/dev/null 2>&1 &
trim_pid=$!
cg_run dc-r fio --name=read --filename=/dev/mapper/dc --rw=randread --bs=4k \
	--direct=1 --ioengine=libaio --numjobs=4 --iodepth=16 --size=256M \
	--time_based --runtime=600 --output=/dev/null >/dev/null 2>&1 &
read_pid=$!
stop() { stop_fio "$trim_pid" "$read_pid"; }
trap stop EXIT
sleep "$(scaled 4)"
t0=$(group_field "$t" 6) r0=$(group_field "$r" 3) d0=$(group_field "$t" 5)
sleep "$WINDOW"
t1=$(group_field "$t" 6) r1=$(group_field "$r" 3) d1=$(group_field "$t" 5)
stop
trap - EXIT

dt=$((t1 - t0)) dr=$((r1 - r0))
echo "over ${WINDOW} s: discarded $((dt / 2 / WINDOW)) KB/s, read $((dr / 2 / WINDOW)) KB/s; discards held: $((d1 - d0))"
assert_ge "$dt" 1 "sectors the discarder sent down"
assert_ge "$((d1 - d0))" 1 "discards held in ioband"
share=$((1000 * dr / (dr + dt)))
echo "reader's share of the sectors: ${share} per mille (weights 1:1)"
perf_check assert_ge "$share" 350 "reader's share (per mille)"
perf_check assert_le "$share" 650 "reader's share (per mille)"

dm_remove dc
remove_nullb dc
