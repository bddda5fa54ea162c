# shellcheck shell=sh disable=SC2034,SC2086 # JOB_<group>: read by lib.sh; spec lists
# rr8 (seed 000; issue 16's scenario d): two cgroups reading 4 KiB blocks at
# random, O_DIRECT libaio, weights 800:100, at several loads: per group
# JOBSxIODEPTH of BENCH_RR8_DEPTHS. The seed ran 8 x 32. The peers' whole
# sweep (and each peer set on the dm device itself) runs at
# BENCH_SWEEP_DEPTH, each peer's designated best at the other depths.
: "${BENCH_RR8_DEPTHS:=1x4 1x16 4x16 8x32}" "${BENCH_SWEEP_DEPTH:=4x16}"
bench_nullb bf-rr8 4096 mbps=16
bench_calibrate
bench_groups "a:800 b:100"
for depth in $BENCH_RR8_DEPTHS; do
	JOB_a="--rw=randread --bs=4k --numjobs=${depth%x*} --iodepth=${depth#*x}"
	JOB_b=$JOB_a
	bench_config "rr8-$depth" "ratio:5,agg:97"
	if [ "$depth" = "$BENCH_SWEEP_DEPTH" ]; then
		bench_variants "rr8-$depth" $BENCH_SWEEP $BENCH_AT_DM
	else
		bench_variants "rr8-$depth" $BENCH_BEST
	fi
done
bench_cleanup_groups
remove_nullb bf-rr8
