#!/bin/sh
# Group types other than cgroup classify by the submitting task: two uids,
# two gids, a process by pid and a process group by pgrp doing O_DIRECT
# reads are each counted to their own group, and everything else to the
# default group.
. /ioband/lib.sh
set -eu

dev=$(make_nullb gt 128)
size=$(blockdev --getsz "$dev")

reads() { # DEVICE GROUP_ID: reads of that group in dmsetup status
	dmsetup status "$1" | awk -v id="$2" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1) }'
}
fio_reads() { # DEVICE COUNT [FIO OPTIONS...]: COUNT 4k O_DIRECT reads
	_dev=$1 _count=$2
	shift 2
	fio --name=r --filename="$_dev" --direct=1 --rw=randread --bs=4k \
		--number_ios="$_count" --size=64M --output=/dev/null "$@"
}

# uid (and its other name, user): fio switches to the uid before its IO.
for type in uid user; do
	dm_create gt "0 $size ioband $dev gt 0 0 $type weight 0 :100 1001:200 1002:100" >/dev/null
	chmod 666 /dev/mapper/gt
	fio_reads /dev/mapper/gt 300 --uid=1001
	fio_reads /dev/mapper/gt 200 --uid=1002
	fio_reads /dev/mapper/gt 50
	assert_eq "$(reads gt 1001) $(reads gt 1002) $(reads gt -1)" "300 200 50" "$type: reads of uid 1001, 1002, others"
	dmsetup remove gt
done

dm_create gt "0 $size ioband $dev gt 0 0 gid weight 0 :100 2001:200 2002:100" >/dev/null
chmod 666 /dev/mapper/gt
fio_reads /dev/mapper/gt 120 --gid=2001
fio_reads /dev/mapper/gt 80 --gid=2002
fio_reads /dev/mapper/gt 40
assert_eq "$(reads gt 2001) $(reads gt 2002) $(reads gt -1)" "120 80 40" "gid: reads of gid 2001, 2002, others"
dmsetup remove gt

# pid: attach a waiting process, then let it read.
dm_create gt "0 $size ioband $dev gt 0 0 pid weight 0 :100" >/dev/null
mkfifo go
sh -c 'read _ <go; exec dd if=/dev/mapper/gt of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null' &
reader=$!
dmsetup message gt 0 attach "$reader:300"
echo go >go
wait "$reader"
fio_reads /dev/mapper/gt 30
assert_eq "$(reads gt "$reader") $(reads gt -1)" "64 30" "pid: reads of the attached process, others"
dmsetup remove gt

# pgrp: a new session's leader and its children share one process group.
dm_create gt "0 $size ioband $dev gt 0 0 pgrp weight 0 :100" >/dev/null
setsid sh -c 'echo $$ >pgrp; read _ <go;
	dd if=/dev/mapper/gt of=/dev/null bs=4k count=20 iflag=direct 2>/dev/null
	dd if=/dev/mapper/gt of=/dev/null bs=4k count=30 iflag=direct 2>/dev/null' &
wait_for 5 test -s pgrp
pgrp=$(cat pgrp)
dmsetup message gt 0 attach "$pgrp:300"
echo go >go
within 20 sh -c "[ \"\$(dmsetup status gt | awk '{ print \$13 }')\" = 50 ]" ||
	fail "pgrp: the process group's reads were not counted to it: $(dmsetup status gt)"
fio_reads /dev/mapper/gt 10
assert_eq "$(reads gt "$pgrp") $(reads gt -1)" "50 10" "pgrp: reads of the process group, others"
dmsetup remove gt

remove_nullb gt
