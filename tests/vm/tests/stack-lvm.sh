#!/bin/sh
# ioband on an LVM logical volume: a volume group on a capped null_blk,
# an ioband device on one of its LVs; two cgroups share it 2:1 and their
# data comes back intact.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

lvm_setup
trap 'stack_cleanup "iobandctl remove stk-lvm" "lvm vgremove -f stk" "remove_nullb stkl"' EXIT
stack_lv stkl stk
iobandctl create stk-lvm /dev/stk/lv1
assert_eq "$(dmsetup table stk-lvm | awk '{ print $4 }')" "$(dev_majmin /dev/stk/lv1)" \
	"the device below stk-lvm"

stack_shares stk-lvm /dev/mapper/stk-lvm stk-lvm /dev/mapper/stk-lvm
stack_verify /dev/mapper/stk-lvm

iobandctl remove stk-lvm
lvm vgremove -q -f stk
remove_nullb stkl
trap - EXIT
