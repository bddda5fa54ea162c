#!/bin/sh
# O_DIRECT reads from two cgroups are counted to the right groups, and the
# reads of cgroups below an attached one, not attached themselves, to it.
# (cgroup v2 keeps processes out of a cgroup whose children have
# controllers, so dr-a's IO comes from its children.) Groups attached and
# detached by message take over their cgroups' next reads at once, though
# map remembers each CPU's last answers (ioband_cgroup_group_cached()).
. /ioband/lib.sh
set -eu

dev=$(make_nullb dr 256)
size=$(blockdev --getsz "$dev")
cg_create dr-a
cg_create dr-b
cg_create dr-a/x
cg_create dr-a/y/z
a=$(cg_id dr-a)
b=$(cg_id dr-b)
dm_create dr "0 $size ioband $dev dr 0 0 cgroup weight 0 :100 $a:800 $b:100"

reads() { # GROUP_ID: "reads read_sectors" of that group in dmsetup status
	dmsetup status dr | awk -v id="$1" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1), $(i + 3) }'
}

read_direct() { # CGROUP COUNT: COUNT 4k O_DIRECT reads
	cg_run "$1" fio --name=r --filename=/dev/mapper/dr --direct=1 --rw=randread \
		--bs=4k --number_ios="$2" --size=128M --randrepeat=0 --output=/dev/null
}

read_direct dr-a/x 1000
read_direct dr-b 300
read_direct dr-a/y/z 200
assert_eq "$(reads "$a")" "1200 9600" "reads and read sectors of dr-a (from its descendants)"
assert_eq "$(reads "$b")" "300 2400" "reads and read sectors of dr-b"
assert_eq "$(reads -1)" "0 0" "reads and read sectors of the default group"

# The same reads from the root cgroup go to the default group.
fio --name=r --filename=/dev/mapper/dr --direct=1 --rw=randread --bs=4k \
	--number_ios=50 --size=128M --output=/dev/null
assert_eq "$(reads -1)" "50 400" "reads of the default group after root reads"

# dr-a/y attached: dr-a/y/z's reads, dr-a's until now, are its.
y=$(cg_id dr-a/y)
dmsetup message dr 0 attach "$y:200"
read_direct dr-a/y/z 100
assert_eq "$(reads "$y")" "100 800" "reads of dr-a/y, attached after dr-a/y/z read"
assert_eq "$(reads "$a")" "1200 9600" "reads of dr-a once dr-a/y is attached"
# Detached: dr-a's again; dr-a detached too: the default group's.
dmsetup message dr 0 detach "$y"
read_direct dr-a/y/z 100
assert_eq "$(reads "$a")" "1300 10400" "reads of dr-a once dr-a/y is detached"
dmsetup message dr 0 detach "$a"
read_direct dr-a/x 100
assert_eq "$(reads -1)" "150 1200" "reads of the default group once dr-a is detached"

dmsetup remove dr
remove_nullb dr
