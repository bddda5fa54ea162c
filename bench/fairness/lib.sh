# shellcheck shell=sh disable=SC2317,SC2154 # functions called by the scenarios
# Guest side of the benchmark (busybox sh). bench/run-fairness builds one
# guest test per scenario file by concatenating: a header (`. /ioband/lib.sh`
# and the BENCH_* parameters), this file, then bench/fairness/<scenario>.sh.
# Nothing here decides anything: it runs the workloads and prints raw
# figures on the console, one per line, each with the prefix `@@BENCH`; the
# host computes the shares, the tables and the plots.
#
# A scenario sets up its device and groups, then runs its workload once per
# variant (bench_variants, bench_each), every variant on the same null_blk
# and in the same boot, in an order shuffled with BENCH_SEED. A variant is
# a spec:
#   none                 dm-linear over the null_blk, nothing else
#   bfq[:nr][:ll0][:sg]  BFQ on the null_blk, io.bfq.weight per group; nr:
#                        nr_requests above the IOs outstanding; ll0:
#                        low_latency 0; sg: strict_guarantees 1
#   iocost[:tight|:loose|:pinned]  blk-iocost on the null_blk: io.cost.model
#                        calibrated in this boot (bench_calibrate), io.cost.qos
#                        BENCH_IOCOST_QOS (or _TIGHT, _LOOSE; pinned: the vrate
#                        held at 100% and no latency target), io.weight
#   throttle[:P]         io.max per group: its weight's share of the rate
#                        measured in this boot (P % of it)
#   ioband:POLICY[:IO_LIMIT]  an ioband table (IO_LIMIT 0 or none: automatic)
#   bfq@dm, iocost@dm, throttle@dm   the peer set on the dm device itself
#                        (the dm-linear), not on the null_blk below
# The variant's name is its spec with ':' and '@' turned into '-'.
#
#   @@BENCH C <scen> key=value...              scenario setup
#   @@BENCH V <scen> <var> key=value...        a variant (spec, kind, level, tables, wbt, ctl...)
#   @@BENCH G <scen> <var> <grp> weight=W id=ID   a group
#   @@BENCH S <scen> <var> <t> cpu <user nice system idle iowait irq softirq steal>
#   @@BENCH S <scen> <var> <t> disk <rsect> <wsect> <rios> <wios>  (the null_blk)
#   @@BENCH S <scen> <var> <t> cg <grp> <maj:min> key=value...
#                  the group's io.stat line for the null_blk or one of the dm
#                  devices, every key as the kernel prints it (<grp> _root: the
#                  root cgroup's, where iocost prints cost.vrate)
#   @@BENCH S <scen> <var> <t> dom <dev> key=value...   ioband's stats message:
#   @@BENCH S <scen> <var> <t> gs <grp> <dev> key=value...  the domain, each group
#   @@BENCH B <scen> <var> <grp> <t>           a group's fio starts
#   @@BENCH E <scen> <var> <grp> <t> <exit status>   a group's fio ended
#   @@BENCH L <scen> <var> <grp> <ms>:<KiB/s>,...  the group's fio bandwidth
#                  log (--write_bw_log, --log_avg_msec=BENCH_LOG_MS, summed over
#                  its jobs; ms since the end of fio's ramp)
#   @@BENCH F <scen> <var> <grp> <fio JSON on one line>
#   @@BENCH X <scen> <var> key=value...        end of a variant
#
# <t> is seconds since the workload started (guest uptime).

: "${BENCH_RUNTIME:=10}"   # fio time_based runtime of a direct-IO run, s (after the ramp)
: "${BENCH_RAMP:=2}"       # fio ramp_time, s (not counted by fio nor by the host)
: "${BENCH_SEED:=0}"       # shuffles each scenario's variants (0: in the order given)
: "${BENCH_CAL_RUNTIME:=2}" # s per calibration job (after 1 s of ramp)
: "${BENCH_BW_SIZE_MB:=4}" # buffered writers: MiB per fio job
: "${BENCH_BW_JOBS:=50}"   # seed004, bw2: fio jobs per cgroup
: "${BENCH_BW_BS:=64k}"    # buffered writers' block size (the seed: fio's default, 4k)
: "${BENCH_BW_DIRTY_MB:=64}" # buffered scenarios: vm.dirty_bytes (a quarter: background)
: "${BENCH_LOG_MS:=500}"   # fio bandwidth log interval, ms (0: no log)
: "${BENCH_WBT:=0}"        # wbt_lat_usec of the null_blk in every variant (0: off)
: "${BENCH_ONLY:=}"        # if set, only the variants of these specs or kinds run
: "${BENCH_DEFAULT_SPEC:=100}" # the default group's spec in ioband tables (range-bw: 0:0)
# The variants: every peer's sweep, and each peer's designated best (see
# bench/README.md for why) for the loads that do not run the whole sweep.
: "${BENCH_SWEEP:=none bfq bfq:nr bfq:nr:ll0 bfq:nr:ll0:sg iocost:tight iocost iocost:loose throttle ioband:weight ioband:weight-iosize}"
: "${BENCH_BEST:=none bfq:nr:ll0 iocost throttle ioband:weight}"
: "${BENCH_AT_DM:=bfq@dm iocost@dm throttle@dm}"
: "${BENCH_IOCOST_QOS:=rpct=95 rlat=20000 wpct=95 wlat=20000 min=25 max=100}"
: "${BENCH_IOCOST_QOS_TIGHT:=rpct=95 rlat=10000 wpct=95 wlat=10000 min=25 max=100}"
: "${BENCH_IOCOST_QOS_LOOSE:=rpct=95 rlat=50000 wpct=95 wlat=50000 min=25 max=100}"
BENCH_IOCOST_QOS_PINNED="rpct=0 rlat=0 wpct=0 wlat=0 min=100 max=100"

