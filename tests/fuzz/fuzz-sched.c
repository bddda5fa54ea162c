// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the scheduling core (dm-ioband/ioband-sched.c):
 * the input is a program of operations on one domain (submit, next,
 * complete, drain, attach, detach, weight, policy, io_limit,
 * io_throttle, token_base, carryover, passthrough, clock) run against
 * the core and against a model that knows only which item is where.
 * After every step the invariants are checked:
 *
 *  - no item lost or duplicated: each held item is in exactly one
 *    entity's FIFO, in the order the model expects (submission order per
 *    entity; a detached entity's items appended to its heir's), next()
 *    returns only held items, the one at the head of its entity's FIFO;
 *  - counters add up: submitted = dispatched + queued, dispatched =
 *    completed + in_flight, stats.dispatched and the per-entity and
 *    domain nr_queued match the model; no counter wraps below zero;
 *  - in_flight <= io_limit when dispatched, unless passthrough (a lowered
 *    io_limit is waited for, not recalled);
 *  - work conservation: next() returns NULL only when nothing is held
 *    or io_limit is reached (and not in passthrough); has_work() and
 *    complete()'s answer agree with that;
 *  - the tree of backlogged entities is a valid red-black tree ordered by
 *    start tag, holds exactly the attached entities with held items, and
 *    leftmost is its minimum; every live tag is within 2^62 of vtime (the
 *    wrap-safe comparison's domain);
 *  - nr_entities and total_weight are those of the attached entities;
 *    a refused knob or weight changes nothing.
 *
 * At the end everything in flight completes and everything held drains:
 * every item comes back exactly once.
 *
 * The calls into the core go through the w_* wrappers below only, so
 * that an API change (e.g. a u64 now_ns argument on submit, next and
 * complete) is a one-line change in each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-sched.h"

#define NR_ENT		8
#define NR_ITEMS	192

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-sched: step %u (op %u): CHECK(%s) failed\n", \
				step, last_op, #cond);			\
			abort();					\
		}							\
	} while (0)

static unsigned int step, last_op;

/* ---- the fake clock, for an API with time arguments ---- */
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

static bool w_complete(struct ioband_sched *s, struct ioband_sched_item *it)
{
	return ioband_sched_complete(s, it);
}

static void w_attach(struct ioband_sched *s, struct ioband_sched_entity *e,
		     u32 weight)
{
	ioband_sched_entity_init(s, e, weight);
}

static void w_detach(struct ioband_sched *s, struct ioband_sched_entity *e,
		     struct ioband_sched_entity *heir)
{
	ioband_sched_detach(s, e, heir);
}

static bool w_weight(struct ioband_sched *s, struct ioband_sched_entity *e,
		     u32 weight)
{
	return ioband_sched_set_weight(s, e, weight);
}

/*
 * ---- internals the invariant check reads: the tree of backlogged
 * entities and the start tag. Kept here so that a change of layout is a
 * change of these few lines. ----
 */
typedef struct ioband_sched_node tnode;

static const tnode *t_root(const struct ioband_sched *s) { return s->ptree.root; }
static const tnode *t_leftmost(const struct ioband_sched *s) { return s->ptree.leftmost; }
static const tnode *t_left(const tnode *n) { return n->child[IOBAND_RB_LEFT]; }
static const tnode *t_right(const tnode *n) { return n->child[IOBAND_RB_RIGHT]; }
static const tnode *t_parent(const tnode *n) { return n->parent; }
static bool t_red(const tnode *n) { return n->red; }
static u64 t_key(const tnode *n) { return n->key; }
static const struct ioband_sched_entity *t_entity(const tnode *n)
{
	return (const struct ioband_sched_entity *)((const char *)n -
		offsetof(struct ioband_sched_entity, pnode));
}
static u64 e_start(const struct ioband_sched_entity *e) { return ioband_sched_start(e); }

/* ---- the model ---- */
enum item_state { FREE, HELD, IN_FLIGHT };

struct model {
	struct ioband_sched sched;
	struct ioband_sched_entity ent[NR_ENT];
	struct ioband_sched_item items[NR_ITEMS];
	enum item_state state[NR_ITEMS];
	int owner[NR_ITEMS];		/* entity of a held item */
	u64 seq[NR_ITEMS];		/* FIFO position of a held item */
	u64 next_seq;
	bool attached[NR_ENT];
	u32 weight[NR_ENT];
	u64 submitted, dispatched, completed;
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

static bool vt_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

static u64 tag_dist(u64 a, u64 b)
{
	s64 d = (s64)(a - b);

	return d < 0 ? -(u64)d : (u64)d;
}

/* Red-black tree check; returns the black height, counts nodes. */
static int check_rb(const struct model *m, const tnode *n,
		    const tnode *parent, unsigned int *count, bool seen[NR_ENT])
{
	int lh, rh, idx;

	if (!n)
		return 1;
	idx = ent_index(m, t_entity(n));
	CHECK(idx >= 0);
	CHECK(!seen[idx]);
	seen[idx] = true;
	(*count)++;
	CHECK(*count <= NR_ENT);
	CHECK(t_parent(n) == parent);
	CHECK(t_key(n) == e_start(t_entity(n)));
	if (t_red(n)) {
		CHECK(!t_left(n) || !t_red(t_left(n)));
		CHECK(!t_right(n) || !t_red(t_right(n)));
	}
	if (t_left(n))
		CHECK(!vt_before(t_key(n), t_key(t_left(n))));
	if (t_right(n))
		CHECK(!vt_before(t_key(t_right(n)), t_key(n)));
	lh = check_rb(m, t_left(n), n, count, seen);
	rh = check_rb(m, t_right(n), n, count, seen);
	CHECK(lh == rh);
	return lh + !t_red(n);
}

static void check_invariants(struct model *m)
{
	const struct ioband_sched *s = &m->sched;
	bool seen[NR_ENT] = { false };
	unsigned int nodes = 0, backlogged = 0, attached = 0;
	u64 total_weight = 0;
	u32 sum_queued = 0;
	int e, i;

	/* counters add up, none wrapped */
	CHECK(m->submitted == m->dispatched + m->held);
	CHECK(m->dispatched == m->completed + m->in_flight);
	CHECK(s->nr_queued == m->held);
	CHECK(s->in_flight == m->in_flight);
	CHECK(s->stats.dispatched == m->dispatched);
	CHECK(s->nr_queued <= NR_ITEMS && s->in_flight <= NR_ITEMS);

	/* each entity's FIFO is exactly the model's, in order */
	for (e = 0; e < NR_ENT; e++) {
		const struct ioband_sched_item *it;
		u64 last = 0;
		u32 n = 0;

		if (!m->attached[e]) {
			CHECK(!m->ent[e].attached);
			continue;
		}
		CHECK(m->ent[e].attached);
		attached++;
		total_weight += m->ent[e].weight;
		CHECK(m->ent[e].weight == m->weight[e]);
		for (it = m->ent[e].head; it; it = it->next) {
			i = item_index(m, it);
			CHECK(i >= 0);
			CHECK(m->state[i] == HELD && m->owner[i] == e);
			CHECK(n == 0 || m->seq[i] > last);
			last = m->seq[i];
			if (!it->next)
				CHECK(m->ent[e].tail == it);
			CHECK(++n <= NR_ITEMS);
		}
		CHECK(n == m->ent[e].nr_queued);
		CHECK(!n == !m->ent[e].head && !n == !m->ent[e].tail);
		sum_queued += n;
		if (n) {
			backlogged++;
			CHECK(tag_dist(e_start(&m->ent[e]), s->vtime) < (1ULL << 62));
		}
	}
	CHECK(sum_queued == m->held);
	for (i = 0; i < NR_ITEMS; i++)
		if (m->state[i] == HELD)
			CHECK(m->attached[m->owner[i]]);
	CHECK(s->nr_entities == attached);
	CHECK(s->total_weight == total_weight);

	/* the tree */
	if (t_root(s))
		CHECK(!t_red(t_root(s)));
	check_rb(m, t_root(s), NULL, &nodes, seen);
	CHECK(nodes == backlogged);
	for (e = 0; e < NR_ENT; e++)
		CHECK(seen[e] == (m->attached[e] && m->ent[e].nr_queued > 0));
	CHECK(!t_leftmost(s) == !t_root(s));
	if (t_leftmost(s)) {
		const tnode *n = t_root(s);

		while (t_left(n))
			n = t_left(n);
		CHECK(n == t_leftmost(s));
	}

	/* has_work says what next() would do */
	CHECK(ioband_sched_has_work(s) ==
	      (m->held && (m->passthrough || s->in_flight < s->io_limit)));
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

static void do_next(struct model *m)
{
	struct ioband_sched *s = &m->sched;
	struct ioband_sched_entity *ent = NULL;
	struct ioband_sched_item *it;
	u32 before = s->in_flight;
	int i, e, head;

	it = w_next(s, &ent);
	if (!it) {
		/* work conserving: nothing held, or the window is full */
		CHECK(!m->held || (!m->passthrough && before >= s->io_limit));
		return;
	}
	CHECK(m->passthrough || before < s->io_limit);
	i = item_index(m, it);
	CHECK(i >= 0);
	CHECK(m->state[i] == HELD);	/* not lost, not twice */
	e = ent_index(m, ent);
	CHECK(e == m->owner[i]);
	head = model_head(m, e);
	CHECK(head == i);		/* FIFO within the entity */
	m->state[i] = IN_FLIGHT;
	m->held--;
	m->in_flight++;
	m->dispatched++;
}

static void do_complete(struct model *m, int i)
{
	bool work;

	m->state[i] = FREE;
	m->in_flight--;
	m->completed++;
	work = w_complete(&m->sched, &m->items[i]);
	CHECK(work == ioband_sched_has_work(&m->sched));
}

static void run(struct model *m, struct input *in)
{
	struct ioband_sched *s = &m->sched;
	struct ioband_sched_params params;
	unsigned int op, r, i;
	int e, h;

	ioband_sched_params_default(&params, (enum ioband_policy)(get(in, 1) & 1));
	params.io_limit = get(in, 1) % 17;	/* 0 = default 32 */
	params.io_throttle = params.io_limit ? get(in, 1) % (params.io_limit + 1) : 0;
	if (params.io_throttle == 0 && params.io_limit && params.io_limit < 4)
		params.io_throttle = params.io_limit;
	params.carryover = get(in, 1) % 4;
	if (!ioband_sched_params_valid(&params))
		ioband_sched_params_default(&params, params.policy);
	ioband_sched_init(s, &params);
	m->attached[0] = true;
	m->weight[0] = 100;
	w_attach(s, &m->ent[0], 100);	/* the default group */
	step = 0;
	check_invariants(m);

	while (in->left && step < 4096) {
		step++;
		op = get(in, 1);
		last_op = op % 16;
		r = get(in, 1);
		switch (last_op) {
		case 0: case 1: case 2: case 3:	/* submit */
			e = pick_attached(m, r, -1);
			i = (unsigned int)pick_state(m, get(in, 1), FREE);
			if (e < 0 || (int)i < 0)
				break;
			{
				u32 sectors = get(in, 1);
				u32 before = s->in_flight;

				if (sectors == 255)
					sectors = 0xffffffffu;	/* a huge discard */
				else if (sectors > 200)
					sectors = (sectors - 200) << 12;
				ioband_sched_item_init(&m->items[i], sectors,
						       (op >> 4) & 1 ? IOBAND_WRITE : IOBAND_READ);
				m->submitted++;
				if (w_submit(s, &m->ent[e], &m->items[i])) {
					CHECK(m->passthrough || before < s->io_limit);
					/* a newcomer is dispatched only ahead of every held item
					 * or onto an empty queue; it never overtakes its own queue */
					CHECK(m->passthrough || model_head(m, e) < 0);
					m->state[i] = IN_FLIGHT;
					m->in_flight++;
					m->dispatched++;
				} else {
					CHECK(!m->passthrough);
					m->state[i] = HELD;
					m->owner[i] = e;
					m->seq[i] = m->next_seq++;
					m->held++;
				}
			}
			break;
		case 4: case 5: case 6:	/* next */
			do_next(m);
			break;
		case 7: case 8:		/* complete one in flight */
			h = pick_state(m, r, IN_FLIGHT);
			if (h >= 0)
				do_complete(m, h);
			break;
		case 9:			/* the caller's dispatch loop */
			while (ioband_sched_has_work(s))
				do_next(m);
			break;
		case 10:		/* attach */
			e = (int)(r % NR_ENT);
			if (m->attached[e])
				break;
			{
				u32 w = get(in, 2);

				w_attach(s, &m->ent[e], w);
				m->attached[e] = true;
				m->weight[e] = w < IOBAND_MIN_WEIGHT ? IOBAND_MIN_WEIGHT :
					       w > IOBAND_MAX_WEIGHT ? IOBAND_MAX_WEIGHT : w;
			}
			break;
		case 11:		/* detach, held items to an heir */
			e = pick_attached(m, r, -1);
			if (e < 0)
				break;
			h = pick_attached(m, get(in, 1), e);
			if (h < 0 && m->ent[e].nr_queued)
				break;	/* nobody to inherit */
			w_detach(s, &m->ent[e], h < 0 ? NULL : &m->ent[h]);
			/* appended at the heir's tail, in their order */
			while ((i = (unsigned int)model_head(m, e)) != (unsigned int)-1) {
				m->owner[i] = h;
				m->seq[i] = m->next_seq++;
			}
			m->attached[e] = false;
			break;
		case 12:		/* weight, valid or not */
			e = pick_attached(m, r, -1);
			if (e < 0)
				break;
			{
				u32 w = get(in, 2);
				bool ok = w_weight(s, &m->ent[e], w);

				CHECK(ok == (w >= IOBAND_MIN_WEIGHT && w <= IOBAND_MAX_WEIGHT));
				if (ok)
					m->weight[e] = w;
			}
			break;
		case 13: {		/* one knob */
			struct ioband_sched_params before = s->params, want = s->params;
			u32 v = get(in, 3);
			bool ok;

			switch (r % 5) {
			case 0:
				want.policy = (enum ioband_policy)(v % 3);
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
			if (ok)
				CHECK(s->io_throttle <= s->io_limit);
			break;
		}
		case 14:		/* passthrough (suspend) on/off */
			m->passthrough = r & 1;
			ioband_sched_set_passthrough(s, m->passthrough);
			break;
		default:		/* time goes by */
			clock_ns += (u64)r * 1000 * 1000;
			break;
		}
		check_invariants(m);
	}

	/* Drain: everything comes back, exactly once. */
	step++;
	last_op = 99;
	while (m->held || m->in_flight) {
		u64 progress = m->completed + m->dispatched;

		h = pick_state(m, 0, IN_FLIGHT);
		if (h >= 0)
			do_complete(m, h);
		while (ioband_sched_has_work(s))
			do_next(m);
		check_invariants(m);
		CHECK(m->completed + m->dispatched > progress);	/* not stuck */
	}
	for (i = 0; i < NR_ITEMS; i++)
		CHECK(m->state[i] == FREE);
	CHECK(ioband_sched_idle(s));
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct model m;
	struct input in = { data, size };

	memset(&m, 0, sizeof(m));
	run(&m, &in);
	return 0;
}
