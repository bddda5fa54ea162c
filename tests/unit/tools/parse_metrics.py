#!/usr/bin/python3
"""Read iobandctl's metrics with real parsers.

    parse_metrics.py TEST_TOOLS

TEST_TOOLS --print-metrics FORMAT prints the metrics of two example
devices (test_tools.c): the Prometheus text format is read by
prometheus_client's text parser and, when promtool (Debian's prometheus)
is installed, checked by `promtool check metrics` (its parser and its
linter); the OpenMetrics form by prometheus_client's OpenMetrics parser,
which is strict; the JSON of stat --json's devices by json. Prints a
PASS/FAIL line per check, then "N passed, N failed".
"""
import json
import shutil
import subprocess
import sys

from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import \
    text_string_to_metric_families as parse_text

# (sample name, labels) -> value: what the example devices hold.
EXPECTED = {
    ("ioband_group_read_bytes_total",
     (("device", "io1"), ("group", "<default>"), ("id", "-1"))): 40960,
    ("ioband_group_read_bytes_total",
     (("device", "io1"), ("group", 'web "a"\\b'), ("id", "5012"))): 122880,
    ("ioband_group_write_ios_total",
     (("device", "io2"), ("group", "<default>"), ("id", "-1"))): 7,
    ("ioband_group_wait_seconds_total",
     (("device", "io2"), ("group", "77"), ("id", "77"))): 1.000000001,
    ("ioband_group_max_bytes_per_second",
     (("device", "io2"), ("group", "77"), ("id", "77"))): 2048000,
    ("ioband_domain_elapsed_seconds",
     (("device", "io2"), ("domain", "shared"))): 1.5,
    ("ioband_domain_info",
     (("device", "io2"), ("domain", "shared"), ("policy", "range-bw"),
      ("writeback_attribution", "cgroup"))): 1,
}

results = []


def check(name, fn):
    try:
        fn()
        results.append(True)
        print("PASS", name)
    except Exception as e:  # a failed check, whatever raised it
        results.append(False)
        print("FAIL %s: %s" % (name, e))


def output(fmt):
    return subprocess.run([sys.argv[1], "--print-metrics", fmt], check=True,
                          capture_output=True, text=True).stdout


def check_samples(families, want_types):
    got, types = {}, {}
    for fam in families:
        types[fam.name] = fam.type
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in got:
                raise ValueError("sample given twice: %s" % (key,))
            got[key] = s.value
    for key, value in EXPECTED.items():
        if key not in got:
            raise ValueError("no sample %s" % (key,))
        if abs(got[key] - value) > 1e-12 * max(1, value):
            raise ValueError("%s: %r, want %r" % (key, got[key], value))
    for fam, kind in want_types.items():
        if types.get(fam) != kind:
            raise ValueError("family %s is %s, want %s" %
                             (fam, types.get(fam), kind))
    if len(got) < 50:
        raise ValueError("only %d samples" % len(got))


def text_format():
    check_samples(parse_text(output("prometheus")),
                  {"ioband_group_read_bytes": "counter",
                   "ioband_group_queued_ios": "gauge",
                   "ioband_domain_info": "gauge"})


def openmetrics_format():
    check_samples(parse_openmetrics(output("openmetrics")),
                  {"ioband_group_read_bytes": "counter",
                   "ioband_group_wait_max_seconds": "gauge",
                   "ioband_domain": "info"})


def promtool():
    run = subprocess.run(["promtool", "check", "metrics"],
                         input=output("prometheus"), capture_output=True,
                         text=True)
    if run.returncode or run.stdout.strip() or run.stderr.strip():
        raise ValueError("promtool: exit %d: %s%s" %
                         (run.returncode, run.stdout, run.stderr))


def json_devices():
    devices = json.loads(output("json"))["devices"]
    if [d["name"] for d in devices] != ["io1", "io2", "io3"]:
        raise ValueError("devices %r" % devices)
    if devices[1]["module"]["window_ns"] != 20000000 or \
            devices[1]["attribution"]["route"] != "cgroup":
        raise ValueError("domain fields of io2: %r" % devices[1])


check("metrics: Prometheus text format, prometheus_client's parser",
      text_format)
check("metrics: OpenMetrics, prometheus_client's OpenMetrics parser",
      openmetrics_format)
if shutil.which("promtool"):
    check("metrics: promtool check metrics", promtool)
else:
    print("note: no promtool (apt-get install prometheus): not run")
check("metrics: stat --json's devices, json", json_devices)
print("%d passed, %d failed" % (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
