#!/bin/sh
# The real systemd sets the weights of an ioband device over LVM. The
# host's systemd manager (copied into the initramfs by build-initramfs)
# runs as PID 1 of a PID, mount and UTS namespace of the guest, as under
# systemd-nspawn, owning the cgroup ioband-systemd (its root: it makes
# init.scope and system.slice there); the test talks to it through
# systemctl and systemd-run over its private socket, without D-Bus.
# - At its start it runs iobandctl-generator on an iobandtab line with
#   weights_from=, and loads the unit the generator writes, which
#   systemd-analyze verify takes without a word.
# - iobandctl follow on its system.slice attaches two scopes that
#   `systemd-run --scope -p IOWeight=400` and `-p IOWeight=100` start,
#   each reading 4 KiB direct: their device bytes split 4:1 +-5%.
# - `systemctl set-property --runtime` flips them to 100 and 400: the time
#   until the table follows and until the second scope's share of the
#   last second crosses the midpoint is printed (held to 2 s), and the
#   split is then 1:4 +-5%.
# shellcheck source=../lib.sh
. /ioband/lib.sh
# shellcheck source=../lib-stack.sh
. /ioband/lib-stack.sh

SYSTEMD=/usr/lib/systemd/systemd
SD_CG=ioband-systemd # the manager's root cgroup
SLICE=$CGROOT/$SD_CG/system.slice

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"
if [ ! -x "$SYSTEMD" ] || [ ! -x /usr/bin/unshare ]; then
	fail "no $SYSTEMD or /usr/bin/unshare in the guest: tests/vm/build-initramfs copies them from the host (apt-get install systemd util-linux)"
fi
need_tool systemctl systemd
need_tool systemd-run systemd
need_tool systemd-analyze systemd
[ -x /usr/lib/systemd/system-generators/iobandctl-generator ] ||
	fail "iobandctl-generator is not in the initramfs (make -C tools)"

lvm_setup
unshare_pid=
sdpid=
follower=
sampler=
# shellcheck disable=SC2317 # the EXIT trap's
cleanup() {
	set +e
	# shellcheck disable=SC2086 # none, one or two pids
	kill $sampler $follower 2>/dev/null
	# unshare's end ends the manager (--kill-child), and that every
	# process of its namespace, the scopes' fio too.
	[ -z "$unshare_pid" ] || kill -KILL "$unshare_pid" 2>/dev/null
	wait
	rm -f /etc/iobandtab
	stack_cleanup "iobandctl remove stk-sd" "lvm vgremove -f vgsd" "remove_nullb stksd"
}
trap cleanup EXIT
stack_lv stksd vgsd
iobandctl create stk-sd /dev/vgsd/lv1

# The line the generator reads at the manager's start (its path is the
# manager's system.slice; this test's follower, below, names it from the
# guest's root).
echo "stk-sd /dev/vgsd/lv1 weights_from=cgroup:system.slice" >/etc/iobandtab

# The manager's PID 1: a fresh /run (its private socket, the generated
# units) with a target of its own as the unit to start, then systemd, in
# the cgroup made for it (+io +memory given to it by the root). It logs
# to /dev/console, the guest's (the console log has its messages): it
# takes no file for one, only a terminal.
cg_create "$SD_CG"
cat >sd-init.sh <<EOF
echo 0 >$CGROOT/$SD_CG/cgroup.procs
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/systemd/system
printf '[Unit]\nDescription=dm-ioband guest test\n' >/run/systemd/system/ioband-guest.target
exec env -i container=other PATH=/usr/sbin:/usr/bin $SYSTEMD --system \
	--unit=ioband-guest.target --log-target=console --show-status=no
EOF
# systemd leaves the test's process group (it makes a session of its
# own): --kill-child ends it with unshare, which the harness's kill of
# the group at a timeout reaches. util-linux's unshare (busybox's has no
# --kill-child; busybox sh would run its applet for a bare "unshare").
/usr/bin/unshare --pid --mount --uts --fork --kill-child --mount-proc sh sd-init.sh &
unshare_pid=$!
wait_for 10 has_children "$unshare_pid" 1
sdpid=$(children_of "$unshare_pid")
# sd CMD...: CMD in the manager's PID and mount namespaces (its /run; and
# systemd-run --scope sends its own PID, which must be one of the manager's).
sd() { nsenter -t "$sdpid" -p -m "$@"; }
booted() {
	case $(sd systemctl is-system-running 2>/dev/null) in
	running | degraded) ;;
	*) return 1 ;;
	esac
}
within 60 booted ||
	fail "systemd did not start (its messages: the console log): $(sd systemctl is-system-running 2>&1)"
