/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters of ioband devices for collectors: the Prometheus text
 * exposition format (what node_exporter's textfile collector reads) and
 * its OpenMetrics form. Pure: no
 * libdevmapper, no libsmartcols, so the unit tests feed it sample stats
 * and check the output with real parsers.
 */
#ifndef IOBAND_METRICS_H
#define IOBAND_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "ioband.h"

enum metrics_format {
	METRICS_PROMETHEUS,	/* text format 0.0.4 */
	METRICS_OPENMETRICS,	/* OpenMetrics 1.0 text: "# EOF" at the end */
};

/* One ioband device at one moment. */
struct metrics_device {
	const char *name;
	const struct ioband_stats *stats;
	char *const *group_names;	/* per group; NULL entries print the id */
};

/* "prometheus" or "openmetrics"; -1 for another name. */
int metrics_parse_format(const char *name);

/* Every metric of @devs; 0, or -EIO when @out failed. */
int metrics_write(FILE *out, enum metrics_format format,
		  const struct metrics_device *devs, size_t n);

#endif /* IOBAND_METRICS_H */
