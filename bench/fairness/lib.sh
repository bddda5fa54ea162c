# shellcheck shell=sh disable=SC2317,SC2154 # functions called by the scenarios
# Guest side of the benchmark (busybox sh). bench/run-fairness builds one
# guest test per scenario by concatenating: a header (`. /ioband/lib.sh` and
# the BENCH_* parameters), this file, then bench/fairness/<scenario>.sh.
# Nothing here decides anything: it runs the workloads and prints raw
# figures on the console, one per line, each with the prefix `@@BENCH`; the
# host computes the shares, the tables and the plots.
#
# A scenario sets up its device and groups, then runs its workload once per
# variant with bench_each (or bench_variants): one variant per controller
# in BENCH_CONTROLLERS, all on the same null_blk and in the same boot:
#   none      dm-linear over the null_blk (the baseline)
#   bfq       dm-linear; BFQ scheduler on the null_blk, io.bfq.weight per group
#   iocost    dm-linear; blk-iocost on the null_blk (io.cost.model: linear,
#             from its mbps= cap; io.cost.qos: vrate fixed at
#             BENCH_PEER_CAP_PCT %), io.weight
#   throttle  dm-linear; io.max per group = its weight's share of
#             BENCH_PEER_CAP_PCT % of the cap
#   iocost:P, throttle:P   the same with P % instead of BENCH_PEER_CAP_PCT
#             (variant iocost-P, throttle-P)
#   ioband    an ioband table, once per policy in BENCH_POLICIES
#             (and again with io_limit BENCH_ALT_IO_LIMIT if set)
#
#   @@BENCH C <scen> key=value...                 scenario setup
#   @@BENCH V <scen> <var> key=value...           a variant (kind=linear|bfq|iocost|throttle|ioband)
#   @@BENCH G <scen> <var> <grp> weight=W id=ID   a group
#   @@BENCH S <scen> <var> <t> cpu <user nice system idle iowait irq softirq steal>
#   @@BENCH S <scen> <var> <t> disk <rsect> <wsect> <rios> <wios>  (the null_blk)
#   @@BENCH S <scen> <var> <t> cg <grp> <rbytes> <wbytes> <rios> <wios>
#                                         (the group's io.stat on the null_blk)
#   @@BENCH S <scen> <var> <t> st <grp> <reads> <dreads> <rsect> <writes> <dwrites> <wsect>
#                                         (dmsetup status of the ioband device)
#   @@BENCH S <scen> <var> <t> dom key=value...  (its stats message: the domain,
#   @@BENCH S <scen> <var> <t> gs <grp> key=value...       and each group)
#   @@BENCH B <scen> <var> <grp> <t>              a group's fio starts
#   @@BENCH E <scen> <var> <grp> <t> <exit status>   a group's fio ended
#   @@BENCH L <scen> <var> <grp> <ms>:<KiB/s>,...  the group's fio bandwidth
#                  log (--write_bw_log, --log_avg_msec=BENCH_LOG_MS, summed over
#                  its jobs; ms since the end of fio's ramp)
#   @@BENCH F <scen> <var> <grp> <fio JSON on one line>
#   @@BENCH X <scen> <var> key=value...           end of a variant
#
# <t> is seconds since the workload started (guest uptime).

: "${BENCH_RUNTIME:=20}"  # fio time_based runtime, s (after the ramp)
: "${BENCH_RAMP:=3}"      # fio ramp_time, s (not counted by fio nor by the host)
: "${BENCH_ALT_IO_LIMIT:=0}" # also run every ioband variant with this io_limit (0: no)
: "${BENCH_BW_SIZE_MB:=8}"   # bw2: MiB per fio job (50 jobs per cgroup)
: "${BENCH_BW_JOBS:=50}"
: "${BENCH_CONTROLLERS:=none bfq iocost throttle ioband}"
: "${BENCH_POLICIES:=weight weight-iosize}" # ioband policies run by bench_each
: "${BENCH_LOG_MS:=500}"  # fio bandwidth log interval, ms (0: no log)
: "${BENCH_PEER_CAP_PCT:=100}" # the capacity iocost and throttle are given, % of the cap
: "${BENCH_DEFAULT_SPEC:=100}" # the default group's spec in ioband tables (range-bw: 0:0)
: "${BENCH_IOCOST_QOS:=enable=1 ctrl=user rpct=0 rlat=0 wpct=0 wlat=0}" # + min=max=that %

BENCH_DM=benchdev
BENCH_CAP_PCT=100 # of the variant running (bench_each)
BENCH_CGP=bf

bench() { echo "@@BENCH $*"; }

