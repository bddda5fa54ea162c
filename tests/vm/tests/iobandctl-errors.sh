#!/bin/sh
# Each iobandctl error fails with a non-zero exit and a message that says
# what to do: unknown device, not an ioband device, cgroup path not found,
# cgroup v2 not mounted, dm-ioband not loaded, permission denied, weight out
# of range, bad arguments, a message the kernel refuses. And --help works
# for every subcommand.
# shellcheck source=../lib.sh
. /ioband/lib.sh

expect_error() { # PATTERN COMMAND...: COMMAND fails and says PATTERN on stderr
	_pattern=$1
	shift
	if "$@" >out.txt 2>err.txt; then
		fail "'$*' succeeded"
	fi
	grep -qi -- "$_pattern" err.txt || {
		cat err.txt
		fail "'$*': stderr lacks '$_pattern'"
	}
	[ ! -s out.txt ] || fail "'$*' printed on stdout: $(cat out.txt)"
	log "ok: $* -> $(head -1 err.txt)"
}

dev=$(make_nullb er 64)
size=$(dev_sectors "$dev")
cg_create er-a
iobandctl create er "$dev" --group er-a=100
dm_create er-linear "0 $size linear $dev 0" >/dev/null

for cmd in create remove list table set attach detach policy reset stat top help; do
	iobandctl "$cmd" --help >help.txt || fail "$cmd --help failed"
	grep -q "^ iobandctl $cmd" help.txt || fail "$cmd --help: no usage line"
done
iobandctl help stat | grep -q "Available output columns" || fail "help stat"

# Unknown device, not an ioband device.
for cmd in "stat" "table" "remove" "reset" "detach" "policy"; do
	set -- nosuchdev
	case $cmd in detach) set -- nosuchdev er-a ;; policy) set -- nosuchdev weight ;; esac
	expect_error "no device-mapper device named nosuchdev" iobandctl "$cmd" "$@"
	set -- er-linear
	case $cmd in detach) set -- er-linear er-a ;; policy) set -- er-linear weight ;; esac
	expect_error "er-linear is not an ioband device" iobandctl "$cmd" "$@"
done
expect_error "no device-mapper device named nosuchdev" iobandctl set nosuchdev er-a=5
expect_error "no device-mapper device named nosuchdev" iobandctl top -B -c 1 nosuchdev
expect_error "not an ioband device" iobandctl attach er-linear er-a 10

# Group keys.
expect_error "cgroup path no-such not found under /sys/fs/cgroup" \
	iobandctl create er2 "$dev" --group no-such=10 --dry-run
expect_error "cgroup path no-such not found" iobandctl attach er no-such 10
expect_error "cgroup path no-such not found" iobandctl set er no-such=10
expect_error "no user named 'no-such-user'" \
	iobandctl create er2 "$dev" -t uid -g no-such-user=1 --dry-run
expect_error "invalid pid group 'abc'" iobandctl create er2 "$dev" -t pid -g abc=1 --dry-run
expect_error "only the default group" iobandctl create er2 "$dev" -t none -g 1=1 --dry-run
expect_error "given more than once" iobandctl create er2 "$dev" -g er-a=1 -g /er-a=2 --dry-run

# Weights out of range, everywhere a weight is taken.
expect_error "from 1 to 32767" iobandctl create er2 "$dev" -g er-a=0 --dry-run
expect_error "from 1 to 32767" iobandctl create er2 "$dev" -g er-a=40000 --dry-run
expect_error "from 1 to 32767" iobandctl create er2 "$dev" -D 0 --dry-run
expect_error "from 1 to 32767" iobandctl set er er-a=32768
expect_error "from 1 to 32767" iobandctl set er default=-1
expect_error "from 1 to 32767" iobandctl attach er er-a 0
expect_error "expected <key>=<weight>" iobandctl set er er-a

# Other bad arguments.
expect_error "unknown policy 'fast'" iobandctl create er2 "$dev" -p fast --dry-run
expect_error "unknown policy 'fast'" iobandctl policy er fast
expect_error "unknown policy 'range'" iobandctl policy er range
expect_error "unknown group type 'node'" iobandctl create er2 "$dev" -t node --dry-run
expect_error "already exists" iobandctl create er "$dev"
expect_error "is not a block device" iobandctl create er2 /dev/null --dry-run
expect_error "invalid --io-limit 'x'" iobandctl create er2 "$dev" --io-limit x --dry-run
expect_error "unknown column 'nope'" iobandctl stat -o group,nope er
expect_error "invalid interval '0'" iobandctl stat -i 0 er
expect_error "--count needs --interval" iobandctl stat -c 2 er
expect_error "help" iobandctl create er2
expect_error "help" iobandctl frobnicate
# stat without a name is no misuse any more (issue 43): every device.
iobandctl stat --raw --noheadings -o name | grep -q '^er$' || fail "stat without a name: no er"
expect_error "help" iobandctl attach er

# A message the kernel refuses: the tool says to look at the kernel log.
expect_error "refused 'io_limit 999999'.*dmesg" iobandctl set er --io-limit 999999

# Permission denied: root of a user namespace lacks CAP_SYS_ADMIN for the
# dm ioctls (EACCES); a user other than root cannot open the control node.
expect_error "permission denied: configuring device-mapper needs root (CAP_SYS_ADMIN)" \
	unshare -r iobandctl list
expect_error "permission denied: configuring device-mapper needs root (CAP_SYS_ADMIN)" \
	unshare -r iobandctl stat er
expect_error "permission denied: configuring device-mapper needs root (CAP_SYS_ADMIN)" \
	unshare -r iobandctl set er er-a=5
if [ ! -e /etc/passwd ]; then
	echo "nobody:x:65534:65534:nobody:/:/bin/sh" >/etc/passwd
	created_passwd=1
fi
if grep -q '^nobody:' /etc/passwd; then
	expect_error "permission denied: configuring device-mapper needs root" \
		su -s /bin/sh nobody -c "iobandctl list"
fi
[ -z "${created_passwd:-}" ] || rm -f /etc/passwd

# cgroup v2 not mounted (in a mount namespace of its own).
expect_error "cgroup v2 is not mounted: mount -t cgroup2" \
	unshare -m sh -c "umount /sys/fs/cgroup && iobandctl create er2 $dev -g er-a=1 -n"

dm_remove er-linear
iobandctl remove er

# dm-ioband not loaded (and not loadable on demand).
modprobe_path=$(cat /proc/sys/kernel/modprobe)
restore_module() {
	echo "$modprobe_path" >/proc/sys/kernel/modprobe
	grep -q '^dm_ioband ' /proc/modules || modprobe dm-ioband
}
trap restore_module EXIT
echo /bin/false >/proc/sys/kernel/modprobe
rmmod dm_ioband || fail "cannot unload dm_ioband"
expect_error "dm-ioband is not loaded; load it with modprobe dm-ioband" \
	iobandctl create er2 "$dev"
expect_error "dm-ioband is not loaded: load it with modprobe dm-ioband" iobandctl list
restore_module
trap - EXIT
grep -q '^dm_ioband ' /proc/modules || fail "dm_ioband not reloaded"
remove_nullb er
