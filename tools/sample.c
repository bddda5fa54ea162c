// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Samples: a device's table and counters at one moment, what "stat",
 * "top" and "export" print, and the rows of a report made of two of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iobandctl.h"

/* Set when the module answers "stats" with -EINVAL: use the status line. */
static int no_stats_message;

static int sample_from_status(struct sample *s, int quiet)
{
	struct dm_task *dmt = ioband_task(DM_DEVICE_STATUS, s->name, quiet);
	struct ioband_status status;
	const char *params;
	int rc;

	if (!dmt)
		return 0;
	params = task_params(dmt, NULL);
	check_parsed(ioband_parse_status(params, &status), s->name, "status",
		     params, 0);
	dm_task_destroy(dmt);
	rc = ioband_stats_from_status(&s->table, &status, &s->stats);
	ioband_status_free(&status);
	if (rc)
		die_nomem();
	return 1;
}

static int sample_from_stats(struct sample *s, int quiet)
{
	char *reply;
	int e;

	if (!send_message(s->name, "stats", &reply, &e)) {
		if (e == EINVAL) {
			no_stats_message = 1;
			return sample_from_status(s, quiet);
		}
		if (!quiet)
			warn_dm_errno(e, "query", s->name);
		return 0;
	}
	check_parsed(ioband_parse_stats(reply, &s->stats), s->name,
		     "stats reply", reply, 0);
	free(reply);
	return 1;
}

static void free_sample(struct sample *s)
{
	free_names(s->names, s->stats.nr_groups);
	ioband_stats_free(&s->stats);
	ioband_table_free(&s->table);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

/* Read device @name's counters; 0 after a warning (unless @quiet). */
static int take_sample(struct sample *s, const char *name, int quiet)
{
	uint64_t *ids;
	size_t i;
	int ok;

	memset(s, 0, sizeof(*s));
	s->name = xasprintf("%s", name);
	if (!load_table(name, &s->table, NULL, quiet)) {
		free(s->name);
		return 0;
	}
	s->when_ns = now_ns();
	ok = no_stats_message ? sample_from_status(s, quiet) :
				sample_from_stats(s, quiet);
	if (!ok) {
		ioband_table_free(&s->table);
		free(s->name);
		return 0;
	}

	/* groups[0] is the default group: its id means nothing. */
	ids = xcalloc(s->stats.nr_groups, sizeof(*ids));
	for (i = 1; i < s->stats.nr_groups; i++)
		ids[i - 1] = s->stats.groups[i].id;
	s->names = xcalloc(s->stats.nr_groups, sizeof(*s->names));
	if (s->stats.nr_groups > 1) {
		char **names = group_names(s->table.group_type, ids,
					   s->stats.nr_groups - 1);

		memcpy(s->names + 1, names, (s->stats.nr_groups - 1) * sizeof(*names));
		free(names);
	}
	free(ids);
	return 1;
}

/*
 * The rows of @cur against @prev (NULL: since the counters started),
 * appended to *rows; @rates is allocated for cur's groups and returned.
 */
static struct ioband_rates *sample_rows(const struct sample *prev,
					const struct sample *cur,
					struct stat_row **rows, size_t *nrows)
{
	const struct ioband_stats *st = &cur->stats;
	struct ioband_rates *rates = xcalloc(st->nr_groups, sizeof(*rates));
	uint64_t interval = 0;
	size_t i;

	if (prev)
		interval = cur->when_ns - prev->when_ns;
	else if (st->has_elapsed)
		interval = st->elapsed_ns;
	ioband_stats_rates(prev ? &prev->stats : NULL, st, interval, rates);

	*rows = realloc(*rows, (*nrows + st->nr_groups) * sizeof(**rows));
	if (!*rows)
		die_nomem();
	for (i = 0; i < st->nr_groups; i++) {
		struct stat_row *row = &(*rows)[(*nrows)++];

		row->device = cur->name;
		row->group = cur->names[i];
		row->g = &st->groups[i];
		row->rates = &rates[i];
		row->has_sched = st->has_sched;
	}
	return rates;
}

void free_sample_set(struct sample_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		free_sample(&set->samples[i]);
		free(set->rates[i]);
	}
	free(set->samples);
	free(set->rates);
	free(set->rows);
	memset(set, 0, sizeof(*set));
}

static const struct sample *find_sample(const struct sample_set *set,
					const char *name)
{
	size_t i;

	for (i = 0; set && i < set->n; i++)
		if (!strcmp(set->samples[i].name, name))
			return &set->samples[i];
	return NULL;
}

/*
 * Sample devices @names and make the rows against @prev. Devices that
 * fail are skipped (after a warning unless @quiet); returns how many.
 */
size_t take_sample_set(struct sample_set *set, char *const *names,
			      size_t n, const struct sample_set *prev, int quiet)
{
	size_t i, failed = 0;

	memset(set, 0, sizeof(*set));
	set->samples = xcalloc(n, sizeof(*set->samples));
	set->rates = xcalloc(n, sizeof(*set->rates));
	for (i = 0; i < n; i++) {
		struct sample *s = &set->samples[set->n];

		if (!take_sample(s, names[i], quiet)) {
			failed++;
			continue;
		}
		set->n++;
	}
	/* Rows point into the samples: make them once all are taken. */
	for (i = 0; i < set->n; i++)
		set->rates[i] = sample_rows(find_sample(prev, set->samples[i].name),
					    &set->samples[i], &set->rows,
					    &set->nrows);
	return failed;
}
