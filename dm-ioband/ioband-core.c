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
 * that a tenant's child cgroups stay inside the tenant's share) and asks
 * ioband_group_find() for each id from the nearest up.
 *
 *      /sys/fs/cgroup            id 1      not attached
 *       |-- tenant-a             id 4021   attached, weight 200
 *       |    `-- build           id 4187   not attached -> tenant-a
 *       `-- tenant-b             id 4090   attached, weight 100
 *      kernel threads, root      -> default group, weight :100
 *
 * 3. Cost
 *
 * Groups live in a chained hash table keyed by id, sized by the caller
 * with ioband_hash_bits_for() to about one group per bucket, so a lookup
 * costs the same with 2 groups or 10,000: a multiply, a shift and a short
 * chain walk. Classifying a bio costs one lookup per cgroup level. Groups
 * are also kept in attach order on a singly linked list, which only the
 * status and table reports walk.
 *
 * The core allocates nothing and takes no locks: the caller owns memory
 * (groups, buckets) and serialises calls on one set.
 */
#include "ioband-core.h"

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

void ioband_group_set_init(struct ioband_group_set *set,
			   struct ioband_group **buckets,
			   unsigned int hash_bits)
{
	struct ioband_group_set empty = { 0 };

	*set = empty;
	set->buckets = buckets;
	set->hash_bits = hash_bits;
}

struct ioband_group *ioband_group_find(const struct ioband_group_set *set,
				       u64 id)
{
	struct ioband_group *group;

	group = set->buckets[ioband_hash(id, set->hash_bits)];
	while (group && group->id != id)
		group = group->hash_next;
	return group;
}

bool ioband_group_attach(struct ioband_group_set *set,
			 struct ioband_group *group)
{
	struct ioband_group **bucket;

	if (ioband_group_find(set, group->id))
		return false;

	bucket = &set->buckets[ioband_hash(group->id, set->hash_bits)];
	group->hash_next = *bucket;
	*bucket = group;

	group->next = NULL;
	group->prev = set->last;
	if (set->last)
		set->last->next = group;
	else
		set->first = group;
	set->last = group;
	set->nr_groups++;
	return true;
}

void ioband_group_detach(struct ioband_group_set *set,
			 struct ioband_group *group)
{
	struct ioband_group **link;

	link = &set->buckets[ioband_hash(group->id, set->hash_bits)];
	while (*link != group)
		link = &(*link)->hash_next;
	*link = group->hash_next;

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
	group->hash_next = NULL;
	set->nr_groups--;
}

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
	u64 parsed_id = *id, value;
	bool dflt;

	if (ioband_parse_group_spec(text, bare_weight ? IOBAND_SPEC_BARE : 0,
				    1, &parsed_id, &dflt, &value) ||
	    !ioband_weight_valid(value))
		return -1;
	*id = parsed_id;
	*is_default = dflt;
	*weight = (u32)value;
	return 0;
}
