// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario files for ioband-sim. One statement per line, '#' starts a
 * comment, words are separated by blanks, and every setting is key=value.
 * Times take a unit: ns, us, ms or s (a bare number is nanoseconds).
 *
 *   device  per_io=TIME per_sector=TIME depth=N
 *           [mbps=N | budget=BYTES] [tick=TIME]
 *           [seek=TIME stroke=TIME size=SECTORS] [jitter=PCT]
 *           [order=fifo|sort] [lag=TIME]
 *      seek: a disk's head; an IO not starting where the previous one
 *      ended costs seek more, plus stroke times its distance over size
 *      (default 2097152, 1 GiB). jitter: each service time drawn from
 *      +-PCT% of its cost. order=sort serves the FIFO in ascending LBA
 *      from the head, wrapping, the oldest first once expired, as
 *      mq-deadline sorts. lag: an item reaches the device that long
 *      after it goes down, and its completion is heard that long after.
 *      The servers model: depth servers, each IO taking per_io +
 *      per_sector x sectors. mbps or budget adds the tick model of
 *      null_blk's mbps= cap: a budget of BYTES (mbps: N MiB/s x tick,
 *      computed as null_blk does) granted at each tick (default 20 ms,
 *      null_blk's), IOs started at once while it lasts (with per_io=0
 *      they complete at once too), and the one that does not fit
 *      waiting, with all behind it, for the next tick.
 *   sched   policy=weight|weight-iosize|range-bw|weight-range
 *           token_base=N io_throttle=N carryover=N  (0 = default)
 *           io_limit=N        (0, the default, sets no cap on bios)
 *   run     duration=TIME warmup=TIME seed=N vtime_start=N
 *   group   NAME weight=N PATTERN [size=N | size=MIN-MAX] [write=PCT]
 *           [urgent=PCT] [discard=PCT]
 *           [think=TIME] [on=TIME off=TIME] [start=TIME] [stop=TIME]
 *           [min=KBPS] [max=KBPS] [parent=NAME]
 *           [lba=random|seq] [region=OFFSET+SPAN]
 *      parent: a group declared earlier (not the default group), whose
 *      share this group's is a part of (section 19 of the design).
 *      lba and region, in sectors, place its IOs on a device with
 *      seek=: random in the region (aligned to their size) or
 *      sequential through it; by default group N (from 1) has the
 *      128 MiB at (N - 1) x 256 MiB, as the bench lays its files out.
 *      min and max are the group's reservation and limit in KB/s (1 KB/s
 *      = 2 sectors per second; 0 = none), used by the range policies.
 *      urgent: the percentage of IOs marked urgent (metadata, journal:
 *      they go down at once and are charged as debt); discard: of the
 *      others, the percentage that are discards (writes charged by size,
 *      one token per 4 KiB under `weight`).
 *      PATTERN is one of
 *           closed=N        N IOs outstanding; think= is the pause
 *                           between a completion and the next bio
 *           rate=IOPS       open loop, fixed interval
 *           poisson=IOPS    open loop, exponential intervals
 *           writeback=POOL  a writer and its flusher over a dirty pool
 *                           of POOL sectors (dirty plus under writeback):
 *                           [dirty_rate=KBPS] the writer's rate into it
 *                           (default: as fast as the pool allows);
 *                           [burst=SECTORS] the flusher submits what is
 *                           dirty as bios of size= in bursts of at most
 *                           this much (default: all of it), [gap=TIME]
 *                           pausing this long after a full burst, and
 *                           sleeping until one bio's worth is dirty
 *           idle            no IO
 *      The group named "default" is the default group (group 0): it
 *      exists with weight 100 and no IO unless a line sets it.
 *   at TIME weight NAME N | detach NAME | passthrough on|off |
 *           policy P | io_limit N | io_throttle N | token_base N |
 *           carryover N | range NAME MIN MAX
 *   expect  sectors=R:R... | tokens=R:R... | time=R:R... [within=PCT] |
 *           utilised=PCT
 *      What the run must show, else it fails: the split of sectors,
 *      tokens or device time (the service time of the device model:
 *      per_io + per_sector x sectors, writes' own write_per_io and
 *      write_per_sector if given) between the groups active in the
 *      window, in the order
 *      they were declared, each share within PCT (default 2%) of its
 *      ratio's; or the device utilised at least PCT.
 *
 * Simulated time is the now_ns the core is given; the glue's timer
 * (ioband_sched_next_event_ns()) is modelled as an event.
 *
 * Sizes are in sectors of 512 bytes; write is the percentage of writes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAX_WORDS 32

