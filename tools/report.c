// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libsmartcols tables for iobandctl, in the manner of util-linux
 * (misc-utils/fincore.c): a colinfo array, -o columns, --raw. A value
 * that cannot be known (a rate without an interval, a wait without IO) is
 * "-". --json is not written here but by schema.c, whose keys do not
 * follow the columns.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"
#include "strprintf.h"

struct colinfo {
	const char *name;
	double whint;
	int flags;
	int json_type;
	const char *help;
};

static const struct colinfo infos[NR_COLUMNS] = {
	[COL_NAME]     = { "NAME",           0.1, 0, SCOLS_JSON_STRING,
			   "device name" },
	[COL_GROUP]    = { "GROUP",          0.3, 0, SCOLS_JSON_STRING,
			   "group: cgroup path, user, group or id; <default>" },
	[COL_ID]       = { "ID",             5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "group id (-1: the default group)" },
	[COL_WEIGHT]   = { "WEIGHT",         5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "weight" },
	[COL_SHARE]    = { "SHARE",          5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "% of the device's IOs (sectors for weight-iosize)" },
	[COL_IOPS]     = { "IOPS",           5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "IOs per second" },
	[COL_MBPS]     = { "MB/s",           5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "megabytes (10^6 bytes) per second" },
	[COL_READS]    = { "READS",          5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "reads since the counters started" },
	[COL_WRITES]   = { "WRITES",         5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "writes since the counters started" },
	[COL_RBYTES]   = { "READ-BYTES",     5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "bytes read since the counters started" },
	[COL_WBYTES]   = { "WRITE-BYTES",    5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "bytes written since the counters started" },
	[COL_DELAYED]  = { "DELAYED",        5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "IOs that waited for their turn" },
	[COL_DREADS]   = { "DELAYED-READS",  5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "reads that waited, since the counters started" },
	[COL_DWRITES]  = { "DELAYED-WRITES", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "writes that waited, since the counters started" },
	[COL_QUEUED]   = { "QUEUED",         5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "IOs held in ioband now" },
	[COL_INFLIGHT] = { "INFLIGHT",       5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "IOs dispatched below and not completed now" },
	[COL_WAIT]     = { "WAIT",           5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "mean time an IO waited in ioband, ms" },
	[COL_WAIT_MAX] = { "WAIT-MAX",       5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "longest wait since the counters started, ms" },
	[COL_SERVICE]  = { "SERVICE",        5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "mean time from dispatch to completion, ms" },
	[COL_MIN]      = { "MIN",            5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "reserved bandwidth, KiB/s (range policies)" },
	[COL_MAX]      = { "MAX",            5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "bandwidth limit, KiB/s; - (null): no limit" },
};

struct libscols_table *report_new_table(const struct report_opts *opts,
					const char *name)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb)
		return NULL;
	scols_table_enable_json(tb, opts->json);
	scols_table_enable_raw(tb, opts->raw);
	scols_table_enable_noheadings(tb, opts->noheadings);
	if (scols_table_set_name(tb, name)) {
		scols_unref_table(tb);
		return NULL;
	}
	return tb;
}

int report_add_column(struct libscols_table *tb, const char *name,
		      double whint, int flags, int json_type)
{
	struct libscols_column *cl = scols_table_new_column(tb, name, whint, flags);

	if (!cl)
		return -ENOMEM;
	return scols_column_set_json_type(cl, json_type) ? -ENOMEM : 0;
}

/* Hand @data (allocated, or NULL for no memory) over to the line. */
int report_set_cell(struct libscols_line *ln, size_t col, char *data)
{
	if (!data || scols_line_refer_data(ln, col, data)) {
		free(data);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Parse "-o A,B" (replace the columns) or "-o +A,B" (add to them). On
 * -EINVAL, *bad and *badlen point at the unknown name in @list.
 */
int stat_report_columns(struct stat_report *r, const char *list,
			const char **bad, size_t *badlen)
{
	const char *p = list;
	size_t n = r->ncolumns;

	if (*p == '+')
		p++;
	else
		n = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < NR_COLUMNS; i++)
			if (strlen(infos[i].name) == len &&
			    !strncasecmp(infos[i].name, p, len))
				break;
		if (i == NR_COLUMNS || n == REPORT_COLUMNS_MAX) {
			*bad = p;
			*badlen = len;
			return i == NR_COLUMNS ? -EINVAL : -E2BIG;
		}
		r->columns[n++] = i;
		p += len;
		if (*p == ',')
			p++;
	}
	r->ncolumns = n;
	return 0;
}

void stat_report_prepend_column(struct stat_report *r, int col)
{
	if (r->ncolumns == REPORT_COLUMNS_MAX)
		return;
	memmove(r->columns + 1, r->columns, r->ncolumns * sizeof(*r->columns));
	r->columns[0] = col;
	r->ncolumns++;
}

/* Insert @col after the first @after (at the end without one), once. */
void stat_report_insert_after(struct stat_report *r, int after, int col)
{
	size_t i, at = r->ncolumns;

	if (r->ncolumns == REPORT_COLUMNS_MAX)
		return;
	for (i = 0; i < r->ncolumns; i++) {
		if (r->columns[i] == col)
			return;
		if (r->columns[i] == after && at == r->ncolumns)
			at = i + 1;
	}
	memmove(r->columns + at + 1, r->columns + at,
		(r->ncolumns - at) * sizeof(*r->columns));
	r->columns[at] = col;
	r->ncolumns++;
}

