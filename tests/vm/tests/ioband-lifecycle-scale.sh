#!/bin/sh
# 10,000 groups in one table, 300 more attached by message (the group
# index grows with them) and a cgroup's IO found among them: the status
# lists every group in order, the stats message too, the table round-trips,
# reset, suspend and resume walk them all, and IO from an attached cgroup
# is charged to it. Where ftrace's function_graph tracer is there, the
# longest walk chunk and map/end_io calls are printed: each chunk is one
# section with interrupts off.
# harness-timeout: 600
. /ioband/lib.sh
set -eu

dev=$(make_nullb sc 256)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
cg_create sc-a
a=$(cg_id sc-a)
N=10000

awk -v size="$size" -v dev="$mm" -v n="$N" 'BEGIN {
	printf "0 %d ioband %s sc 0 0 cgroup weight 0 :100", size, dev
	for (i = 0; i < n; i++)
		printf " %d:%d", 100000 + i, 1 + i % 500
	print ""
}' >table.txt
dmsetup create --noudevsync sc <table.txt
dmsetup mknodes sc
assert_eq "$(dmsetup table sc)" "$(cat table.txt)" "the table of $N groups"

# Tracing, if the kernel has it: one chunk of a walk, map and end_io.
T=/sys/kernel/tracing
[ -d $T/events ] || T=/sys/kernel/debug/tracing
trace=0
if grep -qw function_graph $T/available_tracers 2>/dev/null &&
	echo ioband_walk_chunk ioband_map ioband_end_io ioband_message >$T/set_ftrace_filter 2>/dev/null; then
	echo 16384 >$T/buffer_size_kb
	echo function_graph >$T/current_tracer
	echo 1 >$T/options/funcgraph-tail
	echo 1 >$T/tracing_on
	trace=1
fi

i=0
while [ $i -lt 300 ]; do
	dmsetup message sc 0 attach "$((200000 + i)):$((1 + i % 100))"
	i=$((i + 1))
done
dmsetup message sc 0 attach "$a:700"
groups=$((N + 301))

status=$(dmsetup status sc)
assert_eq "$(echo "$status" | awk '{ print (NF - 4) / 7 }')" $((groups + 1)) "groups in the status"
assert_eq "$(echo "$status" | awk '{ print $5, $12, $(NF - 6) }')" "-1 100000 $a" "first, second and last group of the status"
assert_eq "$(dmsetup message sc 0 stats | grep -c '^group=')" $((groups + 1)) "groups in the stats message"

cg_run sc-a fio --name=sc --filename=/dev/mapper/sc --direct=1 --ioengine=libaio \
	--iodepth=16 --rw=randrw --bs=4k --size=32M --output=fio.txt ||
	{ cat fio.txt; fail "fio from sc-a failed"; }
sectors=$(dmsetup status sc | awk -v id="$a" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 3) + $(i + 6) }')
assert_eq "$sectors" 65536 "sectors of sc-a, attached after $((groups - 1)) others"

dmsetup message sc 0 reset
dmsetup suspend sc
dmsetup resume sc
dmsetup table sc >printed.txt
dmsetup load sc <printed.txt
dmsetup resume sc
assert_eq "$(dmsetup table sc)" "$(cat printed.txt)" "the table of $groups groups after a reload"
dmsetup message sc 0 detach "$a"
dmsetup message sc 0 policy range-bw
dmsetup message sc 0 policy weight

if [ $trace = 1 ]; then
	echo 0 >$T/tracing_on
	# function_graph: "CPU) duration us | func();" or "} /* func */"
	awk '/us/ {
		d = $0; sub(/^[^)]*\) */, "", d); sub(/\+|!|#|\*|@|\$/, "", d)
		split(d, w, " "); us = w[1] + 0
		f = $0; sub(/.*\| */, "", f); sub(/^} \/\* /, "", f); sub(/ \*\/.*/, "", f); sub(/\(\);.*/, "", f)
		if (us > max[f]) max[f] = us; n[f]++
	} END { for (f in max) printf "longest %s: %d us (%d calls)\n", f, max[f], n[f] }' $T/trace
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
fi

dmsetup remove sc
remove_nullb sc
