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

/* Smallest hash table: 2^IOBAND_MIN_HASH_BITS buckets. */
#define IOBAND_MIN_HASH_BITS	6

/* What the status and the stats message report for one group. */
struct ioband_group_stats {
	u64 ios[IOBAND_NR_DIRS];
	u64 delayed[IOBAND_NR_DIRS];	/* bios that had to wait in ioband */
	u64 sectors[IOBAND_NR_DIRS];
	u64 wait_ns;			/* held in ioband, all bios */
	u64 wait_max_ns;		/* longest one bio was held */
	u64 service_ns;			/* dispatch to completion below */
};

struct ioband_group {
	u64 id;				/* cgroup id, uid, ...; unused for the default group */
	struct ioband_sched_entity entity;	/* its weight and held bios */
	struct ioband_group_stats stats;
	u32 in_flight;			/* dispatched, not completed */
	bool detached;			/* freed when in_flight drops to 0 */
	struct ioband_group *hash_next;	/* chain of the id's hash bucket */
	struct ioband_group *next;	/* attach order, for status and table */
	struct ioband_group *prev;
};

/*
 * The groups of one target: a default group, which takes every bio whose
 * owner is not attached, plus the attached groups, found by id through a
 * chained hash table of 2^hash_bits buckets.
 */
struct ioband_group_set {
	struct ioband_group default_group;
	struct ioband_group **buckets;
	unsigned int hash_bits;
	unsigned int nr_groups;		/* attached groups, default excluded */
	struct ioband_group *first;	/* attach order */
	struct ioband_group *last;
};

/* Bucket count that keeps chains short for nr_groups groups. */
unsigned int ioband_hash_bits_for(unsigned int nr_groups);

/* @buckets: 2^@hash_bits zeroed pointers, owned by the caller. */
void ioband_group_set_init(struct ioband_group_set *set,
			   struct ioband_group **buckets,
			   unsigned int hash_bits);

struct ioband_group *ioband_group_find(const struct ioband_group_set *set,
				       u64 id);

/*
 * Adds @group, whose id the caller has set. Returns false,
 * changing nothing, when a group with that id is already attached.
 */
bool ioband_group_attach(struct ioband_group_set *set,
			 struct ioband_group *group);

/* Takes @group out of @set: it is found no more and listed no more. */
void ioband_group_detach(struct ioband_group_set *set,
			 struct ioband_group *group);

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

#endif /* IOBAND_CORE_H */
