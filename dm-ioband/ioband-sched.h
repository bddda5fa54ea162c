/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-ioband's scheduling core: which held bio goes down next.
 *
 * Plain C with no kernel calls, no allocation and no locks, so that the
 * same file is built into dm-ioband.ko and into the userspace tests and
 * simulator. The caller owns every structure and serialises all calls on
 * one struct ioband_sched (one spinlock per bandwidth domain). The design
 * is Documentation/ioband-design.rst, whose sections the comments below
 * cite as "section N".
 */
#ifndef IOBAND_SCHED_H
#define IOBAND_SCHED_H

#include "ioband-types.h"

enum ioband_policy {
	IOBAND_POLICY_WEIGHT,		/* one token per IO */
	IOBAND_POLICY_WEIGHT_IOSIZE,	/* one token per sector */
	IOBAND_POLICY_RANGE_BW,		/* min and max KB/s, rest equally */
	IOBAND_POLICY_WEIGHT_RANGE,	/* min and max KB/s, rest by weight */
	IOBAND_POLICY_WEIGHT_TIME,	/* device time, learnt (section 18) */
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
#define IOBAND_DEFAULT_TOKEN_BASE	2048	/* IOs, policy weight */
#define IOBAND_DEFAULT_TOKEN_BASE_IOSIZE 16384	/* sectors: 2048 x 4 KiB */
#define IOBAND_DEFAULT_CARRYOVER	2
/*
 * With token_base left at its default, an epoch hands out at most what
 * the device served in this long at its measured rate (the window's, in
 * sectors, or in bios under weight): 16384 sectors is 4 ms of a 2 GB/s
 * SSD but 4 s of a disk reading 4 KiB at random, where a group back
 * from 2 s of idling took the whole disk for 3 s.
 */
#define IOBAND_EPOCH_MAX_NS		(100ULL * 1000 * 1000)

/*
 * The dispatch window (section 14): what may be in flight below us, in
 * sectors, sized from the device's measured rate and latency. Never below
 * IOBAND_WINDOW_MIN_SECTORS (8 KiB) nor above IOBAND_WINDOW_MAX_SECTORS
 * (64 MiB); the rate is measured over periods of IOBAND_WINDOW_PERIOD_NS
 * and the latest IOBAND_WINDOW_RATE_PERIODS of them count; the least
 * latency of each of IOBAND_WINDOW_SIZE_CLASSES size classes (powers of
 * two of sectors) is forgotten after IOBAND_WINDOW_MIN_LAT_NS without a
 * new one.
 */
#define IOBAND_WINDOW_MIN_SECTORS	16
#define IOBAND_WINDOW_MAX_SECTORS	(1U << 17)
#define IOBAND_WINDOW_GAIN		2
#define IOBAND_WINDOW_PERIOD_NS		(50ULL * 1000 * 1000)
#define IOBAND_WINDOW_RATE_PERIODS	8
#define IOBAND_WINDOW_MIN_LAT_NS	(10ULL * 1000 * 1000 * 1000)
#define IOBAND_WINDOW_SIZE_CLASSES	12
/*
 * Under weight-time the window counts items (section 14): twice the
 * channels the model's service times kept busy at best over the latest
 * IOBAND_WINDOW_RATE_PERIODS of its periods, and at least
 * IOBAND_WINDOW_MIN_ITEMS; one of its periods in
 * IOBAND_WINDOW_PROBE_PERIODS, and the first, no more than those
 * channels (1 item for the first), so that bios find a channel free and
 * the model's least latencies stay service times.
 */
#define IOBAND_WINDOW_MIN_ITEMS		2
#define IOBAND_WINDOW_PROBE_PERIODS	8
/*
 * While the device completes inline (section 14), what may be in flight
 * below us: 4 MiB, or the window if it is larger. Never reached by a
 * device that completes inline; it bounds what one that stops doing so
 * gets past the weights before its first completion says so.
 */
#define IOBAND_INLINE_MAX_SECTORS	8192
/*
 * Each time the open window closes, the device must complete 2^6 times
 * as many whole periods inline before it opens again: one at first, then
 * 64 (3.2 s), 4096 (3.4 min), and at most 262144 (3.6 h). A device with a
 * queue that the window fed at its rate looks inline between its
 * completions from elsewhere; it gets its 4 MiB past the weights a few
 * times, not every few periods (section 14).
 */
#define IOBAND_INLINE_BACKOFF_SHIFT	6
#define IOBAND_INLINE_MAX_BACKOFFS	3

/*
 * An item in flight for IOBAND_OVERDUE_LATENCIES times the device's mean
 * latency, and at least IOBAND_OVERDUE_MIN_NS, is overdue: lost or stuck
 * below (a disk's error handling, a multipath failover), it no longer
 * counts against the window nor io_limit (section 14a), so that one bio
 * stuck below never stops the domain.
 */
#define IOBAND_OVERDUE_MIN_NS		(1000ULL * 1000 * 1000)
#define IOBAND_OVERDUE_LATENCIES	64

/*
 * How long a group whose queue ran empty stays competing after its last
 * submission or completion (section 15): the most the device may idle
 * for one group's sake at a time.
 */
#define IOBAND_IDLE_NS			(2ULL * 1000 * 1000)
/*
 * A group waits only if its bios come back within this many of the
 * device's mean latencies (section 15).
 */
#define IOBAND_WAIT_LATENCIES		2

/*
 * Writeback backpressure (section 17): a group may hold this long of the
 * device's rate of writeback, and never less than
 * IOBAND_WRITEBACK_HOLD_MIN_SECTORS (1 MiB), before its flusher waits;
 * a wait rechecks at least every IOBAND_WRITEBACK_WAIT_POLL_NS.
 */
#define IOBAND_WRITEBACK_HOLD_NS		(50ULL * 1000 * 1000)
#define IOBAND_WRITEBACK_HOLD_MIN_SECTORS	2048
/* 50 ms of @max_kbps (2 sectors a KiB), for a capped group: no floor. */
#define IOBAND_WRITEBACK_HOLD_OF_MAX(max_kbps) \
	((u64)(max_kbps) * 2 * IOBAND_WRITEBACK_HOLD_NS / (1000ULL * 1000 * 1000))
#define IOBAND_WRITEBACK_WAIT_POLL_NS		(100ULL * 1000 * 1000)

/*
 * The most levels of nested attached groups (section 19): an entity's
 * share is worked out over at most this many parents.
 */
#define IOBAND_SCHED_MAX_DEPTH	8

/* The most waiting groups the dispatcher looks past for a backlogged one. */
#define IOBAND_WAIT_SKIP		8

/*
 * Latency over least latency (x 256) below which the device is taken to
 * queue nothing of ours: 1.25. A device serving one IO at a time with one
 * more waiting behind it shows 1.5.
 */
#define IOBAND_NO_QUEUEING		320

/*
 * weight-time's cost model (section 18): each direction's service time
 * as a line in sectors, fitted to the least latency of each size class
 * (the window's classes), by direction. A least latency is lowered at
 * once, and each period it is the least of the latest
 * IOBAND_TIME_LEAST_NS, kept in IOBAND_TIME_LEAST_SLOTS slots, so that
 * the model follows a device that slows down within that time. Costs
 * are in sector-equivalents (the mean device time of a sector the device has
 * recently completed) << IOBAND_TIME_SHIFT. A device whose service
 * times, so measured, fill less than 1/IOBAND_TIME_RATE_LIMITED of the
 * time while it holds a backlog of ours is limited by something else
 * than its service (a cap on bytes per second): its bios cost their
 * sectors until the service times fill the time again. A bio costs at
 * most IOBAND_TIME_MAX_IO_COST, and a sector of it at most
 * IOBAND_TIME_MAX_SECTOR_COST, sector-equivalents: a disk's 4 KiB random
 * read costs 576, 72 a sector, beside as many 1 MiB sequential writes.
 */
#define IOBAND_TIME_PERIOD_NS		(50ULL * 1000 * 1000)
#define IOBAND_TIME_LEAST_NS		(1ULL * 1000 * 1000 * 1000)
#define IOBAND_TIME_LEAST_SLOTS		4
#define IOBAND_TIME_FORGET_SHIFT	4
#define IOBAND_TIME_SHIFT		16
#define IOBAND_TIME_MAX_IO_COST		65536
#define IOBAND_TIME_MAX_SECTOR_COST	1024
#define IOBAND_TIME_RATE_LIMITED	2
/*
 * A figure of the channels kept busy is taken over at least
 * IOBAND_TIME_BUSY_ITEMS completions (or IOBAND_TIME_LEAST_NS), however
 * many periods that takes: see ioband_time_end_period().
 */
#define IOBAND_TIME_BUSY_ITEMS		8
/* The sector-equivalent moves when it is this many times off. */
#define IOBAND_TIME_UNIT_STEP		4
/*
 * weight-time's tokens are 1/16 of a sector-equivalent: rounded to whole
 * ones, a 4 KiB read at 1.64 a sector (13.1) and a 4 KiB write at 0.70
 * (5.6) cost 13 and 6, and a read-against-write pair split the device's
 * time 1.06:1 in the simulator. token_base stays in sector-equivalents;
 * one item costs at most IOBAND_MAX_ITEM_COST of these tokens (32 MiB of
 * sector-equivalents).
 */
#define IOBAND_TIME_TOKEN_SHIFT		4
/* ns x 2^IOBAND_TIME_NS_SHIFT / unit_ns: tokens (unit_ns is << 16). */
#define IOBAND_TIME_NS_SHIFT		(16 + IOBAND_TIME_TOKEN_SHIFT)

/* Largest values accepted, so that no tag arithmetic can overflow. */
#define IOBAND_MAX_IO_LIMIT		65536
#define IOBAND_MAX_TOKEN_BASE		(1U << 30)
#define IOBAND_MAX_CARRYOVER		1024

/*
 * The knobs, as the table and the messages give them. A value of 0 for
 * token_base or io_throttle selects the default; io_limit 0 means no cap
 * on the bios in flight (the window alone bounds them); carryover 0 means
 * no credit for idle groups.
 */
struct ioband_sched_params {
	enum ioband_policy policy;
	u32 token_base;
	u32 io_throttle;
	u32 io_limit;
	u32 carryover;
};

/* What the glue says of a bio (struct ioband_sched_item's flags). */
enum {
	/*
	 * Issued on behalf of everyone (metadata, swap, the journal): goes
	 * down at once, whatever the window, and is charged to its group as
	 * debt (section 16).
	 */
	IOBAND_ITEM_URGENT = 1 << 0,
	/*
	 * Discard, write-zeroes or secure erase: under `weight` it costs one
	 * token per 4 KiB it covers rather than one per bio.
	 */
	IOBAND_ITEM_SIZED = 1 << 1,
	/*
	 * Set by the caller before ioband_sched_complete(): the item
	 * completed in the very task that sent it down, as a device that
	 * completes at submission does (section 14).
	 */
	IOBAND_ITEM_COMPLETED_INLINE = 1 << 2,
	/*
	 * Set by the core: in flight so long that it no longer counts
	 * against the window (section 14a).
	 */
	IOBAND_ITEM_OVERDUE = 1 << 3,
	/*
	 * Set by the core: went down with nothing of ours in flight, or
	 * fewer items than the channels the device was seen to keep busy,
	 * so it found a channel free and its latency is its service
	 * (section 18).
	 */
	IOBAND_ITEM_CHANNEL_FREE = 1 << 4,
};

/*
 * What a least latency of weight-time's model is (section 18): the
 * latency of a bio that found a channel free, or of one that did not,
 * or, on a device seen serving one bio at a time, the service of one
 * that did not (the time from the completion before its own).
 */
enum ioband_time_kind {
	IOBAND_TIME_FREE,
	IOBAND_TIME_WAITED,
	IOBAND_TIME_SERIAL,
};

/*
 * One bio, embedded in the bio's per-bio data. The glue fills in
 * sectors, dir and flags (ioband_sched_item_init()) and finds the bio
 * again with container_of(). The core links queued items through @next
 * and stamps @dispatch_ns when the item goes down; from then until it
 * completes or is overdue, it is in the domain's list of items in flight
 * by dispatch time, through @older and @newer (@next stays the caller's:
 * ioband_sched_drain() returns a list through it).
 */
struct ioband_sched_item {
	struct ioband_sched_item *next;
	struct ioband_sched_item *older;
	struct ioband_sched_item *newer;
	u64 dispatch_ns;
	u32 sectors;
	enum ioband_dir dir;	/* charged differently under weight-time */
	u32 flags;		/* IOBAND_ITEM_* */
	u32 cost;		/* tokens charged, 0: not (yet) */
	/* weight-time: the model's service when charged, 0: none */
	u64 service_ns;
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
	/*
	 * In ptree with nothing queued: still competing, pnode.key its next
	 * start, until IOBAND_IDLE_NS after active_ns (section 15).
	 */
	bool waiting;
	u32 weight;
	u64 inv_weight;			/* ceil(2^32 / weight) */

