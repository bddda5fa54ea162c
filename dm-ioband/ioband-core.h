/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core of dm-ioband: groups, their weights and counters, in plain C.
 *
 * Nothing here calls the kernel, so the same file is built into
 * dm-ioband.ko and into the userspace tests and fuzzers. Memory is owned
 * by the caller and locking is the caller's: every function that changes
 * or reads a group set expects the caller to hold the lock that protects
 * it. See ioband-core.c for the design.
 */
#ifndef IOBAND_CORE_H
#define IOBAND_CORE_H

#include "ioband-types.h"
#include "ioband-sched.h"

/* The longest ioband_device_id, as in the original dm-ioband. */
#define IOBAND_DOMAIN_ID_MAX	31

/* What the status and the stats message report for one group. */
struct ioband_group_stats {
	u64 ios[IOBAND_NR_DIRS];
	u64 delayed[IOBAND_NR_DIRS];	/* bios that had to wait in ioband */
	u64 sectors[IOBAND_NR_DIRS];
	u64 wait_ns;			/* held in ioband, all bios */
	u64 wait_max_ns;		/* longest one bio was held */
	u64 service_ns;			/* dispatch to completion below */
	u64 writeback_waits;		/* times its flusher waited in map */
	u64 writeback_wait_ns;		/* how long, in all */
};

struct ioband_group {
	u64 id;				/* cgroup id, uid, ...; unused for the default group */
	struct ioband_sched_entity entity;	/* its weight and held bios */
	struct ioband_group_stats stats;
	u32 in_flight;			/* dispatched, not completed */
	bool detached;			/* freed when in_flight drops to 0 */
	/*
	 * Under group type cgroup, the attached group of the nearest
	 * ancestor cgroup, NULL at the top (section 19 of the design);
	 * under the target's groups_lock.
	 */
	struct ioband_group *parent;
	struct ioband_group *next;	/* attach order, for status and table */
	struct ioband_group *prev;
#ifndef __KERNEL__
	struct ioband_group *hash_next;	/* chain of an ioband_group_table */
#endif
};

/*
 * The groups of one target: a default group, which takes every bio whose
 * owner is not attached, plus the attached groups in attach order. Finding
 * a group by its id is the caller's business: the kernel keeps an
 * rhashtable beside the set (it grows as groups are attached), userspace
 * an ioband_group_table.
 */
struct ioband_group_set {
	struct ioband_group default_group;
	unsigned int nr_groups;		/* attached groups, default excluded */
	struct ioband_group *first;	/* attach order */
	struct ioband_group *last;
};

void ioband_group_set_init(struct ioband_group_set *set);

/* Appends @group, whose id no group of @set has, to the attach order. */
void ioband_group_set_add(struct ioband_group_set *set,
			  struct ioband_group *group);

/* Takes @group out of @set: it is listed and counted no more. */
void ioband_group_set_remove(struct ioband_group_set *set,
			     struct ioband_group *group);

#ifndef __KERNEL__
/*
 * Userspace has no rhashtable: the tests, the simulator and the overhead
 * benchmark find groups by id in this chained hash table, whose
 * 2^hash_bits buckets the caller sizes (ioband_hash_bits_for()) and owns.
 */
#define IOBAND_MIN_HASH_BITS	6	/* smallest table: 64 buckets */

struct ioband_group_table {
	struct ioband_group **buckets;
	unsigned int hash_bits;
};

/* Bucket count that keeps chains short for nr_groups groups. */
unsigned int ioband_hash_bits_for(unsigned int nr_groups);

/* @buckets: 2^@hash_bits zeroed pointers. */
void ioband_group_table_init(struct ioband_group_table *table,
			     struct ioband_group **buckets,
			     unsigned int hash_bits);

struct ioband_group *
ioband_group_table_find(const struct ioband_group_table *table, u64 id);

/* Adds @group; false, changing nothing, when its id is already there. */
bool ioband_group_table_insert(struct ioband_group_table *table,
			       struct ioband_group *group);

void ioband_group_table_remove(struct ioband_group_table *table,
			       struct ioband_group *group);
#endif /* !__KERNEL__ */

void ioband_group_account(struct ioband_group *group, enum ioband_dir dir,
			  u64 sectors);

/* A held bio of @group goes down after waiting @wait_ns. */
void ioband_group_account_wait(struct ioband_group *group, u64 wait_ns);

bool ioband_weight_valid(unsigned long long weight);

/*
 * Parses "<id>:<weight>" (a table's group argument) or ":<weight>" (the
 * default group's, with @id left untouched and *@is_default set). With
 * @bare_weight, a plain "<weight>" is the default group's too, as the
 * weight message allows.
 * Returns 0, or -1 when the text is malformed or a number is out of range.
 */