BENCH_DM=benchdev
BENCH_CGP=bf
BENCH_LAYOUT=single # or halves: two targets over the two halves of the null_blk
BENCH_BUFFERED=0    # 1: a scenario of buffered writers (bench_buffered)
BENCH_DIRTY=''      # what bench_dirty_limits set

bench() { echo "@@BENCH $*"; }

# words LIST: the words of LIST joined by commas (for one key=value field).
words() { printf '%s\n' "$*" | sed 's/^  *//; s/  *$//; s/   */ /g' | tr ' ' ,; }

# cost.wait, cost.indebt and cost.indelay appear in io.stat only with
# blk-cgroup's debug statistics on (they cost a few counters per IO, the
# same for every variant).
if [ -w /sys/module/blk_cgroup/parameters/blkcg_debug_stats ]; then
	echo 1 >/sys/module/blk_cgroup/parameters/blkcg_debug_stats
fi

# bench_nullb NAME SIZE_MIB ATTR=VALUE...: the device under test.
# null_blk splits requests at its max_sectors (255 sectors, on 6.1 and 6.12): a
# 256 KiB bio reaches it as 127.5 + 127.5 + 1 KiB. Left so on purpose: with
# mbps= a period of 20 ms grants 320 KiB at 16 MiB/s, 640 KiB at 32, and a
# request that does not fit waits for the next period; small pieces waste
# little of it, and a request larger than a period's grant is never served at
# all (mkfs's whole-device discard hung so: mkfs runs with nodiscard).
bench_nullb() {
	NB_NAME=$1 NB_ARGS=$*
	NB_DEV=$(make_nullb "$@")
	NB_MAJMIN=$(dev_majmin "$NB_DEV")
	NB_SYS=/sys/block/$(basename "$(readlink -f "$NB_DEV")")
	NB_SECTORS=$(dev_sectors "$NB_DEV")
	NB_MBPS=$(cat "$NULLB_CONFIGFS/$NB_NAME/mbps")
	bench_wbt
}

# bench_wbt: writeback throttling of the null_blk set to BENCH_WBT, the same
# for every variant (BFQ and iocost turn it off when they start, a switch
# back to `none` may turn it on again); BENCH_WBT_NOW: what it reads back.
bench_wbt() {
	BENCH_WBT_NOW=-
	[ -e "$NB_SYS/queue/wbt_lat_usec" ] || return 0
	echo "$BENCH_WBT" >"$NB_SYS/queue/wbt_lat_usec" || fail "cannot set wbt_lat_usec of $NB_SYS"
	BENCH_WBT_NOW=$(cat "$NB_SYS/queue/wbt_lat_usec")
}

# bench_calibrate: what the null_blk delivers, measured in this boot under
# no controller as iocost's own coefficient generator does
# (tools/cgroup/iocost_coef_gen.py): sequential bytes/s with 64 KiB IOs,
# sequential and random 4 KiB IOPS, for reads and writes, O_DIRECT at
# iodepth 64 on the raw null_blk. Sets CAL_rbps, CAL_rseqiops, CAL_rrandiops,
# CAL_wbps, CAL_wseqiops, CAL_wrandiops (kept in /tmp for the other
# scenarios of this boot with the same cap). iocost's model and blk-throttle's
# caps are computed from these, not from the nominal cap.
bench_calibrate() {
	_cal=/tmp/bench-calibration-$NB_MBPS
	if [ ! -s "$_cal" ]; then
		log "calibrating a null_blk capped at $NB_MBPS MiB/s"
		fio --output-format=terse --terse-version=3 --output=cal.terse \
			--filename="$NB_DEV" --direct=1 --ioengine=libaio --iodepth=64 \
			--time_based --runtime="$BENCH_CAL_RUNTIME" --ramp_time=1 \
			--norandommap --randrepeat=0 \
			--name=rbps --rw=read --bs=64k \
			--name=rseqiops --stonewall --rw=read --bs=4k \
			--name=rrandiops --stonewall --rw=randread --bs=4k \
			--name=wbps --stonewall --rw=write --bs=64k \
			--name=wseqiops --stonewall --rw=write --bs=4k \
			--name=wrandiops --stonewall --rw=randwrite --bs=4k >cal.err 2>&1 ||
			{ cat cal.err; fail "the calibration's fio failed"; }
		# terse v3: 3 job name, 7/8 read KiB/s and IOPS, 48/49 write's.
		awk -F';' '{
			bw = ($3 ~ /^r/) ? $7 : $48; iops = ($3 ~ /^r/) ? $8 : $49
			printf "%s=%d ", $3, ($3 ~ /bps$/) ? bw * 1024 : iops
		}' cal.terse >"$_cal"
	fi
	for _kv in $(cat "$_cal"); do eval "CAL_${_kv%%=*}=${_kv#*=}"; done
	[ "${CAL_rbps:-0}" -gt 0 ] && [ "${CAL_wrandiops:-0}" -gt 0 ] || fail "calibration gave nothing: $(cat "$_cal")"
	BENCH_CALIBRATION=$(cat "$_cal")
}

# bench_groups "name:spec ...": the cgroups (bf-<name>) and their specs
# (a weight, or the policy's weight:min:max; the peers take its first field).
bench_groups() {
	BENCH_GROUPS=
	BENCH_IDMAP=
	for _bg in $1; do
		_n=${_bg%%:*}
		cg_create "$BENCH_CGP-$_n"
		eval "W_$_n=${_bg#*:}"
		BENCH_GROUPS="$BENCH_GROUPS $_n"
		BENCH_IDMAP="$BENCH_IDMAP $(cg_id "$BENCH_CGP-$_n")=$_n"
	done
}

# bench_weight GRP: the group's weight (the first field of its spec).
bench_weight() {
	eval "_bw_w=\$W_$1"
	echo "${_bw_w%%:*}"
}

bench_job() { eval "echo \"\$JOB_$1\""; } # GRP: its fio options