static int fail(char *err, size_t len, unsigned int line, const char *fmt,
		...)
{
	va_list ap;
	int n = snprintf(err, len, "line %u: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_u64(const char *s, u64 *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_time(const char *s, u64 *out)
{
	static const struct { const char *suffix; u64 mult; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ULL },
	};
	char *end;
	double v;
	unsigned int i;

	if (!*s || *s == '-')
		return -1;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	if (!*end) {
		*out = (u64)v;
		return 0;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			*out = (u64)(v * (double)units[i].mult + 0.5);
			return 0;
		}
	}
	return -1;
}

static int parse_policy(const char *s, u64 *out)
{
	if (!strcmp(s, "weight"))
		*out = IOBAND_POLICY_WEIGHT;
	else if (!strcmp(s, "weight-iosize"))
		*out = IOBAND_POLICY_WEIGHT_IOSIZE;
	else if (!strcmp(s, "range-bw"))
		*out = IOBAND_POLICY_RANGE_BW;
	else if (!strcmp(s, "weight-range"))
		*out = IOBAND_POLICY_WEIGHT_RANGE;
	else if (!strcmp(s, "weight-time"))
		*out = IOBAND_POLICY_WEIGHT_TIME;
	else
		return -1;
	return 0;
}

static int find_group(const struct sim_cfg *cfg, const char *name)
{
	u32 i;

	for (i = 0; i < cfg->nr_groups; i++)
		if (!strcmp(cfg->groups[i].name, name))
			return (int)i;
	return -1;
}

static int u32_setting(const char *v, u32 *out)
{
	u64 x;

	if (parse_u64(v, &x) || x > 0xFFFFFFFFULL)
		return -1;
	*out = (u32)x;
	return 0;
}

