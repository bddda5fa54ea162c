#!/bin/sh
# Nested cgroups share as cgroup v2 says (section 19 of the design): two
# slices 1:1, and in one two services 5:1, direct 4 KiB reads in each leaf,
# split the device 41.7/8.3/50, judged at the device below (the cgroups'
# io.stat there). When the two services go idle, the other slice takes the
# device within a second. Groups attached by message nest and adopt the
# groups below them; a detached parent's children move up.
. /ioband/lib.sh
set -eu

dev=$(make_nullb nt 1024 mbps=16)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")
cg_create nt-sys/nginx
cg_create nt-sys/postgres
cg_create nt-user
sys=$(cg_id nt-sys)
nginx=$(cg_id nt-sys/nginx)
postgres=$(cg_id nt-sys/postgres)
user=$(cg_id nt-user)
leaves="nt-sys/nginx nt-sys/postgres nt-user"
# A failed assertion leaves no reader behind to keep the device open.
trap 'killall -KILL fio 2>/dev/null || true' EXIT

snapshot() { io_snapshot "$mm" "$@"; }
load() { # CGROUP SECONDS: 4 KiB direct random reads, 8 outstanding
	cg_run "$1" fio --name=nt --filename=/dev/mapper/nt --direct=1 \
		--ioengine=libaio --iodepth=8 --rw=randread --bs=4k --randrepeat=0 \
		--time_based --runtime="$2" --output=/dev/null
}
grown() { io_grown "$mm" "$@"; } # BEFORE CGROUP...
idle() { # CGROUP...: none has had a read served in 0.3 s
	_before=$(snapshot "$@")
	sleep 0.3
	snapshot "$@" | awk -v before="$_before" '{ split(before, b); for (i = 2; i <= NF; i++) if ($i > b[i]) exit 1 }'
}
# rates SECONDS CGROUP...: "<cgroup>=<sectors/s>" of each over SECONDS, by
# the clock, once every one of them is being served.
rates() {
	_secs=$1
	shift
	wait_for 30 grown "$(snapshot "$@")" "$@"
	io_rates "$mm" "$_secs" "$@"
}
value() { echo "$1" | tr ' ' '\n' | sed -n "s|^$2=||p"; }
# check_shares RATES: nginx 41.7%, postgres 8.3%, user.slice 50%, +/- 5%
# of each share. perf_check: the debug kernel's CPU reached 9,325 of the
# cap's 32,768 sectors a second, nothing was held, and the three leaves
# got what each could send (356/336/306).
check_shares() {
	_n=$(value "$1" nt-sys/nginx)
	_p=$(value "$1" nt-sys/postgres)
	_u=$(value "$1" nt-user)
	_t=$((_n + _p + _u))
	echo "shares of the device (per mille): nginx $((_n * 1000 / _t)), postgres $((_p * 1000 / _t)), user $((_u * 1000 / _t)) of $_t sectors/s"
	perf_check assert_within_pct 417 $((_n * 1000 / _t)) 5 "nginx's share (per mille)"
	perf_check assert_within_pct 83 $((_p * 1000 / _t)) 5 "postgres's share (per mille)"
	perf_check assert_within_pct 500 $((_u * 1000 / _t)) 5 "user.slice's share (per mille)"
}

# The children before their parent: the table nests them all the same.
dm_create nt "0 $size ioband $dev nt 0 0 cgroup weight-iosize 0 :100 $nginx:500 $postgres:100 $sys:100 $user:100" >/dev/null
assert_eq "$(group_stat /dev/mapper/nt "$nginx" parent)" "$sys" "nginx's parent"
assert_eq "$(group_stat /dev/mapper/nt "$user" parent)" 0 "user.slice's parent"
iobandctl stat --json nt | tr -d ' \n' | grep -q "\"parent_id\":$sys," ||
	fail "iobandctl stat --json shows no group with parent_id $sys"

# 8 s: a group that pauses (the guest's readers are short of CPU) catches
# up within carryover epochs, about a second of this device: a window of a
# few seconds shows those swings.
load nt-sys/nginx 12 &
load nt-sys/postgres 12 &
load nt-user 18 &
# shellcheck disable=SC2086 # one word per cgroup
both=$(rates 8 $leaves)
echo "three leaves: $both"
total=$(($(value "$both" nt-sys/nginx) + $(value "$both" nt-sys/postgres) + $(value "$both" nt-user)))
check_shares "$both"
# The services end: user.slice takes the device at once.
wait_for 10 idle nt-sys/nginx nt-sys/postgres
alone=$(rates 1 nt-user)
echo "user.slice in the second after the services went idle: $alone (all three had $total)"
perf_check assert_ge $(($(value "$alone" nt-user) * 100)) $((total * 95)) "user.slice's rate alone, x100, against 95% of the device's"
wait

# By message: the slice detached, its services move to the top; attached
# again, it adopts them.
dmsetup message nt 0 detach "$sys"
assert_eq "$(group_stat /dev/mapper/nt "$nginx" parent)" 0 "nginx's parent once the slice is detached"
dmsetup message nt 0 attach "$sys:100"
assert_eq "$(group_stat /dev/mapper/nt "$nginx" parent)" "$sys" "nginx's parent once the slice is attached again"
assert_eq "$(group_stat /dev/mapper/nt "$postgres" parent)" "$sys" "postgres's parent once the slice is attached again"
# shellcheck disable=SC2086 # one word per cgroup
for leaf in $leaves; do load "$leaf" 12 & done
# shellcheck disable=SC2086
again=$(rates 8 $leaves)
echo "after detach and attach: $again"
check_shares "$again"
wait

# At most 8 levels above a group: the tenth of a chain is refused, by
# message and in a table, with why.
chain=nt-d1
ids=
cg_create nt-d1/nt-d2/nt-d3/nt-d4/nt-d5/nt-d6/nt-d7/nt-d8/nt-d9/nt-d10
for i in 1 2 3 4 5 6 7 8 9; do
	dmsetup message nt 0 attach "$(cg_id "$chain"):100"
	ids="$ids $(cg_id "$chain"):100"
	chain=$chain/nt-d$((i + 1))
done
assert_eq "$(group_stat /dev/mapper/nt "$(cg_id nt-d1/nt-d2/nt-d3/nt-d4/nt-d5/nt-d6/nt-d7/nt-d8/nt-d9)" parent)" \
	"$(cg_id nt-d1/nt-d2/nt-d3/nt-d4/nt-d5/nt-d6/nt-d7/nt-d8)" "the ninth level's parent"
mark=$(klog_mark)
if dmsetup message nt 0 attach "$(cg_id "$chain"):100" 2>/dev/null; then
	fail "a tenth level of attached cgroups was attached"
fi
klog_since "$mark" | grep -q "would nest more than 8 deep" ||
	fail "the refused attach does not say why in the kernel log"
dmsetup remove nt
mark=$(klog_mark)
if dmsetup create --noudevsync ntdeep --table "0 $size ioband $dev ntdeep 0 0 cgroup weight 0 :100 $ids $(cg_id "$chain"):100" 2>/dev/null; then
	fail "a table nesting ten levels of cgroups was loaded"
fi
klog_since "$mark" | grep -q "attached cgroups nest more than 8 deep" ||
	fail "the refused table does not say why in the kernel log"
dmsetup remove ntdeep 2>/dev/null || true
remove_nullb nt
