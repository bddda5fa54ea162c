// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband scheduling core: which held bio goes down next.
 *
 * Documentation/ioband-design.rst is the design: the algorithm, why its
 * shares hold, what it costs, and the measurements behind its constants.
 * Comments in this file cite its sections as "section N". In short:
 *
 * The groups of a bandwidth domain (every ioband target with the same
 * ioband_device_id) share the device by weight, in IOs (policy `weight`),
 * sectors (`weight-iosize`) or device time, learnt from completions
 * (`weight-time`, section 18). The core is start-time fair queuing over
 * a window of D in flight, SFQ(D) (Jin, Chase and Kaur, SIGMETRICS 2004),
 * with one start tag per group: an item of cost c sent down for a group
 * of weight w moves the group's tag by c * 2^32 / w, and the held item of
 * the group with the smallest tag goes next (sections 1 and 2). Tags are
 * u64 and compared wrap-safe. A group that comes back from idle gets at
 * most carryover epochs of credit (section 3), no weight starves
 * (section 4), and a dispatch is O(log n) in the backlogged groups with
 * nothing allocated (section 5). dm-ioband's knobs keep their meaning
 * where they still have one (section 1).
 *
 * D is in sectors, sized from the device's own completions: twice its
 * best recent rate times its least latency (section 14), so that the
 * backlog forms here, where the weights act, and not in the device's
 * queue. A device that completes bios in the task that submits them has
 * no queue to protect: the window opens, and bios go down past the
 * scheduler. A group whose bios come back within IOBAND_IDLE_NS stays
 * competing after its queue runs empty, and the others wait for it while
 * the device queues our bios (section 15).
 *
 * Metadata, swap and journal bios go down at once and are charged to
 * their group as debt (section 16). A group's flusher waits in map while
 * its group holds its share of writeback, so that dirty pages stay where
 * the page cache's limits see them (section 17).
 *
 * `range-bw` and `weight-range` are mClock as dmClock runs it: real-time
 * reservation and limit tags beside the share tag (sections 8 to 13).
 *
 * The glue (dm-ioband-target.c) calls everything under the domain's
 * lock: submit from map, next from its dispatch loop, complete from
 * end_io, and it keeps one timer at ioband_sched_next_event_ns()
 * (sections 7 and 13).
 */
#include "ioband-sched.h"

/* A tag window of 2^62 is far wider than any live spread of tags. */
#define IOBAND_ERA_SHIFT	62

/* Return credit is clamped so that live tags stay within 2^62. */
#define IOBAND_MAX_CREDIT	(1ULL << 61)

/* A 4 KiB page is 8 sectors: the unit of a sized item under `weight`. */
#define IOBAND_SECTORS_PER_PAGE_SHIFT	3

#define IOBAND_NS_PER_SEC	1000000000ULL

/* The largest s64, as neither the kernel's nor libc's header is here. */
#define IOBAND_S64_MAX	((s64)(~0ULL >> 1))

#define ioband_entity_of(ptr, member)					\
	((struct ioband_sched_entity *)((char *)(ptr) -			\
		__builtin_offsetof(struct ioband_sched_entity, member)))

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

/*
 * The time of a call: @now_ns, or the latest time a call gave if @now_ns
 * is earlier. The glue may read the clock on one CPU before it takes the
 * lock that another CPU held meanwhile with a later time, and nothing here
 * may go back in time: a wait or a latency measured in ns would wrap.
 */
/* @item goes down: the newest of the items in flight (section 14a). */
static void ioband_flight_add(struct ioband_sched *sched,
			      struct ioband_sched_item *item)
{
	item->older = sched->newest;
	item->newer = NULL;
	if (sched->newest)
		sched->newest->newer = item;
	else
		sched->oldest = item;
	sched->newest = item;
}

/* @item, in flight and not overdue, leaves the list: O(1) wherever it is. */
static void ioband_flight_remove(struct ioband_sched *sched,
				 struct ioband_sched_item *item)
{
	if (item->older)
		item->older->newer = item->newer;
	else
		sched->oldest = item->newer;
	if (item->newer)
		item->newer->older = item->older;
	else
		sched->newest = item->older;
	item->older = NULL;
	item->newer = NULL;
}

/*
 * Section 14a: the items in flight for window.overdue_ns or more are
 * overdue, and no longer count against the window or io_limit. Dispatch
 * times never go back, so they are at the head of the list: one
 * comparison when there is none, and each item is looked at once.
 */
static void ioband_sched_find_overdue(struct ioband_sched *sched)
{
	struct ioband_window *w = &sched->window;
	struct ioband_sched_item *item;

	while ((item = sched->oldest) &&
	       sched->now - item->dispatch_ns >= w->overdue_ns) {
		ioband_flight_remove(sched, item);
		item->flags |= IOBAND_ITEM_OVERDUE;
		sched->nr_overdue++;
		sched->stats.overdue++;
		if (w->in_flight_sectors >= item->sectors)
			w->in_flight_sectors -= item->sectors;
		else
			w->in_flight_sectors = 0;
	}
}

static u64 ioband_sched_clock(struct ioband_sched *sched, u64 now_ns)
{
	if (now_ns < sched->now)
		now_ns = sched->now;
	sched->now = now_ns;
	ioband_sched_find_overdue(sched);
	return now_ns;
}

static inline bool ioband_sched_range(const struct ioband_sched *sched)
{
	return ioband_policy_is_range(sched->params.policy);
}

/* ---- Red-black trees of entities by tag (leftmost cached) ---- */

/*
 * A node's children are indexed by side (see struct ioband_sched_node):
 * each rotation and fix-up case below is written once for a side @dir,
 * and serves its mirror image with the sides swapped.
 */

/* The side of @parent that @n hangs from. */
static inline int ioband_rb_side(const struct ioband_sched_node *parent,
				 const struct ioband_sched_node *n)
{
	return parent->child[IOBAND_RB_LEFT] == n ? IOBAND_RB_LEFT :
						    IOBAND_RB_RIGHT;
}

static void ioband_rb_set_child(struct ioband_sched_tree *t,
				struct ioband_sched_node *parent,
				struct ioband_sched_node *old,
				struct ioband_sched_node *new)
{
	if (!parent)
		t->root = new;
	else
		parent->child[ioband_rb_side(parent, old)] = new;
}

/*
 * Moves @x down to its @dir side: its child on the other side rises.
 * Inline: called out of line, it made every erase save registers.
 */
static inline void ioband_rb_rotate(struct ioband_sched *sched,
				    struct ioband_sched_tree *t,
				    struct ioband_sched_node *x, int dir)
{
	struct ioband_sched_node *y = x->child[!dir];

	sched->stats.tree_steps++;
	x->child[!dir] = y->child[dir];
	if (y->child[dir])
		y->child[dir]->parent = x;
	y->parent = x->parent;
	ioband_rb_set_child(t, x->parent, x, y);
	y->child[dir] = x;
	x->parent = y;
}

static inline bool ioband_rb_is_red(const struct ioband_sched_node *n)
{
	return n && n->red;
}

/*
 * Inserts @n by n->key, after any node with an equal key: entities that
 * tie are served in the order they entered the tree.
 */
static void ioband_rb_insert(struct ioband_sched *sched,
			     struct ioband_sched_tree *t,
			     struct ioband_sched_node *n)
{
	struct ioband_sched_node **link = &t->root;
	struct ioband_sched_node *parent = NULL, *gparent, *uncle;
	bool leftmost = true;
	int dir;

	while (*link) {
		sched->stats.tree_steps++;
		parent = *link;
		if (ioband_vt_before(n->key, parent->key)) {
			dir = IOBAND_RB_LEFT;
		} else {
			dir = IOBAND_RB_RIGHT;
			leftmost = false;
		}
		link = &parent->child[dir];
	}
	n->parent = parent;
	n->child[IOBAND_RB_LEFT] = NULL;
	n->child[IOBAND_RB_RIGHT] = NULL;
	n->red = true;
	*link = n;
	if (leftmost)
		t->leftmost = n;

	while ((parent = n->parent) && parent->red) {
		sched->stats.tree_steps++;
		gparent = parent->parent;	/* a red node is not the root */
		dir = ioband_rb_side(gparent, parent);
		uncle = gparent->child[!dir];
		if (ioband_rb_is_red(uncle)) {
			parent->red = false;
			uncle->red = false;
			gparent->red = true;
			n = gparent;
			continue;
		}
		if (n == parent->child[!dir]) {
			ioband_rb_rotate(sched, t, parent, dir);
			n = parent;
			parent = n->parent;
		}
		parent->red = false;
		gparent->red = true;
		ioband_rb_rotate(sched, t, gparent, !dir);
	}
	t->root->red = false;
}

/* In-order successor of the leftmost node, which has no left child. */
static struct ioband_sched_node *
ioband_rb_leftmost_next(const struct ioband_sched_node *n)
{
	struct ioband_sched_node *next = n->child[IOBAND_RB_RIGHT];

	if (!next)
		return n->parent;
	while (next->child[IOBAND_RB_LEFT])
		next = next->child[IOBAND_RB_LEFT];
	return next;
}

/* In-order successor of @n, or NULL. */
static const struct ioband_sched_node *
ioband_rb_next(const struct ioband_sched_node *n)
{
	const struct ioband_sched_node *parent;

	if (n->child[IOBAND_RB_RIGHT]) {
		n = n->child[IOBAND_RB_RIGHT];
		while (n->child[IOBAND_RB_LEFT])
			n = n->child[IOBAND_RB_LEFT];
		return n;
	}
	while ((parent = n->parent) && n == parent->child[IOBAND_RB_RIGHT])
		n = parent;
	return parent;
}

/*
 * Restores the black heights after a black node left from under @parent,
 * where @x (perhaps NULL) took its place.
 */
static void ioband_rb_erase_fixup(struct ioband_sched *sched,
				  struct ioband_sched_tree *t,
				  struct ioband_sched_node *x,
				  struct ioband_sched_node *parent)
{
	struct ioband_sched_node *w;
	int dir;

	while (x != t->root && !ioband_rb_is_red(x)) {
		sched->stats.tree_steps++;
		dir = ioband_rb_side(parent, x);
		w = parent->child[!dir];	/* the sibling */
		if (w->red) {
			w->red = false;
			parent->red = true;
			ioband_rb_rotate(sched, t, parent, dir);
			w = parent->child[!dir];
		}
		if (!ioband_rb_is_red(w->child[IOBAND_RB_LEFT]) &&
		    !ioband_rb_is_red(w->child[IOBAND_RB_RIGHT])) {
			w->red = true;
			x = parent;
			parent = x->parent;
			continue;
		}
		if (!ioband_rb_is_red(w->child[!dir])) {
			w->child[dir]->red = false;
			w->red = true;
			ioband_rb_rotate(sched, t, w, !dir);
			w = parent->child[!dir];
		}
		w->red = parent->red;
		parent->red = false;
		w->child[!dir]->red = false;
		ioband_rb_rotate(sched, t, parent, dir);
		x = t->root;
		break;
	}
	if (x)
		x->red = false;
}

static void ioband_rb_erase(struct ioband_sched *sched,
			    struct ioband_sched_tree *t,
			    struct ioband_sched_node *z)
{
	struct ioband_sched_node *left = z->child[IOBAND_RB_LEFT];
	struct ioband_sched_node *right = z->child[IOBAND_RB_RIGHT];
	struct ioband_sched_node *y = z, *x, *parent;
	bool removed_red = z->red;

	if (t->leftmost == z)
		t->leftmost = ioband_rb_leftmost_next(z);

