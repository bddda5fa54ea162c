#!/usr/bin/python3
"""Where the host's time per IO goes, from bench/run-overhead --host-profile.

  host-report.py LOG PERF_DIR QEMU_ROOT

LOG is the console of a guest-profile.sh boot (PROFILE_SAMPLER=none) that
Debian 13's QEMU ran with -perfmap; PERF_DIR holds window-watch.py --perf's
<device>.<rep>.data, host perf's samples of QEMU's threads over each 10 s
window (cpu-clock, 2,000 Hz); QEMU_ROOT is the root that QEMU ran in
(scripts/build-root --qemu). Prints markdown: the host's CPU per IO, split
into the guest's code as TCG translated it (QEMU's /tmp/perf-<pid>.map
names the guest address of each piece, and the guest's kallsyms, in LOG,
the function), QEMU's own functions (by its exported symbols: a static
function shows as the exported one before it, with its offset), and the
host's kernel.
"""
import collections
import glob
import os
import re
import statistics
import subprocess
import sys

from guest_console import Symbols, read_console

HZ = 2000
# QEMU's functions that find the next translated block for a guest jump
# that TCG could not chain: returns, indirect calls and jumps, and jumps
# to another guest page.
TB_LOOKUP = {"helper_lookup_tb_ptr", "qht_lookup_custom", "tb_htable_lookup"}
# QEMU's functions that fill its software TLB after a guest access misses
# it; the page table walk itself is static (x86's mmu_translate()).
TLB_FILL = {"tlb_set_page_full", "tlb_set_page_with_attrs", "x86_cpu_tlb_fill",
            "probe_access_full_mmu", "probe_access_full", "probe_access_flags",
            "get_page_addr_code_hostp", "address_space_translate_for_iotlb",
            "qemu_ram_block_from_host", "qemu_ram_addr_from_host_nofail",
            "cpu_asidx_from_attrs", "get_pg_mode"}


def qemu_symbols(root):
    """QEMU's exported symbols (Debian's binary keeps no others)."""
    out = subprocess.run(["nm", "-D", "--defined-only",
                          os.path.join(root, "usr/bin/qemu-system-x86_64")],
                         capture_output=True, text=True, check=True).stdout
    return Symbols((int(f[0], 16), f[2]) for f in map(str.split, out.splitlines())
                   if len(f) == 3 and f[1] in "tTwW" and int(f[0], 16))


def samples(data, root):
    """perf's samples of one window: (count, mode, symbol) per symbol."""
    out = subprocess.run(["perf", "report", "-i", data, "--symfs", root, "--stdio",
                          "--sort", "sym", "-F", "sample,sym", "--percent-limit", "0"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+\[(.)\]\s+(.*)$", line)
        if m:
            yield int(m.group(1)), m.group(2), m.group(3).strip()


def classify(mode, sym, guest, qemu):
    """(category, name) of one perf symbol."""
    if mode == "k":
        return "host kernel", "host kernel"
    m = re.match(r"guest-0x([0-9a-f]+)$", sym)
    if m:
        addr = int(m.group(1), 16)
        if addr < 1 << 63:
            return "guest user", "user space"
        symbol = guest.nearest(addr)
        name = symbol[1] if symbol else "(unknown)"
        return ("guest ioband" if "[dm_ioband]" in name else "guest kernel"), name
    m = re.match(r"0x([0-9a-f]+)$", sym)
    if m:
        addr = int(m.group(1), 16)
        base, name = qemu.nearest(addr) or (0, "(unknown)")
        if addr - base >= 0x400:
            name = f"{name}+{addr - base:#x}"
    else:
        name = sym
    if name in TB_LOOKUP:
        return "QEMU TB lookup", name
    if name in TLB_FILL:
        return "QEMU TLB fill", name
    return "QEMU other", name


CATEGORIES = ["guest kernel", "guest ioband", "guest user", "QEMU TB lookup",
              "QEMU TLB fill", "QEMU other", "host kernel"]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    log, perf_dir, root = sys.argv[1:]
    reads, guest = read_console(log, "host-report")
    qemu = qemu_symbols(root)
    by_cat = {}  # run: category: host us per IO
    by_name = collections.defaultdict(lambda: collections.defaultdict(float))
    runs = collections.defaultdict(list)  # device: runs
    for data in sorted(glob.glob(os.path.join(perf_dir, "*.data"))):
        device, rep = os.path.basename(data)[:-len(".data")].split(".")
        ios = reads[device, rep]
        cats = collections.Counter()
        for count, mode, sym in samples(data, root):
            cat, name = classify(mode, sym, guest, qemu)
            us = count / HZ / ios * 1e6
            cats[cat] += us
            by_name[device][cat.split()[0] + ": " + name] += us
        by_cat[device, rep] = cats
        runs[device].append(rep)
    print("| device | run | reads in 10 s | host us / IO | " +
          " | ".join(CATEGORIES) + " |")
    print("|---" * (4 + len(CATEGORIES)) + "|")
    for device in sorted(runs):
        for rep in sorted(runs[device], key=int):
            cats = by_cat[device, rep]
            print(f"| {device} | {rep} | {reads[device, rep]} | {sum(cats.values()):.2f} | " +
                  " | ".join(f"{cats[c]:.2f}" for c in CATEGORIES) + " |")
    print()
    med = {d: {c: statistics.median(by_cat[d, r][c] for r in runs[d]) for c in CATEGORIES}
           for d in runs}
    tot = {d: statistics.median(sum(by_cat[d, r].values()) for r in runs[d]) for d in runs}
    for d in sorted(runs):
        print(f"- {d}: {tot[d]:.2f} us of the host's CPU an IO (median of {len(runs[d])} runs): " +
              ", ".join(f"{c} {med[d][c]:.2f}" for c in CATEGORIES))
    if {"linear", "ioband"} <= set(runs):
        print(f"- ioband against dm-linear: {tot['ioband'] - tot['linear']:+.2f} us an IO "
              f"({(tot['ioband'] / tot['linear'] - 1) * 100:+.1f}%): " +
              ", ".join(f"{c} {med['ioband'][c] - med['linear'][c]:+.2f}" for c in CATEGORIES))
        print()
        print("Symbols whose host time per IO differs by at least 0.05 us (mean of the runs):")
        print()
        print("| symbol | dm-linear us / IO | ioband us / IO | difference |")
        print("|---|---|---|---|")
        mean = {d: {n: v / len(runs[d]) for n, v in by_name[d].items()} for d in runs}
        names = set(mean["linear"]) | set(mean["ioband"])
        rows = sorted(((mean["ioband"].get(n, 0) - mean["linear"].get(n, 0), n) for n in names),
                      reverse=True)
        for diff, n in rows:
            if abs(diff) >= 0.05:
                print(f"| `{n}` | {mean['linear'].get(n, 0):.2f} | "
                      f"{mean['ioband'].get(n, 0):.2f} | {diff:+.2f} |")


if __name__ == "__main__":
    main()
