#!/bin/sh
# iobandctl apply and save with an iobandtab file: devices by UUID= and by
# path, the four policies, a cgroup that appears later, idempotent re-apply,
# a reboot-like re-apply (remove all, apply again) restoring the same
# tables, save -> apply round trips, and bad lines reported as file:line
# while the good lines still apply.
# shellcheck source=../lib.sh
. /ioband/lib.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"

d1=$(make_nullb ap1 64 memory_backed=1)
d2=$(make_nullb ap2 64)
s1=$(dev_sectors "$d1")
s2=$(dev_sectors "$d2")
m1=$(dev_majmin "$d1")
m2=$(dev_majmin "$d2")
mkfs.ext4 -q -F "$d1" >/dev/null 2>&1 || fail "mkfs.ext4 $d1"
uuid=$(blkid -s UUID -o value "$d1")
[ -n "$uuid" ] || fail "no UUID on $d1"
cg_create ap-a
cg_create ap-b
a=$(cg_id ap-a)
b=$(cg_id ap-b)

# The tab file of Documentation/install.md's example, on this guest's devices.
cat >iobandtab <<EOF
# <name> <device>   <options>                              <groups>
ap-w     UUID=$uuid policy=weight,default=50               ap-a=200 ap-b=100 ap-later=300

ap-r     $d2        domain=ap2,policy=range-bw,default=0:0 ap-a=1024:4096 /ap-b=0:0
ap-x     $m2        type=uid,domain=apx,policy=weight-range,io_limit=16 0=300:100:0
ap-n     $d2        type=none,domain=apn,default=7         # only the default group
EOF

tables() {
	for n in ap-n ap-r ap-w ap-x; do
		echo "$n: $(dmsetup table "$n" 2>&1)"
	done
}

expect="ap-n: 0 $s2 ioband $m2 apn 0 0 none weight 0 :7
ap-r: 0 $s2 ioband $m2 ap2 0 0 cgroup range-bw 0 :0:0 $a:1024:4096 $b:0:0
ap-w: 0 $s1 ioband $m1 ap-w 0 0 cgroup weight 0 :50 $a:200 $b:100
ap-x: 0 $s2 ioband $m2 apx 0 16 uid weight-range 0 :100:0:0 0:300:100:0"

# The module resolves io_throttle/io_limit 0 to its defaults in the table:
# compare with those filled in.
norm() { sed -E 's/ (apn|ap2|ap-w|apx) [0-9]+ [0-9]+ / \1 T L /'; }

log "apply: ap-later does not exist yet"
iobandctl apply iobandtab 2>apply.err || { cat apply.err; fail "apply failed"; }
cat apply.err
grep -q "iobandtab:2: ap-w: cgroup ap-later does not exist yet" apply.err ||
	fail "no notice of the pending cgroup ap-later"
tables >t1
assert_eq "$(norm <t1)" "$(echo "$expect" | norm)" "tables after apply"

log "apply again: nothing changes"
iobandctl apply iobandtab 2>apply.err || { cat apply.err; fail "second apply failed"; }
tables >t2
assert_eq "$(cat t2)" "$(cat t1)" "tables after a second apply"

log "the cgroup appears: apply attaches it"
cg_create ap-later
later=$(cg_id ap-later)
iobandctl apply iobandtab
assert_eq "$(dmsetup table ap-w | norm)" \
	"0 $s1 ioband $m1 ap-w T L cgroup weight 0 :50 $a:200 $b:100 $later:300" \
	"ap-w after ap-later appeared"
tables >t3

log "a changed file: weights, ranges and the policy follow by messages"
sed -e 's/ap-a=200/ap-a=400/' -e 's/ap-a=1024:4096/ap-a=2048:0/' \
	-e 's/apx,policy=weight-range/apx,policy=range-bw/' \
	-e 's/0=300:100:0/0=5:6/' iobandtab >changed.tab
