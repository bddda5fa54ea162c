// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband scheduling core: which held bio goes down next.
 *
 * Several groups share one block device (a bandwidth domain: every
 * ioband target with the same ioband_device_id). Each group has a weight
 * from 1 to 32767, and while groups compete for the device, each must
 * get IOs (policy `weight`) or sectors (policy `weight-iosize`) in
 * proportion to its weight. The device must never idle while bios wait
 * and there is room below; a group that was idle must not come back with
 * an unbounded burst; a weight-1 group beside weights of 32767 must still
 * progress; and choosing the next bio must cost the same with 2 groups or
 * 10,000. We cannot reorder what we have sent down, and we know nothing
 * of the device's speed: we see only submissions and completions.
 *
 * The original dm-ioband gave each group tokens every epoch and scanned
 * the groups for the richest one. Its shares held only under saturation
 * (a new epoch started whenever the device ran short), carried-over
 * tokens let returning groups burst, small weights rounded to zero tokens
 * and the scan was linear. This file keeps its knobs and their meaning,
 * but schedules with start-time fair queuing over a window of D requests
 * in flight: SFQ(D) (Jin, Chase and Kaur, SIGMETRICS 2004), with one
 * start tag per group rather than per bio.
 *
 * 1. Tokens, tags and virtual time
 *
 * A token is the unit of cost: one per IO under `weight`, one per sector
 * under `weight-iosize` (an empty bio costs one; one bio is charged at
 * most IOBAND_MAX_ITEM_COST = 2^20 sectors, so that a 2^32-sector discard
 * neither overflows a tag nor freezes its group for hours).
 *
 * Sending an item of cost c down for a group of weight w advances that
 * group's tag by c * 2^32 / w: a heavy group's tag moves slowly, a light
 * group's quickly. 2^32 / w is precomputed per group, rounded up (the
 * rounding changes shares by less than 2^-17), so the IO path multiplies
 * and never divides. BFQ scales by 2^22; 2^32 keeps weight 32767 exact to
 * 8 ppm instead of 0.8%, and still leaves 2^11 of headroom: one step is
 * at most 2^20 * 2^32 = 2^52.
 *
 * Each backlogged group (one with held items) has a start tag S, the tag
 * its next item starts at; F is the tag where its last dispatched item
 * finished. The scheduler always sends down the held item of the group
 * with the smallest S (ties: the group that became backlogged first), as
 * long as fewer than io_limit items are in flight. The group's S then
 * becomes F = S + c * 2^32 / w. Virtual time V is the start tag of the
 * latest dispatch: it moves only with dispatches, never backwards, and
 * knows nothing of wall-clock time or device speed.
 *
 * A group whose queue was empty starts at
 *
 *	S = max(F, V - credit),   credit = carryover * token_base * 2^32 / W
 *
 * where W is the sum of the attached groups' weights. Tags are u64 and
 * wrap; they are compared as (s64)(a - b) < 0, which is exact while live
 * tags lie within 2^63 of each other: they lie within
 * [V - credit, V + 2^52] and credit is clamped to 2^61. An idle group's F
 * can fall arbitrarily far behind, so V also counts eras (crossings of a
 * multiple of 2^62); an F two eras old is simply treated as very old.
 *
 * The knobs, keeping dm-ioband's meaning where it still has one:
 *
 *   token_base	dm-ioband's tokens per epoch, shared by weight. Here an
 *		epoch is the virtual time in which, with every group
 *		backlogged, token_base tokens go down in all:
 *		token_base * 2^32 / W. Default 2048 (IOs) under `weight`,
 *		16384 (sectors, 2048 x 4 KiB) under `weight-iosize`.
 *   carryover	how many epochs of unused share an idle group keeps (the
 *		credit above). 0 is strict SFQ. Default 2.
 *   io_limit	D: the most items in flight below us. More keeps a deep
 *		device busy, but loosens fairness as counted at completion
 *		(section 2) and delays a newcomer by up to D items. Default
 *		32: enough to keep a SATA or a modest NVMe device busy,
 *		while the shares still hold when the groups keep fewer
 *		than 128 IOs outstanding between them (in a guest with
 *		io_limit 128, two fio jobs of depth 32 per group were
 *		never held, and 800:100 came out 1.08:1). Unlike dm-ioband
 *		it bounds only what is in flight: map never sleeps, so
 *		what is held is bounded by the submitters themselves.
 *   io_throttle	dm-ioband started an epoch early when fewer than this
 *		were in flight, to keep the device busy. SFQ(D) needs no
 *		such trigger: it dispatches whenever fewer than io_limit
 *		are in flight. Validated (<= io_limit) and reported; kept
 *		as the floor of an adaptive D.
 *   policy	the cost function above; a change applies to the next
 *		dispatch, tags already given are kept.
 *
 * A weight change applies from the group's next dispatch.
 *
 * 2. Why the result is fair
 *
 * Take two groups f and g, both backlogged throughout an interval, and
 * W_f, W_g the tokens dispatched for them in it; c_f, c_g the largest
 * costs of one of their items; C = carryover * token_base / W the credit
 * in tokens per unit of weight. Then
 *
 *	| W_f / w_f - W_g / w_g |  <=  c_f / w_f + c_g / w_g + 2 C
 *
 * because a backlogged group's S only grows, by exactly what it is
 * dispatched, and always lies within [V - credit, V + its last step]: it
 * is dispatched only as the minimum, which keeps V <= every S except a
 * credited newcomer's. With carryover 0 this is SFQ's bound: one item
 * each. When every group stays backlogged and T tokens go down, each
 * group's tokens W_g satisfy
 *
 *	| W_g - T w_g / W |  <=  c_g + w_g (sum of all c) / W + 2 C w_g
 *
 * a few IOs, however long the interval: within 2% once T w_g / W exceeds
 * fifty times that. Counted at completion rather than at dispatch, each
 * group may also have up to D items in flight, which gives SFQ(D)'s
 * (D + 1) (c_f / w_f + c_g / w_g) + 2 C: keep io_limit as small as keeps
 * the device busy. The device's own reordering below us cannot be
 * undone; D bounds it.
 *
 * The scheduler is work-conserving: while anything is held, fewer than
 * io_limit in flight means an item goes down now (submit sends it, or
 * the caller's dispatch loop takes it from ioband_sched_next()). An idle
 * group's share simply goes to the others: V is driven by whoever is
 * dispatched, so nobody waits for an absent group.
 *
 * 3. Idle and returning groups
 *
 * A group that comes back resumes at max(F, V - credit). After a short
 * absence (a synchronous reader between two reads) F is still ahead of
 * V - credit and the group keeps its place, as if it had never left:
 * this is what defeats deceptive idleness without idling the device.
 * After a long one it comes back credit behind V, and so can run ahead of
 * a continuously backlogged group by at most
 *
 *	carryover * token_base * w_g / W  tokens  (+ one item)
 *
 * i.e. carryover epochs of its share, as dm-ioband's carryover meant, and
 * no more however long it slept. Then it gets its share like any other.
 * A newly attached group starts with F = V: its credit, too, grows only
 * while it then stays idle.
 *
 * 4. Waiting, and why nobody starves
 *
 * Between two dispatches of a backlogged group g, every other backlogged
 * group h is dispatched at most
 *
 *	(c_g / w_g + C) w_h / c_h + 1  items
 *
 * (c_g the cost of g's previous item, c_h h's smallest), since h goes
 * first only while its S is below g's. With one token per IO, weight 1
 * beside two groups of 32767 and carryover 0, that is at most 65,536
 * other IOs between two of g's, at whatever rate the device serves them,
 * plus the D already in flight. Nothing waits for an epoch to end, and
 * no weight rounds to zero.
 *
 * 5. Cost
 *
 * Backlogged groups sit in a red-black tree keyed by S, with the leftmost
 * cached; the tree is threaded through the groups, so nothing allocates.
 *
 *   submit	O(1) if the group already has held items (append to its
 *		FIFO) or goes down at once; O(log n) if it becomes
 *		backlogged (insert).
 *   next	O(1) to find the minimum. O(1) again if the group stays
 *		leftmost after its tag moves (a heavy group's run); else
 *		an erase and an insert, O(log n) in the worst case.
 *   complete	O(1); it does not look at the group.
 *   weight, knobs	O(1), plus a 64-step division for the credit.
 *   detach	O(log n) plus O(1) to splice the FIFO onto the heir.
 *
 * n counts backlogged groups only. Measured (tests/unit/sched): 7 tree
 * steps per dispatch on average with 10 groups, 17.5 with 10,000, at
 * most 32. Per bio, the caller embeds 16 bytes; per group, 88.
 *
 * 6. A worked example
 *
 * A (weight 200), B (100) and C (300), policy `weight`, io_limit 2,
 * token_base 6, carryover 1; tags drawn in units of 2^32 / 600, so that
 * one IO moves A by 3, B by 6 and C by 2, and the credit is
 * 1 * 6 * 600 / 600 = 6. A and B are backlogged, C is idle:
 *
 *	tag   0     3     6     9     12    15    18    21    24
 *	A     |a1---|a2---|a3---|a4---|a5---|a6---|a7---|a8---|
 *	B     |b1---------|b2---------|b3---------|b4---------|
 *
 *	order a1 b1 a2 b2 a3 a4 b3 a5 a6 b4 a7    (2 of A per 1 of B)
 *
 * C comes back when V = 18. It never ran, so F = 0, but it may keep only
 * one epoch of credit: S = max(0, 18 - 6) = 12.
 *
 *	C     .....................|c1|c2|c3|c4|c5|c6|
 *	                           12 14 16 18 20 22
 *
 *	order c1 c2 c3 c4 c5 a8(21) c6(22) b5(24) ...
 *
 * c1 to c3 are its credit (6 * 300 / 600 = 3 IOs); c4 and c5 catch up
 * with A and B, whose next tags (21, 24) were already ahead of V; from
 * then on the three share 2:1:3.
 *
 * 7. The caller
 *
 * The kernel glue embeds one struct ioband_sched per domain, one
 * struct ioband_sched_entity per group (the default group included) and
 * one struct ioband_sched_item in each bio's per-bio data, and calls
 * everything under one spinlock. map calls ioband_sched_submit(): true
 * means send the bio down now. The dispatch loop (a worker, or end_io)
 * calls ioband_sched_next() until it returns NULL; end_io calls
 * ioband_sched_complete(), whose result says whether the loop should run.
 * Every item that went down (by submit or next) is completed exactly
 * once. Presuspend turns on passthrough, which sends every held item
 * down regardless of io_limit and every new one at once, uncharged.
 */
#include "ioband-sched.h"

/* A tag window of 2^62 is far wider than any live spread of tags. */
#define IOBAND_ERA_SHIFT	62

/* Return credit is clamped so that live tags stay within 2^62. */
#define IOBAND_MAX_CREDIT	(1ULL << 61)

/* Wrap-safe: is tag @a before tag @b? Live tags are < 2^63 apart. */
static inline bool ioband_vt_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/*
 * ceil(2^32 / weight) with 32-bit division only: for 1 <= w < 2^32,
 * 2^32 = q * w + r + 1 with q = (2^32 - 1) / w and 0 <= r < w, so the
 * quotient rounded up is always q + 1.
 */
static u64 ioband_inv_weight(u32 weight)
{
	return (u64)(0xFFFFFFFFU / weight) + 1;
}

/*
 * @n / @d by shift and subtract: only on configuration changes, and
 * without the libgcc helper that a u64 division needs on 32-bit kernels.
 */
static u64 ioband_div64(u64 n, u64 d)
{
	u64 quotient = 0, rem = 0;
	int bit;

	for (bit = 63; bit >= 0; bit--) {
		rem = (rem << 1) | ((n >> bit) & 1);
		if (rem >= d) {
			rem -= d;
			quotient |= 1ULL << bit;
		}
	}
	return quotient;
}

static u32 ioband_clamp_weight(u32 weight)
{
	if (weight < IOBAND_MIN_WEIGHT)
		return IOBAND_MIN_WEIGHT;
	if (weight > IOBAND_MAX_WEIGHT)
		return IOBAND_MAX_WEIGHT;
	return weight;
}

/* ---- The tree of backlogged entities (red-black, leftmost cached) ---- */

static void ioband_rb_set_child(struct ioband_sched *sched,
				struct ioband_sched_entity *parent,
				struct ioband_sched_entity *old,
				struct ioband_sched_entity *new)
{
	if (!parent)
		sched->root = new;
	else if (parent->rb_left == old)
		parent->rb_left = new;
	else
		parent->rb_right = new;
}

static void ioband_rb_rotate_left(struct ioband_sched *sched,
				  struct ioband_sched_entity *x)
{
	struct ioband_sched_entity *y = x->rb_right;

	sched->stats.tree_steps++;
	x->rb_right = y->rb_left;
	if (y->rb_left)
		y->rb_left->rb_parent = x;
	y->rb_parent = x->rb_parent;
	ioband_rb_set_child(sched, x->rb_parent, x, y);
	y->rb_left = x;
	x->rb_parent = y;
}

static void ioband_rb_rotate_right(struct ioband_sched *sched,
				   struct ioband_sched_entity *x)
{
	struct ioband_sched_entity *y = x->rb_left;

	sched->stats.tree_steps++;
	x->rb_left = y->rb_right;
	if (y->rb_right)
		y->rb_right->rb_parent = x;
	y->rb_parent = x->rb_parent;
	ioband_rb_set_child(sched, x->rb_parent, x, y);
	y->rb_right = x;
	x->rb_parent = y;
}

static inline bool ioband_rb_is_red(const struct ioband_sched_entity *e)
{
	return e && e->rb_red;
}

/*
 * Inserts @e by e->start, after any entity with an equal tag: entities
 * that tie are served in the order they became backlogged.
 */
static void ioband_rb_insert(struct ioband_sched *sched,
			     struct ioband_sched_entity *e)
{
	struct ioband_sched_entity **link = &sched->root;
	struct ioband_sched_entity *parent = NULL, *gparent, *uncle;
	bool leftmost = true;

	while (*link) {
		sched->stats.tree_steps++;
		parent = *link;
		if (ioband_vt_before(e->start, parent->start)) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	e->rb_parent = parent;
	e->rb_left = NULL;
	e->rb_right = NULL;
	e->rb_red = true;
	*link = e;
	if (leftmost)
		sched->leftmost = e;

	while ((parent = e->rb_parent) && parent->rb_red) {
		sched->stats.tree_steps++;
		gparent = parent->rb_parent;	/* a red node is not the root */
		if (parent == gparent->rb_left) {
			uncle = gparent->rb_right;
			if (ioband_rb_is_red(uncle)) {
				parent->rb_red = false;
				uncle->rb_red = false;
				gparent->rb_red = true;
				e = gparent;
				continue;
			}
			if (e == parent->rb_right) {
				ioband_rb_rotate_left(sched, parent);
				e = parent;
				parent = e->rb_parent;
			}
			parent->rb_red = false;
			gparent->rb_red = true;
			ioband_rb_rotate_right(sched, gparent);
		} else {
			uncle = gparent->rb_left;
			if (ioband_rb_is_red(uncle)) {
				parent->rb_red = false;
				uncle->rb_red = false;
				gparent->rb_red = true;
				e = gparent;
				continue;
			}
			if (e == parent->rb_left) {
				ioband_rb_rotate_right(sched, parent);
				e = parent;
				parent = e->rb_parent;
			}
			parent->rb_red = false;
			gparent->rb_red = true;
			ioband_rb_rotate_left(sched, gparent);
		}
	}
	sched->root->rb_red = false;
}

/* In-order successor of the leftmost entity, which has no left child. */
static struct ioband_sched_entity *
ioband_rb_leftmost_next(const struct ioband_sched_entity *e)
{
	struct ioband_sched_entity *next = e->rb_right;

	if (!next)
		return e->rb_parent;
	while (next->rb_left)
		next = next->rb_left;
	return next;
}

/* Restores the black heights after a black node left from under @parent. */
static void ioband_rb_erase_fixup(struct ioband_sched *sched,
				  struct ioband_sched_entity *x,
				  struct ioband_sched_entity *parent)
{
	struct ioband_sched_entity *w;

	while (x != sched->root && !ioband_rb_is_red(x)) {
		sched->stats.tree_steps++;
		if (x == parent->rb_left) {
			w = parent->rb_right;
			if (w->rb_red) {
				w->rb_red = false;
				parent->rb_red = true;
				ioband_rb_rotate_left(sched, parent);
				w = parent->rb_right;
			}
			if (!ioband_rb_is_red(w->rb_left) &&
			    !ioband_rb_is_red(w->rb_right)) {
				w->rb_red = true;
				x = parent;
				parent = x->rb_parent;
				continue;
			}
			if (!ioband_rb_is_red(w->rb_right)) {
				w->rb_left->rb_red = false;
				w->rb_red = true;
				ioband_rb_rotate_right(sched, w);
				w = parent->rb_right;
			}
			w->rb_red = parent->rb_red;
			parent->rb_red = false;
			w->rb_right->rb_red = false;
			ioband_rb_rotate_left(sched, parent);
		} else {
			w = parent->rb_left;
			if (w->rb_red) {
				w->rb_red = false;
				parent->rb_red = true;
				ioband_rb_rotate_right(sched, parent);
				w = parent->rb_left;
			}
			if (!ioband_rb_is_red(w->rb_left) &&
			    !ioband_rb_is_red(w->rb_right)) {
				w->rb_red = true;
				x = parent;
				parent = x->rb_parent;
				continue;
			}
			if (!ioband_rb_is_red(w->rb_left)) {
				w->rb_right->rb_red = false;
				w->rb_red = true;
				ioband_rb_rotate_left(sched, w);
				w = parent->rb_left;
			}
			w->rb_red = parent->rb_red;
			parent->rb_red = false;
			w->rb_left->rb_red = false;
			ioband_rb_rotate_right(sched, parent);
		}
		x = sched->root;
		break;
	}
	if (x)
		x->rb_red = false;
}

static void ioband_rb_erase(struct ioband_sched *sched,
			    struct ioband_sched_entity *z)
{
	struct ioband_sched_entity *y = z, *x, *parent;
	bool removed_red = z->rb_red;

	if (sched->leftmost == z)
		sched->leftmost = ioband_rb_leftmost_next(z);

	if (!z->rb_left || !z->rb_right) {
		x = z->rb_left ? z->rb_left : z->rb_right;
		parent = z->rb_parent;
		ioband_rb_set_child(sched, parent, z, x);
		if (x)
			x->rb_parent = parent;
	} else {
		/* Replace @z by its successor @y, the leftmost of its right. */
		y = z->rb_right;
		while (y->rb_left) {
			sched->stats.tree_steps++;
			y = y->rb_left;
		}
		removed_red = y->rb_red;
		x = y->rb_right;
		if (y->rb_parent == z) {
			parent = y;
		} else {
			parent = y->rb_parent;
			parent->rb_left = x;
			if (x)
				x->rb_parent = parent;
			y->rb_right = z->rb_right;
			y->rb_right->rb_parent = y;
		}
		ioband_rb_set_child(sched, z->rb_parent, z, y);
		y->rb_parent = z->rb_parent;
		y->rb_left = z->rb_left;
		y->rb_left->rb_parent = y;
		y->rb_red = z->rb_red;
	}
	if (!removed_red)
		ioband_rb_erase_fixup(sched, x, parent);
	z->rb_parent = NULL;
	z->rb_left = NULL;
	z->rb_right = NULL;
}

/* ---- Tags ---- */

static void ioband_sched_update_credit(struct ioband_sched *sched)
{
	u64 tokens = (u64)sched->params.carryover * sched->token_base;

	if (!tokens || !sched->total_weight) {
		sched->credit = 0;
		return;
	}
	/* tokens <= 2^40, so tokens << 32 would overflow: clamp first. */
	if (tokens >= IOBAND_MAX_CREDIT >> IOBAND_VTIME_SHIFT)
		tokens = IOBAND_MAX_CREDIT >> IOBAND_VTIME_SHIFT;
	sched->credit = ioband_div64(tokens << IOBAND_VTIME_SHIFT,
				     sched->total_weight);
}

/* Cost of @item in tokens: the only per-policy code. */
static u64 ioband_sched_cost(const struct ioband_sched *sched,
			     const struct ioband_sched_item *item)
{
	if (sched->params.policy == IOBAND_POLICY_WEIGHT || !item->sectors)
		return 1;
	if (item->sectors > IOBAND_MAX_ITEM_COST)
		return IOBAND_MAX_ITEM_COST;
	return item->sectors;
}

/*
 * Start tag of an entity whose queue was empty: where it left off, but
 * no further back than the credit allows. A finish tag two epochs old is
 * at least 2^62 behind, far beyond any credit, and can no longer be
 * compared wrap-safely, so it is not compared.
 */
static u64 ioband_sched_activation_start(const struct ioband_sched *sched,
					 const struct ioband_sched_entity *e)
{
	u64 floor = sched->vtime - sched->credit;

	if (sched->vtime_era - e->finish_era >= 2 ||
	    ioband_vt_before(e->finish, floor))
		return floor;
	return e->finish;
}

/* Charges @item to @e at tag @start and counts it in flight. */
static void ioband_sched_charge(struct ioband_sched *sched,
				struct ioband_sched_entity *e,
				const struct ioband_sched_item *item, u64 start)
{
	if (ioband_vt_before(sched->vtime, start)) {
		if ((start ^ sched->vtime) >> IOBAND_ERA_SHIFT)
			sched->vtime_era++;
		sched->vtime = start;
	}
	e->finish = start + ioband_sched_cost(sched, item) * e->inv_weight;
	e->finish_era = sched->vtime_era;
	sched->in_flight++;
	sched->stats.dispatched++;
}

static void ioband_sched_enqueue(struct ioband_sched *sched,
				 struct ioband_sched_entity *e,
				 struct ioband_sched_item *item)
{
	item->next = NULL;
	if (e->tail)
		e->tail->next = item;
	else
		e->head = item;
	e->tail = item;
	e->nr_queued++;
	sched->nr_queued++;
}

/* ---- Knobs ---- */

void ioband_sched_params_default(struct ioband_sched_params *params,
				 enum ioband_policy policy)
{
	params->policy = policy;
	params->token_base = 0;
	params->io_throttle = 0;
	params->io_limit = 0;
	params->carryover = IOBAND_DEFAULT_CARRYOVER;
}

static u32 ioband_effective_io_throttle(const struct ioband_sched_params *p)
{
	return p->io_throttle ? p->io_throttle : IOBAND_DEFAULT_IO_THROTTLE;
}

static u32 ioband_effective_io_limit(const struct ioband_sched_params *p)
{
	return p->io_limit ? p->io_limit : IOBAND_DEFAULT_IO_LIMIT;
}

static u32 ioband_effective_token_base(const struct ioband_sched_params *p)
{
	if (p->token_base)
		return p->token_base;
	if (p->policy == IOBAND_POLICY_WEIGHT_IOSIZE)
		return IOBAND_DEFAULT_TOKEN_BASE_IOSIZE;
	return IOBAND_DEFAULT_TOKEN_BASE;
}

bool ioband_sched_params_valid(const struct ioband_sched_params *params)
{
	u32 io_limit = ioband_effective_io_limit(params);

	return (unsigned int)params->policy < IOBAND_NR_POLICIES &&
	       params->token_base <= IOBAND_MAX_TOKEN_BASE &&
	       io_limit <= IOBAND_MAX_IO_LIMIT &&
	       ioband_effective_io_throttle(params) <= io_limit &&
	       params->carryover <= IOBAND_MAX_CARRYOVER;
}

static void ioband_sched_apply_params(struct ioband_sched *sched,
				      const struct ioband_sched_params *params)
{
	sched->params = *params;
	sched->token_base = ioband_effective_token_base(params);
	sched->io_throttle = ioband_effective_io_throttle(params);
	sched->io_limit = ioband_effective_io_limit(params);
	ioband_sched_update_credit(sched);
}

void ioband_sched_init(struct ioband_sched *sched,
		       const struct ioband_sched_params *params)
{
	struct ioband_sched empty = { 0 };

	*sched = empty;
	ioband_sched_apply_params(sched, params);
}

bool ioband_sched_set_params(struct ioband_sched *sched,
			     const struct ioband_sched_params *params)
{
	if (!ioband_sched_params_valid(params))
		return false;
	ioband_sched_apply_params(sched, params);
	return true;
}

bool ioband_sched_set_policy(struct ioband_sched *sched,
			     enum ioband_policy policy)
{
	struct ioband_sched_params params = sched->params;

	params.policy = policy;
	return ioband_sched_set_params(sched, &params);
}

bool ioband_sched_set_token_base(struct ioband_sched *sched, u32 token_base)
{
	struct ioband_sched_params params = sched->params;

	params.token_base = token_base;
	return ioband_sched_set_params(sched, &params);
}

bool ioband_sched_set_io_throttle(struct ioband_sched *sched, u32 io_throttle)
{
	struct ioband_sched_params params = sched->params;

	params.io_throttle = io_throttle;
	return ioband_sched_set_params(sched, &params);
}

bool ioband_sched_set_io_limit(struct ioband_sched *sched, u32 io_limit)
{
	struct ioband_sched_params params = sched->params;

	params.io_limit = io_limit;
	return ioband_sched_set_params(sched, &params);
}

bool ioband_sched_set_carryover(struct ioband_sched *sched, u32 carryover)
{
	struct ioband_sched_params params = sched->params;

	params.carryover = carryover;
	return ioband_sched_set_params(sched, &params);
}

void ioband_sched_set_passthrough(struct ioband_sched *sched, bool on)
{
	sched->passthrough = on;
}

/* ---- Entities ---- */

void ioband_sched_entity_init(struct ioband_sched *sched,
			      struct ioband_sched_entity *entity, u32 weight)
{
	struct ioband_sched_entity empty = { 0 };

	*entity = empty;
	entity->weight = ioband_clamp_weight(weight);
	entity->inv_weight = ioband_inv_weight(entity->weight);
	entity->finish = sched->vtime;
	entity->finish_era = sched->vtime_era;
	entity->attached = true;
	sched->total_weight += entity->weight;
	sched->nr_entities++;
	ioband_sched_update_credit(sched);
}

bool ioband_sched_set_weight(struct ioband_sched *sched,
			     struct ioband_sched_entity *entity, u32 weight)
{
	if (weight < IOBAND_MIN_WEIGHT || weight > IOBAND_MAX_WEIGHT)
		return false;
	if (entity->attached)
		sched->total_weight += (u64)weight - entity->weight;
	entity->weight = weight;
	entity->inv_weight = ioband_inv_weight(weight);
	ioband_sched_update_credit(sched);
	return true;
}

void ioband_sched_detach(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_entity *heir)
{
	if (entity == heir || !entity->attached)
		return;
	if (entity->nr_queued && heir) {
		ioband_rb_erase(sched, entity);
		if (heir->nr_queued) {
			heir->tail->next = entity->head;
		} else {
			heir->head = entity->head;
			heir->start = ioband_sched_activation_start(sched,
								    heir);
		}
		heir->tail = entity->tail;
		if (!heir->nr_queued)
			ioband_rb_insert(sched, heir);
		heir->nr_queued += entity->nr_queued;
		entity->head = NULL;
		entity->tail = NULL;
		entity->nr_queued = 0;
	}
	entity->attached = false;
	sched->total_weight -= entity->weight;
	sched->nr_entities--;
	ioband_sched_update_credit(sched);
}

/* ---- The IO path ---- */

bool ioband_sched_submit(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_item *item)
{
	u64 start;

	if (sched->passthrough) {
		sched->in_flight++;
		sched->stats.dispatched++;
		return true;
	}
	if (entity->nr_queued) {
		ioband_sched_enqueue(sched, entity, item);
		return false;
	}

	start = ioband_sched_activation_start(sched, entity);
	if (sched->in_flight < sched->io_limit &&
	    (!sched->leftmost ||
	     ioband_vt_before(start, sched->leftmost->start))) {
		ioband_sched_charge(sched, entity, item, start);
		return true;
	}
	entity->start = start;
	ioband_sched_enqueue(sched, entity, item);
	ioband_rb_insert(sched, entity);
	return false;
}

struct ioband_sched_item *ioband_sched_next(struct ioband_sched *sched,
					    struct ioband_sched_entity **entity)
{
	struct ioband_sched_entity *e = sched->leftmost, *next;
	struct ioband_sched_item *item;

	if (!e || (!sched->passthrough && sched->in_flight >= sched->io_limit))
		return NULL;

	item = e->head;
	e->head = item->next;
	if (!e->head)
		e->tail = NULL;
	item->next = NULL;
	e->nr_queued--;
	sched->nr_queued--;
	ioband_sched_charge(sched, e, item, e->start);

	if (!e->nr_queued) {
		ioband_rb_erase(sched, e);
	} else {
		/*
		 * The entity's next start is its finish. While that is still
		 * before its successor's, it stays leftmost and the tree is
		 * left alone: a heavy group's run of dispatches is O(1).
		 */
		next = ioband_rb_leftmost_next(e);
		if (!next || ioband_vt_before(e->finish, next->start)) {
			e->start = e->finish;
		} else {
			ioband_rb_erase(sched, e);
			e->start = e->finish;
			ioband_rb_insert(sched, e);
		}
	}
	if (entity)
		*entity = e;
	return item;
}

bool ioband_sched_complete(struct ioband_sched *sched,
			   struct ioband_sched_item *item)
{
	(void)item;
	if (sched->in_flight)
		sched->in_flight--;
	return ioband_sched_has_work(sched);
}
