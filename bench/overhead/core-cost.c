// SPDX-License-Identifier: GPL-2.0
/*
 * The per-bio work of dm-ioband's core under load, in a closed loop, for
 * counting instructions (callgrind) and time (TSC ticks, run natively):
 * classify (the hash lookup of the group), submit, dispatch, complete.
 *
 *   core-cost GROUPS BIOS [weight|weight-iosize|weight-range] [table|message]
 *             [flat|tree4]
 *
 * Every group owns SLOTS bios (64 / GROUPS, at least 2) and keeps all of
 * them outstanding: they are all submitted at the start, and each
 * completion's bio is submitted again at once by its group. The device
 * takes what the scheduler dispatches and completes it in order, one per
 * step (NS_PER_COMPLETION of the harness's clock), so the scheduler keeps
 * its window full, the window it learns from these completions, and holds
 * the rest: every group is backlogged all the time (the output's queued,
 * in_flight and tree_steps say so). `table` (default): all GROUPS groups
 * are in the table, the hash table is sized for them; `message`: the table
 * has one group and the others are attached afterwards, as by the attach
 * message, into a hash table sized for the table's one that doubles once
 * it holds more than 3/4 of its buckets' groups, as the kernel's
 * rhashtable does.
 *
 * run-overhead counts instructions for two numbers of bios and divides the
 * difference by the difference of bios dispatched, so that the set-up drops
 * out; the TSC ticks are measured here around the loop only.
 *
 * tree4: the groups nest as cgroups (section 19 of the design), ten
 * children each, four levels below the first group (10,000 groups: 1,
 * 10, 100, 1,000 and 8,889 a level), every one with bios of its own.
 *
 * After the loop, with every group still backlogged, the policy switches
 * to range-bw and back (to weight from weight-range): the one section
 * under the kernel's domain lock whose work grows with the groups.
 * switch_ns reports the longer of the two, in nanoseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#include "ioband-core.h"
#include "ioband-sched.h"

#define OUTSTANDING	64	/* bios per group: OUTSTANDING / GROUPS, at least 2 */
#define IO_LIMIT	0	/* the table's io_limit: none, the window decides */
#define NS_PER_COMPLETION 1000	/* the device: one completion per microsecond */

struct bio_slot {
	struct ioband_sched_item item;	/* first: the core hands it back */
	struct ioband_group *group;
};

/*
 * The scheduler's calls, in one place: its interface is being reworked
 * (issue 16), and this is what has to follow it.
 */
static bool core_submit(struct ioband_sched *sched, struct bio_slot *slot,
			u64 now_ns)
{
	ioband_sched_item_init(&slot->item, 8, IOBAND_READ, 0);
	return ioband_sched_submit(sched, &slot->group->entity, &slot->item,
				   now_ns);
}

static struct bio_slot *core_next(struct ioband_sched *sched, u64 now_ns)
{
	return (struct bio_slot *)ioband_sched_next(sched, NULL, now_ns);
}

static void core_complete(struct ioband_sched *sched, struct bio_slot *slot,
			  u64 now_ns)
{
	ioband_sched_complete(sched, &slot->group->entity, &slot->item, now_ns);
}

/* The device: a FIFO of every bio in flight (at most all of them). */
static struct bio_slot **device;
static unsigned int device_size, device_head, device_count;

static void device_add(struct bio_slot *slot)
{
	device[(device_head + device_count++) % device_size] = slot;
}

static struct bio_slot *device_take(void)
{
	struct bio_slot *slot = device[device_head];

	device_head = (device_head + 1) % device_size;
	device_count--;
	return slot;
}

static u64 lcg_state = 88172645463325252ULL;

static u32 next_random(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(lcg_state >> 33);
}

static u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static u64 ticks(void)
{
#ifdef HAVE_TSC
	return __rdtsc();
#else
	return monotonic_ns();
#endif
}

/*
 * The longer of two policy switches, away from @policy (to range-bw, or
 * to weight from a range policy) and back: each re-sorts the backlogged
 * groups when it crosses between a weight and a range policy.
 */
static u64 policy_switch_ns(struct ioband_sched *sched,
			    enum ioband_policy policy)
{
	enum ioband_policy other = ioband_policy_is_range(policy) ?
				   IOBAND_POLICY_WEIGHT : IOBAND_POLICY_RANGE_BW;
	u64 t0, t1, t2;

	t0 = monotonic_ns();
	ioband_sched_set_policy(sched, other);
	t1 = monotonic_ns();
	ioband_sched_set_policy(sched, policy);
	t2 = monotonic_ns();
	return t1 - t0 > t2 - t1 ? t1 - t0 : t2 - t1;
}

/* cgroup ids are inode numbers: sparse, increasing. */
static u64 group_id(unsigned int i)
{
	return 4000 + 7ULL * i;
}

/* The group index: grown, as the kernel's, past 3/4 of a group a bucket. */
static struct ioband_group_table table;

static int table_grow(const struct ioband_group_set *set)
{
	unsigned int bits = table.hash_bits + 1;
	struct ioband_group **buckets = calloc(1U << bits, sizeof(*buckets));
	struct ioband_group *group;

	if (!buckets)
		return -1;
	free(table.buckets);
	ioband_group_table_init(&table, buckets, bits);
	for (group = set->first; group; group = group->next)
		ioband_group_table_insert(&table, group);
	return 0;
}

