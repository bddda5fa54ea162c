# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# eq8 (seed 001): eight cgroups of equal weight reading 4 KiB at random,
# O_DIRECT libaio, at the loads of BENCH_EQ8_DEPTHS (per group JOBSxIODEPTH),
# each peer at its designated best.
: "${BENCH_EQ8_DEPTHS:=1x4 1x16 4x16 8x32}"
bench_nullb bf-eq8 4096 mbps=16
bench_calibrate
bench_groups "g1:100 g2:100 g3:100 g4:100 g5:100 g6:100 g7:100 g8:100"
for depth in $BENCH_EQ8_DEPTHS; do
	for _n in $BENCH_GROUPS; do
		eval "JOB_$_n=\"--rw=randread --bs=4k --numjobs=${depth%x*} --iodepth=${depth#*x}\""
	done
	bench_config "eq8-$depth" "ratio:5,agg:97"
	bench_variants "eq8-$depth" $BENCH_BEST
done
bench_cleanup_groups
remove_nullb bf-eq8
