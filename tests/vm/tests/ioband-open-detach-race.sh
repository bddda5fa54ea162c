#!/bin/sh
# Groups attached and detached while bios go down past the scheduler (the
# open window, ioband-design.rst section 14). That path finds a bio's group,
# mostly from this CPU's last answer for its cgroup, and counts the bio
# per CPU with preemption disabled rather than under rcu_read_lock(): a
# group detached meanwhile must stay in memory until the grace period
# after the detach, and no CPU may go on using its last answer once the
# groups changed. Two cgroups read through an ioband over a null_blk that
# completes inline (the window stays open) while a loop attaches and
# detaches both their groups as fast as messages go. Pass: the window
# stayed open and bios went past the scheduler meanwhile, every message
# succeeded, fio read without an error, and afterwards each group counts
# exactly the reads of its own cgroup (each CPU's cached answers were
# dropped at every change). On a debug kernel (tests/check --kernels
# 6.1-debug: KASAN, lockdep with PROVE_RCU), a group freed too early or a
# lookup outside any RCU section shows in the kernel log, which the
# harness checks.
# harness-timeout: 180
. /ioband/lib.sh
set -eu

dev=$(make_nullb od 256)
size=$(blockdev --getsz "$dev")
cg_create od-a
cg_create od-b
a=$(cg_id od-a)
b=$(cg_id od-b)
dm_create od "0 $size ioband $dev od 0 0 cgroup weight 0 :100 $a:800 $b:100" >/dev/null

reads() { # GROUP_ID: "reads read_sectors" of that group in dmsetup status
	dmsetup status od | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1), $(i + 3) }'
}

SECONDS_TO_RACE=$(scaled 20)
pids=
for cg in od-a od-b; do
	cg_run "$cg" fio --name=r --filename=/dev/mapper/od --direct=1 \
		--rw=randread --bs=4k --ioengine=libaio --numjobs=2 --iodepth=16 \
		--time_based --runtime="$SECONDS_TO_RACE" --size=128M \
		--output="$cg.out" &
	pids="$pids $!"
done
wait_io "$dev"
periods0=$(domain_stat od window_periods)
ios0=$(_ios "$dev")

readers_alive() { # any of the readers' fio still runs
	for _pid in $pids; do
		kill -0 "$_pid" 2>/dev/null && return 0
	done
	return 1
}

churn() { # ID WEIGHT: detach and attach group ID until the readers end
	_n=0
	while readers_alive; do
		dmsetup message od 0 detach "$1" || fail "detach $1 (cycle $_n)"
		dmsetup message od 0 attach "$1:$2" || fail "attach $1 (cycle $_n)"
		_n=$((_n + 1))
	done
	echo "$_n" >"churn-$1.count"
}
churn "$a" 800 &
churner_a=$!
churn "$b" 100 &
churner_b=$!
for pid in $pids; do
	wait "$pid" || fail "a reader's fio failed: $(cat od-a.out od-b.out)"
done
wait "$churner_a" || fail "churning group $a failed"
wait "$churner_b" || fail "churning group $b failed"
cycles_a=$(cat "churn-$a.count")
cycles_b=$(cat "churn-$b.count")
ios=$(($(_ios "$dev") - ios0))
periods1=$(domain_stat od window_periods)
inline=$(domain_stat od window_inline)
log "detach and attach cycles: $cycles_a of $a, $cycles_b of $b; $ios reads; window_inline $inline, window_periods $periods0 then $periods1"

grep -q "err= 0" od-a.out || fail "fio in od-a: $(cat od-a.out)"
grep -q "err= 0" od-b.out || fail "fio in od-b: $(cat od-b.out)"
# The window measures no period while it is open: every bio of the race
# went down past the scheduler.
assert_eq "$inline" 1 "window_inline after the race"
assert_eq "$periods1" "$periods0" "window_periods during the race"
assert_ge "$ios" 1000 "reads completed during the race"
assert_ge "$cycles_a" 10 "detach and attach cycles of od-a's group"
assert_ge "$cycles_b" 10 "detach and attach cycles of od-b's group"

# Each CPU's last answers were dropped at every change: fresh groups now
# count their own cgroups' reads, and nothing else.
dmsetup message od 0 detach "$a"
dmsetup message od 0 detach "$b"
dmsetup message od 0 attach "$a:800"
dmsetup message od 0 attach "$b:100"
for cg in od-a od-b; do
	cg_run "$cg" fio --name=r --filename=/dev/mapper/od --direct=1 \
		--rw=randread --bs=4k --number_ios=1000 --size=128M --output=/dev/null
done
assert_eq "$(reads "$a")" "1000 8000" "reads of od-a's group, attached again after the race"
assert_eq "$(reads "$b")" "1000 8000" "reads of od-b's group, attached again after the race"

dmsetup remove od
remove_nullb od
