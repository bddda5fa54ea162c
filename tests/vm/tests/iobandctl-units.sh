#!/bin/sh
# systemd units as group keys, by the documented cgroup layout (the guest
# has no systemd): create --weight, attach and set take nginx.service or a
# slice; a unit that is not running is refused with a clear error; in an
# iobandtab it is pending, --print-cgroups says where its cgroup will
# appear (what the generator's path unit watches), and the next apply (the
# reapply path) attaches it once it runs; ./name is a cgroup of a unit's
# name.
# shellcheck source=../lib.sh
. /ioband/lib.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"

dev=$(make_nullb un 64)
cg_create system.slice/web.service
cg_create a.slice/a-b.slice/db.service
cg_create nginx.service # a cgroup folder named like a unit
web=$(cg_id system.slice/web.service)
ab=$(cg_id a.slice/a-b.slice)
root_nginx=$(cg_id nginx.service)

iobandctl create un "$dev" --weight web.service=200 --group a-b.slice=50
dmsetup table un | grep -q " :100 $web:200 $ab:50\$" ||
	fail "table of un: $(dmsetup table un)"
assert_eq "$(iobandctl table un | sed 's/.* :100 //')" \
	"system.slice/web.service:200 a.slice/a-b.slice:50" "groups of un, named"
iobandctl set un web.service=300
dmsetup table un | grep -q " $web:300 " || fail "set web.service: $(dmsetup table un)"

# A unit that does not run has no cgroup: refused, saying so.
if iobandctl attach un late.service 10 2>err.txt; then
	fail "attached late.service, which does not run"
fi
cat err.txt
grep -q "unit late.service has no cgroup (/sys/fs/cgroup/system.slice/late.service): it is not running" err.txt ||
	fail "error for a unit that does not run: $(cat err.txt)"
if iobandctl create un2 "$dev" --domain un2 -g late.service=1 --dry-run 2>err.txt; then
	fail "create took late.service"
fi
grep -q "unit late.service has no cgroup" err.txt || fail "create: $(cat err.txt)"
# nginx.service is a unit (not running); ./nginx.service the cgroup folder.
if iobandctl attach un nginx.service 10 2>/dev/null; then
	fail "nginx.service resolved to the folder at the root, not to the unit"
fi
iobandctl attach un ./nginx.service 10
dmsetup table un | grep -q " $root_nginx:10\$" || fail "./nginx.service: $(dmsetup table un)"

# iobandtab: pending until the unit runs, then attached by the reapply.
cat >iobandtab <<EOF
un3 $dev domain=un3 web.service=100 late.service=300 db@2.service=7
EOF
iobandctl apply --print-cgroups iobandtab >cgroups.txt
assert_eq "$(tr '\n' ' ' <cgroups.txt)" \
	"/sys/fs/cgroup/system.slice/web.service /sys/fs/cgroup/system.slice/late.service /sys/fs/cgroup/system.slice/db@2.service " \
	"--print-cgroups"
iobandctl apply iobandtab 2>apply.err || { cat apply.err; fail "apply failed"; }
cat apply.err
grep -q "iobandtab:1: un3: unit late.service is not running: attached when it starts" apply.err ||
	fail "no notice of the pending unit"
dmsetup table un3 | grep -q " :100 $web:100\$" || fail "un3 before late.service: $(dmsetup table un3)"
# "systemctl start late.service": its cgroup appears in system.slice.
cg_create system.slice/late.service
late=$(cg_id system.slice/late.service)
iobandctl apply iobandtab 2>apply.err || { cat apply.err; fail "reapply failed"; }
dmsetup table un3 | grep -q " :100 $web:100 $late:300\$" ||
	fail "un3 after late.service started: $(dmsetup table un3)"

iobandctl remove un3
iobandctl remove un
remove_nullb un