static int attach(struct ioband_sched *sched, struct ioband_group_set *set,
		  struct ioband_group *group, unsigned int i)
{
	group->id = group_id(i);
	ioband_group_set_add(set, group);
	ioband_group_table_insert(&table, group);
	ioband_sched_entity_init(sched, &group->entity,
				 1 + next_random() % IOBAND_MAX_WEIGHT);
	if (set->nr_groups > 3 * (1U << table.hash_bits) / 4)
		return table_grow(set);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int nr_groups, i, nr_slots, per_group, in_table, backlogged;
	enum ioband_policy policy = IOBAND_POLICY_WEIGHT;
	unsigned long long nr_bios, n, queued_sum = 0, flight_sum = 0;
	struct ioband_sched_params params;
	struct ioband_group_set set;
	struct ioband_group **buckets;
	struct ioband_group *groups;
	unsigned int bits;
	struct ioband_sched sched;
	struct bio_slot *slots, *slot;
	u64 now_ns = 0, t0, t1, steps0, disp0;

	if (argc < 3) {
		fprintf(stderr, "usage: core-cost GROUPS BIOS [weight|weight-iosize|weight-range] [table|message] [flat|tree4]\n");
		return 2;
	}
	nr_groups = strtoul(argv[1], NULL, 10);
	nr_bios = strtoull(argv[2], NULL, 10);
	if (argc > 3 && !strcmp(argv[3], "weight-iosize"))
		policy = IOBAND_POLICY_WEIGHT_IOSIZE;
	else if (argc > 3 && !strcmp(argv[3], "weight-range"))
		policy = IOBAND_POLICY_WEIGHT_RANGE;
	in_table = argc > 4 && !strcmp(argv[4], "message") ? 1 : nr_groups;
	if (!nr_groups || !nr_bios)
		return 2;

	ioband_sched_params_default(&params, policy);
	params.io_limit = IO_LIMIT;
	ioband_sched_init(&sched, &params);

	per_group = nr_groups < OUTSTANDING / 2 ? OUTSTANDING / nr_groups : 2;
	nr_slots = nr_groups * per_group;
	bits = ioband_hash_bits_for(in_table);
	buckets = calloc(1U << bits, sizeof(*buckets));
	groups = calloc(nr_groups, sizeof(*groups));
	slots = calloc(nr_slots, sizeof(*slots));
	device_size = nr_slots;
	device = calloc(device_size, sizeof(*device));
	if (!buckets || !groups || !slots || !device)
		return 1;
	ioband_group_set_init(&set);
	ioband_group_table_init(&table, buckets, bits);
	for (i = 0; i < nr_groups; i++)
		if (attach(&sched, &set, &groups[i], i))
			return 1;
	if (argc > 5 && !strcmp(argv[5], "tree4"))
		for (i = 1; i < nr_groups; i++)
			ioband_sched_set_parent(&sched, &groups[i].entity,
						&groups[(i - 1) / 10].entity);

	/* Every slot outstanding: what the window does not take is held. */
	for (i = 0; i < nr_slots; i++) {
		slot = &slots[i];
		slot->group = ioband_group_table_find(&table,
						      group_id(i / per_group));
		if (core_submit(&sched, slot, now_ns))
			device_add(slot);
	}
	while ((slot = core_next(&sched, now_ns)))
		device_add(slot);

	steps0 = sched.stats.tree_steps;
	disp0 = sched.stats.dispatched;
	t0 = ticks();
	for (n = 0; n < nr_bios && device_count; n++) {
		now_ns += NS_PER_COMPLETION;
		slot = device_take();
		core_complete(&sched, slot, now_ns);
		/* Its group submits it again at once, classified anew. */
		slot->group = ioband_group_table_find(&table, slot->group->id);
		if (core_submit(&sched, slot, now_ns))
			device_add(slot);
		while ((slot = core_next(&sched, now_ns)))
			device_add(slot);
		queued_sum += sched.nr_queued;
		flight_sum += sched.in_flight;
	}
	t1 = ticks();
	if (n < nr_bios) {
		fprintf(stderr, "core-cost: the device ran dry after %llu bios\n", n);
		return 1;
	}
	printf("groups %u bios %llu dispatched %llu queued %.1f in_flight %.1f tree_steps %.2f %s %.1f",
	       nr_groups, nr_bios, (unsigned long long)sched.stats.dispatched,
	       (double)queued_sum / n, (double)flight_sum / n,
	       (double)(sched.stats.tree_steps - steps0) / (sched.stats.dispatched - disp0),
#ifdef HAVE_TSC
	       "tsc_per_bio",
#else
	       "ns_per_bio",
#endif
	       (double)(t1 - t0) / n);
	for (i = 0, backlogged = 0; i < nr_groups; i++)
		backlogged += groups[i].entity.nr_queued > 0;
	printf(" backlogged %u switch_ns %llu\n", backlogged,
	       (unsigned long long)policy_switch_ns(&sched, policy));
	free(device);
	free(slots);
	free(groups);
	free(table.buckets);
	return 0;
}
