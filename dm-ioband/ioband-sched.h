/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-ioband's scheduling core: which held bio goes down next.
 *
 * Plain C with no kernel calls, no allocation and no locks, so that the
 * same file is built into dm-ioband.ko and into the userspace tests and
 * simulator. The caller owns every structure and serialises all calls on
 * one struct ioband_sched (one spinlock per bandwidth domain). See
 * ioband-sched.c for the design.
 */
#ifndef IOBAND_SCHED_H
#define IOBAND_SCHED_H

#include "ioband-types.h"

enum ioband_policy {
	IOBAND_POLICY_WEIGHT,		/* one token per IO */
	IOBAND_POLICY_WEIGHT_IOSIZE,	/* one token per sector */
	IOBAND_NR_POLICIES
};

/* One token of service, at weight 1, advances virtual time by 2^32. */
#define IOBAND_VTIME_SHIFT		32

/* Largest cost charged for one item, in sectors (512 MiB). */
#define IOBAND_MAX_ITEM_COST		(1U << 20)

/* Defaults, used when the table gives 0. */
#define IOBAND_DEFAULT_IO_THROTTLE	4
#define IOBAND_DEFAULT_IO_LIMIT		32
#define IOBAND_DEFAULT_TOKEN_BASE	2048	/* IOs, policy weight */
#define IOBAND_DEFAULT_TOKEN_BASE_IOSIZE 16384	/* sectors: 2048 x 4 KiB */
#define IOBAND_DEFAULT_CARRYOVER	2

/* Largest values accepted, so that no tag arithmetic can overflow. */
#define IOBAND_MAX_IO_LIMIT		65536
#define IOBAND_MAX_TOKEN_BASE		(1U << 30)
#define IOBAND_MAX_CARRYOVER		1024

/*
 * The knobs, as the table and the messages give them. A value of 0 for
 * token_base, io_throttle or io_limit selects the default; carryover 0
 * means no credit for idle groups.
 */
struct ioband_sched_params {
	enum ioband_policy policy;
	u32 token_base;
	u32 io_throttle;
	u32 io_limit;
	u32 carryover;
};

/*
 * One held bio, embedded in the bio's per-bio data. The glue fills in
 * sectors and dir (ioband_sched_item_init()) and finds the bio again with
 * container_of(). The core links queued items through @next.
 */
struct ioband_sched_item {
	struct ioband_sched_item *next;
	u32 sectors;
	enum ioband_dir dir;	/* not charged yet; for a later cost model */
};

/*
 * One group's account: a FIFO of held items, its tags, and its node in
 * the domain's tree of backlogged groups. Embedded in the group.
 */
struct ioband_sched_entity {
	/* Node in ioband_sched.root while the entity has queued items. */
	struct ioband_sched_entity *rb_parent;
	struct ioband_sched_entity *rb_left;
	struct ioband_sched_entity *rb_right;
	bool rb_red;

	bool attached;			/* counted in total_weight */
	u32 weight;
	u64 inv_weight;			/* ceil(2^32 / weight) */

	struct ioband_sched_item *head;	/* FIFO of held items */
	struct ioband_sched_item *tail;
	u32 nr_queued;

	u64 start;			/* start tag of the head item */
	u64 finish;			/* finish tag of the last dispatched */
	u32 finish_era;		/* vtime_era when finish was set */
};

struct ioband_sched_stats {
	u64 dispatched;		/* items sent down, passthrough included */
	u64 tree_steps;		/* tree nodes visited, rotations, fix-ups */
};

/* One bandwidth domain: every target sharing an ioband_device_id. */
struct ioband_sched {
	/* Backlogged entities ordered by start tag; leftmost cached. */
	struct ioband_sched_entity *root;
	struct ioband_sched_entity *leftmost;

	u64 vtime;		/* start tag of the latest dispatch */
	u32 vtime_era;	/* times vtime crossed a multiple of 2^62 */
	u64 credit;		/* most vtime an idle group may keep */
	u64 total_weight;	/* of attached entities */
	u32 nr_entities;	/* attached entities */

	u32 nr_queued;		/* items held, all entities */
	u32 in_flight;		/* items dispatched and not completed */
	bool passthrough;

	struct ioband_sched_params params;	/* as given, 0 = default */
	u32 token_base;		/* effective values */
	u32 io_throttle;
	u32 io_limit;

	struct ioband_sched_stats stats;
};

