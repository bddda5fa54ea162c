#!/bin/sh
# Two ioband devices over two LVs of one volume group, in one bandwidth
# domain: cgroup stack-a on the first (weight 200) and stack-b on the
# second (weight 100) share the disk below 2:1, and their data comes back
# intact.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

lvm_setup
trap 'stack_cleanup "iobandctl remove stk-d1" "iobandctl remove stk-d2" "lvm vgremove -f vgstkd" "remove_nullb stkd"' EXIT
dev=$(stack_nullb stkd 512)
lvm pvcreate -q "$dev"
lvm vgcreate -q vgstkd "$dev"
lvm lvcreate -q -n lv1 -L 128m vgstkd
lvm lvcreate -q -n lv2 -L 128m vgstkd
iobandctl create --domain stkd stk-d1 /dev/vgstkd/lv1
iobandctl create --domain stkd stk-d2 /dev/vgstkd/lv2
assert_eq "$(iobandctl list --raw --noheadings | awk '$1 ~ /^stk-d/ { print $2 }' | sort -u)" \
	stkd "the domain of both devices"

stack_shares stk-d1 /dev/mapper/stk-d1 stk-d2 /dev/mapper/stk-d2
stack_verify /dev/mapper/stk-d1 /dev/mapper/stk-d2

iobandctl remove stk-d1
iobandctl remove stk-d2
lvm vgremove -q -f vgstkd
remove_nullb stkd
trap - EXIT
