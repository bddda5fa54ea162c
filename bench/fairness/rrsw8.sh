# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# rrsw8 (seed 000, randread vs sequential write): a cgroup reading 4 KiB at
# random (weight 800; 8 jobs x iodepth 32, as the seed) against one writing
# 256 KiB sequentially (weight 100; 1 job x iodepth 32), O_DIRECT libaio.
# ioband's policies `weight` (shares of IOs) and `weight-iosize` (of
# sectors) differ here: the groups' IOs differ in size.
: "${BENCH_RR8_JOBS:=8}" "${BENCH_RR8_DEPTH:=32}"
bench_nullb bf-rrsw8 4096 mbps=16
bench_calibrate
bench_groups "r:800 w:100"
JOB_r="--rw=randread --bs=4k --numjobs=$BENCH_RR8_JOBS --iodepth=$BENCH_RR8_DEPTH"
JOB_w="--rw=write --bs=256k --numjobs=1 --iodepth=32"
bench_config rrsw8 "ratio:1,agg:97"
bench_variants rrsw8 $BENCH_BEST ioband:weight-iosize
bench_cleanup_groups
remove_nullb bf-rrsw8