	if (!left || !right) {
		x = left ? left : right;
		parent = z->parent;
		ioband_rb_set_child(t, parent, z, x);
		if (x)
			x->parent = parent;
	} else {
		/* Replace @z by its successor @y, the leftmost of its right. */
		y = right;
		while (y->child[IOBAND_RB_LEFT]) {
			sched->stats.tree_steps++;
			y = y->child[IOBAND_RB_LEFT];
		}
		removed_red = y->red;
		x = y->child[IOBAND_RB_RIGHT];
		if (y->parent == z) {
			parent = y;
		} else {
			parent = y->parent;
			parent->child[IOBAND_RB_LEFT] = x;
			if (x)
				x->parent = parent;
			y->child[IOBAND_RB_RIGHT] = right;
			right->parent = y;
		}
		ioband_rb_set_child(t, z->parent, z, y);
		y->parent = z->parent;
		y->child[IOBAND_RB_LEFT] = left;
		left->parent = y;
		y->red = z->red;
	}
	if (!removed_red)
		ioband_rb_erase_fixup(sched, t, x, parent);
	z->parent = NULL;
	z->child[IOBAND_RB_LEFT] = NULL;
	z->child[IOBAND_RB_RIGHT] = NULL;
}

static inline struct ioband_sched_entity *
ioband_sched_pfirst(const struct ioband_sched *sched)
{
	struct ioband_sched_node *n = sched->ptree.leftmost;

	return n ? ioband_entity_of(n, pnode) : NULL;
}

/* ---- Tags ---- */

/*
 * The tokens one epoch hands out: token_base, or by default at most what
 * the device serves in IOBAND_EPOCH_MAX_NS at the window's rate, in the
 * policy's tokens (bios under weight, else sectors or sector-equivalents).
 */
u64 ioband_sched_epoch_tokens(const struct ioband_sched *sched)
{
	const struct ioband_window *w = &sched->window;
	u64 rate = sched->params.policy == IOBAND_POLICY_WEIGHT ?
		   w->items_rate : w->rate;
	u64 bound;

	if (sched->params.token_base || !rate)
		return sched->token_base;
	bound = ioband_div64(rate, IOBAND_NS_PER_SEC / IOBAND_EPOCH_MAX_NS);
	if (!bound)
		bound = 1;
	return bound < sched->token_base ? bound : sched->token_base;
}

