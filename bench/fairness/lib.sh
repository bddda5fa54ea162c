# shellcheck shell=sh disable=SC2317,SC2154 # functions called by the scenarios
# Guest side of the fairness benchmark (busybox sh). bench/run-fairness
# builds one guest test per scenario by concatenating: a header
# (`. /ioband/lib.sh` and the BENCH_* parameters), this file, then
# bench/fairness/<scenario>.sh. Nothing here decides anything: it runs the
# workloads and prints raw figures on the console, one per line, each with
# the prefix `@@BENCH`; the host computes the shares and the tables.
#
#   @@BENCH C <scen> key=value...                 scenario setup
#   @@BENCH V <scen> <var> key=value...           a variant (linear or ioband table)
#   @@BENCH G <scen> <var> <grp> weight=W id=ID   a group
#   @@BENCH S <scen> <var> <t> cpu <user nice system idle iowait irq softirq steal>
#   @@BENCH S <scen> <var> <t> disk <rsect> <wsect> <rios> <wios>  (the null_blk)
#   @@BENCH S <scen> <var> <t> cg <grp> <rbytes> <wbytes> <rios> <wios>
#                                         (the group's io.stat on the null_blk)
#   @@BENCH S <scen> <var> <t> st <grp> <reads> <dreads> <rsect> <writes> <dwrites> <wsect>
#                                         (dmsetup status of the ioband device)
#   @@BENCH S <scen> <var> <t> dom key=value...  (its stats message: the domain,
#   @@BENCH S <scen> <var> <t> gs <grp> key=value...       and each group)
#   @@BENCH E <scen> <var> <grp> <t> <exit status>   a group's fio ended
#   @@BENCH F <scen> <var> <grp> <fio JSON on one line>
#   @@BENCH X <scen> <var> key=value...           end of a variant
#
# <t> is seconds since the workload started (guest uptime).

: "${BENCH_RUNTIME:=20}"  # fio time_based runtime, s (after the ramp)
: "${BENCH_RAMP:=3}"      # fio ramp_time, s (not counted by fio nor by the host)
: "${BENCH_ALT_IO_LIMIT:=0}" # also run every ioband variant with this io_limit (0: no)
: "${BENCH_BW_SIZE_MB:=8}"   # bw2: MiB per fio job (50 jobs per cgroup)
: "${BENCH_BW_JOBS:=50}"

BENCH_DM=benchdev
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

# bench_table KIND POLICY IO_LIMIT: the dm table of a variant.
bench_table() {
	if [ "$1" = linear ]; then
		echo "0 $NB_SECTORS linear $NB_DEV 0"
		return
	fi
	_t="0 $NB_SECTORS ioband $NB_DEV bench 0 $3 cgroup $2 0 :100"
	for _n in $BENCH_GROUPS; do
		_t="$_t $(cg_id "$BENCH_CGP-$_n"):$(eval echo "\$W_$_n")"
	done
	echo "$_t"
}

# bench_create SCEN VAR KIND POLICY IO_LIMIT: create /dev/mapper/$BENCH_DM.
bench_create() {
	_table=$(bench_table "$3" "$4" "$5")
	BENCH_KIND=$3
	dm_create "$BENCH_DM" "$_table" >/dev/null
	bench V "$1" "$2" "kind=$3" "policy=$4" "io_limit=$5" "table=$(dmsetup table "$BENCH_DM" | tr ' ' ,)"
	for _n in $BENCH_GROUPS; do
		bench G "$1" "$2" "$_n" "weight=$(eval echo "\$W_$_n")" "id=$(cg_id "$BENCH_CGP-$_n")"
	done
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
# the background; print an E line when it ends.
bench_start_group() {
	_s=$1 _v=$2 _t0=$3 _g=$4
	shift 4
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
	for _n in $BENCH_GROUPS; do bench_fio_json "$_s" "$_v" "$_n" "fio-$_v-$_n.json"; done
	bench X "$_s" "$_v" "status=$(dmsetup status "$BENCH_DM" | tr ' ' ,)"
	dm_remove "$BENCH_DM"
}

# bench_variants SCEN POLICY: the baseline, then ioband with the default
# io_limit and, if BENCH_ALT_IO_LIMIT is set, with that one too.
bench_variants() {
	bench_direct "$1" linear linear - 0
	bench_ioband_variants "$@"
}

bench_ioband_variants() { # SCEN POLICY
	bench_direct "$1" "$2-d" ioband "$2" 0
	[ "$BENCH_ALT_IO_LIMIT" = 0 ] ||
		bench_direct "$1" "$2-$BENCH_ALT_IO_LIMIT" ioband "$2" "$BENCH_ALT_IO_LIMIT"
}

bench_config() { # SCEN: print the setup
	bench C "$1" "kernel=$(uname -r)" "nullb=$NB_MAJMIN" "sectors=$NB_SECTORS" \
		"mbps=$(cat /sys/kernel/config/nullb/"$NB_NAME"/mbps)" \
		"hw_queue_depth=$(cat /sys/kernel/config/nullb/"$NB_NAME"/hw_queue_depth)" \
		"max_sectors=$(cat "$NB_SYS/queue/max_sectors_kb")k" \
		"runtime=$BENCH_RUNTIME" "ramp=$BENCH_RAMP" "cpus=$(grep -c ^processor /proc/cpuinfo)" \
		"mem_kb=$(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
	for _n in $BENCH_GROUPS; do
		bench C "$1" "group=$_n" "weight=$(eval echo "\$W_$_n")" "job=$(eval echo "\$JOB_$_n" | tr ' ' ,)"
	done
}

bench_cleanup_groups() {
	for _n in $BENCH_GROUPS; do cg_remove "$BENCH_CGP-$_n"; done
}
