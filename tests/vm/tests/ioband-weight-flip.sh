#!/bin/sh
# How fast a change of weight takes effect (issue 42, item 5). Two cgroups
# read 4 KiB direct on a capped null_blk at weights 1:4; the weights flip
# to 4:1 (a's weight from 100 to 1600), once by a message and once by
# writing io.weight under iobandctl follow. The time from the change until group a's share of the last
# second of sectors crosses the midpoint (50%) is printed, and held to
# 1 s for a message and 2 s for an io.weight write. A change that took
# effect at once crosses after 0.5 s: the window is half old, half new.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"

nb=$(make_nullb flip 512 mbps="$STACK_MBPS")
iobandctl create flip "$nb"
cg_create flip/a
cg_create flip/b
a=$(cg_id flip/a)
b=$(cg_id flip/b)
dmsetup message flip 0 attach "$a:100"
dmsetup message flip 0 attach "$b:400"

# now_ms: the module's clock, in ms (elapsed_ns of the stats message).
now_ms() { echo $(($(domain_stat flip elapsed_ns) / 1000000)); }

# share_of_a_before T: group a's share (%) of the second of sectors that
# ends at the last sample at or before T (ms).
share_of_a_before() {
	awk -v t="$1" '$1 <= t { n++; ts[n] = $1; sa[n] = $2; sb[n] = $3 }
		END {
			for (j = n; j > 1 && ts[j] > ts[n] - 1000; j--) ;
			d = sa[n] - sa[j] + sb[n] - sb[j]
			print d ? int((sa[n] - sa[j]) * 100 / d) : -1 }' samples.txt
}

# weight_seen T W: the time (ms) of the last sample at or after T before
# the first that shows group a at weight W: the module took the change
# after it (a sample every 0.1 s: at most that much before); -1 if none.
weight_seen() {
	awk -v t0="$1" -v w="$2" '$1 >= t0 && $4 == w { print prev; found = 1; exit }
		{ prev = $1 } END { if (!found) print -1 }' samples.txt
}

load="--rw=randread --bs=4k --direct=1 --ioengine=libaio --numjobs=4 --iodepth=32"
# shellcheck disable=SC2086 # a list of options
cg_run flip/a fio --name=a --filename=/dev/mapper/flip $load --time_based \
	--runtime=60 --output=/dev/null &
pa=$!
# shellcheck disable=SC2086
cg_run flip/b fio --name=b --filename=/dev/mapper/flip $load --time_based \
	--runtime=60 --output=/dev/null &
pb=$!
# The samples (share_samples) to samples.txt until its awk is killed.
iobandctl stat --json --interval 0.1 flip | share_samples "$a" "$b" >samples.txt &
sampler=$!
wait_for 5 test -s samples.txt
follower=
trap 'kill $sampler $follower 2>/dev/null; stop_fio $pa $pb' EXIT
wait_io /dev/mapper/flip flip/a
wait_io /dev/mapper/flip flip/b

# flip HOW WHAT LIMIT_MS [FROM]: weights 1:4 held 3 s, then to 4:1 by HOW
# (a command string); the crossing held to LIMIT_MS from the change: from
# the write for io.weight (a shell builtin, and follow's delay is part of
# what is measured), from the module's taking it for a message (FROM
# "module": the exec of dmsetup in the loaded emulated guest, 0.1 to
# 0.5 s, is the guest's, not ioband's; printed besides).
flip() {
	sleep 3
	_fl_t0=$(now_ms)
	_fl_before=$(share_of_a_before "$_fl_t0")
	eval "$1"
	_fl_t1=$(now_ms)
	sleep 3
	_fl_from=$_fl_t0
	if [ "${4:-}" = module ]; then
		_fl_from=$(weight_seen "$_fl_t0" 1600)
		[ "$_fl_from" -ge 0 ] || fail "no sample shows a at weight 1600 after $2"
	fi
	_fl_x=$(share_crossing samples.txt "$_fl_from" a 50)
	log "flip 1:4 -> 4:1 by $2: a's 1 s share before $_fl_before%, midpoint crossed after $_fl_x ms from the change ($((_fl_x + _fl_from - _fl_t0)) ms from the command's start; it returned after $((_fl_t1 - _fl_t0)) ms)"
	perf_check assert_le "$_fl_before" 35 "a's share (%) at weights 1:4, before the flip by $2"
	[ "$_fl_x" -ge 0 ] || perf_check fail "a's share never reached 50% after the flip by $2"
	perf_check assert_le "$_fl_x" "$3" "ms until the midpoint, flip by $2"
}

# One change each: a from 100 to 1600 is 1600:400, 4:1.
flip "dmsetup message flip 0 weight $a:1600" "a message" 1000 module

# Back to 1:4 through the cgroup files, as systemd writes IOWeight=; follow
# brings the table to them.
echo "default 100" >"$CGROOT/flip/a/io.weight"
echo "default 400" >"$CGROOT/flip/b/io.weight"
iobandctl follow --weights-from cgroup:flip flip 2>follow.log &
follower=$!
weights_1_4() { dmsetup table flip | grep -q " $a:100 .*$b:400\| $b:400 .*$a:100"; }
wait_for 10 weights_1_4
flip "echo 'default 1600' >$CGROOT/flip/a/io.weight" "an io.weight write" 2000

kill "$sampler" "$follower"
wait "$follower" 2>/dev/null || :
stop_fio "$pa" "$pb"
trap - EXIT
iobandctl remove flip
cg_remove flip/a
cg_remove flip/b
cg_remove flip
remove_nullb flip
