#!/bin/sh
# Harness selftest: asks for a longer timeout than run 2's --timeout 6 and
# takes 9 s; must be reported PASS.
# harness-timeout: 15
# shellcheck source=../lib.sh
. /ioband/lib.sh
sleep 9
echo "selftest: slept 9 s"
