#!/usr/bin/python3
"""The guest's instructions per IO, through dm-linear and through ioband.

  icount-report.py LOG DIR

LOG is the console of a guest that ran bench/overhead/guest-profile.sh with
PROFILE_SAMPLER=none: "@@READS <device> <rep> <reads>" per run and the
kernel's text symbols, gzipped, in base64 lines "@@KSYMS <line>". DIR holds
icount-plugin.c's snapshots "<device>.<rep>.start|end", taken as each run's
window started and ended (bench/overhead/window-watch.py). Prints, in
markdown, each run's instructions per IO, kernel and user space, and the
symbols whose instructions per IO differ between the two devices.
"""
import collections
import os
import statistics
import sys

from guest_console import read_console

DEVICES = ("linear", "ioband")
# Symbols listed: those whose instructions per IO differ by at least this.
MIN_DIFFERENCE = 3


def read_snapshot(path):
    """The instructions run so far, by block address."""
    blocks = collections.Counter()
    with open(path) as f:
        missed = int(f.readline().split()[1])
        if missed:
            sys.exit(f"icount-report: {path}: {missed} blocks not counted")
        for line in f:
            address, insns, runs = line.split()
            blocks[int(address, 16)] += int(insns) * int(runs)
    return blocks


def split_by_space(blocks):
    """The instructions in the kernel's half of the address space (the top
    bit set), and in user space's."""
    kernel = sum(n for address, n in blocks.items() if address >> 63)
    return kernel, sum(blocks.values()) - kernel


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    reads, symbols = read_console(sys.argv[1], "icount-report")

    def symbol_of(address):
        if not address >> 63:
            return "(user space)"
        symbol = symbols.nearest(address)
        return symbol[1] if symbol else "(unknown)"

    per_io = collections.defaultdict(list)  # device: (kernel, user) per run
    by_symbol = {device: collections.Counter() for device in DEVICES}
    print("| device | run | reads in 10 s (under the plugin) | kernel / IO | user space / IO | total / IO |")
    print("|---|---|---|---|---|---|")
    runs = collections.Counter(device for device, _ in reads)
    for (device, rep), n in sorted(reads.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        base = os.path.join(sys.argv[2], f"{device}.{rep}")
        window = read_snapshot(base + ".end")
        window.subtract(read_snapshot(base + ".start"))
        kernel, user = (n_insns / n for n_insns in split_by_space(window))
        per_io[device].append((kernel, user))
        for address, insns in window.items():
            by_symbol[device][symbol_of(address)] += insns / n / runs[device]
        print(f"| {device} | {rep} | {n} | {kernel:.0f} | {user:.0f} | {kernel + user:.0f} |")
    print()
    total = {}
    for device in DEVICES:
        totals = [k + u for k, u in per_io[device]]
        total[device] = statistics.median(totals)
        print(f"- {device}: {total[device]:.0f} instructions an IO, the median of the runs "
              f"({min(totals):.0f}-{max(totals):.0f}), of which the kernel's "
              f"{statistics.median(k for k, _ in per_io[device]):.0f} and user space's "
              f"{statistics.median(u for _, u in per_io[device]):.0f}")
    own = sum(n for s, n in by_symbol["ioband"].items() if s.endswith("[dm_ioband]"))
    print(f"- ioband costs {total['ioband'] - total['linear']:+.0f} instructions an IO, "
          f"{100 * (total['ioband'] / total['linear'] - 1):+.1f}% (medians); its module's own "
          f"functions execute {own:.0f} of them (mean of the runs)")
    print()
    print(f"The symbols whose instructions per IO differ by at least {MIN_DIFFERENCE}:")
    print()
    print("| symbol | dm-linear / IO | ioband / IO | difference |")
    print("|---|---|---|---|")
    names = set(by_symbol["linear"]) | set(by_symbol["ioband"])
    diff = {s: by_symbol["ioband"][s] - by_symbol["linear"][s] for s in names}
    for s, d in sorted(diff.items(), key=lambda kv: -kv[1]):
        if abs(d) >= MIN_DIFFERENCE:
            print(f"| `{s}` | {by_symbol['linear'][s]:.1f} | {by_symbol['ioband'][s]:.1f} | {d:+.1f} |")


if __name__ == "__main__":
    main()
