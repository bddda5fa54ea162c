#!/bin/sh
# Load: 256 cgroups with mixed weights (50, 100, 200 and 400 in turn),
# attached in one table, each running its own fio job (4 KiB random
# reads, 16 outstanding: 4096 in all, io_limit 32) on a null_blk capped
# at 16 MiB/s, for 2 minutes. (With 4 outstanding, a group of weight 400,
# 22 bios/s, went idle whenever its fio waited over 0.2 s for a CPU
# among 256 busy processes: 88% of its share, and 152% for weight 50.)
# Pass:
#  - no hang: the load runs RL_SECONDS (default 120) from the moment
#    every job sends bios, fio ends when told to with no error, and
#    ioband ends with nothing held or in flight (a hang is also the
#    harness's hung-task check);
#  - shares: over a 100 s window, each cgroup's bios down (its io.stat
#    rios on the null_blk, counted when ioband sends a bio down) are
#    its weight's share of all of them within 10%;
#  - memory: /proc/meminfo SUnreclaim and the kmalloc caches of
#    /proc/slabinfo are printed before the device, with its 256 groups,
#    during the load, after it and after the device is removed. The
#    table's 256 groups cost kilobytes (about 512 bytes each); two
#    minutes of IO add nothing to the module (map never allocates:
#    a held bio waits in its per-bio data), so after the load
#    SUnreclaim (the caches shrunk first) is within RL_GROWTH_KB (8192)
#    KiB of where it was with the device idle (the kernel's own
#    per-cgroup block state for 256 cgroups on two devices stays until
#    the device goes: about 3 MiB measured; a leak of 32 bytes a bio
#    would be 8 MiB over the ~270,000 bios), and after the removal within
#    as much of where it was before.
# Setup (256 cgroups, fio's 256 processes) and teardown take a minute or
# more under TCG on a busy host, the load two.
# On the debug kernel (slow_kernel) 256 fio processes under KASAN and
# lockdep took over 45 minutes: there the test runs 64 groups, and prints
# the shares (perf_check: the CPU, not the device, bounds the IO) and the
# memory figures without holding them (KASAN's quarantine keeps freed
# objects, up to 1/32 of memory, in the slab; the harness's kmemleak scan
# checks for leaks there instead).
# harness-timeout: 480
# shellcheck source=../lib.sh
. /ioband/lib.sh
set -eu

RL_SECONDS=${RL_SECONDS:-120}
RL_GROWTH_KB=${RL_GROWTH_KB:-8192}
NGROUPS=256
! slow_kernel || NGROUPS=64
WEIGHTS="50 100 200 400"

