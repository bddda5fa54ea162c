#!/bin/sh
# The README's commands run as written and do what the README says they do,
# with /dev/sdb standing for a null_blk device: the quick start (each
# iobandctl command exits 0 and leaves the device as it says: created with
# its weights, shown, changed, removed), and the boot-time example (its
# iobandtab line parses with the README's `iobandctl apply --check`).
. /ioband/lib.sh
set -eu

README=/ioband/README.md
dev=$(make_nullb readme 256)
size=$(blockdev --getsz "$dev")
mm=$(dev_majmin "$dev")

block() { # NAME: the lines between the README's <!-- NAME: begin/end --> markers
	sed -n "/<!-- $1: begin -->/,/<!-- $1: end -->/p" "$README" | sed '/^<!--/d; /^```/d'
}

# The weight of cgroup GROUP in device NAME's table.
weight_of() { # NAME GROUP
	dmsetup table "$1" | tr ' ' '\n' | sed -n "s/^$(cg_id "$2"):\([0-9]*\)\$/\1/p"
}

# What the README says each step does, checked right after it: the
# weights its create and set name are in the table, stat shows them, and
# remove removes. (The weights are kept in ./weights, "GROUP WEIGHT" a line.)
check_step() { # LINE
	# shellcheck disable=SC2086 # the README's words, split as the shell did
	set -- $1
	verb="$1 ${2:-}"
	case "$verb" in
	"mkdir "*)
		shift
		for d; do
			case "$d" in -*) continue ;; esac
			[ -d "$d" ] || fail "no $d after: mkdir $*"
		done ;;
	"iobandctl create")
		name=$3
		[ -b "/dev/mapper/$name" ] || fail "no /dev/mapper/$name after: $*"
		assert_eq "$(dmsetup table "$name" | cut -d' ' -f1-4)" "0 $size ioband $mm" \
			"the table the README's create makes"
		: >weights
		shift 4
		while [ $# -gt 0 ]; do
			[ "$1" = --weight ] && echo "${2%%=*} ${2#*=}" >>weights
			shift
		done ;;
	"iobandctl set")
		name=$3
		shift 3
		for kv; do
			case "$kv" in *=*) ;; *) continue ;; esac
			grep -v "^${kv%%=*} " weights >weights.new || true
			echo "${kv%%=*} ${kv#*=}" >>weights.new
			mv weights.new weights
		done ;;
	"iobandctl stat")
		name=$3
		out=$(iobandctl stat --raw --noheadings -o GROUP,WEIGHT "$name")
		while read -r g w; do
			echo "$out" | grep -qx "$g $w" || fail "stat does not show $g at weight $w: $out"
		done <weights ;;
	"iobandctl remove")
		if dmsetup info "$3" >/dev/null 2>&1; then
			fail "$3 still exists after: $*"
		fi ;;
	*)
		fail "the README's quick start has a step this test does not check: $*" ;;
	esac
	case "$verb" in
	"iobandctl create" | "iobandctl set")
		[ -s weights ] || fail "no group weights after the README's $verb"
		while read -r g w; do
			assert_eq "$(weight_of "$name" "$g")" "$w" "$g's weight in the table after the README's $verb"
		done <weights ;;
	esac
}

block readme-examples | sed "s|/dev/sdb|$dev|g" >session.sh
for verb in create stat set remove; do
	grep -q "^iobandctl $verb " session.sh ||
		fail "the README's quick start has no iobandctl $verb: $(cat session.sh)"
done
while read -r line; do
	echo "\$ $line"
	sh -c "$line" || fail "README example failed: $line"
	check_step "$line"
done <session.sh

# At boot: the README's iobandtab lines, checked by the README's command.
block readme-iobandtab >iobandtab
grep -q '^[^#]' iobandtab || fail "the README's iobandtab example was not found"
check=$(sed -n 's/^    \(iobandctl apply --check\) \/etc\/iobandtab .*/\1/p' "$README")
[ -n "$check" ] || fail "the README has no 'iobandctl apply --check /etc/iobandtab'"
echo "\$ $check /etc/iobandtab   (the README's example)"
$check "$PWD/iobandtab" || fail "the README's iobandtab example does not parse: $(cat iobandtab)"

cg_remove tenant-a
cg_remove tenant-b
remove_nullb readme
