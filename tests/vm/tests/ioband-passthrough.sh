#!/bin/sh
# Data goes through ioband intact: fio verifies crc32c over O_DIRECT on the
# device and buffered IO on ext4 over it; flush, discard and write-zeroes
# capabilities of the device below are offered by the ioband device too.
. /ioband/lib.sh
set -eu

dev=$(make_nullb pt 512 memory_backed=1 cache_size=64 discard=1)
size=$(blockdev --getsz "$dev")
dm_create pt "0 $size ioband $dev pt 0 0 cgroup weight 0 :100"
dm=$(basename "$(readlink -f /dev/mapper/pt)")
lower=$(basename "$dev")

for attr in write_cache discard_max_bytes write_zeroes_max_bytes fua; do
	[ -e "/sys/block/$lower/queue/$attr" ] || continue
	assert_eq "$(cat "/sys/block/$dm/queue/$attr")" \
		"$(cat "/sys/block/$lower/queue/$attr")" "queue/$attr of ioband vs the device below"
done
assert_eq "$(cat "/sys/block/$dm/queue/write_cache")" "write back" "flushes are passed"

fio --name=direct --filename=/dev/mapper/pt --direct=1 --ioengine=psync \
	--rw=randrw --bs=4k --size=64M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --numjobs=2 --offset_increment=128M --group_reporting \
	--output=fio-direct.txt || { cat fio-direct.txt; fail "O_DIRECT fio verify failed"; }

fio --name=trim --filename=/dev/mapper/pt --rw=trim --bs=1M --size=32M \
	--offset=256M --output=fio-trim.txt || { cat fio-trim.txt; fail "discard through ioband failed"; }

mkfs.ext4 -q -F /dev/mapper/pt
mkdir -p /mnt/pt
mount -t ext4 /dev/mapper/pt /mnt/pt
fio --name=buffered --directory=/mnt/pt --rw=randwrite --bs=16k --size=48M \
	--fsync=32 --verify=crc32c --verify_fatal=1 --do_verify=1 --numjobs=2 \
	--group_reporting --output=fio-buffered.txt ||
	{ cat fio-buffered.txt; fail "buffered fio verify on ext4 failed"; }
umount /mnt/pt
# Remount and verify again: what reached the device is what was written.
mount -t ext4 /dev/mapper/pt /mnt/pt
fio --name=buffered --directory=/mnt/pt --rw=randwrite --bs=16k --size=48M \
	--verify=crc32c --verify_fatal=1 --verify_only=1 --numjobs=2 \
	--group_reporting --output=fio-reverify.txt ||
	{ cat fio-reverify.txt; fail "data read back after remount does not verify"; }
umount /mnt/pt

dmsetup remove pt
remove_nullb pt
