#!/bin/sh
# Harness selftest: crashes the guest kernel; the host must report this test
# and every later one as FAIL.
# shellcheck source=../lib.sh
. /ioband/lib.sh
echo "selftest: crashing the kernel"
sync
echo c >/proc/sysrq-trigger
