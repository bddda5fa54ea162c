# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; option lists
# bench/flip/guest.sh: how fast a change of weight takes effect (issue 42,
# item 5), the guest side of bench/run-flip, which runs it after a header
# and bench/fairness/lib.sh (the device, the calibration, the peers'
# settings are that benchmark's).
#
# Two cgroups, flip/g-a and flip/g-b, read 4 KiB at random, O_DIRECT,
# 4 jobs x iodepth 32 each, on a null_blk capped at 16 MiB/s, at weights
# 50:200 (1:4). After BENCH_FLIP_HOLD s, one write makes them 4:1 (a's
# weight to 800, or for blk-throttle both groups' io.max), and the run
# goes on BENCH_FLIP_AFTER s. Every BENCH_FLIP_PERIOD s the guest samples
# each group's bytes read at the null_blk (its io.stat there: what reached
# the device, whichever controller decided above it). The host
# (bench/run-flip) computes, from these, when a's share of the last
# second crossed the midpoint. The variants, in an order shuffled with
# BENCH_SEED:
#
#   ioband-message   ioband (weight policy), `dmsetup message ... weight`
#   ioband-ioweight  ioband under `iobandctl follow --weights-from
#                    cgroup:flip`, a's io.weight written as systemd's
#                    set-property IOWeight= writes it: "default 800"
#   iocost           blk-iocost on the null_blk (the bench's `iocost`:
#                    the model calibrated in this boot, BENCH_IOCOST_QOS),
#                    a's io.weight written "default 800"
#   bfq              BFQ (the bench's `bfq:nr:ll0`), a's io.bfq.weight 800
#   throttle         blk-throttle: io.max rbps of a and b, 1/5 and 4/5 of
#                    the calibrated 4 KiB random-read rate, written 4/5 and
#                    1/5 (a's first)
#
# Printed, besides lib.sh's C, V and G lines (prefix @@BENCH ... flip):
#   @@FLIP W <var> write=<t> return=<t> how=<words>   the change: uptime
#                  before its command and after it returned
#   @@FLIP S <var> <t> <a's rbytes> <b's rbytes>   a sample (uptime, s)
#   @@FLIP K <var> skipped=<why>                   a peer this kernel lacks

: "${BENCH_FLIP_HOLD:=4}"     # s at 1:4 once both groups read, before the change
: "${BENCH_FLIP_AFTER:=5}"    # s sampled after it
: "${BENCH_FLIP_PERIOD:=0.05}" # s asked between samples (the reads and the sleep add 10-20 ms)
: "${BENCH_FLIP_VARIANTS:=ioband-message ioband-ioweight iocost bfq throttle}"
BENCH_CGP=flip/g # one parent: follow's --weights-from cgroup:flip
FLIP_A=50 FLIP_B=200 FLIP_A_NEW=800

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"
# Every message on the console while it runs: a boot of this benchmark
# once hung in a soft lockup at a variant's teardown (as boots of make
# bench have, bench/results/RESULTS.md), and under `quiet` the stacks of
# the RCU stall report never reach the console that outlives the guest.
FLIP_PRINTK=$(cut -f1 /proc/sys/kernel/printk)
echo 7 >/proc/sys/kernel/printk
bench_nullb bf-flip 512 mbps=16
bench_calibrate
bench_groups "a:$FLIP_A b:$FLIP_B"
JOB_a="--rw=randread --bs=4k --numjobs=4 --iodepth=32"
JOB_b=$JOB_a
bench_config flip

# flip_rbytes GRP: FLIP_RB = the group's bytes read at the null_blk, with
# the shell's builtins only (twenty samples a second must not load the
# emulated CPUs that the guest's IO runs on).
flip_rbytes() {
	FLIP_RB=0
	while read -r _fr_mm _fr_rest; do
		[ "$_fr_mm" = "$NB_MAJMIN" ] || continue
		for _fr_kv in $_fr_rest; do
			case $_fr_kv in rbytes=*) FLIP_RB=${_fr_kv#rbytes=} ;; esac
		done
	done <"$CGROOT/$BENCH_CGP-$1/io.stat"
}

# flip_sampler FILE: a sample a line into FILE until flip.stop exists.
flip_sampler() {
	while [ ! -e flip.stop ]; do
		read -r _fs_t _fs_idle </proc/uptime
		flip_rbytes a
		_fs_a=$FLIP_RB
		flip_rbytes b
		echo "$_fs_t $_fs_a $FLIP_RB" >>"$1"
		sleep "$BENCH_FLIP_PERIOD"
	done
}

# flip_followed: follow has read the subtree (it attaches flip itself).
flip_followed() { dmsetup table "$BENCH_DM" | grep -q " $(cg_id flip):"; }

