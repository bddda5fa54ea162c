"""What bench/overhead/guest-profile.sh prints with PROFILE_SAMPLER=none,
for the reports that read its console (icount-report.py, host-report.py):
"@@READS <device> <rep> <reads>" per run, and the guest kernel's and
modules' text symbols, gzipped, in base64 lines "@@KSYMS <line>"."""
import base64
import bisect
import gzip
import sys


class Symbols:
    """Addresses to names: the symbol at or below an address."""

    def __init__(self, pairs):
        self.pairs = sorted(pairs)
        self.starts = [address for address, _ in self.pairs]

    def nearest(self, address):
        """(start, name) of the symbol at or below ADDRESS, or None."""
        i = bisect.bisect_right(self.starts, address) - 1
        return self.pairs[i] if i >= 0 else None


def read_console(path, tool):
    """The reads of each run, {(device, rep): reads}, and the guest's
    symbols (Symbols), from the console at PATH; TOOL names the caller in
    the error when the console holds no symbols."""
    reads, encoded = {}, []
    for line in open(path, errors="replace"):
        fields = line.split()
        if "@@READS" in fields and len(fields) >= fields.index("@@READS") + 4:
            device, rep, n = fields[fields.index("@@READS") + 1:][:3]
            reads[device, rep] = int(n)
        elif "@@KSYMS" in fields and len(fields) > fields.index("@@KSYMS") + 1:
            encoded.append(fields[fields.index("@@KSYMS") + 1])
    if not encoded:
        sys.exit(f"{tool}: no @@KSYMS in the guest's console")
    pairs = []
    text = gzip.decompress(base64.b64decode("".join(encoded))).decode()
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and not fields[1].startswith("__pfx_"):
            pairs.append((int(fields[0], 16), " ".join(fields[1:])))
    return reads, Symbols(pairs)
