#!/bin/sh
# Abuse: a group cannot push another below its share. A victim cgroup
# (weight 100, 16 KiB random reads, 128 outstanding) shares a null_blk
# capped at 16 MiB/s with an abuser of the same weight that tries, in
# turn:
#  1. huge bios: 1 MiB reads, 16 outstanding, under policy weight-iosize
#     (dm splits them to 512 KiB or the device's largest request first)
#     (under `weight` a bio costs one token whatever its size, so a 1 MiB
#     bio costs as much as a 4 KiB one: the guarantee against big bios is
#     weight-iosize's, in sectors, as Documentation/ioband.rst says);
#  2. 1000 fio threads (--thread --numjobs=1000, one bio each);
#  3. 32 child cgroups, some nested three deep, each its own fio: they
#     are not attached, so all of them are charged to the attached parent;
#  4. a flush or a FUA on every write: --sync=1 (O_SYNC on O_DIRECT, so
#     every write is REQ_FUA) and --fsync=1 (a write, then a flush);
#  5. discards (--rw=randtrim, 16 jobs). ioband holds discards and
#     charges them by the size they cover (one token per 4 KiB under
#     `weight`), and null_blk charges them to its mbps budget like
#     writes; the check is on the victim's throughput against its own
#     throughput alone: at least 95% of half (ioband-discard checks the
#     split itself).
# Pass (1-4): over an 8 s window after a warm-up, while both groups hold
# bios in ioband, the victim's share of what went down (bytes in each
# cgroup's io.stat on the device below, counted when ioband sends a bio
# down) is its weight's share, 50%, within 5% (47.5%..52.5%). On the
# debug kernel the shares, whether either side had bios held, and case 5's
# throughput are printed, not held to (perf_check): its emulated CPU, not
# the device, bounds the IO (the victim alone got 10.8 of 16 MiB/s; beside
# 1000 threads, 37% of it all).
#  6. a group of weight 1 (4 outstanding) among three of weight 1000 (64
#     outstanding each; 4 KiB reads, policy weight, carryover 0) is never
#     starved. The bound, from section 4 of
#     Documentation/ioband-design.rst: between two
#     dispatches of a backlogged group g, another group h is dispatched
#     at most (c_g / w_g + C) * w_h / c_h + 1 times; under `weight` every
#     cost is 1 and carryover 0 makes the credit C 0, so at most
#     1000 + 1 per heavy group, B = 3003 in all. Over a window in which
#     the heavy groups got N bios down, the light group got at least
#     N / B - 1 (its ideal share is N / 3000; it gets more whenever the
#     heavy groups hold nothing for a moment: the scheduler is work
#     conserving, and with carryover 0 they get no credit for it).
# Each case prints the measured shares. io_limit is 8: the victim keeps
# more bios outstanding than that, so it stays backlogged in ioband, the
# condition of the guarantee. The CAP_SYS_ADMIN rule is checked by
# iobandctl-errors (iobandctl) and reliability-input (raw dmsetup).
# shellcheck source=../lib.sh
. /ioband/lib.sh
set -eu

MBPS=16
WINDOW=8
nb=$(make_nullb ra 1024 memory_backed=1 discard=1 cache_size=64 mbps=$MBPS)
nbsys=/sys/block/$(basename "$(readlink -f "$nb")")
mm=$(dev_majmin "$nb")
size=$(dev_sectors "$nb")
for g in v x y h1 h2 h3 l; do cg_create "ra-$g"; done
v=$(cg_id ra-v) x=$(cg_id ra-x) y=$(cg_id ra-y)
dm_create ra "0 $size ioband $nb ra 0 8 cgroup weight 0 :100 $v:100 $x:100 $y:100" >/dev/null
dm=/dev/mapper/ra

