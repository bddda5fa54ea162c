#!/bin/sh
# A table changes nothing until it is resumed, as dm wants: a table loaded
# and never resumed, then cleared, leaves the live device, its domain's
# knobs and its groups exactly as they were; so does a two-line table whose
# second line is rejected, its first line naming the live device's domain,
# both as a new device and as a reload. A resumed table does apply.
. /ioband/lib.sh
set -eu

dev=$(make_nullb ld 256)
half=$(($(blockdev --getsz "$dev") / 2))
cg_create ld-a
cg_create ld-b
a=$(cg_id ld-a)
b=$(cg_id ld-b)
dm_create ld-p1 "0 $half linear $dev 0" >/dev/null
dm_create ld-p2 "0 $half linear $dev $half" >/dev/null
p1=$(dev_majmin /dev/mapper/ld-p1)
dm_create ld "0 $half ioband $p1 ld 4 16 cgroup weight 512 :100 $a:200" >/dev/null
dmsetup message ld 0 range-bw "$a:100:2000"
dmsetup message ld 0 carryover 5

# The live device's table, its domain's knobs and its groups' weights and
# ranges, in the words of the table and of the stats message (its clock
# left out).
state() {
	dmsetup table ld
	dmsetup message ld 0 stats | sed 's/ elapsed_ns=[0-9]*//'
}
before=$(state)
echo "$before"

# 1. Loaded, not resumed: other knobs, another policy, other weights, a
# group more; in the original dm-ioband's grammar.
other="0 $half ioband $p1 ld 8 64 cgroup weight-iosize 4096 :50 $a:300 $b:400"
echo "$other" | dmsetup load ld
assert_eq "$(state)" "$before" "the live device after a load without resume"
assert_eq "$(dmsetup table --inactive ld)" "$other" "the inactive table, as loaded"
dmsetup clear ld
assert_eq "$(state)" "$before" "the live device after its inactive table was cleared"
# The same with a knob only the extended grammar has.
echo "$other carryover=9" | dmsetup load ld
assert_eq "$(state)" "$before" "the live device after a load with carryover=9"
dmsetup clear ld

# 2. A new device whose table's first line joins the live domain and whose
# second line is rejected.
if printf '0 %s ioband /dev/mapper/ld-p2 ld 8 64 cgroup range-bw 0 :0:100 %s:1:2\n%s %s ioband /dev/nonexistent ld 0 0 cgroup weight 0\n' \
	"$half" "$b" "$half" "$half" | dmsetup create ld-two 2>/dev/null; then
	fail "a table whose second line names no device was accepted"
fi
if dmsetup info ld-two >/dev/null 2>&1; then
	fail "the rejected table left the device ld-two behind"
fi
assert_eq "$(state)" "$before" "the live device after a rejected two-line table"

# 3. The same as a reload of the live device: the load fails, the live
# table and its domain stay.
if printf '0 %s ioband %s ld 8 64 cgroup range-bw 0 :0:100\n%s %s ioband /dev/nonexistent ld 0 0 cgroup weight 0\n' \
	"$half" "$p1" "$half" "$half" | dmsetup load ld 2>/dev/null; then
	fail "a reload whose second line names no device was accepted"
fi
dmsetup resume ld
assert_eq "$(state)" "$before" "the live device after a rejected two-line reload"
dd if=/dev/mapper/ld of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null ||
	fail "IO after the rejected tables failed"

# 4. A resumed table applies: its knobs become the domain's.
echo "$other carryover=9" | dmsetup load ld
dmsetup resume ld
assert_eq "$(dmsetup table ld)" "$other carryover=9" "the table after load and resume"
dmsetup message ld 0 stats | head -n 1 | grep -q "policy=weight-iosize token_base=4096 io_throttle=8 io_limit=64 carryover=9 " ||
	fail "the domain's knobs after load and resume: $(dmsetup message ld 0 stats | head -n 1)"

dmsetup remove ld
dmsetup remove ld-p1 ld-p2
remove_nullb ld
