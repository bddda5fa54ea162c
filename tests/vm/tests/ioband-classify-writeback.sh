#!/bin/sh
# Buffered writes from two cgroups on ext4 over ioband: the flusher writes
# them back, yet each cgroup's write sectors in `dmsetup status` match what
# it wrote (within 10%), and they are not charged to the default group.
# The device below sees the writer too: io.stat of each cgroup on the
# null_blk disk counts what it wrote. The stats message names the routes
# (writeback_attribution: wb in every build, wb+orig-bio where the build
# had dm's layout) and where the layout came from (dm_layout, as the
# module's modinfo says), and counts the bios each route charged: the
# flusher's by wb, each associated with its cgroup for the disk below by
# ioband itself; the rest by orig-bio where there is a layout, else by
# task. tests/check runs it with the module built each way.
. /ioband/lib.sh
set -eu

dev=$(make_nullb wb 1024 memory_backed=1)
size=$(blockdev --getsz "$dev")
cg_create wb-a
cg_create wb-b
a=$(cg_id wb-a)
b=$(cg_id wb-b)
dm_create wb "0 $size ioband $dev wb 0 0 cgroup weight 0 :100 $a:200 $b:100"
# No lazy init: ext4lazyinit would zero inode tables from a kernel thread
# (the root cgroup) while the test measures.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/wb
mkdir -p /mnt/wb
mount -t ext4 /dev/mapper/wb /mnt/wb
sync

write_sectors() { # GROUP_ID: write sectors of that group in dmsetup status
	dmsetup status wb | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 6) }'
}
a0=$(write_sectors "$a"); b0=$(write_sectors "$b"); d0=$(write_sectors -1)
lower=$(cat "/sys/block/$(basename "$dev")/dev")
lower_wbytes() { # CGROUP: wbytes of that cgroup on the null_blk disk
	awk -v d="$lower" '$1 == d { for (i = 2; i <= NF; i++) if ($i ~ /^wbytes=/) { sub(/^wbytes=/, "", $i); print $i } }' \
		"/sys/fs/cgroup/$1/io.stat"
}
la0=$(lower_wbytes wb-a); lb0=$(lower_wbytes wb-b)

# 96 MiB from a, 48 MiB from b, through the page cache: no O_DIRECT, no
# fsync, so the flusher (a kernel thread in the root cgroup) writes it back.
cg_run wb-a dd if=/dev/zero of=/mnt/wb/a bs=1M count=96 2>/dev/null
cg_run wb-b dd if=/dev/zero of=/mnt/wb/b bs=1M count=48 2>/dev/null
sync

a1=$(write_sectors "$a"); b1=$(write_sectors "$b"); d1=$(write_sectors -1)
da=$((a1 - a0)); db=$((b1 - b0)); dd_=$((d1 - d0))
echo "write sectors: wb-a $da (expected 196608), wb-b $db (expected 98304), default $dd_"
echo "io.stat wb-a on the ioband device: $(grep "^$(dmsetup info -c --noheadings -o major,minor --separator : wb) " /sys/fs/cgroup/wb-a/io.stat || true)"
assert_within_pct 196608 "$da" 10 "write sectors of wb-a"
assert_within_pct 98304 "$db" 10 "write sectors of wb-b"
# Journal and metadata belong to the root cgroup: far less than the data.
assert_le "$dd_" $((98304 / 4)) "write sectors of the default group"

la=$(($(lower_wbytes wb-a) - ${la0:-0})); lb=$(($(lower_wbytes wb-b) - ${lb0:-0}))
echo "on the disk below ($lower), io.stat wbytes: wb-a $la (expected 100663296), wb-b $lb (expected 50331648)"
assert_within_pct 100663296 "$la" 10 "wbytes of wb-a on the disk below"
assert_within_pct 50331648 "$lb" 10 "wbytes of wb-b on the disk below"

method=$(domain_stat wb writeback_attribution)
layout=$(domain_stat wb dm_layout)
echo "writeback_attribution=$method dm_layout=$layout; at load: $(dmesg | grep -m1 -o 'ioband: writeback attribution: [a-z+-]*')"
echo "bios by route: orig-bio $(domain_stat wb attributed_orig_bio), wb $(domain_stat wb attributed_wb), task $(domain_stat wb attributed_task); associated by ioband $(domain_stat wb associated)"
assert_eq "$layout" "$(modinfo -F dm_layout "/usr/lib/modules/$(uname -r)/extra/dm-ioband.ko")" "dm_layout in the stats message and in modinfo"
# Each cgroup wrote at least 48 MiB through the flusher, in bios of at
# most 1 MiB.
assert_ge "$(domain_stat wb attributed_wb)" 96 "bios charged by the flusher's wb"
assert_ge "$(domain_stat wb associated)" 96 "bios whose clone ioband associated with their owner"
case $layout in
none)
	assert_eq "$method" wb "writeback_attribution without a dm layout"
	assert_eq "$(domain_stat wb attributed_orig_bio)" 0 "bios charged by orig-bio without a layout"
	;;
source | btf)
	assert_eq "$method" wb+orig-bio "writeback_attribution with a dm layout"
	assert_ge "$(domain_stat wb attributed_orig_bio)" 1 "bios charged by orig-bio"
	;;
*) fail "dm_layout=$layout: neither source, btf nor none" ;;
esac

umount /mnt/wb
dmsetup remove wb
remove_nullb wb
