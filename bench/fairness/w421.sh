# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# w421: three cgroups weighted 40:20:10 writing 4 KiB at random, O_DIRECT
# libaio, BENCH_W421_JOBS x iodepth BENCH_W421_DEPTH each.
: "${BENCH_W421_JOBS:=2}" "${BENCH_W421_DEPTH:=32}"
bench_nullb bf-w421 4096 mbps=16
bench_calibrate
bench_groups "a:40 b:20 c:10"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=randwrite --bs=4k --numjobs=$BENCH_W421_JOBS --iodepth=$BENCH_W421_DEPTH\""
done
bench_config w421 "ratio:1,agg:97"
bench_variants w421 $BENCH_BEST
bench_cleanup_groups
remove_nullb bf-w421
