#!/bin/sh
# dm-stats' @stats_create suspends the device internally (a fast internal
# suspend, which calls no hook of the target) and waits for every bio in
# it, ioband's held ones included. With a group capped by range-bw
# holding a backlog of some 15 s at its max, it must still finish within
# 10 s, and so must a plain suspend; the capped group's IO goes on after
# both, capped again.
# harness-timeout: 240
. /ioband/lib.sh
set -eu

dev=$(make_nullb st 256)
size=$(blockdev --getsz "$dev")
cg_create st-a
a=$(cg_id st-a)
# 256 KB/s: one 64 KiB read every 250 ms.
dm_create st "0 $size ioband $dev st 0 0 cgroup range-bw 0 :0:0 $a:0:256" >/dev/null

queued() { dmsetup message st 0 stats | sed -n '1s/.* queued=\([0-9]*\).*/\1/p'; }
held() { [ "$(queued)" -ge "$1" ]; }
uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
timed() { # MAX_SECONDS WHAT CMD...: run CMD, fail unless it took at most MAX_SECONDS
	_max=$1 _what=$2
	shift 2
	_t0=$(uptime_cs)
	"$@" || fail "$_what failed"
	_cs=$(($(uptime_cs) - _t0))
	echo "$_what with $_held bios held: $((_cs / 100)).$((_cs % 100 / 10)) s"
	assert_le "$_cs" $((_max * 100)) "$_what, centiseconds"
}

# On the way out, pass or fail: no cap, so that the backlog goes at once,
# and no fio.
no_fio() { ! pidof fio >/dev/null; }
stop_load() {
	trap - EXIT
	dmsetup message st 0 range-bw "$a:0:0" 2>/dev/null || :
	killall fio 2>/dev/null || :
	wait_for 30 no_fio
	wait "$load" 2>/dev/null || :
}
cg_run st-a fio --name=capped --filename=/dev/mapper/st --direct=1 --ioengine=libaio \
	--iodepth=64 --rw=randread --bs=64k --time_based --runtime=180 \
	--output=fio-capped.txt &
load=$!
trap stop_load EXIT
# 60 held bios of 64 KiB are 15 s at 256 KB/s.
wait_for 60 held 60
_held=$(queued)
timed 10 "@stats_create" dmsetup message st 0 @stats_create - /1
dmsetup message st 0 @stats_list | grep -q . || fail "@stats_create made no region"
wait_for 60 held 60
_held=$(queued)
timed 10 "dmsetup suspend" dmsetup suspend st
assert_eq "$(queued)" 0 "bios held by the suspended device"
dmsetup resume st
# The cap holds again after both: the backlog builds up once more.
wait_for 60 held 60
dmsetup message st 0 @stats_delete 0
stop_load
dmsetup remove st
remove_nullb st
