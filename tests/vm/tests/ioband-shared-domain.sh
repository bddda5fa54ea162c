#!/bin/sh
# Two ioband targets with the same ioband_device_id share one bandwidth
# domain: dm-ioband's own example, two partitions of one disk split 80/20
# (default weights 40 and 10), holds within 5% while both are loaded; the
# domain outlives either target and goes with the last.
. /ioband/lib.sh
set -eu

dev=$(make_nullb sd 512 mbps=16)
half=$(($(blockdev --getsz "$dev") / 2))
dm_create sd-p1 "0 $half linear $dev 0" >/dev/null
dm_create sd-p2 "0 $half linear $dev $half" >/dev/null
# io_limit 4: a few bios in flight keep the capped device busy, so the
# shares are decided in ioband rather than in the device's queue. The
# load is deep (128 IOs per device) because null_blk's mbps cap serves
# each 20 ms period's budget in one burst: a shallow group runs dry
# within the burst and, rightly, leaves the rest to the other.
dm_create ioband1 "0 $half ioband /dev/mapper/sd-p1 1 0 4 none weight 0 :40" >/dev/null
dm_create ioband2 "0 $half ioband /dev/mapper/sd-p2 1 0 4 none weight 0 :10" >/dev/null

sectors() { dmsetup status "$1" | awk '{ print $8 }'; }
load() { # DEVICE
	fio --name=load --filename="/dev/mapper/$1" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=4 --rw=randread --bs=4k --time_based \
		--runtime="$(($(scaled 3) + 11))" --output=/dev/null
}
load ioband1 &
p1=$!
load ioband2 &
p2=$!
sleep "$(scaled 3)" # fio starts slowly on a slow (debug) kernel
s1=$(sectors ioband1); s2=$(sectors ioband2)
sleep 10
d1=$(($(sectors ioband1) - s1)); d2=$(($(sectors ioband2) - s2))
wait "$p1" "$p2"
total=$((d1 + d2))
echo "10 s under load: ioband1 $d1 sectors, ioband2 $d2 sectors, share of ioband1 $((d1 * 1000 / total))/1000 (configured 800)"
# Shares and rate need the device to be the bottleneck: on a slow (debug)
# kernel the emulated CPU is, and they are only printed (perf_check).
perf_check assert_within_pct 800 $((d1 * 1000 / total)) 5 "share of ioband1 (per mille)"
# The device was the bottleneck: 16 MiB/s is 32768 sectors/s (80%: an
# emulated guest on a busy host falls a little short of the cap).
perf_check assert_ge $((total / 10)) $((32768 * 80 / 100)) "sectors per second of both"

# A message to one target changes the domain both share.
dmsetup message ioband2 0 io_limit 8
assert_eq "$(dmsetup table ioband1 | awk '{ print $7 }')" 8 "io_limit of ioband1 after a message to ioband2"

# The domain lives while one of its targets does.
dmsetup remove ioband1
assert_eq "$(dmsetup table ioband2 | awk '{ print $7 }')" 8 "io_limit of ioband2 after ioband1 went"
dd if=/dev/mapper/ioband2 of=/dev/null bs=4k count=100 iflag=direct 2>/dev/null
dmsetup remove ioband2
dm_create ioband3 "0 $half ioband /dev/mapper/sd-p1 1 0 0 none weight 0 :10" >/dev/null
assert_eq "$(dmsetup table ioband3 | awk '{ print $7 }')" 0 "io_limit of a new domain with the same id"
dmsetup remove ioband3
dmsetup remove sd-p1 sd-p2
remove_nullb sd
