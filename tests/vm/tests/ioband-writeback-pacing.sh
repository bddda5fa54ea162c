#!/bin/sh
# Backpressure reaches the writers. Two cgroups, 200:100, buffered writers
# on one ext4 over ioband (weight-iosize) on a null_blk capped at 32 MiB/s,
# the dirty limit at 64 MiB. ioband holds each group's writeback up to its
# hold (ioband-design.rst section 17), then makes that group's flusher wait:
# the rest of its pages stay dirty, which counts against the dirty limit
# (balance_dirty_pages paces each cgroup's writers by its own writeback's
# completion rate) and keeps background writeback running, so that:
#   - the device splits 2:1 (bytes at the null_blk, its io.stat);
#   - the writers' own write() rates (fio's bandwidth, what the page cache
#     took) split near 2:1 as well: the low-weight writers are slowed down,
#     not left to fill memory while their writeback waits;
#   - dirty plus writeback pages stay bounded by the dirty limit;
#   - the low-weight group's flusher waited in ioband (writeback_waits).
. /ioband/lib.sh
set -eu

DIRTY_MB=64
RUNTIME=$(scaled 20)
dev=$(make_nullb pace 2048 memory_backed=1 mbps=32)
majmin=$(dev_majmin "$dev")
size=$(blockdev --getsz "$dev")
cg_create pace-a
cg_create pace-b
a=$(cg_id pace-a)
b=$(cg_id pace-b)
dm_create pace "0 $size ioband $dev pace 0 0 cgroup weight-iosize 0 :100 $a:200 $b:100"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard /dev/mapper/pace
mkdir -p /mnt/pace
mount -t ext4 /dev/mapper/pace /mnt/pace
mkdir /mnt/pace/a /mnt/pace/b
old_dirty=$(cat /proc/sys/vm/dirty_bytes) old_bg=$(cat /proc/sys/vm/dirty_background_bytes)
old_ratio=$(cat /proc/sys/vm/dirty_ratio) old_bg_ratio=$(cat /proc/sys/vm/dirty_background_ratio)
restore_dirty() {
	echo "$old_ratio" >/proc/sys/vm/dirty_ratio
	echo "$old_bg_ratio" >/proc/sys/vm/dirty_background_ratio
	[ "$old_dirty" = 0 ] || echo "$old_dirty" >/proc/sys/vm/dirty_bytes
	[ "$old_bg" = 0 ] || echo "$old_bg" >/proc/sys/vm/dirty_background_bytes
}
echo $((DIRTY_MB << 20)) >/proc/sys/vm/dirty_bytes
echo $((DIRTY_MB << 18)) >/proc/sys/vm/dirty_background_bytes
sync

written() { # CGROUP: bytes it wrote to the null_blk
	awk -v mm="$majmin" '$1 == mm { for (i = 2; i <= NF; i++) if ($i ~ /^wbytes=/) { sub(/wbytes=/, "", $i); w = $i } }
		END { print w + 0 }' "/sys/fs/cgroup/$1/io.stat"
}
dirty_kb() { # Dirty + Writeback, KiB
	awk '/^(Dirty|Writeback):/ { s += $2 } END { print s }' /proc/meminfo
}
fio_bw() { # FILE: fio's write bandwidth in KiB/s (the group's total)
	tr -d '\n' <"$1" | grep -o '"write" *: *{[^}]*"bw" *: *[0-9]*' | head -n 1 | sed 's/.*: *//'
}

job="--rw=write --bs=64k --size=16m --numjobs=16 --time_based --runtime=$RUNTIME --group_reporting --output-format=json"
# shellcheck disable=SC2086 # $job is a list of options
cg_run pace-a fio $job --name=a --directory=/mnt/pace/a --output=pace-a.json >/dev/null 2>&1 &
a_pid=$!
# shellcheck disable=SC2086
cg_run pace-b fio $job --name=b --directory=/mnt/pace/b --output=pace-b.json >/dev/null 2>&1 &
b_pid=$!
sleep "$(scaled 4)"
a0=$(written pace-a) b0=$(written pace-b) t0=$(cut -d' ' -f1 /proc/uptime)
max_dirty=0
i=0
while [ "$i" -lt $((RUNTIME - $(scaled 6))) ]; do
	d=$(dirty_kb)
	[ "$d" -le "$max_dirty" ] || max_dirty=$d
	sleep 1
	i=$((i + 1))
done
a1=$(written pace-a) b1=$(written pace-b) t1=$(cut -d' ' -f1 /proc/uptime)
b_waits=$(group_stat pace "$b" writeback_waits)
wait "$a_pid"
wait "$b_pid"
restore_dirty

bw_a=$(fio_bw pace-a.json) bw_b=$(fio_bw pace-b.json)
echo "device: pace-a $(((a1 - a0) >> 20)) MiB, pace-b $(((b1 - b0) >> 20)) MiB over $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
echo "writers (fio): pace-a ${bw_a} KiB/s, pace-b ${bw_b} KiB/s"
echo "dirty + writeback: at most $((max_dirty >> 10)) MiB (limit $DIRTY_MB MiB)"
echo "pace-b's flusher waited ${b_waits:-?} times"
[ "$((b1 - b0))" -gt 0 ] || fail "pace-b wrote nothing to the device"
[ "${bw_b:-0}" -gt 0 ] || fail "no fio bandwidth for pace-b"
# Device: 2:1 within 10%. Writers: within 20%, since fio's figure covers
# its whole run, ramp included.
dev_pct=$((100 * (a1 - a0) / (b1 - b0)))
fio_pct=$((100 * bw_a / bw_b))
echo "ratios: device ${dev_pct}%, writers ${fio_pct}% (200 configured)"
perf_check assert_ge "$dev_pct" 180 "device ratio (percent)"
perf_check assert_le "$dev_pct" 220 "device ratio (percent)"
perf_check assert_ge "$fio_pct" 160 "writers' ratio (percent)"
perf_check assert_le "$fio_pct" 240 "writers' ratio (percent)"
# balance_dirty_pages overshoots its limit a little (ratelimited checks).
assert_le "$max_dirty" $((DIRTY_MB * 1024 * 3 / 2)) "dirty + writeback KiB"
assert_ge "${b_waits:-0}" 1 "pace-b's writeback waits"

umount /mnt/pace
dm_remove pace
remove_nullb pace
