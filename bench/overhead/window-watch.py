#!/usr/bin/python3
"""What the host sees of each of the guest's windows.

  window-watch.py LOG OUT PIDFILE [--icount DIR | --perf DIR]

Follows LOG, the console of a guest that bench/run-overhead --profile,
--icount or --host-profile started (its QEMU writes its pid to PIDFILE: tests/vm/run
--pidfile), until that QEMU exits. At each "@@WINDOW <device> <rep>
start|end" line of the guest, it reads the CPU time of all of QEMU's
threads from /proc; for each window it writes "@@HOST <device> <rep>
<QEMU's CPU-seconds> <wall seconds>" to OUT. With --icount, the guest's
QEMU runs bench/overhead/icount-plugin.c, and at each such line it also
asks the plugin for a snapshot of the guest's instruction counts, named
"<device>.<rep>.start|end", and waits until the plugin has taken it. With
--perf, host perf samples QEMU's threads over each window (cpu-clock,
2,000 Hz) into DIR/<device>.<rep>.data.

A TCG guest's clock is the host's: its CPU time per IO grows if the host
gives its vCPU threads less time, not only if the guest runs more code.
These figures tell the two apart. The console line is seen within about
0.02 s of the guest printing it; over a window of 10 s, that is within
0.4%.
"""
import os
import signal
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")
# How long the plugin may take to answer a snapshot request.
SNAPSHOT_TIMEOUT = 60


def wait_for_pid(pidfile):
    """The pid QEMU writes to pidfile (tests/vm/run --pidfile)."""
    while True:
        try:
            with open(pidfile) as f:
                pid = f.read().strip()
            if pid:
                return int(pid)
        except FileNotFoundError:
            pass
        time.sleep(0.1)


def cpu_seconds(pid):
    """User and system CPU time of all of pid's threads, in seconds."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


def snapshot(icount_dir, name):
    """Asks icount-plugin for the snapshot NAME; returns once it is taken."""
    request = os.path.join(icount_dir, "request")
    with open(request + ".new", "w") as f:
        f.write(name + "\n")
    os.rename(request + ".new", request)
    deadline = time.monotonic() + SNAPSHOT_TIMEOUT
    while os.path.exists(request):
        if time.monotonic() > deadline:
            sys.exit(f"window-watch: the icount plugin did not take {name}")
        time.sleep(0.001)


def start_perf(perf_dir, name, pid):
    """Host perf sampling QEMU's threads into PERF_DIR/NAME.data."""
    return subprocess.Popen(
        ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-p", str(pid),
         "-o", os.path.join(perf_dir, name + ".data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_perf(recorder):
    recorder.send_signal(signal.SIGINT)
    if recorder.wait() not in (0, -signal.SIGINT):
        sys.exit("window-watch: perf record failed")


def main():
    if len(sys.argv) not in (4, 6) or \
            (len(sys.argv) == 6 and sys.argv[4] not in ("--icount", "--perf")):
        sys.exit(__doc__)
    log, out, pidfile = sys.argv[1:4]
    icount_dir = sys.argv[5] if sys.argv[4:5] == ["--icount"] else None
    perf_dir = sys.argv[5] if sys.argv[4:5] == ["--perf"] else None
    qemu = wait_for_pid(pidfile)
    start = {}
    recorders = {}
    pos = 0
    with open(out, "w") as report:
        while os.path.exists(f"/proc/{qemu}"):
            try:
                with open(log, "rb") as f:
                    f.seek(pos)
                    lines = f.readlines()
            except FileNotFoundError:
                lines = []
            # A line still being written is read again next time.
            if lines and not lines[-1].endswith(b"\n"):
                lines.pop()
            pos += sum(map(len, lines))
            for line in lines:
                fields = line.decode(errors="replace").split()
                if "@@WINDOW" not in fields:
                    continue
                device, rep, what = fields[fields.index("@@WINDOW") + 1:][:3]
                if icount_dir:
                    snapshot(icount_dir, f"{device}.{rep}.{what}")
                if perf_dir and what == "start":
                    recorders[device, rep] = start_perf(perf_dir, f"{device}.{rep}", qemu)
                elif perf_dir and (device, rep) in recorders:
                    stop_perf(recorders.pop((device, rep)))
                try:
                    now = (cpu_seconds(qemu), time.monotonic())
                except OSError:
                    break
                if what == "start":
                    start[device, rep] = now
                elif (device, rep) in start:
                    cpu0, wall0 = start.pop((device, rep))
                    print(f"@@HOST {device} {rep} {now[0] - cpu0:.2f} "
                          f"{now[1] - wall0:.2f}", file=report, flush=True)
            time.sleep(0.01)


if __name__ == "__main__":
    main()