static void ioband_sched_update_credit(struct ioband_sched *sched)
{
	u64 tokens = (u64)sched->params.carryover *
		     ioband_sched_epoch_tokens(sched);
	u64 weight = sched->total_weight;

	/* range-bw shares what is left equally: every weight counts 100 */
	if (sched->params.policy == IOBAND_POLICY_RANGE_BW)
		weight = (u64)sched->nr_entities * IOBAND_DEFAULT_WEIGHT;
	/* token_base counts sector-equivalents, finer tokens under it */
	if (sched->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		tokens <<= IOBAND_TIME_TOKEN_SHIFT;
	if (!tokens || !weight) {
		sched->credit = 0;
		return;
	}
	/* tokens <= 2^40, so tokens << 32 would overflow: clamp first. */
	if (tokens >= IOBAND_MAX_CREDIT >> IOBAND_VTIME_SHIFT)
		tokens = IOBAND_MAX_CREDIT >> IOBAND_VTIME_SHIFT;
	sched->credit = ioband_div64(tokens << IOBAND_VTIME_SHIFT, weight);
}

/*
 * What a bio of @dir costs under weight-time while that direction is not
 * in the model (before the first period, or no bio of it completed in
 * the latest second): one sector-equivalent whatever its size. Priced
 * low, its bios go down and put it in the model within a period (as a
 * size not yet seen, section 18). By its sectors, as it was, rrsw8's
 * first 256 KiB write on a disk cost 64 of the 4 KiB reads beside it,
 * its group's tag went seconds ahead and no write completed to correct
 * it; priced as the other direction's line, a sequential write was a
 * random read, five times what it costs on the bench's hdd, and the
 * writer got one forty-ninth of the reader's time for one eighth.
 */
static void ioband_time_cost_unmeasured(struct ioband_time_model *m, u32 dir)
{
	m->io_cost[dir] = 1ULL << IOBAND_TIME_SHIFT;
	m->sector_cost[dir] = 0;
}

/*
 * weight-time's cost of @item (section 18): the device time of its
 * direction's IO and of its sectors, in sector-equivalents, in tokens of
 * 2^-IOBAND_TIME_TOKEN_SHIFT of one. A discard or write-zeroes is left
 * out of the model and costs its sectors.
 */
static u64 ioband_time_cost(const struct ioband_time_model *m,
			    const struct ioband_sched_item *item)
{
	u32 dir = item->dir == IOBAND_WRITE ? IOBAND_WRITE : IOBAND_READ;
	u32 shift = IOBAND_TIME_SHIFT - IOBAND_TIME_TOKEN_SHIFT;
	u64 cost;

	if (item->flags & IOBAND_ITEM_SIZED)
		return (u64)item->sectors << IOBAND_TIME_TOKEN_SHIFT;
	/* io_cost <= 2^32, sector_cost <= 2^26, sectors < 2^32 */
	cost = m->io_cost[dir] + m->sector_cost[dir] * item->sectors;
	return (cost + (1ULL << (shift - 1))) >> shift;
}

/*
 * Cost of @item in tokens: one per IO under `weight`, its device time
 * under `weight-time`, else one per sector (the range policies count
 * KB/s, hence sectors).
 */
static u64 ioband_sched_cost(const struct ioband_sched *sched,
			     const struct ioband_sched_item *item)
{
	u64 cost = item->sectors;

	if (sched->params.policy == IOBAND_POLICY_WEIGHT)
		cost = item->flags & IOBAND_ITEM_SIZED ?
		       cost >> IOBAND_SECTORS_PER_PAGE_SHIFT : 1;
	else if (sched->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		cost = ioband_time_cost(&sched->time_model, item);
	if (!cost)
		return 1;
	if (cost > IOBAND_MAX_ITEM_COST)
		return IOBAND_MAX_ITEM_COST;
	return cost;
}

u64 ioband_sched_item_cost(const struct ioband_sched *sched,
			   const struct ioband_sched_item *item)
{
	return ioband_sched_cost(sched, item);
}

/* ---- Nested groups (section 19) ---- */

/*
 * @n's subtree gains (@on) or loses @weight of active queues: a change
 * that makes it start or stop competing goes on to its parent, as @n's
 * own weight. O(depth). Any change to a nested entity's sums changes the
 * effective weights in its tree: they are worked out again, each at its
 * entity's next dispatch (ioband_hier_inv_weight()).
 */
static void ioband_hier_add(struct ioband_sched *sched,
			    struct ioband_sched_entity *n, u64 weight, bool on)
{
	bool was_active;

	for (; n; n = n->parent) {
		if (n->parent || n->nr_children)
			sched->hier_gen++;
		was_active = n->active_weight;
		if (on)
			n->active_weight += weight;
		else
			n->active_weight -= weight;
		if (was_active == !!n->active_weight)
			return;
		weight = n->weight;
	}
}

/* @e's own queue starts (@on) or stops competing. */
static void ioband_hier_set_active(struct ioband_sched *sched,
				   struct ioband_sched_entity *e, bool on)
{
	if (e->active == on)
		return;
	e->active = on;
	ioband_hier_add(sched, e, e->weight, on);
}

/*
 * Effective weights are kept x 2^16 so that one of 1/256 (a weight-100
 * group five levels down behind siblings of weight 10,000) keeps three
 * significant figures; below that they are rounded up to it, so that a
 * step of the largest item stays under 2^60.
 */
#define IOBAND_HIER_SHIFT	16
#define IOBAND_HIER_MIN		(1ULL << (IOBAND_HIER_SHIFT - 8))

/*
 * 2^32 / the effective weight of @e's own queue: the weight of its top
 * ancestor, times its own weight over its own active sum, times each
 * ancestor's child on the way over that ancestor's active sum; as if @e
 * were competing, which it is not when an item goes down at once or is
 * charged as urgent debt. At the top level, the SFQ tree itself shares by
 * these weights. Worked out again only after a nested group's sums
 * change: O(depth) then, with one 32-bit division a level and one 64-step
 * division.
 */
static u64 ioband_hier_inv_weight(struct ioband_sched *sched,
				  struct ioband_sched_entity *e)
{
	struct ioband_sched_entity *n, *top = e;
	u64 below_weight = e->weight, fraction = 1ULL << 31, sum, share, x;
	bool below_active = e->active;

	if (e->hier_gen == sched->hier_gen && e->hinv_weight)
		return e->hinv_weight;
	/* fraction: 0.31 fixed point, each factor at most 1 */
	for (n = e; n; n = n->parent) {
		sum = n->active_weight;
		if (!below_active)
			sum += below_weight;
		if (sum > 0xFFFFFFFFU)
			sum = 0xFFFFFFFFU;
		share = below_weight * ioband_inv_weight((u32)sum);
		if (below_weight < sum && share < 1ULL << 32)
			fraction = (fraction * share) >> 32;
		below_active = n->active_weight;
		below_weight = n->weight;
		top = n;
	}
	x = (fraction * top->weight) >> (31 - IOBAND_HIER_SHIFT);
	if (x < IOBAND_HIER_MIN)
		x = IOBAND_HIER_MIN;
	e->hinv_weight = ioband_div64((1ULL << (32 + IOBAND_HIER_SHIFT)) +
				      x - 1, x);
	e->hier_gen = sched->hier_gen;
	return e->hinv_weight;
}

/*
 * 2^32 / weight for the share tag: range-bw weighs every group alike,
 * and nests nothing; a group neither nested nor with children has its
 * own weight.
 */
static inline u64 ioband_sched_inv_weight(struct ioband_sched *sched,
					  struct ioband_sched_entity *e)
{
	if (sched->params.policy == IOBAND_POLICY_RANGE_BW)
		return (u64)(0xFFFFFFFFU / IOBAND_DEFAULT_WEIGHT) + 1;
	if (!e->parent && !e->nr_children)
		return e->inv_weight;
	return ioband_hier_inv_weight(sched, e);
}

/* @e is out of itree, its sums left as they are. */
static void ioband_itree_remove(struct ioband_sched *sched,
				struct ioband_sched_entity *e)
{
	if (e->in_itree)
		ioband_rb_erase(sched, &sched->itree, &e->inode);
	e->in_itree = false;
}

/* @e joins ptree (keyed already), and so competes. */
static void ioband_ptree_enter(struct ioband_sched *sched,
			       struct ioband_sched_entity *e)
{
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
	ioband_itree_remove(sched, e);
	ioband_hier_set_active(sched, e, true);
}

/*
 * @e, out of ptree, has F as its next start. A nested group (or one with
 * children) that would come back at F, not at V - credit, keeps its share
 * in its parent's sums until V - credit passes F: it then reclaims what
 * it missed (section 3) from every group, as SFQ makes it, and so the
 * groups that took it meanwhile must have taken it by their shares of the
 * whole tree, not by shares that counted it out. Called again whenever F
 * moves while it is out of ptree (an item sent down at once, urgent debt).
 */
static void ioband_itree_update(struct ioband_sched *sched,
				struct ioband_sched_entity *e)
{
	bool keeps = (e->parent || e->nr_children) &&
		     !ioband_sched_range(sched) &&
		     !ioband_vt_before(e->finish, sched->vtime - sched->credit);

	ioband_itree_remove(sched, e);
	if (keeps) {
		e->inode.key = e->finish;
		ioband_rb_insert(sched, &sched->itree, &e->inode);
		e->in_itree = true;
	}
	ioband_hier_set_active(sched, e, keeps);
}

/* @e leaves ptree, its next start saved as F. */
static void ioband_ptree_leave(struct ioband_sched *sched,
			       struct ioband_sched_entity *e)
{
	ioband_rb_erase(sched, &sched->ptree, &e->pnode);
	ioband_itree_update(sched, e);
}

/* @e, idle in itree, leaves the sums. */
static void ioband_itree_leave(struct ioband_sched *sched,
			       struct ioband_sched_entity *e)
{
	ioband_itree_remove(sched, e);
	ioband_hier_set_active(sched, e, false);
}

/* V has moved: the idle groups it left more than the credit behind. */
static void ioband_itree_expire(struct ioband_sched *sched)
{
	struct ioband_sched_node *n;

	while ((n = sched->itree.leftmost) &&
	       ioband_vt_before(n->key, sched->vtime - sched->credit))
		ioband_itree_leave(sched, ioband_entity_of(n, inode));
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

/* @item goes down now: counted in flight, in items and in sectors. */
static void ioband_sched_start_item(struct ioband_sched *sched,
				    struct ioband_sched_entity *e,
				    struct ioband_sched_item *item)
{
	item->dispatch_ns = sched->now;
	if (!sched->in_flight || sched->in_flight < sched->time_model.channels)
		item->flags |= IOBAND_ITEM_CHANNEL_FREE;
	else
		item->flags &= ~IOBAND_ITEM_CHANNEL_FREE;
	ioband_flight_add(sched, item);
	sched->in_flight++;
	sched->window.in_flight_sectors += item->sectors;
	sched->stats.dispatched++;
	e->in_flight_sectors += item->sectors;
}

static u64 ioband_time_charge(struct ioband_sched *sched,
			      struct ioband_sched_entity *e,
			      struct ioband_sched_item *item, u64 cost);

/* Charges @item to @e at share tag @start and counts it in flight. */
static void ioband_sched_charge(struct ioband_sched *sched,
				struct ioband_sched_entity *e,
				struct ioband_sched_item *item, u64 start)
{
	u64 cost = ioband_sched_cost(sched, item);

	if (ioband_vt_before(sched->vtime, start)) {
		if ((start ^ sched->vtime) >> IOBAND_ERA_SHIFT)
			sched->vtime_era++;
		sched->vtime = start;
		ioband_itree_expire(sched);
	}
	if (sched->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		cost = ioband_time_charge(sched, e, item, cost);
	item->cost = (u32)cost;
	e->finish = start + cost * ioband_sched_inv_weight(sched, e);
	e->finish_era = sched->vtime_era;
	ioband_sched_start_item(sched, e, item);
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
	e->queued_sectors += item->sectors;
	if (e->in_flight_sectors + e->queued_sectors > e->peak_sectors)
		e->peak_sectors = e->in_flight_sectors + e->queued_sectors;
}

static struct ioband_sched_item *
ioband_sched_dequeue(struct ioband_sched *sched, struct ioband_sched_entity *e)
{
	struct ioband_sched_item *item = e->head;

	e->head = item->next;
	if (!e->head)
		e->tail = NULL;
	item->next = NULL;
	e->nr_queued--;
	sched->nr_queued--;
	e->queued_sectors -= item->sectors;
	return item;
}

/* ---- Competing groups (section 15) ---- */

/*
 * May @e stay competing once its queue is empty (section 15)? Under the
 * weight policies, outside passthrough, when bios have tended to reach
 * it within IOBAND_IDLE_NS of its previous event, and within
 * IOBAND_WAIT_LATENCIES of the device's mean latency (once measured):
 * a wait longer than what an IO takes idles more than it gives.
 */
static bool ioband_sched_may_wait(const struct ioband_sched *sched,
				  const struct ioband_sched_entity *e)
{
	u64 lat = sched->window.mean_lat_ns;

	return !ioband_sched_range(sched) && !sched->passthrough &&
	       !sched->window.completes_inline &&
	       e->attached && e->think_ns <= IOBAND_IDLE_NS &&
	       (!lat || e->think_ns <= IOBAND_WAIT_LATENCIES * lat);
}

/* @e has been silent for IOBAND_IDLE_NS: it no longer competes. */
static bool ioband_sched_wait_over(const struct ioband_sched *sched,
				   const struct ioband_sched_entity *e)
{
	return !ioband_vt_before(sched->now, e->active_ns + IOBAND_IDLE_NS);
}

/* @e, waiting, stops competing: out of ptree, its next start kept as F. */
static void ioband_sched_stop_waiting(struct ioband_sched *sched,
				      struct ioband_sched_entity *e)
{
	e->waiting = false;
	e->finish = e->pnode.key;
	e->finish_era = sched->vtime_era;
	ioband_ptree_leave(sched, e);
}

/*
 * @e, in ptree, gets the start tag @key: in place while it stays before
 * its successor (a heavy group's run of dispatches is O(1)), else erased
 * and inserted again.
 */
static void ioband_sched_rekey_entity(struct ioband_sched *sched,
				      struct ioband_sched_entity *e, u64 key)
{
	struct ioband_sched_node *next;

	if (sched->ptree.leftmost == &e->pnode) {
		next = ioband_rb_leftmost_next(&e->pnode);
		if (!next || ioband_vt_before(key, next->key)) {
			e->pnode.key = key;
			return;
		}
	}
	ioband_rb_erase(sched, &sched->ptree, &e->pnode);
	e->pnode.key = key;
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
}

/*
 * @e's queue is empty and its last item went down at F: it stays in
 * ptree as a waiter at F if it may, else it leaves the tree.
 */
static void ioband_sched_emptied(struct ioband_sched *sched,
				 struct ioband_sched_entity *e, bool in_tree)
{
	if (ioband_sched_may_wait(sched, e)) {
		e->waiting = true;
		if (in_tree) {
			ioband_sched_rekey_entity(sched, e, e->finish);
		} else {
			e->pnode.key = e->finish;
			ioband_ptree_enter(sched, e);
		}
		return;
	}
	e->waiting = false;
	if (in_tree)
		ioband_ptree_leave(sched, e);
	else
		ioband_itree_update(sched, e);
}

/*
 * Whether waiting @e no longer competes: silent for IOBAND_IDLE_NS, or
 * none does (passthrough drains; a device that completes inline is
 * never waited for).
 */
static bool ioband_sched_waiter_gone(const struct ioband_sched *sched,
				     const struct ioband_sched_entity *e)
{
	return sched->passthrough || sched->window.completes_inline ||
	       ioband_sched_wait_over(sched, e);
}

/*
 * The leftmost entity of ptree that still competes: waiters that no
 * longer do leave the tree on the way.
 */
static struct ioband_sched_entity *
ioband_sched_pfirst_competing(struct ioband_sched *sched)
{
	struct ioband_sched_entity *e;

	while ((e = ioband_sched_pfirst(sched)) && e->waiting &&
	       ioband_sched_waiter_gone(sched, e))
		ioband_sched_stop_waiting(sched, e);
	return e;
}

/* ---- Range policies: R and L tags in nanoseconds (section 8) ---- */

/*
 * Nanoseconds per sector at @kbps, << IOBAND_RANGE_SHIFT, rounded down
 * for a reservation or up for a limit: a 64-step division, only when a
 * range is set.
 */
static u64 ioband_ns_per_sector(u32 kbps, bool round_up)
{
	u64 n = IOBAND_NS_PER_SECTOR_AT_1KBPS << IOBAND_RANGE_SHIFT;
	u64 q = ioband_div64(n, kbps);

	if (round_up && q * kbps != n)
		q++;
	return q;
}

/* @cost sectors at @ns_per_sector: at most 2^20 * 2^41, no overflow. */
static inline u64 ioband_range_step(u64 cost, u64 ns_per_sector,
				    bool round_up)
{
	u64 x = cost * ns_per_sector;

	if (round_up)
		x += (1ULL << IOBAND_RANGE_SHIFT) - 1;
	return x >> IOBAND_RANGE_SHIFT;
}

/*
 * The R tag below which an entity entering the rtree may not start: the
 * smallest R of the groups already there if that is behind now (the
 * reservations are running late, section 10), else now.
 */
static u64 ioband_range_r_floor(const struct ioband_sched *sched, u64 now)
{
	const struct ioband_sched_node *n = sched->rtree.leftmost;
	u64 r;

	if (!n)
		return now;
	r = n->key + sched->r_shift;
	return ioband_vt_before(r, now) ? r : now;
}

/* @e enters the rtree, if it has a reservation: R = max(R, floor). */
static void ioband_range_rtree_enter(struct ioband_sched *sched,
				     struct ioband_sched_entity *e, u64 now)
{
	u64 floor, r = e->r_tag;

	if (!e->min_kbps)
		return;
	floor = ioband_range_r_floor(sched, now);
	if (ioband_vt_before(r, floor))
		r = floor;
	e->rnode.key = r - sched->r_shift;
	ioband_rb_insert(sched, &sched->rtree, &e->rnode);
	e->in_rtree = true;
}

static void ioband_range_rtree_leave(struct ioband_sched *sched,
				     struct ioband_sched_entity *e)
{
	if (!e->in_rtree)
		return;
	e->r_tag = e->rnode.key + sched->r_shift;
	ioband_rb_erase(sched, &sched->rtree, &e->rnode);
	e->in_rtree = false;
}

/*
 * A backlogged @e, in no tree, is over its max: into ltree, its start tag
 * kept as a finish tag (era and all) for ioband_range_unthrottle().
 */
static void ioband_range_throttle(struct ioband_sched *sched,
				  struct ioband_sched_entity *e)
{
	e->finish = e->pnode.key;
	e->finish_era = sched->vtime_era;
	e->lnode.key = e->l_tag;
	ioband_rb_insert(sched, &sched->ltree, &e->lnode);
	e->in_ltree = true;
	sched->stats.throttled++;
}

/* A backlogged @e's L tag is due: back into ptree (and rtree). */
static void ioband_range_unthrottle(struct ioband_sched *sched,
				    struct ioband_sched_entity *e, u64 now)
{
	ioband_rb_erase(sched, &sched->ltree, &e->lnode);
	e->in_ltree = false;
	e->pnode.key = ioband_sched_activation_start(sched, e);
	ioband_ptree_enter(sched, e);
	ioband_range_rtree_enter(sched, e, now);
}

/* @e has just become backlogged (or is re-keyed) under a range policy. */
static void ioband_range_activate(struct ioband_sched *sched,
				  struct ioband_sched_entity *e, u64 now)
{
	if (e->max_kbps && ioband_vt_before(now, e->l_tag)) {
		e->lnode.key = e->l_tag;
		ioband_rb_insert(sched, &sched->ltree, &e->lnode);
		e->in_ltree = true;
		return;
	}
	e->pnode.key = ioband_sched_activation_start(sched, e);
	ioband_ptree_enter(sched, e);
	ioband_range_rtree_enter(sched, e, now);
}

/* A backlogged @e joins the trees of the current policy. */
static void ioband_sched_activate(struct ioband_sched *sched,
				  struct ioband_sched_entity *e)
{
	if (ioband_sched_range(sched)) {
		ioband_range_activate(sched, e, sched->now);
		return;
	}
	e->pnode.key = ioband_sched_activation_start(sched, e);
	ioband_ptree_enter(sched, e);
}

/*
 * A backlogged @e leaves every tree, its start tag saved as its finish
 * tag so that ioband_sched_activate() puts it back where it was.
 */
static void ioband_sched_deactivate(struct ioband_sched *sched,
				    struct ioband_sched_entity *e)
{
	if (e->in_ltree) {
		ioband_rb_erase(sched, &sched->ltree, &e->lnode);
		e->in_ltree = false;
		return;
	}
	ioband_range_rtree_leave(sched, e);
	e->finish = e->pnode.key;
	e->finish_era = sched->vtime_era;
	ioband_ptree_leave(sched, e);
}

/*
 * Chooses the entity to serve at @now: groups whose L tag is due come
 * back first; then the constraint phase (smallest R, if due), else the
 * weight phase (smallest S among groups under their max). Keeps the
 * reservation lag within IOBAND_RANGE_MAX_LAG_NS by shifting every R.
 */
static struct ioband_sched_entity *
ioband_range_pick(struct ioband_sched *sched, u64 now, bool *reserved)
{
	struct ioband_sched_node *n;
	u64 r, floor;

	while ((n = sched->ltree.leftmost) && !ioband_vt_before(now, n->key))
		ioband_range_unthrottle(sched, ioband_entity_of(n, lnode),
					now);
	/* Passthrough drains, max or not. */
	if (sched->passthrough && !sched->ptree.leftmost &&
	    sched->ltree.leftmost)
		ioband_range_unthrottle(sched,
					ioband_entity_of(sched->ltree.leftmost,
							 lnode), now);
	*reserved = false;
	n = sched->rtree.leftmost;
	if (n) {
		r = n->key + sched->r_shift;
		floor = now - IOBAND_RANGE_MAX_LAG_NS;
		if (ioband_vt_before(r, floor)) {
			sched->r_shift += floor - r;
			sched->stats.r_shift_ns += floor - r;
			r = floor;
		}
		if (!ioband_vt_before(now, r)) {
			*reserved = true;
			return ioband_entity_of(n, rnode);
		}
	}
	return ioband_sched_pfirst(sched);
}

/* Sends down @e's head item at @now, in the phase ioband_range_pick chose. */
static struct ioband_sched_item *
ioband_range_dispatch(struct ioband_sched *sched, struct ioband_sched_entity *e,
		      bool reserved, u64 now)
{
	struct ioband_sched_item *item = ioband_sched_dequeue(sched, e);
	u64 cost = ioband_sched_cost(sched, item), l;

	ioband_range_rtree_leave(sched, e);
	ioband_ptree_leave(sched, e);
	if (reserved) {
		/* Constraint phase: R advances, S and V do not. */
		e->r_tag += ioband_range_step(cost, e->r_ns_per_sector, false);
		ioband_sched_start_item(sched, e, item);
		sched->stats.reserved++;
	} else {
		/* Weight phase: SFQ, R untouched (dmClock's R adjustment). */
		ioband_sched_charge(sched, e, item, e->pnode.key);
		e->pnode.key = e->finish;
	}
	if (e->max_kbps) {
		/* Lateness is forgiven up to IOBAND_RANGE_LIMIT_BURST_NS. */
		l = e->l_tag + ioband_range_step(cost, e->l_ns_per_sector,
						 true);
		if (ioband_vt_before(l, now - IOBAND_RANGE_LIMIT_BURST_NS))
			l = now - IOBAND_RANGE_LIMIT_BURST_NS;
		e->l_tag = l;
	}

	if (!e->nr_queued) {
		/* Idle: F (weight phase) or S (constraint phase) is kept. */
		if (reserved) {
			e->finish = e->pnode.key;
			e->finish_era = sched->vtime_era;
		}
		return item;
	}
	if (e->max_kbps && ioband_vt_before(now, e->l_tag)) {
		ioband_range_throttle(sched, e);
		return item;
	}
	ioband_ptree_enter(sched, e);
	if (e->min_kbps) {
		e->rnode.key = e->r_tag - sched->r_shift;
		ioband_rb_insert(sched, &sched->rtree, &e->rnode);
		e->in_rtree = true;
	}
	return item;
}

/*
 * Every backlogged entity leaves the trees of the policy it was queued
 * under and joins those of the current one: on a switch between a
 * weight and a range policy, O(n log n) once.
 */
static void ioband_sched_rekey(struct ioband_sched *sched)
{
	struct ioband_sched_entity *list = NULL, *e;

	for (;;) {
		if (sched->ptree.leftmost)
			e = ioband_entity_of(sched->ptree.leftmost, pnode);
		else if (sched->ltree.leftmost)
			e = ioband_entity_of(sched->ltree.leftmost, lnode);
		else
			break;
		if (e->waiting) {
			/* Only the weight policies keep groups competing. */
			ioband_sched_stop_waiting(sched, e);
			continue;
		}
		ioband_sched_deactivate(sched, e);
		e->rekey_next = list;
		list = e;
	}
	while (list) {
		e = list;
		list = e->rekey_next;
		e->rekey_next = NULL;
		ioband_sched_activate(sched, e);
	}
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

static u32 ioband_effective_token_base(const struct ioband_sched_params *p)
{
	if (p->token_base)
		return p->token_base;
	if (p->policy == IOBAND_POLICY_WEIGHT)
		return IOBAND_DEFAULT_TOKEN_BASE;
	return IOBAND_DEFAULT_TOKEN_BASE_IOSIZE;
}

bool ioband_sched_params_valid(const struct ioband_sched_params *params)
{
	u32 io_limit = params->io_limit;

	return (unsigned int)params->policy < IOBAND_NR_POLICIES &&
	       params->token_base <= IOBAND_MAX_TOKEN_BASE &&
	       io_limit <= IOBAND_MAX_IO_LIMIT &&
	       ioband_effective_io_throttle(params) <= IOBAND_MAX_IO_LIMIT &&
	       (!io_limit || ioband_effective_io_throttle(params) <= io_limit) &&
	       params->carryover <= IOBAND_MAX_CARRYOVER;
}

static void ioband_sched_apply_params(struct ioband_sched *sched,
				      const struct ioband_sched_params *params)
{
	bool was_range = ioband_sched_range(sched);

	sched->params = *params;
	sched->token_base = ioband_effective_token_base(params);
	sched->io_throttle = ioband_effective_io_throttle(params);
	sched->io_limit = params->io_limit;
	ioband_sched_update_credit(sched);
	if (was_range != ioband_sched_range(sched))
		ioband_sched_rekey(sched);
}

void ioband_sched_init(struct ioband_sched *sched,
		       const struct ioband_sched_params *params)
{
	/*
	 * Not a copy of an empty struct: that is a 4 KiB stack frame, over
	 * the debug kernel's limit. The builtin needs no header here and is
	 * the kernel's memset() there.
	 */
	__builtin_memset(sched, 0, sizeof(*sched));
	sched->window.sectors = IOBAND_WINDOW_MIN_SECTORS;
	/*
	 * One item for the first period: every bio finds a channel free, so
	 * the model's first service times are services, not latencies
	 * behind another, which on a disk took the device for two channels
	 * for good (section 18).
	 */
	sched->window.items = 1;
	sched->window.writeback_hold_sectors = IOBAND_WRITEBACK_HOLD_MIN_SECTORS;
	ioband_time_cost_unmeasured(&sched->time_model, IOBAND_READ);
	ioband_time_cost_unmeasured(&sched->time_model, IOBAND_WRITE);
	sched->window.overdue_ns = IOBAND_OVERDUE_MIN_NS;
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
	entity->r_tag = sched->now;
	entity->l_tag = sched->now;
	entity->active_ns = sched->now;
	entity->attached = true;
	sched->total_weight += entity->weight;
	sched->nr_entities++;
	ioband_sched_update_credit(sched);
}

bool ioband_sched_set_weight(struct ioband_sched *sched,
			     struct ioband_sched_entity *entity, u32 weight)
{
	struct ioband_sched_entity *parent = entity->parent;

	if (weight < IOBAND_MIN_WEIGHT || weight > IOBAND_MAX_WEIGHT)
		return false;
	if (entity->attached && !parent)
		sched->total_weight += (u64)weight - entity->weight;
	/* Neither sum can reach 0 on the way: it has this weight in it. */
	if (entity->active)
		entity->active_weight += (u64)weight - entity->weight;
	if (entity->active_weight && parent)
		parent->active_weight += (u64)weight - entity->weight;
	if (parent || entity->nr_children)
		sched->hier_gen++;
	entity->weight = weight;
	entity->inv_weight = ioband_inv_weight(weight);
	ioband_sched_update_credit(sched);
	return true;
}

bool ioband_sched_set_range(struct ioband_sched *sched,
			    struct ioband_sched_entity *entity,
			    u32 min_kbps, u32 max_kbps)
{
	bool requeue;

	if (max_kbps && min_kbps > max_kbps)
		return false;
	requeue = entity->attached && entity->nr_queued &&
		  ioband_sched_range(sched);
	if (requeue)
		ioband_sched_deactivate(sched, entity);
	entity->min_kbps = min_kbps;
	entity->max_kbps = max_kbps;
	entity->r_ns_per_sector = min_kbps ?
				  ioband_ns_per_sector(min_kbps, false) : 0;
	entity->l_ns_per_sector = max_kbps ?
				  ioband_ns_per_sector(max_kbps, true) : 0;
	entity->r_tag = sched->now;
	entity->l_tag = sched->now;
	if (requeue)
		ioband_sched_activate(sched, entity);
	return true;
}

void ioband_sched_set_parent(struct ioband_sched *sched,
			     struct ioband_sched_entity *entity,
			     struct ioband_sched_entity *parent)
{
	struct ioband_sched_entity *old = entity->parent;

	if (old == parent)
		return;
	if (entity->active_weight)
		ioband_hier_add(sched, old, entity->weight, false);
	if (old)
		old->nr_children--;
	else
		sched->total_weight -= entity->weight;
	entity->parent = parent;
	if (parent)
		parent->nr_children++;
	else
		sched->total_weight += entity->weight;
	if (entity->active_weight)
		ioband_hier_add(sched, parent, entity->weight, true);
	sched->hier_gen++;
	ioband_sched_update_credit(sched);
}

void ioband_sched_detach(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_entity *heir)
{
	if (entity == heir || !entity->attached)
		return;
	if (entity->waiting)
		ioband_sched_stop_waiting(sched, entity);
	if (entity->nr_queued && heir) {
		ioband_sched_deactivate(sched, entity);
		if (heir->nr_queued)
			heir->tail->next = entity->head;
		else
			heir->head = entity->head;
		heir->tail = entity->tail;
		heir->nr_queued += entity->nr_queued;
		heir->queued_sectors += entity->queued_sectors;
		if (heir->waiting)
			heir->waiting = false;	/* in ptree already */
		else if (heir->nr_queued == entity->nr_queued)
			ioband_sched_activate(sched, heir);
		entity->head = NULL;
		entity->tail = NULL;
		entity->nr_queued = 0;
		entity->queued_sectors = 0;
	}
	if (entity->in_itree)
		ioband_itree_leave(sched, entity);
	ioband_sched_set_parent(sched, entity, NULL);
	entity->attached = false;
	sched->total_weight -= entity->weight;
	sched->nr_entities--;
	ioband_sched_update_credit(sched);
}

/* ---- The IO path ---- */

/*
 * A bio reaches @e at sched->now: learn how long after its previous
 * event bios come when its queue is empty (a mean over about eight;
 * one long silence counts as 4 * IOBAND_IDLE_NS, so that a group that
 * paused once may wait again soon).
 */
static void ioband_sched_note_arrival(struct ioband_sched *sched,
				      struct ioband_sched_entity *e)
{
	u64 gap = sched->now - e->active_ns;

	/* A first bio follows no event of the group's own. */
	if (!e->active_ns || ioband_vt_before(sched->now, e->active_ns))
		gap = 0;
	if (gap > 4 * IOBAND_IDLE_NS)
		gap = 4 * IOBAND_IDLE_NS;
	e->think_ns = e->think_ns - (e->think_ns >> 3) + (gap >> 3);
	e->active_ns = sched->now;
}

/*
 * @item of @e goes down now, whatever the window (section 16). Its cost
 * moves @e's tag on, as if it had been dispatched: the debt delays @e's
 * next bios, and never by more than IOBAND_MAX_CREDIT beyond V.
 */
static void ioband_sched_urgent(struct ioband_sched *sched,
				struct ioband_sched_entity *e,
				struct ioband_sched_item *item)
{
	u64 cost = ioband_sched_cost(sched, item);
	u64 step = cost * ioband_sched_inv_weight(sched, e);
	u64 limit = sched->vtime + IOBAND_MAX_CREDIT;
	u64 tag;

	item->cost = (u32)cost;
	ioband_sched_start_item(sched, e, item);
	sched->stats.urgent++;
	if (!e->attached)
		return;
	if (e->nr_queued && !e->in_ltree) {
		/* The share tag only: a reservation is not charged. */
		tag = e->pnode.key + step;
		if (ioband_vt_before(limit, tag))
			tag = limit;
		ioband_sched_rekey_entity(sched, e, tag);
		return;
	}
	if (e->waiting) {
		ioband_sched_stop_waiting(sched, e);
	} else if (!e->nr_queued) {
		e->finish = ioband_sched_activation_start(sched, e);
		e->finish_era = sched->vtime_era;
	}
	/* Idle or over its max: the tag it comes back with moves on. */
	tag = e->finish + step;
	if (ioband_vt_before(limit, tag))
		tag = limit;
	e->finish = tag;
	if (!e->in_ltree)
		ioband_itree_update(sched, e);
}

static bool ioband_range_submit(struct ioband_sched *sched,
				struct ioband_sched_entity *entity,
				struct ioband_sched_item *item, u64 now)
{
	struct ioband_sched_entity *e;
	bool reserved;

	ioband_sched_enqueue(sched, entity, item);
	if (entity->nr_queued > 1)
		return false;
	ioband_range_activate(sched, entity, now);
	if (!ioband_sched_room(sched)) {
		sched->stats.window_full++;
		return false;
	}
	e = ioband_range_pick(sched, now, &reserved);
	if (e != entity)
		return false;
	ioband_range_dispatch(sched, entity, reserved, now);
	return true;
}

/*
 * The entity to serve next under the weight policies, or NULL: the first
 * in start-tag order that has items queued, if the competing groups
 * before it leave room for what they had in flight (section 15). Walks at
 * most IOBAND_WAIT_SKIP waiting groups; *@wait_until is the earliest end
 * of a wait that holds the others back (0: none).
 */
static struct ioband_sched_entity *
ioband_sched_pick(const struct ioband_sched *sched, u64 *wait_until)
{
	const struct ioband_sched_node *n;
	struct ioband_sched_entity *e;
	u64 reserve = 0, until;
	unsigned int waiters = 0;

	*wait_until = 0;
	for (n = sched->ptree.leftmost; n; n = ioband_rb_next(n)) {
		e = ioband_entity_of(n, pnode);
		if (e->nr_queued)
			return e;
		if (ioband_sched_waiter_gone(sched, e))
			continue;
		until = e->active_ns + IOBAND_IDLE_NS;
		if (!*wait_until || ioband_vt_before(until, *wait_until))
			*wait_until = until;
		/* A device with a queue of ours: what others get is its. */
		if (!sched->window.queueing ||
		    sched->window.queueing >= IOBAND_NO_QUEUEING)
			return NULL;
		if (e->peak_sectors > e->in_flight_sectors)
			reserve += e->peak_sectors - e->in_flight_sectors;
		if (sched->window.in_flight_sectors + reserve >=
		    sched->window.sectors || ++waiters >= IOBAND_WAIT_SKIP)
			return NULL;
	}
	return NULL;
}

/* @e's head item goes down at @e's start tag, under the weight policies. */
static struct ioband_sched_item *
ioband_sched_dispatch_head(struct ioband_sched *sched,
			   struct ioband_sched_entity *e)
{
	struct ioband_sched_item *item = ioband_sched_dequeue(sched, e);

	ioband_sched_charge(sched, e, item, e->pnode.key);
	if (e->nr_queued)
		ioband_sched_rekey_entity(sched, e, e->finish);
	else
		ioband_sched_emptied(sched, e, true);
	return item;
}

bool ioband_sched_submit(struct ioband_sched *sched,
			 struct ioband_sched_entity *entity,
			 struct ioband_sched_item *item, u64 now_ns)
{
	struct ioband_sched_entity *first;
	bool waiting, room;
	u64 start, until;

	now_ns = ioband_sched_clock(sched, now_ns);
	if (sched->passthrough) {
		ioband_sched_start_item(sched, entity, item);
		return true;
	}
	if (item->flags & IOBAND_ITEM_URGENT) {
		ioband_sched_urgent(sched, entity, item);
		return true;
	}
	if (ioband_sched_range(sched))
		return ioband_range_submit(sched, entity, item, now_ns);
	if (entity->nr_queued) {
		entity->active_ns = now_ns;
		ioband_sched_enqueue(sched, entity, item);
		return false;
	}

	/*
	 * The queue was empty: the group is idle, or waiting (still
	 * competing, in ptree at its next start) unless it fell silent too
	 * long ago or nobody waits any more (the same test that
	 * ioband_sched_pfirst_competing() prunes by below, so that it never
	 * takes this group out of ptree behind our back).
	 */
	if (entity->waiting && ioband_sched_waiter_gone(sched, entity))
		ioband_sched_stop_waiting(sched, entity);
	ioband_sched_note_arrival(sched, entity);
	waiting = entity->waiting;
	if (waiting) {
		/*
		 * Passed over while it waited, it comes back no further
		 * behind V than an idle group would (section 3).
		 */
		start = entity->pnode.key;
		if (ioband_vt_before(start, sched->vtime - sched->credit)) {
			start = sched->vtime - sched->credit;
			ioband_sched_rekey_entity(sched, entity, start);
		}
	} else {
		start = ioband_sched_activation_start(sched, entity);
	}
	first = ioband_sched_pfirst_competing(sched);
	room = ioband_sched_room(sched);
	if (room && (waiting ? first == entity :
		     !first || ioband_vt_before(start, first->pnode.key))) {
		ioband_sched_charge(sched, entity, item, start);
		ioband_sched_emptied(sched, entity, waiting);
		return true;
	}
	if (!room)
		sched->stats.window_full++;
	entity->waiting = false;
	ioband_sched_enqueue(sched, entity, item);
	if (!waiting) {
		entity->pnode.key = start;
		ioband_ptree_enter(sched, entity);
	}
	/* Behind groups that only wait: it goes if they leave room. */
	if (room) {
		first = ioband_sched_pick(sched, &until);
		if (first == entity) {
			ioband_sched_dispatch_head(sched, entity);
			return true;
		}
		if (!first && until)
			sched->stats.idle_waits++;
	}
	return false;
}

struct ioband_sched_item *ioband_sched_next(struct ioband_sched *sched,
					    struct ioband_sched_entity **entity,
					    u64 now_ns)
{
	struct ioband_sched_entity *e;
	struct ioband_sched_item *item;
	bool reserved;
	u64 until;

	now_ns = ioband_sched_clock(sched, now_ns);
	if (!sched->passthrough && !ioband_sched_room(sched)) {
		if (sched->nr_queued)
			sched->stats.window_full++;
		return NULL;
	}
	if (ioband_sched_range(sched)) {
		e = ioband_range_pick(sched, now_ns, &reserved);
		if (!e)
			return NULL;
		item = ioband_range_dispatch(sched, e, reserved, now_ns);
		if (entity)
			*entity = e;
		return item;
	}

	/* Passthrough prunes every waiter on the way: none competes. */
	ioband_sched_pfirst_competing(sched);
	e = ioband_sched_pick(sched, &until);
	if (!e) {
		/* The next turn is a competing group's: wait for its bio. */
		if (sched->nr_queued && until)
			sched->stats.idle_waits++;
		return NULL;
	}
	item = ioband_sched_dispatch_head(sched, e);
	if (entity)
		*entity = e;
	return item;
}

bool ioband_sched_has_work(const struct ioband_sched *sched)
{
	const struct ioband_sched_node *n = sched->ptree.leftmost;
	u64 until;

	if (sched->passthrough)
		return sched->nr_queued;
	if (!n || !ioband_sched_room(sched))
		return false;
	if (ioband_sched_range(sched))
		return ioband_entity_of(n, pnode)->nr_queued;
	return ioband_sched_pick(sched, &until);
}

u64 ioband_sched_next_event_ns(const struct ioband_sched *sched)
{
	const struct ioband_sched_node *n = sched->ltree.leftmost;
	u64 until;

	if (sched->passthrough)
		return 0;
	/*
	 * With no room below, a completion comes first, or else the oldest
	 * item in flight becomes overdue (which there is: with nothing in
	 * flight that counts, there is room).
	 */
	if (!ioband_sched_room(sched))
		return sched->nr_queued && sched->oldest ?
		       sched->oldest->dispatch_ns + sched->window.overdue_ns : 0;
	if (!ioband_sched_range(sched)) {
		if (sched->nr_queued && !ioband_sched_pick(sched, &until))
			return until;
		return 0;
	}
	return n ? n->key : 0;
}

/* ---- The window (section 14) ---- */

/* The best of the latest IOBAND_WINDOW_RATE_PERIODS periods' figures. */
static u64 ioband_best_of_periods(const u64 *periods)
{
	u64 best = 0;
	u32 i;

	for (i = 0; i < IOBAND_WINDOW_RATE_PERIODS; i++)
		if (periods[i] > best)
			best = periods[i];
	return best;
}

/*
 * The window that keeps the device busy: IOBAND_WINDOW_GAIN times what
 * the best recent rate delivers within the least latency, in sectors,
 * within [IOBAND_WINDOW_MIN_SECTORS, IOBAND_WINDOW_MAX_SECTORS].
 */
static u64 ioband_window_size(const struct ioband_window *w)
{
	u64 sectors;

	if (!w->min_lat_ns)
		return IOBAND_WINDOW_MIN_SECTORS;
	/* rate < 2^33 sectors/s and latency < 2^30 ns: no overflow */
	sectors = ioband_div64(w->rate * w->min_lat_ns, IOBAND_NS_PER_SEC) *
		  IOBAND_WINDOW_GAIN;
	if (sectors < IOBAND_WINDOW_MIN_SECTORS)
		return IOBAND_WINDOW_MIN_SECTORS;
	if (sectors > IOBAND_WINDOW_MAX_SECTORS)
		return IOBAND_WINDOW_MAX_SECTORS;
	return sectors;
}

/*
 * Whole periods completed inline in a row before the window opens
 * (section 14): one, and 2^6 times as many after each close.
 */
static u64 ioband_window_inline_periods_needed(const struct ioband_window *w)
{
	u32 backoffs = w->inline_closes < IOBAND_INLINE_MAX_BACKOFFS ?
		       w->inline_closes : IOBAND_INLINE_MAX_BACKOFFS;

	return 1ULL << (backoffs * IOBAND_INLINE_BACKOFF_SHIFT);
}

/* The current period ends at @now: its rate counts, the window follows. */
static void ioband_window_end_period(struct ioband_window *w, u64 now)
{
	u64 elapsed = now - w->period_start_ns;
	struct ioband_window_class *c;
	u64 rate = 0, lat = 0;
	u32 i;

	if (w->period_sectors)
		rate = ioband_div64(w->period_sectors * IOBAND_NS_PER_SEC,
				    elapsed);
	w->period_rates[w->period_index] = rate;
	w->period_items_rates[w->period_index] =
		ioband_div64(w->period_items * IOBAND_NS_PER_SEC, elapsed);
	w->period_index = (w->period_index + 1) % IOBAND_WINDOW_RATE_PERIODS;
	w->rate = ioband_best_of_periods(w->period_rates);
	w->items_rate = ioband_best_of_periods(w->period_items_rates);
	for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
		c = &w->classes[i];
		/* A minimum that was not seen again for long is renewed. */
		if (c->period_min_lat_ns &&
		    now - c->min_lat_at_ns > IOBAND_WINDOW_MIN_LAT_NS) {
			c->min_lat_ns = c->period_min_lat_ns;
			c->min_lat_at_ns = now;
		}
		/* items < 2^33 in a period, latency < 2^30 ns */
		lat += c->period_items * c->min_lat_ns;
		c->period_items = 0;
		c->period_min_lat_ns = 0;
	}
	if (w->period_items) {
		w->min_lat_ns = ioband_div64(lat, w->period_items);
		w->mean_lat_ns = ioband_div64(w->period_lat_ns,
					      w->period_items);
	}
	if (w->period_least_ns)
		w->queueing = ioband_div64(w->period_lat_ns << 8,
					   w->period_least_ns);
	if (w->period_items && w->period_inline_items == w->period_items)
		w->inline_periods++;
	else
		w->inline_periods = 0;
	w->completes_inline = w->inline_periods >=
			      ioband_window_inline_periods_needed(w);
	w->period_lat_ns = 0;
	w->period_least_ns = 0;
	w->period_inline_items = 0;
	w->sectors = ioband_window_size(w);
	w->overdue_ns = IOBAND_OVERDUE_LATENCIES * w->mean_lat_ns;
	if (w->overdue_ns < IOBAND_OVERDUE_MIN_NS)
		w->overdue_ns = IOBAND_OVERDUE_MIN_NS;
	w->writeback_hold_sectors =
		ioband_div64(w->rate, IOBAND_NS_PER_SEC / IOBAND_WRITEBACK_HOLD_NS);
	if (w->writeback_hold_sectors < IOBAND_WRITEBACK_HOLD_MIN_SECTORS)
		w->writeback_hold_sectors = IOBAND_WRITEBACK_HOLD_MIN_SECTORS;
	w->period_start_ns = now;
	w->period_sectors = 0;
	w->period_items = 0;
	w->periods++;
}

/* The size class of an item of @sectors: floor(log2), the last open. */
static u32 ioband_window_class(u32 sectors)
{
	u32 class = sectors ? 31 - __builtin_clz(sectors) : 0;

	return class < IOBAND_WINDOW_SIZE_CLASSES ?
	       class : IOBAND_WINDOW_SIZE_CLASSES - 1;
}

/* An item did not complete inline: the window is open no more. */
static void ioband_window_close_inline(struct ioband_window *w)
{
	if (!w->completes_inline)
		return;
	w->completes_inline = false;
	w->inline_closes++;
}

void ioband_sched_missed_inline(struct ioband_sched *sched)
{
	ioband_window_close_inline(&sched->window);
}

/* @item completed at @now after @lat_ns below us. */
static void ioband_window_complete(struct ioband_window *w,
				   const struct ioband_sched_item *item,
				   u64 lat_ns, u64 now)
{
	u32 sectors = item->sectors;
	struct ioband_window_class *c =
		&w->classes[ioband_window_class(sectors)];

	/*
	 * An overdue item left in_flight_sectors already, and its latency
	 * says nothing of the pipeline: only its sectors count, and whether
	 * it completed inline.
	 */
	if (item->flags & IOBAND_ITEM_OVERDUE) {
		if (!(item->flags & IOBAND_ITEM_COMPLETED_INLINE))
			ioband_window_close_inline(w);
		w->period_sectors += sectors;
		return;
	}
	if (w->in_flight_sectors >= sectors)
		w->in_flight_sectors -= sectors;
	else
		w->in_flight_sectors = 0;
	/* Latencies of a second or more say nothing of the pipeline. */
	if (lat_ns >= IOBAND_NS_PER_SEC)
		lat_ns = IOBAND_NS_PER_SEC - 1;
	if (!lat_ns)
		lat_ns = 1;
	if (!c->period_min_lat_ns || lat_ns < c->period_min_lat_ns)
		c->period_min_lat_ns = lat_ns;
	if (!c->min_lat_ns || lat_ns <= c->min_lat_ns) {
		c->min_lat_ns = lat_ns;
		c->min_lat_at_ns = now;
	}
	c->period_items++;
	w->period_items++;
	if (item->flags & IOBAND_ITEM_COMPLETED_INLINE)
		w->period_inline_items++;
	else
		ioband_window_close_inline(w);
	w->period_sectors += sectors;
	/* latency < 2^30 ns, items < 2^33 in a period: no overflow */
	w->period_lat_ns += lat_ns;
	w->period_least_ns += c->min_lat_ns;
	if (!w->period_start_ns || ioband_vt_before(now, w->period_start_ns)) {
		w->period_start_ns = now;
		return;
	}
	if (now - w->period_start_ns >= IOBAND_WINDOW_PERIOD_NS)
		ioband_window_end_period(w, now);
}

/* ---- weight-time's cost model (section 18) ---- */

/*
 * @a * @b / @c, rounded down, for @c > 0 and a quotient below 2^64:
 * a 128-bit product in two halves and a long division, once a period.
 */
static u64 ioband_mul_div(u64 a, u64 b, u64 c)
{
	u64 a_lo = a & 0xffffffffULL, a_hi = a >> 32;
	u64 b_lo = b & 0xffffffffULL, b_hi = b >> 32;
	u64 lo = a_lo * b_lo, mid1 = a_hi * b_lo, mid2 = a_lo * b_hi;
	u64 hi = a_hi * b_hi, mid, quotient = 0, rem;
	int bit;

	mid = (lo >> 32) + (mid1 & 0xffffffffULL) + (mid2 & 0xffffffffULL);
	hi += (mid1 >> 32) + (mid2 >> 32) + (mid >> 32);
	lo = (lo & 0xffffffffULL) | (mid << 32);
	if (!hi)
		return ioband_div64(lo, c);
	if (hi >= c)
		return ~0ULL;	/* the quotient does not fit: saturate */
	rem = hi;
	for (bit = 63; bit >= 0; bit--) {
		bool carry = rem >> 63;

		rem = (rem << 1) | ((lo >> bit) & 1);
		if (carry || rem >= c) {
			rem -= c;
			quotient |= 1ULL << bit;
		}
	}
	return quotient;
}

/* The same for signed @a and @b, rounded towards zero; |result| < 2^63. */
static s64 ioband_smul_div(s64 a, s64 b, u64 c)
{
	bool negative = (a < 0) != (b < 0);
	u64 q = ioband_mul_div(a < 0 ? -(u64)a : (u64)a,
			       b < 0 ? -(u64)b : (u64)b, c);

	if (q > (u64)IOBAND_S64_MAX)
		q = IOBAND_S64_MAX;
	return negative ? -(s64)q : (s64)q;
}

/*
 * The device time of @sectors in direction @dir, as the model stands:
 * 0 before it has measured that direction.
 */
static u64 ioband_time_service_ns(const struct ioband_time_model *m,
				  u32 dir, u64 sectors)
{
	/* sector_ns < 2^47 (a second a sector), sectors <= 2^20 */
	if (sectors > IOBAND_MAX_ITEM_COST)
		sectors = IOBAND_MAX_ITEM_COST;
	return m->io_ns[dir] + ((m->sector_ns[dir] * sectors) >> 16);
}

/*
 * A bio of @c completed in the latest IOBAND_TIME_LEAST_NS. Its count of
 * items is no test of that: forgotten rounded up, one bio is gone after
 * a period.
 */
static bool ioband_time_seen(const struct ioband_time_class *c)
{
	u32 i;

	for (i = 0; i < IOBAND_TIME_LEAST_SLOTS; i++)
		if (c->slot_least_ns[i])
			return true;
	return false;
}

/*
 * Fits @dir's service time to its size classes' least latencies, each
 * against the size of the bio that set it (a class spans twice its
 * smallest size, and its least is its smallest bios'), by least
 * squares, each class one point: every size the device was given in the
 * latest second, or whose count has not yet forgotten it, counts,
 * however rare, but a class whose least latency waited below only if
 * all of the direction's did: with those in the line, on the ssd
 * preset, 4 KiB reads beside bios of 4 KiB to 1 MiB, half writes,
 * split the device's time up to 67% off 1:1, and reads against writes
 * of those sizes at 8:1 up to 16% off. With one point, or all of one
 * size, the line is flat: it prices that size right, which is all the
 * device was asked for, and prices a larger bio low until one
 * completes, where a line through the origin priced a disk's 1 MiB read
 * as 256 of its 4 KiB ones and held its group for seconds. A line with
 * a negative slope or intercept is replaced by the best flat one or the
 * best one through the origin. A direction none of whose sizes is recent
 * keeps its line, from every class it has measured: priced as
 * unmeasured (a sector-equivalent a bio), a disk's one 256 KiB write a
 * second cost a twentieth of its time, and its completion, priced so,
 * made the device look capped by bytes.
 */
static void ioband_time_fit(struct ioband_time_model *m, u32 dir)
{
	u64 n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, size, det;
	const struct ioband_time_class *c;
	bool waited_only = true, recent = false;
	s64 slope, intercept;
	u32 i;

	m->io_ns[dir] = 0;
	m->sector_ns[dir] = 0;
	for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
		c = &m->classes[dir][i];
		if (c->least_ns && (c->items || ioband_time_seen(c)))
			recent = true;
	}
	for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
		c = &m->classes[dir][i];
		if (c->least_ns && (c->items || ioband_time_seen(c) || !recent) &&
		    c->least_kind != IOBAND_TIME_WAITED)
			waited_only = false;
	}
	for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
		c = &m->classes[dir][i];
		if (!c->least_ns ||
		    (!c->items && !ioband_time_seen(c) && recent) ||
		    (c->least_kind == IOBAND_TIME_WAITED && !waited_only))
			continue;
		size = c->least_sectors;
		if (size > IOBAND_MAX_ITEM_COST)
			size = IOBAND_MAX_ITEM_COST;
		/* 12 points, size <= 2^20, least < 2^30: sums < 2^54 */
		n++;
		sx += size;
		sy += c->least_ns;
		sxx += size * size;
		sxy += size * c->least_ns;
	}
	if (!n)
		return;
	det = n * sxx - sx * sx;
	if (n > 1 && det) {
		slope = ioband_smul_div((s64)(n * sxy) - (s64)(sx * sy),
					1LL << 16, det);
		intercept = ioband_smul_div((s64)sy -
					    ioband_smul_div(sx, slope, 1ULL << 16),
					    1, n);
		if (slope < 0) {
			m->io_ns[dir] = ioband_div64(sy, n);
			return;
		}
		if (intercept >= 0) {
			m->io_ns[dir] = intercept;
			m->sector_ns[dir] = slope;
			return;
		}
	}
	if (n == 1 || !det) {
		m->io_ns[dir] = ioband_div64(sy, n);
		return;
	}
	m->sector_ns[dir] = ioband_mul_div(sxy, 1ULL << 16, sxx);
}

/*
 * The costs of each direction in sector-equivalents: the mean device
 * time of a sector over what recently completed, so that on a device
 * whose time is its bytes a bio costs its sectors, as under
 * weight-iosize, and a token_base keeps its meaning in sectors. Summed
 * per period and forgotten as a whole (unit_time_ns, unit_sectors), not
 * over the classes' counts: a class's count is forgotten rounded up, so
 * a writer's one 256 KiB write every few periods was in the mean one
 * period and out the next, the unit moved 200 times between them, and
 * a write charged at the small one put its group's tag seconds ahead.
 */
static void ioband_time_update_costs(struct ioband_time_model *m)
{
	u64 unit;
	u32 dir;

	for (dir = 0; dir < IOBAND_NR_DIRS; dir++)
		ioband_time_fit(m, dir);
	unit = m->unit_sectors ?
	       ioband_mul_div(m->unit_time_ns, 1ULL << 16, m->unit_sectors) : 0;
	/*
	 * The unit moves only by more than IOBAND_TIME_UNIT_STEP times: it
	 * is a scale, and one that moves between two charges makes them
	 * count in different units. On a disk, a 256 KiB write a second
	 * beside 4 KiB reads moved it 4 times at each write's completion,
	 * and the writer's bios, charged after one, got 7.03:1 of the
	 * device's time for 8:1 (hdd-seek-rrsw8-time).
	 */
	if (!unit || !m->unit_ns || unit > IOBAND_TIME_UNIT_STEP * m->unit_ns ||
	    IOBAND_TIME_UNIT_STEP * unit < m->unit_ns)
		m->unit_ns = unit;
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++) {
		m->io_cost[dir] = 0;
		m->sector_cost[dir] = 1ULL << IOBAND_TIME_SHIFT;
		if (m->rate_limited)
			continue;
		if (!m->unit_ns || (!m->io_ns[dir] && !m->sector_ns[dir])) {
			ioband_time_cost_unmeasured(m, dir);
			continue;
		}
		m->io_cost[dir] = ioband_mul_div(m->io_ns[dir] << 16,
						 1ULL << IOBAND_TIME_SHIFT,
						 m->unit_ns);
		if (m->io_cost[dir] > (u64)IOBAND_TIME_MAX_IO_COST << IOBAND_TIME_SHIFT)
			m->io_cost[dir] = (u64)IOBAND_TIME_MAX_IO_COST << IOBAND_TIME_SHIFT;
		m->sector_cost[dir] = ioband_mul_div(m->sector_ns[dir],
						     1ULL << IOBAND_TIME_SHIFT,
						     m->unit_ns);
		if (m->sector_cost[dir] >
		    (u64)IOBAND_TIME_MAX_SECTOR_COST << IOBAND_TIME_SHIFT)
			m->sector_cost[dir] =
				(u64)IOBAND_TIME_MAX_SECTOR_COST << IOBAND_TIME_SHIFT;
	}
}

