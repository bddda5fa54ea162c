# shellcheck shell=sh
# bw4211 (issue 16's scenario c): four cgroups weighted 4:2:1:1, 16 buffered
# writers each (`fio --rw=write --numjobs=16`, BENCH_BW4211_SIZE_MB MiB per
# job: 128 MiB a group, twice the dirty limit, so that the weight-400 group
# does not end inside the page cache before the others have started), each
# in its own folder of one ext4 on the device under test.
: "${BENCH_BW4211_JOBS:=16}" "${BENCH_BW4211_SIZE_MB:=8}"
bench_writers bw4211 "a:400 b:200 c:100 d:100" "$BENCH_BW4211_JOBS" "$BENCH_BW4211_SIZE_MB" "share:10,agg:95"
