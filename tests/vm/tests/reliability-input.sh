#!/bin/sh
# Hostile input: a few thousand random and mutated tables and messages
# through dmsetup, each either working or rejected with a message, and
# nothing left behind.
#
# A busybox awk generator (fixed seed; RI_SEED and RI_INPUTS change it)
# writes RI_INPUTS inputs (default 2000, half tables, half messages)
# over every field of the table
# (start, length, target, device, ioband_device_id, io_throttle,
# io_limit, group_type, policy, token_base, the default group and the
# groups in each policy's form) and every message of
# Documentation/ioband.rst (attach, detach, weight, range-bw, token,
# carryover, io_limit, io_throttle, policy, type, reset, stats): valid
# values, huge numbers (2^32, 2^64, 500 digits), negative and signed
# numbers, hex and exponents, empty fields (":", "1::2"), missing and
# extra arguments, unknown names, fields swapped, duplicated or dropped,
# non-ASCII and control bytes, format strings, tokens of 5000 bytes,
# tables of 50 to 300 groups, message sectors outside the device. Two
# workers run side by side (dmsetup costs ~0.1 s a call in TCG): one
# sends the tables to `dmsetup load` of a live ioband device (its
# inactive table) or to `dmsetup create` of a new one, the other the
# messages to a second live ioband device, in a bandwidth domain of its
# own.
#
# Pass:
#  - an accepted input works: every 8th accepted load is resumed and the
#    device read; a created device reads and is removed; a message's
#    status is 0;
#  - a rejected input is explained: dmsetup says why, and when the kernel
#    refused it (an ioctl failed), the kernel log has the reason
#    between this input's mark and its worker's next ("device-mapper:
#    table: ...: <reason>" for a table, "device-mapper: ioband: ..." or
#    dm's own "device-mapper: ioctl: ...message..." for a message);
#  - after every rejected input the live device still reads; one input
#    in 50, if rejected, must leave the live table exactly as it was
#    (`dmsetup table` before and after, knobs and weights included);
#  - the harness finds no oops, BUG or WARNING;
#  - at the end, with the devices removed, `rmmod dm_ioband` succeeds (no
#    reference leaked) and the kernel's unreclaimable slab is back within
#    RI_SLAB_KB (4096) KiB of where it was (the tables of 50 to 300
#    groups would leak megabytes through a path that forgot to free).
# Also: without CAP_SYS_ADMIN (root of a user namespace, `unshare -r`)
# dmsetup can neither message, load nor create: dm's own rule, which
# iobandctl-errors checks through iobandctl.
# shellcheck source=../lib.sh
. /ioband/lib.sh
set -eu

RI_SEED=${RI_SEED:-1}
RI_INPUTS=${RI_INPUTS:-2000}
RI_SLAB_KB=${RI_SLAB_KB:-4096}

slab_kb() { awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo; }
kmalloc_kb() { # the kmalloc caches' objects in use, in KiB
	awk '$1 ~ /^kmalloc-(rnd-[0-9]+-)?[0-9]+k?$/ { s += $2 * $4 } END { printf "%d\n", s / 1024 }' /proc/slabinfo
}
slab0=$(slab_kb)
kmalloc0=$(kmalloc_kb)

nb=$(make_nullb ri 64)
nb2=$(make_nullb ri2 64)
size=$(dev_sectors "$nb")
nbmm=$(dev_majmin "$nb")
cg_create ri-a
cg_create ri-b
a=$(cg_id ri-a) b=$(cg_id ri-b)
base="0 $size ioband $nb ri 0 4 cgroup weight 0 :100 $a:200 $b:100"
base2="0 $size ioband $nb2 rm 0 0 cgroup weight 0 :100 $a:100"
dm_create ri "$base" >/dev/null
dm_create ri2 "$base2" >/dev/null

readable() { # DEV: one O_DIRECT read of sector 0
	dd if="$1" of=/dev/null bs=512 count=1 iflag=direct 2>/dev/null
}

# ---- without CAP_SYS_ADMIN ----
live=$(dmsetup table ri)
if unshare -r dmsetup message ri 0 weight 7 2>err; then
	fail "dmsetup message succeeded without CAP_SYS_ADMIN"
fi
grep -q 'Permission denied' err || { cat err; fail "dmsetup message without CAP_SYS_ADMIN: no 'Permission denied'"; }
if unshare -r dmsetup load ri --table "$base" 2>err; then
	fail "dmsetup load succeeded without CAP_SYS_ADMIN"
