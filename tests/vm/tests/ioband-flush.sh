#!/bin/sh
# A flush of a table with two ioband targets on one device reaches that
# device as often as through dm-linear with the same two targets: where the
# kernel lets dm send a flush to each device once rather than once per
# target (ti->flush_bypasses_map, 6.10+), ioband lets it, as dm-linear
# does. The flushes are counted in the disk's stat (null_blk with a
# volatile write cache). Before ioband set flush_bypasses_map, 6.12 sent
# 2 flushes per fsync through ioband, 1 through dm-linear.
. /ioband/lib.sh
set -eu

dev=$(make_nullb fl 64 memory_backed=1 cache_size=16)
half=$(($(dev_sectors "$dev") / 2))
stat=/sys/block/$(basename "$dev")/stat
[ "$(wc -w <"$stat")" -ge 17 ] || fail "$stat has no flush counts"
flushes() { awk '{ print $16 }' "$stat"; }
two_targets() { # NAME TARGET ARGS_OF_FIRST ARGS_OF_SECOND
	printf '0 %s %s %s %s\n%s %s %s %s %s\n' "$half" "$2" "$dev" "$3" "$half" "$half" "$2" "$dev" "$4" |
		dmsetup create --noudevsync "$1"
	dmsetup mknodes "$1"
}
per_fsync() { # NAME: flushes the disk gets for each of 20 fsyncs of NAME
	f0=$(flushes)
	i=0
	while [ $i -lt 20 ]; do
		dd if=/dev/zero of="/dev/mapper/$1" bs=4k count=1 oflag=direct conv=fsync,notrunc 2>/dev/null
		i=$((i + 1))
	done
	echo $((($(flushes) - f0) / 20))
}
two_targets fl-linear linear 0 "$half"
two_targets fl-ioband ioband "fl 0 0 none weight 0 :100" "fl 0 0 none weight 0 :100"
dmsetup table fl-ioband
linear=$(per_fsync fl-linear)
ioband=$(per_fsync fl-ioband)
echo "flushes per fsync on the disk below: $linear through dm-linear, $ioband through ioband"
assert_ge "$linear" 1 "flushes per fsync through dm-linear"
assert_eq "$ioband" "$linear" "flushes per fsync through ioband"
dmsetup remove fl-ioband
dmsetup remove fl-linear
remove_nullb fl
