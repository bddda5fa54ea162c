#!/bin/sh
# LVM on top of an ioband device: the ioband device is the physical
# volume, an LV of it takes the IO; ioband classifies the bios that the LV
# remaps to it by the cgroup that issued them: two cgroups share it 2:1
# and their data comes back intact. LVM sees the PV twice, through ioband
# and on the device below (ioband passes its first sectors through, as
# multipath does): unless the device below is hidden from it, it refuses
# the VG, and says why; with it hidden, the VG is found again after a
# deactivation.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

lvm_setup
trap 'stack_cleanup "lvm vgremove -f vgstka" "iobandctl remove stk-under" "remove_nullb stka"' EXIT
dev=$(stack_nullb stka 512)
iobandctl create stk-under "$dev"
lvm pvcreate -q /dev/mapper/stk-under
if lvm vgcreate -q vgstka /dev/mapper/stk-under 2>vgcreate.err; then
	fail "vgcreate took a PV that LVM also sees on $dev"
fi
grep -q "Cannot use device /dev/mapper/stk-under with duplicates" vgcreate.err ||
	fail "vgcreate failed without saying why: $(cat vgcreate.err)"

lvm_setup "$dev"
lvm vgcreate -q vgstka /dev/mapper/stk-under
lvm lvcreate -q -n lv -L 256m vgstka
[ -b /dev/vgstka/lv ] || fail "no /dev/vgstka/lv after lvcreate"
assert_eq "$(lvm pvs --noheadings -o pv_name 2>/dev/null | tr -d ' ')" /dev/mapper/stk-under \
	"the PV LVM uses"

stack_shares stk-under /dev/vgstka/lv stk-under /dev/vgstka/lv
stack_verify /dev/vgstka/lv

lvm vgchange -q -an vgstka
[ ! -e /dev/vgstka/lv ] || fail "/dev/vgstka/lv is still there after vgchange -an"
lvm vgchange -q -ay vgstka
[ -b /dev/vgstka/lv ] || fail "LVM did not find the VG on the ioband device again"
lvm vgremove -q -f vgstka
iobandctl remove stk-under
remove_nullb stka
trap - EXIT
