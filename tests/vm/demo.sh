#!/bin/sh
# make demo: the job a newcomer runs first. Two cgroups, weighted 200:100,
# each run dm-ioband's own buffered-write test (fio --rw=write
# --numjobs=50, seed 004) in a folder of one ext4 over an ioband device on
# a null_blk capped at 32 MiB/s, for DEMO_SECONDS seconds of writing. While
# both write, `iobandctl stat -i` shows each group's rates per interval;
# then the demo prints the ratio of the bytes each group wrote to the
# null_blk over that time (its io.stat) and a verdict: it fails when the
# ratio is more than 10% off 2:1.
#
# The policy is weight-iosize, which shares sectors: the writers' bios
# are of all sizes, and `weight` would share their count.
. /ioband/lib.sh
set -eu

: "${DEMO_SECONDS:=24}"
WARMUP=4	# s: the page cache fills and writeback starts
INTERVAL=4	# s between reports
REPORTS=$(((DEMO_SECONDS - WARMUP) / INTERVAL))

dev=$(make_nullb demo 2048 memory_backed=1 mbps=32)
cg_create tenant-a
cg_create tenant-b
banner() { printf '\n==== %s\n' "$*"; }

banner "iobandctl create ioband1 $dev --policy weight-iosize --weight tenant-a=200 --weight tenant-b=100"
iobandctl create ioband1 "$dev" --policy weight-iosize --weight tenant-a=200 --weight tenant-b=100
banner "dmsetup table ioband1"
dmsetup table ioband1

mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard /dev/mapper/ioband1
mkdir -p /mnt/ioband1
mount -t ext4 /dev/mapper/ioband1 /mnt/ioband1
mkdir /mnt/ioband1/a /mnt/ioband1/b
sync
echo 1 >/proc/sys/vm/drop_caches
# The counters start now: what mkfs wrote is not the tenants' share.
dmsetup message ioband1 0 reset

# written CGROUP: the bytes the cgroup has written to the null_blk, as the
# block layer counts them (its io.stat), whatever ioband says.
majmin=$(dev_majmin "$dev")
written() {
	awk -v mm="$majmin" '$1 == mm { for (i = 2; i <= NF; i++) if ($i ~ /^wbytes=/) { sub(/wbytes=/, "", $i); w = $i } }
		END { print w + 0 }' "/sys/fs/cgroup/$1/io.stat"
}

job="--rw=write --bs=64k --size=8m --numjobs=50 --time_based --runtime=$DEMO_SECONDS --group_reporting --output-format=terse"
banner "fio $job, in tenant-a and in tenant-b at once"
# shellcheck disable=SC2086 # $job is a list of options
cg_run tenant-a fio $job --name=tenant-a --directory=/mnt/ioband1/a --output=a.log &
a_pid=$!
# shellcheck disable=SC2086
cg_run tenant-b fio $job --name=tenant-b --directory=/mnt/ioband1/b --output=b.log &
b_pid=$!
sleep "$WARMUP"

a0=$(written tenant-a) b0=$(written tenant-b) t0=$(cut -d' ' -f1 /proc/uptime)
banner "iobandctl stat -i $INTERVAL -c $((REPORTS + 1)) ioband1 (rates of each $INTERVAL s, while both write)"
iobandctl stat -i "$INTERVAL" -c $((REPORTS + 1)) ioband1
a1=$(written tenant-a) b1=$(written tenant-b) t1=$(cut -d' ' -f1 /proc/uptime)
banner "the window: dmsetup message ioband1 0 stats (its first line)"
dmsetup message ioband1 0 stats | head -n 1 | tr ' ' '\n' |
	grep -E '^(policy|window_|in_flight|queued|idle_waits|urgent)' | tr '\n' ' '
echo

wait "$a_pid"
wait "$b_pid"

banner "verdict"
verdict=$(awk -v da=$((a1 - a0)) -v db=$((b1 - b0)) -v t0="$t0" -v t1="$t1" 'BEGIN {
	dt = t1 - t0
	printf "over %.0f s while both wrote: tenant-a %.2f MB/s, tenant-b %.2f MB/s to the device\n",
		dt, da / dt / 1e6, db / dt / 1e6
	if (!db) { print "FAIL: tenant-b wrote nothing"; exit }
	r = da / db
	printf "ratio %.2f:1, configured 2.00:1 (weights 200:100)\n", r
	if (r >= 1.8 && r <= 2.2) print "PASS: within 10% of 2:1"
	else print "FAIL: more than 10% off 2:1"
}')
echo "$verdict"

umount /mnt/ioband1
iobandctl remove ioband1
remove_nullb demo
case $verdict in *PASS:*) ;; *) exit 1 ;; esac
