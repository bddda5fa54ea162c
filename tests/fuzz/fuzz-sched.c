// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the scheduling core (dm-ioband/ioband-sched.c):
 * the input is a program of operations on one domain (submit, with the
 * urgent and sized flags, or a storm of urgent items; next; complete,
 * in the submitting task (inline) or not; the dispatch loop; attach,
 * detach, weight, range; one group's drain (a target's suspend); policy,
 * io_limit, io_throttle, token_base, carryover; passthrough; the clock,
 * by microseconds to seconds; the glue's timer) run against the core and
 * against a model that knows only which item is where. After every step
 * the invariants are checked:
 *
 *  - no item lost or duplicated: each held item is in exactly one
 *    entity's FIFO, in the order the model expects (submission order per
 *    entity; a detached entity's items appended to its heir's), next()
 *    returns only held items, the one at the head of its entity's FIFO,
 *    with that entity; a drain returns all of its entity's, in that order;
 *  - counters add up: submitted = dispatched + queued, dispatched =
 *    completed + in_flight, stats.dispatched, stats.urgent, the
 *    per-entity and domain nr_queued, each entity's held sectors (what
 *    its flusher's writeback hold compares) and the window's in-flight
 *    sectors match the model; no counter wraps below zero; the items
 *    in flight that are not overdue are in the core's list, oldest
 *    first, and those that are went down at least IOBAND_OVERDUE_MIN_NS
 *    before (section 14a);
 *  - room (section 14): an ordinary item goes down (submit or next) only
 *    when nothing is in flight, or when io_limit (if set) is not reached
 *    and the sectors in flight are below the window, items overdue
 *    at the call's time not counted (below
 *    IOBAND_INLINE_MAX_SECTORS, if larger, while the device completes
 *    inline; a completion that is not inline ends that at once); urgent
 *    items and passthrough go down at once; the window stays within its
 *    floor and ceiling;
 *  - work conservation but for the timer: next() returns NULL only when
 *    nothing is held, or there is no room, or a competing group is next
 *    in line (weight policies) or every group holding items is over its
 *    max (range policies), and in those last two cases
 *    ioband_sched_next_event_ns() is in the future; has_work() and
 *    complete()'s answer agree with next();
 *  - the trees: ptree, rtree and ltree are valid red-black trees ordered
 *    by their keys, leftmost their minimum; ptree holds exactly the
 *    attached entities with held items and not over their max, and the
 *    waiting ones (attached, nothing held, weight policies only); rtree
 *    those of ptree with a reservation, ltree those over their max; a
 *    detached entity is in none and not waiting; every ptree key is
 *    within 2^62 of vtime (the wrap-safe comparison's domain: urgent
 *    debt stops at V + 2^61);
 *  - nr_entities and total_weight are those of the attached entities;
 *    a refused knob, weight or range changes nothing.
 *
 * At the end everything in flight completes and everything held drains,
 * the clock moving to each timer the core asks for: every item comes
 * back exactly once, nr_queued, in_flight and the window's in-flight
 * sectors are 0, and once IOBAND_IDLE_NS has passed nobody competes.
 *
 * The calls into the core's IO path go through the w_* wrappers below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-sched.h"

#define NR_ENT		8
#define NR_ITEMS	192

#define MS		(1000ULL * 1000)

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-sched: step %u (op %u): CHECK(%s) failed\n", \
				step, last_op, #cond);			\
			abort();					\
		}							\
	} while (0)

static unsigned int step, last_op;

/* The clock given to the core: monotonic, never 0 (as ktime_get_ns()). */
static u64 clock_ns;

/* ---- wrappers: the only calls into the scheduling core's IO path ---- */
static bool w_submit(struct ioband_sched *s, struct ioband_sched_entity *e,
		     struct ioband_sched_item *it)
{
	return ioband_sched_submit(s, e, it, clock_ns);
}

static struct ioband_sched_item *w_next(struct ioband_sched *s,
					struct ioband_sched_entity **e)
{
	return ioband_sched_next(s, e, clock_ns);
}

static bool w_complete(struct ioband_sched *s, struct ioband_sched_entity *e,
		       struct ioband_sched_item *it)
{
	return ioband_sched_complete(s, e, it, clock_ns);
}