# bench_nullb NAME SIZE_MIB ATTR=VALUE...: the device under test.
# null_blk splits requests at its max_sectors (255 sectors, on 6.1 and 6.12): a
# 256 KiB bio reaches it as 127.5 + 127.5 + 1 KiB. Left so on purpose: with
# mbps= a period of 20 ms grants 320 KiB at 16 MiB/s, 640 KiB at 32, and a
# request that does not fit waits for the next period; small pieces waste
# little of it (with 256 KiB pieces bw2 lost a fifth of its cap), and a request
# larger than a period's grant is never served at all (mkfs's whole-device
# discard hung so: mkfs runs with nodiscard). The host counts IOs
# as ioband sees them (bytes / block size, or the ioband counters), not the
# pieces.
bench_nullb() {
	NB_NAME=$1
	NB_DEV=$(make_nullb "$@")
	NB_MAJMIN=$(dev_majmin "$NB_DEV")
	NB_SYS=/sys/block/$(basename "$(readlink -f "$NB_DEV")")
	NB_SECTORS=$(dev_sectors "$NB_DEV")
	NB_MBPS=$(cat "$NULLB_CONFIGFS/$NB_NAME/mbps")
}

# bench_groups "name:weight ...": the cgroups (bf-<name>) and their weights.
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

# bench_table KIND POLICY IO_LIMIT: the dm table of a variant: an ioband
# table, else dm-linear (the peers are configured on the null_blk below).
bench_table() {
	if [ "$1" != ioband ]; then
		echo "0 $NB_SECTORS linear $NB_DEV 0"
		return
	fi
	_t="0 $NB_SECTORS ioband $NB_DEV bench 0 $3 cgroup $2 0 :$BENCH_DEFAULT_SPEC"
	for _n in $BENCH_GROUPS; do
		_t="$_t $(cg_id "$BENCH_CGP-$_n"):$(eval echo "\$W_$_n")"
	done
	echo "$_t"
}

# bench_ctl_avail KIND: succeeds if this kernel and device have the
# controller, else prints why not.
bench_ctl_avail() {
	_ca_g=${BENCH_GROUPS# }
	set -- "$1" "$CGROOT/$BENCH_CGP-${_ca_g%% *}"
	case $1 in
	none | ioband) ;;
	bfq)
		grep -qw bfq "$NB_SYS/queue/scheduler" || { echo "no bfq in $NB_SYS/queue/scheduler"; return 1; }
		[ -e "$2/io.bfq.weight" ] || { echo "no io.bfq.weight"; return 1; }
		;;
	iocost)
		if [ ! -e "$CGROOT/io.cost.qos" ] || [ ! -e "$CGROOT/io.cost.model" ]; then
			echo "no io.cost.qos/io.cost.model in $CGROOT"
			return 1
		fi
		[ -e "$2/io.weight" ] || { echo "no io.weight"; return 1; }
		[ "$NB_MBPS" -gt 0 ] || { echo "the null_blk is not capped (mbps=0): no model"; return 1; }
		;;
	throttle)
		[ -e "$2/io.max" ] || { echo "no io.max"; return 1; }
		[ "$NB_MBPS" -gt 0 ] || { echo "the null_blk is not capped (mbps=0): no capacity"; return 1; }
		;;
	*) echo "unknown controller"; return 1 ;;
	esac
}

