#!/bin/sh
# Guest side of bench/run-modeldev (run there through tests/vm/run): the
# scenarios of issue 41 on the model block device (tests/modeldev), each
# under every variant, one after another in one boot, shares counted in
# the device's own account of its time (cgroup_time). Prints one line
#   RESULT <scenario> <variant> <group> <device_ns> <ios> <bytes> <secs>
# per group and run; the host side turns them into a table.
#
# The device: the ssd preset's costs 30 times over on 2 channels (a 4 KiB
# read 2.30 ms, a 4 KiB write 0.99 ms, a 256 KiB write 59.4 ms): TCG cannot
# keep the preset itself busy. Variants: none (dm-linear alone), ioband
# with weight-iosize and weight-time, BFQ (defaults) and iocost given the
# device's true coefficients (its best case), qos max 400 so that vrate
# may move both ways. Every variant runs on a dm-linear or ioband device
# over model0; BFQ and iocost act on model0's queue.
# harness-timeout: 900
# shellcheck source=../../tests/vm/lib.sh
. /ioband/lib.sh

: "${MB_WARMUP:=2}" "${MB_SECS:=6}"
: "${MB_VARIANTS:=none ioband:weight-iosize ioband:weight-time bfq iocost}"
: "${MB_SCENARIOS:=rrsw8 rw11}"
SYS=/sys/block/model0
CH=2 RIO=1470000 RKIB=207900 WIO=60000 WKIB=231900
# set -e holds in a trap too: every command of it may fail.
trap 'killall -KILL fio 2>/dev/null || true; dm_remove mb 2>/dev/null || true; rmmod ioband_model 2>/dev/null || true' EXIT
modprobe ioband_model preset=ssd size_mb=512 channels=$CH read_io_ns=$RIO \
	read_kib_ns=$RKIB write_io_ns=$WIO write_kib_ns=$WKIB || fail "modprobe ioband_model"
wait_for 10 test -b /dev/model0
log "model: $(tr '\n' ' ' <"$SYS/model/params")"
size=$(dev_sectors /dev/model0)
mm=$(dev_majmin /dev/model0)
cg_create mb/a
cg_create mb/b
a=$(cg_id mb/a)
b=$(cg_id mb/b)
no_fio() { ! pidof fio >/dev/null; }

# iocost's linear model of the device: per-byte cost from bps, per-IO cost
# from 4 KiB random IOPS less its pages (blk-iocost.c calc_lcoefs), at
# the device's full parallelism.
iocost_model() {
	awk -v ch=$CH -v rio=$RIO -v rkib=$RKIB -v wio=$WIO -v wkib=$WKIB 'BEGIN {
		rbps = int(ch * 1024e9 / rkib); wbps = int(ch * 1024e9 / wkib)
		riops = int(ch * 1e9 / (rio + 4 * rkib)); wiops = int(ch * 1e9 / (wio + 4 * wkib))
		printf "rbps=%d rseqiops=%d rrandiops=%d wbps=%d wseqiops=%d wrandiops=%d",
			rbps, riops, riops, wbps, wiops, wiops }'
}

# variant_on VARIANT WA WB: the device /dev/mapper/mb and the controller.
variant_on() {
	case $1 in
	ioband:*)
		dm_create mb "0 $size ioband /dev/model0 mb 0 0 cgroup ${1#ioband:} 0 :100 $a:$2 $b:$3" >/dev/null ;;
	*)
		dm_create mb "0 $size linear /dev/model0 0" >/dev/null ;;
	esac
	case $1 in
	bfq)
		echo bfq >"$SYS/queue/scheduler" || fail "no bfq"
		echo "$2" >"$CGROOT/mb/a/io.bfq.weight"
		echo "$3" >"$CGROOT/mb/b/io.bfq.weight" ;;
	iocost)
		echo "$mm ctrl=user model=linear $(iocost_model)" >"$CGROOT/io.cost.model"
		echo "$mm enable=1 ctrl=user rpct=95 rlat=50000 wpct=95 wlat=50000 min=25 max=400" >"$CGROOT/io.cost.qos"
		echo "$2" >"$CGROOT/mb/a/io.weight"
		echo "$3" >"$CGROOT/mb/b/io.weight"
		log "iocost: $(grep "^$mm " "$CGROOT/io.cost.model") | $(grep "^$mm " "$CGROOT/io.cost.qos")" ;;
	esac
}

variant_off() {
	case $1 in
	bfq) echo none >"$SYS/queue/scheduler" ;;
	iocost) echo "$mm enable=0" >"$CGROOT/io.cost.qos" ;;
	esac
	dm_remove mb || fail "cannot remove mb"
}

job() { # GROUP FIO-ARGS...
	_g=$1
	shift
	cg_run "mb/$_g" fio --name="$_g" --filename=/dev/mapper/mb --direct=1 \
		--ioengine=libaio --time_based --runtime=300 --output=/dev/null "$@" || true
}

# run SCENARIO VARIANT
run() {
	case $1 in
	rrsw8)	# 4 KiB random reader at 8 against a 256 KiB sequential writer at 1
		variant_on "$2" 800 100
		job a --rw=randread --bs=4k --iodepth=16 --size=128m &
		job b --rw=write --bs=256k --iodepth=4 --offset=256m --size=128m & ;;
	rw11)	# 4 KiB random reads against 4 KiB random writes at 1:1
		variant_on "$2" 100 100
		job a --rw=randread --bs=4k --iodepth=16 --size=128m &
		job b --rw=randwrite --bs=4k --iodepth=16 --offset=256m --size=128m & ;;
	*) fail "unknown scenario $1" ;;
	esac
	sleep "$MB_WARMUP"
	echo reset >"$SYS/model/cgroup_time"
	_t0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$MB_SECS"
	cp "$SYS/model/cgroup_time" ct
	_t1=$(cut -d' ' -f1 /proc/uptime)
	[ "${2#ioband:}" = "$2" ] || log "$1 $2: $(dmsetup message mb 0 stats | head -n 1 | tr ' ' '\n' | grep '^time_' | tr '\n' ' ')"
	killall -KILL fio 2>/dev/null || true
	within 60 no_fio || fail "fio still running"
	wait
	for _g in "a $a" "b $b"; do
		awk -v s="$1" -v v="$2" -v g="${_g% *}" -v id="${_g#* }" -v t0="$_t0" -v t1="$_t1" \
			'$1 == id { printf "RESULT %s %s %s %s %s %s %.2f\n", s, v, g, $2, $4, $3, t1 - t0 }' ct
	done
	variant_off "$2"
}

for s in $MB_SCENARIOS; do
	for v in $MB_VARIANTS; do
		run "$s" "$v"
	done
done
cg_remove mb/a
cg_remove mb/b
cg_remove mb
