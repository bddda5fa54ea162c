#!/bin/sh
# Harness selftest: a writer stuck in the kernel (IO to a suspended dm
# device, uninterruptible) outlives the timeout and cannot be killed. The
# guest must report it FAIL, log the hung task, and end the run.
# shellcheck source=../lib.sh
. /ioband/lib.sh
dev=$(make_nullb stuck 16)
dm_create stuck "0 $(dev_sectors "$dev") linear $(dev_majmin "$dev") 0" >/dev/null
dmsetup suspend stuck
echo "selftest: writing to a suspended device"
exec dd if=/dev/zero of=/dev/mapper/stuck bs=4k count=1 oflag=direct