# bench_ctl_on KIND: configure a peer controller on the null_blk and the
# groups' cgroups; BENCH_CTL says what was set (read back from the files).
# The null_blk's cap (mbps=, MiB/s) is its capacity: iocost's linear model
# is rbps=wbps=cap with 4 KiB IOPS = cap / 4 KiB for sequential and random
# alike (so an IO costs its size, nothing per IO: what mbps= charges), and
# the vrate is held at BENCH_CAP_PCT % (min=max; no latency target;
# ctrl=user); throttle caps each group at BENCH_CAP_PCT % of the cap times
# weight / sum of weights, reads and writes alike.
bench_ctl_on() {
	BENCH_CTL=
	case $1 in
	bfq)
		BENCH_OLD_SCHED=$(sed 's/.*\[\(.*\)\].*/\1/' "$NB_SYS/queue/scheduler")
		echo bfq >"$NB_SYS/queue/scheduler" || fail "cannot select bfq for $NB_SYS"
		BENCH_CTL="scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$NB_SYS/queue/scheduler")"
		for _n in $BENCH_GROUPS; do
			bench_weight "$_n" >"$CGROOT/$BENCH_CGP-$_n/io.bfq.weight" ||
				fail "cannot set io.bfq.weight of $_n"
			BENCH_CTL="$BENCH_CTL;$_n:io.bfq.weight=$(head -n 1 "$CGROOT/$BENCH_CGP-$_n/io.bfq.weight")"
		done
		;;
	iocost)
		_bps=$((NB_MBPS << 20)) _iops=$((NB_MBPS << 8))
		echo "$NB_MAJMIN ctrl=user model=linear rbps=$_bps rseqiops=$_iops rrandiops=$_iops" \
			"wbps=$_bps wseqiops=$_iops wrandiops=$_iops" >"$CGROOT/io.cost.model" ||
			fail "cannot write io.cost.model"
		echo "$NB_MAJMIN $BENCH_IOCOST_QOS min=$BENCH_CAP_PCT max=$BENCH_CAP_PCT" >"$CGROOT/io.cost.qos" ||
			fail "cannot write io.cost.qos"
		BENCH_CTL="model=$(grep "^$NB_MAJMIN " "$CGROOT/io.cost.model" | cut -d' ' -f2-)"
		BENCH_CTL="$BENCH_CTL;qos=$(grep "^$NB_MAJMIN " "$CGROOT/io.cost.qos" | cut -d' ' -f2-)"
		for _n in $BENCH_GROUPS; do
			bench_weight "$_n" >"$CGROOT/$BENCH_CGP-$_n/io.weight" || fail "cannot set io.weight of $_n"
			BENCH_CTL="$BENCH_CTL;$_n:io.weight=$(head -n 1 "$CGROOT/$BENCH_CGP-$_n/io.weight")"
		done
		;;
	throttle)
		_sum=0
		for _n in $BENCH_GROUPS; do _sum=$((_sum + $(bench_weight "$_n"))); done
		for _n in $BENCH_GROUPS; do
			_b=$(((NB_MBPS << 20) * BENCH_CAP_PCT * $(bench_weight "$_n") / (100 * _sum)))
			echo "$NB_MAJMIN rbps=$_b wbps=$_b" >"$CGROOT/$BENCH_CGP-$_n/io.max" ||
				fail "cannot write io.max of $_n"
			BENCH_CTL="$BENCH_CTL;$_n:io.max=$(grep "^$NB_MAJMIN " "$CGROOT/$BENCH_CGP-$_n/io.max" | cut -d' ' -f2-)"
		done
		BENCH_CTL=${BENCH_CTL#;}
		;;
	esac
}

# bench_ctl_off KIND: undo bench_ctl_on.
bench_ctl_off() {
	case $1 in
	bfq)
		echo "$BENCH_OLD_SCHED" >"$NB_SYS/queue/scheduler" || fail "cannot restore the scheduler"
		for _n in $BENCH_GROUPS; do echo 100 >"$CGROOT/$BENCH_CGP-$_n/io.bfq.weight"; done
		;;
	iocost)
		echo "$NB_MAJMIN enable=0" >"$CGROOT/io.cost.qos" || fail "cannot disable iocost"
		for _n in $BENCH_GROUPS; do echo 100 >"$CGROOT/$BENCH_CGP-$_n/io.weight"; done
		;;
	throttle)
		for _n in $BENCH_GROUPS; do
			echo "$NB_MAJMIN rbps=max wbps=max riops=max wiops=max" >"$CGROOT/$BENCH_CGP-$_n/io.max"
		done
		;;
	esac
}

# bench_create SCEN VAR KIND POLICY IO_LIMIT: configure the controller and
# create /dev/mapper/$BENCH_DM; bench_destroy undoes it.
bench_create() {
	_table=$(bench_table "$3" "$4" "$5")
	BENCH_KIND=$3
	bench_ctl_on "$3"
	dm_create "$BENCH_DM" "$_table" >/dev/null
	bench V "$1" "$2" "kind=$3" "policy=$4" "io_limit=$5" "table=$(dmsetup table "$BENCH_DM" | tr ' ' ,)" \
		"capacity_pct=$BENCH_CAP_PCT" "ctl=$(echo "$BENCH_CTL" | tr ' ' ,)"
	for _n in $BENCH_GROUPS; do
		bench G "$1" "$2" "$_n" "weight=$(eval echo "\$W_$_n")" "id=$(cg_id "$BENCH_CGP-$_n")"
	done
}

bench_destroy() {
	dm_remove "$BENCH_DM"
	bench_ctl_off "$BENCH_KIND"
}

