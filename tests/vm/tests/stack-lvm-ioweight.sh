#!/bin/sh
# Two scopes at IOWeight=400 and IOWeight=100 share an ioband device on an
# LVM logical volume 4:1 (+-5%), their weights set only as systemd sets
# them: "default <w>" in io.weight of system.slice/<name>.scope, which
# `systemd-run --scope -p IOWeight=` makes (the guest has no systemd).
# iobandctl follow attaches them; nothing else names a group.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"
lvm_setup
follower=
trap 'kill $follower 2>/dev/null; stack_cleanup "iobandctl remove stk-iow" "lvm vgremove -f vgiow" "remove_nullb stkw"' EXIT
stack_lv stkw vgiow
iobandctl create stk-iow /dev/vgiow/lv1

# What systemd makes for two transient scopes of IOWeight=400 and 100.
cg_create system.slice/run-a.scope
cg_create system.slice/run-b.scope
echo "default 400" >"$CGROOT/system.slice/run-a.scope/io.weight"
echo "default 100" >"$CGROOT/system.slice/run-b.scope/io.weight"
a=$(cg_id system.slice/run-a.scope)
b=$(cg_id system.slice/run-b.scope)
iobandctl follow --weights-from cgroup:system.slice stk-iow 2>follow.log &
follower=$!
attached() { dmsetup table stk-iow | grep -q " $a:400" && dmsetup table stk-iow | grep -q " $b:100"; }
within 5 attached || { cat follow.log; fail "scopes not attached: $(dmsetup table stk-iow)"; }

window=10
runtime=$(($(scaled 5) + window + 5))
# shellcheck disable=SC2086 # STACK_LOAD is a list of options
cg_run system.slice/run-a.scope fio --name=a --filename=/dev/mapper/stk-iow $STACK_LOAD \
	--time_based --runtime="$runtime" --output=/dev/null &
pa=$!
# shellcheck disable=SC2086
cg_run system.slice/run-b.scope fio --name=b --filename=/dev/mapper/stk-iow $STACK_LOAD \
	--time_based --runtime="$runtime" --output=/dev/null &
pb=$!
wait_io /dev/mapper/stk-iow system.slice/run-a.scope
wait_io /dev/mapper/stk-iow system.slice/run-b.scope
sleep "$(scaled 3)"
a0=$(group_sectors stk-iow "$a")
b0=$(group_sectors stk-iow "$b")
sleep "$window"
da=$(($(group_sectors stk-iow "$a") - a0))
db=$(($(group_sectors stk-iow "$b") - b0))
stop_fio "$pa" "$pb"
assert_ge "$db" 1 "sectors of run-b.scope in the window"
ratio=$((da * 100 / db))
log "scopes over $window s: run-a.scope $da sectors, run-b.scope $db sectors, ratio $ratio/100 (IOWeight 400:100)"
perf_check assert_within_pct 400 "$ratio" 5 "run-a:run-b (x100)"

kill "$follower"
wait "$follower" 2>/dev/null || :
follower=
iobandctl remove stk-iow
lvm vgremove -q -f vgiow
remove_nullb stkw
cg_remove system.slice/run-a.scope
cg_remove system.slice/run-b.scope
cg_remove system.slice
trap - EXIT