# bench_job_opt GRP OPTION DEFAULT: the value of --OPTION= in the group's job.
bench_job_opt() {
	_bjo=$(bench_job "$1" | tr ' ' '\n' | sed -n "s/^--$2=//p" | tail -n 1)
	echo "${_bjo:-$3}"
}

# bench_outstanding: the IOs the groups' fio jobs keep outstanding in all
# (numjobs x iodepth), or 0 when a group writes through the page cache
# (there writeback decides).
bench_outstanding() {
	_bo=0
	for _n in $BENCH_GROUPS; do
		if [ "$BENCH_BUFFERED" = 1 ]; then
			case " $(bench_job "$_n") " in *" --direct=1 "*) ;; *) echo 0; return ;; esac
		fi
		_bo=$((_bo + $(bench_job_opt "$_n" numjobs 1) * $(bench_job_opt "$_n" iodepth 1)))
	done
	echo "$_bo"
}

# bench_group_rate GRP r|w: bytes/s the device delivered in the calibration
# for the group's kind of IO: 4 KiB random IOPS x 4 KiB for IOs up to 16 KiB,
# else the sequential 64 KiB rate (buffered writeback: large IOs).
bench_group_rate() {
	_bs=$(bench_job_opt "$1" bs 1m)
	case $_bs in
	512 | 1k | 2k | 4k | 8k | 16k) eval "echo \$((CAL_${2}randiops * 4096))" ;;
	*) eval "echo \$CAL_${2}bps" ;;
	esac
}

# bench_parse SPEC: a variant's spec, into BV_SPEC, BV_KIND (linear, bfq,
# iocost, throttle, ioband), BV_LEVEL (disk: set on the null_blk; dm: on the
# dm device), BV_OPTS (after the kind, colon-separated), BV_POLICY and
# BV_IO_LIMIT (ioband's), BV_VAR (the variant's name).
bench_parse() {
	BV_SPEC=$1 BV_LEVEL=disk
	_bp=$1
	case $_bp in *@dm) BV_LEVEL=dm _bp=${_bp%@dm} ;; esac
	BV_KIND=${_bp%%:*} BV_OPTS=
	[ "$BV_KIND" = "$_bp" ] || BV_OPTS=${_bp#*:}
	[ "$BV_KIND" != none ] || BV_KIND=linear
	BV_VAR=$(echo "$1" | tr ':@' '--')
	BV_POLICY=- BV_IO_LIMIT=0
	if [ "$BV_KIND" = ioband ]; then
		BV_POLICY=${BV_OPTS%%:*}
		case $BV_OPTS in *:*) BV_IO_LIMIT=${BV_OPTS#*:} ;; esac
	fi
}

# bench_has_opt OPT: the variant's spec has OPT among its options.
bench_has_opt() { case ":$BV_OPTS:" in *":$1:"*) return 0 ;; esac; return 1; }

# bench_table LOWER SECTORS: the dm table of a target over LOWER: ioband's
# (domain "bench": every target of a variant in one bandwidth domain) or
# dm-linear's (the peers are configured on the null_blk below, or on it).
bench_table() {
	if [ "$BV_KIND" != ioband ]; then
		echo "0 $2 linear $1 0"
		return
	fi
	_t="0 $2 ioband $1 bench 0 $BV_IO_LIMIT cgroup $BV_POLICY 0 :$BENCH_DEFAULT_SPEC"
	for _n in $BENCH_GROUPS; do
		_t="$_t $(cg_id "$BENCH_CGP-$_n"):$(eval echo "\$W_$_n")"
	done
	echo "$_t"
}

# bench_dm_add NAME TABLE top|lower: a dm device; the top ones are what the
# workload uses (BENCH_TARGETS). BENCH_DM_NAMES: all, the last made first.
bench_dm_add() {
	dm_create "$1" "$2" >/dev/null
	BENCH_DM_NAMES="$1 $BENCH_DM_NAMES"
	[ "$3" = lower ] || BENCH_TARGETS="$BENCH_TARGETS /dev/mapper/$1"
	[ "$BV_KIND" != ioband ] || [ "$3" = lower ] || BENCH_IOBAND_DEVS="$BENCH_IOBAND_DEVS $1"
}

# bench_devices_up: the variant's dm devices. BENCH_LAYOUT single: one target
# over the whole null_blk; halves (seed 004's two devices in one domain): two
# dm-linear devices over its two halves and, for ioband, an ioband target
# over each of them (ioband maps sector 0 to sector 0: no offset).
bench_devices_up() {
	BENCH_DM_NAMES='' BENCH_TARGETS='' BENCH_IOBAND_DEVS=''
	case $BENCH_LAYOUT in
	single) bench_dm_add "$BENCH_DM" "$(bench_table "$NB_DEV" "$NB_SECTORS")" top ;;
	halves)
		_half=$((NB_SECTORS / 2))
		_kind=lower
		[ "$BV_KIND" = ioband ] || _kind=top
		bench_dm_add benchh0 "0 $_half linear $NB_DEV 0" "$_kind"
		bench_dm_add benchh1 "0 $_half linear $NB_DEV $_half" "$_kind"
		if [ "$BV_KIND" = ioband ]; then
			bench_dm_add "${BENCH_DM}0" "$(bench_table /dev/mapper/benchh0 "$_half")" top
			bench_dm_add "${BENCH_DM}1" "$(bench_table /dev/mapper/benchh1 "$_half")" top
		fi
		;;
	*) fail "unknown BENCH_LAYOUT $BENCH_LAYOUT" ;;
	esac
	BENCH_TARGET_MAJMINS=
	for _t in $BENCH_TARGETS; do BENCH_TARGET_MAJMINS="$BENCH_TARGET_MAJMINS $(dev_majmin "$_t")"; done
}

