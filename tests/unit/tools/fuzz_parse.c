// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the parsers that read what the kernel prints:
 * ioband_parse_status() and ioband_parse_table(). Whatever they accept must
 * format back (tables) and be freed cleanly. Build with "make -C tools fuzz".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ioband_status st;
	struct ioband_table t, back;
	char *s = malloc(size + 1), *params;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

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
