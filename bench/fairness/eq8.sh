# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# eq8 (seed 001, 8 groups): eight cgroups of equal weight reading 4 KiB at
# random, O_DIRECT libaio, BENCH_EQ8_JOBS x iodepth BENCH_EQ8_DEPTH each.
: "${BENCH_EQ8_JOBS:=1}" "${BENCH_EQ8_DEPTH:=32}"
bench_nullb bf-eq8 4096 mbps=16
bench_groups "g1:100 g2:100 g3:100 g4:100 g5:100 g6:100 g7:100 g8:100"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=randread --bs=4k --numjobs=$BENCH_EQ8_JOBS --iodepth=$BENCH_EQ8_DEPTH\""
done
bench_config eq8
bench_variants eq8
bench_cleanup_groups
remove_nullb bf-eq8
