#!/bin/sh
# A refused message says why in the kernel log, but a loop that sends bad
# messages over and over cannot flood it: the reasons are rate limited (in
# bursts of up to 100 per 5 s). Three loops send refused messages for 12 s;
# every one is refused, the log has the first reasons and at most 100 for
# each 5 s begun, then, at the next refusal past the interval, says how
# many it left out. Before the limit, each had its line (6.12: 600
# messages in 16 s, 600 lines). A guest too slow to send more than the
# limit lets through (20 a second) cannot tell, and says so.
. /ioband/lib.sh
set -eu

dev=$(make_nullb mf 64)
dm_create mf "0 $(dev_sectors "$dev") ioband $dev mf 0 0 cgroup weight 0 :100" >/dev/null
flood() { # UNTIL_CS TAG: send refused messages until uptime_cs UNTIL_CS
	_sent=0
	_ok=0
	while [ "$(uptime_cs)" -lt "$1" ]; do
		# 20 between looks at the clock, which cost a process each.
		for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			! dmsetup message mf 0 weight 4242:7 2>/dev/null || _ok=$((_ok + 1))
		done
		_sent=$((_sent + 20))
	done
	echo "$_sent $_ok" >"flood-$2"
}
mark=$(klog_mark)
flood_mark=$mark
t0=$(uptime_cs)
flood $((t0 + 1200)) a &
pa=$!
flood $((t0 + 1200)) b &
pb=$!
flood $((t0 + 1200)) c &
pc=$!
wait "$pa" "$pb" "$pc"
secs=$((($(uptime_cs) - t0 + 99) / 100))
sent=$(cat flood-a flood-b flood-c | awk '{ s += $1 } END { print s }')
accepted=$(cat flood-a flood-b flood-c | awk '{ s += $2 } END { print s }')
assert_eq "$accepted" 0 "refused messages accepted"
logged=$(klog_since "$mark" | grep -c "ioband: weight 4242:7: group 4242 is not attached" || :)
bound=$((100 * (secs / 5 + 1)))
echo "$sent refused messages in $secs s: $logged reasons logged (at most $bound by the limit)"
assert_ge "$logged" 1 "reasons logged"
if [ "$sent" -le "$bound" ]; then
	echo "too few messages to outrun the limit: not checked"
else
	assert_le "$logged" "$bound" "reasons logged"
	sleep 5
	mark=$(klog_mark)
	! dmsetup message mf 0 weight 4242:7 2>/dev/null || fail "the last refused message was accepted"
	klog_since "$mark" | grep -q "ioband: weight 4242:7: group 4242 is not attached" ||
		fail "a refusal after the interval has no reason in the log"
	# The count of what was left out comes at the first refusal of the
	# interval after one that left some out: during the flood, or at the
	# refusal above when the flood's last interval outran the limit too
	# (a slow guest's last interval may not have).
	klog_since "$flood_mark" | grep -q "callbacks suppressed" ||
		fail "the log does not say that it left reasons out"
fi
dmsetup remove mf
remove_nullb mf
