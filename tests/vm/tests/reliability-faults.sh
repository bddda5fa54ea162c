#!/bin/sh
# Faults below ioband: a failing device under a queue of held bios.
#  1. dm-flakey failing every write (error_writes), then every read (no
#     feature: reads fail while down; error_reads where the kernel has
#     it): each of 96 concurrent O_DIRECT submitters, most of them held
#     in ioband behind io_limit 4 and a slow reader, gets EIO; none hangs;
#     the counters add up (96 bios, 768 sectors) and end with queued=0
#     in_flight=0; once flakey is healthy again IO flows and verifies.
#  2. dm-flakey with up/down intervals (error_writes, then drop_writes)
#     under a deep fio load: every IO completes (errors reach fio), none
#     hangs, nothing is left held.
#  3. null_blk bad blocks: IO to the bad sectors fails with EIO, IO to
#     the others around it succeeds, all concurrently; after the bad
#     blocks are cleared the same sectors read and write.
#  4. Removal while bios are held: a suspend drains them; dmsetup remove
#     --force (error table) completes or fails every one of them and the
#     device goes once closed; rmmod dm-ioband is refused while an
#     ioband device exists, and succeeds (then reloads) when none does.
#  5. A cgroup removed (rmdir, after its processes moved out) while its
#     bios are held in ioband: none is lost, fio verifies all its data.
# shellcheck source=../lib.sh
. /ioband/lib.sh
set -eu

cg_create rf-a
cg_create rf-b
a=$(cg_id rf-a)
b=$(cg_id rf-b)

