#!/bin/sh
# iobandctl top: batch frames sorted by throughput, and the live view,
# driven through a pipe, redraws with ANSI and quits on q.
# shellcheck source=../lib.sh
. /ioband/lib.sh

dev=$(make_nullb top 64)
cg_create top-a
cg_create top-b
iobandctl create top "$dev" --group top-a=100 --group top-b=100

# top-b moves 64 KiB IOs, top-a 4 KiB ones: top-b comes first.
cg_run top-a fio --name=a --filename=/dev/mapper/top --direct=1 --rw=randread \
	--bs=4k --size=32M --time_based --runtime="$(scaled 6)" --thread --output=/dev/null &
pa=$!
cg_run top-b fio --name=b --filename=/dev/mapper/top --direct=1 --rw=randread \
	--bs=64k --size=32M --time_based --runtime="$(scaled 6)" --thread --output=/dev/null &
pb=$!
# Both under way (fio may take seconds to start on a slow kernel).
wait_io /dev/mapper/top top-a
wait_io /dev/mapper/top top-b
sleep 1

iobandctl top -B -c 2 -i 1 >batch.txt
cat batch.txt
assert_eq "$(grep -c '^iobandctl top - ' batch.txt)" 2 "two frames"
grep -q "1 device," batch.txt || fail "frame header"
# The second frame: its first group row is the busiest, top-b.
assert_eq "$(awk '/^iobandctl top/ {n++; getline; getline; if (n == 2) print $2}' batch.txt)" \
	"top-b" "sorted by throughput"
grep -q "NAME *GROUP *WEIGHT *SHARE *IOPS *MB/s *QUEUED *WAIT" batch.txt || fail "columns"
if grep -q "$(printf '\033')" batch.txt; then
	fail "batch output has escape sequences"
fi

# The live view: keys from a pipe; q quits after a frame or two.
(sleep 2.5; printf q) | iobandctl top -i 1 top >live.txt
grep -q "$(printf '\033\\[H')" live.txt || fail "no cursor-home redraw"
grep -q "(q: quit)" live.txt || fail "no live header"
grep -q "top-b" live.txt || fail "no group in the live view"
frames=$(grep -o "iobandctl top - " live.txt | wc -l)
assert_ge "$frames" 2 "live frames before q"
assert_le "$frames" 4 "live frames before q"
# -c ends the live view too, and the terminal modes are restored at exit.
timeout 10 iobandctl top -i 0.2 -c 3 </dev/null >/dev/null || fail "top -c 3 did not end"
# The old letters (-b batch, -n iterations, -d delay), for one release:
# the same frames, and a warning naming each new spelling.
iobandctl top -b -n 1 -d 1 >old.txt 2>old.err || fail "top -b -n 1 -d 1 failed"
assert_eq "$(grep -c '^iobandctl top - ' old.txt)" 1 "one frame with the old letters"
for w in "top -b is deprecated: use -B" "top -n is deprecated: use -c" "top -d is deprecated: use -i"; do
	grep -q -- "$w" old.err || fail "no warning '$w': $(cat old.err)"
done

wait "$pa" "$pb"
iobandctl remove top
remove_nullb top