# iostat REGEX CGROUP...: the sum of the io.stat fields matching REGEX
# (e.g. 'rbytes|wbytes') of these cgroups on the null_blk device.
iostat() {
	_re=$1
	shift
	# shellcheck disable=SC2086 # lists of cgroups
	for _cg in "$@"; do cat "$CGROOT/$_cg/io.stat"; done |
		awk -v dev="$mm" -v re="^($_re)=" '$1 == dev {
			for (i = 2; i <= NF; i++) if ($i ~ re) { sub(/^[^=]*=/, "", $i); s += $i } }
			END { printf "%.0f\n", s }'
}
# devstat N: field N of the null_blk's /sys/block/*/stat (12 discard
# ios, 14 discard sectors, 16 flush ios).
devstat() { awk -v n="$1" '{ print $n }' "$nbsys/stat"; }
stat_field() { # GROUP KEY: from the stats message (GROUP -1: the default)
	dmsetup message ra 0 stats | awk -v g="group=$1" -v k="$2" '
		$1 == g { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
queued_ge() { [ "$(stat_field "$1" queued)" -ge "$2" ]; }
# backlogged GROUP: wait until GROUP has a bio held in ioband, the
# condition of its guarantee.
backlogged() { perf_check wait_for 30 queued_ge "$1" 1; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

# bg_fio CGROUP FIO-ARG...: fio in the background, in CGROUP; its pid
# joins $fios. (In the test's session: the harness can kill it.)
fios=
bg_fio() {
	_cg=$1
	shift
	# shellcheck disable=SC2016 # $$, $0 and $@ expand in the inner shell
	sh -c 'echo $$ >"$0/cgroup.procs" && exec fio "$@"' "$CGROOT/$_cg" "$@" &
	fios="$fios $!"
}
# stop: end every fio of $fios the way Ctrl-C does (fio stops its jobs,
# each once its bios complete; signalling the jobs themselves once left
# one stuck in fio for 300 s), wait for them (1000 threads take a while
# to end in TCG), and for ioband to hold nothing.
stop() {
	log "stop"
	# shellcheck disable=SC2086 # the list of pids
	kill -INT $fios
	wait_for 180 fios_gone
	# shellcheck disable=SC2086
	wait $fios || true
	fios=
	within 30 sh -c "dmsetup message ra 0 stats | head -n 1 | grep -q ' in_flight=0 queued=0 '" ||
		fail "bios still in ioband $(scaled 30) s after every fio ended: $(dmsetup message ra 0 stats | head -n 1)"
	log "stopped"
}
fios_gone() {
	for _p in $fios; do ! kill -0 "$_p" 2>/dev/null || return 1; done
}
victim() { # the victim's load, in the background
	bg_fio ra-v --name=victim --filename=$dm --direct=1 --ioengine=libaio \
		--iodepth=128 --rw=randread --bs=16k --offset=0 --size=256M \
		--time_based --runtime=900 --output=/dev/null
}
# shellcheck disable=SC2086 # lists of cgroups
# window "VICTIM_CGS" "ABUSER_CGS" REGEX: after a 2 s warm-up, the io.stat
# fields REGEX of each side over WINDOW seconds, as "victim abuser".
window() {
	sleep 2
	_v0=$(iostat "$3" $1) _a0=$(iostat "$3" $2)
	sleep $WINDOW
	_v1=$(iostat "$3" $1) _a1=$(iostat "$3" $2)
	echo "$((_v1 - _v0)) $((_a1 - _a0))"
}
# check_share NAME VICTIM ABUSER: the victim's share is 50% within 5%.
check_share() {
	_tot=$(($2 + $3))
	assert_ge "$_tot" 1 "$1: bytes down in the window"
	_vp=$(pct "$2" "$_tot")
	echo "$1: victim $_vp%, abuser $(pct "$3" "$_tot")% (weights 100:100, expected 50.0%); $((_tot / 1024 / WINDOW)) KB/s in all"
	perf_check assert_within_pct 500 $((1000 * $2 / _tot)) 5 "$1: victim's share (per mille)"
}

# ---- the victim alone: its throughput, for the discard case ----
victim
solo=$(window ra-v ra-x 'rbytes')
solo=${solo% *}
stop
echo "victim alone: $((solo / 1024 / WINDOW)) KB/s (cap $((MBPS * 1024)) KB/s)"
assert_ge $((solo / 1024 / WINDOW)) $((MBPS * 1024 * 6 / 10)) "victim alone, KB/s"

# ---- 1. huge bios, policy weight-iosize ----
log "huge bios, policy weight-iosize"
dmsetup message ra 0 policy weight-iosize
dmsetup message ra 0 reset
victim
bg_fio ra-x --name=huge --filename=$dm --direct=1 --ioengine=libaio \
	--iodepth=16 --rw=randread --bs=1M --offset=256M --size=256M \
	--time_based --runtime=900 --output=/dev/null
backlogged "$v"
r=$(window ra-v ra-x 'rbytes')
queued_ge "$x" 1 || perf_check fail "huge bios: the abuser held nothing in ioband (not competing)"
# ioband's own counters: the abuser's bios reached ioband as large as
# dm lets them, 512 KiB or the largest request of the device below if
# that is smaller (null_blk: 127.5 KiB); a 1 MiB read splits into pieces
# of that size and a shorter rest, so at least half of that on average,
# dm_max_kb sectors (7.3 averaged 202 sectors of 255; 4 KiB bios would
# be 8).
dm_max_kb=$(cat "/sys/block/$(basename "$(readlink -f "$dm")")/queue/max_sectors_kb")
[ "$dm_max_kb" -le 512 ] || dm_max_kb=512
assert_ge $(($(stat_field "$x" read_sectors) / $(stat_field "$x" reads))) "$dm_max_kb" "huge bios: sectors per abuser bio"
stop
check_share "1 MiB bios (weight-iosize)" "${r% *}" "${r#* }"
dmsetup message ra 0 policy weight

# ---- 2. 1000 threads ----
log "1000 threads"
victim
bg_fio ra-x --name=threads --filename=$dm --direct=1 --ioengine=psync \
	--thread --numjobs=1000 --rw=randread --bs=16k --offset=256M --size=256M \
	--time_based --runtime=900 --group_reporting --output=fio-threads.txt
# Started when most threads have a bio held in ioband.
wait_for 120 queued_ge "$x" 900
log "threads up"
echo "1000 threads: $(stat_field "$x" queued) of the abuser's bios held at the start"
r=$(window ra-v ra-x 'rbytes')
queued_ge "$x" 500 || perf_check fail "1000 threads: fewer than 500 bios held at the end"
stop
check_share "1000 threads" "${r% *}" "${r#* }"

# ---- 3. child cgroups ----
log "child cgroups"
kids=
i=1
while [ $i -le 32 ]; do
	case $((i % 4)) in
	0) k=ra-y/n$i/a/b ;;
	1) k=ra-y/n$i/a ;;
	*) k=ra-y/c$i ;;
	esac
	cg_create "$k"
	kids="$kids $k"
	i=$((i + 1))