fi
if unshare -r dmsetup create --noudevsync ri-nocap --table "$base" 2>err; then
	fail "dmsetup create succeeded without CAP_SYS_ADMIN"
fi
dmsetup info ri-nocap >/dev/null 2>&1 && fail "ri-nocap exists after a create without CAP_SYS_ADMIN"
dmsetup info ri | grep -q 'Tables present: *LIVE$' || { dmsetup info ri; fail "an inactive table after a load without CAP_SYS_ADMIN"; }
assert_eq "$(dmsetup table ri)" "$live" "table after messages without CAP_SYS_ADMIN"
echo "without CAP_SYS_ADMIN: message, load and create refused (Permission denied), nothing changed"

# ---- the inputs ----
cat >gen.awk <<'AWK'
# Generator of random and mutated ioband tables and messages (busybox awk).
# Variables: seed, n (inputs), mode (tables or messages), size (sectors
# of the device), nb, nbmm, nb2 (devices), a, b (cgroup ids). Prints one
# input a line:
#   T <table>          dmsetup load of the live device's inactive table
#   C <table>          dmsetup create of a new device
#   M <sector> <args>  dmsetup message to the live device
#   m <sector> <args>  the same without "--" (dmsetup parses options)
function rint(k) { return int(rand() * k) }
function chance(p) { return rand() < p }
function pick(arr, k) { return arr[rint(k) + 1] }
function rep(s, k,   r) { r = ""; while (k-- > 0) r = r s; return r }
function digits(k,   r) { r = ""; while (k-- > 0) r = r rint(10); return r }
function bytes(lo, hi, k,   r) { r = ""; while (k-- > 0) r = r sprintf("%c", lo + rint(hi - lo + 1)); return r }
function num(   r) {
	r = rint(10)
	if (r < 5) return pick(NUM, nnum)
	if (r < 7) return rint(70000)
	if (r == 7) return rint(2147483647)
	if (r == 8) return digits(20 + rint(480))
	return "-" rint(100000)
}
function weird(   r) {
	r = rint(16)
	if (r == 0) return bytes(128, 255, 1 + rint(8))		# not UTF-8
	if (r == 1) return "\303\251t\303\251"			# UTF-8 "ete" with accents
	if (r == 2) return "\346\227\245\346\234\254"		# UTF-8 CJK
	if (r == 3) return "a" bytes(1, 8, 1 + rint(3)) "b"	# control characters
	if (r == 4) return "%s%s%s%n%p"
	if (r == 5) return rep("x", 100 + rint(5000))		# very long token
	if (r == 6) return digits(1000 + rint(4000))		# very long number
	if (r == 7) return pick(SEP, nsep)
	if (r == 8) return "a\\ b"				# an escaped space (dm_split_args)
	if (r == 9) return "\\"
	if (r == 10) return "\"'`$(true)*?[]"
	if (r == 11) return "x" sprintf("%c", 127) "\033[0m"
	if (r == 12) return "a\tb"				# a tab: whitespace to dm
	if (r == 13) return "a\rb"
	if (r == 14) return rep(":", 1 + rint(40))
	return "-" pick(NAMES, nnames)
}
function token(   r) {
	r = rint(4)
	if (r == 0) return num()
	if (r == 1) return weird()
	if (r == 2) return pick(NAMES, nnames)
	return pick(POLICIES, npol)
}
function weight_value() {
	if (chance(0.8)) return pick(WEIGHTS, nweights)
	return chance(0.5) ? num() : weird()
}
function kbps_value() {
	if (chance(0.75)) return pick(KBPS, nkbps)
	return chance(0.6) ? num() : weird()
}
function group_id(   r) {
	r = rint(10)
	if (r < 3) return a
	if (r < 5) return b
	if (r < 7) return 1 + rint(100000)
	if (r == 7) return pick(NUM, nnum)
	if (r == 8) return -1
	return weird()
}
# spec POLICY: a group's value part (after the id) in the policy's form
function spec(pol) {
	if (pol == "range-bw") return ":" kbps_value() ":" kbps_value()
	if (pol == "weight-range") return ":" weight_value() ":" kbps_value() ":" kbps_value()
	return ":" weight_value()
}
# table: a table, clean (every field valid: it should load) or with
# random fields and 0 to 3 mutations of its fields
function table(   f, k, i, pol, specpol, ngroups, t, j, r, clean) {
	clean = chance(0.35)
	k = 0
	f[++k] = (clean || chance(0.95)) ? 0 : num()
	f[++k] = (clean || chance(0.9)) ? size : (chance(0.5) ? size + rint(1000) - 500 : num())
	f[++k] = (clean || chance(0.97)) ? "ioband" : pick(TARGETS, ntargets)
	f[++k] = clean ? pick(GOODDEVS, ngooddevs) : pick(DEVS, ndevs)
	f[++k] = clean ? pick(DOMAINS, 4) : (chance(0.85) ? pick(DOMAINS, ndomains) : (chance(0.5) ? "d" rint(1000) : weird()))
	f[++k] = (clean || chance(0.8)) ? pick(LIMITS, 7) : (chance(0.5) ? pick(LIMITS, nlimits) : num())
	f[++k] = (clean || chance(0.8)) ? pick(LIMITS, 7) : (chance(0.5) ? pick(LIMITS, nlimits) : num())
	f[++k] = (clean || chance(0.9)) ? pick(TYPES, 7) : (chance(0.5) ? pick(TYPES, ntypes) : token())
	pol = (clean || chance(0.9)) ? pick(POLICIES, npol) : token()
	f[++k] = pol
	f[++k] = (clean || chance(0.8)) ? pick(TOKENS, 5) : (chance(0.5) ? pick(TOKENS, ntokens) : num())
	specpol = (clean || chance(0.85)) ? pol : pick(POLICIES, npol)
	if (chance(0.7)) f[++k] = clean ? good_spec(specpol) : spec(specpol)
	r = rint(20)
	ngroups = (r < 2 || (clean && f[8] == "none")) ? 0 : (r < 17 ? 1 + rint(5) : 50 + rint(250))
	for (i = 0; i < ngroups; i++) {
		if (ngroups > 5 || clean) t = (i == 0 ? a : (i == 1 ? b : 1000000 + i))
		else t = group_id()
		f[++k] = t (clean ? good_spec(specpol) : spec(specpol))
	}
	r = clean ? 0 : rint(4)
	while (r-- > 0) {
		i = 1 + rint(k)
		j = rint(6)
		if (j == 0) f[i] = token()
		else if (j == 1) { for (; i < k; i++) f[i] = f[i + 1]; k-- }
		else if (j == 2) { for (t = ++k; t > i; t--) f[t] = f[t - 1]; f[i] = token() }
		else if (j == 3) k = i
		else if (j == 4) { f[++k] = f[i] }
		else { t = f[i]; j = 1 + rint(k); f[i] = f[j]; f[j] = t }
	}
	t = f[1]
	for (i = 2; i <= k; i++) t = t " " f[i]
	# Tables of domain "ri" set the live domain's knobs when they load:
	# after a range policy, put the live domain back on `weight` (a small
	# max would slow the reads that check the device).
	if (f[5] == "ri" && (pol == "range-bw" || pol == "weight-range")) back = 1
	return t
}
# good_spec POLICY: a valid value part for the policy
function good_spec(pol,   lo, hi) {
	lo = pick(KBPS, 6); hi = pick(KBPS, 6)
	if (hi != 0 && lo + 0 > hi + 0) { t = lo; lo = hi; hi = t }
	if (pol == "range-bw") return ":" lo ":" hi
	if (pol == "weight-range") return ":" pick(WEIGHTS, 7) ":" lo ":" hi
	return ":" pick(WEIGHTS, 7)
}
function message(   name, r, args, k, i) {
	name = pick(MSGS, nmsgs)
	if (name == "attach") {
		r = rint(4)
		if (r < 2) { last = 2000000 + rint(1000000); pool[++npool] = last; args = last (r ? ":" weight_value() : "") }
		else args = group_id() (chance(0.5) ? ":" weight_value() : "")
	} else if (name == "detach") {
		args = (npool && chance(0.6)) ? pool[1 + rint(npool)] : group_id()
	} else if (name == "weight") {
		r = rint(4)
		if (r == 0) args = weight_value()
		else if (r == 1 && npool) args = pool[1 + rint(npool)] ":" weight_value()
		else args = group_id() ":" weight_value()
	} else if (name == "range-bw") {
		r = rint(4)
		if (r == 0) args = "-1:" kbps_value() ":" kbps_value()
		else if (r == 1) args = ":" kbps_value() ":" kbps_value()
		else args = group_id() ":" kbps_value() ":" kbps_value()
	} else if (name == "policy") {
		args = chance(0.85) ? pick(POLICIES, npol) : token()
		if (args == "range-bw" || args == "weight-range") back = 1
	} else if (name == "type") {
		args = chance(0.85) ? pick(TYPES, ntypes) : token()
	} else if (name == "reset" || name == "stats") {
		args = ""
	} else	# token carryover io_limit io_throttle
		args = chance(0.8) ? pick(LIMITS, nlimits) : num()
	# mutations: the name's case, an unknown name, a missing or an extra
	# argument, an argument replaced
	r = rint(10)
	if (r == 0) name = toupper(name)
	else if (r == 1) name = chance(0.5) ? token() : pick(BADMSGS, nbadmsgs)
	else if (r == 2) args = ""
	else if (r == 3) { k = 1 + rint(3); for (i = 0; i < k; i++) args = args " " token() }
	else if (r == 4) args = token()
	r = rint(20)
	sector = r < 17 ? 0 : (r == 17 ? size - 1 : (r == 18 ? size : num()))
	return sector " " name (args == "" ? "" : " " args)
}
BEGIN {
	srand(seed)
	nnum = split("0 1 2 3 4 7 8 16 31 32 33 64 100 128 255 256 1000 1023 1024 2048 4096 16384 32766 32767 32768 65535 65536 65537 1048576 1073741823 1073741824 1073741825 2147483647 2147483648 4294967295 4294967296 9007199254740993 9223372036854775807 9223372036854775808 18446744073709551615 18446744073709551616 99999999999999999999999999999 -1 -0 -32768 +1 +0 01 0007 0x10 0X1F 1e3 1.5 .5 1,000 0b1", NUM, " ")
	nsep = split(": :: ::: - -- -1: :-1 1:2:3:4:5:6 = a=b , ; ? * [ ] {} ~ @ # & | < >", SEP, " ")
	nnames = split("attach detach weight range-bw token carryover io_limit io_throttle policy type reset stats none cgroup uid user gid pid pgrp ioband", NAMES, " ")
	npol = split("weight weight-iosize range-bw weight-range", POLICIES, " ")
	ntypes = split("none cgroup uid user gid pid pgrp NONE Cgroup cgroups", TYPES, " ")
	nweights = split("1 2 50 100 200 1000 32767 0 32768", WEIGHTS, " ")
	nkbps = split("0 0 100 1024 10240 102400 1048576 4294967295 4294967296", KBPS, " ")
	nlimits = split("0 1 2 4 8 32 128 65536 65537 1024", LIMITS, " ")
	ntokens = split("0 1 2048 16384 1073741824 1073741825", TOKENS, " ")
	ntargets = split("Ioband iobandx linear error ioband2 zero", TARGETS, " ")
	ndevs = split(nb " " nb " " nb " " nbmm " " nb2 " /dev/mapper/ri2 /dev/mapper/ri /dev/nope 0:0 7:999 /dev/null /dev/mapper/control 254:9999", DEVS, " ")
	ngooddevs = split(nb " " nbmm " " nb2 " /dev/mapper/ri2", GOODDEVS, " ")
	# ri is the tables' live device (domain ri), ri2 the messages' (domain rm)
	ndomains = split("ri ri rj rk " rep("d", 31) " " rep("d", 32) " 0 -", DOMAINS, " ")
	nmsgs = split("attach detach weight range-bw token carryover io_limit io_throttle policy type reset stats", MSGS, " ")
	nbadmsgs = split("atach weights range_bw tokens io-limit iolimit @stats_list @foo stat reset2 -h --help", BADMSGS, " ")
	for (i = 0; i < n; i++) {
		if (back) { print "M 0 policy weight"; back = 0; i++; if (i >= n) break }
		if (mode == "tables") print (chance(0.9) ? "T " : "C ") table()
		else print (chance(0.9) ? "M " : "m ") message()
	}
}
AWK
for mode in tables messages; do
	awk -v seed="$RI_SEED" -v n=$((RI_INPUTS / 2)) -v mode=$mode -v size="$size" \
		-v nb="$nb" -v nbmm="$nbmm" -v nb2="$nb2" -v a="$a" -v b="$b" \
		-f gen.awk >"inputs-$mode.txt"
	assert_eq "$(wc -l <"inputs-$mode.txt")" $((RI_INPUTS / 2)) "$mode generated"
