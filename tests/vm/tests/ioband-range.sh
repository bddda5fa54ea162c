#!/bin/sh
# Range policies. range-bw: a group capped at 20% of a 16 MiB/s device
# holds its cap alone and beside a greedy group, which gets the rest.
# weight-range: a group reserved 30% gets it against three greedy groups
# of higher weight. The range-bw message and the table round-trip.
. /ioband/lib.sh
set -eu

dev=$(make_nullb rg 1024 mbps=16)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
for g in a b c d; do cg_create "rg-$g"; done
a=$(cg_id rg-a); b=$(cg_id rg-b); c=$(cg_id rg-c); d=$(cg_id rg-d)

# Service, not arrivals: what the cgroups' io.stat count on the device
# below, i.e. when ioband sent it down.
snapshot() { io_snapshot "$mm" "$@"; }
load() { # CGROUP: deep 16k random reads, until measure ends them
	cg_run "$1" fio --name="$1" --filename=/dev/mapper/rg --direct=1 \
		--ioengine=libaio --iodepth=32 --numjobs=1 --rw=randread --bs=16k \
		--time_based --runtime=120 --output=/dev/null || true
}
no_fio() { ! pidof fio >/dev/null; }
# stop_loads: SIGKILL, as a fio sent SIGTERM while its jobs were still
# starting (on a busy host) waited for them forever; then wait until its
# jobs, orphaned, have finished exiting (their held IO drains at the cap)
# and closed the device.
stop_loads() {
	killall -KILL fio 2>/dev/null || true
	within 60 no_fio || fail "fio still running after SIGKILL"
}
grown() { io_grown "$mm" "$@"; } # BEFORE CGROUP...
# measure SECONDS CGROUP...: prints "<cgroup>=<KB/s>" for each over a
# window that opens once every cgroup's fio is getting IO served (fio
# starts slowly on a busy host: a window opened at a fixed time measured
# one group alone, over- or under-stating a reservation by half), whose
# length is read from the clock, not from what sleep asked for; then ends
# the loads.
measure() {
	_secs=$1
	shift
	if ! wait_for 30 grown "$(snapshot "$@")" "$@"; then
		stop_loads
		fail "not every group of '$*' got IO served"
	fi
	sleep 1
	# sectors/s to KB/s
	io_rates "$mm" "$_secs" "$@" | tr ' ' '\n' |
		awk -F= 'NF == 2 { printf "%s=%d ", $1, $2 / 2 } END { print "" }'
	stop_loads
	log "measured $*" >&2
}
value() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# 20% of 16384 KB/s is 3276 KB/s.
dm_create rg "0 $size ioband $dev rg 0 4 cgroup range-bw 0 :0:0 $a:0:3276 $b:0:0" >/dev/null
assert_eq "$(dmsetup table rg)" "0 $size ioband $mm rg 0 4 cgroup range-bw 0 :0:0 $a:0:3276 $b:0:0" "range-bw table"
log "range-bw: rg-a alone"
load rg-a &
alone=$(measure 8 rg-a) || fail "measuring failed"
wait
echo "capped at 3276 KB/s, alone: $alone"
# Never above the cap; below it by what late timer wake-ups cost: capped
# bios wait for a timer, and a busy host's guest runs it late (alone:
# 96-100% of the cap; beside a greedy group 95-100% on an idle host, 83%
# with four other guests on the host's two CPUs). The benchmark (make
# bench, cap20) holds the 5% target on an idle host. io.stat counts what
# went down in the window, the cap's own measure.
assert_le "$(value "$alone" rg-a)" $((3276 * 105 / 100)) "rg-a alone, KB/s"
# Lower bounds on rates need the device to be the bottleneck: not held
# to on a slow (debug) kernel, where the emulated CPU is (perf_check).
perf_check assert_ge "$(value "$alone" rg-a)" $((3276 * 85 / 100)) "rg-a alone, KB/s"

log "range-bw: rg-a beside rg-b"
load rg-a &
load rg-b &
both=$(measure 8 rg-a rg-b) || fail "measuring failed"
wait
echo "capped at 3276 KB/s, beside a greedy group: $both"
assert_le "$(value "$both" rg-a)" $((3276 * 105 / 100)) "rg-a beside rg-b, KB/s"
perf_check assert_ge "$(value "$both" rg-a)" $((3276 * 75 / 100)) "rg-a beside rg-b, KB/s"
# The greedy group takes the rest (work conservation): 13108 KB/s on an
# idle host; a busy one's guest pushes less through (as little as 66% of
# the device seen), so the bound is loose, but well above a second cap.
perf_check assert_ge "$(value "$both" rg-b)" $((16384 * 45 / 100)) "rg-b, KB/s"

# The range-bw message, the default group as -1.
dmsetup message rg 0 range-bw "$a:100:2000"
dmsetup message -- rg 0 range-bw -1:0:500   # -1 needs the --, as in dm-ioband
assert_eq "$(dmsetup table rg)" "0 $size ioband $mm rg 0 4 cgroup range-bw 0 :0:500 $a:100:2000 $b:0:0" "table after range-bw messages"
if dmsetup message rg 0 range-bw "$a:3000:2000" 2>/dev/null; then
	fail "range-bw accepted min above max"
fi
dmsetup remove rg

# weight-range: a reserves 30% (4915 KB/s) at weight 1 against weights of 100.
dm_create rg "0 $size ioband $dev rg 0 4 cgroup weight-range 0 :100:0:0 $a:1:4915:0 $b:100:0:0 $c:100:0:0 $d:100:0:0" >/dev/null
for g in a b c d; do load "rg-$g" & done
four=$(measure 8 rg-a rg-b rg-c rg-d) || fail "measuring failed"
wait
echo "reserved 4915 KB/s at weight 1 against three groups of weight 100: $four"
# By weight alone rg-a would get 1/301 of the device (54 KB/s); with the
# reservation 4915 + (16384 - 4915) / 301 = 4953 KB/s, met by the
# simulator on a model of this null_blk (scenarios/reserve30-nullb.sim).
# The others split the rest equally. A busy host's guest pushes less than
# the device's 16384 KB/s through (85% seen), hence shares of what went.
ra=$(value "$four" rg-a)
rest=$(($(value "$four" rg-b) + $(value "$four" rg-c) + $(value "$four" rg-d)))
# Where the host starves the guest, the device is no longer the bottleneck
# (70% of it used, 87% of the reservation seen): hence 80% here; the
# benchmark (make bench, resv30) checks the full reservation on an idle host.
perf_check assert_ge "$ra" $((4915 * 80 / 100)) "rg-a's reservation, KB/s"
assert_le "$ra" $((4953 * 110 / 100)) "rg-a, KB/s"
for g in b c d; do
	perf_check assert_within_pct $((rest / 3)) "$(value "$four" "rg-$g")" 15 "rg-$g, KB/s"
done

dmsetup remove rg
remove_nullb rg
