#!/bin/sh
# set, attach, detach, policy and reset change a live device through
# messages, with no suspend: the table the kernel prints follows, and IO
# running meanwhile is not stopped.
# shellcheck source=../lib.sh
. /ioband/lib.sh

dev=$(make_nullb msg 64)
size=$(dev_sectors "$dev")
mm=$(dev_majmin "$dev")
cg_create msg-a
cg_create msg-b
a=$(cg_id msg-a)
b=$(cg_id msg-b)
iobandctl create msg "$dev" --group msg-a=200
tbl() { dmsetup table msg; }

# IO in the background all along: each change applies to a running device.
cg_run msg-a fio --thread --name=bg --filename=/dev/mapper/msg --direct=1 --rw=randread \
	--bs=4k --size=32M --time_based --runtime=5 --output=/dev/null &
fio_pid=$!

iobandctl attach msg msg-b 300
assert_eq "$(tbl)" "0 $size ioband $mm msg 0 0 cgroup weight 0 :100 $a:200 $b:300" "attach with weight"
iobandctl set msg msg-b=50 default=70
assert_eq "$(tbl)" "0 $size ioband $mm msg 0 0 cgroup weight 0 :70 $a:200 $b:50" "set"
iobandctl detach msg msg-b
assert_eq "$(tbl)" "0 $size ioband $mm msg 0 0 cgroup weight 0 :70 $a:200" "detach"
iobandctl attach msg /msg-b
assert_eq "$(tbl)" "0 $size ioband $mm msg 0 0 cgroup weight 0 :70 $a:200 $b:70" \
	"attach without weight takes the default weight"
iobandctl policy msg weight-iosize
assert_eq "$(tbl)" "0 $size ioband $mm msg 0 0 cgroup weight-iosize 0 :70 $a:200 $b:70" "policy"
iobandctl set msg --io-limit 64 --io-throttle 8 --token-base 4096 --carryover 2
assert_eq "$(tbl)" "0 $size ioband $mm msg 8 64 cgroup weight-iosize 4096 :70 $a:200 $b:70" \
	"set tunables"

# The fio job is still running: nothing was suspended.
kill -0 "$fio_pid" || fail "background IO ended early"
dmsetup info msg | grep -q "State: *ACTIVE" || fail "msg is not active"

wait "$fio_pid" || fail "background IO failed"
reads=$(iobandctl stat --raw --noheadings -o group,reads msg | awk '$1 == "msg-a" {print $2}')
assert_ge "$reads" 1 "msg-a reads before reset"
iobandctl reset msg
assert_eq "$(iobandctl stat --raw --noheadings -o reads,writes msg | sort -u)" "0 0" "reset"
iobandctl -v reset msg 2>&1 | grep -q "message to msg: reset" || fail "-v does not show the message"
iobandctl remove msg
remove_nullb msg
