#!/bin/sh
# The open window's bound over a bio-based device (ioband-design.rst
# section 14). Below ioband: dm-delay over a null_blk that completes
# inline (irqmode=0, no cap), with no delay at first, so that the window
# opens and bios go down past the scheduler. Then dm-delay holds every
# write for 20 s: a bio-based device, it takes them all at once, and no
# nr_requests stops the submitter. 64 KiB direct writes at depth 512
# (32 MiB): while they are held, what went down past the scheduler stays
# within 4 MiB per CPU (one bio more each), the rest goes through the
# scheduler (4 MiB while the window is open, and more as what it sent
# becomes overdue, section 14a) or is held in ioband, and the stats count
# every bio below in in_flight (open_in_flight those past the scheduler):
# each of fio's 512 is in in_flight or in queued. Before the bound, all
# 512 went down past the scheduler, and in_flight said 0. About 15 s.
. /ioband/lib.sh
set -eu

nb=$(make_nullb ob-nb 256)
size=$(dev_sectors "$nb")
dm_create ob-low "0 $size delay $nb 0 0" >/dev/null
low=/dev/mapper/ob-low
dev=$(dm_create ob "0 $size ioband $low ob 0 0 none weight 0 :100")

# delay_writes MS: dm-delay holds writes MS ms from now (suspending it
# sends down what it holds).
delay_writes() {
	dmsetup load ob-low --table "0 $size delay $nb 0 0 $nb 0 $1"
	dmsetup suspend --noudevsync ob-low
	dmsetup resume --noudevsync ob-low
}

inline_open() { [ "$(domain_stat "$dev" window_inline)" = 1 ]; }
# all_counted N: ioband's in_flight and queued add up to N.
all_counted() {
	[ "$(dmsetup message "$dev" 0 stats | head -n 1 | tr ' ' '\n' |
		awk -F= '$1 == "in_flight" || $1 == "queued" { n += $2 } END { print n + 0 }')" -eq "$1" ]
}

fio --name=warm --filename="$dev" --rw=randread --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=4 --time_based --runtime=60 \
	--output=/dev/null >/dev/null 2>&1 &
warm=$!
within 10 inline_open || fail "the window never opened over dm-delay on an inline null_blk: window_inline=$(domain_stat "$dev" window_inline)"
stop_fio "$warm"

delay_writes 20000
fio --name=held --filename="$dev" --rw=randwrite --bs=64k --direct=1 \
	--ioengine=libaio --iodepth=512 --size=200m --time_based --runtime=60 \
	--output=/dev/null >/dev/null 2>&1 &
held=$!
# What went down past the scheduler went at once; through it, 4 MiB at
# first and as much again each time that becomes overdue (every second).
sleep 2
within 3 all_counted 512 || :
stats=$(dmsetup message "$dev" 0 stats | head -n 1)
stat_of() { echo "$stats" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
in_flight=$(stat_of in_flight)
open=$(stat_of open_in_flight)
queued=$(stat_of queued)
cpus=$(grep -c '^processor' /proc/cpuinfo)
# 64 KiB bios: 64 of them are 4 MiB.
bound=$((cpus * 65))
log "fio's 512 writes: ioband's in_flight ${in_flight:-?}, open_in_flight ${open:-?} (bound $bound on $cpus CPUs), queued ${queued:-?}, overdue $(stat_of overdue), window_inline $(stat_of window_inline)"

delay_writes 0
stop_fio "$held"
assert_eq "$((${in_flight:-0} + ${queued:-0}))" 512 "ioband's in_flight + queued while dm-delay holds fio's 512 writes"
assert_le "${open:-999999}" "$bound" "64 KiB writes below past the scheduler (open_in_flight)"
assert_ge "${open:-0}" 1 "open_in_flight while dm-delay holds the writes"
assert_ge "$queued" 1 "bios held in ioband beyond the bound"
wait_for 5 all_counted 0
assert_eq "$(domain_stat "$dev" in_flight)" 0 "in_flight at the end"
assert_eq "$(domain_stat "$dev" open_in_flight)" 0 "open_in_flight at the end"
assert_eq "$(domain_stat "$dev" open_in_flight_sectors)" 0 "open_in_flight_sectors at the end"

dm_remove ob
dm_remove ob-low
remove_nullb ob-nb
