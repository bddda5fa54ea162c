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
KMSG_FLAGGED_RE='(^|[^A-Za-z])BUG([^A-Za-z]|$)|WARNING|Oops|hung_task|blocked for more than|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|INFO: possible|KASAN|UBSAN|general protection fault|[Kk]ernel panic|soft lockup|detected stalls?'

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

kmsg_flagged() { # filter: the lines of stdin that fail a test
	grep -E "$KMSG_FLAGGED_RE" | grep -v '@@IOBAND-' || true
}
