# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# resv30 (issue 6): under weight-range, group a reserved 30% of the 16 MiB/s
# device (4915 KB/s) against seven greedy groups, all of weight 100: it must
# get at least its reservation (by weight alone: 1/8). 16 KiB random reads,
# O_DIRECT libaio, 1 job x iodepth 32 per group. Check reserve:<group>:<KB/s>.
BENCH_DEFAULT_SPEC=100:0:0
: "${BENCH_RANGE_JOB:=--rw=randread --bs=16k --numjobs=1 --iodepth=32}"
bench_nullb bf-resv30 4096 mbps=16
bench_groups "a:100:4915:0 b:100:0:0 c:100:0:0 d:100:0:0 e:100:0:0 f:100:0:0 g:100:0:0 h:100:0:0"
for _n in $BENCH_GROUPS; do eval "JOB_$_n=\$BENCH_RANGE_JOB"; done
bench_config resv30
bench C resv30 range=1 range_checks=reserve:a:4915
bench_variants resv30 none ioband:weight-range
bench_cleanup_groups
remove_nullb bf-resv30