static int parse_group(struct sim_cfg *cfg, char **w, int nw, char *err,
		       size_t len, unsigned int line)
{
	struct sim_group_cfg g = { 0 };
	int idx, i;

	if (nw < 2)
		return fail(err, len, line, "group needs a name");
	if (strlen(w[1]) >= SIM_NAME_MAX)
		return fail(err, len, line, "group name too long");
	strcpy(g.name, w[1]);
	g.weight = IOBAND_DEFAULT_WEIGHT;
	g.pattern = SIM_IDLE;
	g.size_min = 8;
	g.size_max = 8;
	for (i = 2; i < nw; i++) {
		char *key = w[i], *val = strchr(key, '=');
		u64 x;
		int bad = 0;

		if (!strcmp(key, "idle")) {
			g.pattern = SIM_IDLE;
			continue;
		}
		if (!val)
			return fail(err, len, line, "expected key=value: %s",
				    key);
		*val++ = '\0';
		if (!strcmp(key, "weight")) {
			bad = u32_setting(val, &g.weight) ||
			      !ioband_weight_valid(g.weight);
		} else if (!strcmp(key, "closed")) {
			g.pattern = SIM_CLOSED;
			bad = u32_setting(val, &g.depth) || !g.depth;
		} else if (!strcmp(key, "rate") || !strcmp(key, "poisson")) {
			g.pattern = SIM_OPEN;
			g.poisson = key[0] == 'p';
			bad = parse_u64(val, &x) || !x || x > 1000000000ULL;
			if (!bad)
				g.interval_ns = 1000000000ULL / x;
		} else if (!strcmp(key, "writeback")) {
			g.pattern = SIM_WRITEBACK;
			bad = parse_u64(val, &g.pool_sectors) ||
			      !g.pool_sectors;
		} else if (!strcmp(key, "dirty_rate")) {
			bad = parse_u64(val, &x) || !x;
			g.dirty_rate = 2 * x;	/* KB/s to sectors/s */
		} else if (!strcmp(key, "burst")) {
			bad = parse_u64(val, &g.burst_sectors) ||
			      !g.burst_sectors;
		} else if (!strcmp(key, "gap")) {
			bad = parse_time(val, &g.gap_ns);
		} else if (!strcmp(key, "urgent")) {
			bad = u32_setting(val, &g.urgent_pct) ||
			      g.urgent_pct > 100;
		} else if (!strcmp(key, "discard")) {
			bad = u32_setting(val, &g.discard_pct) ||
			      g.discard_pct > 100;
		} else if (!strcmp(key, "size")) {
			char *dash = strchr(val, '-');

			if (dash) {
				*dash++ = '\0';
				bad = u32_setting(val, &g.size_min) ||
				      u32_setting(dash, &g.size_max) ||
				      g.size_max < g.size_min;
			} else {
				bad = u32_setting(val, &g.size_min);
				g.size_max = g.size_min;
			}
		} else if (!strcmp(key, "write")) {
			bad = u32_setting(val, &g.write_pct) ||
			      g.write_pct > 100;
		} else if (!strcmp(key, "think")) {
			bad = parse_time(val, &g.think_ns);
		} else if (!strcmp(key, "on")) {
			bad = parse_time(val, &g.on_ns);
		} else if (!strcmp(key, "off")) {
			bad = parse_time(val, &g.off_ns);
		} else if (!strcmp(key, "start")) {
			bad = parse_time(val, &g.start_ns);
		} else if (!strcmp(key, "stop")) {
			bad = parse_time(val, &g.stop_ns);
		} else if (!strcmp(key, "min")) {
			bad = u32_setting(val, &g.min_kbps);
		} else if (!strcmp(key, "max")) {
			bad = u32_setting(val, &g.max_kbps);
		} else if (!strcmp(key, "parent")) {
			g.parent = find_group(cfg, val);
			bad = g.parent <= 0;
		} else if (!strcmp(key, "lba")) {
			g.seq = !strcmp(val, "seq");
			bad = !g.seq && strcmp(val, "random");
		} else if (!strcmp(key, "region")) {
			char *plus = strchr(val, '+');

			bad = !plus;
			if (!bad) {
				*plus++ = '\0';
				bad = parse_u64(val, &g.offset) ||
				      parse_u64(plus, &g.span) || !g.span;
				g.region_set = true;
			}
		} else {
			return fail(err, len, line, "unknown group setting %s",
				    key);
		}
		if (bad)
			return fail(err, len, line, "bad value for %s: %s",
				    key, val);
	}
	if (g.off_ns && !g.on_ns)
		return fail(err, len, line, "off= needs on=");
	if (g.pattern == SIM_WRITEBACK && (g.on_ns || g.think_ns))
		return fail(err, len, line,
			    "writeback takes burst= and gap=, not on=, off= or think=");
	if (g.pattern != SIM_WRITEBACK &&
	    (g.dirty_rate || g.burst_sectors || g.gap_ns))
		return fail(err, len, line,
			    "dirty_rate=, burst= and gap= need writeback=");
	if (g.pattern == SIM_WRITEBACK && (g.urgent_pct || g.discard_pct))
		return fail(err, len, line,
			    "a flusher writes data: urgent= and discard= need a loop");
	if (g.pattern == SIM_WRITEBACK && (!g.size_min ||
					   g.pool_sectors < g.size_max))
		return fail(err, len, line,
			    "writeback needs size= from 1 and a pool of at least size=");
	if (g.max_kbps && g.min_kbps > g.max_kbps)
		return fail(err, len, line, "min above max");

	idx = find_group(cfg, g.name);
	if (idx < 0) {
		struct sim_group_cfg *groups;

		groups = realloc(cfg->groups,
				 (cfg->nr_groups + 1) * sizeof(*groups));
		if (!groups)
			return fail(err, len, line, "out of memory");
		cfg->groups = groups;
		idx = (int)cfg->nr_groups++;
	}
	cfg->groups[idx] = g;
	return 0;
}

