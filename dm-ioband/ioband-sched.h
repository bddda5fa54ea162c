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
	IOBAND_POLICY_RANGE_BW,		/* min and max KB/s, rest equally */
	IOBAND_POLICY_WEIGHT_RANGE,	/* min and max KB/s, rest by weight */
	IOBAND_NR_POLICIES
};

/* The policies that use each group's min and max (section 8). */
static inline bool ioband_policy_is_range(enum ioband_policy policy)
{
	return policy == IOBAND_POLICY_RANGE_BW ||
	       policy == IOBAND_POLICY_WEIGHT_RANGE;
}

/* One token of service, at weight 1, advances virtual time by 2^32. */
#define IOBAND_VTIME_SHIFT		32

/* Largest cost charged for one item, in sectors (512 MiB). */
#define IOBAND_MAX_ITEM_COST		(1U << 20)

/*
 * Range policies: a rate in KB/s becomes nanoseconds per sector, scaled
 * by 2^IOBAND_RANGE_SHIFT: 10^9 / (2 * kbps) << 12.
 */
#define IOBAND_RANGE_SHIFT		12
#define IOBAND_NS_PER_SECTOR_AT_1KBPS	500000000ULL

/*
 * How far the reservation tags may lag behind real time (section 10):
 * the most reservation a group catches up after the device could not
 * meet every reservation.
 */
#define IOBAND_RANGE_MAX_LAG_NS		(100ULL * 1000 * 1000)

/*
 * How late a group held back by its max may be served without losing
 * the time (section 9): it may then run ahead of its max by this much.
 */
#define IOBAND_RANGE_LIMIT_BURST_NS	(20ULL * 1000 * 1000)

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
 * A node of one of the domain's red-black trees, with its key (a tag).
 * The children are an array indexed by side, so that one rotation and one
 * body of each fix-up serve a case and its mirror image: @dir names a
 * side, !dir the other.
 */
enum { IOBAND_RB_LEFT, IOBAND_RB_RIGHT };

struct ioband_sched_node {
	struct ioband_sched_node *parent;
	struct ioband_sched_node *child[2];	/* IOBAND_RB_LEFT, _RIGHT */
	u64 key;
	bool red;
};

/* A tree of entities ordered by one tag, leftmost (smallest) cached. */
struct ioband_sched_tree {
	struct ioband_sched_node *root;
	struct ioband_sched_node *leftmost;
};

/*
 * One group's account: a FIFO of held items, its tags, and its nodes in
 * the domain's trees of backlogged groups. Embedded in the group.
 */
struct ioband_sched_entity {
	/*
	 * In ioband_sched.ptree, keyed by the start tag S, while the entity
	 * has queued items (range policies: and is not over its max).
	 * pnode.key is the start tag of the head item.
	 */
	struct ioband_sched_node pnode;

	bool attached;			/* counted in total_weight */
	bool in_ltree;			/* range: held back by its max */
	bool in_rtree;			/* range: has a reservation */
	u32 weight;
	u64 inv_weight;			/* ceil(2^32 / weight) */

	struct ioband_sched_item *head;	/* FIFO of held items */
	struct ioband_sched_item *tail;
	u32 nr_queued;

	u64 finish;			/* finish tag of the last dispatched */
	u32 finish_era;		/* vtime_era when finish was set */

	/* Range policies (section 8); kept, unused, under the others. */
	u32 min_kbps;			/* reservation, 0 = none */
	u32 max_kbps;			/* limit, 0 = none */
	u64 r_ns_per_sector;		/* << IOBAND_RANGE_SHIFT, floor */
	u64 l_ns_per_sector;		/* << IOBAND_RANGE_SHIFT, ceil */
	u64 r_tag;		/* R in ns, while not in rtree */
	u64 l_tag;		/* L in ns: may dispatch from l_tag on */
	struct ioband_sched_node rnode;	/* key: R - r_shift */
	struct ioband_sched_node lnode;	/* key: L, while in_ltree */
	struct ioband_sched_entity *rekey_next;	/* policy switch only */
};

/* The start tag of @e's head item, valid while @e has queued items. */
static inline u64 ioband_sched_start(const struct ioband_sched_entity *e)
{
	return e->pnode.key;
}

struct ioband_sched_stats {
	u64 dispatched;		/* items sent down, passthrough included */
	u64 tree_steps;		/* tree nodes visited, rotations, fix-ups */
	u64 reserved;		/* range: dispatched in the constraint phase */
	u64 throttled;		/* range: times a group went over its max */
	u64 r_shift_ns;		/* range: reservation lag forgiven, ns */
};

/* One bandwidth domain: every target sharing an ioband_device_id. */
struct ioband_sched {
	/*
	 * Backlogged entities ordered by start tag (range policies: those
	 * not over their max).
	 */
	struct ioband_sched_tree ptree;
	/* Range policies: entities of ptree with a reservation, by R. */
	struct ioband_sched_tree rtree;
	/* Range policies: backlogged entities over their max, by L. */
	struct ioband_sched_tree ltree;
	u64 r_shift;		/* rtree keys are R - r_shift */
	u64 now;		/* the latest now_ns given */

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
 * Sets @entity's reservation and limit in KB/s (1 KB/s = 2 sectors per
 * second): 0 means none. False, changing nothing, if @max_kbps is not 0
 * and below @min_kbps. Accepted under every policy, used by the range
 * policies only. Applies at once: the group's R and L tags restart from
 * the latest now_ns the core was given (no credit, no debt).
 */
bool ioband_sched_set_range(struct ioband_sched *sched,
			    struct ioband_sched_entity *entity,
			    u32 min_kbps, u32 max_kbps);

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
 * A bio arrives (from map) at @now_ns, monotonic nanoseconds (the same
 * clock for every call on @sched; only range policies read it). Returns
 * true when it is dispatched now and counted in flight: the caller sends
 * it down. Returns false when it is held: a later ioband_sched_next()
 * returns it. Never blocks.
 */
bool ioband_sched_submit(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_item *item, u64 now_ns);

/*
 * The next held item to send down at @now_ns, now counted in flight, or
 * NULL when nothing is held, io_limit items are already in flight
 * (passthrough ignores io_limit), or (range policies) every group
 * holding items is over its max: then ioband_sched_next_event_ns() says
 * when to call again. *@entity, when @entity is not NULL, is set to the
 * entity it was charged to.
 */
struct ioband_sched_item *ioband_sched_next(struct ioband_sched *sched,
					    struct ioband_sched_entity **entity,
					    u64 now_ns);

/*
 * When ioband_sched_next() may next return an item that it would not
 * return now for want of time rather than of room below: the earliest
 * L tag of a group held back by its max; 0 when no group is held back
 * (always 0 under the weight policies). The caller keeps one timer armed
 * at this time whenever it is not 0 (section 13), and runs its dispatch
 * loop when it fires.
 */
u64 ioband_sched_next_event_ns(const struct ioband_sched *sched);

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
	if (sched->passthrough)
		return sched->nr_queued;
	return sched->ptree.leftmost && sched->in_flight < sched->io_limit;
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
