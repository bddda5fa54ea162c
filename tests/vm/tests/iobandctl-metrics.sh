#!/bin/sh
# iobandctl's counters for collectors: stat --format prometheus and
# openmetrics, export --textfile (written whole, for node_exporter), and
# stat --json's raw counters and devices, all against the IO fio did and
# the kernel's own status line. (The formats themselves are read by real
# parsers in the unit tests: tests/unit/tools/parse_metrics.py.)
# shellcheck source=../lib.sh
. /ioband/lib.sh

have_iobandctl || fail "iobandctl is not in the initramfs (make -C tools)"

dev=$(make_nullb me 64)
cg_create me-a
iobandctl create me "$dev" --group me-a=300 --domain me-dom
a=$(cg_id me-a)
cg_run me-a fio --name=r --filename=/dev/mapper/me --direct=1 --rw=randread \
	--bs=4k --number_ios=300 --size=32M --output=/dev/null
cg_run me-a fio --name=w --filename=/dev/mapper/me --direct=1 --rw=randwrite \
	--bs=8k --number_ios=50 --size=32M --output=/dev/null

iobandctl stat --prometheus me >me.prom
cat me.prom
metric() { # NAME LABELS: the value of the sample NAME{LABELS}
	awk -v s="$1{$2}" '$1 == s { print $2 }' me.prom
}
labels="device=\"me\",group=\"me-a\",id=\"$a\""
assert_eq "$(metric ioband_group_read_ios_total "$labels")" 300 "reads of me-a"
assert_eq "$(metric ioband_group_read_bytes_total "$labels")" $((300 * 4096)) "bytes read by me-a"
assert_eq "$(metric ioband_group_write_bytes_total "$labels")" $((50 * 8192)) "bytes written by me-a"
assert_eq "$(metric ioband_group_weight "$labels")" 300 "weight of me-a"
assert_eq "$(metric ioband_group_queued_ios "$labels")" 0 "queued of me-a"
metric ioband_group_wait_seconds_total "$labels" | grep -qE '^[0-9]+\.[0-9]{9}$' ||
	fail "wait seconds of me-a: $(metric ioband_group_wait_seconds_total "$labels")"
# The kernel's own count, from the status line (fields: id, reads, ...).
reads=$(dmsetup status me | awk -v id="$a" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + 1) }')
assert_eq "$(metric ioband_group_read_ios_total "$labels")" "$reads" "reads: metrics and status line"
assert_eq "$(metric ioband_group_read_ios_total 'device="me",group="<default>",id="-1"')" 0 \
	"reads of the default group"
grep -q '^# TYPE ioband_group_read_bytes_total counter$' me.prom || fail "no TYPE line"
grep -q "^ioband_domain_io_limit{device=\"me\",domain=\"me-dom\"} [0-9]" me.prom || fail "no io_limit"
grep -q "^ioband_domain_info{device=\"me\",domain=\"me-dom\",policy=\"weight\"" me.prom ||
	fail "no info metric"
! grep -q '# EOF' me.prom || fail "the text format has no EOF"
iobandctl stat --format openmetrics me >me.om
[ "$(tail -n 1 me.om)" = "# EOF" ] || fail "openmetrics does not end with # EOF"
grep -q '^# TYPE ioband_group_read_bytes counter$' me.om || fail "openmetrics family name"

# export: the same samples, in a file written whole.
mkdir textfile
iobandctl export --textfile textfile
assert_eq "$(ls -A textfile)" ioband.prom "files in the textfile folder"
grep -q "^ioband_group_read_ios_total{$labels} 300\$" textfile/ioband.prom ||
	fail "export: $(cat textfile/ioband.prom)"
assert_eq "$(iobandctl export me | grep -c '^ioband_group_read_ios_total')" 2 \
	"samples of export me (two groups)"
if iobandctl export --textfile no-such-dir 2>err.txt; then
	fail "export into a folder that does not exist succeeded"
fi
grep -q "cannot create a file beside no-such-dir/ioband.prom" err.txt || fail "export error: $(cat err.txt)"
if iobandctl stat --prometheus -i 1 me 2>err.txt; then fail "--prometheus -i"; fi
grep -q "no --interval" err.txt || fail "--prometheus -i: $(cat err.txt)"

# --json (schema 1): the counters, the devices.
iobandctl stat --json me >me.json
cat me.json
grep -q '"group": "me-a",' me.json || fail "json: group"
grep -q "\"read_bytes\": $((300 * 4096))," me.json || fail "json: read_bytes"
grep -q '"read_ios": 300,' me.json || fail "json: read_ios"
grep -q '"wait_ns": [0-9][0-9]*,' me.json || fail "json: wait_ns"
grep -q '"devices": \[' me.json || fail "json: devices"
grep -q '"domain": "me-dom",' me.json || fail "json: the domain field of the device"
grep -q '"name": "me",' me.json || fail "json: the device's name"

iobandctl remove me
remove_nullb me
