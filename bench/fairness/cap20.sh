# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# cap20 (issue 6): under range-bw, group a capped at 20% of the 16 MiB/s
# device (3276 KB/s), first alone, then beside three greedy groups; it
# must hold its cap within 5% both times. 16 KiB random reads, O_DIRECT
# libaio, 1 job x iodepth 32 per group. The checks (C lines, range_checks)
# are evaluated by the host: cap:<group>:<KB/s>.
BENCH_DEFAULT_SPEC=0:0
: "${BENCH_RANGE_JOB:=--rw=randread --bs=16k --numjobs=1 --iodepth=32}"
bench_nullb bf-cap20 4096 mbps=16
bench_groups "a:0:3276"
JOB_a=$BENCH_RANGE_JOB
bench_config cap20-alone
bench C cap20-alone range=1 range_checks=cap:a:3276
bench_variants cap20-alone none ioband:range-bw
bench_cleanup_groups
bench_groups "a:0:3276 b:0:0 c:0:0 d:0:0"
for _n in $BENCH_GROUPS; do eval "JOB_$_n=\$BENCH_RANGE_JOB"; done
bench_config cap20-busy
bench C cap20-busy range=1 range_checks=cap:a:3276
bench_variants cap20-busy none ioband:range-bw
bench_cleanup_groups
remove_nullb bf-cap20