/*
 * @c forgets 2^-IOBAND_TIME_FORGET_SHIFT of its items, rounded up so that
 * a class seen no more ends at 0, and the same part of its sectors, so
 * that its mean size stays what it was. Each rounded up on its own, the
 * few items of a class of large bios fell faster than its sectors: a
 * 256 KiB writer's bios were taken for 272 KiB ones, and priced 6% low.
 */
static void ioband_time_forget(struct ioband_time_class *c)
{
	u64 forget;

	if (!c->items) {
		c->sectors = 0;
		return;
	}
	forget = (c->items + (1ULL << IOBAND_TIME_FORGET_SHIFT) - 1) >>
		 IOBAND_TIME_FORGET_SHIFT;
	c->sectors -= ioband_mul_div(c->sectors, forget, c->items);
	c->items -= forget;
}

/*
 * Whether @ns of @kind is a better least latency for a class than
 * @old_ns of @old_kind (0: none). A latency is no less than its bio's
 * service, and one whose bio found a channel free is that service; one
 * whose bio found none keeps a wait below, and a least that keeps one
 * raises the model, which takes more channels for busy, which widens
 * the window, which lengthens the wait: on a disk, bios of any size from
 * 4 KiB to 1 MiB, each class a few a period, took each other's waits
 * into their least latencies, the window grew to 90 bios for one
 * channel and the model priced a 4 KiB read 42 times what it costs. So
 * a latency that waited is better than one that did not only if less
 * than half of it, which a class's sizes (twice its smallest) cannot
 * explain: the device sped up (writes four times slower for a while,
 * then not), or the bio that found a channel free waited on something
 * else (a byte cap's next budget). Taken at any less, rare classes'
 * latencies behind a wait put 4 KiB reads beside bios of 4 KiB to
 * 1 MiB up to 19% off 1:1 on the ssd preset. Where the device is
 * seen serving one bio at a time, a bio that found it busy gives its
 * service instead (the time from the completion before its own), and
 * the class's figure of that kind is the mean of those (see
 * ioband_time_least()). It is better than any latency that waited;
 * not than one that did not, for on a device of more channels than
 * seen that time is less than the service.
 */
