# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# left31 (issue 6): under weight-range, groups a and b each reserved 10% of
# the 16 MiB/s device (1638 KB/s), weights 300:100: each gets its
# reservation and what is left splits 3:1 (within 5%). 16 KiB random reads,
# O_DIRECT libaio, 4 jobs x iodepth 32 per group: with 1 x 32 (no more
# outstanding than io_limit) a's fio, slow to resubmit in a busy guest, left
# a's queue in ioband empty and b took part of a's share (2.12:1 on 6.12;
# the simulator, whose issuers resubmit at once, 3.00:1 on a model of this
# null_blk).
# Check leftover:<group>:<its min>:<group>:<its min>:<ratio>.
BENCH_DEFAULT_SPEC=100:0:0
: "${BENCH_RANGE_JOB:=--rw=randread --bs=16k --numjobs=4 --iodepth=32}"
bench_nullb bf-left31 4096 mbps=16
bench_groups "a:300:1638:0 b:100:1638:0"
for _n in $BENCH_GROUPS; do eval "JOB_$_n=\$BENCH_RANGE_JOB"; done
bench_config left31
bench C left31 range=1 range_checks=reserve:a:1638,reserve:b:1638,leftover:a:1638:b:1638:3
bench_variants left31 none ioband:weight-range
bench_cleanup_groups
remove_nullb bf-left31
