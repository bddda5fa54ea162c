# shellcheck shell=sh disable=SC2317 # the functions are called by the tests
# Helpers for the dm-ioband guest tests (busybox sh). A test starts with
#
#   #!/bin/sh
#   # shellcheck source=../lib.sh
#   . /ioband/lib.sh
#
# which also turns on `set -eu`. The harness runs each test in a fresh cwd
# ($IOBAND_TMP), removes the dm devices, null_blk devices, mounts under
# /tmp/ioband.* and cgroups a test leaves behind, and fails the test when
# its exit status is not 0 or the kernel logged a BUG/WARNING/... meanwhile.
set -eu

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export DM_DISABLE_UDEV=1
CGROOT=/sys/fs/cgroup
NULLB_CONFIGFS=/sys/kernel/config/nullb

log() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }

fail() { # MSG: print and end the test with exit status 1
	echo "FAIL: $*" >&2
	exit 1
}

assert_eq() { # ACTUAL EXPECTED [WHAT]
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"
}

_assert_int() { # VALUE WHAT
	case $1 in
	'' | *[!0-9-]* | ?*-*) fail "$2: '$1' is not an integer" ;;
	esac
}

assert_ge() { # ACTUAL MIN [WHAT]: integers, ACTUAL >= MIN
	_assert_int "$1" "${3:-value}"
	_assert_int "$2" "${3:-bound}"
	[ "$1" -ge "$2" ] || fail "${3:-value}: expected >= $2, got $1"
}

assert_le() { # ACTUAL MAX [WHAT]: integers, ACTUAL <= MAX
	_assert_int "$1" "${3:-value}"
	_assert_int "$2" "${3:-bound}"
	[ "$1" -le "$2" ] || fail "${3:-value}: expected <= $2, got $1"
}

# assert_within_pct EXPECTED ACTUAL PCT [WHAT]: integers, ACTUAL within
# PCT percent of EXPECTED (|ACTUAL - EXPECTED| * 100 <= PCT * EXPECTED).
assert_within_pct() {
	_assert_int "$1" "${4:-expected value}"
	_assert_int "$2" "${4:-value}"
	_assert_int "$3" "percentage"
	_awp_d=$(($2 - $1))
	[ "$_awp_d" -ge 0 ] || _awp_d=$((-_awp_d))
	_awp_e=$1
	[ "$_awp_e" -ge 0 ] || _awp_e=$((-_awp_e))
	[ $((_awp_d * 100)) -le $(($3 * _awp_e)) ] ||
		fail "${4:-value}: expected $1 +/- $3%, got $2"
}

# ---- block devices ----

# make_nullb NAME SIZE_MIB [ATTR=VALUE...]: create a null_blk device through
# configfs (queue_mode=2 irqmode=0 hw_queue_depth=64, then the given
# attributes, e.g. mbps=16 memory_backed=1 blocksize=4096) and print its
# /dev path.
make_nullb() {
	_nb_name=$1 _nb_size=$2
	shift 2
	_nb=$NULLB_CONFIGFS/$_nb_name
	[ -d "$NULLB_CONFIGFS" ] || fail "null_blk configfs not available"
	mkdir "$_nb" || fail "cannot create null_blk $_nb_name"
	echo "$_nb_size" >"$_nb/size"
	echo 2 >"$_nb/queue_mode"
	echo 0 >"$_nb/irqmode"
	echo 64 >"$_nb/hw_queue_depth"
	for _nb_attr in "$@"; do
		[ -e "$_nb/${_nb_attr%%=*}" ] || fail "null_blk has no attribute ${_nb_attr%%=*}"
		echo "${_nb_attr#*=}" >"$_nb/${_nb_attr%%=*}" ||
			fail "null_blk $_nb_name: cannot set $_nb_attr"
	done
	echo 1 >"$_nb/power" || fail "cannot power on null_blk $_nb_name"
	# The disk is named after the configfs folder on newer kernels, nullb<index>
	# on older ones.
	for _nb_dev in "/dev/$_nb_name" "/dev/nullb$(cat "$_nb/index")"; do
		if [ -b "$_nb_dev" ]; then
			echo "$_nb_dev"
			return 0
		fi
	done
	fail "null_blk $_nb_name powered on but no device node"
}

