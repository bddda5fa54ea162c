// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband core: who owns a bio, and what each owner is owed.
 *
 * 1. The problem
 *
 * Several groups of processes share one block device. An administrator
 * gives each group a weight and expects the device's bandwidth to be
 * shared in proportion to those weights. A group is whatever the target's
 * group type says: a cgroup v2 (the normal case, since cgroup v2 also owns
 * the page cache a group dirties, so buffered writeback is charged to the
 * group that wrote the data, not to the flusher thread), or a user, a
 * process, ... Everything that belongs to no attached group goes to the
 * *default group*, which has a weight of its own.
 *
 * 2. Groups
 *
 * A target holds a struct ioband_group_set: the default group plus every
 * attached group, each with its id, weight and counters. A bio is
 * classified once, when it enters the target: the kernel glue works out
 * the owner's id (and for cgroups, the ids of the owner's ancestors, so
 * that a tenant's child cgroups stay inside the tenant's share) and looks
 * each id up, from the nearest up (section 3).
 *
 *      /sys/fs/cgroup            id 1      not attached
 *       |-- tenant-a             id 4021   attached, weight 200
 *       |    `-- build           id 4187   not attached -> tenant-a
 *       `-- tenant-b             id 4090   attached, weight 100
 *      kernel threads, root      -> default group, weight :100
 *
 * 3. Cost
 *
 * A target's groups are kept in attach order (struct ioband_group_set),
 * which only the status, the table and the walks of a whole target
 * (suspend, reset) follow. Classifying a bio costs one lookup by id per
 * cgroup level, in a hash table that must cost the same with 2 groups or
 * 10,000 however they came: the table's groups are known at load, but
 * iobandctl attaches its groups one message at a time. In the kernel
 * that table is an rhashtable, which doubles in the background as groups
 * are attached (dm-ioband-target.c); userspace, which has no rhashtable,
 * uses struct ioband_group_table, a chained table its caller sizes with
 * ioband_hash_bits_for() to about one group per bucket.
 *
 * The core allocates nothing and takes no locks: the caller owns memory
 * (groups, buckets) and serialises calls on one set.
 *
 * 4. Text
 *
 * The table's arguments and the messages are parsed and checked here
 * too, down to the error each wrong argument gets: the glue only applies
 * what was parsed, under its locks, and the fuzzers and unit tests see
 * every rule. The only library calls are those the kernel and libc both
 * have: strlen, strcmp, strcasecmp and snprintf.
 */
#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/string.h>
#else
#include <stdio.h>
#include <string.h>
#include <strings.h>
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

#include "ioband-core.h"

#define IOBAND_U32_MAX		0xffffffffULL

/* The spellings of ioband_group_types[] and ioband_policy_names[]. */
#define IOBAND_GROUP_TYPE_NAMES	"none, cgroup, uid, user, gid, pid or pgrp"
#define IOBAND_POLICY_NAMES	"weight, weight-iosize, range-bw, weight-range or weight-time"

void ioband_group_set_init(struct ioband_group_set *set)
{
	struct ioband_group_set empty = { 0 };

	*set = empty;
}

void ioband_group_set_add(struct ioband_group_set *set,
			  struct ioband_group *group)
{
	group->next = NULL;
	group->prev = set->last;
	if (set->last)
		set->last->next = group;
	else
		set->first = group;
	set->last = group;
	set->nr_groups++;
}

void ioband_group_set_remove(struct ioband_group_set *set,
			     struct ioband_group *group)
{
	if (group->prev)
		group->prev->next = group->next;
	else
		set->first = group->next;
	if (group->next)
		group->next->prev = group->prev;
	else
		set->last = group->prev;
	group->next = NULL;
	group->prev = NULL;
	set->nr_groups--;
}

#ifndef __KERNEL__
/* 2^64 / golden ratio: spreads sequential ids over the buckets. */
#define IOBAND_HASH_MULTIPLIER	0x9E3779B97F4A7C15ULL
#define IOBAND_MAX_HASH_BITS	20