done

# worker TAG DEV BASE INPUTS: try each input of INPUTS on the live device
# DEV (whose table is BASE); "I KIND STATUS accepted|kernel|dmsetup WHY"
# a line in results-TAG.txt. Writes "@@RI-TAG I" to the kernel log before
# input I.
worker() {
	tag=$1 dev=$2 wbase=$3
	set -f	# a message's words go to dmsetup as they are, never globbed
	: >"results-$tag.txt"
	i=0 loads=0
	while IFS= read -r line; do
		i=$((i + 1))
		kind=${line%% *}
		payload=${line#? }
		check_table=
		[ $((i % 50)) != 0 ] || check_table=$(dmsetup table "$dev")
		echo "@@RI-$tag $i" >/dev/kmsg
		rc=0
		# shellcheck disable=SC2086 # a message's words go as dmsetup's argv
		case $kind in
		T) dmsetup load "$dev" --table "$payload" >out-$tag 2>err-$tag || rc=$? ;;
		C) dmsetup create --noudevsync "ric$i" --table "$payload" >out-$tag 2>err-$tag || rc=$? ;;
		M) dmsetup message -- "$dev" $payload >out-$tag 2>err-$tag || rc=$? ;;
		m) dmsetup message "$dev" $payload >out-$tag 2>err-$tag || rc=$? ;;
		*) fail "generator: unknown input kind '$kind'" ;;
		esac
		if [ "$rc" = 0 ]; then
			echo "$i $kind 0 accepted" >>"results-$tag.txt"
			case $kind in
			T)
				loads=$((loads + 1))
				[ $((loads % 8)) = 0 ] || continue
				# Make it live and read through it; then the base again.
				if dmsetup resume "$dev" 2>"err-$tag"; then
					echo "$i resumed" >>"results-$tag.txt"
					readable "/dev/mapper/$dev" || fail "input $tag $i: no read through the resumed table: $payload"
					dmsetup table "$dev" | grep -q '^0 ' || fail "input $tag $i: no table after resume"
				fi
				dmsetup load "$dev" --table "$wbase" || fail "cannot load the base table again"
				dmsetup resume "$dev" || fail "cannot resume the base table"
				;;
			C)
				[ -b "/dev/mapper/ric$i" ] || dmsetup mknodes "ric$i"
				readable "/dev/mapper/ric$i" || fail "input $tag $i: no read through the created device: $payload"
				dmsetup remove --noudevsync "ric$i" || fail "input $tag $i: cannot remove the created device"
				echo "$i created" >>"results-$tag.txt"
				;;
			esac
			continue
		fi
		[ -s "err-$tag" ] || fail "input $tag $i refused with status $rc and no message from dmsetup: $payload"
		where=dmsetup why=
		while IFS= read -r _l; do
			[ -n "$why" ] || why=$_l
			case $_l in *ioctl*failed*) where=kernel why=$_l ;; esac
		done <"err-$tag"
		echo "$i $kind $rc $where $why" >>"results-$tag.txt"
		[ "$kind" != C ] || ! dmsetup info "ric$i" >/dev/null 2>&1 ||
			fail "input $tag $i: a create that failed left device ric$i"
		readable "/dev/mapper/$dev" || fail "input $tag $i: $dev does not read after: $payload"
		if [ -n "$check_table" ]; then
			assert_eq "$(dmsetup table "$dev")" "$check_table" "table of $dev after rejected input $tag $i"
			echo "$i unchanged" >>"results-$tag.txt"
		fi
		[ $((i % 250)) != 0 ] || log "$tag: $i inputs"
	done
	set +f
}

