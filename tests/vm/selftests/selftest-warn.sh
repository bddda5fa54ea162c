#!/bin/sh
# Harness selftest: exits 0 but logs a kernel WARNING; must be reported FAIL,
# also when 200 KiB of kernel log follow it.
# shellcheck source=../lib.sh
. /ioband/lib.sh
echo "WARNING: harness selftest" >/dev/kmsg
i=0
while [ $i -lt 2000 ]; do
	echo "harness selftest: kernel log filler line $i, 100 bytes long ......................................" >/dev/kmsg
	i=$((i + 1))
done