# bench_sample SCEN VAR T0: one sample of every counter.
bench_sample() {
	_st='' _dom=''
	if [ "$BENCH_KIND" = ioband ]; then
		_st=$(dmsetup status "$BENCH_DM" 2>/dev/null || true)
		# The extended report (if the target has the stats message): the
		# domain's line, then a line per group with queued (held now) and
		# in_flight, so that what went down = counted - queued.
		_dom=$(dmsetup message "$BENCH_DM" 0 stats 2>/dev/null | tr '\n' '|' || true)
	fi
	_cgfiles=
	for _n in $BENCH_GROUPS; do _cgfiles="$_cgfiles /sys/fs/cgroup/$BENCH_CGP-$_n/io.stat"; done
	# shellcheck disable=SC2086 # a list of files
	awk -v p="@@BENCH S $1 $2" -v t0="$3" -v mm="$NB_MAJMIN" -v st="$_st" -v dom="$_dom" \
		-v idmap="$BENCH_IDMAP" -v groups="$BENCH_GROUPS" -v disk="$NB_SYS/stat" -v cgp="$BENCH_CGP-" '
		FILENAME == "/proc/uptime" { t = $1 - t0; next }
		FILENAME == "/proc/stat" && $1 == "cpu" { cpu = $2 " " $3 " " $4 " " $5 " " $6 " " $7 " " $8 " " $9; next }
		FILENAME == disk { d = $3 " " $7 " " $1 " " $5; next }
		FILENAME ~ /io\.stat$/ && $1 == mm {
			g = FILENAME; sub(/\/io\.stat$/, "", g); sub(/.*\//, "", g); sub(cgp, "", g)
			delete v
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			cg[g] = (v["rbytes"] + 0) " " (v["wbytes"] + 0) " " (v["rios"] + 0) " " (v["wios"] + 0)
			next
		}
		END {
			n = split(idmap, m, " ")
			for (i = 1; i <= n; i++) { split(m[i], kv, "="); name[kv[1]] = kv[2] }
			name["-1"] = "default"
			# A group that has done no IO to the device has no line yet.
			n = split(groups, gl, " ")
			for (i = 1; i <= n; i++) if (!(gl[i] in cg)) cg[gl[i]] = "0 0 0 0"
			printf "%s %.2f cpu %s\n", p, t, cpu
			printf "%s %.2f disk %s\n", p, t, d
			nd = split(dom, dl, "|")
			for (i = 1; i <= nd; i++) {
				if (dl[i] ~ /^domain=/) printf "%s %.2f dom %s\n", p, t, dl[i]
				else if (dl[i] ~ /^group=/) {
					split(dl[i], kv, "[= ]")
					printf "%s %.2f gs %s %s\n", p, t, (kv[2] in name) ? name[kv[2]] : kv[2], dl[i]
				}
			}
			for (g in cg) printf "%s %.2f cg %s %s\n", p, t, g, cg[g]
			k = split(st, f, " ")
			for (i = 5; i + 6 <= k; i += 7) {
				g = (f[i] in name) ? name[f[i]] : f[i]
				printf "%s %.2f st %s %s %s %s %s %s %s\n", p, t, g, f[i+1], f[i+2], f[i+3], f[i+4], f[i+5], f[i+6]
			}
		}' /proc/uptime /proc/stat "$NB_SYS/stat" $_cgfiles
}

uptime_s() { cut -d' ' -f1 /proc/uptime; }

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
	bench B "$_s" "$_v" "$_g" "$(awk -v t0="$_t0" '{ printf "%.2f", $1 - t0 }' /proc/uptime)"
	(
		_rc=0
		cg_run "$BENCH_CGP-$_g" fio --name="$_g" --group_reporting \
			--output-format=json --percentile_list=50:99 \
			--output="fio-$_v-$_g.json" "$@" >"fio-$_v-$_g.err" 2>&1 || _rc=$?
		bench E "$_s" "$_v" "$_g" "$(awk -v t0="$_t0" '{ printf "%.2f", $1 - t0 }' /proc/uptime)" "$_rc"
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

# bench_direct SCEN VAR KIND POLICY IO_LIMIT: one variant of a direct-IO
# scenario. The workload of group g is in $JOB_g (fio options).
bench_direct() {
	bench_create "$@"
	_s=$1 _v=$2
	log "$_s $_v: $(dmsetup table "$BENCH_DM")"
	BENCH_PIDS=
	_t0=$(uptime_s)
	bench_sampler_start "$_s" "$_v" "$_t0"
	for _n in $BENCH_GROUPS; do
		# shellcheck disable=SC2046 # JOB_g is a list of options
		bench_start_group "$_s" "$_v" "$_t0" "$_n" --filename="/dev/mapper/$BENCH_DM" \
			--direct=1 --ioengine=libaio --time_based --runtime="$BENCH_RUNTIME" \
			--ramp_time="$BENCH_RAMP" --norandommap --randrepeat=0 \
			$(eval echo "\$JOB_$_n")
	done
	bench_wait_groups
	bench_sampler_stop
	for _n in $BENCH_GROUPS; do
		bench_fio_json "$_s" "$_v" "$_n" "fio-$_v-$_n.json"
		bench_bwlog "$_s" "$_v" "$_n"
	done
	bench X "$_s" "$_v" "status=$(dmsetup status "$BENCH_DM" | tr ' ' ,)"
	bench_destroy
}

# bench_each SCEN FN [POLICIES]: run the workload once per variant, as
# FN SCEN VAR KIND POLICY IO_LIMIT (FN: bench_direct, or the scenario's own
# function), for each controller of BENCH_CONTROLLERS in that order; ioband
# once per policy of POLICIES (default BENCH_POLICIES). A peer that this
# kernel lacks is skipped with a V line saying why. A scenario may set
# BENCH_CONTROLLERS itself (e.g. range policies: "none throttle ioband").
bench_each() {
	_be_s=$1 _be_fn=$2 _be_pols=${3:-$BENCH_POLICIES}
	for _be_c in $BENCH_CONTROLLERS; do
		case $_be_c in
		none) "$_be_fn" "$_be_s" linear linear - 0 ;;
		bfq | iocost | throttle | iocost:* | throttle:*)
			_be_k=${_be_c%%:*} _be_v=$(echo "$_be_c" | tr : -)
			BENCH_CAP_PCT=$BENCH_PEER_CAP_PCT
			[ "$_be_k" = "$_be_c" ] || BENCH_CAP_PCT=${_be_c#*:}
			if _be_why=$(bench_ctl_avail "$_be_k"); then
				"$_be_fn" "$_be_s" "$_be_v" "$_be_k" - 0
			else
				log "$_be_s: $_be_c skipped: $_be_why"
				bench V "$_be_s" "$_be_v" "kind=$_be_k" "skipped=$(echo "$_be_why" | tr ' ' ,)"
			fi
			BENCH_CAP_PCT=100
			;;
		ioband)
			for _be_p in $_be_pols; do bench_ioband_each "$_be_s" "$_be_fn" "$_be_p"; done
			;;
		*) fail "unknown controller '$_be_c' in BENCH_CONTROLLERS" ;;
		esac
	done
}