/* ---- the model ---- */
enum item_state { FREE, HELD, IN_FLIGHT };

struct model {
	struct ioband_sched sched;
	struct ioband_sched_entity ent[NR_ENT];
	struct ioband_sched_item items[NR_ITEMS];
	enum item_state state[NR_ITEMS];
	int owner[NR_ITEMS];		/* held: its entity; in flight: charged */
	u64 seq[NR_ITEMS];		/* FIFO position of a held item */
	u64 next_seq;
	bool attached[NR_ENT];
	u32 weight[NR_ENT];
	u32 in_flight_of[NR_ENT];	/* items in flight charged to each */
	u64 submitted, dispatched, completed, urgent;
	u32 held, in_flight;
	bool passthrough;
};

static int item_index(const struct model *m, const struct ioband_sched_item *it)
{
	if (it < m->items || it >= m->items + NR_ITEMS)
		return -1;
	return (int)(it - m->items);
}

static int ent_index(const struct model *m, const struct ioband_sched_entity *e)
{
	if (e < m->ent || e >= m->ent + NR_ENT)
		return -1;
	return (int)(e - m->ent);
}

/* The held item of entity @e that comes first (smallest seq), or -1. */
static int model_head(const struct model *m, int e)
{
	int i, best = -1;

	for (i = 0; i < NR_ITEMS; i++)
		if (m->state[i] == HELD && m->owner[i] == e &&
		    (best < 0 || m->seq[i] < m->seq[best]))
			best = i;
	return best;
}

/* The sectors of what @e holds, which its queued_sectors must be. */
static u64 model_queued_sectors(const struct model *m, int e)
{
	u64 sectors = 0;
	int i;

	for (i = 0; i < NR_ITEMS; i++)
		if (m->state[i] == HELD && m->owner[i] == e)
			sectors += m->items[i].sectors;
	return sectors;
}

static bool vt_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

static u64 tag_dist(u64 a, u64 b)
{
	s64 d = (s64)(a - b);

	return d < 0 ? -(u64)d : (u64)d;
}

/*
 * The items in flight that count against the window, and their sectors:
 * not overdue, nor overdue by a call at @now, which looks at the
 * threshold before it completes anything (section 14a). @now 0: as the
 * core counts them now.
 */
static u32 model_counted(const struct model *m, u64 now, u64 *sectors)
{
	const struct ioband_sched *s = &m->sched;
	const struct ioband_sched_item *it;
	u32 n = 0;
	int i;

	if (now && vt_before(now, s->now))
		now = s->now;
	*sectors = 0;
	for (i = 0; i < NR_ITEMS; i++) {
		it = &m->items[i];
		if (m->state[i] != IN_FLIGHT || (it->flags & IOBAND_ITEM_OVERDUE) ||
		    (now && now - it->dispatch_ns >= s->window.overdue_ns))
			continue;
		n++;
		*sectors += it->sectors;
	}
	return n;
}

/*
 * Room below for an ordinary item (ioband-sched.h, recomputed here), for
 * a call at @now (0: as the core stands).
 */
