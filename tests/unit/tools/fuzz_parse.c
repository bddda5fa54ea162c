// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the parsers that read what the kernel prints:
 * ioband_parse_status(), ioband_parse_table() and ioband_parse_stats().
 * Whatever they accept must format back (tables), feed the rate
 * computation and be freed cleanly. Build with "make -C tools fuzz".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ioband_status st;
	struct ioband_table t, back;
	char *s = malloc(size + 1), *params;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	check_stats(s);

	if (!ioband_parse_status(s, &st))
		ioband_status_free(&st);

	if (!ioband_parse_table(s, &t)) {
		/* An accepted table is valid: it formats and parses back. */
		if (ioband_format_params(&t, &params))
			abort();
		if (ioband_parse_table(params, &back) ||
		    back.nr_weights != t.nr_weights)
			abort();
		ioband_table_free(&back);
		free(params);
		ioband_table_free(&t);
	}
	free(s);
	return 0;
}
