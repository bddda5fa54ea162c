# shellcheck shell=sh
# bw2 (seed 004 on one file system; issue 16's scenario b): two cgroups,
# weights 200:100, each running `fio --rw=write --numjobs=50`
# (BENCH_BW_JOBS, BENCH_BW_SIZE_MB MiB per job) into its own folder of one
# ext4 on the device under test.
bench_writers bw2 "a:200 b:100" "$BENCH_BW_JOBS" "$BENCH_BW_SIZE_MB" "ratio:10,agg:95"