int ioband_parse_group_weight(const char *text, bool bare_weight, u64 *id,
			      u32 *weight, bool *is_default);

/* Flags of ioband_parse_group_spec(). */
#define IOBAND_SPEC_BARE	0x1	/* "<v>" alone is the default group's */
#define IOBAND_SPEC_MINUS_ONE	0x2	/* "-1:..." is the default group's */
#define IOBAND_MAX_SPEC_VALUES	3

/*
 * Parses a group argument "<id>:<v1>[:<v2>[:<v3>]]" with exactly
 * @nr_values values, or the default group's ":<v1>..." (with @id left
 * untouched and *@is_default set). The values are not range-checked.
 * Returns 0, or -1 when the text is malformed.
 */
int ioband_parse_group_spec(const char *text, unsigned int flags,
			    unsigned int nr_values, u64 *id, bool *is_default,
			    u64 *values);

/* Parses a whole decimal u64: 0, or -1 when malformed or too big. */
int ioband_parse_u64(const char *text, u64 *value);

/*
 * The table's and the messages' text: what dm_split_args() made of a
 * table line or of a dmsetup message, parsed and checked here so that the
 * kernel glue only applies the result and the fuzzers see every rule.
 */

/* Room for an error of the parsers below: longer ones are cut. */
#define IOBAND_ERROR_MAX	256

/* Room for a group argument as ioband_format_group_arg() writes it. */
#define IOBAND_GROUP_ARG_MAX	64

enum ioband_group_type {
	IOBAND_TYPE_NONE,
	IOBAND_TYPE_CGROUP,
	IOBAND_TYPE_UID,
	IOBAND_TYPE_GID,
	IOBAND_TYPE_PID,
	IOBAND_TYPE_PGRP,
};

/*
 * Group types are kept by their index in the table's spellings ("user"
 * is another name for "uid"), so that the status says what the table did.
 * Returns the index of @name, or -1.
 */
int ioband_parse_group_type(const char *name);
const char *ioband_group_type_name(unsigned int type_index);
enum ioband_group_type ioband_group_type_of(unsigned int type_index);

/* Returns the policy @name spells, or -1. */
int ioband_parse_policy(const char *name);
const char *ioband_policy_name(enum ioband_policy policy);

/* What a group argument carries after "<id>:" (or ":" for the default). */
enum ioband_spec {
	IOBAND_SPEC_WEIGHT,		/* <weight> */
	IOBAND_SPEC_RANGE,		/* <min>:<max> */
	IOBAND_SPEC_WEIGHT_RANGE,	/* <weight>:<min>:<max> */
	IOBAND_SPEC_ID,			/* nothing: "<id>" alone */
};

/* The group arguments of a table under @policy. */
enum ioband_spec ioband_policy_spec(enum ioband_policy policy);

/* How many values follow the id of a group argument of @spec. */
unsigned int ioband_spec_nr_values(enum ioband_spec spec);

static inline bool ioband_spec_has_weight(enum ioband_spec spec)
{
	return spec == IOBAND_SPEC_WEIGHT || spec == IOBAND_SPEC_WEIGHT_RANGE;
}

static inline bool ioband_spec_has_range(enum ioband_spec spec)
{
	return spec == IOBAND_SPEC_RANGE || spec == IOBAND_SPEC_WEIGHT_RANGE;
}

/* A group argument, range-checked: @spec says which values it gives. */
struct ioband_group_arg {
	u64 id;				/* 0 for the default group */
	bool is_default;
	enum ioband_spec spec;
	u32 weight;			/* IOBAND_MIN_WEIGHT..IOBAND_MAX_WEIGHT */
	u32 min_kbps;			/* min <= max, or max 0: no limit */
	u32 max_kbps;
};

/*
 * Parses a group argument of @spec (not IOBAND_SPEC_ID), with the
 * IOBAND_SPEC_BARE and IOBAND_SPEC_MINUS_ONE @flags. Returns 0, or -1 when
 * the text is malformed or a value is out of range.
 */
int ioband_parse_group_arg(const char *text, enum ioband_spec spec,
			   unsigned int flags, struct ioband_group_arg *arg);

/*
 * Writes @arg as a table spells it, "<id>:<values>" or ":<values>", into
 * @buf of @size bytes (IOBAND_GROUP_ARG_MAX is enough); returns what
 * snprintf() does.
 */
int ioband_format_group_arg(char *buf, size_t size,
			    const struct ioband_group_arg *arg);

/*
 * A table's arguments, parsed by ioband_parse_table():
 *
 *   <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *   <policy> <token_base> [<group>]... [<key>=<value>]...
 *
 * the original dm-ioband's grammar, extended compatibly: a group may also
 * be given in weight-range's full form <id>:<weight>:<min>:<max> under any
 * policy (so that the table keeps a weight policy's ranges and range-bw's
 * weights), and knobs the positional arguments lack come last as
 * key=value: carryover=<n> (default IOBAND_DEFAULT_CARRYOVER).
 */
