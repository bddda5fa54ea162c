/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output tables of iobandctl (libsmartcols): the rows of "stat" and "top"
 * and the helpers "list" shares. No libdevmapper here, so the unit tests
 * render sample stats and check the JSON.
 */
#ifndef IOBAND_REPORT_H
#define IOBAND_REPORT_H

#include <stdio.h>
#include <libsmartcols.h>

#include "ioband.h"

enum {
	COL_NAME,
	COL_GROUP,
	COL_ID,
	COL_WEIGHT,
	COL_SHARE,
	COL_IOPS,
	COL_MBPS,
	COL_READS,
	COL_WRITES,
	COL_RBYTES,
	COL_WBYTES,
	COL_DELAYED,
	COL_DREADS,
	COL_DWRITES,
	COL_QUEUED,
	COL_INFLIGHT,
	COL_WAIT,
	COL_WAIT_MAX,
	COL_SERVICE,
	COL_MIN,
	COL_MAX,
	NR_COLUMNS
};

#define REPORT_COLUMNS_MAX	(NR_COLUMNS * 2)	/* -o may repeat a column */

struct report_opts {
	int json;
	int raw;
	int noheadings;
	int bytes;		/* sizes in bytes, not 1.5M */
};

struct stat_report {
	struct report_opts opts;
	int columns[REPORT_COLUMNS_MAX];
	size_t ncolumns;
	struct libscols_table *tb;
};

/* One group of one device in a report. */
struct stat_row {
	const char *device;
	const char *group;			/* its name, NULL: its id */
	const struct ioband_stats_group *g;
	const struct ioband_rates *rates;
	int has_sched;				/* queue and wait fields known */
};

struct libscols_table *report_new_table(const struct report_opts *opts,
					const char *name);
int report_add_column(struct libscols_table *tb, const char *name,
		      double whint, int flags, int json_type);
int report_set_cell(struct libscols_line *ln, size_t col, char *data);

int stat_report_columns(struct stat_report *r, const char *list,
			const char **bad, size_t *badlen);
void stat_report_prepend_column(struct stat_report *r, int col);
void stat_report_insert_after(struct stat_report *r, int after, int col);
int stat_report_init(struct stat_report *r);
int stat_report_add(struct stat_report *r, const struct stat_row *row);
void stat_report_free(struct stat_report *r);
void stat_report_columns_help(FILE *out);

int stat_row_cmp_throughput(const void *a, const void *b);

#endif /* IOBAND_REPORT_H */