static unsigned int ioband_hash(u64 id, unsigned int bits)
{
	return (unsigned int)((id * IOBAND_HASH_MULTIPLIER) >> (64 - bits));
}

unsigned int ioband_hash_bits_for(unsigned int nr_groups)
{
	unsigned int bits = IOBAND_MIN_HASH_BITS;

	while (bits < IOBAND_MAX_HASH_BITS && (1U << bits) < nr_groups)
		bits++;
	return bits;
}

void ioband_group_table_init(struct ioband_group_table *table,
			     struct ioband_group **buckets,
			     unsigned int hash_bits)
{
	table->buckets = buckets;
	table->hash_bits = hash_bits;
}

struct ioband_group *
ioband_group_table_find(const struct ioband_group_table *table, u64 id)
{
	struct ioband_group *group;

	group = table->buckets[ioband_hash(id, table->hash_bits)];
	while (group && group->id != id)
		group = group->hash_next;
	return group;
}

bool ioband_group_table_insert(struct ioband_group_table *table,
			       struct ioband_group *group)
{
	struct ioband_group **bucket;

	if (ioband_group_table_find(table, group->id))
		return false;
	bucket = &table->buckets[ioband_hash(group->id, table->hash_bits)];
	group->hash_next = *bucket;
	*bucket = group;
	return true;
}

void ioband_group_table_remove(struct ioband_group_table *table,
			       struct ioband_group *group)
{
	struct ioband_group **link;

	link = &table->buckets[ioband_hash(group->id, table->hash_bits)];
	while (*link != group)
		link = &(*link)->hash_next;
	*link = group->hash_next;
	group->hash_next = NULL;
}
#endif /* !__KERNEL__ */

void ioband_group_account(struct ioband_group *group, enum ioband_dir dir,
			  u64 sectors)
{
	group->stats.ios[dir]++;
	group->stats.sectors[dir] += sectors;
}

void ioband_group_account_wait(struct ioband_group *group, u64 wait_ns)
{
	group->stats.wait_ns += wait_ns;
	if (wait_ns > group->stats.wait_max_ns)
		group->stats.wait_max_ns = wait_ns;
}

bool ioband_weight_valid(unsigned long long weight)
{
	return weight >= IOBAND_MIN_WEIGHT && weight <= IOBAND_MAX_WEIGHT;
}

/*
 * Reads the decimal number at *@text, advancing past it. Fails on an empty
 * number and on anything above 2^64 - 1.
 */
static int ioband_parse_u64_prefix(const char **text, u64 *value)
{
	const char *p = *text;
	u64 v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int digit = *p - '0';

		if (v > (~0ULL - digit) / 10)
			return -1;
		v = v * 10 + digit;
	}
	*text = p;
	*value = v;
	return 0;
}

int ioband_parse_u64(const char *text, u64 *value)
{
	u64 parsed;

	if (ioband_parse_u64_prefix(&text, &parsed) || *text != '\0')
		return -1;
	*value = parsed;
	return 0;
}

int ioband_parse_group_spec(const char *text, unsigned int flags,
			    unsigned int nr_values, u64 *id, bool *is_default,
			    u64 *values)
{
	const char *p = text;
	u64 parsed_id = 0, parsed[IOBAND_MAX_SPEC_VALUES];
	bool dflt;
	unsigned int i;

	if (nr_values < 1 || nr_values > IOBAND_MAX_SPEC_VALUES)
		return -1;
	dflt = *p == ':';
	if ((flags & IOBAND_SPEC_MINUS_ONE) && p[0] == '-' && p[1] == '1' &&
	    p[2] == ':') {
		dflt = true;
		p += 2;
	}
	if (!dflt && ioband_parse_u64_prefix(&p, &parsed_id))
		return -1;

	if ((flags & IOBAND_SPEC_BARE) && !dflt && *p == '\0' &&
	    nr_values == 1) {
		dflt = true;
		parsed[0] = parsed_id;
	} else {
		for (i = 0; i < nr_values; i++)
			if (*p++ != ':' || ioband_parse_u64_prefix(&p, &parsed[i]))
				return -1;
		if (*p != '\0')
			return -1;
	}

	*is_default = dflt;
	if (!dflt)
		*id = parsed_id;
	for (i = 0; i < nr_values; i++)
		values[i] = parsed[i];
	return 0;
}

