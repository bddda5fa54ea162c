#!/bin/sh
# Harness selftest: never ends (a child in the background too); run with a
# short --timeout, it must be killed and reported FAIL "timed out".
# shellcheck source=../lib.sh
. /ioband/lib.sh
sleep 1000 &
echo "selftest: sleeping forever"
sleep 1000