bench_devices_down() {
	for _d in $BENCH_DM_NAMES; do dm_remove "$_d"; done
	BENCH_DM_NAMES='' BENCH_TARGETS='' BENCH_IOBAND_DEVS=''
}

# bench_ctl_majmins: the devices the variant's controller is set on.
bench_ctl_majmins() {
	if [ "$BV_LEVEL" = dm ]; then echo "$BENCH_TARGET_MAJMINS"; else echo "$NB_MAJMIN"; fi
}

# bench_ctl_avail: succeeds if this kernel has the variant's controller,
# else prints why not.
bench_ctl_avail() {
	_ca_g=${BENCH_GROUPS# }
	_ca_cg=$CGROOT/$BENCH_CGP-${_ca_g%% *}
	case $BV_KIND in
	linear | ioband) ;;
	bfq)
		grep -qw bfq "$NB_SYS/queue/scheduler" || { echo "no bfq in $NB_SYS/queue/scheduler"; return 1; }
		[ -e "$_ca_cg/io.bfq.weight" ] || { echo "no io.bfq.weight"; return 1; }
		;;
	iocost)
		if [ ! -e "$CGROOT/io.cost.qos" ] || [ ! -e "$CGROOT/io.cost.model" ]; then
			echo "no io.cost.qos/io.cost.model in $CGROOT"
			return 1
		fi
		[ -e "$_ca_cg/io.weight" ] || { echo "no io.weight"; return 1; }
		[ -n "${CAL_rbps:-}" ] || { echo "no calibration (an uncapped device?)"; return 1; }
		;;
	throttle)
		[ -e "$_ca_cg/io.max" ] || { echo "no io.max"; return 1; }
		[ -n "${CAL_rbps:-}" ] || { echo "no calibration (an uncapped device?)"; return 1; }
		;;
	*) echo "unknown controller"; return 1 ;;
	esac
}

# bench_try CMD...: run CMD; on failure add its message to BENCH_CTL
# (a peer on the dm device may refuse a setting: that is a result).
bench_try() {
	if ! _bt_err=$("$@" 2>&1); then
		BENCH_CTL="$BENCH_CTL;refused:$(echo "$_bt_err" | tail -n 1)"
		return 1
	fi
}

bench_write() { echo "$2" >"$1"; } # FILE VALUE

# bench_ctl_on: configure the variant's peer controller (bench_parse) on the
# null_blk or on the dm device, and the groups' cgroups; BENCH_CTL says what
# was set, read back from the kernel's files.
bench_ctl_on() {
	BENCH_CTL=
	BENCH_SAVED=
	case $BV_KIND in
	bfq)
		for _mm in $(bench_ctl_majmins); do
			_q=/sys/dev/block/$_mm/queue
			if [ ! -e "$_q/scheduler" ]; then
				# 6.12: a bio-based device (dm) has no scheduler file at all.
				BENCH_CTL="$BENCH_CTL;$_mm:no_queue/scheduler"
				continue
			fi
			_old=$(sed 's/.*\[\(.*\)\].*/\1/' "$_q/scheduler")
			BENCH_SAVED="$BENCH_SAVED $_mm=$_old:$(cat "$_q/nr_requests")"
			if bench_try bench_write "$_q/scheduler" bfq; then
				if bench_has_opt nr; then
					_out=$(bench_outstanding)
					_nr=$((2 * _out))
					[ "$_out" -gt 0 ] || _nr=2048 # writeback: as many as BFQ takes
					[ "$_nr" -ge 256 ] || _nr=256
					[ "$_nr" -le 2048 ] || _nr=2048 # blk-mq's MAX_SCHED_RQ
					bench_try bench_write "$_q/nr_requests" "$_nr" || :
				fi
				! bench_has_opt ll0 || bench_try bench_write "$_q/iosched/low_latency" 0 || :
				! bench_has_opt sg || bench_try bench_write "$_q/iosched/strict_guarantees" 1 || :
			fi
			BENCH_CTL="$BENCH_CTL;$_mm:scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$_q/scheduler")"
			BENCH_CTL="$BENCH_CTL;nr_requests=$(cat "$_q/nr_requests")"
			for _t in low_latency strict_guarantees slice_idle; do
				[ ! -e "$_q/iosched/$_t" ] || BENCH_CTL="$BENCH_CTL;$_t=$(cat "$_q/iosched/$_t")"
			done
		done
		for _n in $BENCH_GROUPS; do
			bench_weight "$_n" >"$CGROOT/$BENCH_CGP-$_n/io.bfq.weight" ||
				fail "cannot set io.bfq.weight of $_n"
			BENCH_CTL="$BENCH_CTL;$_n:io.bfq.weight=$(head -n 1 "$CGROOT/$BENCH_CGP-$_n/io.bfq.weight")"
		done
		;;
	iocost)
		_qos=$BENCH_IOCOST_QOS
		! bench_has_opt tight || _qos=$BENCH_IOCOST_QOS_TIGHT
		! bench_has_opt loose || _qos=$BENCH_IOCOST_QOS_LOOSE
		! bench_has_opt pinned || _qos=$BENCH_IOCOST_QOS_PINNED
		for _mm in $(bench_ctl_majmins); do
			bench_try bench_write "$CGROOT/io.cost.model" "$_mm ctrl=user model=linear rbps=$CAL_rbps \
rseqiops=$CAL_rseqiops rrandiops=$CAL_rrandiops wbps=$CAL_wbps wseqiops=$CAL_wseqiops \
wrandiops=$CAL_wrandiops" || :
			bench_try bench_write "$CGROOT/io.cost.qos" "$_mm enable=1 ctrl=user $_qos" || :
			BENCH_CTL="$BENCH_CTL;$_mm:model=$(grep "^$_mm " "$CGROOT/io.cost.model" | cut -d' ' -f2-)"
			BENCH_CTL="$BENCH_CTL;qos=$(grep "^$_mm " "$CGROOT/io.cost.qos" | cut -d' ' -f2-)"
		done
		for _n in $BENCH_GROUPS; do
			bench_weight "$_n" >"$CGROOT/$BENCH_CGP-$_n/io.weight" || fail "cannot set io.weight of $_n"
			BENCH_CTL="$BENCH_CTL;$_n:io.weight=$(head -n 1 "$CGROOT/$BENCH_CGP-$_n/io.weight")"
		done
		;;
	throttle)
		_pct=${BV_OPTS:-100}
		_sum=0
		for _n in $BENCH_GROUPS; do _sum=$((_sum + $(bench_weight "$_n"))); done
		for _mm in $(bench_ctl_majmins); do
			for _n in $BENCH_GROUPS; do
				_w=$(bench_weight "$_n")
				_r=$(($(bench_group_rate "$_n" r) * _pct / 100 * _w / _sum))
				_wr=$(($(bench_group_rate "$_n" w) * _pct / 100 * _w / _sum))
				bench_try bench_write "$CGROOT/$BENCH_CGP-$_n/io.max" "$_mm rbps=$_r wbps=$_wr" || :
				BENCH_CTL="$BENCH_CTL;$_n:io.max=$(grep "^$_mm " "$CGROOT/$BENCH_CGP-$_n/io.max" | cut -d' ' -f1-)"
			done
		done
		;;
	esac
	BENCH_CTL=${BENCH_CTL#;}
}