done
victim
# One fio, one job per child cgroup, each moved into its cgroup.
bg_fio . --name=child --filename=$dm --direct=1 --ioengine=libaio --iodepth=4 \
	--rw=randread --bs=16k --offset=256M --size=256M --numjobs=32 \
	--time_based --runtime=900 --disk_util=0 --output=/dev/null
# shellcheck disable=SC2086 # the list of cgroups
move_jobs "${fios##* }" $kids
wait_for 60 queued_ge "$y" 32
r=$(window ra-v "$kids" 'rbytes')
queued_ge "$y" 1 || perf_check fail "child cgroups: the parent held nothing in ioband"
# The children are charged to ra-y: ioband has no group of their own.
st=$(dmsetup message ra 0 stats)
for k in $kids; do
	case $st in *"group=$(cg_id "$k") "*) fail "child cgroup $k has a group of its own" ;; esac
done
stop
check_share "32 child cgroups" "${r% *}" "${r#* }"

# ---- 4. a flush or FUA on every write ----
log "a flush or FUA on every write"
dmname=$(basename "$(readlink -f $dm)")
assert_eq "$(cat "/sys/block/$dmname/queue/write_cache")" "write back" "write cache of the ioband device"
assert_eq "$(cat "/sys/block/$dmname/queue/fua")" 1 "FUA offered by the ioband device"
flush0=$(devstat 16)
victim
bg_fio ra-x --name=fua --filename=$dm --direct=1 --sync=1 --ioengine=libaio \
	--iodepth=16 --numjobs=4 --rw=randwrite --bs=16k --offset=512M --size=64M \
	--offset_increment=64M --time_based --runtime=900 --output=/dev/null
