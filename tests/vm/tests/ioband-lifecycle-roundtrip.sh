#!/bin/sh
# What `dmsetup table` prints, loaded again, restores the state, under
# every policy: 40 groups attached by message (more than one chunk of a
# walk), weights, ranges under every policy (used by the range ones, kept
# by all), the default group's weight and range, carryover and the other
# knobs. After a reload of the printed table, the table, the status and
# the stats message (its clock aside) read the same; a new device created
# from the printed table in a new domain has the same knobs and groups.
. /ioband/lib.sh
set -eu

dev=$(make_nullb rt 64)
size=$(blockdev --getsz "$dev")

stats() { dmsetup message "$1" 0 stats | sed 's/ elapsed_ns=[0-9]*//'; }
# The stats with the domain's name and the window it measured left out:
# another domain's.
knobs_and_groups() { stats "$1" | sed 's/^domain=[^ ]* //; s/ window_sectors=.* writeback/ writeback/'; }

for policy in weight weight-iosize range-bw weight-range; do
	name=rt-$policy
	dm_create "$name" "0 $size ioband $dev $name 0 0 cgroup $policy 0" >/dev/null
	i=0
	while [ $i -lt 40 ]; do
		id=$((5000 + 7 * i))
		if [ $((i % 2)) = 0 ]; then
			dmsetup message "$name" 0 attach "$id:$((10 + i))"
		else
			dmsetup message "$name" 0 attach "$id"
		fi
		[ $((i % 3)) != 0 ] || dmsetup message "$name" 0 range-bw "$id:$((100 * i)):$((100 * i + 500))"
		i=$((i + 1))
	done
	dmsetup message "$name" 0 weight 300
	dmsetup message -- "$name" 0 range-bw -1:0:4096
	dmsetup message "$name" 0 carryover 7
	dmsetup message "$name" 0 io_limit 12
	dmsetup message "$name" 0 io_throttle 3
	dmsetup message "$name" 0 token 777
	table=$(dmsetup table "$name")
	status=$(dmsetup status "$name")
	before=$(stats "$name")
	echo "$policy: $(echo "$table" | cut -c1-160)..."

	dmsetup table "$name" | dmsetup load "$name"
	dmsetup resume "$name"
	assert_eq "$(dmsetup table "$name")" "$table" "$policy: the table after a reload of itself"
	assert_eq "$(dmsetup status "$name")" "$status" "$policy: the status after a reload of the table"
	assert_eq "$(stats "$name")" "$before" "$policy: the stats after a reload of the table"

	# The printed table, in a new domain: the same knobs and groups.
	dmsetup table "$name" | sed "s/ $name / $name-copy /" | dmsetup create --noudevsync "$name-copy"
	assert_eq "$(knobs_and_groups "$name-copy")" "$(knobs_and_groups "$name")" \
		"$policy: the stats of a copy in a new domain"
	dmsetup remove "$name-copy"
	dmsetup remove "$name"
done
remove_nullb rt
