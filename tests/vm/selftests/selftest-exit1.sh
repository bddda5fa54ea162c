#!/bin/sh
# Harness selftest: exits 1; must be reported FAIL.
# shellcheck source=../lib.sh
. /ioband/lib.sh
echo "selftest: about to fail"
exit 1