int ioband_parse_group_weight(const char *text, bool bare_weight, u64 *id,
			      u32 *weight, bool *is_default)
{
	struct ioband_group_arg arg;

	if (ioband_parse_group_arg(text, IOBAND_SPEC_WEIGHT,
				   bare_weight ? IOBAND_SPEC_BARE : 0, &arg))
		return -1;
	if (!arg.is_default)
		*id = arg.id;
	*is_default = arg.is_default;
	*weight = arg.weight;
	return 0;
}

/* ---- Text: group types, policies, group arguments ---- */

/* Table spellings; "user" is dm-ioband's other name for "uid". */
static const struct {
	const char *name;
	enum ioband_group_type type;
} ioband_group_types[] = {
	{ "none", IOBAND_TYPE_NONE },
	{ "cgroup", IOBAND_TYPE_CGROUP },
	{ "uid", IOBAND_TYPE_UID },
	{ "user", IOBAND_TYPE_UID },
	{ "gid", IOBAND_TYPE_GID },
	{ "pid", IOBAND_TYPE_PID },
	{ "pgrp", IOBAND_TYPE_PGRP },
};

static const char * const ioband_policy_names[] = {
	[IOBAND_POLICY_WEIGHT] = "weight",
	[IOBAND_POLICY_WEIGHT_IOSIZE] = "weight-iosize",
	[IOBAND_POLICY_RANGE_BW] = "range-bw",
	[IOBAND_POLICY_WEIGHT_RANGE] = "weight-range",
	[IOBAND_POLICY_WEIGHT_TIME] = "weight-time",
};

int ioband_parse_group_type(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ioband_group_types); i++)
		if (!strcmp(name, ioband_group_types[i].name))
			return i;
	return -1;
}

const char *ioband_group_type_name(unsigned int type_index)
{
	return ioband_group_types[type_index].name;
}

enum ioband_group_type ioband_group_type_of(unsigned int type_index)
{
	return ioband_group_types[type_index].type;
}

int ioband_parse_policy(const char *name)
{
	unsigned int i;

	for (i = 0; i < IOBAND_NR_POLICIES; i++)
		if (!strcmp(name, ioband_policy_names[i]))
			return i;
	return -1;
}

const char *ioband_policy_name(enum ioband_policy policy)
{
	return ioband_policy_names[policy];
}

static const struct {
	unsigned int nr_values;
	const char *grammar;
} ioband_specs[] = {
	[IOBAND_SPEC_WEIGHT] = { 1, "<id>:<weight> or :<weight>" },
	[IOBAND_SPEC_RANGE] = { 2, "<id>:<min>:<max> or :<min>:<max>" },
	[IOBAND_SPEC_WEIGHT_RANGE] = { 3, "<id>:<weight>:<min>:<max> or :<weight>:<min>:<max>" },
};

enum ioband_spec ioband_policy_spec(enum ioband_policy policy)
{
	switch (policy) {
	case IOBAND_POLICY_RANGE_BW:
		return IOBAND_SPEC_RANGE;
	case IOBAND_POLICY_WEIGHT_RANGE:
		return IOBAND_SPEC_WEIGHT_RANGE;
	default:
		return IOBAND_SPEC_WEIGHT;
	}
}

unsigned int ioband_spec_nr_values(enum ioband_spec spec)
{
	return spec < IOBAND_SPEC_ID ? ioband_specs[spec].nr_values : 0;
}

