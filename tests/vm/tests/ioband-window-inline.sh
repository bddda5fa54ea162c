#!/bin/sh
# The window's inline mode (ioband-design.rst section 14). A null_blk that
# completes every bio in the task that sends it down (irqmode=0, no cap)
# has no queue: the stats message says window_inline=1 and no bio waits
# behind the window any more. One that completes from a timer 20 us
# later (irqmode=2), as fast but from an interrupt, and one whose mbps=
# cap completes the requests it held back from its timer, keep
# window_inline=0, and under the capped one's backlog bios wait behind
# the window, where the weights act. While the window is open, bios go
# down past the scheduler, so it measures no periods and times no bio
# (open_ios counts them); their counts (batched per CPU) still add up to what
# the null_blk read through ioband.
# (irqmode=1 would not do: with its poll queue this null_blk has two
# hardware queues, and blk-mq completes such a request in the submitting
# task, inline, not from softirq.)
. /ioband/lib.sh
set -eu

# group_field DEV NAME: the default group's NAME in DEV's stats message.
group_field() {
	dmsetup message "$1" 0 stats | sed -n 's/^group=-1 //p' | tr ' ' '\n' |
		sed -n "s/^$2=//p"
}

# sectors_read DEV: sectors read from the block device DEV.
sectors_read() { awk '{ print $3 }' "/sys/dev/block/$(dev_majmin "$1")/stat"; }

# progressed DEV NULL_BLK PERIODS IOS: the window of DEV has measured
# three periods more than PERIODS, or it is open (and measures none) and
# the null_blk has completed 200 reads more than IOS.
progressed() {
	[ "$(domain_stat "$1" window_periods)" -gt "$(($3 + 2))" ] && return 0
	[ "$(domain_stat "$1" window_inline)" = 1 ] &&
		[ "$(($(_ios "$2") - $4))" -ge 200 ]
}

# measure NAME NULL_BLK-ATTRIBUTE...: an ioband over a new null_blk NAME
# under 4 KiB random reads (2 jobs x 16 outstanding); once it has
# progressed, sets inline0, full0, periods0, open0 and service0
# (window_inline, window_full, window_periods, and the group's open_ios
# and service_ns), then once it has again, inline1, full1, periods1,
# open1, service1 and ios (the reads completed in between); once fio
# has stopped, counted (the sectors ioband counted as read) and read
# (the sectors the null_blk read since the ioband was made).
measure() {
	_name=$1
	shift
	_nb=$(make_nullb "$_name" 256 "$@")
	dm_create "$_name-ib" "0 $(dev_sectors "$_nb") ioband $_nb $_name 0 0 none weight 0 :100" >/dev/null
	_read0=$(sectors_read "$_nb")
	fio --name=load --filename="/dev/mapper/$_name-ib" --rw=randread --bs=4k \
		--direct=1 --ioengine=libaio --numjobs=2 --iodepth=16 \
		--time_based --runtime=600 --output=/dev/null >/dev/null 2>&1 &
	_pid=$!
	wait_io "$_nb"
	wait_for 10 progressed "$_name-ib" "$_nb" \
		"$(domain_stat "$_name-ib" window_periods)" "$(_ios "$_nb")"
	inline0=$(domain_stat "$_name-ib" window_inline)
	full0=$(domain_stat "$_name-ib" window_full)
	periods0=$(domain_stat "$_name-ib" window_periods)
	open0=$(group_field "$_name-ib" open_ios)
	service0=$(group_field "$_name-ib" service_ns)
	_ios0=$(_ios "$_nb")
	wait_for 10 progressed "$_name-ib" "$_nb" "$periods0" "$_ios0"
	inline1=$(domain_stat "$_name-ib" window_inline)
	full1=$(domain_stat "$_name-ib" window_full)
	periods1=$(domain_stat "$_name-ib" window_periods)
	open1=$(group_field "$_name-ib" open_ios)
	service1=$(group_field "$_name-ib" service_ns)
	ios=$(($(_ios "$_nb") - _ios0))
	stop_fio "$_pid"
	counted=$(dmsetup message "$_name-ib" 0 stats | sed -n 's/.* read_sectors=\([0-9]*\) .*/\1/p')
	read=$(($(sectors_read "$_nb") - _read0))
	dm_remove "$_name-ib"
	remove_nullb "$_name"
	log "$_name: window_inline $inline0 then $inline1, window_full +$((full1 - full0)) and window_periods +$((periods1 - periods0)), open_ios +$((open1 - open0)), service_ns +$((service1 - service0)) over $ios reads; $counted sectors counted, $read read"
}

measure wi-inline
assert_eq "$inline0" 1 "window_inline, null_blk irqmode=0"
assert_eq "$inline1" 1 "window_inline, null_blk irqmode=0, 200 reads later"
assert_ge "$ios" 200 "reads completed on the irqmode=0 null_blk"
assert_le "$((full1 - full0))" 0 "bios held for the window while it is open"
assert_eq "$periods1" "$periods0" "periods measured while the window is open (bios past the scheduler)"
assert_ge "$((open1 - open0))" 200 "open_ios while the window is open"
assert_eq "$service1" "$service0" "service_ns while the window is open (bios past it are not timed)"
assert_eq "$counted" "$read" "sectors counted by the group against read by the null_blk"

measure wi-timer irqmode=2 completion_nsec=20000
assert_eq "$inline0" 0 "window_inline, null_blk irqmode=2 (timer, 20 us)"
assert_eq "$counted" "$read" "sectors counted by the group against read by the null_blk, irqmode=2"
assert_eq "$inline1" 0 "window_inline, null_blk irqmode=2, three periods later"
assert_eq "$open1" 0 "open_ios, null_blk irqmode=2 (every bio through the scheduler)"
assert_ge "$((service1 - service0))" 1 "service_ns, null_blk irqmode=2"

# 1 MiB/s: 256 reads a second, below what even the debug kernel's CPU
# asks (at 16 MiB/s it never reached the cap, and so completed inline).
measure wi-capped mbps=1
assert_eq "$inline0" 0 "window_inline, null_blk capped at 1 MiB/s"
assert_eq "$inline1" 0 "window_inline, capped null_blk, three periods later"
assert_ge "$((full1 - full0))" 1 "bios held for the window under the cap's backlog"