# bench_ioband_each SCEN FN POLICY: ioband with the default io_limit and,
# if BENCH_ALT_IO_LIMIT is set, with that one too.
bench_ioband_each() {
	"$2" "$1" "$3-d" ioband "$3" 0
	[ "$BENCH_ALT_IO_LIMIT" = 0 ] || "$2" "$1" "$3-$BENCH_ALT_IO_LIMIT" ioband "$3" "$BENCH_ALT_IO_LIMIT"
}

# bench_variants SCEN [POLICIES]: every variant of a direct-IO scenario.
bench_variants() { bench_each "$1" bench_direct "${2:-}"; }

# bench_ioband_variants SCEN POLICY: only ioband's variants with POLICY
# (if ioband is in BENCH_CONTROLLERS).
bench_ioband_variants() {
	case " $BENCH_CONTROLLERS " in *" ioband "*) bench_ioband_each "$1" bench_direct "$2" ;; esac
}

bench_config() { # SCEN: print the setup
	bench C "$1" "kernel=$(uname -r)" "nullb=$NB_MAJMIN" "sectors=$NB_SECTORS" \
		"mbps=$(cat /sys/kernel/config/nullb/"$NB_NAME"/mbps)" \
		"hw_queue_depth=$(cat /sys/kernel/config/nullb/"$NB_NAME"/hw_queue_depth)" \
		"max_sectors=$(cat "$NB_SYS/queue/max_sectors_kb")k" \
		"scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$NB_SYS/queue/scheduler")" \
		"controllers=$(echo "$BENCH_CONTROLLERS" | tr ' ' ,)" "policies=$(echo "$BENCH_POLICIES" | tr ' ' ,)" \
		"log_ms=$BENCH_LOG_MS" \
		"runtime=$BENCH_RUNTIME" "ramp=$BENCH_RAMP" "cpus=$(grep -c ^processor /proc/cpuinfo)" \
		"mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
	for _n in $BENCH_GROUPS; do
		bench C "$1" "group=$_n" "weight=$(eval echo "\$W_$_n")" "job=$(eval echo "\$JOB_$_n" | tr ' ' ,)"
	done
}

bench_cleanup_groups() {
	for _n in $BENCH_GROUPS; do cg_remove "$BENCH_CGP-$_n"; done
}
