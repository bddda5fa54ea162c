#!/bin/sh
# ioband on dm-crypt: a plain aes-xts mapping with a test key on a capped
# null_blk, ioband on top; two cgroups share it 2:1, their data comes
# back intact, and what reached the disk is not the plain text.
# The cap: 8 MiB/s. Decrypting 16 MiB/s of 4k reads takes the 6.12
# guest's emulated CPU past its limit (26046 sectors/s of the 32768 cap):
# the device must be the bottleneck.
STACK_MBPS=8
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

need_tool cryptsetup cryptsetup-bin
# aes-xts-plain64: modules, or built in (ecb and aes on 6.12); AES is
# aes_generic until 7.x, then aes.
have_module() {
	modprobe "$1" 2>/dev/null || grep -q "/$1.ko" "/lib/modules/$(uname -r)/modules.builtin"
}
for m in dm-crypt xts ecb; do
	have_module "$m" || fail "cannot load kernel module $m"
done
have_module aes_generic || have_module aes || fail "cannot load kernel module aes_generic or aes"
trap 'stack_cleanup "iobandctl remove stk-crypt" "cryptsetup close stk-plain" "remove_nullb stkc"' EXIT
dev=$(stack_nullb stkc 256)
# A fixed test key: 512 bits, aes-xts-plain64 takes two 256-bit keys.
printf '%s' 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef >key
cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
	--key-file key "$dev" stk-plain
iobandctl create stk-crypt /dev/mapper/stk-plain

stack_shares stk-crypt /dev/mapper/stk-crypt stk-crypt /dev/mapper/stk-crypt
stack_verify /dev/mapper/stk-crypt

# The mapping encrypts: a block of text written through ioband is read
# back as written, and is not on the disk below as it was written.
yes 'dm-ioband plain text' | head -c 4096 >plain
dd if=plain of=/dev/mapper/stk-crypt bs=4096 seek=100 oflag=direct 2>/dev/null
dd if=/dev/mapper/stk-crypt of=back bs=4096 skip=100 count=1 iflag=direct 2>/dev/null
cmp -s plain back || fail "the block read through stk-crypt is not the one written"
dd if="$dev" of=raw bs=4096 skip=100 count=1 iflag=direct 2>/dev/null
! cmp -s plain raw || fail "the plain text reached $dev unencrypted"

iobandctl remove stk-crypt
cryptsetup close stk-plain
remove_nullb stkc
trap - EXIT
