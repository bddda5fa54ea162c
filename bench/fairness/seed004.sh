# shellcheck shell=sh
# seed004 (seed 004 exactly; issue 16's scenario a): two devices over the two
# halves of one capped null_blk, each with its own ext4. Cgroup a (weight
# 200) writes only to the first, b (100) only to the second, `fio
# --rw=write --numjobs=50` each (BENCH_BW_JOBS, BENCH_BW_SIZE_MB MiB per
# job). ioband: one target over each half, both in one bandwidth domain (the
# same ioband_device_id); the peers: the two dm-linear devices over the
# halves, the peer set on the null_blk below.
BENCH_LAYOUT=halves
bench_writers seed004 "a:200 b:100" "$BENCH_BW_JOBS" "$BENCH_BW_SIZE_MB" "ratio:5,agg:95"