/* Splits @arg's syntax from its values' range: 0, or -1 when malformed. */
static int ioband_parse_group_text(const char *text, enum ioband_spec spec,
				   unsigned int flags,
				   struct ioband_group_arg *arg, u64 *values)
{
	u64 id = 0;
	bool dflt;

	if (spec >= IOBAND_SPEC_ID ||
	    ioband_parse_group_spec(text, flags, ioband_specs[spec].nr_values,
				    &id, &dflt, values))
		return -1;
	arg->id = dflt ? 0 : id;
	arg->is_default = dflt;
	arg->spec = spec;
	arg->weight = 0;
	arg->min_kbps = 0;
	arg->max_kbps = 0;
	return 0;
}

/*
 * Takes the values of @arg's spec from @values: 0, or -1 when one is out
 * of range, with @arg then half filled.
 */
static int ioband_group_values(struct ioband_group_arg *arg,
			       const u64 *values)
{
	if (ioband_spec_has_weight(arg->spec)) {
		if (!ioband_weight_valid(*values))
			return -1;
		arg->weight = (u32)*values++;
	}
	if (ioband_spec_has_range(arg->spec)) {
		if (values[0] > IOBAND_U32_MAX || values[1] > IOBAND_U32_MAX ||
		    (values[1] && values[0] > values[1]))
			return -1;
		arg->min_kbps = (u32)values[0];
		arg->max_kbps = (u32)values[1];
	}
	return 0;
}

int ioband_parse_group_arg(const char *text, enum ioband_spec spec,
			   unsigned int flags, struct ioband_group_arg *arg)
{
	u64 values[IOBAND_MAX_SPEC_VALUES];
	struct ioband_group_arg parsed;

	if (ioband_parse_group_text(text, spec, flags, &parsed, values) ||
	    ioband_group_values(&parsed, values))
		return -1;
	*arg = parsed;
	return 0;
}

int ioband_format_group_arg(char *buf, size_t size,
			    const struct ioband_group_arg *arg)
{
	unsigned long long id = arg->id;

	switch (arg->spec) {
	case IOBAND_SPEC_WEIGHT:
		if (arg->is_default)
			return snprintf(buf, size, ":%u", arg->weight);
		return snprintf(buf, size, "%llu:%u", id, arg->weight);
	case IOBAND_SPEC_RANGE:
		if (arg->is_default)
			return snprintf(buf, size, ":%u:%u", arg->min_kbps,
					arg->max_kbps);
		return snprintf(buf, size, "%llu:%u:%u", id, arg->min_kbps,
				arg->max_kbps);
	case IOBAND_SPEC_WEIGHT_RANGE:
		if (arg->is_default)
			return snprintf(buf, size, ":%u:%u:%u", arg->weight,
					arg->min_kbps, arg->max_kbps);
		return snprintf(buf, size, "%llu:%u:%u:%u", id, arg->weight,
				arg->min_kbps, arg->max_kbps);
	default:
		return snprintf(buf, size, "%llu", id);
	}
}

/* ---- Text: the table ---- */

/* A number argument of the table: 0, or -1 unless 0..@max. */
static int ioband_parse_table_u32(const char *text, u32 max, u32 *value)
{
	u64 parsed;

	if (ioband_parse_u64(text, &parsed) || parsed > max)
		return -1;
	*value = (u32)parsed;
	return 0;
}

/*
 * An io_limit below io_throttle (after its default) is raised to it, as
 * dm-ioband did: the params are then always valid. io_limit 0 sets no
 * cap at all and stays 0.
 */
static void ioband_raise_io_limit(struct ioband_sched_params *params)
{
	u32 io_throttle = params->io_throttle ? params->io_throttle :
						IOBAND_DEFAULT_IO_THROTTLE;

	if (params->io_limit && params->io_limit < io_throttle)
		params->io_limit = io_throttle;
}

