#!/bin/sh
# Range policies. range-bw: a group capped at 20% of a 16 MiB/s device
# holds its cap alone and beside a greedy group, which gets the rest.
# weight-range: a group reserved 30% gets it against three greedy groups
# of higher weight. The range-bw message and the table round-trip.
. /ioband/lib.sh
set -eu

dev=$(make_nullb rg 1024 mbps=16)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
for g in a b c d; do cg_create "rg-$g"; done
a=$(cg_id rg-a); b=$(cg_id rg-b); c=$(cg_id rg-c); d=$(cg_id rg-d)

kbps() { # CGROUP SECTORS_BEFORE SECONDS: KB/s since SECTORS_BEFORE
	echo $((($(sectors "$1") - $2) / 2 / $3))
}
# Service, not arrivals: what the cgroup's io.stat counts on the device
# below, i.e. when ioband sent it down.
sectors() { # CGROUP: read sectors of the cgroup on the null_blk device
	awk -v dev="$mm" '$1 == dev { for (i = 2; i <= NF; i++) if ($i ~ /^rbytes=/) { sub("rbytes=", "", $i); print int($i / 512) } }' \
		"/sys/fs/cgroup/$1/io.stat" | grep . || echo 0
}
load() { # CGROUP SECONDS: deep 16k random reads
	cg_run "$1" fio --name="$1" --filename=/dev/mapper/rg --direct=1 \
		--ioengine=libaio --iodepth=32 --numjobs=4 --rw=randread --bs=16k \
		--time_based --runtime="$2" --output=/dev/null
}
measure() { # SECONDS CGROUP...: prints "<cgroup>=<KB/s>" for each, after 2 s of warm-up
	_secs=$1
	shift
	sleep 2
	_before=
	for _g in "$@"; do _before="$_before $(sectors "$_g")"; done
	sleep "$_secs"
	set -- "$@" $_before
	_n=$(($# / 2))
	_i=1
	while [ $_i -le $_n ]; do
		eval "_g=\${$_i}; _b=\${$((_i + _n))}"
		printf '%s=%s ' "$_g" "$(kbps "$_g" "$_b" "$_secs")"
		_i=$((_i + 1))
	done
	echo
}
value() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# 20% of 16384 KB/s is 3276 KB/s.
dm_create rg "0 $size ioband $dev rg 0 4 cgroup range-bw 0 :0:0 $a:0:3276 $b:0:0" >/dev/null
assert_eq "$(dmsetup table rg)" "0 $size ioband $mm rg 0 4 cgroup range-bw 0 :0:0 $a:0:3276 $b:0:0" "range-bw table"
load rg-a 12 &
alone=$(measure 8 rg-a)
wait
echo "capped at 3276 KB/s, alone: $alone"
# Never above the cap; below it by what the guest's timer wake-ups cost
# (each capped bio waits for a timer: about 6% at 4k in TCG, less at 16k).
# io.stat counts what went down in the window, the cap's own measure.
assert_le "$(value "$alone" rg-a)" $((3276 * 105 / 100)) "rg-a alone, KB/s"
assert_ge "$(value "$alone" rg-a)" $((3276 * 90 / 100)) "rg-a alone, KB/s"

load rg-a 12 &
load rg-b 12 &
both=$(measure 8 rg-a rg-b)
wait
echo "capped at 3276 KB/s, beside a greedy group: $both"
assert_le "$(value "$both" rg-a)" $((3276 * 105 / 100)) "rg-a beside rg-b, KB/s"
assert_ge "$(value "$both" rg-a)" $((3276 * 90 / 100)) "rg-a beside rg-b, KB/s"
assert_ge "$(value "$both" rg-b)" $((16384 * 70 / 100)) "rg-b, KB/s"

# The range-bw message, the default group as -1.
dmsetup message rg 0 range-bw "$a:100:2000"
dmsetup message -- rg 0 range-bw -1:0:500   # -1 needs the --, as in dm-ioband
assert_eq "$(dmsetup table rg)" "0 $size ioband $mm rg 0 4 cgroup range-bw 0 :0:500 $a:100:2000 $b:0:0" "table after range-bw messages"
if dmsetup message rg 0 range-bw "$a:3000:2000" 2>/dev/null; then
	fail "range-bw accepted min above max"
fi
dmsetup remove rg

# weight-range: a reserves 30% (4915 KB/s) at weight 1 against weights of 100.
dm_create rg "0 $size ioband $dev rg 0 4 cgroup weight-range 0 :100:0:0 $a:1:4915:0 $b:100:0:0 $c:100:0:0 $d:100:0:0" >/dev/null
for g in a b c d; do load "rg-$g" 12 & done
four=$(measure 8 rg-a rg-b rg-c rg-d)
wait
echo "reserved 4915 KB/s at weight 1 against three groups of weight 100: $four"
# By weight alone rg-a would get 1/301 of the device (54 KB/s). On this
# null_blk, whose mbps cap serves each 20 ms budget in one burst, the
# reservation is met only in part (about 73% measured); the simulator's
# smooth device meets it exactly (tests/sim scenarios/reserve30.sim).
assert_ge "$(value "$four" rg-a)" $((4915 / 2)) "rg-a's reservation, KB/s"

dmsetup remove rg
remove_nullb rg
