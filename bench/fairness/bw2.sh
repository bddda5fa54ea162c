# shellcheck shell=sh disable=SC2034 # JOB_<group>, BENCH_*: read by lib.sh (through eval)
# bw2 (seed 004, buffered writes): two cgroups, weights 200:100, each
# running `fio --rw=write --numjobs=50` (BENCH_BW_JOBS) into its own folder
# of one ext4 on the device under test, BENCH_BW_SIZE_MB MiB per job, 64 KiB
# writes (the seed: 64 MiB per job, fio's default 4 KiB). The guest's dirty
# limits are lowered (BENCH_BW_DIRTY_MB, a quarter of it for background
# writeback) so that, as on the seed's machine, the data written is many
# times what the page cache may hold dirty: the writers are paced by
# writeback, and writeback by the device.
: "${BENCH_BW_DIRTY_MB:=64}"
: "${BENCH_BW_POLICIES:=$BENCH_POLICIES}" # ioband's policies here
# fio's bandwidth here is the page cache's: the plots take the device's
# (io.stat) instead.
BENCH_FIO_LOG=0
# The data lives in guest memory (memory_backed): each variant gets a fresh
# null_blk with the same attributes, so that the baseline's data is freed
# (a discard would be throttled by mbps= like a write: minutes).
bench_nullb bf-bw2 2048 mbps=32 memory_backed=1
bench_groups "a:200 b:100"
for _n in $BENCH_GROUPS; do
	eval "JOB_$_n=\"--rw=write --bs=64k --size=${BENCH_BW_SIZE_MB}m --numjobs=$BENCH_BW_JOBS\""
done
old_dirty=$(cat /proc/sys/vm/dirty_bytes) old_bg=$(cat /proc/sys/vm/dirty_background_bytes)
old_ratio=$(cat /proc/sys/vm/dirty_ratio) old_bg_ratio=$(cat /proc/sys/vm/dirty_background_ratio)
echo $((BENCH_BW_DIRTY_MB << 20)) >/proc/sys/vm/dirty_bytes
echo $((BENCH_BW_DIRTY_MB << 18)) >/proc/sys/vm/dirty_background_bytes
bench_config bw2
bench C bw2 buffered=1
bench C bw2 "dirty_bytes=$(cat /proc/sys/vm/dirty_bytes)" \
	"dirty_background_bytes=$(cat /proc/sys/vm/dirty_background_bytes)"

bench_bw2() { # SCEN VAR KIND POLICY IO_LIMIT
	bench_create "$@"
	_v=$2
	log "bw2 $_v: $(dmsetup table "$BENCH_DM")"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "/dev/mapper/$BENCH_DM"
	mkdir -p mnt
	mount -t ext4 "/dev/mapper/$BENCH_DM" mnt
	for _n in $BENCH_GROUPS; do mkdir "mnt/$_n"; done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	BENCH_PIDS=
	_t0=$(uptime_s)
	bench_sampler_start bw2 "$_v" "$_t0"
	for _n in $BENCH_GROUPS; do
		# shellcheck disable=SC2046 # JOB_g is a list of options
		bench_start_group bw2 "$_v" "$_t0" "$_n" --directory="mnt/$_n" \
			$(eval echo "\$JOB_$_n")
	done
	bench_wait_groups
	sync
	bench E bw2 "$_v" _sync "$(awk -v t0="$_t0" '{ printf "%.2f", $1 - t0 }' /proc/uptime)" 0
	bench_sampler_stop
	for _n in $BENCH_GROUPS; do bench_fio_json bw2 "$_v" "$_n" "fio-$_v-$_n.json"; done
	bench X bw2 "$_v" "status=$(dmsetup status "$BENCH_DM" | tr ' ' ,)"
	umount mnt
	bench_destroy
	remove_nullb bf-bw2
	bench_nullb bf-bw2 2048 mbps=32 memory_backed=1
}

bench_each bw2 bench_bw2 "$BENCH_BW_POLICIES"

echo "$old_ratio" >/proc/sys/vm/dirty_ratio
echo "$old_bg_ratio" >/proc/sys/vm/dirty_background_ratio
[ "$old_dirty" = 0 ] || echo "$old_dirty" >/proc/sys/vm/dirty_bytes
[ "$old_bg" = 0 ] || echo "$old_bg" >/proc/sys/vm/dirty_background_bytes
bench_cleanup_groups
remove_nullb bf-bw2