/* The defaults of @policy: what a table with all zeroes asks for. */
void ioband_sched_params_default(struct ioband_sched_params *params,
				 enum ioband_policy policy);

/*
 * True when every knob is within range. io_limit (after defaults) must
 * not be below io_throttle: the messages reject that, and a table should
 * raise io_limit first, as dm-ioband did.
 */
bool ioband_sched_params_valid(const struct ioband_sched_params *params);

/* @params must be valid. Starts with no entity, not in passthrough. */
void ioband_sched_init(struct ioband_sched *sched,
		       const struct ioband_sched_params *params);

/*
 * Changes the knobs live; returns false, changing nothing, when @params
 * is not valid. New values apply from the next dispatch: tags already
 * given are kept, and items in flight beyond a lowered io_limit are
 * waited for rather than recalled.
 */
bool ioband_sched_set_params(struct ioband_sched *sched,
			     const struct ioband_sched_params *params);

/* One knob each, for the messages; false when out of range. */
bool ioband_sched_set_policy(struct ioband_sched *sched,
			     enum ioband_policy policy);
bool ioband_sched_set_token_base(struct ioband_sched *sched, u32 token_base);
bool ioband_sched_set_io_throttle(struct ioband_sched *sched, u32 io_throttle);
bool ioband_sched_set_io_limit(struct ioband_sched *sched, u32 io_limit);
bool ioband_sched_set_carryover(struct ioband_sched *sched, u32 carryover);

/*
 * Attaches @entity to @sched with @weight (IOBAND_MIN_WEIGHT to
 * IOBAND_MAX_WEIGHT, else clamped). The default group's entity is
 * attached like any other. The entity starts at the current virtual time,
 * with no credit.
 */
void ioband_sched_entity_init(struct ioband_sched *sched,
			      struct ioband_sched_entity *entity, u32 weight);

/* Applies from the entity's next dispatch. False if out of range. */
bool ioband_sched_set_weight(struct ioband_sched *sched,
			     struct ioband_sched_entity *entity, u32 weight);

/*
 * Moves @entity's held items to the tail of @heir's queue (normally the
 * default group) and takes @entity out of the domain. @heir may be NULL
 * when @entity holds nothing (a target going away). Items of @entity in
 * flight need nothing more: ioband_sched_complete() does not look at the
 * entity, so the caller may free @entity on return.
 */
void ioband_sched_detach(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_entity *heir);

static inline void ioband_sched_item_init(struct ioband_sched_item *item,
					  u32 sectors, enum ioband_dir dir)
{
	item->next = NULL;
	item->sectors = sectors;
	item->dir = dir;
}

/*
 * A bio arrives (from map). Returns true when it is dispatched now and
 * counted in flight: the caller sends it down. Returns false when it is
 * held: a later ioband_sched_next() returns it. Never blocks.
 */
bool ioband_sched_submit(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_item *item);

/*
 * The next held item to send down, now counted in flight, or NULL when
 * nothing is held or io_limit items are already in flight (passthrough
 * ignores io_limit). *@entity, when @entity is not NULL, is set to the
 * entity it was charged to.
 */
struct ioband_sched_item *ioband_sched_next(struct ioband_sched *sched,
					    struct ioband_sched_entity **entity);

/*
 * An item that was dispatched (by submit or next) has completed. Returns
 * ioband_sched_has_work(): whether the caller should run its dispatch
 * loop.
 */
bool ioband_sched_complete(struct ioband_sched *sched,
			   struct ioband_sched_item *item);

/*
 * True when ioband_sched_next() would return an item now. The caller
 * runs its dispatch loop whenever this may have turned true: after a
 * completion (ioband_sched_complete() returns it), and after raising
 * io_limit, turning passthrough on or detaching a group.
 */
static inline bool ioband_sched_has_work(const struct ioband_sched *sched)
{
	return sched->leftmost &&
	       (sched->passthrough || sched->in_flight < sched->io_limit);
}

/*
 * While on, submit dispatches every item at once, uncharged, and next
 * returns every held item regardless of io_limit: for presuspend, which
 * must drain. Turning it on makes ioband_sched_has_work() true while
 * anything is held.
 */
void ioband_sched_set_passthrough(struct ioband_sched *sched, bool on);

/* Nothing held and nothing in flight: a drain is complete. */
static inline bool ioband_sched_idle(const struct ioband_sched *sched)
{
	return !sched->nr_queued && !sched->in_flight;
}

#endif /* IOBAND_SCHED_H */