static bool ioband_time_better(u64 ns, enum ioband_time_kind kind,
			       u64 old_ns, enum ioband_time_kind old_kind)
{
	if (!old_ns)
		return true;
	if (kind == IOBAND_TIME_SERIAL && old_kind != IOBAND_TIME_SERIAL)
		return old_kind == IOBAND_TIME_WAITED;
	if (old_kind == IOBAND_TIME_SERIAL && kind != IOBAND_TIME_SERIAL)
		return kind == IOBAND_TIME_FREE;
	if (kind == IOBAND_TIME_SERIAL)
		return true;
	if (kind == IOBAND_TIME_FREE && old_kind == IOBAND_TIME_WAITED)
		return ns <= 2 * old_ns;
	if (kind == IOBAND_TIME_WAITED && old_kind == IOBAND_TIME_FREE)
		return 2 * ns < old_ns;
	return ns < old_ns;
}

/*
 * The mean of @c's services timed serially in the latest
 * IOBAND_TIME_LEAST_NS, and of their sizes in *@sectors; 0: none.
 */
static u64 ioband_time_serial_mean(const struct ioband_time_class *c,
				   u64 *sectors)
{
	u64 ns = 0, secs = 0, items = 0;
	u32 i;

	for (i = 0; i < IOBAND_TIME_LEAST_SLOTS; i++) {
		ns += c->slot_serial_ns[i];
		secs += c->slot_serial_sectors[i];
		items += c->slot_serial_items[i];
	}
	if (!items)
		return 0;
	*sectors = ioband_div64(secs, items);
	return ioband_div64(ns, items);
}

