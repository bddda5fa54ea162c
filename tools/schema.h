/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The JSON of iobandctl's --json (list, table, stat, top): one versioned
 * schema, documented in iobandctl(8) (JSON OUTPUT) and written down as a
 * JSON Schema in tools/iobandctl.schema.json. Its keys are fixed: snake
 * case, units in their names (read_bytes, wait_ns), the same whatever
 * --output says; a value that cannot be known is null, never left out.
 * Fields of the module's stats message that the schema does not name are
 * under "module", as the module wrote them. Pure: no libdevmapper.
 */
#ifndef IOBAND_SCHEMA_H
#define IOBAND_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ioband.h"

/* Raised when a key changes meaning or goes; new keys keep it. */
#define IOBAND_JSON_SCHEMA	1

/* One device of stat or top at one moment. */
struct schema_device {
	const char *name;
	const struct ioband_stats *stats;
	char *const *group_names;		/* per group; NULL: the id */
	const struct ioband_rates *rates;	/* per group */
};

/* One device of list. */
struct schema_list_entry {
	const char *name;
	const struct ioband_table_args *table;
	const char *device;			/* as people name it */
};

/* stat --json, top --json: one object, a newline after it. */
int schema_write_stats(FILE *out, const struct schema_device *devs, size_t n);
int schema_write_list(FILE *out, const struct schema_list_entry *devs, size_t n);
/* table --json: device @name's table, its groups named by @names. */
int schema_write_table(FILE *out, const char *name, uint64_t sectors,
		       const struct ioband_table_args *t, const char *device,
		       char *const *names);

#endif /* IOBAND_SCHEMA_H */