	struct ioband_sched_item *head;	/* FIFO of held items */
	struct ioband_sched_item *tail;
	u32 nr_queued;

	u64 finish;			/* finish tag of the last dispatched */
	u32 finish_era;		/* vtime_era when finish was set */

	u64 active_ns;		/* its latest submission or completion */
	u64 think_ns;		/* mean gap before a bio finds it empty */
	u64 in_flight_sectors;	/* of its items, dispatched, not completed */
	u64 queued_sectors;	/* of its items, held */
	u64 peak_sectors;	/* its recent most, in flight and held */
	/*
	 * weight-time on a device serving one bio at a time: the service
	 * its bios took beyond the model's when they were charged (ns,
	 * either sign), settled with its next bio.
	 */
	s64 time_carry;

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

	/*
	 * Nested groups (section 19): the entity of the nearest attached
	 * ancestor group (NULL at the top), which shares its own share
	 * between its own queue (at its own weight) and its children.
	 */
	struct ioband_sched_entity *parent;
	u32 nr_children;	/* attached entities whose parent it is */
	/* Its own queue counts in the sums: in ptree, or in itree. */
	bool active;
	bool in_itree;
	struct ioband_sched_node inode;	/* key: F, while in itree */
	/*
	 * Its weight while its own queue is active, plus the weight of
	 * each child whose subtree has an active queue: the sum its own
	 * queue and its children share its share by. 0: nothing of its
	 * subtree competes.
	 */
	u64 active_weight;
	u32 hier_gen;		/* sched->hier_gen when hinv_weight was set */
	u64 hinv_weight;	/* 2^32 / its effective weight */
};

/* The start tag of @e's head item, valid while @e is in ptree. */
static inline u64 ioband_sched_start(const struct ioband_sched_entity *e)
{
	return e->pnode.key;
}

struct ioband_sched_stats {
	u64 dispatched;		/* items sent down, passthrough included */
	u64 urgent;		/* of which went down at once as urgent */
	u64 window_full;	/* items held because the window was full */
	u64 idle_waits;		/* dispatches withheld for a competing group */
	u64 tree_steps;		/* tree nodes visited, rotations, fix-ups */
	u64 reserved;		/* range: dispatched in the constraint phase */
	u64 throttled;		/* range: times a group went over its max */
	u64 r_shift_ns;		/* range: reservation lag forgiven, ns */
	u64 overdue;		/* items that became overdue (section 14a) */
};

/*
 * The least completion latency of the items of one size class (section
 * 14): sectors by powers of two, 1, 2-3, 4-7, ..., the last open-ended.
 */
struct ioband_window_class {
	u64 min_lat_ns;		/* 0: none measured yet */
	u64 min_lat_at_ns;	/* when min_lat_ns was last lowered or renewed */
	u64 period_min_lat_ns;
	u64 period_items;	/* of the class, completed in the current period */
};

/*
 * The dispatch window and what it is derived from (section 14): the
 * device's rate in sectors per second, the best of the latest periods,
 * and the latency of the load with no queue below: each size class's
 * least latency, weighted by the items it completed in the latest
 * period.
 */
struct ioband_window {
	u64 sectors;		/* the window: in flight below us at most */
	u64 in_flight_sectors;
	u32 items;		/* under weight-time, the window in items */
	u64 rate;		/* sectors per second */
	u64 min_lat_ns;		/* 0: none measured yet */
	u64 period_start_ns;
	u64 period_sectors;	/* completed in the current period */
	u64 period_items;
	u64 period_lat_ns;	/* latency of its items, summed */
	u64 period_least_ns;	/* their classes' least latencies, summed */
	u64 period_inline_items;	/* IOBAND_ITEM_COMPLETED_INLINE */
	/*
	 * Every item completed inline through as many whole periods in a
	 * row as the closes so far ask for, and since: the device has no
	 * queue for a backlog to form behind, and nothing is held for the
	 * window (but beyond IOBAND_INLINE_MAX_SECTORS) or for a competing
	 * group (section 14).
	 */
	bool completes_inline;
	u64 inline_periods;	/* in a row whose items all completed inline */
	u32 inline_closes;	/* times completes_inline turned false */
	/*
	 * Latency over least latency, x 256, in the latest period that
	 * completed items: 256 when the device queues nothing of ours, 0
	 * before the first (section 15).
	 */
	u32 queueing;
	u64 period_rates[IOBAND_WINDOW_RATE_PERIODS];
	/* The same in items: items_rate is bios per second. */
	u64 period_items_rates[IOBAND_WINDOW_RATE_PERIODS];
	u64 items_rate;
	u32 period_index;
	u64 periods;		/* periods measured */
	u64 mean_lat_ns;	/* of the latest period's items, 0: none yet */
	/* What a group may hold of writeback before its flusher waits. */
	u64 writeback_hold_sectors;
	/* In flight this long, an item is overdue (section 14a). */
	u64 overdue_ns;
	struct ioband_window_class classes[IOBAND_WINDOW_SIZE_CLASSES];
};

/* One direction and size class of weight-time's model (section 18). */
struct ioband_time_class {
	u64 least_ns;		/* least latency, 0: none measured yet */
	u64 least_sectors;	/* the size of the bio that set least_ns */
	enum ioband_time_kind least_kind;	/* what least_ns is */
	/* The best of each slot of the latest second, 0: none. */
	u64 slot_least_ns[IOBAND_TIME_LEAST_SLOTS];
	u64 slot_least_sectors[IOBAND_TIME_LEAST_SLOTS];
	enum ioband_time_kind slot_kind[IOBAND_TIME_LEAST_SLOTS];
	/*
	 * Each slot's services timed on a device serving one bio at a
	 * time (IOBAND_TIME_SERIAL): their sum, sectors and count.
	 */
	u64 slot_serial_ns[IOBAND_TIME_LEAST_SLOTS];
	u64 slot_serial_sectors[IOBAND_TIME_LEAST_SLOTS];
	u64 slot_serial_items[IOBAND_TIME_LEAST_SLOTS];
	u64 period_items;
	u64 period_sectors;
	/* Items and sectors completed, each period's 2^-4 less after it. */
	u64 items;
	u64 sectors;
};

/*
 * weight-time's online estimate of the device's costs (section 18), fed
 * by every completion under every policy, so that a switch to
 * weight-time starts from what the device has shown.
 */
struct ioband_time_model {
	struct ioband_time_class classes[IOBAND_NR_DIRS][IOBAND_WINDOW_SIZE_CLASSES];
	u64 slot_start_ns;	/* of the current least-latency slot */
	u32 slot_index;
	u64 period_start_ns;
	u64 complete_ns;	/* the latest completion */
	u64 period_service_ns;	/* the model's service of its completions */
	u64 period_lat_ns;	/* and their latencies */
	u64 period_completions;	/* and how many */
	/* The busy figure being taken: periods so far, summed. */
	u64 busy_service_ns;
	u64 busy_lat_ns;
	u64 busy_elapsed_ns;
	u64 busy_completions;
	bool busy_idle;		/* a completion in it found nothing held */
	/*
	 * Channels kept busy (x 256) in each of the latest figures: the
	 * model's service of their completions over their length, and no
	 * more than their latencies say (Little's law).
	 */
	u64 period_busy[IOBAND_WINDOW_RATE_PERIODS];
	u32 busy_index;
	u32 channels;		/* the most of those, whole: 0 before any */
	bool serial;		/* some busy, less than 1.5 channels */
	bool period_idle;	/* a completion found nothing held */
	/* Service time, by direction: io_ns + sector_ns x sectors >> 16. */
	u64 io_ns[IOBAND_NR_DIRS];
	u64 sector_ns[IOBAND_NR_DIRS];	/* << 16 */
	u64 unit_ns;		/* a sector-equivalent, << 16; 0: none yet */
	/*
	 * What unit_ns is of: each period's completions, in their class's
	 * least latency and in sectors, each period 2^-IOBAND_TIME_FORGET_SHIFT
	 * less after it.
	 */
	u64 unit_time_ns;
	u64 unit_sectors;
	/* What a bio costs, by direction, << IOBAND_TIME_SHIFT. */
	u64 io_cost[IOBAND_NR_DIRS];
	u64 sector_cost[IOBAND_NR_DIRS];
	bool rate_limited;	/* bios cost their sectors (see above) */
	u32 busy_pct;		/* service over time, latest busy figure */
	u64 periods;
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
	/*
	 * Nested groups out of ptree that keep their share in their
	 * parents' sums while they could still reclaim it, by F (section
	 * 18).
	 */
	struct ioband_sched_tree itree;
	u64 r_shift;		/* rtree keys are R - r_shift */
	u64 now;		/* the latest now_ns given: never goes back */