/*
 * @item, of @c, completed at @now after @lat_ns: the best least latency
 * of the current slot, and of the class at once. A service timed
 * serially is the time from the completion before: the bio's service
 * and its seek, on a device serving one bio at a time in whatever
 * order. The class's figure of them is their mean over the latest
 * second, not their most: on a disk that seeks (20 to 110 ms a 4 KiB
 * read) the most was the longest seek, priced every read at twice its
 * mean, took the disk for three channels and let the loop above run
 * away (tests/sim scenario hdd-seek-rr8-time).
 */
static u64 ioband_time_least(struct ioband_time_model *m,
			     struct ioband_time_class *c,
			     const struct ioband_sched_item *item,
			     u64 lat_ns, u64 now)
{
	u64 service_ns = 0;
	enum ioband_time_kind kind = IOBAND_TIME_FREE;
	u32 slot = m->slot_index;
	u64 ns = lat_ns, sectors = item->sectors;

	if (!(item->flags & IOBAND_ITEM_CHANNEL_FREE)) {
		kind = IOBAND_TIME_WAITED;
		if (m->serial && now - m->complete_ns < lat_ns &&
		    now != m->complete_ns) {
			kind = IOBAND_TIME_SERIAL;
			ns = now - m->complete_ns;
		}
	} else if (m->serial) {
		kind = IOBAND_TIME_SERIAL;
	}
	if (kind == IOBAND_TIME_SERIAL) {
		service_ns = ns;
		/* < 1 s each, fewer than 2^32 in a slot: < 2^62 */
		c->slot_serial_ns[slot] += ns;
		c->slot_serial_sectors[slot] += item->sectors;
		c->slot_serial_items[slot]++;
		ns = ioband_time_serial_mean(c, &sectors);
	}
	if (ioband_time_better(ns, kind, c->slot_least_ns[slot],
			       c->slot_kind[slot])) {
		c->slot_least_ns[slot] = ns;
		c->slot_least_sectors[slot] = sectors;
		c->slot_kind[slot] = kind;
	}
	if (ioband_time_better(ns, kind, c->least_ns, c->least_kind)) {
		c->least_ns = ns;
		c->least_sectors = sectors;
		c->least_kind = kind;
	}
	return service_ns;
}