log "systemd $(sd systemctl --version | head -n 1 | cut -d' ' -f2) is PID 1 of its namespace (host PID $sdpid): $(sd systemctl is-system-running 2>&1)"

# The generator ran at the manager's start; its unit loads and verifies.
unit='iobandctl@stk\x2dsd.service'
assert_eq "$(sd systemctl show -p LoadState -p SourcePath -p FragmentPath "$unit" | sort | tr '\n' ' ')" \
	"FragmentPath=/run/systemd/generator/$unit LoadState=loaded SourcePath=/etc/iobandtab " \
	"the generated unit, as the manager loaded it"
out=$(sd systemd-analyze verify --man=no --generators=false "/run/systemd/generator/$unit" 2>&1) ||
	fail "systemd-analyze verify $unit: $out"
[ -z "$out" ] || fail "systemd-analyze verify $unit said: $out"
log "$unit: loaded from the generator's output, verified without a word"

# The follower of system.slice (what that unit runs once its device is up:
# the guest has no udev, so systemd sees no device units; it runs here).
iobandctl follow --weights-from "cgroup:$SD_CG/system.slice" stk-sd 2>follow.log &
follower=$!

runtime=$(($(scaled 5) + 60))
# shellcheck disable=SC2086 # STACK_LOAD is a list of options
sd systemd-run --quiet --scope --unit=ioband-a -p IOWeight=400 \
	fio --name=a --filename=/dev/mapper/stk-sd $STACK_LOAD \
	--time_based --runtime="$runtime" --output=/dev/null &
pa=$!
# shellcheck disable=SC2086
sd systemd-run --quiet --scope --unit=ioband-b -p IOWeight=100 \
	fio --name=b --filename=/dev/mapper/stk-sd $STACK_LOAD \
	--time_based --runtime="$runtime" --output=/dev/null &
pb=$!
wait_for 10 test -d "$SLICE/ioband-a.scope"
wait_for 10 test -d "$SLICE/ioband-b.scope"
assert_eq "$(cat "$SLICE/ioband-a.scope/io.weight")" "default 400" "io.weight of ioband-a.scope"
assert_eq "$(cat "$SLICE/ioband-b.scope/io.weight")" "default 100" "io.weight of ioband-b.scope"
a=$(cg_id "$SD_CG/system.slice/ioband-a.scope")
b=$(cg_id "$SD_CG/system.slice/ioband-b.scope")
# weight_of ID: the weight of group ID in stk-sd's table, or none.
weight_of() {
	dmsetup table stk-sd | tr ' ' '\n' | awk -F: -v id="$1" '
		$1 == id && NF == 2 { print $2; found = 1 } END { if (!found) print "none" }'
}
attached() { [ "$(weight_of "$a"):$(weight_of "$b")" = "$1:$2" ]; }
within 5 attached 400 100 || { cat follow.log; fail "scopes not attached at 400:100: $(dmsetup table stk-sd)"; }
wait_io /dev/mapper/stk-sd "$SD_CG/system.slice/ioband-a.scope"
wait_io /dev/mapper/stk-sd "$SD_CG/system.slice/ioband-b.scope"

# The samples (share_samples), the module's clock and counters.
iobandctl stat --json --interval 0.1 stk-sd | share_samples "$a" "$b" >samples.txt &
sampler=$!
wait_for 5 test -s samples.txt
now_ms() { echo $(($(domain_stat stk-sd elapsed_ns) / 1000000)); }

# split FROM_MS TO_MS: "<sectors of a> <sectors of b>" between the samples.
split() {
	awk -v t0="$1" -v t1="$2" '
		$1 >= t0 && !n0++ { a0 = $2; b0 = $3 }
		$1 <= t1 { a1 = $2; b1 = $3 }
		END { print a1 - a0, b1 - b0 }' samples.txt
}

