#!/bin/sh
# 10,000 groups in one table, 300 more attached by message (the group
# index grows with them) and a cgroup's IO found among them: the status
# lists every group in order, the stats message too, the table round-trips,
# reset, suspend and resume walk them all, and IO from an attached cgroup
# is charged to it. Where ftrace's function_graph tracer is there, the
# longest walk chunk and map/end_io calls are printed: each chunk is one
# section with interrupts off. Where the kernel has the irqsoff tracer and
# lock_stat (the debug kernel, scripts/build-debug-kernel), the walks run
# again to the destructor and the longest interrupts-off section is
# printed: the system's (irqsoff) and the longest hold of the domain lock,
# which ioband takes with interrupts off (lock_stat). The per-CPU memory
# that the table's groups take (Percpu in /proc/meminfo) is printed with
# the number of possible CPUs, which a guest booted with possible_cpus=256
# raises (tests/vm/run --append).
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
percpu_kib() { awk '$1 == "Percpu:" { print $2 }' /proc/meminfo; }
percpu_before=$(percpu_kib)
dmsetup create --noudevsync sc <table.txt
echo "per-CPU memory of $N groups: $(($(percpu_kib) - percpu_before)) KiB" \
	"with $(cat /sys/devices/system/cpu/possible) possible CPUs"
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

# Every walk of all the groups: status, stats, reset, suspend (a drain),
# a reload of the printed table, a policy switch.
walk_all() {
	dmsetup status sc >/dev/null
	dmsetup message sc 0 stats >/dev/null
	dmsetup message sc 0 reset
	dmsetup suspend sc
	dmsetup resume sc
	dmsetup table sc >printed.txt
	dmsetup load sc <printed.txt
	dmsetup resume sc
	dmsetup message sc 0 policy range-bw
	dmsetup message sc 0 policy weight
}

walk_all
assert_eq "$(dmsetup table sc)" "$(cat printed.txt)" "the table of $groups groups after a reload"
dmsetup message sc 0 detach "$a"

if [ $trace = 1 ]; then
	echo 0 >$T/tracing_on
	# function_graph: "CPU) duration us | func();" or "} /* func */"
	awk '/us/ {
		d = $0; sub(/^[^)]*\) */, "", d); sub(/\+|!|#|\*|@|\$/, "", d)
		split(d, w, " "); us = w[1] + 0
		f = $0; sub(/.*\| */, "", f); sub(/^} \/\* /, "", f); sub(/ \*\/.*/, "", f); sub(/\(\);.*/, "", f)
		if (us > max[f]) max[f] = us; n[f]++
		if (f ~ /^ioband_walk_chunk/) print us >"chunks.txt"
	} END { for (f in max) printf "longest %s: %d us (%d calls)\n", f, max[f], n[f] }' $T/trace
	# The longest alone is one section, which a host hiccup under TCG
	# can stretch: the chunks' spread and total too.
	sort -n chunks.txt | awk '{ v[NR] = $1; sum += $1 }
		END { printf "ioband_walk_chunk: median %d us, 99th percentile %d us, total %d us\n",
			v[int((NR + 1) / 2)], v[int(NR * 0.99)], sum }'
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
fi

# The walks again and the destructor, timed with interrupts off.
irqsoff=0
if grep -qw irqsoff $T/available_tracers 2>/dev/null; then
	# Only the section's length: no function trace inside it.
	echo 0 >$T/options/function-trace
	echo 0 >$T/tracing_max_latency
	echo irqsoff >$T/current_tracer
	echo 1 >$T/tracing_on
	irqsoff=1
fi
lock_stat=0
if [ -w /proc/lock_stat ] && [ -w /proc/sys/kernel/lock_stat ]; then
	echo 0 >/proc/lock_stat
	echo 1 >/proc/sys/kernel/lock_stat
	lock_stat=1
fi
if [ $irqsoff = 1 ] || [ $lock_stat = 1 ]; then
	walk_all
fi
dmsetup remove sc
if [ $irqsoff = 1 ]; then
	echo 0 >$T/tracing_on
	echo "longest interrupts-off section in the system: $(cat $T/tracing_max_latency) us," \
		"from $(sed -n 's/^# *=> started at: *//p' $T/trace | head -n 1)" \
		"to $(sed -n 's/^# *=> ended at: *//p' $T/trace | head -n 1)"
	echo nop >$T/current_tracer
	echo 1 >$T/options/function-trace
fi
if [ $lock_stat = 1 ]; then
	echo 0 >/proc/sys/kernel/lock_stat
	# "class name  con-bounces ... holdtime-max ...": two words before the
	# numbers in the header, one in a class's line; times in us.
	held=$(awk '/class name/ { for (i = 1; i <= NF; i++) if ($i == "holdtime-max") col = i - 1 }
		col && $1 == "&domain->lock:" { print $col " us in " $(col - 2) " acquisitions"; exit }' /proc/lock_stat)
	[ -n "$held" ] || { grep -n 'class name\|domain' /proc/lock_stat | head; fail "no &domain->lock in /proc/lock_stat"; }
	echo "longest hold of the domain lock (interrupts off): $held"
fi

remove_nullb sc