# flip_change VAR: the change of weights from 1:4 to 4:1, as VAR makes it.
flip_change() {
	case $1 in
	ioband-message) dmsetup message "$BENCH_DM" 0 weight "$(cg_id "$BENCH_CGP-a"):$FLIP_A_NEW" ;;
	ioband-ioweight | iocost) echo "default $FLIP_A_NEW" >"$CGROOT/$BENCH_CGP-a/io.weight" ;;
	bfq) echo "$FLIP_A_NEW" >"$CGROOT/$BENCH_CGP-a/io.bfq.weight" ;;
	throttle)
		echo "$NB_MAJMIN rbps=$FLIP_HIGH" >"$CGROOT/$BENCH_CGP-a/io.max"
		echo "$NB_MAJMIN rbps=$FLIP_LOW" >"$CGROOT/$BENCH_CGP-b/io.max"
		;;
	esac
}

# flip_how VAR: the change in words, for the table.
flip_how() {
	case $1 in
	ioband-message) echo "dmsetup message $BENCH_DM 0 weight <a>:$FLIP_A_NEW" ;;
	ioband-ioweight | iocost) echo "echo default $FLIP_A_NEW > a/io.weight" ;;
	bfq) echo "echo $FLIP_A_NEW > a/io.bfq.weight" ;;
	throttle) echo "io.max a rbps=$FLIP_HIGH then b rbps=$FLIP_LOW" ;;
	esac
}

# flip_variant VAR: one variant: set up, 1:4, the change, 4:1, undone.
flip_variant() {
	case $1 in
	ioband-message | ioband-ioweight) bench_parse ioband:weight ;;
	iocost) bench_parse iocost ;;
	bfq) bench_parse bfq:nr:ll0 ;;
	throttle) bench_parse throttle ;;
	*) fail "unknown variant $1" ;;
	esac
	if ! _fv_why=$(bench_ctl_avail); then
		log "flip: $1 skipped: $_fv_why"
		echo "@@FLIP K $1 skipped=$(words "$_fv_why")"
		return 0
	fi
	bench_create flip "$1"
	_fv_follower=
	if [ "$1" = ioband-ioweight ]; then
		echo "default $FLIP_A" >"$CGROOT/$BENCH_CGP-a/io.weight"
		echo "default $FLIP_B" >"$CGROOT/$BENCH_CGP-b/io.weight"
		iobandctl follow --weights-from cgroup:flip "$BENCH_DM" 2>follow.log &
		_fv_follower=$!
		within 10 flip_followed || { cat follow.log; fail "iobandctl follow never attached flip"; }
	fi
	if [ "$1" = throttle ]; then
		_fv_rate=$(bench_group_rate a r)
		FLIP_HIGH=$((_fv_rate * 4 / 5)) FLIP_LOW=$((_fv_rate / 5))
	fi
	set -- "$1" $BENCH_TARGETS
	log "flip $1: $(dmsetup table "${2#/dev/mapper/}")"
	BENCH_PIDS=
	for _n in $BENCH_GROUPS; do
		# shellcheck disable=SC2046 # JOB_g is a list of options
		cg_run "$BENCH_CGP-$_n" fio --name="$_n" --filename="$2" --direct=1 \
			--ioengine=libaio --time_based --runtime=120 --norandommap \
			--randrepeat=0 $(bench_job "$_n") --output=/dev/null &
		BENCH_PIDS="$BENCH_PIDS $!"
	done
	for _n in $BENCH_GROUPS; do wait_io "$2" "$BENCH_CGP-$_n"; done
	rm -f flip.stop flip.samples
	flip_sampler flip.samples &
	_fv_sampler=$!
	sleep "$BENCH_FLIP_HOLD"
	read -r _fv_t0 _fv_idle </proc/uptime
	flip_change "$1" || fail "flip $1: the change failed"
	read -r _fv_t1 _fv_idle </proc/uptime
	sleep "$BENCH_FLIP_AFTER"
	touch flip.stop
	wait "$_fv_sampler" || :
	echo "@@FLIP W $1 write=$_fv_t0 return=$_fv_t1 how=$(words "$(flip_how "$1")")"
	sed "s/^/@@FLIP S $1 /" flip.samples
	stop_fio $BENCH_PIDS
	BENCH_PIDS=
	if [ -n "$_fv_follower" ]; then
		kill "$_fv_follower"
		wait "$_fv_follower" 2>/dev/null || :
		for _n in $BENCH_GROUPS; do echo "default 100" >"$CGROOT/$BENCH_CGP-$_n/io.weight"; done
	fi
	# bench_ctl_off puts back 100 and max; bench_ctl_on sets 1:4 again.
	bench_destroy
}

for _var in $(bench_shuffle flip $BENCH_FLIP_VARIANTS); do
	flip_variant "$_var"
done
bench_cleanup_groups
cg_remove flip
remove_nullb bf-flip
echo "$FLIP_PRINTK" >/proc/sys/kernel/printk
