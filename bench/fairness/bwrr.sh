# shellcheck shell=sh disable=SC2034 # JOB_<group>: read by lib.sh
# bwrr (issue 16's scenario e): weights 1:1, one cgroup of 16 buffered
# writers (into an ext4 on the device under test, 16 MiB files rewritten
# for the whole run) against one of direct 4 KiB random readers (1 job x
# iodepth 16, O_DIRECT libaio, on the device itself): the readers' p99.
# The readers' ramp is 2 s longer, so that writeback is under way when
# fio starts counting.
: "${BENCH_BWRR_WRITERS:=16}" "${BENCH_BWRR_DEPTH:=16}"
BENCH_BUFFERED=1
bench_nullb bf-bwrr 2048 mbps=32 memory_backed=1
bench_calibrate
bench_groups "w:100 r:100"
JOB_w="--rw=write --bs=$BENCH_BW_BS --size=16m --numjobs=$BENCH_BWRR_WRITERS --time_based \
--runtime=$((BENCH_RUNTIME + BENCH_RAMP + 2))"
JOB_r="--rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=$BENCH_BWRR_DEPTH --numjobs=1 \
--time_based --runtime=$BENCH_RUNTIME --ramp_time=$((BENCH_RAMP + 2)) --norandommap --randrepeat=0"
bench_buffered_run bwrr "p99half:r"
