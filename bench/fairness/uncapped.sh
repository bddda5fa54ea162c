# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# uncapped (issue 16's scenario f): a null_blk without mbps=, so that the
# guest's CPU is the bottleneck: 4 KiB random reads, O_DIRECT libaio, two
# cgroups of weight 100 with 1 job x iodepth 32 each (64 outstanding): IOPS
# through ioband against dm-linear. CPU-bound figures are noisy: every
# variant runs BENCH_ROUNDS times, the order shuffled per round, and the
# host pairs each ioband run with dm-linear's of the same round.
BENCH_ROUNDS=${BENCH_UNCAPPED_ROUNDS:-8}
bench_nullb bf-uncapped 1024
bench_groups "a:100 b:100"
JOB_a="--rw=randread --bs=4k --numjobs=1 --iodepth=32"
JOB_b=$JOB_a
bench_config uncapped "iops:95"
bench_variants uncapped none ioband:weight
BENCH_ROUNDS=1
bench_cleanup_groups
remove_nullb bf-uncapped
