#!/bin/sh
# Integrity under churn: fio verifying every block it writes (crc32c,
# verify_backlog), O_DIRECT on a raw ioband device and buffered on ext4 on
# a second one, from four cgroups, while ioband is reconfigured under it
# at random intervals: weights change every ~100 ms, groups are detached
# and attached again (their held bios move to the default group), the
# policy flips between weight and weight-iosize, io_limit changes, the
# table is reloaded (dmsetup table | dmsetup load + resume) and each
# device is suspended and resumed about every second. Pass: fio exits 0
# with err=0 and no verify error, every message and every dmsetup call
# succeeds, ext4 checks clean, nothing is left held or in flight, and
# the harness finds a clean kernel log (no hung task, no WARNING).
#
# Both targets share one bandwidth domain ("rc"), so the knobs one device
# changes apply to the other's bios too. The null_blk devices are capped
# (mbps) and io_limit is small, so that the scheduler really holds bios
# while the churn happens (the test checks delayed_* > 0).
#
# Length: CHURN_SECONDS (default 75; the test takes about 40 s more). A
# soak run sets it through a wrapper test, e.g. a file soak.sh holding
#     CHURN_SECONDS=1800; . /ioband/tests/reliability-churn.sh
# given to `tests/vm/run --timeout 2100 /path/to/soak.sh`.
# shellcheck source=../lib.sh
. /ioband/lib.sh
set -eu

CHURN_SECONDS=${CHURN_SECONDS:-75}
_assert_int "$CHURN_SECONDS" CHURN_SECONDS

raw=$(make_nullb rc-raw 256 memory_backed=1 mbps=24)
fsdev=$(make_nullb rc-fs 256 memory_backed=1 mbps=24)
for g in a b c d; do cg_create "rc-$g"; done
a=$(cg_id rc-a) b=$(cg_id rc-b) c=$(cg_id rc-c) d=$(cg_id rc-d)
raw_size=$(dev_sectors "$raw")
fs_size=$(dev_sectors "$fsdev")
dm_create rc-raw "0 $raw_size ioband $raw rc 0 4 cgroup weight 0 :100 $a:200 $b:100 $c:50 $d:300" >/dev/null
dm_create rc-fs "0 $fs_size ioband $fsdev rc 0 4 cgroup weight 0 :100 $a:100 $b:100 $c:200 $d:100" >/dev/null

rnd() { # N: a random integer in 0..N-1
	echo $(($(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % $1))
}
msleep() { # MS
	sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"
}

mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/rc-fs
mkdir -p "$IOBAND_TMP/mnt"
mount -t ext4 /dev/mapper/rc-fs "$IOBAND_TMP/mnt"
mkdir "$IOBAND_TMP/mnt/c" "$IOBAND_TMP/mnt/d"

runtime=$CHURN_SECONDS
# Raw, O_DIRECT: a writes and verifies its own region (every read is a
# verify read), b writes + reads a region of its own with verification.
cg_run rc-a fio --name=raw-a --filename=/dev/mapper/rc-raw --direct=1 \
	--ioengine=libaio --iodepth=16 --numjobs=2 --rw=randwrite --bs=4k \
	--offset=0 --size=48M --offset_increment=48M \
	--verify=crc32c --verify_fatal=1 --verify_backlog=64 \
	--time_based --runtime="$runtime" --group_reporting --output=fio-a.txt &
pa=$!
cg_run rc-b fio --name=raw-b --filename=/dev/mapper/rc-raw --direct=1 \
	--ioengine=libaio --iodepth=16 --numjobs=2 --rw=randrw --bsrange=4k-64k \
	--offset=96M --size=48M --offset_increment=48M \
	--verify=crc32c --verify_fatal=1 --verify_backlog=64 \
	--time_based --runtime="$runtime" --group_reporting --output=fio-b.txt &
pb=$!
# Buffered on ext4, through the page cache and writeback (charged to the
# writer's cgroup), fsync every 32 writes.
cg_run rc-c fio --name=fs-c --directory="$IOBAND_TMP/mnt/c" \
	--ioengine=psync --numjobs=2 --rw=randwrite --bs=4k --size=24M \
	--fsync=32 --verify=crc32c --verify_fatal=1 --verify_backlog=64 \
	--time_based --runtime="$runtime" --group_reporting --output=fio-c.txt &
pc=$!
cg_run rc-d fio --name=fs-d --directory="$IOBAND_TMP/mnt/d" \
	--ioengine=psync --numjobs=2 --rw=randrw --bs=16k --size=24M \
	--fsync=8 --verify=crc32c --verify_fatal=1 --verify_backlog=32 \
	--time_based --runtime="$runtime" --group_reporting --output=fio-d.txt &
pd=$!

end=$(($(date +%s) + runtime - 2))
sleep 2

# Weights of a and b (attached in every table) every ~100 ms, on both
# devices, and the default group's.
weight_loop() {
	n=0 bad=0
	while [ "$(date +%s)" -lt "$end" ]; do
		for dev in rc-raw rc-fs; do
			dmsetup message "$dev" 0 weight "$a:$(($(rnd 1000) + 1))" || bad=$((bad + 1))
			dmsetup message "$dev" 0 weight "$b:$(($(rnd 32767) + 1))" || bad=$((bad + 1))
			dmsetup message "$dev" 0 weight "$(($(rnd 300) + 1))" || bad=$((bad + 1))
			n=$((n + 3))
		done
		msleep $((50 + $(rnd 100)))
	done
	echo "$n $bad" >weight-loop.out
}
weight_loop &
pw=$!

# Everything else from one loop (an attach must not be undone by a
# reload that read the table before it): at random intervals detach or
# attach c/d, flip the policy, change io_limit, reload a table, and
# suspend/resume one device about every second.
attached_raw="c d" attached_fs="c d"
ops=0 suspends=0 reloads=0 attaches=0 detaches=0 policies=0 limits=0
last_suspend=$(date +%s)
run() { # CMD...: count a churn operation; any failure fails the test
	"$@" || fail "churn: '$*' failed"
	ops=$((ops + 1))
}
while [ "$(date +%s)" -lt "$end" ]; do
	case $(rnd 6) in
	0 | 1) # detach or attach c or d on one device
		dev=rc-raw
		[ "$(rnd 2)" = 0 ] || dev=rc-fs
		g=c
		[ "$(rnd 2)" = 0 ] || g=d
		id=$c
		[ "$g" = c ] || id=$d
		cur=$attached_raw
		[ "$dev" = rc-raw ] || cur=$attached_fs
		case " $cur " in
		*" $g "*)
			run dmsetup message "$dev" 0 detach "$id"
			detaches=$((detaches + 1))
			new=$(echo " $cur " | sed "s/ $g / /")
			;;
		*)
			run dmsetup message "$dev" 0 attach "$id:$(($(rnd 500) + 1))"
			attaches=$((attaches + 1))
			new="$cur $g"
			;;
		esac
		new=$(echo "$new" | awk '{ $1 = $1; print }')
		if [ "$dev" = rc-raw ]; then attached_raw=$new; else attached_fs=$new; fi
		;;
	2) # policy for the whole domain
		p=weight
		[ "$(rnd 2)" = 0 ] || p=weight-iosize
		run dmsetup message rc-raw 0 policy "$p"
		policies=$((policies + 1))
		;;
	3) # io_limit 4..12 (io_throttle is 4)
		run dmsetup message rc-fs 0 io_limit $((4 + $(rnd 9)))
		limits=$((limits + 1))
		;;
	4) # reload the live table as it is
		dev=rc-raw
		[ "$(rnd 2)" = 0 ] || dev=rc-fs
		tbl=$(dmsetup table "$dev")
		echo "$tbl" | run dmsetup load "$dev"
		run dmsetup resume "$dev"
		reloads=$((reloads + 1))
		;;
	5) # a short suspend, unscheduled
		dev=rc-raw
		[ "$(rnd 2)" = 0 ] || dev=rc-fs
		run dmsetup suspend "$dev"
		msleep "$(rnd 200)"
		run dmsetup resume "$dev"
		suspends=$((suspends + 1))
		;;
	esac
	if [ $(($(date +%s) - last_suspend)) -ge 1 ]; then
		for dev in rc-raw rc-fs; do
			run dmsetup suspend "$dev"
			msleep 20
			run dmsetup resume "$dev"
			suspends=$((suspends + 1))
		done
		last_suspend=$(date +%s)
	fi
	msleep $((20 + $(rnd 300)))
