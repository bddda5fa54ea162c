#!/bin/sh
# A new weight table loaded (dmsetup load + resume) while fio verifies data
# loses and fails no IO, and the new weights take effect: shares measured
# before and after the reload follow the table, and the weight message
# changes measured shares the same way, live.
. /ioband/lib.sh
set -eu

dev=$(make_nullb rl 512 memory_backed=1 mbps=16)
size=$(blockdev --getsz "$dev")
cg_create rl-a
cg_create rl-b
a=$(cg_id rl-a)
b=$(cg_id rl-b)
table() { # WEIGHT_A WEIGHT_B
	echo "0 $size ioband $dev rl 0 4 cgroup weight 0 :100 $a:$1 $b:$2"
}
dm_create rl "$(table 100 100)" >/dev/null

sectors() { # GROUP_ID: read + write sectors of the group
	dmsetup status rl | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 3) + $(i + 6) }'
}
share_of_a() { # SECONDS: a's share of a+b's sectors, per mille, over SECONDS
	_a0=$(sectors "$a"); _b0=$(sectors "$b")
	sleep "$1"
	_da=$(($(sectors "$a") - _a0)); _db=$(($(sectors "$b") - _b0))
	[ $((_da + _db)) -gt 0 ] || fail "no IO in a ${1} s window"
	echo $((_da * 1000 / (_da + _db)))
}
# Deep queues (4 jobs x 32 per group): null_blk's mbps cap serves each
# 20 ms budget in a burst, which a shallow group cannot keep up with.
verify_load() { # CGROUP OFFSET: randrw with verification for 40 s
	cg_run "$1" fio --name="$1" --filename=/dev/mapper/rl --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=4 --rw=randrw --bs=4k --offset="$2" \
		--size=24M --offset_increment=24M \
		--verify=crc32c --verify_fatal=1 --verify_backlog=256 \
		--time_based --runtime="$(scaled 40)" --group_reporting --output="fio-$1.txt"
}
both_sending() { [ "$(sectors "$a")" -gt 0 ] && [ "$(sectors "$b")" -gt 0 ]; }
verify_load rl-a 0 &
pa=$!
verify_load rl-b 128M &
pb=$!
# fio starts in a second on a Debian kernel, in up to half a minute on the
# debug kernel; the measurements take 20 s of its 40 (scaled).
wait_for 15 both_sending
sleep 1
before=$(share_of_a 6)
# A reload gives a three times b's weight.
table 300 100 | dmsetup load rl
dmsetup resume rl
sleep 1
after_reload=$(share_of_a 6)
# The weight message turns it around, without a reload.
dmsetup message rl 0 weight "$b:300"
dmsetup message rl 0 weight "$a:100"
sleep 1
after_message=$(share_of_a 6)
wait "$pa" || { cat fio-rl-a.txt; fail "fio of rl-a failed across the reload"; }
wait "$pb" || { cat fio-rl-b.txt; fail "fio of rl-b failed across the reload"; }
echo "share of rl-a (per mille): 1:1 $before, after reload to 3:1 $after_reload, after weight messages 1:3 $after_message"
# 6 s windows on an emulated guest: 10% (the benchmark measures shares
# over longer runs; here the point is that the shares follow the table).
# Shares need the device to be the bottleneck: on a slow (debug) kernel
# the emulated CPU is, and they are only printed (perf_check).
perf_check assert_within_pct 500 "$before" 10 "share of rl-a at 1:1"
perf_check assert_within_pct 750 "$after_reload" 10 "share of rl-a after the reload to 3:1"
perf_check assert_within_pct 250 "$after_message" 10 "share of rl-a after the weight messages to 1:3"
assert_eq "$(dmsetup table rl)" "$(table 100 300 | sed "s|$dev|$(dev_majmin "$dev")|")" "table after the messages"

dmsetup remove rl
remove_nullb rl
