# shellcheck shell=sh
# Processes and the clock, from /proc: shared by the tests (through lib.sh)
# and run-tests (busybox sh).

# uptime_cs: hundredths of a second since boot, the clock of every timeout.
# Not a count of polling rounds: on a loaded emulated guest N rounds of
# "sleep 0.1" and a command take far longer than N tenths of a second.
uptime_cs() {
	read -r _up _ </proc/uptime
	echo $((${_up%.*} * 100 + 1${_up#*.} - 100))
}

# poll SECONDS INTERVAL CMD [ARGS...]: run CMD every INTERVAL seconds until
# it succeeds (return 0) or SECONDS have passed on the clock (return 1).
poll() {
	_po_end=$(($(uptime_cs) + 100 * $1))
	_po_every=$2
	shift 2
	until "$@"; do
		[ "$(uptime_cs)" -lt "$_po_end" ] || return 1
		sleep "$_po_every"
	done
}

# proc_stats: the /proc/PID/stat line of every process. Through cat, which
# goes on past a process that ended after the glob listed it: busybox awk
# given the files itself stops at the first one missing.
proc_stats() { cat /proc/[0-9]*/stat 2>/dev/null || true; }

# proc_table: "PID STATE PPID PGRP" of every process. The command name is
# left out: it may hold spaces and parentheses (the last ") " ends it).
proc_table() {
	proc_stats | sed 's/^\([0-9]*\) (.*) \([^ ]*\) \([^ ]*\) \([^ ]*\) .*/\1 \2 \3 \4/'
}

# children_of PID: the pids of PID's child processes, one a line.
children_of() { proc_table | awk -v p="$1" '$3 == p { print $1 }'; }

# group_running PGID: a process of process group PGID is still running (a
# zombie is not: a test's orphans may never be reaped).
group_running() {
	proc_table | awk -v g="$1" '$4 == g && $2 != "Z" { found = 1 } END { exit !found }'
}
