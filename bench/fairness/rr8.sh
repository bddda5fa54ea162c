# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# rr8 (seed 000, randread vs randread): two cgroups reading 4 KiB blocks at
# random, O_DIRECT libaio, weights 800:100. The seed ran 8 jobs x iodepth 32
# per cgroup; BENCH_RR8_JOBS / BENCH_RR8_DEPTH scale it to the guest.
: "${BENCH_RR8_JOBS:=8}" "${BENCH_RR8_DEPTH:=32}"
bench_nullb bf-rr8 4096 mbps=16
bench_groups "a:800 b:100"
JOB_a="--rw=randread --bs=4k --numjobs=$BENCH_RR8_JOBS --iodepth=$BENCH_RR8_DEPTH"
JOB_b=$JOB_a
bench_config rr8
bench_variants rr8
bench_cleanup_groups
remove_nullb bf-rr8
