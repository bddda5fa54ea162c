#!/bin/sh
# attach and type race: one loop attaches and detaches a group while
# another switches the group type between cgroup and none. An attach must
# never succeed under type none (type none is refused while groups are
# attached, attach is refused under type none): no table ever shows type
# none with a group, and the table the device ends with loads again.
# (The window, between an unlocked type check and the attach, is a few
# microseconds wide: this test caught it in a module with a 5 ms sleep
# put there, not in an unchanged one.)
# harness-timeout: 120
. /ioband/lib.sh
set -eu

dev=$(make_nullb ra 64)
size=$(blockdev --getsz "$dev")
dm_create ra "0 $size ioband $dev ra 0 0 cgroup weight 0" >/dev/null
SECONDS_TO_RACE=$(scaled 25)

# A table whose group type is none has 11 words: a 12th is a group.
check_table() { # WHO
	dmsetup table ra | awk -v who="$1" '$8 == "none" && NF > 11 { print who ": " $0; exit 1 }' >>race.log
}
until_end() { [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; }
attacher() { # ID
	_n=0
	while until_end; do
		if dmsetup message ra 0 attach "$1" 2>/dev/null; then
			_n=$((_n + 1))
			check_table "attach $1" || :
			dmsetup message ra 0 detach "$1"
		fi
	done
	echo "attacher $1: $_n attaches" >>counts.log
}
typer() {
	_n=0
	while until_end; do
		if dmsetup message ra 0 type none 2>/dev/null; then
			_n=$((_n + 1))
			check_table "type none" || :
		fi
		dmsetup message ra 0 type cgroup 2>/dev/null || :
	done
	echo "typer: $_n switches to none" >>counts.log
}

: >race.log
end=$(($(cut -d. -f1 /proc/uptime) + SECONDS_TO_RACE))
pids=
attacher 101 &
pids="$pids $!"
typer &
pids="$pids $!"
# shellcheck disable=SC2086 # one word per pid
wait $pids
cat counts.log
if [ -s race.log ]; then
	head -n 5 race.log
	fail "a group was attached under group_type none ($(wc -l <race.log) times)"
fi
# Whatever the race left, its table loads again.
dmsetup table ra | dmsetup load ra || fail "the table after the race does not load: $(dmsetup table ra)"
dmsetup resume ra
dmsetup remove ra
remove_nullb ra