static bool model_room_at(const struct model *m, u64 now)
{
	const struct ioband_sched *s = &m->sched;
	u64 sectors;
	u32 in_flight = model_counted(m, now, &sectors);

	if (!in_flight)
		return true;
	if (s->io_limit && in_flight >= s->io_limit)
		return false;
	if (s->window.completes_inline &&
	    s->window.sectors < IOBAND_INLINE_MAX_SECTORS)
		return sectors < IOBAND_INLINE_MAX_SECTORS;
	if (s->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		return in_flight < s->window.items;
	return sectors < s->window.sectors;
}

enum { PTREE, RTREE, LTREE };

static const struct ioband_sched_entity *
node_entity(const struct ioband_sched_node *n, int which)
{
	size_t off = which == PTREE ?
		     offsetof(struct ioband_sched_entity, pnode) :
		     which == RTREE ?
		     offsetof(struct ioband_sched_entity, rnode) :
		     offsetof(struct ioband_sched_entity, lnode);

	return (const struct ioband_sched_entity *)((const char *)n - off);
}

/* Red-black check of one tree; returns the black height, marks members. */
static int check_rb(const struct model *m, const struct ioband_sched_node *n,
		    const struct ioband_sched_node *parent, int which,
		    unsigned int *count, bool seen[NR_ENT])
{
	const struct ioband_sched_node *l, *r;
	int lh, rh, idx;

	if (!n)
		return 1;
	idx = ent_index(m, node_entity(n, which));
	CHECK(idx >= 0);
	CHECK(!seen[idx]);
	seen[idx] = true;
	CHECK(++*count <= NR_ENT);
	CHECK(n->parent == parent);
	l = n->child[IOBAND_RB_LEFT];
	r = n->child[IOBAND_RB_RIGHT];
	if (n->red) {
		CHECK(!l || !l->red);
		CHECK(!r || !r->red);
	}
	if (l)
		CHECK(!vt_before(n->key, l->key));
	if (r)
		CHECK(!vt_before(r->key, n->key));
	lh = check_rb(m, l, n, which, count, seen);
	rh = check_rb(m, r, n, which, count, seen);
	CHECK(lh == rh);
	return lh + !n->red;
}

static void check_tree(const struct model *m, const struct ioband_sched_tree *t,
		       int which, bool seen[NR_ENT])
{
	const struct ioband_sched_node *n = t->root;
	unsigned int count = 0;

	if (n)
		CHECK(!n->red);
	check_rb(m, n, NULL, which, &count, seen);
	while (n && n->child[IOBAND_RB_LEFT])
		n = n->child[IOBAND_RB_LEFT];
	CHECK(n == t->leftmost);
}

static void check_invariants(struct model *m)
{
	const struct ioband_sched *s = &m->sched;
	bool in_p[NR_ENT] = { false }, in_r[NR_ENT] = { false };
	bool in_l[NR_ENT] = { false };
	bool range = ioband_policy_is_range(s->params.policy);
	unsigned int attached = 0;
	const struct ioband_sched_item *it, *prev = NULL;
	u64 total_weight = 0, sectors = 0, counted_sectors;
	u32 sum_queued = 0, overdue = 0, listed = 0;
	int e, i;

	/* counters add up, none wrapped */
	CHECK(m->submitted == m->dispatched + m->held);
	CHECK(m->dispatched == m->completed + m->in_flight);
	CHECK(s->nr_queued == m->held);
	CHECK(s->in_flight == m->in_flight);
	CHECK(s->stats.dispatched == m->dispatched);
	CHECK(s->stats.urgent == m->urgent);
	for (i = 0; i < NR_ITEMS; i++) {
		if (m->state[i] != IN_FLIGHT ||
		    !(m->items[i].flags & IOBAND_ITEM_OVERDUE))
			continue;
		overdue++;
		CHECK(s->now - m->items[i].dispatch_ns >= IOBAND_OVERDUE_MIN_NS);
	}
	CHECK(s->nr_overdue == overdue);
	CHECK(model_counted(m, 0, &counted_sectors) + overdue == m->in_flight);
	CHECK(s->window.in_flight_sectors == counted_sectors);
	for (it = s->oldest; it; prev = it, it = it->newer) {
		i = item_index(m, it);
		CHECK(i >= 0);
		CHECK(m->state[i] == IN_FLIGHT);
		CHECK(!(it->flags & IOBAND_ITEM_OVERDUE));
		CHECK(it->older == prev);
		CHECK(!prev || !vt_before(it->dispatch_ns, prev->dispatch_ns));
		sectors += it->sectors;
		CHECK(++listed <= NR_ITEMS);
	}
	CHECK(prev == s->newest);
	CHECK(listed + overdue == m->in_flight && sectors == counted_sectors);
	CHECK(s->window.sectors >= IOBAND_WINDOW_MIN_SECTORS &&
	      s->window.sectors <= IOBAND_WINDOW_MAX_SECTORS);
	CHECK(s->window.items >= 1 && s->window.items <= IOBAND_MAX_IO_LIMIT);

	check_tree(m, &s->ptree, PTREE, in_p);
	check_tree(m, &s->rtree, RTREE, in_r);
	check_tree(m, &s->ltree, LTREE, in_l);

	for (e = 0; e < NR_ENT; e++) {
		const struct ioband_sched_entity *en = &m->ent[e];
		const struct ioband_sched_item *it;
		u64 last = 0;
		u32 n = 0;

		if (!m->attached[e]) {
			CHECK(!en->attached);
			CHECK(!in_p[e] && !in_r[e] && !in_l[e]);
			CHECK(!en->waiting);
			continue;
		}
		CHECK(en->attached);
		attached++;
		total_weight += en->weight;
		CHECK(en->weight == m->weight[e]);
		/* each entity's FIFO is exactly the model's, in order */
		for (it = en->head; it; it = it->next) {
			i = item_index(m, it);
			CHECK(i >= 0);
			CHECK(m->state[i] == HELD && m->owner[i] == e);
			CHECK(n == 0 || m->seq[i] > last);
			last = m->seq[i];
			if (!it->next)
				CHECK(en->tail == it);
			CHECK(++n <= NR_ITEMS);
		}
		CHECK(n == en->nr_queued);
		CHECK(!n == !en->head && !n == !en->tail);
		CHECK(en->queued_sectors == model_queued_sectors(m, e));
		sum_queued += n;
		/* in the trees its state says, and only there */
		CHECK(in_p[e] == (en->waiting || (n && !en->in_ltree)));
		CHECK(in_r[e] == en->in_rtree && in_l[e] == en->in_ltree);
		if (en->waiting)
			CHECK(!n && !range && !en->in_ltree && !en->in_rtree);
		if (en->in_rtree)
			CHECK(n && en->min_kbps && !en->in_ltree);
		if (en->in_ltree) {
			CHECK(n && en->max_kbps);
			CHECK(en->lnode.key == en->l_tag);
		}
		if (in_p[e])
			CHECK(tag_dist(ioband_sched_start(en), s->vtime) <
			      (1ULL << 62));
	}
	CHECK(sum_queued == m->held);
	for (i = 0; i < NR_ITEMS; i++)
		if (m->state[i] == HELD)
			CHECK(m->attached[m->owner[i]]);
	CHECK(s->nr_entities == attached);
	CHECK(s->total_weight == total_weight);
	CHECK(ioband_sched_room(s) == model_room_at(m, 0));
	CHECK(ioband_sched_idle(s) == (!m->held && !m->in_flight));
}

struct input {
	const unsigned char *p;
	size_t left;
};

static unsigned int get(struct input *in, unsigned int bytes)
{
	unsigned int v = 0;

	while (bytes--) {
		v <<= 8;
		if (in->left) {
			v |= *in->p++;
			in->left--;
		}
	}
	return v;
}

static int pick_attached(const struct model *m, unsigned int r, int except)
{
	int e, n = 0;

	for (e = 0; e < NR_ENT; e++)
		n += m->attached[e] && e != except;
	if (!n)
		return -1;
	r %= n;
	for (e = 0; e < NR_ENT; e++)
		if (m->attached[e] && e != except && !r--)
			return e;
	return -1;
}

static int pick_state(const struct model *m, unsigned int r, enum item_state st)
{
	int i;

	for (i = 0; i < NR_ITEMS; i++) {
		int j = (int)((r + i) % NR_ITEMS);

		if (m->state[j] == st)
			return j;
	}
	return -1;
}

static void went_down(struct model *m, int i, int e)
{
	m->state[i] = IN_FLIGHT;
	m->owner[i] = e;
	m->in_flight_of[e]++;
	m->in_flight++;
	m->dispatched++;
}

/* One next(); returns whether it sent an item down. */
static bool do_next(struct model *m)
{
	struct ioband_sched *s = &m->sched;
	struct ioband_sched_entity *ent = NULL;
	struct ioband_sched_item *it;
	bool room = model_room_at(m, clock_ns);
	bool work = ioband_sched_has_work(s);
	int i, e;

	it = w_next(s, &ent);
	if (!it) {
		u64 at = ioband_sched_next_event_ns(s);

		CHECK(!work);
		CHECK(!m->passthrough || !m->held);
		/*
		 * Held with room below: only a competing group or a max
		 * holds them, and the timer is due later.
		 */
		if (m->held && room && !m->passthrough)
			CHECK(at && vt_before(clock_ns, at));
		return false;
	}
	CHECK(m->passthrough || room);
	i = item_index(m, it);
	CHECK(i >= 0);
	CHECK(m->state[i] == HELD);	/* not lost, not twice */
	e = ent_index(m, ent);
	CHECK(e == m->owner[i]);
	CHECK(model_head(m, e) == i);	/* FIFO within the entity */
	m->held--;
	went_down(m, i, e);
	return true;
}

/*
 * ioband_sched_drain(): every item @e holds goes down at once, in its
 * FIFO order, and it holds nothing after, not even sectors.
 */
static void do_drain(struct model *m, int e)
{
	struct ioband_sched_item *it, *next;
	int i;

	it = ioband_sched_drain(&m->sched, &m->ent[e], clock_ns);
	for (; it; it = next) {
		next = it->next;
		i = item_index(m, it);
		CHECK(i >= 0);
		CHECK(m->state[i] == HELD && m->owner[i] == e);
		CHECK(model_head(m, e) == i);
		m->held--;
		went_down(m, i, e);
	}
	CHECK(model_head(m, e) < 0);
	CHECK(!ioband_sched_writeback_full(&m->sched, &m->ent[e]));
}

/* The glue's dispatch loop: next() while it sends anything. */
static void dispatch_loop(struct model *m)
{
	while (do_next(m))
		;
	CHECK(!ioband_sched_has_work(&m->sched));
}

/* @i completes, in the task that sent it down when @inline_done. */
static void do_complete(struct model *m, int i, bool inline_done)
{
	int e = m->owner[i];
	bool work;

	m->state[i] = FREE;
	m->in_flight--;
	m->in_flight_of[e]--;
	m->completed++;
	if (inline_done)
		m->items[i].flags |= IOBAND_ITEM_COMPLETED_INLINE;
	work = w_complete(&m->sched, &m->ent[e], &m->items[i]);
	CHECK(work == ioband_sched_has_work(&m->sched));
	/* One completion from elsewhere closes the open window at once. */
	CHECK(inline_done || !m->sched.window.completes_inline);
}

static void do_submit(struct model *m, int e, int i, u32 sectors, u32 op)
{
	struct ioband_sched *s = &m->sched;
	u32 flags = 0;
	bool room = model_room_at(m, clock_ns);

	if ((op & 0x70) == 0x10)
		flags |= IOBAND_ITEM_URGENT;
	if ((op & 0x70) == 0x20 || (op & 0x70) == 0x30)
		flags |= IOBAND_ITEM_SIZED;
	ioband_sched_item_init(&m->items[i], sectors,
			       op & 0x80 ? IOBAND_WRITE : IOBAND_READ, flags);
	m->submitted++;
	if (w_submit(s, &m->ent[e], &m->items[i])) {
		CHECK(m->passthrough || (flags & IOBAND_ITEM_URGENT) || room);
		/*
		 * Dispatched ahead of every held item of its own group:
		 * it never overtakes its queue.
		 */
		CHECK(m->passthrough || (flags & IOBAND_ITEM_URGENT) ||
		      model_head(m, e) < 0);
		if ((flags & IOBAND_ITEM_URGENT) && !m->passthrough)
			m->urgent++;
		went_down(m, i, e);
		return;
	}
	CHECK(!m->passthrough && !(flags & IOBAND_ITEM_URGENT));
	m->state[i] = HELD;
	m->owner[i] = e;
	m->seq[i] = m->next_seq++;
	m->held++;
}

/* Sectors: 0, small, big, up to a 2^32 - 1 sector discard. */
static u32 pick_sectors(unsigned int v)
{
	if (v == 255)
		return 0xffffffffu;
	if (v > 200)
		return (v - 200) << 12;
	return v;
}

/* Time goes by: microseconds, around IOBAND_IDLE_NS, periods, seconds. */
static u64 pick_delay(unsigned int r)
{
	switch (r & 3) {
	case 0:
		return (u64)(r >> 2) * 1000;
	case 1:
		return (u64)(r >> 2) % 8 * IOBAND_IDLE_NS / 4;
	case 2:
		return (u64)(r >> 2) * 2 * MS;
	default:
		return (u64)(r >> 2) * 250 * MS;
	}
}

static void run(struct model *m, struct input *in)
{
	struct ioband_sched *s = &m->sched;
	struct ioband_sched_params params;
	unsigned int op, r, i, stuck = 0;
	int e, h;

	clock_ns = 1000 * MS;
	ioband_sched_params_default(&params,
				    (enum ioband_policy)(get(in, 1) %
							 IOBAND_NR_POLICIES));
	params.io_limit = get(in, 1) % 17;	/* 0: no cap on bios */
	params.io_throttle = get(in, 1) % 17;
	if (params.io_limit && params.io_throttle > params.io_limit)
		params.io_throttle = params.io_limit;
	params.carryover = get(in, 1) % 4;
	if (!ioband_sched_params_valid(&params))
		ioband_sched_params_default(&params, params.policy);
	ioband_sched_init(s, &params);
	m->attached[0] = true;
	m->weight[0] = 100;
	ioband_sched_entity_init(s, &m->ent[0], 100);	/* the default group */
	step = 0;
	check_invariants(m);

	while (in->left && step < 4096) {
		step++;
		op = get(in, 1);
		last_op = op % 20;
		r = get(in, 1);
		switch (last_op) {
		case 0: case 1: case 2: case 3:	/* submit */
			e = pick_attached(m, r, -1);
			h = pick_state(m, get(in, 1), FREE);
			if (e < 0 || h < 0)
				break;
			do_submit(m, e, h, pick_sectors(get(in, 1)), op);
			break;
		case 4: case 5:		/* one next() */
			do_next(m);
			break;
		case 6: case 7:		/* complete one in flight, inline or not */
			h = pick_state(m, r, IN_FLIGHT);
			if (h >= 0)
				do_complete(m, h, op >= 128);
			break;
		case 8:			/* the caller's dispatch loop */
			dispatch_loop(m);
			break;
		case 9:			/* attach */
			e = (int)(r % NR_ENT);
			/* a detached group lives until its items complete */
			if (m->attached[e] || m->in_flight_of[e])
				break;
			{
				u32 w = get(in, 2);

				ioband_sched_entity_init(s, &m->ent[e], w);
				m->attached[e] = true;
				m->weight[e] = w < IOBAND_MIN_WEIGHT ? IOBAND_MIN_WEIGHT :
					       w > IOBAND_MAX_WEIGHT ? IOBAND_MAX_WEIGHT : w;
			}
			break;
		case 10:		/* detach, held items to an heir */
			e = pick_attached(m, r, -1);
			if (e < 0)
				break;
			h = pick_attached(m, get(in, 1), e);
			if (h < 0 && m->ent[e].nr_queued)
				break;	/* nobody to inherit */
			ioband_sched_detach(s, &m->ent[e],
					    h < 0 ? NULL : &m->ent[h]);
			/* appended at the heir's tail, in their order */
			while ((i = (unsigned int)model_head(m, e)) != (unsigned int)-1) {
				m->owner[i] = h;
				m->seq[i] = m->next_seq++;
			}
			m->attached[e] = false;
			break;
		case 11:		/* weight, valid or not */
			e = pick_attached(m, r, -1);
			if (e < 0)
				break;
			{
				u32 w = get(in, 2);
				bool ok = ioband_sched_set_weight(s, &m->ent[e], w);

				CHECK(ok == (w >= IOBAND_MIN_WEIGHT && w <= IOBAND_MAX_WEIGHT));
				if (ok)
					m->weight[e] = w;
			}
			break;
		case 12: {		/* one knob */
			struct ioband_sched_params before = s->params, want = s->params;
			u32 v = get(in, 3);
			bool ok;

			switch (r % 5) {
			case 0:
				want.policy = (enum ioband_policy)(v % (IOBAND_NR_POLICIES + 1));
				ok = ioband_sched_set_policy(s, want.policy);
				break;
			case 1:
				want.io_limit = v % 40;
				if (v & 0x800000)
					want.io_limit = v & 0x1ffff;
				ok = ioband_sched_set_io_limit(s, want.io_limit);
				break;
			case 2:
				want.io_throttle = v % 40;
				ok = ioband_sched_set_io_throttle(s, want.io_throttle);
				break;
			case 3:
				want.token_base = v % 5 == 0 ? 0xffffffffu >> (v % 3) : v;
				ok = ioband_sched_set_token_base(s, want.token_base);
				break;
			default:
				want.carryover = v % 1100;
				ok = ioband_sched_set_carryover(s, want.carryover);
				break;
			}
			CHECK(ok == ioband_sched_params_valid(&want));
			if (!ok)
				CHECK(!memcmp(&before, &s->params, sizeof(before)));
			if (ok && s->io_limit)
				CHECK(s->io_throttle <= s->io_limit);
			break;
		}
		case 13: {		/* range, valid or not */
			u32 min = get(in, 2) * 16, max = get(in, 2) * 16;
			bool ok;

			e = pick_attached(m, r, -1);
			if (e < 0)
				break;
			if (r & 0x80)
				max = 0;
			ok = ioband_sched_set_range(s, &m->ent[e], min, max);
			CHECK(ok == (!max || min <= max));
			if (ok)
				CHECK(m->ent[e].min_kbps == min &&
				      m->ent[e].max_kbps == max);
			break;
		}
		case 14:		/* passthrough (suspend) on/off */
			m->passthrough = r & 1;
			ioband_sched_set_passthrough(s, m->passthrough);
			break;
		case 15:		/* the glue's timer fires */
			{
				u64 at = ioband_sched_next_event_ns(s);

				if (at && vt_before(clock_ns, at))
					clock_ns = at;
				dispatch_loop(m);
			}
			break;
		case 17:		/* one target's suspend drains its group */
			e = pick_attached(m, r, -1);
			if (e >= 0)
				do_drain(m, e);
			break;
		case 16:		/* a storm of urgent IO, as debt */
			e = pick_attached(m, r, -1);
			h = pick_state(m, get(in, 1), FREE);
			if (e < 0 || h < 0)
				break;
			for (i = 0; i < (r >> 3) * 16 + 16; i++) {
				do_submit(m, e, h, IOBAND_MAX_ITEM_COST, 0x10);
				do_complete(m, h, false);
			}
			break;
		default:		/* time goes by */
			clock_ns += pick_delay(r);
			break;
		}
		check_invariants(m);
	}

	/*
	 * Drain, as the glue does: complete what is in flight, run the
	 * dispatch loop, and when nothing is in flight let the timer fire.
	 */
	step++;
	last_op = 99;
	dispatch_loop(m);
	while (m->held || m->in_flight) {
		u64 progress = m->dispatched;

		h = pick_state(m, 0, IN_FLIGHT);
		if (h >= 0) {
			clock_ns += 100 * 1000;
			do_complete(m, h, false);
		} else {
			u64 at = ioband_sched_next_event_ns(s);

			CHECK(at);	/* held, nothing in flight: a timer */
			if (vt_before(clock_ns, at))
				clock_ns = at;
		}
		dispatch_loop(m);
		check_invariants(m);
		/*
		 * Each timer ends one group's wait (or max): after at most
		 * one per group, something goes down.
		 */
		stuck = h < 0 && m->dispatched == progress ? stuck + 1 : 0;
		CHECK(stuck <= NR_ENT);
	}
	for (i = 0; i < NR_ITEMS; i++)
		CHECK(m->state[i] == FREE);
	CHECK(ioband_sched_idle(s));
	CHECK(s->window.in_flight_sectors == 0 && s->in_flight == 0 &&
	      s->nr_queued == 0);
	/* the waits end: nobody competes IOBAND_IDLE_NS later */
	clock_ns += IOBAND_IDLE_NS;
	CHECK(!do_next(m));
	CHECK(!s->ptree.root && !s->rtree.root && !s->ltree.root);
	for (e = 0; e < NR_ENT; e++)
		CHECK(!m->ent[e].waiting);
	check_invariants(m);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct model m;
	struct input in = { data, size };

	memset(&m, 0, sizeof(m));
	run(&m, &in);
	return 0;
}
