// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the parsers that read what the kernel prints:
 * ioband_parse_status(), ioband_parse_params() and ioband_parse_stats(),
 * and the iobandtab parser (every policy's group specs).
 * Whatever they accept must format back (tables), feed the rate
 * computation and be freed cleanly. Build with "make -C tools fuzz".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"
#include "iobandtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted stats reply has a default group first and rates for all. */
static void check_stats(const char *s)
{
	struct ioband_rates *rates;
	struct ioband_stats st;
	size_t i;

	if (ioband_parse_stats(s, &st))
		return;
	if (!st.nr_groups || !st.groups[0].is_default)
		abort();
	for (i = 1; i < st.nr_groups; i++)
		if (st.groups[i].is_default)
			abort();
	rates = calloc(st.nr_groups, sizeof(*rates));
	if (rates) {
		ioband_stats_rates(&st, &st, 1000000000ULL, rates);
		ioband_stats_rates(NULL, &st, st.elapsed_ns, rates);
		for (i = 0; i < st.nr_groups; i++)
			if (rates[i].has_share &&
			    !(rates[i].share >= 0 && rates[i].share <= 1))
				abort();
		free(rates);
	}
	ioband_stats_free(&st);
}

/* Every accepted iobandtab entry writes back to a line that parses the same. */
static void check_tab(const char *s)
{
	struct iobandtab_entry *entries, back;
	char *line, err[512];
	size_t n, i, len;
	FILE *f;

	if (iobandtab_parse(s, &entries, &n, NULL, NULL) < 0)
		return;
	for (i = 0; i < n; i++) {
		line = NULL;
		f = open_memstream(&line, &len);
		if (!f)
			abort();
		if (iobandtab_format_entry(&entries[i], f))
			abort();
		fclose(f);
		if (iobandtab_parse_line(line, 1, &back, err, sizeof(err)) != 1 ||
		    strcmp(back.name, entries[i].name) ||
		    strcmp(back.device, entries[i].device) ||
		    strcmp(back.policy, entries[i].policy) ||
		    back.nr_groups != entries[i].nr_groups)
			abort();
		iobandtab_entry_free(&back);
		free(line);
	}
	iobandtab_free(entries, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ioband_status st;
	struct ioband_table_args t, back;
	char *s = malloc(size + 1), *params;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	check_stats(s);
	check_tab(s);

	if (!ioband_parse_status(s, &st))
		ioband_status_free(&st);

	if (!ioband_parse_params(s, &t)) {
		/* An accepted table is valid: it formats and parses back. */
		if (ioband_format_params(&t, &params))
			abort();
		if (ioband_parse_params(params, &back) ||
		    back.nr_weights != t.nr_weights)
			abort();
		ioband_table_free(&back);
		free(params);
		ioband_table_free(&t);
	}
	free(s);
	return 0;
}