void stat_report_columns_help(FILE *out)
{
	size_t i;

	for (i = 0; i < NR_COLUMNS; i++)
		fprintf(out, " %14s  %s\n", infos[i].name, infos[i].help);
}

static int is_size_column(int col)
{
	return col == COL_RBYTES || col == COL_WBYTES;
}

int stat_report_init(struct stat_report *r)
{
	size_t i;

	r->tb = report_new_table(&r->opts, "ioband");
	if (!r->tb)
		return -ENOMEM;
	for (i = 0; i < r->ncolumns; i++) {
		const struct colinfo *ci = &infos[r->columns[i]];
		int type = ci->json_type;

		/* Sizes are bytes in JSON; "1.5M" strings with --raw etc. */
		if (!r->opts.bytes && !r->opts.json && is_size_column(r->columns[i]))
			type = SCOLS_JSON_STRING;
		if (report_add_column(r->tb, ci->name, ci->whint, ci->flags, type))
			return -ENOMEM;
	}
	return 0;
}

void stat_report_free(struct stat_report *r)
{
	scols_unref_table(r->tb);
	r->tb = NULL;
}

/* "-" for people, null in JSON. */
static char *unknown(const struct stat_report *r)
{
	return strprintf("%s", r->opts.json ? "" : "-");
}

static char *size_cell(const struct stat_report *r, uint64_t sectors)
{
	char buf[32];

	if (r->opts.bytes || r->opts.json)
		return strprintf("%" PRIu64, (uint64_t)(sectors * 512u));
	ioband_size_to_human(sectors * 512u, buf, sizeof(buf));
	return strprintf("%s", buf);
}

static char *ms_cell(const struct stat_report *r, int known, double ns)
{
	return known ? strprintf("%.2f", ns / 1e6) : unknown(r);
}

static char *stat_cell(const struct stat_report *r, const struct stat_row *row,
		       int col)
{
	const struct ioband_stats_group *g = row->g;
	const struct ioband_rates *rt = row->rates;

	switch (col) {
	case COL_NAME:
		return strprintf("%s", row->device);
	case COL_GROUP:
		if (g->is_default)
			return strprintf("<default>");
		return row->group ? strprintf("%s", row->group) :
				    strprintf("%" PRIu64, g->id);
	case COL_ID:
		return g->is_default ? strprintf("-1") : strprintf("%" PRIu64, g->id);
	case COL_WEIGHT:
		/* 0: the group lost its weight between two ioctls. */
		return g->weight ? strprintf("%" PRIu64, g->weight) : unknown(r);
	case COL_SHARE:
		if (!rt->has_share)
			return unknown(r);
		return strprintf(r->opts.json ? "%.1f" : "%.1f%%", rt->share * 100);
	case COL_IOPS:
		return rt->has_rate ? strprintf("%.1f", rt->iops) : unknown(r);
	case COL_MBPS:
		return rt->has_rate ? strprintf("%.2f", rt->bytes_per_sec / 1e6) :
				      unknown(r);
	case COL_READS:
		return strprintf("%" PRIu64, g->reads);
	case COL_WRITES:
		return strprintf("%" PRIu64, g->writes);
	case COL_RBYTES:
		return size_cell(r, g->read_sectors);
	case COL_WBYTES:
		return size_cell(r, g->write_sectors);
	case COL_DELAYED:
		return strprintf("%" PRIu64, rt->delayed);
	case COL_DREADS:
		return strprintf("%" PRIu64, g->delayed_reads);
	case COL_DWRITES:
		return strprintf("%" PRIu64, g->delayed_writes);
	case COL_MIN:
		return g->has_range ? strprintf("%" PRIu64, g->min_kbps) : unknown(r);
	case COL_MAX:
		/* 0 is no limit. */
		return g->has_range && g->max_kbps ?
		       strprintf("%" PRIu64, g->max_kbps) : unknown(r);
	}
	/* The scheduler's fields: only the "stats" message gives them. */
	if (!row->has_sched)
		return unknown(r);
	switch (col) {
	case COL_QUEUED:
		return strprintf("%" PRIu64, g->queued);
	case COL_INFLIGHT:
		return strprintf("%" PRIu64, g->in_flight);
	case COL_WAIT:
		return ms_cell(r, rt->has_wait, rt->wait_mean_ns);
	case COL_WAIT_MAX:
		return ms_cell(r, 1, g->wait_max_ns);
	default: /* COL_SERVICE */
		return ms_cell(r, rt->has_service, rt->service_mean_ns);
	}
}

int stat_report_add(struct stat_report *r, const struct stat_row *row)
{
	struct libscols_line *ln = scols_table_new_line(r->tb, NULL);
	size_t i;

	if (!ln)
		return -ENOMEM;
	for (i = 0; i < r->ncolumns; i++)
		if (report_set_cell(ln, i,
				    stat_cell(r, row, r->columns[i])))
			return -ENOMEM;
	return 0;
}

/* qsort: the busiest first (bytes, then IOs), then by device and group. */
int stat_row_cmp_throughput(const void *a, const void *b)
{
	const struct stat_row *x = a, *y = b;

	if (x->rates->bytes_per_sec != y->rates->bytes_per_sec)
		return x->rates->bytes_per_sec < y->rates->bytes_per_sec ? 1 : -1;
	if (x->rates->sectors != y->rates->sectors)
		return x->rates->sectors < y->rates->sectors ? 1 : -1;
	if (x->rates->ios != y->rates->ios)
		return x->rates->ios < y->rates->ios ? 1 : -1;
	return strcmp(x->device, y->device);
}
