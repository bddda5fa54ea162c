#!/bin/sh
# ioband on md RAID1: a mirror of two capped null_blk, ioband on top; two
# cgroups share it 2:1, their data comes back intact, and both legs hold
# the same data.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

need_tool mdadm mdadm
modprobe raid1
trap 'stack_cleanup "iobandctl remove stk-md" "mdadm --stop /dev/md/stk" "remove_nullb stkm0" "remove_nullb stkm1"' EXIT
dev0=$(stack_nullb stkm0 256)
dev1=$(stack_nullb stkm1 256)
# --assume-clean: no initial resync, whose IO would compete with the test's.
mdadm --create /dev/md/stk --run --quiet --level=1 --raid-devices=2 \
	--metadata=1.2 --assume-clean --bitmap=none "$dev0" "$dev1"
md=$(readlink -f /dev/md/stk)
[ -b "$md" ] || fail "no md device after mdadm --create"
iobandctl create stk-md "$md"

stack_shares stk-md /dev/mapper/stk-md stk-md /dev/mapper/stk-md
stack_verify /dev/mapper/stk-md

# Writes through ioband reached both legs.
mdadm --detail "$md" | grep -q 'State : clean' || fail "$(mdadm --detail "$md")"
off=$(($(mdadm --examine "$dev0" | awk '/Data Offset/ { print $4 }') * 512))
cmp -s -n 33554432 "$dev0" "$dev1" "$off" "$off" || fail "the legs of the mirror differ"

iobandctl remove stk-md
mdadm --stop /dev/md/stk
remove_nullb stkm0
remove_nullb stkm1
trap - EXIT
