#!/bin/sh
# Harness self-check: modules loaded, cgroup v2 with the io controller, a
# null_blk device under dm-linear takes an fio verify job, ext4 mounts on it.
# shellcheck source=../lib.sh
. /ioband/lib.sh

for m in dm_mod dm_flakey dm_delay null_blk ext4 dm_ioband; do
	grep -q "^$m " /proc/modules || fail "module $m not loaded"
done
dmsetup targets | grep -q '^ioband ' ||
	fail "dm target ioband not registered: $(dmsetup targets | tr '\n' ' ')"
# The scanner reads the whole kernel log, from the first line on.
kmsg_all | head -n 1 | grep -q 'Linux version' ||
	fail "kernel log read from the middle: $(kmsg_all | head -n 1)"
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || fail "cgroup2 not mounted"
grep -qw io /sys/fs/cgroup/cgroup.subtree_control || fail "io controller not enabled"
grep -q bfq /sys/block/*/queue/scheduler 2>/dev/null || grep -q '^bfq ' /proc/modules ||
	fail "bfq not available"

dev=$(make_nullb smoke 64 memory_backed=1)
log "null_blk: $dev ($(dev_sectors "$dev") sectors)"
assert_eq "$(dev_sectors "$dev")" $((64 * 2048)) "null_blk size"
lin=$(dm_create smoke-linear "0 $(dev_sectors "$dev") linear $(dev_majmin "$dev") 0")
log "dm-linear: $lin"
fio --name=verify --filename="$lin" --direct=1 --rw=randwrite --bs=4k --size=8M \
	--ioengine=psync --verify=crc32c --do_verify=1 --output-format=terse >fio.out ||
	fail "fio verify failed: $(cat fio.out)"

cg_create smoke/a
id=$(cg_id smoke/a)
assert_ge "$id" 2 "cgroup id"
cg_run smoke/a sh -c 'grep -q "^0::/smoke/a$" /proc/self/cgroup' || fail "cg_run not in smoke/a"
cg_run smoke/a dd if=/dev/zero of="$lin" bs=64k count=16 oflag=direct 2>/dev/null
grep -q "^$(dev_majmin "$lin") .*wbytes=1048576" /sys/fs/cgroup/smoke/a/io.stat ||
	fail "io.stat of smoke/a does not show the 1 MiB write: $(cat /sys/fs/cgroup/smoke/a/io.stat)"

mkfs.ext4 -q -F "$lin"
mkdir mnt
mount -t ext4 "$lin" mnt
echo hello >mnt/f
sync
assert_eq "$(cat mnt/f)" hello "file content"
umount mnt
e2fsck -fn "$lin" >/dev/null || fail "e2fsck found errors"
dm_remove smoke-linear
remove_nullb smoke
log "ok"