start=$(cut -d. -f1 /proc/uptime)
worker A ri "$base" <inputs-tables.txt &
wa=$!
worker B ri2 "$base2" <inputs-messages.txt &
wb=$!
wait "$wa" || fail "the tables' worker failed"
wait "$wb" || fail "the messages' worker failed"
secs=$(($(cut -d. -f1 /proc/uptime) - start))

# Every input the kernel refused has its reason in the kernel log between
# its mark and the next one of its worker: for a table, a line of dm's
# table code ("device-mapper: table: 254:0: ioband: <ti->error>") or of
# its ioctl code other than the generic "error adding target to table";
# for a message, a line of ioband other than a table's group error, or
# dm's own ("Target message sector outside device.").
kmsg_all >kmsg.txt
for tag in A B; do
	awk -v tag="$tag" '
		FILENAME != "kmsg.txt" { if ($4 == "kernel") need[$1] = $2; next }
		$0 ~ "@@RI-" tag " [0-9]+$" { cur = $NF; next }
		/@@RI-/ { next }
		!(cur in need) { next }
		need[cur] ~ /^[TC]$/ && (/device-mapper: table: / ||
			(/device-mapper: ioctl: / && !/error adding target to table|[Mm]essage/)) { ok[cur] = 1 }
		need[cur] ~ /^[Mm]$/ && ((/device-mapper: ioband: / && !/ioband: group \047/) ||
			/device-mapper: ioctl: .*[Mm]essage/) { ok[cur] = 1 }
		END { for (i in need) if (!(i in ok)) print i }' "results-$tag.txt" kmsg.txt >"unexplained-$tag.txt"
	[ "$tag" = A ] && in=inputs-tables.txt || in=inputs-messages.txt
	while read -r n; do
		echo "input $tag $n: $(sed -n "${n}p" "$in" | cut -c1-300)"
		awk -v n="$n" '$1 == n' "results-$tag.txt"
	done <"unexplained-$tag.txt"
	[ ! -s "unexplained-$tag.txt" ] ||
		fail "$(wc -l <"unexplained-$tag.txt") inputs ($tag) refused by the kernel without a reason in its log"