	u64 vtime;		/* start tag of the latest dispatch */
	u32 vtime_era;	/* times vtime crossed a multiple of 2^62 */
	u64 credit;		/* most vtime an idle group may keep */
	u64 total_weight;	/* of attached entities at the top */
	u32 hier_gen;		/* bumped when a nested group's share changes */
	u32 nr_entities;	/* attached entities */

	u32 nr_queued;		/* items held, all entities */
	u32 in_flight;		/* items dispatched and not completed */
	/*
	 * Of them, those not overdue, oldest first: dispatch times never go
	 * back, so the oldest is always at the head (section 14a).
	 */
	struct ioband_sched_item *oldest;
	struct ioband_sched_item *newest;
	u32 nr_overdue;		/* and those overdue: counted nowhere else */
	bool passthrough;
	struct ioband_window window;
	struct ioband_time_model time_model;

	struct ioband_sched_params params;	/* as given, 0 = default */
	u32 token_base;		/* effective values */
	u32 io_throttle;
	u32 io_limit;		/* 0: no cap on the bios in flight */

	struct ioband_sched_stats stats;
};

/* The defaults of @policy: what a table with all zeroes asks for. */
void ioband_sched_params_default(struct ioband_sched_params *params,
				 enum ioband_policy policy);

/*
 * True when every knob is within range. An io_limit other than 0 must not
 * be below io_throttle (after its default): the messages reject that, and
 * a table raises io_limit to it, as dm-ioband did.
 */
bool ioband_sched_params_valid(const struct ioband_sched_params *params);

/* @params must be valid. Starts with no entity, not in passthrough. */
void ioband_sched_init(struct ioband_sched *sched,
		       const struct ioband_sched_params *params);

/*
 * Changes the knobs live; returns false, changing nothing, when @params
 * is not valid. New values apply from the next dispatch: tags already
 * given are kept, and items in flight beyond a lowered io_limit are
 * waited for rather than recalled. The measured window is kept.
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
 * Section 19: makes @parent (NULL: the top) the entity that @entity's
 * share is a part of. Both are attached entities of @sched, and @parent
 * is not @entity or one of its descendants: the caller keeps the nesting
 * a tree, no deeper than IOBAND_SCHED_MAX_DEPTH. Applies from each
 * entity's next dispatch. Before it detaches an entity, the caller
 * gives that entity's children another parent.
 */
void ioband_sched_set_parent(struct ioband_sched *sched,
			     struct ioband_sched_entity *entity,
			     struct ioband_sched_entity *parent);

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
 * flight are still completed with @entity, which the caller keeps until
 * then; the core only reads it (it is no longer attached).
 */
void ioband_sched_detach(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_entity *heir);

static inline void ioband_sched_item_init(struct ioband_sched_item *item,
					  u32 sectors, enum ioband_dir dir,
					  u32 flags)
{
	item->next = NULL;
	item->older = NULL;
	item->newer = NULL;
	item->dispatch_ns = 0;
	item->sectors = sectors;
	item->dir = dir;
	item->flags = flags;
	item->cost = 0;
	item->service_ns = 0;
}

/*
 * A bio arrives (from map) at @now_ns, monotonic nanoseconds (the same
 * clock for every call on @sched). Returns true when it is dispatched now
 * and counted in flight: the caller sends it down. Returns false when it
 * is held: a later ioband_sched_next() returns it. Never blocks. An
 * IOBAND_ITEM_URGENT item always goes down now.
 */
bool ioband_sched_submit(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_item *item, u64 now_ns);

/*
 * The next held item to send down at @now_ns, now counted in flight, or
 * NULL when nothing is held, the window is full (passthrough ignores
 * it), a group that is still competing would go next but has nothing
 * queued, or (range policies) every group holding items is over its max:
 * in the last two cases ioband_sched_next_event_ns() says when to call
 * again. *@entity, when @entity is not NULL, is set to the entity it was
 * charged to.
 */
struct ioband_sched_item *ioband_sched_next(struct ioband_sched *sched,
					    struct ioband_sched_entity **entity,
					    u64 now_ns);

/*
 * When ioband_sched_next() may next return an item that it would not
 * return now: the earliest L tag of a group held back by its max, or
 * when the competing group that holds the others back stops competing,
 * or, while items are held for want of room below, when the oldest item
 * in flight becomes overdue (section 14a); 0 when none applies.
 * The caller keeps one timer armed at this time whenever it is not 0
 * (section 13), and runs its dispatch loop when it fires.
 */
u64 ioband_sched_next_event_ns(const struct ioband_sched *sched);

/*
 * What @item costs in tokens now, as the next dispatch charges it: for
 * the simulator and the tests, which count what each group was charged.
 */
u64 ioband_sched_item_cost(const struct ioband_sched *sched,
			   const struct ioband_sched_item *item);

/*
 * The tokens one epoch hands out now (IOBAND_EPOCH_MAX_NS): what bounds,
 * with carryover, the credit of a group back from idling. For stats.
 */
u64 ioband_sched_epoch_tokens(const struct ioband_sched *sched);

/*
 * An item that was dispatched (by submit or next) for @entity has
 * completed at @now_ns: the window learns from it, and @entity stays
 * competing a while (section 15). Returns ioband_sched_has_work():
 * whether the caller should run its dispatch loop.
 */
bool ioband_sched_complete(struct ioband_sched *sched,
			   struct ioband_sched_entity *entity,
			   struct ioband_sched_item *item, u64 now_ns);

/*
 * Room below: the window and io_limit both allow one more item, overdue
 * items not counted (section 14a). A device that completes inline has no
 * window but IOBAND_INLINE_MAX_SECTORS; under weight-time the window
 * counts items.
 */
static inline bool ioband_sched_room(const struct ioband_sched *sched)
{
	const struct ioband_window *w = &sched->window;
	u32 in_flight = sched->in_flight - sched->nr_overdue;

	if (!in_flight)
		return true;
	if (sched->io_limit && in_flight >= sched->io_limit)
		return false;
	if (w->completes_inline && w->sectors < IOBAND_INLINE_MAX_SECTORS)
		return w->in_flight_sectors < IOBAND_INLINE_MAX_SECTORS;
	if (sched->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		return in_flight < w->items;
	return w->in_flight_sectors < w->sectors;
}

/*
 * Section 14: the window is open (the device completes every item in the
 * task that dispatched it), nothing is held, and nothing caps what may go
 * down (io_limit, the range policies' max), so an item may go down without
 * the scheduler: the glue sends it down with no lock taken, and calls
 * ioband_sched_missed_inline() if it did not complete inline. The glue
 * reads this without the lock: a change it misses lets one item through.
 */
static inline bool ioband_sched_lets_all_through(const struct ioband_sched *sched)
{
	return sched->window.completes_inline && !sched->nr_queued &&
	       !sched->io_limit && !sched->passthrough &&
	       !ioband_policy_is_range(sched->params.policy);
}

/*
 * An item that went down past the scheduler while it let all through did
 * not complete inline: the window closes, as if the item had completed
 * through ioband_sched_complete().
 */
void ioband_sched_missed_inline(struct ioband_sched *sched);

/*
 * True when ioband_sched_next() would return an item now. The caller
 * runs its dispatch loop whenever this may have turned true: after every
 * submit (one that went down may have ended a wait) and completion
 * (ioband_sched_complete() returns it), and after raising io_limit,
 * turning passthrough on or detaching a group; otherwise it arms the
 * timer of ioband_sched_next_event_ns().
 */
bool ioband_sched_has_work(const struct ioband_sched *sched);

/*
 * While on, submit dispatches every item at once, uncharged, and next
 * returns every held item regardless of io_limit: for presuspend, which
 * must drain. Turning it on makes ioband_sched_has_work() true while
 * anything is held.
 */
void ioband_sched_set_passthrough(struct ioband_sched *sched, bool on);

/*
 * Sends every item @entity holds down at once at @now_ns, uncharged and
 * counted in flight, whatever the window and the group's max, and takes
 * the entity out of the trees (its tags kept) and out of competing: for
 * the suspend of one target, whose domain goes on scheduling the others.
 * Returns the items in their FIFO order, linked through ->next (NULL when
 * it held none); the caller sends each down and completes it as any other.
 */
struct ioband_sched_item *ioband_sched_drain(struct ioband_sched *sched,
					     struct ioband_sched_entity *entity,
					     u64 now_ns);

/*
 * Section 17: @entity holds as much writeback as it may, and the flusher
 * that writes its pages back should wait before it adds more (the glue
 * sleeps only in that flusher, for that group). Never while draining.
 * A group capped by a range policy's max holds no more than 50 ms of its
 * max: a journal commit that waits for its pages waits at its pace.
 */
static inline bool ioband_sched_writeback_full(const struct ioband_sched *sched,
					       const struct ioband_sched_entity *entity)
{
	u64 hold = sched->window.writeback_hold_sectors;

	if (sched->passthrough)
		return false;
	if (entity->max_kbps && ioband_policy_is_range(sched->params.policy) &&
	    hold > IOBAND_WRITEBACK_HOLD_OF_MAX(entity->max_kbps))
		hold = IOBAND_WRITEBACK_HOLD_OF_MAX(entity->max_kbps);
	return entity->queued_sectors >= hold;
}

/* Nothing held and nothing in flight: a drain is complete. */
static inline bool ioband_sched_idle(const struct ioband_sched *sched)
{
	return !sched->nr_queued && !sched->in_flight;
}

#endif /* IOBAND_SCHED_H */