done
wait "$pw"
read -r wmsgs wbad <weight-loop.out

check_fio() { # GROUP PID: fio exited 0, with err=0 and no verify error
	_st=0
	wait "$2" || { echo "fio of rc-$1 exited non-zero"; _st=1; }
	if ! grep -q "err= 0" "fio-$1.txt" ||
		grep -qi "verify.*fail\|bad magic\|crc32c.*mismatch\|bad header" "fio-$1.txt"; then
		echo "fio of rc-$1 reported errors:"
		_st=1
	fi
	[ "$_st" = 0 ] || { cat "fio-$1.txt"; fail "fio of rc-$1 failed under churn"; }
}
check_fio a "$pa"
check_fio b "$pb"
check_fio c "$pc"
check_fio d "$pd"
assert_eq "$wbad" 0 "weight messages that failed"

# IOs: all reads of rc-a are verify reads; the others verify at least
# every 64th write's block back through the backlog.
ios() { # FILE: read and write IOs issued, "R W"
	sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p' "$1" | head -n 1
}
verified=$(ios fio-a.txt | cut -d' ' -f1)
total=0
for g in a b c d; do
	rw=$(ios "fio-$g.txt")
	echo "fio rc-$g: reads ${rw% *} writes ${rw#* }"
	total=$((total + ${rw% *} + ${rw#* }))
done
assert_ge "$verified" 1000 "verify reads of rc-a"

umount "$IOBAND_TMP/mnt"
e2fsck -fn /dev/mapper/rc-fs >fsck.txt 2>&1 || { cat fsck.txt; fail "ext4 is not clean after the churn"; }

# Bios were really held while the churn went on, and nothing is left.
delayed=0
for dev in rc-raw rc-fs; do
	n=$(dmsetup status "$dev" | awk '{ s = 0; for (i = 5; i + 6 <= NF; i += 7) s += $(i + 2) + $(i + 5); print s }')
	delayed=$((delayed + n))
done
echo "churn: $CHURN_SECONDS s; $ops operations ($suspends suspend/resume," \
	"$reloads reloads, $attaches attaches, $detaches detaches, $policies policy" \
	"switches, $limits io_limit changes) + $wmsgs weight messages;" \
	"$total fio IOs, $verified verify reads on the raw device;" \
	"$delayed bios held since the last reload of each"
assert_ge "$delayed" 1 "bios held by the scheduler"
for dev in rc-raw rc-fs; do
	st=$(dmsetup message "$dev" 0 stats)
	echo "$st" | head -n 1
	echo "$st" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(queued|in_flight)=/ && $i !~ /=0$/) bad = bad " " $1 " " $i } END { if (bad) { print "not idle:" bad; exit 1 } }' ||
		fail "$dev: bios left held or in flight after the churn"
done
dm_remove rc-raw
dm_remove rc-fs
remove_nullb rc-raw
remove_nullb rc-fs
for g in a b c d; do cg_remove "rc-$g"; done
