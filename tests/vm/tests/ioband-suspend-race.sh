#!/bin/sh
# Suspend/resume, table reloads and a deferred remove racing fio, raw and
# on ext4: no IO error, no hang, and the device goes once the last user
# closes it.
. /ioband/lib.sh
set -eu

dev=$(make_nullb sr 512 memory_backed=1)
size=$(blockdev --getsz "$dev")
cg_create sr-a
a=$(cg_id sr-a)
table="0 $size ioband $dev sr 0 0 cgroup weight 0 :100 $a:300"
dm_create sr "$table"

suspend_loop() { # SECONDS: suspend/resume and reload the table until then
	end=$(($(date +%s) + $1))
	n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		dmsetup suspend sr
		sleep 0.1
		dmsetup resume sr
		n=$((n + 1))
		if [ $((n % 3)) = 0 ]; then
			dmsetup table sr | dmsetup load sr
			dmsetup resume sr
		fi
		sleep 0.1
	done
	echo "suspend/resume cycles: $n"
}

# Raw O_DIRECT IO with verification, some of it from an attached cgroup.
cg_run sr-a fio --name=raw --filename=/dev/mapper/sr --direct=1 --ioengine=libaio \
	--iodepth=16 --rw=randrw --bs=4k --size=128M --time_based --runtime=12 \
	--verify=crc32c --verify_fatal=1 --output=fio-raw.txt &
fio_pid=$!
suspend_loop 10
wait "$fio_pid" || { cat fio-raw.txt; fail "fio on the raw device failed during suspend/resume"; }
grep -q "err= 0" fio-raw.txt || { cat fio-raw.txt; fail "fio reported IO errors"; }

# Buffered IO on ext4: suspend also freezes the file system.
mkfs.ext4 -q -F /dev/mapper/sr
mkdir -p /mnt/sr
mount -t ext4 /dev/mapper/sr /mnt/sr
cg_run sr-a fio --name=fs --directory=/mnt/sr --rw=randwrite --bs=64k --size=64M \
	--fsync=16 --time_based --runtime=12 --numjobs=2 --output=fio-fs.txt &
fio_pid=$!
suspend_loop 10
wait "$fio_pid" || { cat fio-fs.txt; fail "fio on ext4 failed during suspend/resume"; }
umount /mnt/sr

# Deferred remove while IO runs: the device stays until fio closes it.
sr_reads() { awk '{ print $1 }' "/sys/block/$(dmsetup info -c --noheadings -o blkdevname sr)/stat"; }
reads0=$(sr_reads)
fio --name=busy --filename=/dev/mapper/sr --direct=1 --rw=randread --bs=4k \
	--size=128M --time_based --runtime=5 --output=fio-busy.txt &
fio_pid=$!
# Once reads complete, fio's job holds the device open (fio opens it
# once before, to size it: an open count alone may be that one).
sr_reading() { [ "$(sr_reads)" -gt "$reads0" ]; }
within 20 sr_reading || fail "fio did not read the device"
dmsetup remove --deferred sr
wait "$fio_pid" || { cat fio-busy.txt; fail "fio failed across a deferred remove"; }
sleep 1
if dmsetup info sr >/dev/null 2>&1; then
	fail "sr still exists after its deferred remove and the last close"
fi
remove_nullb sr