static int parse_at(struct sim_cfg *cfg, char **w, int nw, char *err,
		    size_t len, unsigned int line)
{
	struct sim_event_cfg ev = { 0 };
	struct sim_event_cfg *events;
	int g;

	if (nw < 3 || parse_time(w[1], &ev.at_ns))
		return fail(err, len, line, "expected: at TIME WHAT ...");
	if (cfg->nr_events && ev.at_ns < cfg->events[cfg->nr_events - 1].at_ns)
		return fail(err, len, line, "events must be in time order");
	if (!strcmp(w[2], "weight") || !strcmp(w[2], "detach")) {
		g = nw > 3 ? find_group(cfg, w[3]) : -1;
		if (g < 0)
			return fail(err, len, line, "unknown group");
		ev.group = (u32)g;
		if (w[2][0] == 'd') {
			ev.kind = SIM_EV_DETACH;
			if (!g)
				return fail(err, len, line,
					    "the default group cannot be detached");
		} else {
			ev.kind = SIM_EV_WEIGHT;
			if (nw < 5 || parse_u64(w[4], &ev.value) ||
			    !ioband_weight_valid(ev.value))
				return fail(err, len, line, "bad weight");
		}
	} else if (!strcmp(w[2], "range")) {
		u64 lo, hi;

		g = nw > 3 ? find_group(cfg, w[3]) : -1;
		if (g < 0)
			return fail(err, len, line, "unknown group");
		ev.group = (u32)g;
		ev.kind = SIM_EV_RANGE;
		if (nw < 6 || parse_u64(w[4], &lo) || parse_u64(w[5], &hi) ||
		    lo > 0xFFFFFFFFULL || hi > 0xFFFFFFFFULL || (hi && lo > hi))
			return fail(err, len, line, "range NAME MIN MAX");
		ev.value = lo << 32 | hi;
	} else if (!strcmp(w[2], "passthrough")) {
		ev.kind = SIM_EV_PASSTHROUGH;
		if (nw < 4 || (strcmp(w[3], "on") && strcmp(w[3], "off")))
			return fail(err, len, line, "passthrough on|off");
		ev.value = !strcmp(w[3], "on");
	} else if (!strcmp(w[2], "policy")) {
		ev.kind = SIM_EV_POLICY;
		if (nw < 4 || parse_policy(w[3], &ev.value))
			return fail(err, len, line, "bad policy");
	} else {
		static const struct { const char *name; enum sim_event_kind k; }
		knobs[] = {
			{ "io_limit", SIM_EV_IO_LIMIT },
			{ "io_throttle", SIM_EV_IO_THROTTLE },
			{ "token_base", SIM_EV_TOKEN_BASE },
			{ "carryover", SIM_EV_CARRYOVER },
		};
		unsigned int i;

		for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
			if (!strcmp(w[2], knobs[i].name))
				break;
		if (i == sizeof(knobs) / sizeof(knobs[0]))
			return fail(err, len, line, "unknown event %s", w[2]);
		ev.kind = knobs[i].k;
		if (nw < 4 || parse_u64(w[3], &ev.value) ||
		    ev.value > 0xFFFFFFFFULL)
			return fail(err, len, line, "bad value");
	}
	events = realloc(cfg->events, (cfg->nr_events + 1) * sizeof(*events));
	if (!events)
		return fail(err, len, line, "out of memory");
	cfg->events = events;
	cfg->events[cfg->nr_events++] = ev;
	return 0;
}