/*
 * @c's least latency becomes the best of its slots, the latest
 * IOBAND_TIME_LEAST_NS, probe periods included: at depth, one period
 * rarely has a bio of each class that found a channel free. A class
 * with no bio in that time keeps what it had. Services timed serially
 * count as their mean over that time.
 */
static void ioband_time_renew_least(struct ioband_time_class *c)
{
	enum ioband_time_kind kind = IOBAND_TIME_FREE;
	u64 least = 0, sectors = 0;
	u32 i;

	for (i = 0; i < IOBAND_TIME_LEAST_SLOTS; i++)
		if (c->slot_least_ns[i] &&
		    ioband_time_better(c->slot_least_ns[i], c->slot_kind[i],
				       least, kind)) {
			least = c->slot_least_ns[i];
			sectors = c->slot_least_sectors[i];
			kind = c->slot_kind[i];
		}
	if (kind == IOBAND_TIME_SERIAL)
		least = ioband_time_serial_mean(c, &sectors);
	/*
	 * A second of latencies that all waited below does not replace a
	 * service measured before, unless less than half of it (the device
	 * sped up): taken, a wait raised the model, the model's channels
	 * widened the window and lengthened the wait, and on a disk that
	 * seeks the loop ran away (a 4 KiB read priced at 1 s, the window
	 * 70 bios for one channel: hdd-seek-rr8-time). A device that slows
	 * down is still followed: the window's probe periods send down no
	 * more than the channels, so its frequent classes find one free.
	 */
	if (kind == IOBAND_TIME_WAITED && c->least_ns &&
	    c->least_kind != IOBAND_TIME_WAITED && 2 * least >= c->least_ns)
		return;
	if (least) {
		c->least_ns = least;
		c->least_sectors = sectors;
		c->least_kind = kind;
	}
}

/*
 * A busy figure of @service_ns in @elapsed ns, with a backlog of ours held
 * throughout: whether the device is limited by something else than its
 * service (see IOBAND_TIME_RATE_LIMITED). Over a figure, not a period: a
 * disk of 36 ms a read has periods of 90 ms with one completion in them,
 * and a period so took it for a capped device, every bio cost its
 * sectors, for a period at a time.
 */
static void ioband_time_rate_limited(struct ioband_time_model *m,
				     u64 service_ns, u64 elapsed)
{
	m->busy_pct = service_ns >= elapsed * 100 ? 10000 :
		      ioband_div64(service_ns * 100, elapsed);
	if (service_ns * IOBAND_TIME_RATE_LIMITED < elapsed)
		m->rate_limited = true;
	else if (service_ns >= elapsed)
		m->rate_limited = false;
}

/*
 * A period of @elapsed ns ends at @now: the channels its completions kept
 * busy are counted, the least latencies become the latest second's, the
 * counts forget 2^-IOBAND_TIME_FORGET_SHIFT, and the model is fitted
 * again. If a backlog of ours was held through the period, the service
 * times the model gave its completions say whether they explain the
 * time.
 */
static void ioband_time_end_period(struct ioband_time_model *m, u64 now,
				   u64 elapsed)
{
	u64 busy_ns;
	bool new_slot = now - m->slot_start_ns >=
			IOBAND_TIME_LEAST_NS / IOBAND_TIME_LEAST_SLOTS;
	struct ioband_time_class *c;
	u32 dir, i;

	if (new_slot) {
		m->slot_index = (m->slot_index + 1) % IOBAND_TIME_LEAST_SLOTS;
		m->slot_start_ns = now;
	}
	/*
	 * A figure of a few completions is a coarse one: on a disk of
	 * 50 ms a read, a 55 ms period holding two completions says 1.8
	 * channels, and the best of the latest figures (the window's) took
	 * the disk for two channels; a bio that went down behind another
	 * then counted as one that found a channel free, its wait raised
	 * the model, and the loop below ran away. So a figure sums periods
	 * until it holds IOBAND_TIME_BUSY_ITEMS completions: within an
	 * eighth of the truth on a device serving one bio at a time. A
	 * fast device has that many in every period.
	 */
	m->busy_service_ns += m->period_service_ns;
	m->busy_lat_ns += m->period_lat_ns;
	m->busy_elapsed_ns += elapsed;
	m->busy_completions += m->period_completions;
	m->busy_idle |= m->period_idle;
	if (m->busy_completions >= IOBAND_TIME_BUSY_ITEMS ||
	    m->busy_elapsed_ns >= IOBAND_TIME_LEAST_NS) {
		busy_ns = m->busy_service_ns < m->busy_lat_ns ?
			  m->busy_service_ns : m->busy_lat_ns;
		m->period_busy[m->busy_index] =
			ioband_mul_div(busy_ns, 256, m->busy_elapsed_ns);
		m->busy_index = (m->busy_index + 1) %
				IOBAND_WINDOW_RATE_PERIODS;
		if (!m->busy_idle && m->unit_ns)
			ioband_time_rate_limited(m, m->busy_service_ns,
						 m->busy_elapsed_ns);
		m->busy_service_ns = 0;
		m->busy_lat_ns = 0;
		m->busy_elapsed_ns = 0;
		m->busy_completions = 0;
		m->busy_idle = false;
	}

	m->unit_time_ns -= m->unit_time_ns >> IOBAND_TIME_FORGET_SHIFT;
	m->unit_sectors -= m->unit_sectors >> IOBAND_TIME_FORGET_SHIFT;
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++)
		for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
			c = &m->classes[dir][i];
			if (new_slot) {
				c->slot_least_ns[m->slot_index] = 0;
				c->slot_least_sectors[m->slot_index] = 0;
				c->slot_serial_ns[m->slot_index] = 0;
				c->slot_serial_sectors[m->slot_index] = 0;
				c->slot_serial_items[m->slot_index] = 0;
			}
			ioband_time_renew_least(c);
			ioband_time_forget(c);
			if (c->least_ns) {
				/*
				 * No more than the latencies of the period's
				 * completions, each under 1 s, of no more in
				 * flight than the largest window (2^17
				 * bios of a sector): < 2^48 a period, < 2^52
				 * with the sums forgotten 1/16 a period.
				 */
				m->unit_time_ns += c->period_items * c->least_ns;
				m->unit_sectors += c->period_sectors;
			}
			c->items += c->period_items;
			c->sectors += c->period_sectors;
			c->period_items = 0;
			c->period_sectors = 0;
		}
	m->periods++;
	ioband_time_update_costs(m);
}