iobandctl apply changed.tab
dmsetup table ap-w | grep -q " $a:400 " || fail "ap-w: weight of ap-a not 400: $(dmsetup table ap-w)"
dmsetup table ap-r | grep -q " $a:2048:0 " || fail "ap-r: range of ap-a: $(dmsetup table ap-r)"
# range-bw's form has no weight: the group keeps its 300, so the table
# prints the full form, which `dmsetup table` must restore.
dmsetup table ap-x | grep -q "range-bw [0-9]* :0:0 0:300:5:6$" || fail "ap-x: $(dmsetup table ap-x)"
iobandctl apply iobandtab
tables >t4
assert_eq "$(cat t4)" "$(cat t3)" "tables after applying the first file again"

log "save, then a reboot-like re-apply restores the same tables"
iobandctl save saved.tab
cat saved.tab
grep -q "^ap-w UUID=$uuid " saved.tab || fail "save did not name ap-w's device by UUID"
iobandctl save --paths saved-paths.tab
grep -q "^ap-r $d2 " saved-paths.tab || fail "save --paths: ap-r not on $d2"
for n in ap-n ap-r ap-w ap-x; do iobandctl remove "$n"; done
assert_eq "$(iobandctl list --raw --noheadings)" "" "list after remove"
iobandctl apply iobandtab
tables >t5
assert_eq "$(cat t5)" "$(cat t3)" "tables after remove all + apply"

for f in saved.tab saved-paths.tab; do
	for n in ap-n ap-r ap-w ap-x; do iobandctl remove "$n"; done
	iobandctl apply "$f" || fail "apply $f"
	tables >t6
	assert_eq "$(cat t6)" "$(cat t3)" "tables after save -> remove all -> apply $f"
	iobandctl save --paths again.tab
	assert_eq "$(grep -v '^#' again.tab)" "$(grep -v '^#' saved-paths.tab)" \
		"save after applying $f"
done

log "bad lines: each reported as file:line, the good lines applied"
for n in ap-n ap-r ap-w ap-x; do iobandctl remove "$n"; done
cat >bad.tab <<EOF
# good, bad, good, ...
bd-1 $d2 domain=bd1
bd-2 $d2
bd-3 $d2 domain=bd3,policy=range-bw ap-a=1:2

bd-4 $d2 policy=bogus
bd-5 $d2 domain=bd5,policy=range-bw ap-a=100
bd-6 /dev/no-such-disk -
bd-7 $d2 domain=bd7 no-such-cgroup/x\\y=5 ap-a=0
bd-1 $d2 -
bd-8 $d2 domain=bd8,color=red
bd-9 $d2 domain=bd9 ap-b=100
EOF
if iobandctl apply bad.tab 2>bad.err; then
	cat bad.err
	fail "apply of a file with bad lines succeeded"
fi
cat bad.err
for l in 3 6 7 8 9 10 11; do
	grep -q "^iobandctl: bad.tab:$l: " bad.err || fail "line $l not reported"
done
assert_eq "$(grep -c '^iobandctl: bad.tab:' bad.err)" 7 "reported lines"
assert_eq "$(iobandctl list --raw --noheadings | cut -d' ' -f1 | tr '\n' ' ')" \
	"bd-1 bd-3 bd-9 " "devices of the good lines"
assert_eq "$(dmsetup table bd-3)" \
	"0 $s2 ioband $m2 bd3 0 0 cgroup range-bw 0 :0:0 $a:1:2" "bd-3"
iobandctl apply --check bad.tab 2>check.err && fail "apply --check of bad.tab succeeded"
assert_eq "$(grep -c "^iobandctl: bad.tab:" check.err)" 6 "lines --check reports (no lookups)"

for n in bd-1 bd-3 bd-9; do iobandctl remove "$n"; done
cg_remove ap-later
cg_remove ap-a
cg_remove ap-b
remove_nullb ap1
remove_nullb ap2
