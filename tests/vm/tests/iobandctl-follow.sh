#!/bin/sh
# iobandctl follow: the groups of a device are the cgroups of a subtree
# that have an io.weight, at that weight, with no command after the
# start: a write of io.weight (as systemd writes IOWeight=, and by hand)
# takes effect within 1 s, a cgroup made with an io.weight is attached,
# a removed one detached, and -io in a parent's cgroup.subtree_control
# (the weight files go) detaches its children. create --weights-from and
# an iobandtab line with weights_from= take the same weights once.
# shellcheck source=../lib.sh
. /ioband/lib.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"

nb=$(make_nullb fw 64)
cg_create fw/a
cg_create fw/b
echo "default 200" >"$CGROOT/fw/a/io.weight"
a=$(cg_id fw/a)
b=$(cg_id fw/b)
fw=$(cg_id fw)

# table_weight DEVICE ID: the weight of group ID in the table, or none.
table_weight() {
	dmsetup table "$1" | tr ' ' '\n' | awk -F: -v id="$2" '
		$1 == id && NF == 2 { print $2; found = 1 } END { if (!found) print "none" }'
}
weight_is() { [ "$(table_weight "$1" "$2")" = "$3" ]; } # DEVICE ID WEIGHT

# Once, at create and by apply.
iobandctl create --weights-from cgroup:fw fw-once "$nb"
assert_eq "$(table_weight fw-once "$a"):$(table_weight fw-once "$b"):$(table_weight fw-once "$fw")" \
	200:100:100 "create --weights-from: fw/a, fw/b, fw"
iobandctl remove fw-once
echo "fw-tab $nb domain=fwt,weights_from=cgroup:/fw" >iobandtab
iobandctl apply iobandtab
assert_eq "$(table_weight fw-tab "$a"):$(table_weight fw-tab "$b")" 200:100 \
	"apply with weights_from="
iobandctl remove fw-tab

iobandctl create fw "$nb"
iobandctl attach fw fw 7 # to be reweighed from fw's io.weight
cg_create outside
iobandctl attach fw outside 9
out=$(cg_id outside)
iobandctl follow --weights-from cgroup:fw fw 2>follow.log &
follower=$!
trap 'kill $follower 2>/dev/null; wait $follower 2>/dev/null || :' EXIT
within 5 weight_is fw "$a" 200 || { cat follow.log; fail "fw/a not attached at 200: $(dmsetup table fw)"; }
assert_eq "$(table_weight fw "$b")" 100 "fw/b (io.weight's default)"
assert_eq "$(table_weight fw "$fw")" 100 "fw itself, reweighed from 7"
assert_eq "$(table_weight fw "$out")" none "a group outside the subtree, detached"

# changed_within CS ID WEIGHT: the table gives group ID WEIGHT within CS
# hundredths of a second of now; prints the time it took.
changed_within() {
	_cw_t0=$(uptime_cs)
	until weight_is fw "$2" "$3"; do
		_cw_dt=$(($(uptime_cs) - _cw_t0))
		[ "$_cw_dt" -le "$(($(scaled 2) * 100))" ] || {
			cat follow.log
			fail "group $2 not at weight $3 $_cw_dt cs after the change: $(dmsetup table fw)"
		}
		sleep 0.02
	done
	_cw_dt=$(($(uptime_cs) - _cw_t0))
	log "group $2 at weight $3 after ${_cw_dt}0 ms"
	perf_check assert_le "$_cw_dt" "$1" "centiseconds until the change"
}

echo 300 >"$CGROOT/fw/a/io.weight"
changed_within 100 "$a" 300
echo "default 50" >"$CGROOT/fw/b/io.weight" # as systemd writes IOWeight=50
changed_within 100 "$b" 50

# A cgroup made with a weight, as systemd starts a service of IOWeight=.
mkdir "$CGROOT/fw/c"
echo "default 400" >"$CGROOT/fw/c/io.weight"
c=$(cg_id fw/c)
changed_within 100 "$c" 400
# Nested below it.
cg_create fw/c/d
d=$(cg_id fw/c/d)
changed_within 100 "$d" 100

cg_remove fw/c/d
changed_within 100 "$d" none
cg_remove fw/c
changed_within 100 "$c" none

# The io controller off for fw's children: no weight files, no groups.
echo -io >"$CGROOT/fw/cgroup.subtree_control"
changed_within 100 "$a" none
assert_eq "$(table_weight fw "$b")" none "fw/b without the io controller"
assert_eq "$(table_weight fw "$fw")" 100 "fw itself keeps its weight"
echo +io >"$CGROOT/fw/cgroup.subtree_control"
# A new io css: fw/a's weight is its file's again, whatever it is now.
changed_within 100 "$a" "$(sed -n 's/^default //p' "$CGROOT/fw/a/io.weight")"

kill "$follower"
wait "$follower" 2>/dev/null || :
trap - EXIT
iobandctl remove fw
cg_remove fw/a
cg_remove fw/b
cg_remove fw
cg_remove outside
remove_nullb fw
