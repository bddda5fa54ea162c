// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobandctl's JSON, schema 1 (see schema.h and iobandctl(8), JSON OUTPUT).
 * A small writer: members are written in the order the schema lists them,
 * two spaces an indent, every object's keys always there (null when not
 * known).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"

#define MAX_DEPTH	8

struct jw {
	FILE *out;
	int depth;
	int count[MAX_DEPTH];	/* members written at each depth */
};

static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* The comma, newline and indent before a member; its key, if any. */
static void jw_key(struct jw *w, const char *key)
{
	if (w->count[w->depth]++)
		fputc(',', w->out);
	fprintf(w->out, "\n%*s", 2 * w->depth, "");
	if (key) {
		put_string(w->out, key);
		fputs(": ", w->out);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	if (w->depth)
		jw_key(w, key);
	fputc(c, w->out);
	if (w->depth + 1 < MAX_DEPTH)
		w->count[++w->depth] = 0;
}

static void jw_close(struct jw *w, char c)
{
	if (w->count[w->depth])
		fprintf(w->out, "\n%*s", 2 * (w->depth - 1), "");
	fputc(c, w->out);
	w->depth--;
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s)
		put_string(w->out, s);
	else
		fputs("null", w->out);
}

static void jw_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	fputs("null", w->out);
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	fprintf(w->out, "%" PRIu64, v);
}

/* @v if @known, else null. */
static void jw_u64_if(struct jw *w, const char *key, int known, uint64_t v)
{
	if (known)
		jw_u64(w, key, v);
	else
		jw_null(w, key);
}

static void jw_double_if(struct jw *w, const char *key, int known,
			 const char *fmt, double v)
{
	jw_key(w, key);
	if (known)
		fprintf(w->out, fmt, v);
	else
		fputs("null", w->out);
}

static void jw_bool(struct jw *w, const char *key, int v)
{
	jw_key(w, key);
	fputs(v ? "true" : "false", w->out);
}

static void jw_begin(struct jw *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	jw_open(w, NULL, '{');
	jw_u64(w, "schema", IOBAND_JSON_SCHEMA);
}

static int jw_end(struct jw *w)
{
	jw_close(w, '}');
	fputc('\n', w->out);
	return ferror(w->out) ? -EIO : 0;
}

/*
 * A field of a stats record the schema names: its key in the record, its
 * name in the JSON, the factor to the unit the name says.
 */
struct named_field {
	const char *key;
	const char *name;
	unsigned int scale;
};

/* The domain record's numbers besides those struct ioband_stats holds. */
static const struct named_field domain_extra[] = {
	{ "epoch_tokens",           "epoch_tokens",         1 },
	{ "idle_waits",             "idle_waits",           1 },
	{ "urgent",                 "urgent_ios",           1 },
	{ "writeback_hold_sectors", "writeback_hold_bytes", 512 },
	{ "open_in_flight",         "open_in_flight_ios",   1 },
	{ "open_in_flight_sectors", "open_in_flight_bytes", 512 },
};

static const struct named_field window_fields[] = {
	{ "window_sectors",       "bytes",                 512 },
	{ "in_flight_sectors",    "in_flight_bytes",       512 },
	{ "window_rate_kbps",     "rate_bytes_per_second", 1024 },
	{ "window_min_lat_ns",    "min_latency_ns",        1 },
	{ "window_queueing_pct",  "queueing_pct",          1 },
	{ "window_full",          "full_waits",            1 },
	{ "window_inline_closes", "inline_closes",         1 },
	{ "overdue",              "overdue_ios",           1 },
	{ "overdue_in_flight",    "overdue_in_flight_ios", 1 },
	{ "overdue_after_ns",     "overdue_after_ns",      1 },
};

/* weight-time's model of the device (the module's time_* fields). */
static const struct named_field time_fields[] = {
	{ "time_read_io_ns",               "read_io_ns",               1 },
	{ "time_read_sector_ps",           "read_sector_ps",           1 },
	{ "time_write_io_ns",              "write_io_ns",              1 },
	{ "time_write_sector_ps",          "write_sector_ps",          1 },
	{ "time_read_io_cost_milli",       "read_io_cost_milli",       1 },
	{ "time_read_sector_cost_milli",   "read_sector_cost_milli",   1 },
	{ "time_write_io_cost_milli",      "write_io_cost_milli",      1 },
	{ "time_write_sector_cost_milli",  "write_sector_cost_milli",  1 },
	{ "time_unit_ps",                  "unit_ps",                  1 },
	{ "time_busy_pct",                 "busy_pct",                 1 },
	{ "time_periods",                  "periods",                  1 },
	{ "time_window_items",             "window_ios",               1 },
};

