/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dm-ioband table and status formats, as pure functions: no
 * libdevmapper, no I/O, so the unit tests and the fuzzer link them alone.
 *
 * The grammar of tables and group specs is the kernel's own: ioband.c
 * checks them with the parsers of dm-ioband/ioband-core.c, compiled into
 * iobandctl, so that the tool and the target cannot disagree. What is
 * left here is what the kernel does not do: building a table, reading it
 * back into something to edit, parsing the status and the stats.
 */
#ifndef IOBAND_H
#define IOBAND_H

#include <stddef.h>
#include <stdint.h>

#include "ioband-core.h"

#define IOBAND_TARGET_NAME	"ioband"
#define IOBAND_TYPE_MAX		15	/* longest group_type or policy name */
#define IOBAND_STATUS_FIELDS	7	/* tokens per group in the status line */

/*
 * A group of the table: its weight (policies weight, weight-iosize and
 * weight-range) and its range in KiB/s (range-bw and weight-range; max 0 is
 * no limit). Under range-bw the weight is not in the table: it stays 100.
 */
struct ioband_weight {
	uint64_t id;
	unsigned int weight;
	uint32_t min_kbps;
	uint32_t max_kbps;
};

/* What a group gets: a weight and a range, as the policy's spec says. */
struct ioband_group_spec {
	unsigned int weight;
	uint32_t min_kbps;
	uint32_t max_kbps;
};

/* The constructor arguments: what follows "<start> <len> ioband". */
struct ioband_table_args {
	char *device;				/* path or major:minor */
	char domain[IOBAND_DOMAIN_ID_MAX + 1];	/* ioband_device_id */
	unsigned int io_throttle;		/* 0 = kernel default */
	unsigned int io_limit;			/* 0 = kernel default */
	char group_type[IOBAND_TYPE_MAX + 1];
	char policy[IOBAND_TYPE_MAX + 1];
	unsigned int token_base;		/* 0 = kernel default */
	unsigned int default_weight;
	uint32_t default_min_kbps;		/* range policies */
	uint32_t default_max_kbps;
	size_t nr_weights;
	struct ioband_weight *weights;
};

struct ioband_group_stat {
	int is_default;		/* the status line spells its id "-1" */
	uint64_t id;		/* meaningless for the default group */
	uint64_t reads;
	uint64_t delayed_reads;
	uint64_t read_sectors;
	uint64_t writes;
	uint64_t delayed_writes;
	uint64_t write_sectors;
};

/* What follows "<start> <len> ioband" in the status line. */
struct ioband_status {
	char domain[IOBAND_DOMAIN_ID_MAX + 1];
	size_t nr_groups;
	struct ioband_group_stat *groups;	/* groups[0] is the default */
};

int ioband_valid_domain(const char *domain);
int ioband_valid_group_type(const char *type);
int ioband_valid_policy(const char *policy);
int ioband_iosize_policy(const char *policy);
int ioband_range_policy(const char *policy);
enum ioband_spec ioband_spec_of_policy(const char *policy);
const char *ioband_spec_help(enum ioband_spec spec);
int ioband_parse_spec(enum ioband_spec spec, const char *str,
		      struct ioband_group_spec *out);
int ioband_format_spec(enum ioband_spec spec, const struct ioband_group_spec *g,
		       char *buf, size_t len);
int ioband_split_spec_arg(enum ioband_spec spec, const char *arg, char **key,
			  struct ioband_group_spec *out);

int ioband_parse_weight(const char *str, unsigned int *weight);
int ioband_split_weight_arg(const char *arg, char **key, unsigned int *weight);

int ioband_table_add_weight(struct ioband_table_args *t, uint64_t id,
			    unsigned int weight);
int ioband_table_add_group(struct ioband_table_args *t, uint64_t id,
			   const struct ioband_group_spec *g);
void ioband_table_default_spec(const struct ioband_table_args *t,
			       struct ioband_group_spec *g);
void ioband_group_to_spec(const struct ioband_weight *w,
			  struct ioband_group_spec *g);
const struct ioband_weight *ioband_table_find_weight(const struct ioband_table_args *t,
						     uint64_t id);
int ioband_build_params(const struct ioband_table_args *t, char **params);
int ioband_format_params(const struct ioband_table_args *t, char **params);
/*
 * The kernel parser's verdict on a table's arguments: NULL, or its error
 * (which argument, and why), with the grammar of a bad group in @detail.
 */
