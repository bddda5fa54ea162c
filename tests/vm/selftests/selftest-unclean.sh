#!/bin/sh
# Harness selftest: exits 0 but leaves a dm device held open by a process
# outside its session, which the harness can neither kill nor remove the
# device under; must be reported FAIL (harness cleanup failed).
# shellcheck source=../lib.sh
. /ioband/lib.sh
dev=$(make_nullb st-held 16)
dm_create st-held "0 $(dev_sectors "$dev") linear $(dev_majmin "$dev") 0" >/dev/null
setsid sh -c 'exec sleep 30 </dev/mapper/st-held' &
wait_for 10 sh -c "[ \$(dmsetup info -c --noheadings -o open st-held) = 1 ]"