done

# The figures.
count() { # FILE N VALUE: the lines of FILE whose field N is VALUE
	awk -v n="$2" -v v="$3" '$n == v' "$1" | wc -l
}
tables=$((RI_INPUTS / 2)) msgs=$((RI_INPUTS / 2))
tables_ok=$(count results-A.txt 4 accepted)
msgs_ok=$(count results-B.txt 4 accepted)
kernel=$(cat results-A.txt results-B.txt | count - 4 kernel)
user=$(cat results-A.txt results-B.txt | count - 4 dmsetup)
resumed=$(count results-A.txt 2 resumed)
created=$(count results-A.txt 2 created)
unchanged=$(cat results-A.txt results-B.txt | count - 2 unchanged)
echo "seed $RI_SEED: $RI_INPUTS inputs in $secs s: $tables tables ($tables_ok accepted, $((tables - tables_ok)) rejected), $msgs messages ($msgs_ok accepted, $((msgs - msgs_ok)) rejected); $kernel refused by the kernel, $user by dmsetup; $resumed accepted tables resumed and read, $created devices created, read and removed, $unchanged live tables checked unchanged after a rejection"
assert_eq $((tables_ok + msgs_ok + kernel + user)) "$RI_INPUTS" "inputs accepted or rejected"
echo "rejections by reason (dmsetup's error, most common first):"
cat results-A.txt results-B.txt | awk '$4 == "kernel" || $4 == "dmsetup" { $1 = ""; $3 = ""; print }' |
	sed 's/ on ri[^ ]* ([0-9:]*)//' | sort | uniq -c | sort -rn | head -n 8
