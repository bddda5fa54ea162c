#!/bin/sh
# An ioband device is created, its table reads back as given and reloads
# unchanged through dmsetup load + resume, its status has the classic
# format, and it is removed.
. /ioband/lib.sh
set -eu

dev=$(make_nullb tbl 64)
mm=$(cat "/sys/block/$(basename "$dev")/dev")
size=$(blockdev --getsz "$dev")
cg_create tbl-a
cg_create tbl-b
a=$(cg_id tbl-a)
b=$(cg_id tbl-b)

dm_create tbl "0 $size ioband $dev share1 4 128 cgroup weight 2048 :40 $a:200 $b:100"
expected="0 $size ioband $mm share1 4 128 cgroup weight 2048 :40 $a:200 $b:100"
assert_eq "$(dmsetup table tbl)" "$expected" "table of a fresh device"

# What dmsetup table prints loads back to the same state.
dmsetup table tbl | dmsetup load tbl
dmsetup resume tbl
assert_eq "$(dmsetup table tbl)" "$expected" "table after reload"

# Status: the domain, then 7 numbers per group, default group (-1) first.
status=$(dmsetup status tbl)
set -- $status
assert_eq "$1 $2 $3 $4" "0 $size ioband share1" "status prefix"
shift 4
assert_eq $# 21 "status fields for 3 groups: $status"
assert_eq "$1 $8 ${15}" "-1 $a $b" "status group ids"

# The defaults: a table of none type with no group, default weight 100.
dm_create tbl-none "0 $size ioband $dev 7 0 0 none weight 0"
assert_eq "$(dmsetup table tbl-none)" "0 $size ioband $mm 7 0 0 none weight 0 :100" \
	"table with defaults"
dmsetup remove tbl-none

# A device whose table is fed from another's table behaves the same.
dmsetup table tbl | dmsetup create tbl-copy
assert_eq "$(dmsetup table tbl-copy)" "$expected" "table of a copy"
dmsetup remove tbl-copy

dmsetup remove tbl
if dmsetup info tbl >/dev/null 2>&1; then
	fail "tbl still exists after dmsetup remove"
fi
remove_nullb tbl