# slab_kb: SUnreclaim once the slab caches have given back their empty
# slabs (each cache's shrink file), so that what the 256 fio processes
# freed but SLUB still held is not counted: without it 7.3 once showed
# 8460 KiB more after the load while its kmalloc caches held 856 KiB more.
slab_kb() {
	sleep 1 # RCU-deferred frees
	for _f in /sys/kernel/slab/*/shrink; do echo 1 >"$_f" 2>/dev/null || :; done
	awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo
}
kmalloc_kb() { # the kmalloc caches' objects in use, in KiB
	awk '$1 ~ /^kmalloc-(rnd-[0-9]+-)?[0-9]+k?$/ { s += $2 * $4 } END { printf "%d\n", s / 1024 }' /proc/slabinfo
}
mem() { echo "SUnreclaim $(slab_kb) KiB, kmalloc $(kmalloc_kb) KiB"; }

nb=$(make_nullb rl 1024 mbps=16)
mm=$(dev_majmin "$nb")
size=$(dev_sectors "$nb")

# The cgroups rl/g1..g256, weights in turn. fio starts its jobs in the
# root cgroup, the default group: each job's first 16 bios are held there
# until served at the default group's weight. Heavy (10000), it drains
# them in a second; at 100 (0.2% of the weights) it took two minutes.
# Idle afterwards, it takes no part in the shares.
nw=$(echo "$WEIGHTS" | wc -w)
i=1
while [ $i -le $NGROUPS ]; do
	cg_create "rl/g$i"
	i=$((i + 1))
done
table="0 $size ioband $nb rl 0 0 cgroup weight 0 :10000 $(
	for i in $(seq $NGROUPS); do cg_id "rl/g$i"; done |
		awk -v w="$WEIGHTS" 'BEGIN { n = split(w, ws, " ") } { printf "%s%s:%s", (NR > 1 ? " " : ""), $1, ws[(NR - 1) % n + 1] }')"
sync
sleep 1
m0=$(slab_kb) k0=$(kmalloc_kb)
echo "before the device: $(mem)"
dm_create rl "$table" >/dev/null
sleep 1
m1=$(slab_kb) k1=$(kmalloc_kb)
echo "device with $NGROUPS groups, idle: $(mem) ($((k1 - k0)) KiB more kmalloc)"
assert_eq "$(dmsetup status rl | wc -w)" $((4 + 7 * (NGROUPS + 1))) "words in the status (the default group and $NGROUPS groups)"

# One fio, one job per cgroup, each moved into its cgroup (move_jobs).
# gtod_reduce: no latency figures, a fraction of fio's CPU in TCG.
fio --name=load --filename=/dev/mapper/rl --direct=1 --ioengine=libaio --iodepth=16 \
	--rw=randread --bs=4k --size=1G --numjobs=$NGROUPS --time_based --runtime=3600 \
	--gtod_reduce=1 --disk_util=0 --group_reporting --output=fio.txt &
fiopid=$!
# shellcheck disable=SC2046 # the list of cgroups
move_jobs "$fiopid" $(for i in $(seq $NGROUPS); do echo "rl/g$i"; done)

rios() { # the rios of each cgroup on the null_blk, one a line, g1 first
	awk -v dev="$mm" -v n=$NGROUPS '
		{ g = FILENAME; sub(/.*\/g/, "", g); sub(/\/io.stat$/, "", g) }
		$1 == dev { for (f = 2; f <= NF; f++) if ($f ~ /^rios=/) { sub(/rios=/, "", $f); r[g] = $f } }
		END { for (i = 1; i <= n; i++) print r[i] + 0 }' "$CGROOT"/rl/g*/io.stat
}
# The load starts when every job has sent bios from its cgroup.
wait_for 120 sh -c "[ \$(awk -v dev=$mm '\$1 == dev && / rios=[1-9]/' $CGROOT/rl/g*/io.stat | wc -l) -ge $NGROUPS ]"
log "$NGROUPS jobs in their cgroups, each sending bios"
t0=$(cut -d. -f1 /proc/uptime)
warm=10
window=$((RL_SECONDS - 2 * warm))
sleep $warm
rios >rios0.txt
sleep $window
rios >rios1.txt
mload=$(slab_kb) kload=$(kmalloc_kb)
echo "during the load: $(mem)"
sleep $warm
held=$(dmsetup message rl 0 stats | head -n 1 | sed 's/.* in_flight=\([0-9]*\) queued=\([0-9]*\) .*/\1 in flight, \2 held/')
kill "$fiopid"
wait "$fiopid" || true
elapsed=$(($(cut -d. -f1 /proc/uptime) - t0))
log "load of $elapsed s ended ($held at its end)"
grep -q 'err= 0' fio.txt || { cat fio.txt; fail "fio reported errors"; }
wait_for 10 sh -c "dmsetup message rl 0 stats | head -n 1 | grep -q ' in_flight=0 queued=0 '"
[ -z "$(proc_stats | awk '$2 == "(fio)"')" ] || fail "fio processes left after the load"

# Shares: measured / expected for each cgroup.
echo "$WEIGHTS" >weights.txt
paste -d' ' rios0.txt rios1.txt | awk -v nw="$nw" -v window="$window" '
	NR == FNR { for (i = 1; i <= NF; i++) w[i] = $i; next }
	{ n++; d[n] = $2 - $1; wt[n] = w[(n - 1) % nw + 1]; total += d[n]; wsum += wt[n] }
	END {
		bad = 0
		for (i = 1; i <= n; i++) {
			r = d[i] / (total * wt[i] / wsum)
			if (i == 1 || r < min) { min = r; imin = i }
			if (i == 1 || r > max) { max = r; imax = i }
			byw[wt[i]] += r; cnt[wt[i]]++
			if (r < 0.9 || r > 1.1) { bad++; printf "g%d (weight %d): %d bios, %.1f%% of its share\n", i, wt[i], d[i], 100 * r }
		}
		printf "%d bios in %d s (%d/s); share of each cgroup against its weight'"'"'s: %.1f%% (g%d) to %.1f%% (g%d)", total, window, total / window, 100 * min, imin, 100 * max, imax
		for (k = 1; k <= nw; k++) printf "%sweight %d: %.1f%% on average", k == 1 ? "; " : ", ", w[k], 100 * byw[w[k]] / cnt[w[k]]
		printf "\n"
		# 10% of a share means something only over enough bios.
		for (k = 1; k <= nw; k++) if (total * w[k] / wsum < 100) { print "too few bios for a weight of " w[k]; bad++ }
		exit bad > 0
	}' weights.txt - || perf_check fail "a cgroup's share is more than 10% off its weight's"
m2=$(slab_kb) k2=$(kmalloc_kb)
echo "after the load, device idle: $(mem)"
slow_kernel || assert_le $((m2 - m1)) "$RL_GROWTH_KB" "SUnreclaim growth over the load, KiB"

dm_remove rl
remove_nullb rl
i=1
while [ $i -le $NGROUPS ]; do
	cg_remove "rl/g$i"
	i=$((i + 1))
done
cg_remove rl
sync
sleep 2
m3=$(slab_kb) k3=$(kmalloc_kb)
echo "after the removal: $(mem)"
echo "memory (SUnreclaim / kmalloc, KiB): before $m0 / $k0, $NGROUPS groups idle $m1 / $k1, under load $mload / $kload, after the load $m2 / $k2, removed $m3 / $k3"
slow_kernel || assert_le $((m3 - m0)) "$RL_GROWTH_KB" "SUnreclaim after the removal against before, KiB"
