#!/bin/sh
# Harness selftest: passes; must be reported PASS.
# shellcheck source=../lib.sh
. /ioband/lib.sh
assert_eq "$(basename "$PWD")" "ioband.$(basename "$PWD" | cut -d. -f2).selftest-pass" "cwd"
assert_ge 3 2
assert_le 2 3


# The assertions fail when they should (each in a subshell: fail exits).
(assert_eq a b) 2>/dev/null && fail "assert_eq a b passed"
(assert_ge 1 2) 2>/dev/null && fail "assert_ge 1 2 passed"
(assert_le 2 1) 2>/dev/null && fail "assert_le 2 1 passed"
(assert_ge x 1) 2>/dev/null && fail "assert_ge x 1 passed"
assert_within_pct 100 109 10
assert_within_pct 100 91 10
(assert_within_pct 100 111 10) 2>/dev/null && fail "assert_within_pct 100 111 10 passed"
# wait_for keeps time by the clock: 2 s of polls that take 1 s each end
# after about 3 s, not after 20 rounds (22 s).
t0=$(uptime_cs)
(wait_for 2 sh -c 'sleep 1; false') 2>/dev/null && fail "wait_for 2 on a failing command passed"
assert_le $(($(uptime_cs) - t0)) $((100 * $(scaled 2) + 300)) "hundredths of a second wait_for 2 took"
(cg_run no-such-cgroup true) 2>/dev/null && fail "cg_run into a missing cgroup passed"
cg_create st/a
cg_run st/a true
(cg_run st true) 2>/dev/null && fail "cg_run into an inner cgroup passed"
[ -b "$(make_nullb st 16 blocksize=4096)" ] || fail "make_nullb"
assert_eq "$(cat /sys/block/st/queue/logical_block_size 2>/dev/null ||
	cat "/sys/block/nullb$(cat /sys/kernel/config/nullb/st/index)/queue/logical_block_size")" 4096 "blocksize"
# null_blk's own bandwidth timer warning (lib-kmsg.sh) does not fail a test.
echo "WARNING: CPU: 0 PID: 1 at kernel/time/hrtimer.c:1061 hrtimer_forward+0x77/0xb0" >/dev/kmsg
echo " nullb_bwtimer_fn+0x51/0x80 [null_blk]" >/dev/kmsg
# Left behind on purpose: the harness cleans up null_blk devices and
# cgroups, and a suspended dm device with a write held in it, whose writer
# it kills but must wait for: it ends when the harness resumes the device.
slow=$(make_nullb st-slow 16)
dm_create st-held "0 $(dev_sectors "$slow") linear $(dev_majmin "$slow") 0" >/dev/null
dmsetup suspend st-held
dd if=/dev/zero of=/dev/mapper/st-held bs=4k count=1 oflag=direct 2>/dev/null &
wait_for 10 grep -q '^State:.*D' /proc/$!/status
echo "selftest: lib ok"