remove_nullb() { # NAME
	echo 0 >"$NULLB_CONFIGFS/$1/power"
	rmdir "$NULLB_CONFIGFS/$1"
}

# dm_create NAME TABLE: create a dm device (no udev: create the node
# ourselves) and print its path /dev/mapper/NAME.
dm_create() {
	dmsetup create --noudevsync "$1" --table "$2" || fail "dmsetup create $1 failed: $2"
	dmsetup mknodes "$1"
	[ -b "/dev/mapper/$1" ] || fail "no /dev/mapper/$1 after dmsetup create"
	echo "/dev/mapper/$1"
}

dm_remove() { # NAME
	dmsetup remove --noudevsync "$1"
}

# domain_stat DEV NAME: the value of NAME in the first line (the bandwidth
# domain's) of ioband device DEV's stats message.
domain_stat() {
	dmsetup message "$1" 0 stats | head -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# group_stat DEV ID NAME: the value of NAME in the line of group ID (-1:
# the default group) of ioband device DEV's stats message.
group_stat() {
	dmsetup message "$1" 0 stats | awk -v g="group=$2" -v k="$3=" '
		$1 == g { for (i = 2; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }'
}

# dev_sectors DEV: size of a block device in 512-byte sectors.
dev_sectors() {
	blockdev --getsz "$1"
}

# dev_majmin DEV: "major:minor" of a block device.
dev_majmin() {
	_dm_hex=$(stat -L -c '%t %T' "$1") || fail "no device $1"
	printf '%d:%d\n' "0x${_dm_hex% *}" "0x${_dm_hex#* }"
}

# ---- cgroups (v2, mounted on /sys/fs/cgroup with +io +memory) ----

# cg_create PATH: create /sys/fs/cgroup/PATH (e.g. grp or a/b), enabling
# +io +memory in the subtree_control of each of its ancestors.
cg_create() {
	_cg_parent=$CGROOT
	_cg_rest=$1
	while :; do
		_cg_part=${_cg_rest%%/*}
		if [ "$_cg_part" = "$_cg_rest" ]; then _cg_rest=; else _cg_rest=${_cg_rest#*/}; fi
		grep -qw io "$_cg_parent/cgroup.subtree_control" ||
			echo "+io +memory" >"$_cg_parent/cgroup.subtree_control" ||
			fail "cannot enable +io +memory in $_cg_parent"
		_cg_parent=$_cg_parent/$_cg_part
		[ -d "$_cg_parent" ] || mkdir "$_cg_parent" || fail "cannot create cgroup $_cg_parent"
		[ -n "$_cg_rest" ] || break
	done
}

cg_id() { # PATH: the cgroup id (inode number of its folder)
	stat -c %i "$CGROOT/$1"
}

# cg_run PATH CMD [ARGS...]: run CMD inside cgroup PATH (waits for it).
# For a background job: cg_run grp fio job.fio & pid=$!
# cgroup v2 keeps processes out of a cgroup whose subtree_control enables
# controllers (the "no internal processes" rule): after cg_create a/b, run
# in a/b, not in a (EBUSY); use leaves such as a/self and a/b instead.
cg_run() {
	_cg_path=$1
	shift
	[ -d "$CGROOT/$_cg_path" ] || fail "cg_run: no cgroup $_cg_path (cg_create it first)"
	# shellcheck disable=SC2016 # $$ and $@ expand in the inner shell
	sh -c 'echo $$ >"$0/cgroup.procs" 2>/dev/null || {
		echo "FAIL: cg_run: cannot move into $0 (a cgroup with controllers in its" \
			"cgroup.subtree_control cannot hold processes: use a leaf)" >&2
		exit 125
	}
	exec "$@"' "$CGROOT/$_cg_path" "$@"
}

# cg_kill PATH: kill every process in cgroup PATH and wait until they are
# gone (10 s, scaled). `kill $!` of a `cg_run ... &` kills the shell that
# runs the command, not the command: a dd went on writing, and the file
# system it wrote to could not be unmounted.
cg_kill() {
	if [ -e "$CGROOT/$1/cgroup.kill" ]; then
		echo 1 >"$CGROOT/$1/cgroup.kill"
	else
		# shellcheck disable=SC2046 # one pid a word
		kill -KILL $(cat "$CGROOT/$1/cgroup.procs") 2>/dev/null || true
	fi
	wait_for 10 _cg_empty "$1"
}
_cg_empty() { ! grep -q . "$CGROOT/$1/cgroup.procs"; }

# io_snapshot MAJ:MIN CGROUP...: "<uptime, centiseconds> <read sectors
# of each>" on device MAJ:MIN, from the cgroups' io.stat (what the device
# served them, not what they asked), read in one go so that the figures and
# the clock agree.
io_snapshot() {
	_is_dev=$1
	shift
	_is_files=
	for _is_g in "$@"; do _is_files="$_is_files $CGROOT/$_is_g/io.stat"; done
	# shellcheck disable=SC2086 # one word per file
	awk -v dev="$_is_dev" -v files="$_is_files" '
		FILENAME == "/proc/uptime" { printf "%d", $1 * 100; next }
		$1 == dev { for (i = 2; i <= NF; i++) if ($i ~ /^rbytes=/) { sub("rbytes=", "", $i); sect[FILENAME] = int($i / 512) } }
		END { n = split(files, f, " "); for (i = 1; i <= n; i++) printf " %d", sect[f[i]]; print "" }' /proc/uptime $_is_files
}

# io_rates MAJ:MIN SECONDS CGROUP...: "<cgroup>=<sectors/s>" of each on
# MAJ:MIN over SECONDS, the time read from the clock, not from what sleep
# asked for.
io_rates() {
	_ir_dev=$1 _ir_secs=$2
	shift 2
	_ir_s0=$(io_snapshot "$_ir_dev" "$@")
	sleep "$_ir_secs"
	_ir_s1=$(io_snapshot "$_ir_dev" "$@")
	echo "$_ir_s0 $_ir_s1 $*" | awk '{
		n = (NF - 2) / 3
		for (i = 1; i <= n; i++)
			printf "%s=%d ", $(2 * n + 2 + i), ($(n + 2 + i) - $(1 + i)) * 100 / ($(n + 2) - $1)
		print "" }'
}