# weights_seen FROM_MS WA WB: ms from FROM_MS to the first sample showing
# a at WA and b at WB, -1 if none.
weights_seen() {
	awk -v t0="$1" -v wa="$2" -v wb="$3" '$1 >= t0 && $4 == wa && $5 == wb {
		print $1 - t0; found = 1; exit } END { if (!found) print -1 }' samples.txt
}

window=10
# share_check WHAT EXPECTED_X100: over the next $window seconds, a:b
# (x100) within 5% of EXPECTED_X100; for 1:4, b:a is held to 400.
share_check() {
	_sc_t0=$(now_ms)
	sleep "$window"
	sleep 0.3 # a sample after the window
	# shellcheck disable=SC2046 # two numbers
	set -- "$1" "$2" $(split "$_sc_t0" $((_sc_t0 + window * 1000)))
	assert_ge "$3" 1 "sectors of ioband-a.scope ($1)"
	assert_ge "$4" 1 "sectors of ioband-b.scope ($1)"
	log "$1, over $window s: ioband-a.scope $3 sectors, ioband-b.scope $4 sectors, a:b $(($3 * 100 / $4))/100, $(($3 * 100 / ($3 + $4)))% to a"
	if [ "$2" -ge 100 ]; then
		perf_check assert_within_pct "$2" $(($3 * 100 / $4)) 5 "ioband-a:ioband-b (x100), $1"
	else
		perf_check assert_within_pct $((10000 / $2)) $(($4 * 100 / $3)) 5 "ioband-b:ioband-a (x100), $1"
	fi
}

sleep "$(scaled 3)" # every job of both under way
share_check "IOWeight 400:100 (systemd-run -p)" 400

# The flip, by systemctl set-property on the live scopes: a to 100 (1:1,
# b's share 50%), then b to 400 (1:4, 80%). Timed from the second
# command's start: until the table has 100:400, and until b's share of
# the last second crosses 65%, the midpoint of the two.
t0=$(now_ms)
sd systemctl set-property --runtime ioband-a.scope IOWeight=100
t1=$(now_ms)
sd systemctl set-property --runtime ioband-b.scope IOWeight=400
t2=$(now_ms)
assert_eq "$(cat "$SLICE/ioband-a.scope/io.weight"):$(cat "$SLICE/ioband-b.scope/io.weight")" \
	"default 100:default 400" "io.weight of the scopes after set-property"
sleep 3
seen=$(weights_seen "$t1" 100 400)
x=$(share_crossing samples.txt "$t1" b 65)
log "set-property 400:100 -> 100:400: the commands took $((t1 - t0)) and $((t2 - t1)) ms; from the second's start, the table had 100:400 after $seen ms, b's 1 s share crossed 65% after $x ms"
[ "$seen" -ge 0 ] || { cat follow.log; fail "the table never showed 100:400: $(dmsetup table stk-sd)"; }
[ "$x" -ge 0 ] || perf_check fail "b's share never reached 65% after set-property"
# The command in the emulated guest (~0.5 s), follow's 1 s for an
# io.weight write, the window's half second.
perf_check assert_le "$x" 2000 "ms until the midpoint after set-property"
share_check "IOWeight 100:400 (systemctl set-property)" 25

kill "$sampler" "$follower"
wait "$follower" 2>/dev/null || :
sampler=
follower=
stop_fio "$pa" "$pb"
# unshare ends, and with it (--kill-child) the manager, and with that
# every process of its namespace. SIGKILL: unshare blocks SIGTERM and
# SIGINT while its child runs.
kill -KILL "$unshare_pid"
wait "$unshare_pid" 2>/dev/null || :
unshare_pid=
sdpid=
rm /etc/iobandtab
# The manager's cgroups, the deepest first, once their processes are gone.
cgroups_gone() {
	find "$CGROOT/$SD_CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d "$CGROOT/$SD_CG" ]
}
wait_for 10 cgroups_gone
iobandctl remove stk-sd
lvm vgremove -q -f vgsd
remove_nullb stksd
trap - EXIT
