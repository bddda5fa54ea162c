#!/bin/sh
# Every message changes what it should, live, visibly in the table and the
# stats; bad messages are refused with a reason in the kernel log and
# change nothing; detaching a group with held bios loses none of them.
. /ioband/lib.sh
set -eu

# 8 MB/s; on a slow (debug) kernel as much slower, else the emulated CPU
# keeps fewer bios in flight than the device takes and none are ever held.
dev=$(make_nullb msg 256 memory_backed=1 mbps=$((8 / ${IOBAND_TIMESCALE:-1})))
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
cg_create msg-a
cg_create msg-b
a=$(cg_id msg-a)
b=$(cg_id msg-b)
dm_create msg "0 $size ioband $dev msgdom 0 0 cgroup weight 0 :100 $a:200" >/dev/null

table() { dmsetup table msg; }
refused() { # EXPECTED_LOG MESSAGE...: the message fails, saying EXPECTED_LOG
	_expected=$1
	shift
	_before=$(table)
	_mark=$(klog_mark)
	if dmsetup message msg 0 "$@" 2>/dev/null; then
		fail "message '$*' was accepted"
	fi
	klog_since "$_mark" | grep -q "ioband: $_expected" || {
		klog_since "$_mark" | tail -n 3
		fail "message '$*': kernel log lacks 'ioband: $_expected'"
	}
	assert_eq "$(table)" "$_before" "table after the refused message '$*'"
}

# attach, weight, detach
dmsetup message msg 0 attach "$b"
assert_eq "$(table)" "0 $size ioband $mm msgdom 0 0 cgroup weight 0 :100 $a:200 $b:100" "after attach $b"
dmsetup message msg 0 weight "$b:300"
dmsetup message msg 0 weight 50
assert_eq "$(table)" "0 $size ioband $mm msgdom 0 0 cgroup weight 0 :50 $a:200 $b:300" "after weight"
assert_eq "$(group_stat msg "$b" weight)" 300 "stats weight of b"
dmsetup message msg 0 detach "$a"
assert_eq "$(table)" "0 $size ioband $mm msgdom 0 0 cgroup weight 0 :50 $b:300" "after detach $a"
dmsetup message msg 0 attach "$a:700"
assert_eq "$(table)" "0 $size ioband $mm msgdom 0 0 cgroup weight 0 :50 $b:300 $a:700" "after attach $a:700"

# The domain's knobs.
dmsetup message msg 0 token 4096
dmsetup message msg 0 carryover 5
dmsetup message msg 0 io_limit 12
dmsetup message msg 0 io_throttle 6
dmsetup message msg 0 policy weight-iosize
assert_eq "$(table)" "0 $size ioband $mm msgdom 6 12 cgroup weight-iosize 4096 :50 $b:300 $a:700 carryover=5" "after the knob messages"
assert_eq "$(domain_stat msg carryover) $(domain_stat msg io_limit) $(domain_stat msg io_throttle) $(domain_stat msg token_base)" \
	"5 12 6 4096" "stats of the domain"
dmsetup message msg 0 policy weight

# Counters, then reset.
cg_run msg-a dd if=/dev/mapper/msg of=/dev/null bs=4k count=10 iflag=direct 2>/dev/null
assert_eq "$(group_stat msg "$a" reads)" 10 "reads of a"
dmsetup message msg 0 reset
assert_eq "$(group_stat msg "$a" reads) $(group_stat msg -1 writes)" "0 0" "counters after reset"

# type only while no group is attached.
refused "type uid: detach every group first" type uid
dmsetup message msg 0 detach "$a"
dmsetup message msg 0 detach "$b"
dmsetup message msg 0 type uid
assert_eq "$(table)" "0 $size ioband $mm msgdom 6 12 uid weight 4096 :50 carryover=5" "after type uid"
dmsetup message msg 0 type cgroup
dmsetup message msg 0 attach "$a:200"

# Bad messages.
refused "unknown message 'frob'" frob 1
refused "attach 'x1': want <id>" attach x1
refused "attach $a: already attached" attach "$a"
refused "attach '5:0': want <id>" attach 5:0
refused "detach 99999: no such group" detach 99999
refused "weight '0': want" weight 0
refused "weight '$a:40000': want" weight "$a:40000"
refused "weight 123:5: group 123 is not attached" weight 123:5
refused "token 'abc': want an unsigned number" token abc
refused "io_limit 99999999: out of range" io_limit 99999999
refused "io_limit 2: out of range" io_limit 2
refused "io_throttle 13: out of range" io_throttle 13
refused "carryover 5000: out of range" carryover 5000
refused "policy 'fast': unknown" policy fast
refused "type 'blkio': unknown" type blkio
refused "message 'weight' with 2 arguments" weight 1 2
refused "message 'attach' with 0 arguments" attach

# Detach a group while it has held bios: they move to the default group
# and all complete. io_limit 1 on a slow device keeps bios held, for about
# 2 s at 8 MB/s: on a slow (debug) kernel, where one poll of the stats
# takes seconds, for 16 times longer (scaled size, scaled-down rate).
dmsetup message msg 0 io_throttle 1
dmsetup message msg 0 io_limit 1
cg_run msg-a fio --name=held --filename=/dev/mapper/msg --direct=1 --ioengine=libaio \
	--iodepth=32 --rw=randwrite --bs=4k --size="$(scaled 8)M" --verify=crc32c --verify_fatal=1 \
	--output=fio-held.txt &
fio_pid=$!
within 10 sh -c "[ \"\$(dmsetup message msg 0 stats | awk '\$1 == \"group=$a\"' | sed 's/.* queued=\([0-9]*\).*/\1/')\" -gt 4 ]" ||
	fail "group a never had held bios"
dmsetup message msg 0 detach "$a"
wait "$fio_pid" || { cat fio-held.txt; fail "fio failed after its group was detached"; }
held=$(group_stat msg -1 queued)
assert_eq "$held $(domain_stat msg queued) $(domain_stat msg in_flight)" "0 0 0" "nothing left held or in flight"
# The held bios went down as the default group's: it waited for them.
waited=$(group_stat msg -1 wait_ns)
assert_ge "$waited" 1 "time the default group's bios waited after the detach"
echo "after detach: the default group's bios waited $waited ns in all"

dmsetup remove msg
remove_nullb msg