# io_grown MAJ:MIN BEFORE CGROUP...: each cgroup has had reads served on
# MAJ:MIN since the io_snapshot BEFORE.
io_grown() {
	_ig_dev=$1 _ig_before=$2
	shift 2
	io_snapshot "$_ig_dev" "$@" | awk -v before="$_ig_before" '{ split(before, b); for (i = 2; i <= NF; i++) if ($i <= b[i]) exit 1 }'
}

cg_remove() { # PATH: remove a cgroup (must be empty)
	rmdir "$CGROOT/$1"
}

# ---- misc ----

# within SECONDS CMD [ARGS...]: retry CMD every 0.1 s until it succeeds;
# false if it has not after SECONDS. SECONDS is for a Debian kernel: a
# slower one (the debug kernel) gets $IOBAND_TIMESCALE times longer. For
# a failure that says more than wait_for's: within N CMD || fail "...".
within() {
	_wi_secs=$(scaled "$1")
	shift
	poll "$_wi_secs" 0.1 "$@"
}

# wait_for SECONDS CMD [ARGS...]: within, or fail naming CMD.
wait_for() {
	_wf_secs=$1
	shift
	within "$_wf_secs" "$@" || fail "timed out waiting for: $*"
}

# wait_io DEV [CGROUP]: wait until IO completes on DEV (or, given CGROUP,
# until CGROUP's io.stat on DEV counts some more): a fio started in the
# background is under way. Up to 10 s (wait_for's, scaled).
wait_io() {
	_wio_0=$(_ios "$@")
	wait_for 10 _ios_above "$_wio_0" "$@"
}
_ios() { # DEV [CGROUP]: IOs completed on DEV (by CGROUP)
	if [ -n "${2:-}" ]; then
		sed -n "s/^$(dev_majmin "$1") .*rios=\([0-9]*\) wios=\([0-9]*\).*/\1 \2/p" "$CGROOT/$2/io.stat" |
			awk '{ n += $1 + $2 } END { print n + 0 }'
	else
		awk '{ print $1 + $5 }' "/sys/dev/block/$(dev_majmin "$1")/stat"
	fi
}
_ios_above() { [ "$(_ios "$2" "${3:-}")" -gt "$1" ]; } # N DEV [CGROUP]