# bench_ctl_off: undo bench_ctl_on.
bench_ctl_off() {
	case $BV_KIND in
	bfq)
		for _sv in $BENCH_SAVED; do
			_q=/sys/dev/block/${_sv%%=*}/queue
			_sv=${_sv#*=}
			echo "${_sv%%:*}" >"$_q/scheduler" 2>/dev/null || :
			echo "${_sv#*:}" >"$_q/nr_requests" 2>/dev/null || :
		done
		for _n in $BENCH_GROUPS; do echo 100 >"$CGROOT/$BENCH_CGP-$_n/io.bfq.weight"; done
		;;
	iocost)
		for _mm in $(bench_ctl_majmins); do echo "$_mm enable=0" >"$CGROOT/io.cost.qos" 2>/dev/null || :; done
		for _n in $BENCH_GROUPS; do echo 100 >"$CGROOT/$BENCH_CGP-$_n/io.weight"; done
		;;
	throttle)
		for _mm in $(bench_ctl_majmins); do
			for _n in $BENCH_GROUPS; do
				echo "$_mm rbps=max wbps=max riops=max wiops=max" \
					>"$CGROOT/$BENCH_CGP-$_n/io.max" 2>/dev/null || :
			done
		done
		;;
	esac
}

# bench_create SCEN VAR: the variant's devices and controller (bench_parse
# first); bench_destroy undoes it.
bench_create() {
	bench_devices_up
	bench_ctl_on
	bench_wbt
	_tables=
	for _d in $BENCH_DM_NAMES; do _tables="$_tables|$_d:$(dmsetup table "$_d")"; done
	bench V "$1" "$2" "spec=$BV_SPEC" "kind=$BV_KIND" "level=$BV_LEVEL" "policy=$BV_POLICY" \
		"io_limit=$BV_IO_LIMIT" "round=${BV_ROUND:-1}" "up=$(uptime_s)" "wbt=$BENCH_WBT_NOW" \
		"ctl_devs=$(words "$(bench_ctl_majmins)")" "targets=$(words "$BENCH_TARGET_MAJMINS")" \
		"nr_requests=$(cat "$NB_SYS/queue/nr_requests")" \
		"tables=$(words "${_tables#|}")" "ctl=$(words "$BENCH_CTL")"
	for _n in $BENCH_GROUPS; do
		bench G "$1" "$2" "$_n" "weight=$(eval echo "\$W_$_n")" "id=$(cg_id "$BENCH_CGP-$_n")"
	done
}

bench_destroy() {
	bench_devices_down
	bench_ctl_off
	bench_wbt
}

# bench_sample SCEN VAR T0: one sample of every counter. Every variant
# pays the same for it, one dmsetup per dm device (an ioband's stats
# message, the others' status) and one awk: where the guest's CPU is the
# bottleneck (uncapped), processes that only ioband's variants ran each
# second would count against ioband.
bench_sample() {
	: >sample.stats
	for _d in $BENCH_DM_NAMES; do
		case " $BENCH_IOBAND_DEVS " in
		*" $_d "*)
			echo "@dev $_d" >>sample.stats
			dmsetup message "$_d" 0 stats >>sample.stats 2>/dev/null ;;
		*) dmsetup status "$_d" >/dev/null 2>&1 ;;
		esac
	done
	_cgfiles=
	[ ! -e "$CGROOT/io.stat" ] || _cgfiles=$CGROOT/io.stat
	for _n in $BENCH_GROUPS; do _cgfiles="$_cgfiles $CGROOT/$BENCH_CGP-$_n/io.stat"; done
	# Buffered writers: each group's dirty and writeback pages, to show
	# where its backlog is (the page cache or the device below).
	[ "$BENCH_BUFFERED" != 1 ] ||
		for _n in $BENCH_GROUPS; do _cgfiles="$_cgfiles $CGROOT/$BENCH_CGP-$_n/memory.stat"; done
	# shellcheck disable=SC2086 # a list of files
	awk -v p="@@BENCH S $1 $2" -v t0="$3" -v devs="$NB_MAJMIN $BENCH_TARGET_MAJMINS" \
		-v idmap="$BENCH_IDMAP" -v disk="$NB_SYS/stat" -v root="$CGROOT/io.stat" -v cgp="$BENCH_CGP-" '
		BEGIN {
			n = split(devs, d, " ")
			for (i = 1; i <= n; i++) watched[d[i]] = 1
		}
		FILENAME == "/proc/uptime" { t = $1 - t0; next }
		FILENAME == "/proc/stat" && $1 == "cpu" { cpu = $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 " " $9; next }
		FILENAME == disk { dk = $3 " " $7 " " $1 " " $5; next }
		FILENAME ~ /io\.stat$/ && ($1 in watched) {
			g = "_root"
			if (FILENAME != root) { g = FILENAME; sub(/\/io\.stat$/, "", g); sub(/.*\//, "", g); sub(cgp, "", g) }
			line = $2
			for (i = 3; i <= NF; i++) line = line " " $i
			cg[++ncg] = g " " $1 " " line
			next
		}
		FILENAME == "sample.stats" && $1 == "@dev" { dev = $2; next }
		FILENAME == "sample.stats" && NF { stats[++nstats] = dev " " $0; next }
		FILENAME ~ /memory\.stat$/ && ($1 == "file_dirty" || $1 == "file_writeback") {
			g = FILENAME; sub(/\/memory\.stat$/, "", g); sub(/.*\//, "", g); sub(cgp, "", g)
			mem[g] = mem[g] " " $1 "=" $2
			next
		}
		END {
			n = split(idmap, m, " ")
			for (i = 1; i <= n; i++) { split(m[i], kv, "="); name[kv[1]] = kv[2] }
			name["-1"] = "default"
			printf "%s %.2f cpu %s\n", p, t, cpu
			printf "%s %.2f disk %s\n", p, t, dk
			for (i = 1; i <= ncg; i++) printf "%s %.2f cg %s\n", p, t, cg[i]
			for (g in mem) printf "%s %.2f mem %s%s\n", p, t, g, mem[g]
			for (i = 1; i <= nstats; i++) {
				split(stats[i], w, " ")
				if (w[2] ~ /^domain=/) printf "%s %.2f dom %s\n", p, t, stats[i]
				else if (w[2] ~ /^group=/) {
					id = substr(w[2], 7)
					rest = stats[i]; sub(/^[^ ]+ /, "", rest)
					printf "%s %.2f gs %s %s %s\n", p, t, (id in name) ? name[id] : id, w[1], rest
				}
			}
		}' /proc/uptime /proc/stat "$NB_SYS/stat" $_cgfiles sample.stats
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }

since() { awk -v t0="$1" '{ printf "%.2f", $1 - t0 }' /proc/uptime; } # T0

# bench_sampler_start SCEN VAR T0 / bench_sampler_stop: sample every second.
bench_sampler_start() {
	rm -f sampler.stop
	(
		while [ ! -e sampler.stop ]; do
			bench_sample "$@" || true
			sleep 1
		done
		bench_sample "$@" || true
	) &
	SAMPLER_PID=$!
}

bench_sampler_stop() {
	touch sampler.stop
	wait "$SAMPLER_PID" || true
}

# bench_fio_json SCEN VAR GRP FILE: print fio's JSON on one line.
bench_fio_json() {
	if [ -s "$4" ]; then
		bench F "$1" "$2" "$3" "$(tr -d '\n\t' <"$4" | sed 's/   */ /g')"
	else
		bench F "$1" "$2" "$3" "{}"
	fi
}

# bench_start_group SCEN VAR T0 GRP FIO_ARGS...: run fio in the group, in
# the background; print a B line as it starts, an E line when it ends. With
# BENCH_FIO_LOG=1 and BENCH_LOG_MS > 0, fio writes a bandwidth log per job
# (bench_bwlog prints them).
BENCH_FIO_LOG=1
bench_start_group() {
	_s=$1 _v=$2 _t0=$3 _g=$4
	shift 4
	if [ "$BENCH_FIO_LOG" = 1 ] && [ "$BENCH_LOG_MS" -gt 0 ]; then
		set -- "$@" --write_bw_log="bw-$_v-$_g" --log_avg_msec="$BENCH_LOG_MS"
	fi
	bench B "$_s" "$_v" "$_g" "$(since "$_t0")"
	(
		_rc=0
		cg_run "$BENCH_CGP-$_g" fio --name="$_g" --group_reporting \
			--output-format=json --percentile_list=50:99 \
			--output="fio-$_v-$_g.json" "$@" >"fio-$_v-$_g.err" 2>&1 || _rc=$?
		bench E "$_s" "$_v" "$_g" "$(since "$_t0")" "$_rc"
		[ "$_rc" = 0 ] || sed "s/^/fio $_g: /" "fio-$_v-$_g.err"
	) &
	BENCH_PIDS="$BENCH_PIDS $!"
}

# bench_bwlog SCEN VAR GRP: print the group's fio bandwidth logs (one per
# job, KiB/s averaged over BENCH_LOG_MS) summed per interval, as an L line.
bench_bwlog() {
	[ "$BENCH_FIO_LOG" = 1 ] && [ "$BENCH_LOG_MS" -gt 0 ] || return 0
	set -- "$1" "$2" "$3" "bw-$2-$3"
	if ! ls "$4"_bw.*.log >/dev/null 2>&1; then
		bench L "$1" "$2" "$3" -
		return 0
	fi
	# Each line: msec, KiB/s, direction, block size, offset[, priority].
	awk -F', *' -v ms="$BENCH_LOG_MS" -v p="@@BENCH L $1 $2 $3" '
		{ k = int($1 / ms + 0.5); v[k] += $2; if (k > n) n = k }
		END {
			s = ""
			for (k = 1; k <= n; k++) s = s (k > 1 ? "," : "") k * ms ":" (v[k] + 0)
			print p, (s == "" ? "-" : s)
		}' "$4"_bw.*.log
	rm -f "$4"_bw.*.log
}

bench_wait_groups() {
	for _p in $BENCH_PIDS; do wait "$_p" || true; done
	BENCH_PIDS=
}

# bench_end SCEN VAR: the variant's last lines: each group's fio JSON and
# bandwidth log, the devices' status.
bench_end() {
	for _n in $BENCH_GROUPS; do
		bench_fio_json "$1" "$2" "$_n" "fio-$2-$_n.json"
		bench_bwlog "$1" "$2" "$_n"
	done
	_st=
	for _d in $BENCH_DM_NAMES; do _st="$_st|$_d:$(dmsetup status "$_d")"; done
	bench X "$1" "$2" "up=$(uptime_s)" "status=$(words "${_st#|}")"
}

# bench_direct SCEN VAR: one variant of a direct-IO scenario. The workload
# of group g is in $JOB_g (fio options), on the first target.
bench_direct() {
	bench_create "$@"
	_s=$1 _v=$2
	set -- $BENCH_TARGETS
	log "$_s $_v: $(dmsetup table "${1#/dev/mapper/}")"
	BENCH_PIDS=
	_t0=$(uptime_s)
	bench_sampler_start "$_s" "$_v" "$_t0"
	for _n in $BENCH_GROUPS; do
		# shellcheck disable=SC2046 # JOB_g is a list of options
		bench_start_group "$_s" "$_v" "$_t0" "$_n" --filename="$1" \
			--direct=1 --ioengine=libaio --time_based --runtime="$BENCH_RUNTIME" \
			--ramp_time="$BENCH_RAMP" --norandommap --randrepeat=0 \
			$(bench_job "$_n")
	done
	bench_wait_groups
	bench_sampler_stop
	bench_end "$_s" "$_v"
	bench_destroy
}

# bench_filter SPEC...: the specs BENCH_ONLY lets through (all without it):
# a spec is kept if BENCH_ONLY names it, its kind (none, bfq, iocost,
# throttle, ioband) or its kind at its level (bfq@dm).
bench_filter() {
	for _f in "$@"; do
		if [ -z "$BENCH_ONLY" ]; then
			echo "$_f"
			continue
		fi
		_k=${_f%%@*}
		_k=${_k%%:*}
		case " $BENCH_ONLY " in
		*" $_f "* | *" $_k "*) echo "$_f" ;;
		*) case $_f in *@dm) case " $BENCH_ONLY " in *" $_k@dm "*) echo "$_f" ;; esac ;; esac ;;
		esac
	done
}

