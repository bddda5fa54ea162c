#!/bin/sh
# The README's iobandctl session runs as written, every command exiting 0,
# with /dev/sdb standing for a null_blk device.
. /ioband/lib.sh
set -eu

dev=$(make_nullb readme 256)
sed -n '/<!-- readme-examples: begin -->/,/<!-- readme-examples: end -->/p' /ioband/README.md |
	sed '/^<!--/d; /^```/d' | sed "s|/dev/sdb|$dev|g" >session.sh
[ "$(grep -c '^iobandctl' session.sh)" -ge 10 ] ||
	fail "the README's example session was not found: $(cat session.sh)"
while read -r line; do
	echo "\$ $line"
	sh -c "$line" || fail "README example failed: $line"
done <session.sh
remove_nullb readme
