# shellcheck shell=sh
# Kernel log windows, shared by the guest init and run-tests (busybox sh).
#
# A window is the part of the kernel log between the lines
# "@@IOBAND-KMSG-BEGIN <id>" and "@@IOBAND-KMSG-END <id>" written to
# /dev/kmsg. The guest boots with a large log_buf_len, so the log does not
# wrap during a test; should the BEGIN line be gone all the same, the window
# starts at the oldest line kept (the scan errs on the side of failing).

# busybox dmesg reads only 16 KiB of the log unless told: read all of the
# kernel's buffer (log_buf_len=16M on the guest's command line).
KMSG_BUF_SIZE=16777216

kmsg_all() { dmesg -s "$KMSG_BUF_SIZE"; }

# Kernel log lines that fail a test (extended regular expression).
# The checkers of the debug kernel (make check-debug) report through BUG
# (KASAN, sleeping in atomic context), WARNING (lockdep, DEBUG_OBJECTS,
# DEBUG_LIST) and the lines after KASAN: lockdep giving up, debugobjects
# running out of memory, kmemleak's finding after a scan.
KMSG_FLAGGED_RE='(^|[^A-Za-z])BUG([^A-Za-z]|$)|WARNING|Oops|hung_task|blocked for more than|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: possible|INFO: trying to register non-static key|KASAN|UBSAN|ODEBUG disabled|suspected memory leaks?|[Mm]emory leak detector disabled|general protection fault|[Kk]ernel panic|soft lockup|detected stalls?'

kmsg_mark() { # begin|end ID
	case $1 in
	begin) echo "@@IOBAND-KMSG-BEGIN $2" >/dev/kmsg ;;
	end) echo "@@IOBAND-KMSG-END $2" >/dev/kmsg ;;
	esac
}

kmsg_window() { # ID: the kernel log lines between the two marks of ID
	kmsg_all | awk -v b="@@IOBAND-KMSG-BEGIN $1" -v e="@@IOBAND-KMSG-END $1" '
		function ends(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
		{ line[NR] = $0 }
		ends($0, b) { start = NR }
		ends($0, e) { stop = NR }
		END {
			if (!stop) stop = NR + 1
			for (i = start + 1; i < stop; i++) print line[i]
		}'
}

# One known report is not ours and is let through: null_blk's bandwidth
# timer (mbps=, the capped devices of the tests) races with itself. Two
# submitters both find the timer idle and both restart it, one while its
# callback runs, and nullb_bwtimer_fn's hrtimer_forward_now() warns
# ("WARNING: ... hrtimer_forward", the callback first in the trace). Seen on
# Debian's 6.1 under TCG, with or without dm-ioband in the stack.
kmsg_flagged() { # filter: the lines of stdin that fail a test
	awk -v re="$KMSG_FLAGGED_RE" '
		{ line[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (line[i] !~ re || index(line[i], "@@IOBAND-")) continue
				if (line[i] ~ /WARNING: .* hrtimer_forward/) {
					for (j = i + 1; j <= NR && j <= i + 40 && line[j] !~ /nullb_bwtimer_fn|end trace/; j++) ;
					if (j <= NR && line[j] ~ /nullb_bwtimer_fn/) continue
				}
				print line[i]
			}
		}'
}

# ---- kmemleak (debug kernels only) ----
# The debug kernel does not scan by itself (no DEBUG_KMEMLEAK_AUTO_SCAN):
# init clears what boot left, run-tests scans after each test. An object
# is reported when it is unreferenced and unchanged in two scans in a row
# (the first scan only notes its checksum) and was 5 s old when the second
# began: two scans, the second at least 5 s after the first began (a scan
# takes some 20 s on the debug kernel under TCG, so there is no wait).
KMEMLEAK=/sys/kernel/debug/kmemleak

kmemleak_on() { [ -e "$KMEMLEAK" ]; }

kmemleak_scan() { # FILE: scan twice, write the suspected leaks to FILE
	# (empty: none), then forget them; false if kmemleak is off or failed
	_km_t0=$(cut -d. -f1 /proc/uptime)
	echo scan >"$KMEMLEAK" || return 1
	_km_wait=$((_km_t0 + 6 - $(cut -d. -f1 /proc/uptime)))
	[ "$_km_wait" -le 0 ] || sleep "$_km_wait"
	echo scan >"$KMEMLEAK" && cat "$KMEMLEAK" >"$1" && echo clear >"$KMEMLEAK"
}

# lockdep turns itself off for good after its first report (and after an
# oops): debug_locks goes 1 -> 0. Prints 1, 0, or nothing without lockdep.
lockdep_on() {
	[ -r /proc/lockdep_stats ] || return 0
	awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats
}