struct ioband_table {
	const char *device;
	const char *domain_id;
	unsigned int type_index;
	struct ioband_sched_params params;	/* valid */
	enum ioband_spec spec;		/* of the policy's group arguments */
	unsigned int nr_groups;		/* "<id>:..." arguments */
	unsigned int nr_group_args;	/* and the default group's, if given */
	char **group_args;		/* see ioband_parse_table_group() */
	unsigned int nr_knobs;		/* key=value arguments after them */
};

/*
 * Parses and checks a whole table (the arguments after "ioband"). Returns
 * NULL, or the error for the table (a constant string that names the
 * argument and why). A malformed or out-of-range group argument or knob
 * also writes which and the grammar into @detail (@size bytes), which is
 * "" otherwise. One error is left to the caller: a group id given twice.
 */
const char *ioband_parse_table(struct ioband_table *table, unsigned int argc,
			       char **argv, char *detail, size_t size);

/*
 * Parses group argument @i of a table that ioband_parse_table() accepted,
 * in the policy's form or the full one (arg->spec says which): 0, or -1
 * for an index the parser did not check.
 */
int ioband_parse_table_group(const struct ioband_table *table,
			     unsigned int i, struct ioband_group_arg *arg);

/*
 * The form in which a table under @policy spells a group of @arg's
 * weight and range: the policy's own when it says everything, else the
 * full <weight>:<min>:<max> (a range under a weight policy, a weight
 * other than the default under range-bw).
 */
enum ioband_spec ioband_table_spec(enum ioband_policy policy,
				   const struct ioband_group_arg *arg);

/*
 * Writes the knobs of @params that differ from their defaults, each as
 * " <key>=<value>", into @buf of @size bytes ("" when none does); returns
 * what snprintf() does.
 */
int ioband_format_table_knobs(char *buf, size_t size,
			      const struct ioband_sched_params *params);

/* The messages. */
enum ioband_message_kind {
	IOBAND_MSG_NONE,		/* not a message: wrong name or count */
	IOBAND_MSG_ATTACH,		/* group: <id>[:<weight>] */
	IOBAND_MSG_DETACH,		/* group: <id> */
	IOBAND_MSG_WEIGHT,		/* group: [<id>:]<weight> */
	IOBAND_MSG_POLICY,		/* value: the policy */
	IOBAND_MSG_RANGE_BW,		/* group: <id>|-1|"":<min>:<max> */
	IOBAND_MSG_TYPE,		/* value: the group type's index */
	IOBAND_MSG_TOKEN,		/* value: token_base */
	IOBAND_MSG_CARRYOVER,		/* value */
	IOBAND_MSG_IO_LIMIT,		/* value */
	IOBAND_MSG_IO_THROTTLE,		/* value */
	IOBAND_MSG_RESET,
	IOBAND_MSG_STATS,
	IOBAND_NR_MESSAGES
};

/* A message, parsed and range-checked by ioband_parse_message(). */
struct ioband_message {
	enum ioband_message_kind kind;
	const char *arg;		/* argv[1] as given, NULL when none */
	struct ioband_group_arg group;
	u32 value;
};

/* The message's name, as the kernel log spells it. */
const char *ioband_message_name(enum ioband_message_kind kind);

/*
 * Parses a dmsetup message. Returns 0, or -1 with what is wrong (which
 * argument, and why) in @error of @size bytes. msg->kind is set as soon
 * as the name and the count are known, even if the argument is then
 * refused.
 */
int ioband_parse_message(struct ioband_message *msg, unsigned int argc,
			 char **argv, char *error, size_t size);

/* Why the glue could not apply a parsed message. */
enum ioband_message_fault {
	IOBAND_FAULT_NONE,
	IOBAND_FAULT_NO_GROUPS,		/* attach under group_type none */
	IOBAND_FAULT_ATTACHED,		/* attach: the id is attached */
	IOBAND_FAULT_NOT_ATTACHED,	/* detach, weight, range-bw */
	IOBAND_FAULT_REFUSED,		/* range-bw, a knob: out of range */
	IOBAND_FAULT_BUSY,		/* type: groups are attached */
	IOBAND_FAULT_NO_MEMORY,		/* attach */
	IOBAND_FAULT_NOT_RESUMED,	/* the table is not resumed yet */
	IOBAND_FAULT_TOO_DEEP,		/* attach: nested too deep */
};

/* Writes what the kernel log says of @fault on @msg into @error. */
void ioband_message_error(const struct ioband_message *msg,
			  enum ioband_message_fault fault, char *error,
			  size_t size);

#endif /* IOBAND_CORE_H */
