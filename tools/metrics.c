// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Metrics of ioband devices, named as Prometheus asks
 * (https://prometheus.io/docs/practices/naming/): a prefix per record
 * (ioband_group_, ioband_domain_), base units (bytes, seconds), counters
 * ending in _total. Every group sample has the labels device, group (its
 * name as stat prints it, <default> for the default group) and id (-1 for
 * the default group); domain samples have device and domain. Counters
 * only grow until "iobandctl reset": a collector's rate() sees a reset as
 * a counter reset.
 *
 * Group metrics come from the parsed counters; domain metrics from the
 * domain record's fields by key, one line of domain_metrics[] each, so a
 * field a newer kernel adds needs one line here. A domain field whose
 * value is not a number (policy, say) is a label of ioband_domain_info.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "metrics.h"

enum {
	NEED_SCHED = 1,		/* only the stats message gives it */
	NEED_WEIGHT = 2,	/* 0: the group lost its weight */
	NEED_RANGE = 4,		/* range policies */
	NEED_LIMIT = 8,		/* range policies, max set (0: no limit) */
	NEED_WRITEBACK = 16,	/* a kernel that waits for writeback */
	NEED_OPEN = 32,		/* a module that counts untimed IOs */
};

struct group_metric {
	const char *name;	/* the family; a counter's samples add _total */
	int counter;
	size_t offset;		/* of a uint64_t in struct ioband_stats_group */
	unsigned int scale;	/* to the base unit: x 512, 1024, or ns -> s */
	int needs;
	const char *help;
};

#define SCALE_NS	0	/* nanoseconds, written as seconds */
#define GROUP(field)	offsetof(struct ioband_stats_group, field)

static const struct group_metric group_metrics[] = {
	{ "ioband_group_read_bytes", 1, GROUP(read_sectors), 512, 0,
	  "Bytes read through ioband by the group." },
	{ "ioband_group_write_bytes", 1, GROUP(write_sectors), 512, 0,
	  "Bytes written through ioband by the group." },
	{ "ioband_group_read_ios", 1, GROUP(reads), 1, 0,
	  "Reads of the group." },
	{ "ioband_group_write_ios", 1, GROUP(writes), 1, 0,
	  "Writes of the group." },
	{ "ioband_group_delayed_read_ios", 1, GROUP(delayed_reads), 1, 0,
	  "Reads of the group that waited in ioband for their turn." },
	{ "ioband_group_delayed_write_ios", 1, GROUP(delayed_writes), 1, 0,
	  "Writes of the group that waited in ioband for their turn." },
	{ "ioband_group_wait_seconds", 1, GROUP(wait_ns), SCALE_NS, NEED_SCHED,
	  "Time the group's IOs waited in ioband, summed over IOs." },
	{ "ioband_group_device_seconds", 1, GROUP(service_ns), SCALE_NS,
	  NEED_SCHED,
	  "Time the group's IOs spent below ioband (dispatch to completion), summed over the IOs timed (all but ioband_group_open_ios)." },
	{ "ioband_group_open_ios", 1, GROUP(open_ios), 1,
	  NEED_SCHED | NEED_OPEN,
	  "IOs of the group that went down past ioband's scheduler while the device completed every IO inline; counted in the IOs, not in the device seconds." },
	{ "ioband_group_wait_max_seconds", 0, GROUP(wait_max_ns), SCALE_NS,
	  NEED_SCHED,
	  "Longest time one IO of the group waited in ioband since the counters started." },
	{ "ioband_group_queued_ios", 0, GROUP(queued), 1, NEED_SCHED,
	  "IOs of the group held in ioband now." },
	{ "ioband_group_in_flight_ios", 0, GROUP(in_flight), 1, NEED_SCHED,
	  "IOs of the group dispatched below and not completed now." },
	{ "ioband_group_writeback_waits", 1, GROUP(writeback_waits), 1,
	  NEED_SCHED | NEED_WRITEBACK,
	  "Times the group's flusher waited for the group's held writeback." },
	{ "ioband_group_writeback_wait_seconds", 1, GROUP(writeback_wait_ns),
	  SCALE_NS, NEED_SCHED | NEED_WRITEBACK,
	  "Time the group's flusher waited for the group's held writeback." },
	{ "ioband_group_weight", 0, GROUP(weight), 1, NEED_WEIGHT,
	  "Weight of the group." },
	{ "ioband_group_min_bytes_per_second", 0, GROUP(min_kbps), 1024,
	  NEED_RANGE, "Bandwidth reserved for the group (range policies)." },
	{ "ioband_group_max_bytes_per_second", 0, GROUP(max_kbps), 1024,
	  NEED_LIMIT,
	  "Bandwidth limit of the group (range policies); absent: no limit." },
};

struct domain_metric {
	const char *key;	/* of the stats message's domain record */
	const char *name;
	int counter;
	unsigned int scale;
	const char *help;
};

/* One line a field. */
static const struct domain_metric domain_metrics[] = {
	{ "in_flight", "ioband_domain_in_flight_ios", 0, 1,
	  "IOs of the domain dispatched below and not completed now." },
	{ "queued", "ioband_domain_queued_ios", 0, 1,
	  "IOs of the domain held in ioband now." },
	{ "io_limit", "ioband_domain_io_limit", 0, 1,
	  "Cap on the IOs in flight below (0: none, the window alone)." },
	{ "io_throttle", "ioband_domain_io_throttle", 0, 1,
	  "Kept from dm-ioband: checked against io_limit, reported only." },
	{ "token_base", "ioband_domain_token_base", 0, 1,
	  "Tokens of an epoch (0: the default)." },
	{ "carryover", "ioband_domain_carryover", 0, 1,
	  "Epochs of unused share an idle group keeps." },
	{ "elapsed_ns", "ioband_domain_elapsed_seconds", 0, SCALE_NS,
	  "Time since the counters started or were reset." },
	{ "window_sectors", "ioband_domain_window_bytes", 0, 512,
	  "Dispatch window: the most in flight below ioband now." },
	{ "in_flight_sectors", "ioband_domain_in_flight_bytes", 0, 512,
	  "Bytes of the domain dispatched below and not completed now." },
	{ "window_rate_kbps", "ioband_domain_window_rate_bytes_per_second", 0,
	  1024, "Device rate the window is sized from (best recent period)." },
	{ "window_min_lat_ns", "ioband_domain_window_min_latency_seconds", 0,
	  SCALE_NS, "Least completion latency the window is sized from." },
	{ "window_full", "ioband_domain_window_full", 1, 1,
	  "Times a bio was held because the window was full." },
	{ "idle_waits", "ioband_domain_idle_waits", 1, 1,
	  "Times the dispatcher waited for a competing group's next bio." },
	{ "urgent", "ioband_domain_urgent_ios", 1, 1,
	  "IOs sent down at once as urgent (metadata, swap, journal)." },
	{ "window_queueing_pct", "ioband_domain_window_queueing_percent", 0, 1,
	  "Latency over least latency in the latest period (100: no queue)." },
	{ "window_inline", "ioband_domain_window_inline", 0, 1,
	  "1: the device completes IOs in the submitting task; no window." },
	{ "window_inline_closes", "ioband_domain_window_inline_closes", 1, 1,
	  "Times a completion from elsewhere closed the inline window." },
	{ "overdue", "ioband_domain_overdue_ios", 1, 1,
	  "IOs below so long that they stopped counting against the window." },
	{ "overdue_in_flight", "ioband_domain_overdue_in_flight_ios", 0, 1,
	  "IOs below now that no longer count against the window (overdue)." },
	{ "overdue_after_ns", "ioband_domain_overdue_after_seconds", 0, SCALE_NS,
	  "How long below makes an IO overdue (64 mean latencies, >= 1 s)." },
	{ "open_in_flight", "ioband_domain_open_in_flight_ios", 0, 1,
	  "IOs below now that went down past the scheduler (open window)." },
	{ "open_in_flight_sectors", "ioband_domain_open_in_flight_bytes", 0, 512,
	  "Bytes below now that went down past the scheduler (open window)." },
	{ "writeback_hold_sectors", "ioband_domain_writeback_hold_bytes", 0, 512,
	  "Writeback a group may hold before its flusher waits." },
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

int metrics_parse_format(const char *name)
{
	if (!strcmp(name, "prometheus"))
		return METRICS_PROMETHEUS;
	if (!strcmp(name, "openmetrics"))
		return METRICS_OPENMETRICS;
	return -1;
}

/* A label value: backslash, double quote and newline escaped. */
static void put_label_value(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

/* A value in the base unit: exact decimals, seconds from nanoseconds. */
static void put_value(FILE *out, uint64_t v, unsigned int scale)
{
	if (scale == SCALE_NS)
		fprintf(out, "%llu.%09llu", (unsigned long long)(v / 1000000000),
			(unsigned long long)(v % 1000000000));
	else if (v > UINT64_MAX / scale)
		fprintf(out, "%.17g", (double)v * scale);
	else
		fprintf(out, "%llu", (unsigned long long)(v * scale));
}

enum { GAUGE, COUNTER, INFO };

/*
 * HELP and TYPE of a family. The text format names a family as its
 * samples are named; OpenMetrics names it without the sample's _total
 * (counter) or _info (info) suffix.
 */
static void put_family(FILE *out, enum metrics_format format,
		       const char *name, int kind, const char *help)
{
	static const char *const types[] = { "gauge", "counter", "info" };
	const char *suffix = "";
	size_t len = strlen(name);

	if (format == METRICS_PROMETHEUS && kind == COUNTER)
		suffix = "_total";
	if (format == METRICS_OPENMETRICS && kind == INFO)
		len -= strlen("_info");
	fprintf(out, "# HELP %.*s%s %s\n", (int)len, name, suffix, help);
	fprintf(out, "# TYPE %.*s%s %s\n", (int)len, name, suffix,
		format == METRICS_PROMETHEUS && kind == INFO ? "gauge" :
							      types[kind]);
}

static int group_has(const struct ioband_stats *st,
		     const struct ioband_stats_group *g, int needs)
{
	if ((needs & NEED_SCHED) && !st->has_sched)
		return 0;
	if ((needs & NEED_WEIGHT) && !g->weight)
		return 0;
	if ((needs & (NEED_RANGE | NEED_LIMIT)) && !g->has_range)
		return 0;
	if ((needs & NEED_WRITEBACK) && !g->has_writeback)
		return 0;
	if ((needs & NEED_OPEN) && !g->has_open)
		return 0;
	return !(needs & NEED_LIMIT) || g->max_kbps;
}

static void put_group_labels(FILE *out, const struct metrics_device *d,
			     size_t i)
{
	const struct ioband_stats_group *g = &d->stats->groups[i];

	fputs("{device=\"", out);
	put_label_value(out, d->name);
	fputs("\",group=\"", out);
	if (g->is_default)
		fputs("<default>", out);
	else if (d->group_names && d->group_names[i])
		put_label_value(out, d->group_names[i]);
	else
		fprintf(out, "%llu", (unsigned long long)g->id);
	if (g->is_default)
		fputs("\",id=\"-1\"}", out);
	else
		fprintf(out, "\",id=\"%llu\"}", (unsigned long long)g->id);
}

static void put_group_metric(FILE *out, enum metrics_format format,
			     const struct group_metric *m,
			     const struct metrics_device *devs, size_t n)
{
	int header = 0;
	size_t d, i;

	for (d = 0; d < n; d++) {
		const struct ioband_stats *st = devs[d].stats;

		for (i = 0; i < st->nr_groups; i++) {
			const struct ioband_stats_group *g = &st->groups[i];

			if (!group_has(st, g, m->needs))
				continue;
			if (!header++)
				put_family(out, format, m->name,
					   m->counter ? COUNTER : GAUGE, m->help);
			fprintf(out, "%s%s", m->name, m->counter ? "_total" : "");
			put_group_labels(out, &devs[d], i);
			fputc(' ', out);
			put_value(out, *(const uint64_t *)((const char *)g +
							    m->offset),
				  m->scale);
			fputc('\n', out);
		}
	}
}

static void put_domain_labels(FILE *out, const struct metrics_device *d)
{
	fputs("{device=\"", out);
	put_label_value(out, d->name);
	fputs("\",domain=\"", out);
	put_label_value(out, d->stats->domain);
	fputc('"', out);
}

static void put_domain_metric(FILE *out, enum metrics_format format,
			      const struct domain_metric *m,
			      const struct metrics_device *devs, size_t n)
{
	int header = 0;
	uint64_t v;
	size_t d;

	for (d = 0; d < n; d++) {
		const struct ioband_stats *st = devs[d].stats;

		if (!ioband_stats_number(ioband_stats_field(st->fields, st->nr_fields,
						     m->key), &v))
			continue;
		if (!header++)
			put_family(out, format, m->name,
				   m->counter ? COUNTER : GAUGE, m->help);
		fprintf(out, "%s%s", m->name, m->counter ? "_total" : "");
		put_domain_labels(out, &devs[d]);
		fputs("} ", out);
		put_value(out, v, m->scale);
		fputc('\n', out);
	}
}

/*
 * ioband_attributed_bios_total: the domain's bios by the route that
 * charged them (the stats message's attributed_<route> fields), a sample
 * per route a module gives; an older module, none.
 */
static void put_attributed(FILE *out, enum metrics_format format,
			   const struct metrics_device *devs, size_t n)
{
	static const struct {
		const char *key;
		const char *route;
	} routes[] = {
		{ "attributed_orig_bio", "orig_bio" },
		{ "attributed_wb",       "wb" },
		{ "attributed_task",     "task" },
	};
	int header = 0;
	uint64_t v;
	size_t d, i;

	for (d = 0; d < n; d++) {
		const struct ioband_stats *st = devs[d].stats;

		for (i = 0; i < ARRAY_LEN(routes); i++) {
			if (!ioband_stats_number(ioband_stats_field(st->fields,
							     st->nr_fields,
							     routes[i].key), &v))
				continue;
			if (!header++)
				put_family(out, format, "ioband_attributed_bios",
					   COUNTER, "Bios of the domain by the route that charged them to a group: orig_bio (the bio the write came from), wb (the writeback's cgroup), task (the submitting task).");
			fputs("ioband_attributed_bios_total", out);
			put_domain_labels(out, &devs[d]);
			fprintf(out, ",route=\"%s\"} %llu\n", routes[i].route,
				(unsigned long long)v);
		}
	}
}

/* A label name as Prometheus takes them: [a-zA-Z_][a-zA-Z0-9_]*. */
static int label_name_valid(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* ioband_domain_info: the domain's words (policy, ...) as labels. */
static void put_domain_info(FILE *out, enum metrics_format format,
			    const struct metrics_device *devs, size_t n)
{
	size_t d, i;
	uint64_t v;

	put_family(out, format, "ioband_domain_info", INFO,
		   "The domain's settings that are words, as labels; always 1.");
	for (d = 0; d < n; d++) {
		const struct ioband_stats *st = devs[d].stats;

		fputs("ioband_domain_info", out);
		put_domain_labels(out, &devs[d]);
		/* An older module's status line gives no fields. */
		if (!ioband_stats_field(st->fields, st->nr_fields, "policy")) {
			fputs(",policy=\"", out);
			put_label_value(out, st->policy);
			fputc('"', out);
		}
		for (i = 0; i < st->nr_fields; i++) {
			const struct ioband_stats_field *f = &st->fields[i];

			if (!strcmp(f->key, "domain") || !strcmp(f->key, "device") ||
			    ioband_stats_number(f->value, &v) || !label_name_valid(f->key))
				continue;
			fprintf(out, ",%s=\"", f->key);
			put_label_value(out, f->value);
			fputc('"', out);
		}
		fputs("} 1\n", out);
	}
}

int metrics_write(FILE *out, enum metrics_format format,
		  const struct metrics_device *devs, size_t n)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(group_metrics); i++)
		put_group_metric(out, format, &group_metrics[i], devs, n);
	for (i = 0; i < ARRAY_LEN(domain_metrics); i++)
		put_domain_metric(out, format, &domain_metrics[i], devs, n);
	put_attributed(out, format, devs, n);
	if (n)
		put_domain_info(out, format, devs, n);
	if (format == METRICS_OPENMETRICS)
		fputs("# EOF\n", out);
	return ferror(out) ? -EIO : 0;
}