# bench_shuffle SCEN SPEC...: the specs in the order of this repetition: a
# Fisher-Yates shuffle seeded with BENCH_SEED and the scenario's name (so
# that every scenario of a boot gets its own order); BENCH_SEED 0: as given.
bench_shuffle() {
	_sh_s=$1
	shift
	printf '%s\n' "$@" | awk -v seed="$BENCH_SEED" -v name="$_sh_s" '
		{ a[NR] = $0 }
		END {
			if (seed != 0) {
				# A hash of the name (busybox has no cksum here).
				chars = "abcdefghijklmnopqrstuvwxyz0123456789.-_:@"
				for (i = 1; i <= length(name); i++)
					h = (h * 31 + index(chars, substr(name, i, 1))) % 2147483647
				srand((seed * 7919 + h) % 2147483647)
				for (i = NR; i > 1; i--) { j = int(rand() * i) + 1; t = a[i]; a[i] = a[j]; a[j] = t }
			}
			for (i = 1; i <= NR; i++) print a[i]
		}'
}

# bench_each SCEN FN SPEC...: run the workload once per variant, as FN SCEN
# VAR (FN: bench_direct, or the scenario's own function, which calls
# bench_create and bench_destroy), in a shuffled order; BENCH_ROUNDS > 1
# runs every variant that many times, the order shuffled per round (VAR gets
# .r<round>). A peer that this kernel lacks is skipped with a V line saying
# why.
bench_each() {
	_be_s=$1 _be_fn=$2
	shift 2
	# shellcheck disable=SC2046 # one spec per word
	set -- $(bench_filter "$@")
	_be_round=1
	while [ "$_be_round" -le "${BENCH_ROUNDS:-1}" ]; do
		# shellcheck disable=SC2046
		_be_order=$(bench_shuffle "$_be_s.$_be_round" "$@")
		bench C "$_be_s" "seed=$BENCH_SEED" "order$_be_round=$(words $_be_order)"
		for _be_spec in $_be_order; do
			bench_parse "$_be_spec"
			BV_ROUND=$_be_round
			[ "${BENCH_ROUNDS:-1}" = 1 ] || BV_VAR=$BV_VAR.r$_be_round
			if _be_why=$(bench_ctl_avail); then
				"$_be_fn" "$_be_s" "$BV_VAR"
			else
				log "$_be_s: $_be_spec skipped: $_be_why"
				bench V "$_be_s" "$BV_VAR" "spec=$_be_spec" "kind=$BV_KIND" "level=$BV_LEVEL" \
					"skipped=$(words "$_be_why")"
			fi
		done
		_be_round=$((_be_round + 1))
	done
}