static int parse_expect(struct sim_cfg *cfg, char **w, int nw, char *err,
			size_t len, unsigned int line)
{
	struct sim_expect x = { .within = 0.02 };
	struct sim_expect *expects;
	int i;

	for (i = 1; i < nw; i++) {
		char *key = w[i], *val = strchr(key, '='), *end, *r, *save;
		double v;

		if (!val)
			return fail(err, len, line, "expected key=value: %s",
				    key);
		*val++ = '\0';
		if (!strcmp(key, "within") || !strcmp(key, "utilised")) {
			v = strtod(val, &end);
			if (end == val || strcmp(end, "%") || v < 0 || v > 100)
				return fail(err, len, line,
					    "%s takes a percentage: %s", key, val);
			x.within = v / 100;
			if (key[0] == 'u')
				x.what = SIM_EXPECT_UTILISED;
		} else if (!strcmp(key, "sectors") || !strcmp(key, "tokens") ||
			   !strcmp(key, "time")) {
			x.what = key[0] == 's' ? SIM_EXPECT_SECTORS :
				 key[1] == 'o' ? SIM_EXPECT_TOKENS :
				 SIM_EXPECT_TIME;
			for (r = strtok_r(val, ":", &save); r;
			     r = strtok_r(NULL, ":", &save)) {
				v = strtod(r, &end);
				if (end == r || *end || v <= 0 ||
				    x.nr == SIM_EXPECT_MAX)
					return fail(err, len, line,
						    "bad split: %s", r);
				x.ratio[x.nr++] = v;
			}
			if (x.nr < 2)
				return fail(err, len, line,
					    "a split needs two groups or more");
		} else {
			return fail(err, len, line, "unknown expectation %s",
				    key);
		}
	}
	if (x.what != SIM_EXPECT_UTILISED && !x.nr)
		return fail(err, len, line, "expect what?");
	expects = realloc(cfg->expects,
			  (cfg->nr_expects + 1) * sizeof(*expects));
	if (!expects)
		return fail(err, len, line, "out of memory");
	cfg->expects = expects;
	cfg->expects[cfg->nr_expects++] = x;
	return 0;
}

/* order=fifo|sort: the device's service order. */
static int parse_order(const char *v, bool *sort)
{
	if (!strcmp(v, "fifo"))
		*sort = false;
	else if (!strcmp(v, "sort"))
		*sort = true;
	else
		return 1;
	return 0;
}

/* Sets *@flag; 0, so that it ends a chain of parses that failed with 1. */
static int set_flag(bool *flag)
{
	*flag = true;
	return 0;
}

static int parse_settings(struct sim_cfg *cfg, u64 *mbps, char **w, int nw,
			  char *err, size_t len, unsigned int line)
{
	int i;

	for (i = 1; i < nw; i++) {
		char *key = w[i], *val = strchr(key, '=');
		u64 x = 0;
		int bad;

		if (!val)
			return fail(err, len, line, "expected key=value: %s",
				    key);
		*val++ = '\0';
		if (!strcmp(key, "per_io"))
			bad = parse_time(val, &cfg->dev.per_io_ns);
		else if (!strcmp(key, "per_sector"))
			bad = parse_time(val, &cfg->dev.per_sector_ns);
		else if (!strcmp(key, "write_per_io"))
			bad = parse_time(val, &cfg->dev.write_per_io_ns) ||
			      set_flag(&cfg->dev.write_per_io_set);
		else if (!strcmp(key, "write_per_sector"))
			bad = parse_time(val, &cfg->dev.write_per_sector_ns) ||
			      set_flag(&cfg->dev.write_per_sector_set);
		else if (!strcmp(key, "depth"))
			bad = u32_setting(val, &cfg->dev.depth) ||
			      !cfg->dev.depth;
		else if (!strcmp(key, "mbps"))
			bad = parse_u64(val, mbps) || !*mbps ||
			      *mbps > 1000000;
		else if (!strcmp(key, "budget"))
			bad = parse_u64(val, &cfg->dev.budget_bytes) ||
			      !cfg->dev.budget_bytes ||
			      cfg->dev.budget_bytes > (1ULL << 40);
		else if (!strcmp(key, "tick"))
			bad = parse_time(val, &cfg->dev.tick_ns) ||
			      !cfg->dev.tick_ns;
		else if (!strcmp(key, "seek"))
			bad = parse_time(val, &cfg->dev.seek_ns);
		else if (!strcmp(key, "stroke"))
			bad = parse_time(val, &cfg->dev.stroke_ns);
		else if (!strcmp(key, "size"))
			bad = parse_u64(val, &cfg->dev.size_sectors) ||
			      !cfg->dev.size_sectors ||
			      cfg->dev.size_sectors > (1ULL << 40);
		else if (!strcmp(key, "jitter"))
			bad = u32_setting(val, &cfg->dev.jitter_pct) ||
			      cfg->dev.jitter_pct > 99;
		else if (!strcmp(key, "order"))
			bad = parse_order(val, &cfg->dev.sort);
		else if (!strcmp(key, "lag"))
			bad = parse_time(val, &cfg->dev.lag_ns) ||
			      cfg->dev.lag_ns > 1000000000ULL;
		else if (!strcmp(key, "policy"))
			bad = parse_policy(val, &x);
		else if (!strcmp(key, "token_base"))
			bad = u32_setting(val, &cfg->params.token_base);
		else if (!strcmp(key, "io_throttle"))
			bad = u32_setting(val, &cfg->params.io_throttle);
		else if (!strcmp(key, "io_limit"))
			bad = u32_setting(val, &cfg->params.io_limit);
		else if (!strcmp(key, "carryover"))
			bad = u32_setting(val, &cfg->params.carryover);
		else if (!strcmp(key, "duration"))
			bad = parse_time(val, &cfg->duration_ns);
		else if (!strcmp(key, "warmup"))
			bad = parse_time(val, &cfg->warmup_ns);
		else if (!strcmp(key, "seed"))
			bad = parse_u64(val, &cfg->seed);
		else if (!strcmp(key, "vtime_start"))
			bad = parse_u64(val, &cfg->vtime_start);
		else
			return fail(err, len, line, "unknown setting %s", key);
		if (bad)
			return fail(err, len, line, "bad value for %s: %s",
				    key, val);
		if (!strcmp(key, "policy"))
			cfg->params.policy = (enum ioband_policy)x;
	}
	return 0;
}

