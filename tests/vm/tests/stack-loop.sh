#!/bin/sh
# ioband on a loop device backed by a file on ext4 (on a capped
# null_blk), the loop in direct-IO mode so that its IO reaches the disk;
# two cgroups share it 2:1 and their data comes back intact, in the file.
# The cap: 8 MiB/s. Each 4k read goes through the loop worker and ext4's
# direct IO as well, and at 16 MiB/s the 6.1 guest's emulated CPU fell
# short of the cap (22631 sectors/s of the 32768, make check on
# 2026-12-02): the device must be the bottleneck.
STACK_MBPS=8
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

mnt=/tmp/ioband.stack-loop
trap 'stack_cleanup "iobandctl remove stk-loop" "/usr/sbin/losetup -d \$loop" "umount $mnt" "remove_nullb stkf"' EXIT
loop=
dev=$(stack_nullb stkf 512)
mkfs.ext4 -q -F "$dev"
mkdir -p "$mnt"
mount -t ext4 "$dev" "$mnt"
# Written, not sparse: ext4 answers a read of a hole without the disk.
# Direct, so that no writer waits on dirty pages past the guest's 20 s
# hung-task limit (256 MiB buffered at 8 MiB/s did).
dd if=/dev/zero of="$mnt/disk.img" bs=1M count=128 oflag=direct 2>/dev/null
# util-linux losetup (busybox sh would run its own applet).
loop=$(/usr/sbin/losetup --direct-io=on --show -f "$mnt/disk.img")
assert_eq "$(cat "/sys/block/${loop#/dev/}/loop/dio")" 1 "direct IO of $loop"
iobandctl create stk-loop "$loop"

stack_shares stk-loop /dev/mapper/stk-loop stk-loop /dev/mapper/stk-loop
stack_verify /dev/mapper/stk-loop

# What ioband let through is in the file.
printf 'dm-ioband loop block' | dd of=/dev/mapper/stk-loop bs=4096 seek=200 conv=sync oflag=direct 2>/dev/null
iobandctl remove stk-loop
/usr/sbin/losetup -d "$loop"
loop=
assert_eq "$(dd if="$mnt/disk.img" bs=4096 skip=200 count=1 2>/dev/null | head -c 20)" \
	"dm-ioband loop block" "the block in the backing file"
umount "$mnt"
e2fsck -f -n "$dev" >/dev/null || fail "the ext4 below the loop file is damaged"
remove_nullb stkf
trap - EXIT