# bench_variants SCEN SPEC...: every variant of a direct-IO scenario.
bench_variants() {
	_bv_s=$1
	shift
	bench_each "$_bv_s" bench_direct "$@"
}

# bench_config SCEN [CHECKS]: print the setup (and the checks the host
# applies, key checks=, see run-fairness).
bench_config() {
	bench C "$1" "kernel=$(uname -r)" "nullb=$NB_MAJMIN" "sectors=$NB_SECTORS" \
		"mbps=$NB_MBPS" "hw_queue_depth=$(cat "$NULLB_CONFIGFS/$NB_NAME/hw_queue_depth")" \
		"max_sectors=$(cat "$NB_SYS/queue/max_sectors_kb")k" \
		"scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$NB_SYS/queue/scheduler")" \
		"wbt=$BENCH_WBT_NOW" "layout=$BENCH_LAYOUT" "buffered=$BENCH_BUFFERED" $BENCH_DIRTY \
		"log_ms=$BENCH_LOG_MS" \
		"runtime=$BENCH_RUNTIME" "ramp=$BENCH_RAMP" "cpus=$(grep -c ^processor /proc/cpuinfo)" \
		"mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
		"blkcg_debug_stats=$(cat /sys/module/blk_cgroup/parameters/blkcg_debug_stats 2>/dev/null || echo -)" \
		${BENCH_CALIBRATION:+$(for _kv in $BENCH_CALIBRATION; do printf 'cal_%s ' "$_kv"; done)} \
		${2:+"checks=$2"}
	for _n in $BENCH_GROUPS; do
		bench C "$1" "group=$_n" "weight=$(eval echo "\$W_$_n")" "job=$(words "$(bench_job "$_n")")"
	done
}