const char *ioband_params_error(const char *params, char *detail, size_t size);
int ioband_parse_params(const char *params, struct ioband_table_args *out);
void ioband_table_free(struct ioband_table_args *t);

int ioband_parse_status(const char *params, struct ioband_status *out);
void ioband_status_free(struct ioband_status *st);

/*
 * The reply to the "stats" message: one record a line, "key=value" fields.
 * The first record describes the domain, one "group=" record follows per
 * group, the default group (id -1) first. Counters only grow until "reset".
 */
/*
 * A "key=value" of a stats record, as the kernel wrote it. Every field of
 * a record is kept so, the known ones parsed besides: a newer kernel's
 * fields reach --json and the metrics without a new parser.
 */
struct ioband_stats_field {
	char *key;
	char *value;
};

struct ioband_stats_group {
	int is_default;
	uint64_t id;		/* meaningless for the default group */
	uint64_t weight;
	uint64_t reads;
	uint64_t read_sectors;
	uint64_t writes;
	uint64_t write_sectors;
	uint64_t delayed_reads;
	uint64_t delayed_writes;
	uint64_t queued;
	uint64_t in_flight;
	uint64_t wait_ns;	/* total time bios waited in ioband */
	uint64_t wait_max_ns;
	uint64_t service_ns;	/* total time from dispatch to completion */
	uint64_t finish_tag;
	int has_range;		/* optional keys min_kbps and max_kbps given */
	uint64_t min_kbps;
	uint64_t max_kbps;	/* 0: no limit */
	int has_writeback;	/* optional keys writeback_waits, _wait_ns given */
	uint64_t writeback_waits;
	uint64_t writeback_wait_ns;
	int has_open;		/* optional key open_ios given */
	uint64_t open_ios;	/* of reads and writes: past the scheduler, untimed */
	int has_parent;		/* optional key parent given */
	uint64_t parent;	/* the group it is nested under, 0: the top */
	size_t nr_fields;
	struct ioband_stats_field *fields;	/* the record's, in order */
};

struct ioband_stats {
	char domain[IOBAND_DOMAIN_ID_MAX + 1];
	char policy[IOBAND_TYPE_MAX + 1];
	uint64_t token_base;
	uint64_t io_throttle;
	uint64_t io_limit;
	uint64_t carryover;
	uint64_t in_flight;
	uint64_t queued;
	uint64_t vtime;
	int has_elapsed;	/* optional key elapsed_ns was given */
	uint64_t elapsed_ns;	/* since the counters started */
	int has_sched;		/* from "stats": queue and wait fields are set */
	size_t nr_fields;
	struct ioband_stats_field *fields;	/* the domain record's */
	size_t nr_groups;
	struct ioband_stats_group *groups;	/* groups[0] is the default */
};

int ioband_parse_stats(const char *text, struct ioband_stats *out);
/* The value of field @key of a record, or NULL. */
const char *ioband_stats_field(const struct ioband_stats_field *fields,
			       size_t n, const char *key);
/* A field's value as a whole decimal number: 1 and the number, else 0. */
int ioband_stats_number(const char *s, uint64_t *v);
int ioband_stats_from_status(const struct ioband_table_args *t,
			     const struct ioband_status *status,
			     struct ioband_stats *out);
void ioband_stats_free(struct ioband_stats *st);

/* A group's activity over an interval, from two samples of its counters. */
struct ioband_rates {
	int has_share;		/* some IO happened in the interval */
	double share;		/* of the device's IOs or sectors, 0..1 */
	int has_rate;		/* the interval's length is known */
	double iops;
	double bytes_per_sec;
	uint64_t ios;
	uint64_t sectors;
	uint64_t delayed;
	int has_wait;		/* has_sched, and some IO completed */
	double wait_mean_ns;
	int has_service;	/* has_wait, and some of those IOs were timed */
	double service_mean_ns;	/* over the timed IOs */
};

void ioband_stats_rates(const struct ioband_stats *prev,
			const struct ioband_stats *cur, uint64_t interval_ns,
			struct ioband_rates *rates);

void ioband_size_to_human(uint64_t bytes, char *buf, size_t len);

#endif /* IOBAND_H */
