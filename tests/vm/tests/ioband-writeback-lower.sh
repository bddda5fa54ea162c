#!/bin/sh
# A controller on the disk below an ioband device charges writeback to the
# cgroup that dirtied the pages, not to root: with io.max wbps=4 MiB/s for
# cgroup wb-slow on the null_blk disk, writing back its 24 MiB of buffered
# writes takes at least 4 s (charged to root it would not be throttled and
# takes well under 1 s here), while wb-free's 24 MiB, unlimited, is quick.
. /ioband/lib.sh
set -eu

dev=$(make_nullb wbl 512 memory_backed=1)
size=$(blockdev --getsz "$dev")
lower=$(cat "/sys/block/$(basename "$dev")/dev")
cg_create wb-slow
cg_create wb-free
dm_create wbl "0 $size ioband $dev wbl 0 0 cgroup weight 0 :100 $(cg_id wb-slow):100 $(cg_id wb-free):100"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/wbl
mkdir -p /mnt/wbl
mount -t ext4 /dev/mapper/wbl /mnt/wbl
sync
echo "$lower wbps=4194304" >/sys/fs/cgroup/wb-slow/io.max

# Seconds (tenths) that writing back COUNT MiB dirtied in CGROUP takes.
writeback_time() { # CGROUP FILE COUNT
	cg_run "$1" dd if=/dev/zero of="/mnt/wbl/$2" bs=1M count="$3" 2>/dev/null
	_wt_start=$(cut -d' ' -f1 /proc/uptime)
	sync
	awk -v a="$_wt_start" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%d", (b - a) * 10 }'
}
free=$(writeback_time wb-free f 24)
slow=$(writeback_time wb-slow s 24)
echo "writeback of 24 MiB: wb-free $((free / 10)).$((free % 10)) s, wb-slow (io.max wbps=4MiB/s below) $((slow / 10)).$((slow % 10)) s"
grep "^$lower " /sys/fs/cgroup/wb-slow/io.stat || true
assert_ge "$slow" 40 "writeback time of wb-slow in tenths of a second (throttled below)"
assert_le "$free" $((slow / 2)) "writeback time of wb-free in tenths of a second (not throttled)"

echo "$lower wbps=max" >/sys/fs/cgroup/wb-slow/io.max
umount /mnt/wbl
dmsetup remove wbl
remove_nullb wbl
