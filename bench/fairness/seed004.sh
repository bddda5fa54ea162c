# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# seed004 (seed 004 exactly; issue 16's scenario a): two devices over the two
# halves of one capped null_blk, each with its own ext4. Cgroup a (weight
# 200) writes only to the first, b (100) only to the second, `fio
# --rw=write --numjobs=50` each (BENCH_BW_JOBS, BENCH_BW_SIZE_MB MiB per job,
# BENCH_BW_BS writes). ioband: one target over each half, both in one
# bandwidth domain (the same ioband_device_id); the peers: the two dm-linear
# devices over the halves, the peer set on the null_blk below.
: "${BENCH_BW_JOBS:=50}" "${BENCH_BW_BS:=64k}"
BENCH_BUFFERED=1
BENCH_FIO_LOG=0 # fio's bandwidth here is the page cache's: the plots take io.stat's
BENCH_LAYOUT=halves
bench_nullb bf-seed004 2048 mbps=32 memory_backed=1
bench_calibrate
bench_groups "a:200 b:100"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=write --bs=$BENCH_BW_BS --size=${BENCH_BW_SIZE_MB}m --numjobs=$BENCH_BW_JOBS\""
done
bench_dirty_limits
bench_config seed004 "ratio:5,agg:95"
bench_each seed004 bench_buffered $BENCH_BEST ioband:weight-iosize
bench_dirty_restore
bench_cleanup_groups
remove_nullb bf-seed004