stats_idle() { # DEV: every group and the domain: queued=0 in_flight=0
	dmsetup message "$1" 0 stats | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(queued|in_flight)=/ && $i !~ /=0$/) bad = bad " " $1 " " $i }
		END { if (bad) { print "not idle:" bad; exit 1 } }'
}
# drained DEV: within 10 s nothing is held or in flight, else show where
# the bios are (dm and null_blk inflight, tables, suspended?) and fail.
drained() {
	_i=0
	while ! stats_idle "$1" >/dev/null; do
		_i=$((_i + 1))
		if [ "$_i" -ge 100 ]; then
			stats_idle "$1" || true
			for _d in /sys/block/*; do
				case ${_d##*/} in loop* | ram*) continue ;; esac
				echo "${_d##*/} $(cat "$_d/dm/name" 2>/dev/null || true) inflight: $(cat "$_d/inflight")"
			done
			dmsetup table
			dmsetup info -c
			pgrep -l 'fio|dd' || true
			fail "$1: bios still held or in flight after 10 s"
		fi
		sleep 0.1
	done
}
stat_field() { # DEV GROUP KEY
	dmsetup message "$1" 0 stats | awk -v g="group=$2" -v k="$3" '
		$1 == g { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
domain_field() { # DEV KEY
	dmsetup message "$1" 0 stats | awk -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }'
}
flakey() { # UP DOWN [FEATURE]: reload the flakey table under ioband
	_ft="0 $nsize flakey $nb 0 $1 $2"
	[ $# -lt 3 ] || _ft="$_ft 1 $3"
	echo "$_ft" | dmsetup load rf-f || return 1
	dmsetup resume rf-f || fail "cannot resume rf-f with: $_ft"
}
# burst CGROUP DIR FIRST N: N concurrent O_DIRECT 4 KiB dd's (one bio
# each) at blocks FIRST.., from CGROUP; prints how many failed, after
# every one has ended (a hang is the harness's timeout).
burst() {
	_n=0
	_pids=
	while [ "$_n" -lt "$4" ]; do
		if [ "$2" = write ]; then
			cg_run "$1" dd if=/dev/zero of=/dev/mapper/rf bs=4k count=1 \
				seek=$(($3 + _n)) oflag=direct 2>/dev/null &
		else
			cg_run "$1" dd if=/dev/mapper/rf of=/dev/null bs=4k count=1 \
				skip=$(($3 + _n)) iflag=direct 2>/dev/null &
		fi
		_pids="$_pids $!"
		_n=$((_n + 1))
	done
	_failed=0
	for _p in $_pids; do wait "$_p" || _failed=$((_failed + 1)); done
	echo "$_failed"
}
# stop_reader: end the background reader (fio runs as a child of the
# cg_run subshell whose pid $! is: kill what is in rf-b) and wait for it.
stop_reader() {
	while read -r _p; do kill "$_p" 2>/dev/null || true; done <"$CGROOT/rf-b/cgroup.procs"
	wait "$reader" 2>/dev/null || true
}
# A reader that keeps the slow device busy from rf-b (the held bios of
# rf-a wait behind it), run while its file exists.
background_reader() {
	cg_run rf-b fio --name=busy --filename=/dev/mapper/rf --direct=1 \
		--ioengine=libaio --iodepth=8 --rw=randread --bs=64k --offset=32M \
		--size=32M --time_based --runtime=120 --output=/dev/null \
		--continue_on_error=all &
	reader=$!
	sleep 1
}

# ---- 1. flakey failing every write, then every read ----
nb=$(make_nullb rf-nb 128 memory_backed=1 mbps=4)
nsize=$(dev_sectors "$nb")
dm_create rf-f "0 $nsize flakey $nb 0 1 0" >/dev/null
dm_create rf "0 $nsize ioband /dev/mapper/rf-f rf 0 4 cgroup weight 0 :100 $a:100 $b:100" >/dev/null

flakey 0 1 error_writes || fail "flakey error_writes"
background_reader
dmsetup message rf 0 reset
failed=$(burst rf-a write 0 96)
assert_eq "$failed" 96 "dd writes that failed while flakey errors writes"
assert_eq "$(stat_field rf "$a" writes)" 96 "writes counted to rf-a"
assert_eq "$(stat_field rf "$a" write_sectors)" 768 "write sectors counted to rf-a"
# How many were held first depends on how busy the reader keeps the
# device (flakey fails writes in its map, at once): reported, not checked.
delayed=$(stat_field rf "$a" delayed_writes)
echo "flakey error_writes: 96/96 writes failed with an error, $delayed of them held in ioband first"
wait_for 10 sh -c "[ \"\$(dmsetup message rf 0 stats | awk '\$1 == \"group=$a\"' | sed 's/.* queued=\([0-9]*\).*/\1/')\" = 0 ]"

read_feature=
if flakey 0 1 error_reads 2>/dev/null; then
	read_feature=error_reads
else
	flakey 0 1 || fail "flakey down"
fi
dmsetup message rf 0 reset
failed=$(burst rf-a read 0 96)
assert_eq "$failed" 96 "dd reads that failed while flakey is down (${read_feature:-no feature})"
assert_eq "$(stat_field rf "$a" reads)" 96 "reads counted to rf-a"
echo "flakey down (${read_feature:-no feature}): 96/96 reads failed with an error"
stop_reader
drained rf

# Healed: the same blocks write and read back.
flakey 1 0 || fail "flakey up"
failed=$(burst rf-a write 0 32)
assert_eq "$failed" 0 "writes that failed once flakey is up again"
cg_run rf-a fio --name=healed --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
	--iodepth=32 --rw=randwrite --bs=4k --size=8M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --output=fio-healed.txt || { cat fio-healed.txt; fail "IO after healing failed"; }
drained rf

# ---- 2. up/down intervals under a deep load ----
for mode in error_writes drop_writes; do
	flakey 1 1 "$mode" || fail "flakey $mode"
	dmsetup message rf 0 reset
	cg_run rf-a fio --name=flaky --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
		--iodepth=64 --numjobs=2 --rw=randrw --bs=4k --size=16M --offset_increment=16M \
		--time_based --runtime=6 --continue_on_error=all --group_reporting \
		--output-format=json --output="fio-$mode.json" &
	pf=$!
	cg_run rf-b fio --name=flaky-b --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
		--iodepth=64 --rw=randwrite --bs=16k --offset=64M --size=16M \
		--time_based --runtime=6 --continue_on_error=all \
		--output=/dev/null &
	pfb=$!
	wait "$pf" || true
	wait "$pfb" || true
	errs=$(sed -n 's/.*"total_err" *: *\([0-9]*\).*/\1/p' "fio-$mode.json" | head -n 1)
	ios=$(sed -n 's/.*"total_ios" *: *\([0-9]*\).*/\1/p' "fio-$mode.json" | awk '{ s += $1 } END { print s + 0 }')
	[ -n "$errs" ] || { cat "fio-$mode.json"; fail "no total_err in fio's report"; }
	drained rf
	counted=$(($(stat_field rf "$a" reads) + $(stat_field rf "$a" writes)))
	echo "flakey 1 s up / 1 s down, $mode: fio rf-a $ios IOs, $errs errors reported; ioband counted $counted bios"
	if [ "$mode" = error_writes ]; then assert_ge "$errs" 1 "errors reported by fio under $mode"; fi
	assert_ge "$counted" "$ios" "bios ioband counted vs IOs fio completed"
done
flakey 1 0 || fail "flakey up"
cg_run rf-a fio --name=healed2 --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
	--iodepth=32 --rw=randwrite --bs=4k --size=8M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --output=fio-healed2.txt || { cat fio-healed2.txt; fail "IO after healing failed"; }
dm_remove rf
dm_remove rf-f
remove_nullb rf-nb

# ---- 3. null_blk bad blocks ----
nb=$(make_nullb rf-bb 64 memory_backed=1 mbps=4)
[ -e "$NULLB_CONFIGFS/rf-bb/badblocks" ] || fail "null_blk has no badblocks attribute"
nsize=$(dev_sectors "$nb")
dm_create rf "0 $nsize ioband $nb rf 0 4 cgroup weight 0 :100 $a:100 $b:100" >/dev/null
# Blocks 256..287 (sectors 2048..2303) are bad.
echo "+2048-2303" >"$NULLB_CONFIGFS/rf-bb/badblocks"
background_reader_bb() {
	cg_run rf-b fio --name=busy --filename=/dev/mapper/rf --direct=1 \
		--ioengine=libaio --iodepth=8 --rw=randread --bs=64k --offset=16M \
		--size=32M --time_based --runtime=120 --output=/dev/null &
	reader=$!
	sleep 1
}
background_reader_bb
dmsetup message rf 0 reset
bad_w=$(burst rf-a write 256 32)
good1=$(burst rf-a write 224 32)
bad_r=$(burst rf-a read 256 32)
good2=$(burst rf-a read 288 32)
stop_reader
assert_eq "$bad_w" 32 "writes to bad blocks that failed"
assert_eq "$bad_r" 32 "reads of bad blocks that failed"
assert_eq "$good1" 0 "writes beside the bad blocks that failed"
assert_eq "$good2" 0 "reads beside the bad blocks that failed"
drained rf
echo "null_blk bad blocks: 32/32 writes and 32/32 reads of bad sectors failed, 64/64 beside them succeeded"
echo "-2048-2303" >"$NULLB_CONFIGFS/rf-bb/badblocks"
cg_run rf-a fio --name=cleared --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
	--iodepth=32 --rw=randwrite --bs=4k --offset=1M --size=1M --verify=crc32c \
	--verify_fatal=1 --do_verify=1 --output=fio-cleared.txt ||
	{ cat fio-cleared.txt; fail "IO to cleared bad blocks failed"; }
drained rf
dm_remove rf
remove_nullb rf-bb

# ---- 4. removal while bios are held ----
nb=$(make_nullb rf-rm 64 memory_backed=1 mbps=2)
nsize=$(dev_sectors "$nb")
dm_create rf "0 $nsize ioband $nb rf 0 4 cgroup weight 0 :100 $a:100" >/dev/null
held_load() { # NAME: a deep O_DIRECT load from rf-a in the background
	cg_run rf-a fio --name="$1" --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
		--iodepth=64 --numjobs=2 --rw=randwrite --bs=4k --size=4M --offset_increment=4M \
		--continue_on_error=all --group_reporting --output="fio-$1.txt" &
	load=$!
	wait_for 20 sh -c "[ \"\$(dmsetup message rf 0 stats | head -n 1 | sed 's/.* queued=\([0-9]*\).*/\1/')\" -ge 32 ]"
}
held_load suspend
queued=$(domain_field rf queued)
start=$(cut -d. -f1 /proc/uptime)
dmsetup suspend rf
stats_idle rf || fail "bios held after the suspend completed"
dmsetup resume rf
wait "$load" || { cat fio-suspend.txt; fail "fio failed across a suspend with $queued held bios"; }
grep -q "err= 0" fio-suspend.txt || { cat fio-suspend.txt; fail "IO errors across a suspend"; }
echo "suspend with $queued bios held: drained in $(($(cut -d. -f1 /proc/uptime) - start)) s, no error"

held_load forced
queued=$(domain_field rf queued)
# --force: load an error table and resume (suspending, so draining ioband),
# then remove; the remove itself fails while fio has the device open.
dmsetup remove --force rf 2>/dev/null || true
wait "$load" || true
wait_for 10 sh -c '! dmsetup info rf >/dev/null 2>&1 || dmsetup remove rf'
dmsetup info rf >/dev/null 2>&1 && fail "rf still exists after a forced remove and fio's exit"
grep -q "issued rwts" fio-forced.txt || { cat fio-forced.txt; fail "fio did not finish after the forced remove"; }
echo "dmsetup remove --force with $queued bios held: every submitter finished, device gone"

# rmmod is refused while an ioband device exists.
dm_create rf "0 $nsize ioband $nb rf 0 4 none weight 0" >/dev/null
if rmmod dm_ioband 2>/dev/null; then
	fail "rmmod dm_ioband succeeded while an ioband device exists"
fi
if modprobe -r dm_ioband 2>/dev/null; then
	fail "modprobe -r dm_ioband succeeded while an ioband device exists"
fi
grep -q "^dm_ioband " /proc/modules || fail "dm_ioband unloaded while a device exists"
dm_remove rf
# With none left it unloads (no leaked reference), and loads again.
if ! dmsetup table --target ioband 2>/dev/null | grep -q ioband; then
	rmmod dm_ioband || fail "rmmod dm_ioband refused with no ioband device"
	modprobe dm-ioband || fail "cannot load dm-ioband again"
	echo "rmmod refused while a device exists; unload and reload once none does"
fi

# ---- 5. a cgroup removed while its bios are held ----
cg_create rf-gone
g=$(cg_id rf-gone)
dm_create rf "0 $nsize ioband $nb rf 0 4 cgroup weight 0 :100 $g:100" >/dev/null
cg_run rf-gone fio --name=gone --filename=/dev/mapper/rf --direct=1 --ioengine=libaio \
	--iodepth=64 --rw=write --bs=4k --size=2M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --output=fio-gone.txt &
load=$!
wait_for 20 sh -c "[ \"\$(dmsetup message rf 0 stats | awk '\$1 == \"group=$g\"' | sed 's/.* queued=\([0-9]*\).*/\1/')\" -ge 32 ]"
held=$(stat_field rf "$g" queued)
while read -r pid; do
	echo "$pid" >"$CGROOT/cgroup.procs"
done <"$CGROOT/rf-gone/cgroup.procs"
cg_remove rf-gone
still=$(stat_field rf "$g" queued)
wait "$load" || { cat fio-gone.txt; fail "fio of a removed cgroup failed"; }
grep -q "err= 0" fio-gone.txt || { cat fio-gone.txt; fail "IO errors after the cgroup was removed"; }
drained rf
echo "cgroup removed with $held bios held ($still still held just after rmdir): all written and verified"
dmsetup message rf 0 detach "$g"
dm_remove rf
remove_nullb rf-rm
cg_remove rf-a
cg_remove rf-b