bg_fio ra-x --name=fsync --filename=$dm --direct=1 --fsync=1 --ioengine=psync \
	--numjobs=8 --rw=randwrite --bs=16k --offset=512M --size=32M \
	--offset_increment=32M --time_based --runtime=900 --output=/dev/null
backlogged "$v"
r=$(window ra-v ra-x 'rbytes|wbytes')
queued_ge "$x" 1 || perf_check fail "flush/FUA: the abuser held nothing in ioband"
flushes=$(($(devstat 16) - flush0))
stop
echo "flush/FUA: $flushes flushes reached the device"
assert_ge "$flushes" 100 "flushes at the device"
check_share "FUA or flush on every write" "${r% *}" "${r#* }"

# ---- 5. discards ----
log "discards"
trim0=$(devstat 14)
victim
bg_fio ra-x --name=trim --filename=$dm --rw=randtrim --bs=128k --numjobs=16 \
	--offset=768M --size=256M --time_based --runtime=900 --output=/dev/null
backlogged "$v"
r=$(window ra-v ra-x 'rbytes')
trimmed=$(($(devstat 14) - trim0))
stop
vr=${r% *}
echo "discards: victim $((vr / 1024 / WINDOW)) KB/s = $(pct "$vr" "$solo")% of its throughput alone (share 50%, at least 47.5%); $((trimmed / 2 / WINDOW)) KB/s discarded"
assert_ge "$trimmed" 1 "sectors discarded at the device"
perf_check assert_ge $((1000 * vr / solo)) 475 "discards: victim's throughput against alone (per mille)"

# ---- 6. weight 1 among three of weight 1000 ----
log "weight 1 among three of weight 1000"
h1=$(cg_id ra-h1) h2=$(cg_id ra-h2) h3=$(cg_id ra-h3) l=$(cg_id ra-l)
for id in "$h1:1000" "$h2:1000" "$h3:1000" "$l:1"; do dmsetup message ra 0 attach "$id"; done
dmsetup message ra 0 carryover 0
n=0
for g in h1 h2 h3; do
	bg_fio "ra-$g" --name="$g" --filename=$dm --direct=1 --ioengine=libaio \
		--iodepth=64 --rw=randread --bs=4k --offset=$((n * 64))M --size=64M \
		--time_based --runtime=900 --output=/dev/null
	n=$((n + 1))
done
bg_fio ra-l --name=light --filename=$dm --direct=1 --ioengine=libaio \
	--iodepth=4 --rw=randread --bs=4k --offset=256M --size=64M \
	--time_based --runtime=900 --output=/dev/null
backlogged "$l"
r=$(window ra-l "ra-h1 ra-h2 ra-h3" 'rios')
held=
for g in "$h1" "$h2" "$h3" "$l"; do held="$held $(stat_field "$g" queued)"; done
stop
lios=${r% *} hios=${r#* }
bound=$((hios / 3003 - 1))
echo "weight 1 among 3 x 1000: $lios bios against $hios of the heavy groups in $WINDOW s; bound >= $hios/3003 - 1 = $bound, ideal share $((hios / 3000)); held at the end (h1 h2 h3 l):$held"
assert_ge "$hios" 3003 "bios of the heavy groups in the window"
assert_ge "$lios" "$bound" "bios of the weight-1 group (SFQ bound)"

wait_for 10 dm_remove ra
remove_nullb ra
for k in $kids; do
	while [ "$k" != ra-y ]; do
		cg_remove "$k"
		k=${k%/*}
	done
done
for g in v x y h1 h2 h3 l; do cg_remove "ra-$g"; done