bench_cleanup_groups() {
	for _n in $BENCH_GROUPS; do cg_remove "$BENCH_CGP-$_n"; done
}

# ---- buffered writers (seed004, bw2, bw4211, bwrr)

# bench_dirty_limits: lower the guest's dirty limits to BENCH_BW_DIRTY_MB (a
# quarter of it for background writeback) so that, as on the seed's machine,
# the data written is many times what the page cache may hold dirty: the
# writers are paced by writeback, and writeback by the device.
# bench_dirty_restore puts them back.
bench_dirty_limits() {
	BENCH_OLD_DIRTY="$(cat /proc/sys/vm/dirty_bytes) $(cat /proc/sys/vm/dirty_background_bytes)"
	BENCH_OLD_DIRTY="$BENCH_OLD_DIRTY $(cat /proc/sys/vm/dirty_ratio) $(cat /proc/sys/vm/dirty_background_ratio)"
	echo $((BENCH_BW_DIRTY_MB << 20)) >/proc/sys/vm/dirty_bytes
	echo $((BENCH_BW_DIRTY_MB << 18)) >/proc/sys/vm/dirty_background_bytes
	BENCH_DIRTY="dirty_bytes=$(cat /proc/sys/vm/dirty_bytes) dirty_background_bytes=$(cat /proc/sys/vm/dirty_background_bytes)"
}

bench_dirty_restore() {
	set -- $BENCH_OLD_DIRTY
	echo "$3" >/proc/sys/vm/dirty_ratio
	echo "$4" >/proc/sys/vm/dirty_background_ratio
	[ "$1" = 0 ] || echo "$1" >/proc/sys/vm/dirty_bytes
	[ "$2" = 0 ] || echo "$2" >/proc/sys/vm/dirty_background_bytes
}

# bench_buffered SCEN VAR: one variant of a buffered scenario. An ext4 on
# each target (one: every group writes into its own folder of it; halves:
# the i-th group writes only to the i-th file system). A group whose job has
# --direct=1 reads or writes the first target itself (bwrr's readers). A
# fresh null_blk (memory_backed: the data lives in guest memory) for the
# next variant; the host judges the bytes that reached the null_blk.
bench_buffered() {
	bench_create "$@"
	_s=$1 _v=$2
	_i=0
	for _t in $BENCH_TARGETS; do
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$_t"
		mkdir -p "mnt$_i"
		mount -t ext4 "$_t" "mnt$_i"
		_i=$((_i + 1))
	done
	_i=0
	for _n in $BENCH_GROUPS; do
		_m=0
		[ "$BENCH_LAYOUT" = single ] || _m=$_i
		eval "DIR_$_n=mnt$_m/$_n"
		mkdir -p "mnt$_m/$_n"
		_i=$((_i + 1))
	done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	set -- $BENCH_TARGETS
	BENCH_PIDS=
	_t0=$(uptime_s)
	bench_sampler_start "$_s" "$_v" "$_t0"
	for _n in $BENCH_GROUPS; do
		case " $(bench_job "$_n") " in
		*" --direct=1 "*) _where=--filename=$1 ;;
		*) _where=--directory=$(eval echo "\$DIR_$_n") ;;
		esac
		# shellcheck disable=SC2046 # JOB_g is a list of options
		bench_start_group "$_s" "$_v" "$_t0" "$_n" "$_where" $(bench_job "$_n")
	done
	bench_wait_groups
	sync
	bench E "$_s" "$_v" _sync "$(since "$_t0")" 0
	bench_sampler_stop
	bench_end "$_s" "$_v"
	_i=0
	for _t in $BENCH_TARGETS; do
		umount "mnt$_i"
		_i=$((_i + 1))
	done
	bench_destroy
	remove_nullb "$NB_NAME"
	# shellcheck disable=SC2086 # the arguments, one per word
	bench_nullb $NB_ARGS
}

# bench_writers SCEN "name:weight ..." JOBS MIB CHECKS: a scenario of
# buffered writers: each group runs `fio --rw=write --numjobs=JOBS`, MIB MiB
# a job, BENCH_BW_BS writes, on a 32 MiB/s null_blk (memory_backed, the data
# lives in guest memory: a fresh one per variant), each peer at its
# designated best and ioband under both weight policies.
bench_writers() {
	BENCH_BUFFERED=1
	bench_nullb "bf-$1" 2048 mbps=32 memory_backed=1
	bench_calibrate
	bench_groups "$2"
	for _n in $BENCH_GROUPS; do
		eval "JOB_$_n=\"--rw=write --bs=$BENCH_BW_BS --size=${4}m --numjobs=$3\""
	done
	bench_buffered_run "$1" "$5"
}

# bench_buffered_run SCEN CHECKS: the variants of a buffered scenario whose
# device, groups and jobs are set, under lowered dirty limits; then the
# groups and the device go.
bench_buffered_run() {
	# fio's bandwidth here is the page cache's: the plots take io.stat's.
	BENCH_FIO_LOG=0
	bench_dirty_limits
	bench_config "$1" "$2"
	# shellcheck disable=SC2086 # one spec per word
	bench_each "$1" bench_buffered $BENCH_BEST ioband:weight-iosize
	bench_dirty_restore
	bench_cleanup_groups
	remove_nullb "$NB_NAME"
}