int ioband_parse_table_group(const struct ioband_table *table,
			     unsigned int i, struct ioband_group_arg *arg)
{
	const char *text = table->group_args[i];

	if (!ioband_parse_group_arg(text, table->spec, 0, arg))
		return 0;
	if (table->spec == IOBAND_SPEC_WEIGHT_RANGE)
		return -1;
	return ioband_parse_group_arg(text, IOBAND_SPEC_WEIGHT_RANGE, 0, arg);
}

enum ioband_spec ioband_table_spec(enum ioband_policy policy,
				   const struct ioband_group_arg *arg)
{
	enum ioband_spec spec = ioband_policy_spec(policy);

	if (spec == IOBAND_SPEC_WEIGHT && (arg->min_kbps || arg->max_kbps))
		return IOBAND_SPEC_WEIGHT_RANGE;
	if (spec == IOBAND_SPEC_RANGE && arg->weight != IOBAND_DEFAULT_WEIGHT)
		return IOBAND_SPEC_WEIGHT_RANGE;
	return spec;
}

/* Checks the group arguments: NULL, or the table's error. */
static const char *ioband_parse_table_groups(struct ioband_table *table,
					     char *detail, size_t size)
{
	struct ioband_group_arg arg;
	bool default_seen = false;
	unsigned int i;

	for (i = 0; i < table->nr_group_args; i++)
		table->nr_groups += table->group_args[i][0] != ':';
	if (table->nr_groups &&
	    ioband_group_type_of(table->type_index) == IOBAND_TYPE_NONE)
		return "group: group_type none takes no <id>:... groups";

	for (i = 0; i < table->nr_group_args; i++) {
		if (ioband_parse_table_group(table, i, &arg)) {
			snprintf(detail, size,
				 "group '%s': want %s%s, weight %u..%u, 0 <= min <= max or max 0 (KB/s)",
				 table->group_args[i],
				 ioband_specs[table->spec].grammar,
				 table->spec == IOBAND_SPEC_WEIGHT_RANGE ? "" :
				 " (or <id>:<weight>:<min>:<max> under any policy)",
				 IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
			return "group: malformed or out of range; the kernel log has the grammar";
		}
		if (arg.is_default && default_seen)
			return "group: the default group's :... is given twice";
		default_seen |= arg.is_default;
	}
	return NULL;
}

#define IOBAND_KNOB_CARRYOVER	"carryover="

/*
 * The key=value knobs after the groups, from @first on: NULL, or the
 * table's error with which and why in @detail. Only carryover so far, the
 * one knob the positional arguments of the original dm-ioband lack.
 */
static const char *ioband_parse_table_knobs(struct ioband_table *table,
					    unsigned int first,
					    unsigned int argc, char **argv,
					    char *detail, size_t size)
{
	const size_t key_len = strlen(IOBAND_KNOB_CARRYOVER);
	bool carryover_seen = false;
	unsigned int i;
	u64 value;

	for (i = first; i < argc; i++) {
		if (!strchr(argv[i], '=')) {
			snprintf(detail, size,
				 "group '%s': after the key=value knobs, which come last",
				 argv[i]);
			return "group: after a key=value knob; the knobs come last";
		}
		if (strncmp(argv[i], IOBAND_KNOB_CARRYOVER, key_len)) {
			snprintf(detail, size,
				 "knob '%s': unknown, want carryover=<n>",
				 argv[i]);
			return "knob: unknown or out of range; the kernel log says which";
		}
		if (carryover_seen) {
			snprintf(detail, size, "knob '%s': carryover given twice",
				 argv[i]);
			return "knob: unknown or out of range; the kernel log says which";
		}
		if (ioband_parse_u64(argv[i] + key_len, &value) ||
		    value > IOBAND_MAX_CARRYOVER) {
			snprintf(detail, size,
				 "knob '%s': want carryover=<n>, n 0..%u",
				 argv[i], IOBAND_MAX_CARRYOVER);
			return "knob: unknown or out of range; the kernel log says which";
		}
		carryover_seen = true;
		table->params.carryover = (u32)value;
	}
	table->nr_knobs = argc - first;
	return NULL;
}

int ioband_format_table_knobs(char *buf, size_t size,
			      const struct ioband_sched_params *params)
{
	if (params->carryover == IOBAND_DEFAULT_CARRYOVER) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	return snprintf(buf, size, " %s%u", IOBAND_KNOB_CARRYOVER,
			params->carryover);
}

const char *ioband_parse_table(struct ioband_table *table, unsigned int argc,
			       char **argv, char *detail, size_t size)
{
	struct ioband_sched_params params;
	u32 io_throttle, io_limit;
	unsigned int first_knob;
	const char *error;
	int type, policy;

	if (size)
		detail[0] = '\0';
	if (argc < 7)
		return "Not enough arguments: want <device> <ioband_device_id> <io_throttle> <io_limit> <group_type> <policy> <token_base> [groups] [carryover=<n>]";
	if (strlen(argv[1]) > IOBAND_DOMAIN_ID_MAX)
		return "ioband_device_id: longer than 31 characters";
	if (ioband_parse_table_u32(argv[2], IOBAND_MAX_IO_LIMIT, &io_throttle))
		return "io_throttle: want a number 0..65536";
	if (ioband_parse_table_u32(argv[3], IOBAND_MAX_IO_LIMIT, &io_limit))
		return "io_limit: want a number 0..65536";
	type = ioband_parse_group_type(argv[4]);
	if (type < 0)
		return "group_type: unknown, want " IOBAND_GROUP_TYPE_NAMES;
	policy = ioband_parse_policy(argv[5]);
	if (policy < 0)
		return "policy: unknown, want " IOBAND_POLICY_NAMES;
	ioband_sched_params_default(&params, policy);
	if (ioband_parse_table_u32(argv[6], IOBAND_MAX_TOKEN_BASE,
				   &params.token_base))
		return "token_base: want a number 0..1073741824";
	params.io_throttle = io_throttle;
	params.io_limit = io_limit;
	ioband_raise_io_limit(&params);

	table->device = argv[0];
	table->domain_id = argv[1];
	table->type_index = type;
	table->params = params;
	table->spec = ioband_policy_spec(policy);
	table->nr_groups = 0;
	for (first_knob = 7; first_knob < argc; first_knob++)
		if (strchr(argv[first_knob], '='))
			break;
	table->nr_group_args = first_knob - 7;
	table->group_args = argv + 7;
	error = ioband_parse_table_knobs(table, first_knob, argc, argv,
					 detail, size);
	if (error)
		return error;
	return ioband_parse_table_groups(table, detail, size);
}

/* ---- Text: the messages ---- */

static const char * const ioband_message_names[] = {
	[IOBAND_MSG_NONE] = "",
	[IOBAND_MSG_ATTACH] = "attach",
	[IOBAND_MSG_DETACH] = "detach",
	[IOBAND_MSG_WEIGHT] = "weight",
	[IOBAND_MSG_POLICY] = "policy",
	[IOBAND_MSG_RANGE_BW] = "range-bw",
	[IOBAND_MSG_TYPE] = "type",
	[IOBAND_MSG_TOKEN] = "token",
	[IOBAND_MSG_CARRYOVER] = "carryover",
	[IOBAND_MSG_IO_LIMIT] = "io_limit",
	[IOBAND_MSG_IO_THROTTLE] = "io_throttle",
	[IOBAND_MSG_RESET] = "reset",
	[IOBAND_MSG_STATS] = "stats",
};

/* The largest value of each knob message; the domain checks the rest. */
static const u32 ioband_knob_max[] = {
	[IOBAND_MSG_TOKEN] = IOBAND_MAX_TOKEN_BASE,
	[IOBAND_MSG_CARRYOVER] = IOBAND_MAX_CARRYOVER,
	[IOBAND_MSG_IO_LIMIT] = IOBAND_MAX_IO_LIMIT,
	[IOBAND_MSG_IO_THROTTLE] = IOBAND_MAX_IO_LIMIT,
};

static bool ioband_message_is_knob(enum ioband_message_kind kind)
{
	return kind >= IOBAND_MSG_TOKEN && kind <= IOBAND_MSG_IO_THROTTLE;
}

const char *ioband_message_name(enum ioband_message_kind kind)
{
	return ioband_message_names[kind];
}

/* The message of @name, taking an argument or not; IOBAND_MSG_NONE. */
static enum ioband_message_kind ioband_message_kind(const char *name,
						    bool with_arg)
{
	unsigned int kind;

	for (kind = IOBAND_MSG_ATTACH; kind < IOBAND_NR_MESSAGES; kind++)
		if ((kind < IOBAND_MSG_RESET) == with_arg &&
		    !strcasecmp(name, ioband_message_names[kind]))
			return kind;
	return IOBAND_MSG_NONE;
}

static void ioband_knob_range_error(const struct ioband_message *msg,
				    char *error, size_t size)
{
	snprintf(error, size,
		 "%s %s: out of range (io_throttle <= io_limit <= %u, io_limit 0 for no cap, token <= %u, carryover <= %u)",
		 ioband_message_names[msg->kind], msg->arg,
		 IOBAND_MAX_IO_LIMIT, IOBAND_MAX_TOKEN_BASE,
		 IOBAND_MAX_CARRYOVER);
}

static void ioband_range_error(const struct ioband_message *msg,
			       char *error, size_t size)
{
	snprintf(error, size,
		 "range-bw %s: want 0 <= min <= max, or max 0 for no limit",
		 msg->arg);
}

/* Parses the argument of @msg, whose kind is known: 0, or -1. */
static int ioband_parse_message_arg(struct ioband_message *msg,
				    char *error, size_t size)
{
	const char *name = ioband_message_names[msg->kind];
	const char *arg = msg->arg;
	u64 values[IOBAND_MAX_SPEC_VALUES];
	bool policy;
	u64 value;
	int parsed;

	switch (msg->kind) {
	case IOBAND_MSG_ATTACH:
		if (!ioband_parse_u64(arg, &msg->group.id)) {
			msg->group.spec = IOBAND_SPEC_ID;
			return 0;
		}
		if (!ioband_parse_group_arg(arg, IOBAND_SPEC_WEIGHT, 0,
					    &msg->group) &&
		    !msg->group.is_default)
			return 0;
		snprintf(error, size,
			 "attach '%s': want <id> or <id>:<weight>, weight %u..%u",
			 arg, IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
		return -1;
	case IOBAND_MSG_DETACH:
		msg->group.spec = IOBAND_SPEC_ID;
		if (!ioband_parse_u64(arg, &msg->group.id))
			return 0;
		snprintf(error, size, "detach '%s': want a group id", arg);
		return -1;
	case IOBAND_MSG_WEIGHT:
		if (!ioband_parse_group_arg(arg, IOBAND_SPEC_WEIGHT,
					    IOBAND_SPEC_BARE, &msg->group))
			return 0;
		snprintf(error, size,
			 "weight '%s': want [<id>:]<weight>, weight %u..%u",
			 arg, IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
		return -1;
	case IOBAND_MSG_RANGE_BW:
		if (ioband_parse_group_text(arg, IOBAND_SPEC_RANGE,
					    IOBAND_SPEC_MINUS_ONE, &msg->group,
					    values)) {
			snprintf(error, size,
				 "range-bw '%s': want <id>:<min>:<max> or -1:<min>:<max> (KB/s)",
				 arg);
			return -1;
		}
		if (!ioband_group_values(&msg->group, values))
			return 0;
		ioband_range_error(msg, error, size);
		return -1;
	case IOBAND_MSG_POLICY:
	case IOBAND_MSG_TYPE:
		policy = msg->kind == IOBAND_MSG_POLICY;
		parsed = policy ? ioband_parse_policy(arg) :
				  ioband_parse_group_type(arg);
		if (parsed >= 0) {
			msg->value = parsed;
			return 0;
		}
		snprintf(error, size, "%s '%s': unknown, want %s", name, arg,
			 policy ? IOBAND_POLICY_NAMES : IOBAND_GROUP_TYPE_NAMES);
		return -1;
	default:
		break;
	}

	/* The knobs. */
	if (ioband_parse_u64(arg, &value) || value > IOBAND_U32_MAX) {
		snprintf(error, size, "%s '%s': want an unsigned number",
			 name, arg);
		return -1;
	}
	if (value > ioband_knob_max[msg->kind]) {
		ioband_knob_range_error(msg, error, size);
		return -1;
	}
	msg->value = (u32)value;
	return 0;
}

int ioband_parse_message(struct ioband_message *msg, unsigned int argc,
			 char **argv, char *error, size_t size)
{
	struct ioband_message empty = { 0 };

	*msg = empty;
	if (size)
		error[0] = '\0';
	if (argc == 1)
		msg->kind = ioband_message_kind(argv[0], false);
	if (msg->kind != IOBAND_MSG_NONE)
		return 0;
	if (argc != 2) {
		snprintf(error, size,
			 "message '%s' with %u arguments: want attach, detach, weight, range-bw, token, carryover, io_limit, io_throttle, policy or type with one argument, or reset or stats alone",
			 argc ? argv[0] : "", argc ? argc - 1 : 0);
		return -1;
	}
	msg->kind = ioband_message_kind(argv[0], true);
	if (msg->kind == IOBAND_MSG_NONE) {
		snprintf(error, size, "unknown message '%s'", argv[0]);
		return -1;
	}
	msg->arg = argv[1];
	return ioband_parse_message_arg(msg, error, size);
}

void ioband_message_error(const struct ioband_message *msg,
			  enum ioband_message_fault fault, char *error,
			  size_t size)
{
	const char *name = ioband_message_names[msg->kind];
	const char *arg = msg->arg ? msg->arg : "";
	unsigned long long id = msg->group.id;

	switch (fault) {
	case IOBAND_FAULT_NO_GROUPS:
		snprintf(error, size,
			 "attach: group_type none has no groups to attach");
		return;
	case IOBAND_FAULT_ATTACHED:
		snprintf(error, size, "attach %llu: already attached", id);
		return;
	case IOBAND_FAULT_NOT_ATTACHED:
		if (msg->kind == IOBAND_MSG_DETACH)
			snprintf(error, size, "detach %llu: no such group", id);
		else
			snprintf(error, size, "%s %s: group %llu is not attached",
				 name, arg, id);
		return;
	case IOBAND_FAULT_REFUSED:
		if (msg->kind == IOBAND_MSG_RANGE_BW)
			ioband_range_error(msg, error, size);
		else if (ioband_message_is_knob(msg->kind))
			ioband_knob_range_error(msg, error, size);
		else
			snprintf(error, size, "%s %s: refused", name, arg);
		return;
	case IOBAND_FAULT_BUSY:
		snprintf(error, size, "type %s: detach every group first", arg);
		return;
	case IOBAND_FAULT_NO_MEMORY:
		snprintf(error, size, "%s %s: out of memory", name, arg);
		return;
	case IOBAND_FAULT_TOO_DEEP:
		snprintf(error, size,
			 "attach %llu: attached cgroups would nest more than %u deep",
			 id, IOBAND_SCHED_MAX_DEPTH);
		return;
	case IOBAND_FAULT_NOT_RESUMED:
		snprintf(error, size,
			 "%s: the table is not resumed yet (try again after the resume)",
			 name);
		return;
	default:
		snprintf(error, size, "%s: failed", name);
		return;
	}
}
