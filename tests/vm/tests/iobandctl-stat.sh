#!/bin/sh
# iobandctl stat: per group weight, share, IOPS, MB/s, queue and wait, in
# columns and in JSON, once and every interval; the numbers match the IO
# that fio did.
# shellcheck source=../lib.sh
. /ioband/lib.sh

dev=$(make_nullb st 64)
cg_create st-a
cg_create st-b
iobandctl create st "$dev" --group st-a=300 --group st-b=100

cg_run st-a fio --name=r --filename=/dev/mapper/st --direct=1 --rw=randread \
	--bs=4k --number_ios=300 --size=32M --output=/dev/null
cg_run st-b fio --name=w --filename=/dev/mapper/st --direct=1 --rw=randwrite \
	--bs=4k --number_ios=100 --size=32M --output=/dev/null

iobandctl stat st
field() { # GROUP COLUMN: the value of COLUMN in GROUP's row
	iobandctl stat --raw --noheadings -o "GROUP,$2" st | awk -v g="$1" '$1 == g {print $2}'
}
assert_eq "$(field st-a weight)" 300 "weight of st-a"
assert_eq "$(field st-a reads)" 300 "reads of st-a"
assert_eq "$(field st-b writes)" 100 "writes of st-b"
# Share of the IOs since the counters started: 300 of 400, 100 of 400.
assert_eq "$(field st-a share)" "75.0%" "share of st-a"
assert_eq "$(field st-b share)" "25.0%" "share of st-b"
assert_eq "$(field '<default>' share)" "0.0%" "share of the default group"
assert_eq "$(iobandctl stat --raw --noheadings -o group st | sort | tr '\n' ' ')" \
	"<default> st-a st-b " "the default columns name every group"
# Header of the human table.
iobandctl stat st | head -1 | grep -q "GROUP *WEIGHT *SHARE *IOPS *MB/s *QUEUED *DELAYED *WAIT *WAIT-MAX" ||
	fail "stat header: $(iobandctl stat st | head -1)"

# The scheduler fields come from the stats message.
assert_eq "$(field st-a queued)" 0 "nothing queued when idle"
wait_max=$(field st-a wait-max)
case $wait_max in [0-9]*.[0-9][0-9]) ;; *) fail "wait-max of st-a: '$wait_max'" ;; esac

# --json: key fields (the format itself is checked by the unit tests).
iobandctl stat --json st >stat.json
cat stat.json
grep -q '"group": "st-a",' stat.json || fail "json: group"
grep -q '"weight": 300,' stat.json || fail "json: weight"
grep -q '"share_pct": 75.0,' stat.json || fail "json: share_pct"
grep -q '"queued_ios": 0,' stat.json || fail "json: queued_ios"
grep -q '"wait_max_ns": [0-9][0-9]*,' stat.json || fail "json: wait_max_ns"
grep -q '"schema": 1,' stat.json || fail "json: schema"
[ "$(head -c1 stat.json)" = "{" ] || fail "json: not an object"

# -i/-c: 3 reports, the 2nd and 3rd over an interval with fio running in st-a.
cg_run st-a fio --name=r2 --filename=/dev/mapper/st --direct=1 --rw=randread \
	--bs=4k --size=32M --time_based --runtime=5 --thread --output=/dev/null &
fio_pid=$!
wait_io /dev/mapper/st st-a # fio may take seconds to start (a slow kernel)
iobandctl stat -i 1 -c 3 --raw -o group,iops,share st >interval.txt
wait "$fio_pid"
cat interval.txt
assert_eq "$(grep -c '^GROUP' interval.txt)" 3 "three reports"
iops=$(awk '$1 == "st-a" {v = $2} END {print int(v)}' interval.txt)
assert_ge "$iops" 1 "IOPS of st-a in the last interval"
assert_eq "$(awk '$1 == "st-a" {v = $3} END {print v}' interval.txt)" "100.0%" \
	"share of st-a while alone"
assert_eq "$(iobandctl stat -i 0.2 -c 2 --json st | grep -c '^{')" 2 "json per report"
# Below the table, the device's window: this null_blk completes every bio
# in the task that sends it down, so it has none (ioband-design.rst section 14).
iobandctl stat st | grep -q '^st: no window: the device completes inline, [0-9]* KiB in flight' ||
	fail "window line: $(iobandctl stat st | tail -n 1)"

# Several devices: a NAME column.
iobandctl create st2 "$dev" --domain other
assert_eq "$(iobandctl stat --raw --noheadings -o name st st2 | sort -u | tr '\n' ' ')" \
	"st st2 " "NAME column with several devices"
iobandctl stat st st2 | head -1 | grep -q "^NAME" || fail "no NAME column"
iobandctl remove st2
iobandctl remove st
remove_nullb st