# stop_fio PID...: end these fio parents (background jobs of this shell,
# fio itself or a cg_run subshell whose child it is) the way Ctrl-C does
# (fio stops its jobs once their bios complete; signalling the jobs
# themselves once left one stuck), and wait for them, so that the
# devices they had open can be removed. A background job of a
# non-interactive shell ignores SIGINT, so the subshell is not the one
# to signal. The harness's timeout bounds the wait.
stop_fio() {
	for _pid; do
		if [ "$(cat "/proc/$_pid/comm" 2>/dev/null)" = fio ]; then
			kill -INT "$_pid" 2>/dev/null || :
		else
			# shellcheck disable=SC2046 # one pid a word
			kill -INT $(children_of "$_pid") 2>/dev/null || :
		fi
	done
	wait "$@" 2>/dev/null || :
}

# ---- processes ----
# proc_stats, proc_table, children_of, uptime_cs, poll: lib-proc.sh.
# shellcheck source=lib-proc.sh
. /ioband/lib-proc.sh

# has_children PID N: PID has N child processes or more (for wait_for).
has_children() { [ "$(children_of "$1" | wc -l)" -ge "$2" ]; }

# move_jobs FIO_PID CGROUP...: wait for fio's job processes (forked, one
# per cgroup) and move each into its cgroup, in order. A cgroup holds
# processes, not threads, and one fio of many jobs takes far less of the
# guest's CPUs than as many fios.
move_jobs() {
	_mj_fio=$1
	shift
	wait_for 120 has_children "$_mj_fio" $#
	_mj_jobs=$(children_of "$_mj_fio")
	_mj_n=$(echo "$_mj_jobs" | wc -l)
	[ "$_mj_n" = $# ] || fail "fio $_mj_fio has $_mj_n job processes, not $#"
	for _mj_p in $_mj_jobs; do
		echo "$_mj_p" >"$CGROOT/$1/cgroup.procs" ||
			{ head -n 5 "/proc/$_mj_p/status" 2>&1; fail "cannot move fio job $_mj_p into $1"; }
		shift
	done
}

# ---- slower kernels ----
# IOBAND_TIMESCALE (from the kernel command line, see init) is how many
# times slower than Debian's the guest's kernel is: 4 on the KASAN and
# lockdep kernel of `make check-debug`, else 1.

# slow_kernel: true on such a kernel.
slow_kernel() { [ "${IOBAND_TIMESCALE:-1}" -gt 1 ]; }

# scaled SECONDS: SECONDS on a Debian kernel, times IOBAND_TIMESCALE.
scaled() { echo $(($1 * ${IOBAND_TIMESCALE:-1})); }

# perf_check ASSERTION [ARGS...]: an assertion on throughput or shares
# under a capped device. On a slow kernel the emulated CPU, not the
# device, bounds the IO, so the figures measure the CPU: a miss there is
# printed, not failed (the IO itself, the tables and the kernel log are
# still checked).
perf_check() {
	if ! slow_kernel; then
		"$@"
		return
	fi
	print_miss "slow kernel" "$@"
}

# print_miss WHY ASSERTION [ARGS...]: runs the assertion and prints what
# it would have failed on, prefixed "WHY, not held to:"; never fails.
print_miss() {
	_pm_why=$1
	shift
	_pm_out=$( ("$@") 2>&1) || echo "$_pm_why, not held to: ${_pm_out#FAIL: }"
	return 0
}

# kmsg_all: the whole kernel log (busybox dmesg alone shows its last 16 KiB).
# shellcheck source=lib-kmsg.sh
. /ioband/lib-kmsg.sh

have_iobandctl() { command -v iobandctl >/dev/null 2>&1; }

# kernel_series: 6.1 or 6.12
kernel_series() { echo "${SERIES:-}"; }
# shellcheck source=/dev/null
[ ! -f /ioband/kernel.env ] || . /ioband/kernel.env

# klog_mark: write a mark into the kernel log and print its id;
# klog_since ID: the kernel log lines logged after that mark. (Never
# clear the log with dmesg -c: the harness scans each test's window.)
klog_mark() {
	_km_id="mark-$$-$(cut -d' ' -f1 /proc/uptime)"
	kmsg_mark begin "$_km_id"
	echo "$_km_id"
}
klog_since() { kmsg_window "$1"; }
