#!/bin/sh
# iobandctl create with every option (--dry-run tables, then real devices of
# each group type), list, table (ids named back) and remove.
# shellcheck source=../lib.sh
. /ioband/lib.sh

dev=$(make_nullb cr 64)
size=$(dev_sectors "$dev")
mm=$(dev_majmin "$dev")
cg_create cr-a
cg_create cr-b/leaf
a=$(cg_id cr-a)
leaf=$(cg_id cr-b/leaf)

# Every option, in the table.
assert_eq "$(iobandctl create cr "$dev" --domain shared1 --policy weight-iosize \
	--type cgroup --group cr-a=300 --weight /sys/fs/cgroup/cr-b/leaf=20 \
	--default-weight 50 --io-limit 64 --io-throttle 8 --token-base 4096 --dry-run)" \
	"0 $size ioband $dev shared1 8 64 cgroup weight-iosize 4096 :50 $a:300 $leaf:20" \
	"create --dry-run, all options"
assert_eq "$(iobandctl create cr "$mm" -t uid -g 0=10 -g 1000=20 --dry-run)" \
	"0 $size ioband $mm cr 0 0 uid weight 0 :100 0:10 1000:20" "type uid"
assert_eq "$(iobandctl create cr "$dev" -t gid -g 0=10 --dry-run)" \
	"0 $size ioband $dev cr 0 0 gid weight 0 :100 0:10" "type gid"
assert_eq "$(iobandctl create cr "$dev" -t pid -g $$=10 --dry-run)" \
	"0 $size ioband $dev cr 0 0 pid weight 0 :100 $$:10" "type pid"
assert_eq "$(iobandctl create cr "$dev" -t pgrp -g 1=10 --dry-run)" \
	"0 $size ioband $dev cr 0 0 pgrp weight 0 :100 1:10" "type pgrp"
assert_eq "$(iobandctl create cr "$dev" -t none -D 7 --dry-run)" \
	"0 $size ioband $dev cr 0 0 none weight 0 :7" "type none"
# The old letter of --dry-run, for one release: the same, and a warning.
assert_eq "$(iobandctl create cr "$dev" -t none -D 7 -n 2>old-n.err)" \
	"0 $size ioband $dev cr 0 0 none weight 0 :7" "create -n (deprecated)"
grep -q "create -n is deprecated: use --dry-run" old-n.err || fail "create -n: no warning: $(cat old-n.err)"
# A user name, when the guest knows it.
if [ ! -e /etc/passwd ]; then
	echo "root:x:0:0:root:/root:/bin/sh" >/etc/passwd
	echo "root:x:0:" >/etc/group
	created_passwd=1
fi
assert_eq "$(iobandctl create cr "$dev" -t uid -g root=10 --dry-run)" \
	"0 $size ioband $dev cr 0 0 uid weight 0 :100 0:10" "uid by name"
assert_eq "$(iobandctl create cr "$dev" -t gid -g root=10 --dry-run)" \
	"0 $size ioband $dev cr 0 0 gid weight 0 :100 0:10" "gid by name"

# Real devices: a cgroup one and a uid one on the same disk, one domain
# (whose policy they share).
iobandctl create cr "$dev" --domain shared1 --policy weight-iosize \
	--group cr-a=300 --group cr-b/leaf=20 --default-weight 50
iobandctl create cr-uid "$dev" --domain shared1 --policy weight-iosize \
	--type uid --group root=10
for n in cr cr-uid; do [ -b "/dev/mapper/$n" ] || fail "no /dev/mapper/$n"; done
assert_eq "$(dmsetup table cr)" \
	"0 $size ioband $mm shared1 0 0 cgroup weight-iosize 0 :50 $a:300 $leaf:20" \
	"table of cr"

# table: the same, named.
assert_eq "$(iobandctl table cr)" \
	"0 $size ioband $dev shared1 0 0 cgroup weight-iosize 0 :50 cr-a:300 cr-b/leaf:20" \
	"iobandctl table cr"
assert_eq "$(iobandctl table cr-uid)" \
	"0 $size ioband $dev shared1 0 0 uid weight-iosize 0 :100 root:10" \
	"iobandctl table cr-uid"

# list: every ioband device, and only those.
dm_create cr-linear "0 $size linear $dev 0" >/dev/null
iobandctl list
assert_eq "$(iobandctl list --raw --noheadings)" \
"cr shared1 weight-iosize cgroup 2 $dev
cr-uid shared1 weight-iosize uid 1 $dev" "list"
iobandctl list --json >list.json
grep -q '"name": "cr-uid"' list.json || fail "list --json lacks cr-uid"
grep -q '"nr_groups": 2,' list.json || fail "list --json: nr_groups not a number"
dm_remove cr-linear

# A cgroup removed since: its id is printed.
cg_remove cr-b/leaf
assert_eq "$(iobandctl table cr)" \
	"0 $size ioband $dev shared1 0 0 cgroup weight-iosize 0 :50 cr-a:300 $leaf:20" \
	"table with a removed cgroup"

iobandctl remove cr
iobandctl remove cr-uid
assert_eq "$(iobandctl list --raw --noheadings)" "" "list after remove"
assert_eq "$(iobandctl list --json | tr -d ' \n')" '{"schema":1,"devices":[]}' "empty list --json"
[ -z "${created_passwd:-}" ] || rm -f /etc/passwd /etc/group
remove_nullb cr