int sim_parse(FILE *in, struct sim_cfg *cfg, char *err, size_t len)
{
	char buf[1024];
	unsigned int line = 0;
	u64 mbps = 0;
	u32 i;

	sim_cfg_init(cfg);
	while (fgets(buf, sizeof(buf), in)) {
		char *w[MAX_WORDS], *hash, *tok, *save;
		int nw = 0, rc;

		line++;
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		for (tok = strtok_r(buf, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (nw == MAX_WORDS)
				return fail(err, len, line, "too many words");
			w[nw++] = tok;
		}
		if (!nw)
			continue;
		if (!strcmp(w[0], "device") || !strcmp(w[0], "sched") ||
		    !strcmp(w[0], "run"))
			rc = parse_settings(cfg, &mbps, w, nw, err, len, line);
		else if (!strcmp(w[0], "group"))
			rc = parse_group(cfg, w, nw, err, len, line);
		else if (!strcmp(w[0], "at"))
			rc = parse_at(cfg, w, nw, err, len, line);
		else if (!strcmp(w[0], "expect"))
			rc = parse_expect(cfg, w, nw, err, len, line);
		else
			rc = fail(err, len, line, "unknown statement %s", w[0]);
		if (rc)
			return rc;
	}
	if (mbps && cfg->dev.budget_bytes)
		return fail(err, len, line, "mbps= or budget=, not both");
	/* null_blk: mb_per_tick = (1 << 20) / TICKS_PER_SEC * mbps */
	if (mbps)
		cfg->dev.budget_bytes = (1048576ULL * cfg->dev.tick_ns /
					 1000000000ULL) * mbps;
	if (mbps && !cfg->dev.budget_bytes)
		return fail(err, len, line, "tick too short for mbps=");
	for (i = 0; i < cfg->nr_groups; i++) {
		u64 offset, span;

		sim_group_region(cfg, i, &offset, &span);
		if (cfg->dev.seek_ns && offset + span > cfg->dev.size_sectors)
			return fail(err, len, line,
				    "group %s: region beyond the device's size=",
				    cfg->groups[i].name);
	}
	if (!ioband_sched_params_valid(&cfg->params))
		return fail(err, len, line, "sched settings out of range");
	if (cfg->warmup_ns >= cfg->duration_ns)
		return fail(err, len, line, "warmup must be below duration");
	return 0;
}
