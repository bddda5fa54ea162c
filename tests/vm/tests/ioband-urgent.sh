#!/bin/sh
# What everyone waits for never waits in ioband. On ext4 over ioband on a
# null_blk capped at 2 MiB/s, a tenant of weight 1000 keeps a deep
# backlog of direct writes held in ioband (8 x 32 outstanding) while a
# tenant of weight 1 walks a cold directory tree (stat of every file by
# its path: ext4 reads inodes and directory blocks with REQ_META |
# REQ_PRIO).
# Those reads are urgent: they go down at once, charged to the walker as
# debt, so the walk takes about as long as it does alone (within 4x, plus
# for each read one 20 ms period of the cap, for which the writer leaves
# no budget; and under 10 s), where a bio held in the walker's turn would
# wait behind about 1000 of the writer's for each of its own (two seconds
# each: minutes for the walk). The domain's urgent counter counts them.
# The cap must bind: the debug kernel's writer did not reach 16 MiB/s,
# the null_blk then completed inline, the window opened (section 14 of
# ioband-design.rst), and nothing was held, so nothing was urgent either.
. /ioband/lib.sh
set -eu

# max_sectors: null_blk never serves a request larger than what its cap
# grants a 20 ms period (41 KiB at 2 MiB/s).
nb=$(make_nullb ur 256 memory_backed=1 mbps=2 max_sectors=64)
size=$(dev_sectors "$nb")
cg_create ur-w
cg_create ur-m
w=$(cg_id ur-w)
m=$(cg_id ur-m)
dm_create ur "0 $size ioband $nb ur 0 0 cgroup weight 0 :100 $w:1000 $m:1"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard /dev/mapper/ur
mkdir -p /mnt/ur
# lazytime: the writer's writes dirty no inode, so that the walk and the
# writer share no metadata block that the journal would be writing out.
# inode_readahead_blks=0: ext4 reads inode tables ahead as plain reads
# (REQ_RAHEAD, not REQ_META), held at the walker's weight like its data;
# the inode read that follows then waits for that block.
mount -t ext4 -o lazytime,inode_readahead_blks=0 /dev/mapper/ur /mnt/ur
mkdir /mnt/ur/tree
# 400 files in 20 folders, listed in paths.txt, then a file for the
# writer, written through (overwriting unwritten extents would make each
# write a journal transaction).
i=0
: >paths.txt
while [ $i -lt 20 ]; do
	mkdir "/mnt/ur/tree/d$i"
	j=0
	while [ $j -lt 20 ]; do
		: >"/mnt/ur/tree/d$i/f$j"
		echo "/mnt/ur/tree/d$i/f$j" >>paths.txt
		j=$((j + 1))
	done
	i=$((i + 1))
done
dd if=/dev/zero of=/mnt/ur/big bs=1M count=16 2>/dev/null
sync

cold_walk() { # print the walk's time in hundredths of a second
	sync
	echo 3 >/proc/sys/vm/drop_caches	# inodes, dentries, metadata blocks
	t0=$(uptime_cs)
	# By path: a lookup reads directory blocks as metadata, where
	# readdir (find, a glob) reads them ahead through the disk's page
	# cache as plain reads, held at weight 1 like any of the walker's.
	cg_run ur-m sh -c 'xargs stat <paths.txt >/dev/null'
	echo $(($(uptime_cs) - t0))
}
urgent() { domain_stat ur urgent; }

alone=$(cold_walk)
cg_run ur-w fio --name=w --filename=/mnt/ur/big --rw=randwrite --bs=4k \
	--direct=1 --ioengine=libaio --numjobs=8 --iodepth=32 --time_based \
	--runtime=600 --output=/dev/null >/dev/null 2>&1 &
fio_pid=$!
stop() { stop_fio "$fio_pid"; }
trap stop EXIT
writer_held() { dmsetup message ur 0 stats | grep -q "group=$w .* queued=[1-9]"; }
wait_for 30 writer_held
u0=$(urgent)
busy=$(cold_walk)
u1=$(urgent)
inline=$(domain_stat ur window_inline)
stop
trap - EXIT
echo "cold walk: $busy cs beside the writer, $alone cs alone; urgent bios: $((u1 - u0)); window_inline $inline"
# The walker's own bios: all urgent, none held (a held one says which way).
dmsetup message ur 0 stats | tr ' ' '\n' | awk -v m="group=$m" '$0 == m { p = 1; next } /^group=/ { p = 0 } p && /^(reads|delayed_reads|wait_max_ns)=/' | tr '\n' ' '
echo
assert_eq "$inline" 0 "window_inline after the walk (the cap binds, the writer is held)"
assert_ge $((u1 - u0)) 20 "urgent bios during the walk"
perf_check assert_le "$busy" $((4 * alone + 2 * (u1 - u0) + 100)) "walk beside the writer (cs)"
perf_check assert_le "$busy" 1000 "walk beside the writer (cs)"

umount /mnt/ur
dm_remove ur
remove_nullb ur
