#!/bin/sh
# A suspend stops one target, not its domain. Two targets share a domain
# on one capped disk; the second, busy with bios held, is suspended (the
# suspend drains them and completes); the first keeps scheduling its two
# cgroups 2:1 within 5% meanwhile, and the second resumes and finishes
# its IO unharmed.
. /ioband/lib.sh
set -eu

dev=$(make_nullb su 512 mbps=16)
half=$(($(blockdev --getsz "$dev") / 2))
dm_create su-p1 "0 $half linear $dev 0" >/dev/null
dm_create su-p2 "0 $half linear $dev $half" >/dev/null
cg_create su-a
cg_create su-b
a=$(cg_id su-a)
b=$(cg_id su-b)
dm_create su1 "0 $half ioband /dev/mapper/su-p1 su 0 0 cgroup weight 0 :100 $a:200 $b:100" >/dev/null
dm_create su2 "0 $half ioband /dev/mapper/su-p2 su 0 0 none weight 0 :100" >/dev/null

queued() { dmsetup message "$1" 0 stats | sed -n '2s/.* queued=\([0-9]*\).*/\1/p'; }
held() { [ "$(queued "$1")" -ge "$2" ]; }
sectors() { # GROUP_ID: read + write sectors of the group on su1
	dmsetup status su1 | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 3) + $(i + 6) }'
}
load() { # CGROUP DEVICE SECONDS [BLOCK-SIZE]
	cg_run "$1" fio --name="$1" --filename="/dev/mapper/$2" --direct=1 --ioengine=libaio \
		--iodepth=32 --numjobs=2 --rw=randread --bs="${4:-4k}" --time_based \
		--runtime="$3" --group_reporting --output="fio-$1.txt"
}

# su2 holds bios of its own, then is suspended: the suspend sends them
# down and completes, and su2's fio waits in dm until the resume. Its
# bios are 64 KiB, 256 a second at the cap: a debug kernel's emulated CPU
# does not reach the cap's 4,096 4 KiB IOs a second, and where the cap
# does not bind each bio completes before the next comes (none is held).
cg_create su-c
load su-c su2 "$(($(scaled 3) + 30))" 64k &
pc=$!
# On a failure: su2 resumed, so that its fio can end.
trap 'dmsetup resume su2 2>/dev/null || :' EXIT
wait_for 20 held su2 16
dmsetup suspend su2
assert_eq "$(queued su2)" 0 "bios su2 holds once suspended"

load su-a su1 "$(($(scaled 3) + 12))" &
pa=$!
load su-b su1 "$(($(scaled 3) + 12))" &
pb=$!
sleep "$(scaled 3)" # fio starts slowly on a slow (debug) kernel
s1=$(sectors "$a")
s2=$(sectors "$b")
sleep 10
d1=$(($(sectors "$a") - s1))
d2=$(($(sectors "$b") - s2))
wait "$pa" || { cat fio-su-a.txt; fail "fio of su-a failed"; }
wait "$pb" || { cat fio-su-b.txt; fail "fio of su-b failed"; }
total=$((d1 + d2))
[ "$total" -gt 0 ] || fail "no IO on su1 while su2 was suspended"
echo "10 s with su2 suspended: su-a $d1 sectors, su-b $d2, share of su-a $((d1 * 1000 / total))/1000 (configured 667)"
# Shares need the device to be the bottleneck: on a slow (debug) kernel
# the emulated CPU is, and they are only printed (perf_check).
perf_check assert_within_pct 667 $((d1 * 1000 / total)) 5 "share of su-a (per mille) while su2 is suspended"

dmsetup resume su2
wait "$pc" || { cat fio-su-c.txt; fail "fio of su-c failed across its device's suspend"; }
grep -q "err= 0" fio-su-c.txt || { cat fio-su-c.txt; fail "IO errors on su2 across its suspend"; }
dmsetup remove su1 su2
dmsetup remove su-p1 su-p2
remove_nullb su