# Each kind must have been both accepted and rejected, or the generator
# does not reach the parser.
assert_ge "$tables_ok" 10 "tables accepted"
assert_ge $((tables - tables_ok)) 10 "tables rejected"
assert_ge "$msgs_ok" 10 "messages accepted"
assert_ge $((msgs - msgs_ok)) 10 "messages rejected"
assert_ge "$resumed" 1 "accepted tables resumed"
assert_ge "$unchanged" 1 "live tables checked after a rejection"

# ---- nothing left behind ----
readable /dev/mapper/ri || fail "ri does not read at the end"
readable /dev/mapper/ri2 || fail "ri2 does not read at the end"
dm_remove ri
dm_remove ri2
left=$(dmsetup table 2>/dev/null | grep -c ' ioband ' || true)
assert_eq "$left" 0 "ioband devices left"
rmmod dm_ioband || fail "rmmod dm_ioband after removing every device (a leaked reference?)"
grep -q '^dm_ioband ' /proc/modules && fail "dm_ioband still loaded after rmmod"
modprobe dm-ioband || fail "cannot load dm-ioband again"
remove_nullb ri
remove_nullb ri2
cg_remove ri-a
cg_remove ri-b
slab1=$(slab_kb)
kmalloc1=$(kmalloc_kb)
echo "unreclaimable slab: $slab0 KiB before, $slab1 KiB after the module was unloaded; kmalloc caches in use: $kmalloc0 -> $kmalloc1 KiB"
assert_le $((slab1 - slab0)) "$RI_SLAB_KB" "unreclaimable slab growth, KiB"
