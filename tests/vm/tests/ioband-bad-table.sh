#!/bin/sh
# A malformed table is rejected with an error that names the wrong
# argument, for each argument in turn; no device is left behind, and a
# live device whose reload is rejected keeps its table and keeps working.
. /ioband/lib.sh
set -eu

dev=$(make_nullb bad 64 memory_backed=1)
size=$(blockdev --getsz "$dev")
cg_create bad-a
a=$(cg_id bad-a)
long_id=abcdefghijklmnopqrstuvwxyz0123456

rejected() { # EXPECTED_ERROR ARGS...: the table "ARGS" must fail with it
	expected=$1
	shift
	_mark=$(klog_mark)
	if echo "0 $size ioband $*" | dmsetup create bad-try 2>/dev/null; then
		dmsetup remove bad-try
		fail "accepted a bad table: $*"
	fi
	if dmsetup info bad-try >/dev/null 2>&1; then
		fail "a rejected table left the device bad-try behind: $*"
	fi
	if ! klog_since "$_mark" | grep -q "ioband: $expected"; then
		klog_since "$_mark" | tail -n 5
		fail "table '$*': kernel log lacks 'ioband: $expected'"
	fi
	echo "rejected as expected ($expected): $*"
}

rejected "Not enough arguments" "$dev 1 0 0 cgroup weight"
rejected "Not enough arguments" ""
rejected "device: cannot open" "/dev/nonexistent 1 0 0 cgroup weight 0 :100"
rejected "ioband_device_id: longer than 31" "$dev $long_id 0 0 cgroup weight 0"
rejected "io_throttle: want a number" "$dev 1 x 0 cgroup weight 0"
rejected "io_throttle: want a number" "$dev 1 -1 0 cgroup weight 0"
rejected "io_limit: want a number" "$dev 1 0 99999999999 cgroup weight 0"
rejected "group_type: unknown" "$dev 1 0 0 blkio weight 0"
rejected "policy: unknown" "$dev 1 0 0 cgroup fastest 0"
rejected "token_base: want a number" "$dev 1 0 0 cgroup weight 1.5"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight 0 :100 $a"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight 0 :100 abc:10"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight 0 :100 $a:0"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight 0 :0"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight 0 :100 $a:32768"
rejected "group: the same <id> is given twice" "$dev 1 0 0 cgroup weight 0 $a:10 $a:20"
rejected "group: the default group.s :... is given twice" "$dev 1 0 0 cgroup weight 0 :10 :20"
rejected "group: group_type none takes no" "$dev 1 0 0 none weight 0 :100 $a:10"
# Range policies: <id>:<min>:<max> and <id>:<weight>:<min>:<max>, KB/s.
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup range-bw 0 :100"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup range-bw 0 :0:0 $a:500:100"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup range-bw 0 :0:0 $a:10:30:20"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight-range 0 :100:0:0 $a:0:10:20"
rejected "group: malformed or out of range" "$dev 1 0 0 cgroup weight-range 0 :100:0:0 $a:10:4294967296:0"
rejected "policy: unknown" "$dev 1 0 0 cgroup range 0"

# A rejected reload leaves the live device as it was.
good="0 $size ioband $(cat "/sys/block/$(basename "$dev")/dev") good 0 0 cgroup weight 0 :100 $a:10"
dm_create bad-live "$good"
if echo "0 $size ioband $dev good 0 0 cgroup weight 0 :100 $a:0" | dmsetup load bad-live 2>/dev/null; then
	fail "dmsetup load accepted weight 0"
fi
dmsetup resume bad-live
assert_eq "$(dmsetup table bad-live)" "$good" "table after a rejected reload"
fio --name=after --filename=/dev/mapper/bad-live --direct=1 --rw=randrw --bs=4k \
	--size=16M --verify=crc32c --verify_fatal=1 --output=fio.txt ||
	{ cat fio.txt; fail "IO after a rejected reload failed"; }
dmsetup remove bad-live
remove_nullb bad
