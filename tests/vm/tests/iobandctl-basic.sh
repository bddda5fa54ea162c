#!/bin/sh
# iobandctl creates an ioband device from cgroup paths, shows each group's
# counters by cgroup path, removes the device, and fails with a clear
# message for each kind of bad input.
. /ioband/lib.sh
set -eu

dev=$(make_nullb ctl 128)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
cg_create ctl-a
cg_create ctl-b
a=$(cg_id ctl-a)
b=$(cg_id ctl-b)

assert_eq "$(iobandctl create ctl "$dev" --weight ctl-a=200 --weight /sys/fs/cgroup/ctl-b=100 --dry-run)" \
	"0 $size ioband $dev ctl 0 0 cgroup weight 0 :100 $a:200 $b:100" "create --dry-run"
if dmsetup info ctl >/dev/null 2>&1; then
	fail "--dry-run created the device"
fi

iobandctl create ctl "$dev" --weight ctl-a=200 --weight /sys/fs/cgroup/ctl-b=100
[ -b /dev/mapper/ctl ] || fail "no /dev/mapper/ctl after iobandctl create"
assert_eq "$(dmsetup table ctl)" "0 $size ioband $mm ctl 0 0 cgroup weight 0 :100 $a:200 $b:100" \
	"table made by iobandctl"

cg_run ctl-a fio --name=r --filename=/dev/mapper/ctl --direct=1 --rw=randread \
	--bs=4k --number_ios=100 --size=64M --output=/dev/null
cg_run ctl-b fio --name=w --filename=/dev/mapper/ctl --direct=1 --rw=randwrite \
	--bs=8k --number_ios=30 --size=64M --output=/dev/null

iobandctl stat ctl
row() { # GROUP: GROUP WEIGHT READS WRITES READ-BYTES WRITE-BYTES of that row
	iobandctl stat --raw --noheadings --bytes \
		-o GROUP,WEIGHT,READS,WRITES,READ-BYTES,WRITE-BYTES ctl |
		awk -v g="$1" '$1 == g'
}
assert_eq "$(row ctl-a)" "ctl-a 200 100 0 409600 0" "stat row of ctl-a"
assert_eq "$(row ctl-b)" "ctl-b 100 0 30 0 245760" "stat row of ctl-b"
assert_eq "$(row '<default>' | cut -d' ' -f1,2)" "<default> 100" "stat row of the default group"
iobandctl stat --json ctl | grep -q '"group": *"ctl-a"' || fail "stat --json lacks ctl-a"

expect_error() { # PATTERN COMMAND...: COMMAND fails and says PATTERN
	_pattern=$1
	shift
	if "$@" >out.txt 2>err.txt; then
		fail "'$*' succeeded"
	fi
	grep -qi "$_pattern" err.txt || {
		cat err.txt
		fail "'$*': stderr lacks '$_pattern'"
	}
}
expect_error "no device-mapper device named" iobandctl stat nosuchdev
dm_create ctl-linear "0 $size linear $dev 0" >/dev/null
expect_error "not an ioband device" iobandctl stat ctl-linear
dmsetup remove ctl-linear
expect_error "not found\|no such" iobandctl create ctl2 "$dev" --weight no-such-cgroup=10 --dry-run
expect_error "1..32767\|1 to 32767\|range" iobandctl create ctl2 "$dev" --weight ctl-a=0 --dry-run
expect_error "1..32767\|1 to 32767\|range" iobandctl create ctl2 "$dev" --weight ctl-a=40000 --dry-run
expect_error "already exists" iobandctl create ctl "$dev"
expect_error "help" iobandctl create ctl2
expect_error "help" iobandctl frobnicate

iobandctl remove ctl
if dmsetup info ctl >/dev/null 2>&1; then
	fail "ctl still exists after iobandctl remove"
fi
remove_nullb ctl