/*
 * The mean of the latest busy figures (x 256), for whether the device
 * serves one bio at a time. Not their best, the window's: a disk that
 * seeks, each read priced at the mean of its seeks, shows a figure above
 * 1.5 whenever eight short seeks come together, and the best kept it
 * for eight figures, 64 completions, in which its bios' services went
 * unmeasured; two random readers at 8:1 then split 4.09:1 in device time
 * (hdd-seek-rr8-time, seed 3).
 */
static u64 ioband_time_mean_busy(const struct ioband_time_model *m)
{
	u64 sum = 0;
	u32 i, n = 0;

	for (i = 0; i < IOBAND_WINDOW_RATE_PERIODS; i++)
		if (m->period_busy[i]) {
			sum += m->period_busy[i];
			n++;
		}
	return n ? ioband_div64(sum, n) : 0;
}

/*
 * Section 14: the window in items under weight-time, from the channels
 * the latest periods kept busy, the latest period's included.
 */
static u32 ioband_time_window_items(struct ioband_time_model *m)
{
	u64 busy = ioband_best_of_periods(m->period_busy), items;

	if (busy > (u64)IOBAND_MAX_IO_LIMIT << 8)
		busy = (u64)IOBAND_MAX_IO_LIMIT << 8;
	m->channels = busy >> 8;
	/*
	 * Serving one bio at a time: less than one and a half channels
	 * busy, on the mean of the latest figures (see
	 * ioband_time_mean_busy()). A disk priced right shows 1 to 1.1; a
	 * device of two channels 1.96, which taken for one priced its rare
	 * sizes at the time between two completions, a fraction of their
	 * service. Rounded up, not down, the channels made a device of two
	 * channels, a 60 ms write beside 2.3 ms reads, run away to 7
	 * (rrsw8-time-few-writes 4.54:1).
	 */
	m->serial = busy && ioband_time_mean_busy(m) < 3 << 7;
	/* u32: no 64-bit division on a 32-bit kernel */
	if (!((u32)m->periods % IOBAND_WINDOW_PROBE_PERIODS)) {
		items = busy >> 8;
		return items ? items : 1;
	}
	items = (busy * IOBAND_WINDOW_GAIN + 255) >> 8;
	if (items < IOBAND_WINDOW_MIN_ITEMS)
		return IOBAND_WINDOW_MIN_ITEMS;
	return items < IOBAND_MAX_IO_LIMIT ? items : IOBAND_MAX_IO_LIMIT;
}

/*
 * @item completed at @now after @lat_ns below us: its service where it
 * was measured (a device serving one bio at a time), else 0.
 */
static u64 ioband_time_complete(struct ioband_sched *sched,
				const struct ioband_sched_item *item,
				u64 lat_ns, u64 now)
{
	u64 service_ns = 0;
	struct ioband_time_model *m = &sched->time_model;
	u32 dir = item->dir == IOBAND_WRITE ? IOBAND_WRITE : IOBAND_READ;
	struct ioband_time_class *c =
		&m->classes[dir][ioband_window_class(item->sectors)];

	if (!m->period_start_ns || ioband_vt_before(now, m->period_start_ns)) {
		m->period_start_ns = now;
		m->complete_ns = now;
		return 0;
	}
	if (!sched->nr_queued)
		m->period_idle = true;
	if (!(item->flags & IOBAND_ITEM_SIZED)) {
		/* Latencies of a second or more say nothing of the cost. */
		if (lat_ns >= IOBAND_NS_PER_SEC)
			lat_ns = IOBAND_NS_PER_SEC - 1;
		if (!lat_ns)
			lat_ns = 1;
		service_ns = ioband_time_least(m, c, item, lat_ns, now);
		c->period_items++;
		c->period_sectors += item->sectors;
		m->period_service_ns += ioband_time_service_ns(m, dir,
							       item->sectors);
		m->period_lat_ns += lat_ns;
		m->period_completions++;
	}
	m->complete_ns = now;
	if (now - m->period_start_ns < IOBAND_TIME_PERIOD_NS)
		return service_ns;
	ioband_time_end_period(m, now, now - m->period_start_ns);
	sched->window.items = ioband_time_window_items(m);
	m->period_idle = false;
	m->period_service_ns = 0;
	m->period_lat_ns = 0;
	m->period_completions = 0;
	m->period_start_ns = now;
	return service_ns;
}

/*
 * What @item of @e is charged under weight-time, its model's price being
 * @cost: on a device seen serving one bio at a time, each bio's service
 * is measured at its completion (ioband_time_least()), and what it took
 * beyond or short of the model's service when it was charged is settled
 * with its group's next bio. A model of sizes and directions prices a
 * disk's random reads alike, but a group's read far from the others'
 * pays a seek there and causes one back: two random readers 256 MiB
 * apart at 8:1 split the bench's hdd 3.95:1 in device time, 7.85:1
 * settled (tests/sim hdd-seek-rr8-time). The carry is kept in ns, within
 * a second either way, and turned into tokens at the charge, so that
 * price and settlement count in the same unit. A bio costs at least a
 * token; what it cannot take stays carried.
 */
static u64 ioband_time_charge(struct ioband_sched *sched,
			      struct ioband_sched_entity *e,
			      struct ioband_sched_item *item, u64 cost)
{
	const struct ioband_time_model *m = &sched->time_model;
	u32 dir = item->dir == IOBAND_WRITE ? IOBAND_WRITE : IOBAND_READ;
	s64 extra, settled;

	if ((item->flags & IOBAND_ITEM_SIZED) || m->rate_limited ||
	    !m->unit_ns)
		return cost;
	item->service_ns = ioband_time_service_ns(m, dir, item->sectors);
	if (!e->time_carry)
		return cost;
	/* |carry| <= 2^30 ns, unit_ns >= 1: |extra| < 2^50 */
	extra = ioband_smul_div(e->time_carry, 1LL << IOBAND_TIME_NS_SHIFT,
				m->unit_ns);
	settled = (s64)cost + extra;
	if (settled < 1)
		settled = 1;
	if (settled > IOBAND_MAX_ITEM_COST)
		settled = IOBAND_MAX_ITEM_COST;
	if (settled - (s64)cost == extra)
		e->time_carry = 0;
	else
		e->time_carry -= ioband_smul_div(settled - (s64)cost,
						 m->unit_ns,
						 1ULL << IOBAND_TIME_NS_SHIFT);
	return (u64)settled;
}

/* @item of @e, charged under weight-time, took the device @service_ns. */
static void ioband_time_settle(struct ioband_sched *sched,
			       struct ioband_sched_entity *e,
			       const struct ioband_sched_item *item,
			       u64 service_ns)
{
	if (sched->params.policy != IOBAND_POLICY_WEIGHT_TIME ||
	    !item->service_ns)
		return;
	e->time_carry += (s64)service_ns - (s64)item->service_ns;
	if (e->time_carry > (s64)IOBAND_NS_PER_SEC)
		e->time_carry = IOBAND_NS_PER_SEC;
	if (e->time_carry < -(s64)IOBAND_NS_PER_SEC)
		e->time_carry = -(s64)IOBAND_NS_PER_SEC;
}

bool ioband_sched_complete(struct ioband_sched *sched,
			   struct ioband_sched_entity *entity,
			   struct ioband_sched_item *item, u64 now_ns)
{
	u64 periods, service_ns;

	now_ns = ioband_sched_clock(sched, now_ns);
	if (item->flags & IOBAND_ITEM_OVERDUE) {
		if (sched->nr_overdue)
			sched->nr_overdue--;
	} else {
		ioband_flight_remove(sched, item);
	}
	if (sched->in_flight)
		sched->in_flight--;
	periods = sched->window.periods;
	ioband_window_complete(&sched->window, item,
			       now_ns - item->dispatch_ns, now_ns);
	/* A new rate may bound the default epoch: the credit follows it. */
	if (sched->window.periods != periods)
		ioband_sched_update_credit(sched);
	service_ns = ioband_time_complete(sched, item,
					  now_ns - item->dispatch_ns, now_ns);
	if (service_ns)
		ioband_time_settle(sched, entity, item, service_ns);
	if (entity->in_flight_sectors >= item->sectors)
		entity->in_flight_sectors -= item->sectors;
	else
		entity->in_flight_sectors = 0;
	/* The peak forgets an eighth per completion, down to what it has. */
	entity->peak_sectors -= entity->peak_sectors >> 3;
	if (entity->peak_sectors <
	    entity->in_flight_sectors + entity->queued_sectors)
		entity->peak_sectors = entity->in_flight_sectors +
				       entity->queued_sectors;
	if (entity->attached) {
		entity->active_ns = now_ns;
		/* A completion is why a closed-loop submitter comes back. */
		if (!entity->nr_queued && !entity->waiting && !entity->in_ltree &&
		    ioband_sched_may_wait(sched, entity)) {
			entity->waiting = true;
			entity->pnode.key = ioband_sched_activation_start(sched,
									  entity);
			ioband_ptree_enter(sched, entity);
		}
	}
	ioband_sched_pfirst_competing(sched);
	return ioband_sched_has_work(sched);
}

/* ---- Draining one entity (one target's suspend) ---- */

/*
 * A target of a shared domain is suspended while the domain keeps
 * scheduling its other targets, so passthrough, which drains the whole
 * domain, will not do: the glue drains that target's entities one by one
 * here, and sends their later bios down as urgent items until it resumes.
 * The items go down uncharged, as under passthrough: the target has to let
 * them go, and its groups' tags stay where they were, so that they get
 * their share again after the resume.
 */
struct ioband_sched_item *ioband_sched_drain(struct ioband_sched *sched,
					     struct ioband_sched_entity *entity,
					     u64 now_ns)
{
	struct ioband_sched_item *items = entity->head, *item;

	now_ns = ioband_sched_clock(sched, now_ns);
	if (!entity->attached)
		return NULL;
	if (entity->waiting)
		ioband_sched_stop_waiting(sched, entity);
	if (!entity->nr_queued)
		return NULL;
	ioband_sched_deactivate(sched, entity);
	for (item = items; item; item = item->next)
		ioband_sched_start_item(sched, entity, item);
	sched->nr_queued -= entity->nr_queued;
	entity->nr_queued = 0;
	entity->queued_sectors = 0;
	entity->head = NULL;
	entity->tail = NULL;
	return items;
}
