# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# bw2 (seed 004 on one file system; issue 16's scenario b): two cgroups,
# weights 200:100, each running `fio --rw=write --numjobs=50`
# (BENCH_BW_JOBS) into its own folder of one ext4 on the device under test,
# BENCH_BW_SIZE_MB MiB per job, BENCH_BW_BS writes.
: "${BENCH_BW_JOBS:=50}" "${BENCH_BW_BS:=64k}"
BENCH_BUFFERED=1
BENCH_FIO_LOG=0 # fio's bandwidth here is the page cache's: the plots take io.stat's
bench_nullb bf-bw2 2048 mbps=32 memory_backed=1
bench_calibrate
bench_groups "a:200 b:100"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=write --bs=$BENCH_BW_BS --size=${BENCH_BW_SIZE_MB}m --numjobs=$BENCH_BW_JOBS\""
done
bench_dirty_limits
bench_config bw2 "ratio:10,agg:95"
bench_each bw2 bench_buffered $BENCH_BEST ioband:weight-iosize
bench_dirty_restore
bench_cleanup_groups
remove_nullb bf-bw2
