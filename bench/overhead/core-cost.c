// SPDX-License-Identifier: GPL-2.0
/*
 * The per-bio work of dm-ioband's core, in a loop, for counting
 * instructions with callgrind: classify (hash lookup of the group),
 * submit, dispatch and complete, with every group backlogged.
 *
 *   core-cost GROUPS BIOS [weight|weight-iosize|weight-range]
 *
 * run-overhead runs it twice per group count, with two numbers of bios,
 * and divides the difference of the instruction counts by the difference
 * of bios dispatched, so that the set-up cost drops out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-core.h"
#include "ioband-sched.h"

/* Bios each group may have outstanding: 64 in all, at least 2 each. */
#define OUTSTANDING	64
#define IO_LIMIT	32

enum slot_state { SLOT_FREE, SLOT_HELD, SLOT_IN_FLIGHT };

struct bio_slot {
	struct ioband_sched_item item;	/* first: the core hands it back */
	enum slot_state state;
	unsigned int group;
	struct bio_slot *next_free;	/* the group's free slots */
};

static struct bio_slot **free_slots;	/* per group */

/* The device: completes in the order it was given bios. */
static struct bio_slot *device[IO_LIMIT];
static unsigned int device_head, device_count;

static void device_add(struct bio_slot *slot)
{
	slot->state = SLOT_IN_FLIGHT;
	device[(device_head + device_count++) % IO_LIMIT] = slot;
}

static u64 lcg_state = 88172645463325252ULL;

static u32 next_random(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (u32)(lcg_state >> 33);
}

int main(int argc, char **argv)
{
	unsigned int nr_groups, i, hash_bits, nr_slots, per_group;
	enum ioband_policy policy = IOBAND_POLICY_WEIGHT;
	struct ioband_sched_params params;
	struct ioband_group_set set;
	struct ioband_group **buckets;
	struct ioband_group *groups;
	struct ioband_sched sched;
	struct bio_slot *slots;
	unsigned long long nr_bios, n;
	u64 now_ns = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: core-cost GROUPS BIOS [weight|weight-iosize|weight-range]\n");
		return 2;
	}
	nr_groups = strtoul(argv[1], NULL, 10);
	nr_bios = strtoull(argv[2], NULL, 10);
	if (argc > 3 && !strcmp(argv[3], "weight-iosize"))
		policy = IOBAND_POLICY_WEIGHT_IOSIZE;
	else if (argc > 3 && !strcmp(argv[3], "weight-range"))
		policy = IOBAND_POLICY_WEIGHT_RANGE;
	if (!nr_groups || !nr_bios)
		return 2;

	ioband_sched_params_default(&params, policy);
	params.io_limit = IO_LIMIT;
	params.io_throttle = 4;
	ioband_sched_init(&sched, &params);

	hash_bits = ioband_hash_bits_for(nr_groups);
	buckets = calloc(1U << hash_bits, sizeof(*buckets));
	groups = calloc(nr_groups, sizeof(*groups));
	per_group = nr_groups < OUTSTANDING / 2 ? OUTSTANDING / nr_groups : 2;
	nr_slots = nr_groups * per_group;
	slots = calloc(nr_slots, sizeof(*slots));
	free_slots = calloc(nr_groups, sizeof(*free_slots));
	if (!buckets || !groups || !slots || !free_slots)
		return 1;
	for (i = 0; i < nr_slots; i++) {
		slots[i].group = i / per_group;
		slots[i].next_free = free_slots[slots[i].group];
		free_slots[slots[i].group] = &slots[i];
	}
	ioband_group_set_init(&set, buckets, hash_bits);
	for (i = 0; i < nr_groups; i++) {
		/* cgroup ids are inode numbers: sparse, increasing. */
		groups[i].id = 4000 + 7ULL * i;
		ioband_group_attach(&set, &groups[i]);
		ioband_sched_entity_init(&sched, &groups[i].entity,
					 1 + next_random() % IOBAND_MAX_WEIGHT);
	}

	for (n = 0; n < nr_bios; n++) {
		struct ioband_sched_item *item;
		struct ioband_group *group;
		struct bio_slot *slot;
		u32 g = next_random() % nr_groups;

		now_ns += 1000;
		if (device_count == IO_LIMIT) {
			slot = device[device_head];
			device_head = (device_head + 1) % IO_LIMIT;
			device_count--;
			ioband_sched_complete(&sched, &slot->item);
			slot->state = SLOT_FREE;
			slot->next_free = free_slots[slot->group];
			free_slots[slot->group] = slot;
		}
		group = ioband_group_find(&set, 4000 + 7ULL * g);
		slot = free_slots[g];
		if (slot) {
			free_slots[g] = slot->next_free;
			ioband_sched_item_init(&slot->item, 8, IOBAND_READ);
			slot->state = SLOT_HELD;
			if (ioband_sched_submit(&sched, &group->entity,
						&slot->item, now_ns))
				device_add(slot);
		}
		while ((item = ioband_sched_next(&sched, NULL, now_ns)))
			device_add((struct bio_slot *)item);
	}
	printf("groups %u bios %llu dispatched %llu\n", nr_groups, nr_bios,
	       (unsigned long long)sched.stats.dispatched);
	free(free_slots);
	free(slots);
	free(groups);
	free(buckets);
	return 0;
}
