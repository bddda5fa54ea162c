#!/bin/sh
# Policy weight-time on the model block device (tests/modeldev): a group
# of 4 KiB random readers against one of 4 KiB random writers at equal
# weights, where a read costs the device 2.3 times what a write does.
# Under weight-iosize each group gets half the sectors, so the readers get
# 2.3 times the writers' device time; under weight-time, which learns both
# costs from completions, the device time splits near 1:1 (below; the
# shares of device time are the model's own account, cgroup_time).
#
# The ssd preset's costs (read 49 us + 6.93 us a KiB, write 2 us + 7.73
# us a KiB) 30 times over, on 2 channels: a 4 KiB read 2.30 ms, a write
# 0.99 ms. TCG cannot keep the preset itself busy (52,000 reads a
# second), and a device that is not the bottleneck holds nothing back
# for the weights to act on. Nor can the costs be smaller: the emulated
# machine adds 40 to 80 us to every completion's latency, which the model
# takes for device time; at 10 times the preset's costs (a write 329 us,
# measured 398-406 us) weight-time split 1.13:1.
# shellcheck source=../lib.sh
. /ioband/lib.sh

SYS=/sys/block/model0
# set -e holds in a trap too: every command of it may fail.
trap 'killall -KILL fio 2>/dev/null || true; dm_remove wt 2>/dev/null || true; rmmod ioband_model 2>/dev/null || true' EXIT
modprobe ioband_model preset=ssd size_mb=256 channels=2 \
	read_io_ns=1470000 read_kib_ns=207900 write_io_ns=60000 write_kib_ns=231900 ||
	fail "modprobe ioband_model"
wait_for 10 test -b /dev/model0
log "ioband_model: $(tr '\n' ' ' <"$SYS/model/params")"
size=$(dev_sectors /dev/model0)
cg_create wt/r
cg_create wt/w
r=$(cg_id wt/r)
w=$(cg_id wt/w)

no_fio() { ! pidof fio >/dev/null; }
load() { # CGROUP RW: 4 KiB random IO at depth 16 on the ioband device
	cg_run "wt/$1" fio --name="$1" --filename=/dev/mapper/wt --direct=1 \
		--ioengine=libaio --iodepth=16 --rw="$2" --bs=4k --size=64m \
		--offset="$3" --time_based --runtime=120 --output=/dev/null || true
}
device_ns() { # ID: the cgroup's device time in cgroup_time
	awk -v id="$1" '$1 == id { print $2 }' "$SYS/model/cgroup_time"
}

# run POLICY: sets ratio to the readers' device time over the writers',
# x 100, over 5 s once both groups have had 2 s to run (and the model to
# learn).
run() {
	dm_create wt "0 $size ioband /dev/model0 wt 0 0 cgroup $1 0 :100 $r:100 $w:100" >/dev/null
	load r randread 0 &
	load w randwrite 128m &
	sleep "$(scaled 2)"
	echo reset >"$SYS/model/cgroup_time"
	sleep 5
	ns_r=$(device_ns "$r")
	ns_w=$(device_ns "$w")
	stats=$(dmsetup message wt 0 stats | head -n 1)
	stat_text=$(iobandctl stat wt)
	killall -KILL fio 2>/dev/null || true
	within 30 no_fio || fail "fio still running after SIGKILL"
	wait
	{ [ -n "$ns_r" ] && [ -n "$ns_w" ] && [ "$ns_w" -gt 0 ]; } ||
		fail "$1: a group missing from cgroup_time: $(cat "$SYS/model/cgroup_time")"
	ratio=$((ns_r * 100 / ns_w))
	log "$1: device time readers ${ns_r} ns, writers ${ns_w} ns, $ratio : 100"
	log "$1: model: $(echo "$stats" | tr ' ' '\n' | grep '^time_' | tr '\n' ' ')"
	dm_remove wt
}

run weight-iosize
iosize=$ratio
run weight-time
time=$ratio
# The window in bios under weight-time: twice the 2 channels the device
# kept busy, so at most 4 and a rounding; 8 allows the model's errors.
# iobandctl stat read it a moment later: it may have moved since.
items=$(echo "$stats" | tr ' ' '\n' | sed -n 's/^time_window_items=//p')
[ -n "$items" ] || fail "weight-time: no time_window_items in stats: $stats"
assert_ge "$items" 1 "weight-time: window in bios"
assert_le "$items" 8 "weight-time: window in bios on 2 channels"
stat_items=$(echo "$stat_text" | sed -n 's/^wt: window \([0-9]*\) IOs .*/\1/p')
[ -n "$stat_items" ] ||
	fail "iobandctl stat does not give weight-time's window in IOs: $(echo "$stat_text" | grep '^wt: ')"
assert_ge "$stat_items" 1 "iobandctl stat: weight-time's window in bios"
assert_le "$stat_items" 8 "iobandctl stat: weight-time's window in bios on 2 channels"
log "device time, readers per 100 of the writers': weight-iosize $iosize, weight-time $time"
# weight-time split 102-105:100 in six runs of this test on 6.1 and 7.3.4, and
# 118:100 and 124:100 in two (make check's full suite, and right after
# ioband-weight-flip; a third run in that order gave 104): a swing not
# explained yet, which keeps issue 41 open. Held here: at least three
# quarters of the way from weight-iosize's split to 1:1 (a module that
# charges sectors under weight-time splits 231:100 and fails).
dist_time=$((time > 100 ? time - 100 : 100 - time))
# perf_check: on 6.1-debug the CPU kept the model device 34% busy, its
# service times did not fill the time, weight-time charged sectors
# (time_rate_limited=1) and split 216:100, as it should where the device
# is not what limits.
perf_check assert_le $((dist_time * 4)) $((iosize - 100)) "weight-time: readers' device time per 100 of the writers', distance from 100 x 4, against weight-iosize's"
# The same load under weight-iosize is far from 1:1 (2.3:1 by the model's
# costs): what weight-time corrects is there to correct.
assert_ge "$iosize" 150 "weight-iosize: readers' device time per 100 of the writers'"
cg_remove wt/r
cg_remove wt/w
cg_remove wt