static const struct named_field attribution_fields[] = {
	{ "attributed_orig_bio", "bios_orig_bio", 1 },
	{ "attributed_wb",       "bios_wb",       1 },
	{ "attributed_task",     "bios_task",     1 },
};

/* Keys of the domain record the schema names elsewhere. */
static const char *const domain_known[] = {
	"domain", "policy", "token_base", "io_throttle", "io_limit",
	"carryover", "in_flight", "queued", "elapsed_ns", "window_inline",
	"writeback_attribution", "dm_layout", "time_rate_limited",
	"time_read_least", "time_write_least", NULL
};

/* Keys of a group record the schema names. */
static const char *const group_known[] = {
	"group", "weight", "reads", "read_sectors", "writes", "write_sectors",
	"delayed_reads", "delayed_writes", "queued", "in_flight", "wait_ns",
	"wait_max_ns", "service_ns", "min_kbps", "max_kbps", "writeback_waits",
	"writeback_wait_ns", "open_ios", "parent", NULL
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static const char *field(const struct ioband_stats *st, const char *key)
{
	return ioband_stats_field(st->fields, st->nr_fields, key);
}

static void jw_named(struct jw *w, const struct ioband_stats *st,
		     const struct named_field *f)
{
	uint64_t v;

	if (ioband_stats_number(field(st, f->key), &v) && v <= UINT64_MAX / f->scale)
		jw_u64(w, f->name, v * f->scale);
	else
		jw_null(w, f->name);
}

static int is_known(const char *key, const char *const *known,
		    const struct named_field *named, size_t nnamed)
{
	size_t i;

	for (i = 0; known[i]; i++)
		if (!strcmp(key, known[i]))
			return 1;
	for (i = 0; i < nnamed; i++)
		if (!strcmp(key, named[i].key))
			return 1;
	return 0;
}

static int domain_is_known(const char *key)
{
	return is_known(key, domain_known, domain_extra, ARRAY_LEN(domain_extra)) ||
	       is_known(key, domain_known, window_fields, ARRAY_LEN(window_fields)) ||
	       is_known(key, domain_known, attribution_fields,
			ARRAY_LEN(attribution_fields)) ||
	       is_known(key, domain_known, time_fields, ARRAY_LEN(time_fields));
}

/* "module": the fields the schema does not name, numbers as numbers. */
static void jw_module(struct jw *w, const struct ioband_stats_field *fields,
		      size_t n, int (*known)(const char *key))
{
	uint64_t v;
	size_t i;

	jw_open(w, "module", '{');
	for (i = 0; i < n; i++) {
		if (known(fields[i].key))
			continue;
		if (ioband_stats_number(fields[i].value, &v))
			jw_u64(w, fields[i].key, v);
		else
			jw_str(w, fields[i].key, fields[i].value);
	}
	jw_close(w, '}');
}

/*
 * A size class list of the module, "SECTORS:NS/SECTORS:NS" ("-": none),
 * as [{"bytes": B, "least_latency_ns": N}, ...]; null if it is not one.
 */
static void jw_least(struct jw *w, const char *key, const char *list)
{
	unsigned long long sectors, ns;
	const char *p = list;
	int n;

	if (!list || (strcmp(list, "-") &&
		      sscanf(list, "%llu:%llu%n", &sectors, &ns, &n) != 2)) {
		jw_null(w, key);
		return;
	}
	jw_open(w, key, '[');
	while (strcmp(p, "-") && sscanf(p, "%llu:%llu%n", &sectors, &ns, &n) == 2) {
		jw_open(w, NULL, '{');
		jw_u64(w, "bytes", (uint64_t)sectors * 512);
		jw_u64(w, "least_latency_ns", ns);
		jw_close(w, '}');
		p += n;
		if (*p != '/')
			break;
		p++;
	}
	jw_close(w, ']');
}

/*
 * "time_model": weight-time's model of the device (section 18 of
 * ioband-design.rst), or null from a module without one.
 */
static void write_time_model(struct jw *w, const struct ioband_stats *st)
{
	const char *limited = field(st, "time_rate_limited");
	size_t i;

	if (!field(st, "time_periods")) {
		jw_null(w, "time_model");
		return;
	}
	jw_open(w, "time_model", '{');
	if (limited)
		jw_bool(w, "rate_limited", !strcmp(limited, "1"));
	else
		jw_null(w, "rate_limited");
	for (i = 0; i < ARRAY_LEN(time_fields); i++)
		jw_named(w, st, &time_fields[i]);
	jw_least(w, "read_least", field(st, "time_read_least"));
	jw_least(w, "write_least", field(st, "time_write_least"));
	jw_close(w, '}');
}

static int group_is_known(const char *key)
{
	return is_known(key, group_known, NULL, 0);
}

static void write_group(struct jw *w, const struct schema_device *d, size_t i)
{
	const struct ioband_stats *st = d->stats;
	const struct ioband_stats_group *g = &st->groups[i];
	const struct ioband_rates *rt = &d->rates[i];
	int sched = st->has_sched;

	jw_open(w, NULL, '{');
	if (g->is_default)
		jw_str(w, "group", "<default>");
	else if (d->group_names && d->group_names[i])
		jw_str(w, "group", d->group_names[i]);
	else
		jw_null(w, "group");
	jw_key(w, "id");
	if (g->is_default)
		fputs("-1", w->out);
	else
		fprintf(w->out, "%" PRIu64, g->id);
	jw_u64_if(w, "weight", g->weight != 0, g->weight);
	jw_u64_if(w, "min_bytes_per_second", g->has_range, g->min_kbps * 1024);
	jw_u64_if(w, "max_bytes_per_second", g->has_range, g->max_kbps * 1024);
	jw_double_if(w, "share_pct", rt->has_share, "%.1f", rt->share * 100);
	jw_double_if(w, "iops", rt->has_rate, "%.1f", rt->iops);
	jw_double_if(w, "bytes_per_second", rt->has_rate, "%.0f",
		     rt->bytes_per_sec);
	jw_u64(w, "delayed_ios", rt->delayed);
	jw_u64(w, "read_ios", g->reads);
	jw_u64(w, "write_ios", g->writes);
	jw_u64(w, "read_bytes", g->read_sectors * 512);
	jw_u64(w, "write_bytes", g->write_sectors * 512);
	jw_u64(w, "delayed_read_ios", g->delayed_reads);
	jw_u64(w, "delayed_write_ios", g->delayed_writes);
	jw_u64_if(w, "queued_ios", sched, g->queued);
	jw_u64_if(w, "in_flight_ios", sched, g->in_flight);
	jw_u64_if(w, "open_ios", sched && g->has_open, g->open_ios);
	jw_u64_if(w, "parent_id", g->has_parent && g->parent, g->parent);
	jw_u64_if(w, "wait_ns", sched, g->wait_ns);
	jw_u64_if(w, "wait_max_ns", sched, g->wait_max_ns);
	jw_u64_if(w, "service_ns", sched, g->service_ns);
	jw_double_if(w, "wait_mean_ns", rt->has_wait, "%.0f", rt->wait_mean_ns);
	jw_double_if(w, "service_mean_ns", rt->has_service, "%.0f",
		     rt->service_mean_ns);
	jw_u64_if(w, "writeback_waits", g->has_writeback, g->writeback_waits);
	jw_u64_if(w, "writeback_wait_ns", g->has_writeback,
		  g->writeback_wait_ns);
	jw_module(w, g->fields, g->nr_fields, group_is_known);
	jw_close(w, '}');
}

static void write_device(struct jw *w, const struct schema_device *d)
{
	const struct ioband_stats *st = d->stats;
	const char *inl = field(st, "window_inline");
	size_t i;

	jw_open(w, NULL, '{');
	jw_str(w, "name", d->name);
	jw_str(w, "domain", st->domain);
	jw_str(w, "policy", st->policy);
	jw_u64(w, "token_base", st->token_base);
	jw_u64(w, "io_throttle", st->io_throttle);
	jw_u64(w, "io_limit", st->io_limit);
	jw_u64(w, "carryover", st->carryover);
	jw_u64_if(w, "in_flight_ios", st->has_sched, st->in_flight);
	jw_u64_if(w, "queued_ios", st->has_sched, st->queued);
	jw_u64_if(w, "elapsed_ns", st->has_elapsed, st->elapsed_ns);
	for (i = 0; i < ARRAY_LEN(domain_extra); i++)
		jw_named(w, st, &domain_extra[i]);

	jw_open(w, "window", '{');
	if (inl)
		jw_bool(w, "inline", !strcmp(inl, "1"));
	else
		jw_null(w, "inline");
	for (i = 0; i < ARRAY_LEN(window_fields); i++)
		jw_named(w, st, &window_fields[i]);
	jw_close(w, '}');

	jw_open(w, "attribution", '{');
	jw_str(w, "route", field(st, "writeback_attribution"));
	jw_str(w, "dm_layout", field(st, "dm_layout"));
	for (i = 0; i < ARRAY_LEN(attribution_fields); i++)
		jw_named(w, st, &attribution_fields[i]);
	jw_close(w, '}');

	write_time_model(w, st);
	jw_module(w, st->fields, st->nr_fields, domain_is_known);
	jw_open(w, "groups", '[');
	for (i = 0; i < st->nr_groups; i++)
		write_group(w, d, i);
	jw_close(w, ']');
	jw_close(w, '}');
}

int schema_write_stats(FILE *out, const struct schema_device *devs, size_t n)
{
	struct jw w;
	size_t i;

	jw_begin(&w, out);
	jw_open(&w, "devices", '[');
	for (i = 0; i < n; i++)
		write_device(&w, &devs[i]);
	jw_close(&w, ']');
	return jw_end(&w);
}

int schema_write_list(FILE *out, const struct schema_list_entry *devs, size_t n)
{
	struct jw w;
	size_t i;

	jw_begin(&w, out);
	jw_open(&w, "devices", '[');
	for (i = 0; i < n; i++) {
		const struct ioband_table_args *t = devs[i].table;

		jw_open(&w, NULL, '{');
		jw_str(&w, "name", devs[i].name);
		jw_str(&w, "domain", t->domain);
		jw_str(&w, "policy", t->policy);
		jw_str(&w, "group_type", t->group_type);
		jw_u64(&w, "nr_groups", t->nr_weights);
		jw_str(&w, "device", devs[i].device);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	return jw_end(&w);
}

/* A group's spec: what the policy takes, the rest null; max 0: no limit. */
static void write_spec(struct jw *w, enum ioband_spec spec,
		       const struct ioband_group_spec *g)
{
	int range = spec != IOBAND_SPEC_WEIGHT;

	jw_u64_if(w, "weight", spec != IOBAND_SPEC_RANGE, g->weight);
	jw_u64_if(w, "min_bytes_per_second", range, (uint64_t)g->min_kbps * 1024);
	jw_u64_if(w, "max_bytes_per_second", range, (uint64_t)g->max_kbps * 1024);
}

int schema_write_table(FILE *out, const char *name, uint64_t sectors,
		       const struct ioband_table_args *t, const char *device,
		       char *const *names)
{
	enum ioband_spec spec = ioband_spec_of_policy(t->policy);
	struct ioband_group_spec g;
	struct jw w;
	size_t i;

	jw_begin(&w, out);
	jw_open(&w, "table", '{');
	jw_str(&w, "name", name);
	jw_u64(&w, "start_sector", 0);
	jw_u64(&w, "sectors", sectors);
	jw_str(&w, "target", IOBAND_TARGET_NAME);
	jw_str(&w, "device", device);
	jw_str(&w, "domain", t->domain);
	jw_u64(&w, "io_throttle", t->io_throttle);
	jw_u64(&w, "io_limit", t->io_limit);
	jw_str(&w, "group_type", t->group_type);
	jw_str(&w, "policy", t->policy);
	jw_u64(&w, "token_base", t->token_base);
	jw_open(&w, "default", '{');
	ioband_table_default_spec(t, &g);
	write_spec(&w, spec, &g);
	jw_close(&w, '}');
	jw_open(&w, "groups", '[');
	for (i = 0; i < t->nr_weights; i++) {
		jw_open(&w, NULL, '{');
		jw_str(&w, "group", names ? names[i] : NULL);
		jw_u64(&w, "id", t->weights[i].id);
		ioband_group_to_spec(&t->weights[i], &g);
		write_spec(&w, spec, &g);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_close(&w, '}');
	return jw_end(&w);
}
