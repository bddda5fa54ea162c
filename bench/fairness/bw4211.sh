# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# bw4211 (issue 16's scenario c): four cgroups weighted 4:2:1:1, 16 buffered
# writers each (`fio --rw=write --numjobs=16`, BENCH_BW4211_SIZE_MB MiB per
# job: 128 MiB a group, twice the dirty limit, so that the weight-400 group
# does not end inside the page cache before the others have started), each
# in its own folder of one ext4 on the device under test.
: "${BENCH_BW4211_JOBS:=16}" "${BENCH_BW4211_SIZE_MB:=8}" "${BENCH_BW_BS:=64k}"
BENCH_BUFFERED=1
BENCH_FIO_LOG=0 # fio's bandwidth here is the page cache's: the plots take io.stat's
bench_nullb bf-bw4211 2048 mbps=32 memory_backed=1
bench_calibrate
bench_groups "a:400 b:200 c:100 d:100"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=write --bs=$BENCH_BW_BS --size=${BENCH_BW4211_SIZE_MB}m --numjobs=$BENCH_BW4211_JOBS\""
done
bench_dirty_limits
bench_config bw4211 "share:10,agg:95"
bench_each bw4211 bench_buffered $BENCH_BEST ioband:weight-iosize
bench_dirty_restore
bench_cleanup_groups
remove_nullb bf-bw4211
