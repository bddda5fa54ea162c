#!/bin/sh
# The counts of bios that go down past the scheduler (the window open,
# ioband-design.rst section 14) across detaches, re-attaches and resets.
# Each CPU keeps them for the group it counted last until it counts
# another, or a report or reset folds them into the group's counters:
# first groups are detached, attached again and the counters reset while
# two cgroups' IO runs (nothing must break); then, with no IO, every read
# of a cgroup must be counted once, in the stats read right after its IO,
# not in the group attached again under its id after a detach, and not
# after a reset.
. /ioband/lib.sh
set -eu

nb=$(make_nullb os 64)
cg_create os-a
cg_create os-b
a=$(cg_id os-a)
b=$(cg_id os-b)
dev=$(dm_create os "0 $(dev_sectors "$nb") ioband $nb os 0 0 cgroup weight 0 :100 $a:100 $b:100")

# reads_of ID: reads and open_ios of group ID, as "READS OPEN".
reads_of() {
	dmsetup message os 0 stats | awk -v g="group=$1" '$1 == g {
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		print v["reads"], v["open_ios"]
	}'
}
# read_4m CGROUP: 1024 reads of 4 KiB, one at a time.
read_4m() {
	cg_run "$1" fio --name=os --filename="$dev" --direct=1 --rw=read --bs=4k \
		--size=4M --ioengine=psync --output=/dev/null >/dev/null ||
		fail "fio from $1 failed"
}
window_open() { [ "$(domain_stat os window_inline)" = 1 ]; }

# read_random CGROUP: random reads, 4 at a time, for up to 300 s.
read_random() {
	cg_run "$1" fio --name=os --filename="$dev" --direct=1 --rw=randread \
		--bs=4k --ioengine=libaio --iodepth=4 --time_based --runtime=300 \
		--output=/dev/null >/dev/null 2>&1
}

# Churn while both cgroups read: the window opens under their IO, and the
# groups come and go under it.
read_random os-a &
pid_a=$!
read_random os-b &
pid_b=$!
wait_for 30 window_open
i=0
while [ $i -lt 20 ]; do
	dmsetup message os 0 reset
	dmsetup message os 0 detach "$a"
	dmsetup message os 0 attach "$a:100"
	dmsetup status os >/dev/null
	dmsetup message os 0 detach "$b"
	dmsetup message os 0 attach "$b:100"
	dmsetup message os 0 stats >/dev/null
	i=$((i + 1))
done
stop_fio "$pid_a" "$pid_b"
log "after the churn: a $(reads_of "$a"), b $(reads_of "$b"), default $(reads_of -1)"

# With no IO, every count is exact: 1024 reads a run of read_4m, all of
# them past the scheduler while the window stays open.
read_4m os-a
window_open || fail "the window closed after the churn"
dmsetup message os 0 reset
read_4m os-a
first=$(reads_of "$a")
assert_eq "$first" "1024 1024" "reads and open_ios of a, read right after its IO"
assert_eq "$(reads_of "$a")" "$first" "reads and open_ios of a, read again"
read_4m os-b
read_4m os-a
assert_eq "$(reads_of "$a") $(reads_of "$b")" "2048 2048 1024 1024" \
	"reads and open_ios of a and b, read after a, b then a"
# a's last reads, not reported yet, go with it; the group attached again
# under its id starts from none.
read_4m os-a
dmsetup message os 0 detach "$a"
dmsetup message os 0 attach "$a:100"
assert_eq "$(reads_of "$a")" "0 0" "reads and open_ios of a attached again"
read_4m os-a
assert_eq "$(reads_of "$a")" "1024 1024" "reads and open_ios of a attached again, after its reads"
# b's reads, not reported yet, before a reset.
read_4m os-b
dmsetup message os 0 reset
assert_eq "$(reads_of "$b")" "0 0" "reads and open_ios of b after a reset"
read_4m os-b
assert_eq "$(reads_of "$b")" "1024 1024" "reads and open_ios of b after a reset and its reads"
assert_eq "$(reads_of -1)" "0 0" "reads and open_ios of the default group"

dm_remove os
remove_nullb os
