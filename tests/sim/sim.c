// SPDX-License-Identifier: GPL-2.0
/* The event loop, device models, workloads and invariant checks of sim.h. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

u64 sim_rand(u64 *state)
{
	u64 z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static u64 rand_range(u64 *state, u64 lo, u64 hi)
{
	if (hi <= lo)
		return lo;
	return lo + sim_rand(state) % (hi - lo + 1);
}

/* ---- Items and events ---- */

struct sim_item {
	struct ioband_sched_item si;
	struct sim_item *dev_next;	/* device FIFO, or the free list */
	/* The entity it went down for: it is completed with that one. */
	struct ioband_sched_entity *ent;
	u32 group;			/* the group that issued it */
	u64 submit_ns;
	u64 lba;			/* its first sector, on a seeking device */
	u64 queued_ns;			/* into the device's FIFO */
};

#define ITEM_CHUNK 4096
struct item_chunk {
	struct item_chunk *next;
	struct sim_item items[ITEM_CHUNK];
};

enum ev_kind {
	EV_ARRIVAL, EV_COMPLETE, EV_CONFIG, EV_WINDOW, EV_END, EV_TIMER,
	EV_TICK, EV_FLUSH,
	EV_DEVICE,	/* lag=: an item reaches the device */
	EV_REPORT,	/* lag=: ioband learns of a completion */
};

struct ev {
	u64 t;
	u64 seq;
	enum ev_kind kind;
	u32 idx;
	struct sim_item *item;
};

/* A timer that fires this often at one instant is looping: a defect. */
#define TIMER_LOOP_MAX	64

/*
 * Items held and no dispatch or completion for this long: the core keeps
 * waking the glue without sending anything down (the slowest drain, a
 * 1 KB/s cap, sends a 64 KiB item every 64 s).
 */
#define STUCK_NS	(1000ULL * 1000 * 1000 * 1000)

struct grp {
	struct ioband_sched_entity ent;
	struct ioband_sched_entity *charge_to;
	u64 rng;
	bool detached;
	/* pairwise checker, by entity */
	bool was_backlogged;	/* items held, or waiting (competing) */
	/*
	 * Waiting, but passed over, or it may be: the core sent another
	 * group's item with a later start tag while it waited, or the
	 * device queues nothing of ours, when the core may do so (section
	 * 15: it leaves room for what the group had in flight). It is not
	 * backlogged then: what it does not take goes to the others.
	 */
	bool passed;
	u32 waiter_slot;	/* 1 + its index in sim.waiters; 0: not there */
	u64 interval_seq;
	unsigned __int128 norm;	/* sum of the steps charged, cost * inv_weight */
	/* Urgent steps since its latest other dispatch: debt not yet paid. */
	unsigned __int128 unpaid;
	u64 unpaid_tokens;
	u64 max_step;
	/* cap checker: max over runs of (sectors - max * time) */
	double cap_excess;
	u64 cap_last_ns;
	u32 cap_cmax;
	/* writeback */
	double dirty;		/* sectors dirtied, not yet submitted */
	u64 writeback;		/* sectors submitted, not yet completed */
	u64 dirtied_ns;		/* the writer's progress counted up to here */
	u32 next_bio;		/* sectors of the flusher's next bio, 0 = undrawn */
	u64 flush_at;		/* the flusher's wake-up, when pending */
	bool flush_pending;
	bool flusher_idle;	/* sleeps until a completion frees the pool */
	/* waits in map while its group holds a full share (section 17) */
	bool flusher_held;
	u64 flusher_waits;
	u64 next_lba;		/* lba=seq: its next, from its offset */
};

struct sim {
	const struct sim_cfg *cfg;
	struct sim_result *res;
	struct ioband_sched sched;
	struct grp *grps;
	u32 n;
	u64 now;
	bool in_window;
	bool arrivals_stopped;

	struct ev *heap;
	u32 heap_len, heap_cap;
	u64 ev_seq;

	struct item_chunk *chunks;
	struct sim_item *free_items;

	/* device */
	u32 busy;
	struct sim_item *fifo_head, *fifo_tail;
	u64 head;		/* where the latest IO started ended */
	u64 dev_rng;		/* the device's jitter */
	u64 busy_since;
	s64 budget;		/* bytes left in this tick (tick model) */
	bool tick_closed;	/* refused one: nothing starts until the tick */
	bool ticking;		/* the bandwidth timer runs */
	u64 progress_ns;	/* the latest dispatch or completion */
	u64 started_ns;		/* service time started in the window */
	u64 started_bytes;	/* bytes started in the window */

	/* the glue */
	bool kick;		/* its dispatch loop is to run */
	u64 timer_at;		/* its one timer's expiry, 0 = not armed */
	u64 timer_fired_at;
	u32 timer_fired_now;	/* fired at timer_fired_at, so far */

	/* checker */
	unsigned __int128 *snap;	/* n x n, when n <= SIM_PAIRWISE_MAX */
	unsigned __int128 *snap_unpaid;
	u32 *waiters;		/* groups in the core's waiting state */
	u32 nr_waiters;
	u64 seq;
	u64 credit_max;
	u64 held;
	u32 in_flight;		/* the model's own counts, to compare */
	u64 in_flight_sectors;
	bool no_pair_bound;	/* the pairwise SFQ bound is not checked */
};

const char *const sim_violation_names[SIM_NR_VIOLATIONS] = {
	[SIM_OVER_LIMIT] = "over_limit",
	[SIM_OVER_WINDOW] = "over_window",
	[SIM_NOT_CONSERVING] = "not_conserving",
	[SIM_STALLED] = "stalled",
	[SIM_UNFAIR] = "unfair",
	[SIM_URGENT_HELD] = "urgent_held",
	[SIM_LOST] = "lost",
	[SIM_ACCOUNTING] = "accounting",
	[SIM_OVER_CAP] = "over_cap",
};

static void violation(struct sim *s, enum sim_violation kind,
		      const char *what)
{
	s->res->violations[kind]++;
	if (!s->res->first_violation[0])
		snprintf(s->res->first_violation,
			 sizeof(s->res->first_violation), "t=%llu ns: %s",
			 (unsigned long long)s->now, what);
}

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *s, u64 t, enum ev_kind kind, u32 idx,
		    struct sim_item *item)
{
	struct ev e = { t, s->ev_seq++, kind, idx, item };
	u32 i;

	if (s->heap_len == s->heap_cap) {
		s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 256;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	i = s->heap_len++;
	while (i && ev_less(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
}

static struct ev ev_pop(struct sim *s)
{
	struct ev top = s->heap[0], last = s->heap[--s->heap_len];
	u32 i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->heap_len)
			break;
		if (c + 1 < s->heap_len && ev_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->heap_len)
		s->heap[i] = last;
	return top;
}

static struct sim_item *item_alloc(struct sim *s)
{
	struct sim_item *item;
	u32 i;

	if (!s->free_items) {
		struct item_chunk *c = calloc(1, sizeof(*c));

		if (!c)
			abort();
		c->next = s->chunks;
		s->chunks = c;
		for (i = 0; i < ITEM_CHUNK; i++) {
			c->items[i].dev_next = s->free_items;
			s->free_items = &c->items[i];
		}
	}
	item = s->free_items;
	s->free_items = item->dev_next;
	return item;
}

static void item_free(struct sim *s, struct sim_item *item)
{
	item->dev_next = s->free_items;
	s->free_items = item;
}

/*
 * Section 19: a queue counts in its group's active sum while it is in
 * ptree (held items, or waiting) or idle in itree at its F; a group
 * counts in its parent's while anything of its subtree does.
 */
static bool nesting_sums_agree(const struct sim *s)
{
	u32 i, j;

	for (i = 0; i < s->n; i++) {
		const struct ioband_sched_entity *e = &s->grps[i].ent;
		u64 sum = e->active ? e->weight : 0;

		if (!e->attached)
			continue;
		if (e->active != (e->waiting || e->in_itree ||
				  (e->nr_queued && !e->in_ltree)))
			return false;
		if (e->in_itree && e->inode.key != e->finish)
			return false;
		for (j = 0; j < s->n; j++)
			if (s->grps[j].ent.attached &&
			    s->grps[j].ent.parent == e &&
			    s->grps[j].ent.active_weight)
				sum += s->grps[j].ent.weight;
		if (sum != e->active_weight)
			return false;
	}
	return true;
}

/* ---- Pairwise fairness checker (ioband-design.rst section 2) ---- */

static u32 grp_index(struct sim *s, struct ioband_sched_entity *e)
{
	return (u32)(container_of(e, struct grp, ent) - s->grps);
}

static bool checking(const struct sim *s)
{
	return s->snap != NULL && !s->no_pair_bound;
}

/*
 * Section 2's bound for @i and @j over the interval in which both were
 * backlogged (or competing), plus the debt either had not yet paid at
 * its start or end: unpaid debt puts a group's tag ahead of V by that
 * much (section 16), and the others catch up before it goes again.
 */
static void check_pair(struct sim *s, u32 i, u32 j)
{
	struct grp *gi = &s->grps[i], *gj = &s->grps[j];
	u32 row = gi->interval_seq > gj->interval_seq ? i : j;
	const unsigned __int128 *norm0 = &s->snap[row * s->n];
	const unsigned __int128 *unpaid0 = &s->snap_unpaid[row * s->n];
	unsigned __int128 di, dj, gap, bound;

	di = gi->norm - norm0[i];
	dj = gj->norm - norm0[j];
	gap = di > dj ? di - dj : dj - di;
	bound = (unsigned __int128)2 * s->credit_max + gi->max_step +
		gj->max_step + unpaid0[i] + unpaid0[j] + gi->unpaid +
		gj->unpaid;
	if (bound && (double)gap / (double)bound > s->res->worst_pair_ratio)
		s->res->worst_pair_ratio = (double)gap / (double)bound;
	if (gap > bound) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "groups %u and %u: normalised gap %.3g > bound %.3g",
			 i, j, (double)gap, (double)bound);
		violation(s, SIM_UNFAIR, msg);
	}
}

static void interval_end(struct sim *s, u32 i)
{
	u32 j;

	for (j = 0; j < s->n; j++)
		if (j != i && s->grps[j].was_backlogged)
			check_pair(s, i, j);
}

static void interval_start(struct sim *s, u32 i)
{
	u32 j;

	s->grps[i].interval_seq = ++s->seq;
	for (j = 0; j < s->n; j++) {
		s->snap[i * s->n + j] = s->grps[j].norm;
		s->snap_unpaid[i * s->n + j] = s->grps[j].unpaid;
	}
}

/* Keeps sim.waiters the set of groups the core has waiting. */
static void waiter_list(struct sim *s, u32 i, bool listed)
{
	struct grp *g = &s->grps[i];
	u32 last;

	if (listed == (g->waiter_slot != 0))
		return;
	if (listed) {
		s->waiters[s->nr_waiters++] = i;
		g->waiter_slot = s->nr_waiters;
		return;
	}
	last = s->waiters[--s->nr_waiters];
	s->waiters[g->waiter_slot - 1] = last;
	s->grps[last].waiter_slot = g->waiter_slot;
	g->waiter_slot = 0;
}

/* Wrap-safe tag order, as the core compares tags. */
static bool ioband_vt_before_sim(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/*
 * Notes a change of @i's state after a call into the core: backlogged
 * while it holds items or is waiting (section 15: it competes, and is
 * counted as backlogged) and was not passed over.
 */
static void track(struct sim *s, u32 i)
{
	struct grp *g = &s->grps[i];
	bool now;

	if (g->ent.nr_queued || !g->ent.waiting)
		g->passed = false;
	else if (ioband_vt_before_sim(g->ent.pnode.key, s->sched.vtime) ||
		 (s->sched.window.queueing &&
		  s->sched.window.queueing < IOBAND_NO_QUEUEING))
		g->passed = true;
	now = g->ent.nr_queued > 0 || (g->ent.waiting && !g->passed);

	if (g->ent.nr_queued > s->res->groups[i].max_held)
		s->res->groups[i].max_held = g->ent.nr_queued;
	waiter_list(s, i, g->ent.waiting);
	if (now == g->was_backlogged)
		return;
	if (s->in_window && !now)
		s->res->groups[i].backlogged = false;
	if (checking(s)) {
		if (now)
			interval_start(s, i);
		else
			interval_end(s, i);
	}
	g->was_backlogged = now;
}

/*
 * A waiting group stops competing inside other groups' calls (the core
 * drops it when it is next in line and silent too long): after every
 * call, before the call's dispatch is counted, since the core dropped it
 * before choosing what to dispatch.
 */
static void track_waiters(struct sim *s)
{
	u32 k = s->nr_waiters;

	/* track() may move the last entry into slot k: it was seen. */
	while (k--)
		track(s, s->waiters[k]);
}

static void track_all(struct sim *s)
{
	u32 i;

	for (i = 0; i < s->n; i++)
		track(s, i);
}

/* A configuration change: close every interval and open new ones. */
static void intervals_reset(struct sim *s)
{
	u32 i;

	if (!checking(s))
		return;
	for (i = 0; i < s->n; i++)
		if (s->grps[i].was_backlogged)
			interval_end(s, i);
	for (i = 0; i < s->n; i++)
		if (s->grps[i].was_backlogged)
			interval_start(s, i);
}

/*
 * The core's cost of @item (ioband-design.rst sections 1 and 18), in
 * tokens: what the core charged it, once it has (under weight-time the
 * price it learnt, with what the group's earlier bios took beyond theirs
 * settled), else what it would charge it now.
 */
static u64 item_cost(const struct sim *s, const struct sim_item *item)
{
	if (item->si.cost)
		return item->si.cost;
	return ioband_sched_item_cost(&s->sched, &item->si);
}

/* ---- Device ---- */

static void busy_account(struct sim *s)
{
	u64 from = s->busy_since, to = s->now;

	if (s->busy) {
		if (from < s->cfg->warmup_ns)
			from = s->cfg->warmup_ns;
		if (to > s->cfg->duration_ns)
			to = s->cfg->duration_ns;
		if (to > from)
			s->res->busy_ns += to - from;
	}
	s->busy_since = s->now;
}

/*
 * What @item occupies a server for, started now: by direction, if writes
 * differ; with a seek from the head, and jitter, where the device has
 * them.
 */
static u64 device_service_ns(struct sim *s, const struct sim_item *item)
{
	const struct sim_device *dev = &s->cfg->dev;
	bool write = item->si.dir == IOBAND_WRITE;
	u64 per_io = write && dev->write_per_io_set ?
		     dev->write_per_io_ns : dev->per_io_ns;
	u64 per_sector = write && dev->write_per_sector_set ?
			 dev->write_per_sector_ns : dev->per_sector_ns;
	u64 svc = per_io + per_sector * item->si.sectors;

	if (dev->seek_ns && item->lba != s->head) {
		u64 d = item->lba > s->head ? item->lba - s->head :
			s->head - item->lba;

		svc += dev->seek_ns + (u64)((double)dev->stroke_ns * (double)d /
					    (double)dev->size_sectors);
	}
	if (dev->seek_ns)
		s->head = item->lba + item->si.sectors;
	if (dev->jitter_pct) {
		u64 span = svc * dev->jitter_pct / 100;

		svc = svc - span + rand_range(&s->dev_rng, 0, 2 * span);
	}
	return svc;
}

static void device_start(struct sim *s, struct sim_item *item)
{
	u64 svc = device_service_ns(s, item);

	busy_account(s);
	s->busy++;
	if (s->in_window) {
		s->res->groups[item->group].device_ns += svc;
		s->started_ns += svc;
		s->started_bytes += (u64)item->si.sectors * 512;
	}
	ev_push(s, s->now + svc, EV_COMPLETE, 0, item);
}

/*
 * May @item start now? In the tick model only while this tick's budget
 * lasts: like null_blk, the IO that does not fit is refused and nothing
 * starts until the next tick, which grants a new budget. One larger
 * than a whole budget starts when the budget is whole, and the excess
 * is paid from the ticks after (null_blk would refuse it forever).
 */
static bool device_admit(struct sim *s, const struct sim_item *item)
{
	s64 bytes = (s64)item->si.sectors * 512;
	s64 whole = (s64)s->cfg->dev.budget_bytes;

	if (s->busy >= s->cfg->dev.depth)
		return false;
	if (!whole)
		return true;
	if (!s->ticking) {
		/* null_blk restarts its timer on the first IO after idle */
		s->ticking = true;
		ev_push(s, s->now + s->cfg->dev.tick_ns, EV_TICK, 0, NULL);
	}
	if (s->tick_closed)
		return false;
	if (bytes <= s->budget || (bytes > whole && s->budget == whole)) {
		s->budget -= bytes;
		return true;
	}
	s->tick_closed = true;
	return false;
}

/* mq-deadline's defaults: a read waits at most 500 ms, a write 5 s. */
#define SORT_READ_EXPIRE_NS	(500ULL * 1000 * 1000)
#define SORT_WRITE_EXPIRE_NS	(5000ULL * 1000 * 1000)

/*
 * The FIFO's next IO: its head, or under order=sort the one of least LBA
 * at or past the head, else of least LBA, unless the head (the oldest)
 * has waited past its expiry, as mq-deadline sorts.
 */
static struct sim_item **device_next(struct sim *s)
{
	struct sim_item **pp, **best = &s->fifo_head, **least = NULL;
	u64 expire;

	if (!s->cfg->dev.sort)
		return best;
	expire = s->fifo_head->si.dir == IOBAND_WRITE ? SORT_WRITE_EXPIRE_NS :
						       SORT_READ_EXPIRE_NS;
	if (s->now - s->fifo_head->queued_ns >= expire)
		return best;
	best = NULL;
	for (pp = &s->fifo_head; *pp; pp = &(*pp)->dev_next) {
		if (!least || (*pp)->lba < (*least)->lba)
			least = pp;
		if ((*pp)->lba >= s->head &&
		    (!best || (*pp)->lba < (*best)->lba))
			best = pp;
	}
	return best ? best : least;
}

/* Starts the device FIFO's next IOs while the device takes them. */
static void device_run_fifo(struct sim *s)
{
	struct sim_item **pp;

	while (s->fifo_head && device_admit(s, *(pp = device_next(s)))) {
		struct sim_item *next = *pp, *prev = NULL, *it;

		*pp = next->dev_next;
		if (s->fifo_tail == next) {
			for (it = s->fifo_head; it; it = it->dev_next)
				prev = it;
			s->fifo_tail = prev;
		}
		device_start(s, next);
	}
}

/*
 * null_blk's bandwidth timer: a new budget, and the FIFO runs; after a
 * tick in which no IO took any of the budget, the timer stops.
 */
static void device_tick(struct sim *s)
{
	s64 whole = (s64)s->cfg->dev.budget_bytes;

	if (s->budget == whole && !s->fifo_head) {
		s->ticking = false;
		return;
	}
	s->budget = s->budget < 0 ? s->budget + whole : whole;
	s->tick_closed = false;
	device_run_fifo(s);
	ev_push(s, s->now + s->cfg->dev.tick_ns, EV_TICK, 0, NULL);
}

/*
 * ioband-design.rst section 9: a capped group's sectors over any run of its
 * dispatches exceed max * (elapsed time + IOBAND_RANGE_LIMIT_BURST_NS)
 * by at most two of its items (one sector of rounding aside).
 */
static void cap_check(struct sim *s, struct ioband_sched_entity *e,
		      const struct sim_item *item)
{
	u32 idx = grp_index(s, e);
	struct grp *g = &s->grps[idx];
	double per_ns = 2.0 * e->max_kbps / 1e9;	/* sectors per ns */
	double excess;
	u32 c = (u32)item_cost(s, item);

	if (!e->max_kbps || !ioband_policy_is_range(s->sched.params.policy))
		return;
	if (c > g->cap_cmax)
		g->cap_cmax = c;
	g->cap_excess -= per_ns * (double)(s->now - g->cap_last_ns);
	if (g->cap_excess < 0)
		g->cap_excess = 0;
	g->cap_excess += c;
	g->cap_last_ns = s->now;
	/*
	 * The slack: the first item of the run, one more, and the burst
	 * that forgiven lateness allows.
	 */
	excess = g->cap_excess - g->cap_cmax -
		 per_ns * (double)IOBAND_RANGE_LIMIT_BURST_NS;
	if (excess > s->res->groups[idx].max_cap_excess)
		s->res->groups[idx].max_cap_excess = excess;
	if (excess > g->cap_cmax + 1.0) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "group %u above max %u KB/s by %.0f sectors",
			 idx, e->max_kbps, excess);
		violation(s, SIM_OVER_CAP, msg);
	}
}

/* Forget the cap history: after a range, policy or passthrough change. */
static void cap_reset(struct sim *s)
{
	u32 i;

	for (i = 0; i < s->n; i++) {
		s->grps[i].cap_excess = 0;
		s->grps[i].cap_cmax = 0;
	}
}

/*
 * Section 14: an item (not urgent, not in passthrough) goes down only
 * with room below: nothing in flight, or fewer sectors in flight than
 * the window (under weight-time fewer items), and fewer items than
 * io_limit when that is set. So the window is exceeded only by the item
 * that went down last.
 */
static void window_check(struct sim *s, const struct sim_item *item)
{
	const struct ioband_window *w = &s->sched.window;
	u32 before = s->sched.in_flight - 1;
	u64 before_sectors = w->in_flight_sectors - item->si.sectors;

	/* overdue items count against neither (section 14a) */
	if (s->sched.io_limit &&
	    before - s->sched.nr_overdue >= s->sched.io_limit)
		violation(s, SIM_OVER_LIMIT, "in flight above io_limit");
	if (s->sched.params.policy == IOBAND_POLICY_WEIGHT_TIME &&
	    !w->completes_inline) {
		if (before - s->sched.nr_overdue >= w->items)
			violation(s, SIM_OVER_WINDOW,
				  "dispatched with the window of items full");
		if (w->items < 1 || w->items > IOBAND_MAX_IO_LIMIT)
			violation(s, SIM_OVER_WINDOW,
				  "window of items outside [1, 65536]");
	} else if (before && before_sectors >= w->sectors) {
		violation(s, SIM_OVER_WINDOW,
			  "dispatched with the window full");
	}
	if (w->sectors < IOBAND_WINDOW_MIN_SECTORS ||
	    w->sectors > IOBAND_WINDOW_MAX_SECTORS)
		violation(s, SIM_OVER_WINDOW,
			  "window outside [8 KiB, 64 MiB]");
}

static void device_arrive(struct sim *s, struct sim_item *item);

/*
 * Sectors of the items in flight that the core took for overdue (section
 * 14a): no longer in its window's count. Looked for only while there are
 * some: a disk's sorted queue can keep an IO waiting for seconds.
 */
static u64 overdue_sectors(const struct sim *s)
{
	const struct sim_item *it;
	u64 sectors = 0;
	u32 i;

	if (!s->sched.nr_overdue)
		return 0;
	for (it = s->fifo_head; it; it = it->dev_next)
		if (it->si.flags & IOBAND_ITEM_OVERDUE)
			sectors += it->si.sectors;
	for (i = 0; i < s->heap_len; i++)
		if ((s->heap[i].kind == EV_COMPLETE ||
		     s->heap[i].kind == EV_DEVICE ||
		     s->heap[i].kind == EV_REPORT) &&
		    (s->heap[i].item->si.flags & IOBAND_ITEM_OVERDUE))
			sectors += s->heap[i].item->si.sectors;
	return sectors;
}

/*
 * @item went down for @e (charged unless in passthrough): account it,
 * then into the device.
 */
static void dispatched(struct sim *s, struct sim_item *item,
		       struct ioband_sched_entity *e, bool charged,
		       bool reserved)
{
	struct sim_group_result *gr = &s->res->groups[item->group];
	struct grp *g = &s->grps[grp_index(s, e)];
	bool urgent = item->si.flags & IOBAND_ITEM_URGENT;
	u64 wait = s->now - item->submit_ns;
	u64 cost = item_cost(s, item);
	u64 step = cost * g->ent.inv_weight;

	item->ent = e;
	s->progress_ns = s->now;
	s->res->dispatches++;
	s->in_flight++;
	s->in_flight_sectors += item->si.sectors;
	if (s->in_flight != s->sched.in_flight ||
	    s->in_flight_sectors != s->sched.window.in_flight_sectors +
				    overdue_sectors(s))
		violation(s, SIM_ACCOUNTING, "in flight counts disagree");
	if (s->in_flight > s->res->max_in_flight)
		s->res->max_in_flight = s->in_flight;
	if (s->in_flight_sectors > s->res->max_in_flight_sectors)
		s->res->max_in_flight_sectors = s->in_flight_sectors;
	if (s->sched.window.sectors > s->res->window_max)
		s->res->window_max = s->sched.window.sectors;
	if (s->sched.window.items > s->res->window_items_max)
		s->res->window_items_max = s->sched.window.items;
	if (!s->sched.passthrough && !urgent)
		window_check(s, item);
	if (reserved)
		gr->reserved++;
	if (charged && !urgent && !s->sched.passthrough)
		cap_check(s, e, item);
	if (charged && urgent && e->attached) {
		/* Debt: the tag moves on, V does not (section 16). */
		g->norm += step;
		g->unpaid += step;
		g->unpaid_tokens += cost;
	} else if (charged && !urgent) {
		if (cost > gr->max_item_tokens)
			gr->max_item_tokens = cost;
		g->norm += step;
		g->unpaid = 0;
		g->unpaid_tokens = 0;
		if (step > g->max_step)
			g->max_step = step;
	}
	if (s->in_window) {
		gr->ios++;
		gr->sectors += item->si.sectors;
		gr->tokens += cost;
		if (urgent)
			gr->urgent++;
	}
	if (wait > gr->max_wait_ns)
		gr->max_wait_ns = wait;
	gr->sum_wait_ns += wait;
	gr->waits++;

	if (s->cfg->dev.lag_ns)
		ev_push(s, s->now + s->cfg->dev.lag_ns, EV_DEVICE, 0, item);
	else
		device_arrive(s, item);
}

/* @item reaches the device: served at once, or into its FIFO. */
static void device_arrive(struct sim *s, struct sim_item *item)
{
	if (!s->fifo_head && device_admit(s, item)) {
		device_start(s, item);
	} else {
		item->dev_next = NULL;
		item->queued_ns = s->now;
		if (s->fifo_tail)
			s->fifo_tail->dev_next = item;
		else
			s->fifo_head = item;
		s->fifo_tail = item;
	}
}

/*
 * The glue's one timer (__ioband_arm_limit_timer()): armed at
 * ioband_sched_next_event_ns() when that is not 0, and, as
 * hrtimer_start() does, moved there from wherever it was, even later.
 * An expiry already past fires at once.
 */
static void arm_timer(struct sim *s)
{
	u64 at = ioband_sched_next_event_ns(&s->sched);

	if (!at)
		return;
	if (at < s->now)
		at = s->now;
	if (at == s->now && s->timer_fired_at == s->now &&
	    s->timer_fired_now >= TIMER_LOOP_MAX) {
		violation(s, SIM_STALLED,
			  "the timer fires again and again at one instant");
		return;
	}
	if (at == s->timer_at)
		return;
	s->timer_at = at;
	ev_push(s, at, EV_TIMER, 0, NULL);
}

static void flusher_wake_at(struct sim *s, u32 i, u64 t);

/* The dispatcher took @i's held writeback under its hold: its flusher goes on. */
static void flusher_unhold(struct sim *s, u32 i)
{
	struct grp *g = &s->grps[i];

	if (g->flusher_held &&
	    !ioband_sched_writeback_full(&s->sched, &g->ent)) {
		g->flusher_held = false;
		flusher_wake_at(s, i, s->now);
	}
}

/* The glue's dispatch loop (ioband_dispatch_work()). */
static void pump(struct sim *s)
{
	struct ioband_sched_item *si;
	struct ioband_sched_entity *e;
	u64 reserved = s->sched.stats.reserved;

	while ((si = ioband_sched_next(&s->sched, &e, s->now))) {
		struct sim_item *item = container_of(si, struct sim_item, si);

		s->held--;
		track_waiters(s);
		dispatched(s, item, e, true,
			   s->sched.stats.reserved != reserved);
		reserved = s->sched.stats.reserved;
		track(s, grp_index(s, e));
		flusher_unhold(s, grp_index(s, e));
	}
	track_waiters(s);
	if (ioband_sched_has_work(&s->sched))
		violation(s, SIM_NOT_CONSERVING,
			  "has_work after the dispatch loop ended");
	arm_timer(s);
	if (s->sched.nr_queued != s->held)
		violation(s, SIM_ACCOUNTING, "nr_queued != held");
	if (!nesting_sums_agree(s))
		violation(s, SIM_ACCOUNTING, "nested groups' active sums");
	if (s->sched.credit > s->credit_max)
		s->credit_max = s->sched.credit;
}

/*
 * The first group in start-tag order that still competes: waiting groups
 * silent for IOBAND_IDLE_NS no longer do, though the core drops them from
 * its tree only when it next passes by.
 */
static const struct ioband_sched_entity *
first_competing(const struct ioband_sched *sched)
{
	const struct ioband_sched_node *n = sched->ptree.leftmost, *p;
	const struct ioband_sched_entity *e;

	while (n) {
		e = container_of(n, struct ioband_sched_entity, pnode);
		if (!e->waiting ||
		    (s64)(sched->now - (e->active_ns + IOBAND_IDLE_NS)) < 0)
			return e;
		if (n->child[IOBAND_RB_RIGHT]) {
			n = n->child[IOBAND_RB_RIGHT];
			while (n->child[IOBAND_RB_LEFT])
				n = n->child[IOBAND_RB_LEFT];
			continue;
		}
		while ((p = n->parent) && n == p->child[IOBAND_RB_RIGHT])
			n = p;
		n = p;
	}
	return NULL;
}

/*
 * Work conservation, after every event: with items held, room below
 * and no passthrough, the next turn must be a waiting group's (section
 * 15), with the timer due by the end of its wait, IOBAND_IDLE_NS after
 * its latest submission or completion; or, under the range policies,
 * every holder is over its max and the timer is due when the first may
 * go (section 9).
 */
static void check_conserving(struct sim *s)
{
	const struct ioband_sched *sched = &s->sched;
	const struct ioband_sched_entity *first;
	u64 due;

	if (!sched->nr_queued)
		return;
	if (sched->passthrough) {
		violation(s, SIM_NOT_CONSERVING,
			  "items held in passthrough");
		return;
	}
	/* With no room a completion comes; a timer due now runs the loop. */
	if (!ioband_sched_room(sched) || s->timer_at == s->now)
		return;
	if (ioband_policy_is_range(sched->params.policy)) {
		if (sched->ptree.leftmost || !sched->ltree.leftmost) {
			violation(s, SIM_NOT_CONSERVING,
				  "held with room below, a group under its max");
			return;
		}
		/* One due already goes when the timer fires, at once. */
		due = sched->ltree.leftmost->key;
		if (due < s->now)
			due = s->now;
	} else {
		first = first_competing(sched);
		if (!first || !first->waiting || first->nr_queued) {
			violation(s, SIM_NOT_CONSERVING,
				  "held with room below, no group waited for");
			return;
		}
		due = first->active_ns + IOBAND_IDLE_NS;
	}
	if (!s->timer_at || s->timer_at > due)
		violation(s, SIM_STALLED,
			  "held with room below, no timer due in time");
}

/* ---- Groups ---- */

/* The first time at or after @t when group @g is on. */
static u64 next_on(const struct sim_group_cfg *gc, u64 t)
{
	u64 period, phase;

	if (t < gc->start_ns)
		return gc->start_ns;
	if (!gc->off_ns)
		return t;
	period = gc->on_ns + gc->off_ns;
	phase = (t - gc->start_ns) % period;
	return phase < gc->on_ns ? t : t + (period - phase);
}

static u64 stop_time(const struct sim *s, const struct sim_group_cfg *gc)
{
	if (gc->stop_ns && gc->stop_ns < s->cfg->duration_ns)
		return gc->stop_ns;
	return s->cfg->duration_ns;
}

static void schedule_arrival(struct sim *s, u32 i, u64 t)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];

	t = next_on(gc, t);
	if (t < stop_time(s, gc))
		ev_push(s, t, EV_ARRIVAL, i, NULL);
}

static u64 open_interval(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	double u;

	if (!gc->poisson)
		return gc->interval_ns ? gc->interval_ns : 1;
	u = ((double)(sim_rand(&s->grps[i].rng) >> 11) + 1.0) /
	    9007199254740993.0;
	return (u64)(-log(u) * (double)gc->interval_ns) + 1;
}

/*
 * A bio of group @i reaches map now. The glue sends it down if submit
 * says so; then, whether it did or not, it kicks the dispatch loop if
 * there is work, else arms the timer: a waiting group's bio that goes
 * down at once can leave another group's bios to the loop (README.md).
 */
void sim_group_region(const struct sim_cfg *cfg, u32 i, u64 *offset,
		      u64 *span)
{
	const struct sim_group_cfg *g = &cfg->groups[i];

	if (g->region_set) {
		*offset = g->offset;
		*span = g->span;
		return;
	}
	/* the bench's layout: 128 MiB every 256 MiB */
	*offset = (i ? i - 1 : 0) * 524288ULL;
	*span = 262144;
}

/*
 * Where group @i's next IO of @sectors starts: random in its region,
 * aligned to its size as fio aligns to bs, or on from its latest.
 */
static u64 next_lba(struct sim *s, u32 i, u32 sectors)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	u64 slots, lba, offset, span;

	if (!s->cfg->dev.seek_ns || !sectors)
		return 0;
	sim_group_region(s->cfg, i, &offset, &span);
	if (gc->seq || gc->pattern == SIM_WRITEBACK) {
		if (g->next_lba + sectors > span)
			g->next_lba = 0;
		lba = offset + g->next_lba;
		g->next_lba += sectors;
		return lba;
	}
	slots = span / sectors;
	return offset + (slots ? rand_range(&g->rng, 0, slots - 1) : 0) * sectors;
}

static void submit_item(struct sim *s, u32 i, u32 sectors,
			enum ioband_dir dir, u32 flags)
{
	struct grp *g = &s->grps[i];
	struct sim_item *item = item_alloc(s);
	struct ioband_sched_entity *e = g->charge_to;
	bool passthrough = s->sched.passthrough;
	u64 reserved = s->sched.stats.reserved;

	ioband_sched_item_init(&item->si, sectors, dir, flags);
	item->group = i;
	item->submit_ns = s->now;
	item->lba = next_lba(s, i, sectors);
	item->ent = NULL;
	s->res->groups[i].submitted++;
	if (s->in_window)
		s->res->groups[i].active = true;

	if (ioband_sched_submit(&s->sched, e, &item->si, s->now)) {
		track_waiters(s);
		dispatched(s, item, e, !passthrough,
			   s->sched.stats.reserved != reserved);
	} else {
		track_waiters(s);
		s->held++;
		if (flags & IOBAND_ITEM_URGENT)
			violation(s, SIM_URGENT_HELD,
				  "an urgent item was held");
	}
	if (ioband_sched_has_work(&s->sched))
		s->kick = true;
	else
		arm_timer(s);
	track(s, grp_index(s, e));
}

/* A closed or open loop's next bio: its size, direction and marks. */
static void arrival(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	u32 sectors = (u32)rand_range(&g->rng, gc->size_min, gc->size_max);
	enum ioband_dir dir = rand_range(&g->rng, 1, 100) <= gc->write_pct ?
			      IOBAND_WRITE : IOBAND_READ;
	u32 flags = 0;

	/* Drawn only when asked for: older scenarios replay unchanged. */
	if (gc->urgent_pct && rand_range(&g->rng, 1, 100) <= gc->urgent_pct) {
		flags = IOBAND_ITEM_URGENT;
	} else if (gc->discard_pct &&
		   rand_range(&g->rng, 1, 100) <= gc->discard_pct) {
		flags = IOBAND_ITEM_SIZED;
		dir = IOBAND_WRITE;
	}
	submit_item(s, i, sectors, dir, flags);
	if (gc->pattern == SIM_OPEN)
		schedule_arrival(s, i, s->now + open_interval(s, i));
}

/* ---- Writeback: a writer, a bounded dirty pool, one flusher ---- */

/*
 * The writer dirties dirty_rate sectors per second (all the pool at once
 * if 0) from start to stop, never beyond the pool: dirty plus under
 * writeback. Counted up to now; called before the pool changes, so that
 * a writer blocked on a full pool (balance_dirty_pages) resumes only
 * when a completion frees it.
 */
static void writer_dirty(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	double room = (double)gc->pool_sectors - (double)g->writeback -
		      g->dirty;
	u64 until = s->now < stop_time(s, gc) ? s->now : stop_time(s, gc);
	double add;

	if (until < gc->start_ns)
		return;
	if (!gc->dirty_rate) {
		add = until == s->now ? room : 0;
	} else {
		if (until <= g->dirtied_ns)
			return;
		add = (double)(until - g->dirtied_ns) * gc->dirty_rate / 1e9;
		g->dirtied_ns = until;
	}
	g->dirty += add < room ? add : room > 0 ? room : 0;
}

static void flusher_wake_at(struct sim *s, u32 i, u64 t)
{
	struct grp *g = &s->grps[i];

	if (g->flush_pending && g->flush_at <= t)
		return;
	g->flush_pending = true;
	g->flush_at = t;
	ev_push(s, t, EV_FLUSH, i, NULL);
}

/* The size of the flusher's next bio, drawn once. */
static u32 flusher_next_bio(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];

	if (!g->next_bio)
		g->next_bio = (u32)rand_range(&g->rng, gc->size_min,
					      gc->size_max);
	return g->next_bio;
}

/*
 * Too little is dirty for the next bio: the flusher sleeps until the
 * writer has dirtied it, or, when the pool is too full for that, until a
 * completion frees it.
 */
static void flusher_sleep(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	double need = (double)flusher_next_bio(s, i) - g->dirty;
	double room = (double)gc->pool_sectors - (double)g->writeback -
		      g->dirty;

	g->flusher_idle = false;
	if (need <= 0) {
		flusher_wake_at(s, i, s->now);
	} else if (gc->dirty_rate && need <= room) {
		flusher_wake_at(s, i, s->now +
				(u64)ceil(need * 1e9 / gc->dirty_rate));
	} else {
		g->flusher_idle = true;
	}
}

/*
 * The flusher's pass: bios of the group's size (each drawn, then
 * written once that much is dirty: writeback writes whole chunks) up to
 * a burst; then a gap, or sleep until the next bio's worth is dirty.
 */
static void flusher_run(struct sim *s, u32 i)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	u64 left = gc->burst_sectors ? gc->burst_sectors : ~0ULL;
	u32 sectors;

	if (s->arrivals_stopped || s->now >= stop_time(s, gc))
		return;
	writer_dirty(s, i);
	while (left && g->dirty >= flusher_next_bio(s, i)) {
		/* The glue makes it wait in map (ioband_writeback_wait()). */
		if (ioband_sched_writeback_full(&s->sched, &g->ent)) {
			g->flusher_held = true;
			g->flusher_waits++;
			return;
		}
		sectors = g->next_bio;
		g->next_bio = 0;
		g->dirty -= sectors;
		g->writeback += sectors;
		left -= sectors < left ? sectors : left;
		submit_item(s, i, sectors, IOBAND_WRITE, 0);
	}
	if (!left)
		flusher_wake_at(s, i, s->now + gc->gap_ns);
	else
		flusher_sleep(s, i);
}

/* A writeback bio of @sectors completed: its space returns to the pool. */
static void writeback_done(struct sim *s, u32 i, u32 sectors)
{
	struct grp *g = &s->grps[i];

	writer_dirty(s, i);
	g->writeback -= sectors;
	writer_dirty(s, i);
	if (g->flusher_idle && !s->arrivals_stopped)
		flusher_sleep(s, i);
}

/*
 * The device completed @item: the glue completes it with its entity and
 * runs the dispatch loop if told to, else arms the timer
 * (ioband_end_io()). Then its issuer reacts.
 */
static void completion(struct sim *s, struct sim_item *item);

/*
 * The device has served @item: its server takes the next; ioband hears of
 * it now, or lag= later (the stack between them).
 */
static void device_done(struct sim *s, struct sim_item *item)
{
	busy_account(s);
	s->busy--;
	device_run_fifo(s);
	if (s->cfg->dev.lag_ns)
		ev_push(s, s->now + s->cfg->dev.lag_ns, EV_REPORT, 0, item);
	else
		completion(s, item);
}

static void completion(struct sim *s, struct sim_item *item)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[item->group];
	u32 i = item->group, sectors = item->si.sectors;

	s->progress_ns = s->now;
	s->res->groups[i].completed++;
	s->in_flight--;
	s->in_flight_sectors -= sectors;
	if (ioband_sched_complete(&s->sched, item->ent, &item->si, s->now))
		s->kick = true;
	else
		arm_timer(s);
	track_waiters(s);
	track(s, grp_index(s, item->ent));
	item_free(s, item);
	if (gc->pattern == SIM_WRITEBACK) {
		writeback_done(s, i, sectors);
		return;
	}
	if (gc->pattern != SIM_CLOSED)
		return;
	/*
	 * A closed-loop issuer with no think time re-issues from its
	 * completion, before the dispatch loop runs: so a deep closed loop
	 * stays backlogged even when IOs complete together.
	 */
	if (!gc->think_ns && !s->arrivals_stopped &&
	    next_on(gc, s->now) == s->now && s->now < stop_time(s, gc))
		arrival(s, i);
	else
		schedule_arrival(s, i, s->now + gc->think_ns);
}

static void config_event(struct sim *s, const struct sim_event_cfg *ev)
{
	struct ioband_sched *sched = &s->sched;
	struct grp *g = ev->group < s->n ? &s->grps[ev->group] : NULL;
	u32 v = (u32)ev->value;

	intervals_reset(s);
	cap_reset(s);
	switch (ev->kind) {
	case SIM_EV_WEIGHT:
		if (g && !g->detached)
			ioband_sched_set_weight(sched, &g->ent, v);
		break;
	case SIM_EV_DETACH:
		if (g && ev->group && !g->detached) {
			ioband_sched_detach(sched, &g->ent, &s->grps[0].ent);
			g->detached = true;
			g->charge_to = &s->grps[0].ent;
		}
		break;
	case SIM_EV_PASSTHROUGH:
		ioband_sched_set_passthrough(sched, v != 0);
		break;
	case SIM_EV_POLICY:
		ioband_sched_set_policy(sched, (enum ioband_policy)v);
		break;
	case SIM_EV_IO_LIMIT:
		ioband_sched_set_io_limit(sched, v);
		break;
	case SIM_EV_IO_THROTTLE:
		ioband_sched_set_io_throttle(sched, v);
		break;
	case SIM_EV_TOKEN_BASE:
		ioband_sched_set_token_base(sched, v);
		break;
	case SIM_EV_CARRYOVER:
		ioband_sched_set_carryover(sched, v);
		break;
	case SIM_EV_RANGE:
		if (g && !g->detached)
			ioband_sched_set_range(sched, &g->ent,
					       (u32)(ev->value >> 32), v);
		break;
	}
	track_all(s);
	intervals_reset(s);
	s->kick = true;
}

static void window_start(struct sim *s)
{
	u32 i;

	s->in_window = true;
	busy_account(s);
	for (i = 0; i < s->n; i++) {
		s->res->groups[i].backlogged = s->grps[i].was_backlogged;
		s->res->groups[i].unpaid_start = s->grps[i].unpaid_tokens;
	}
}

static void window_end(struct sim *s)
{
	u32 i;

	busy_account(s);
	s->in_window = false;
	s->arrivals_stopped = true;
	for (i = 0; i < s->n; i++)
		s->res->groups[i].unpaid_end = s->grps[i].unpaid_tokens;
}

/* ---- Run ---- */

void sim_cfg_init(struct sim_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev.per_io_ns = 100000;
	cfg->dev.per_sector_ns = 0;
	cfg->dev.depth = 32;
	cfg->dev.tick_ns = 20000000;	/* null_blk's TIMER_INTERVAL */
	cfg->dev.size_sectors = 2097152;
	ioband_sched_params_default(&cfg->params, IOBAND_POLICY_WEIGHT);
	cfg->duration_ns = 1000000000ULL;
	cfg->seed = 1;
	cfg->nr_groups = 1;
	cfg->groups = calloc(1, sizeof(*cfg->groups));
	if (!cfg->groups)
		abort();
	strcpy(cfg->groups[0].name, "default");
	cfg->groups[0].weight = IOBAND_DEFAULT_WEIGHT;
	cfg->groups[0].pattern = SIM_IDLE;
	cfg->groups[0].size_min = 8;
	cfg->groups[0].size_max = 8;
}

void sim_cfg_free(struct sim_cfg *cfg)
{
	free(cfg->groups);
	free(cfg->events);
	free(cfg->expects);
	cfg->groups = NULL;
	cfg->events = NULL;
	cfg->expects = NULL;
}

void sim_result_free(struct sim_result *res)
{
	free(res->groups);
	res->groups = NULL;
}

u64 sim_violations(const struct sim_result *res)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < SIM_NR_VIOLATIONS; i++)
		sum += res->violations[i];
	return sum;
}

int sim_run(const struct sim_cfg *cfg, struct sim_result *res)
{
	struct sim s = { 0 };
	u32 i, j, next_event = 0;

	memset(res, 0, sizeof(*res));
	res->groups = calloc(cfg->nr_groups, sizeof(*res->groups));
	s.grps = calloc(cfg->nr_groups, sizeof(*s.grps));
	s.waiters = calloc(cfg->nr_groups, sizeof(*s.waiters));
	if (!res->groups || !s.grps || !s.waiters)
		abort();
	s.cfg = cfg;
	s.res = res;
	s.n = cfg->nr_groups;
	if (s.n <= SIM_PAIRWISE_MAX) {
		s.snap = calloc((size_t)s.n * s.n, sizeof(*s.snap));
		s.snap_unpaid = calloc((size_t)s.n * s.n,
				       sizeof(*s.snap_unpaid));
		if (!s.snap || !s.snap_unpaid)
			abort();
	}

	ioband_sched_init(&s.sched, &cfg->params);
	s.sched.vtime = cfg->vtime_start;
	s.dev_rng = cfg->seed * 7919 + 1;
	for (i = 0; i < s.n; i++) {
		ioband_sched_entity_init(&s.sched, &s.grps[i].ent,
					 cfg->groups[i].weight);
		ioband_sched_set_range(&s.sched, &s.grps[i].ent,
				       cfg->groups[i].min_kbps,
				       cfg->groups[i].max_kbps);
		s.grps[i].charge_to = &s.grps[i].ent;
		s.grps[i].rng = cfg->seed * 1000003 + i;
	}
	for (i = 0; i < s.n; i++) {
		if (!cfg->groups[i].parent)
			continue;
		ioband_sched_set_parent(&s.sched, &s.grps[i].ent,
					&s.grps[cfg->groups[i].parent].ent);
	}
	s.credit_max = s.sched.credit;
	s.no_pair_bound = ioband_policy_is_range(cfg->params.policy);
	/* Section 2's bound is for weights that do not move. */
	for (i = 0; i < s.n; i++)
		if (cfg->groups[i].parent)
			s.no_pair_bound = true;
	for (i = 0; i < cfg->nr_events; i++)
		if (cfg->events[i].kind == SIM_EV_POLICY &&
		    ioband_policy_is_range(cfg->events[i].value))
			s.no_pair_bound = true;

	for (i = 0; i < s.n; i++) {
		const struct sim_group_cfg *gc = &cfg->groups[i];

		if (gc->pattern == SIM_CLOSED) {
			for (j = 0; j < gc->depth; j++)
				schedule_arrival(&s, i, gc->start_ns);
		} else if (gc->pattern == SIM_OPEN) {
			schedule_arrival(&s, i, gc->start_ns);
		} else if (gc->pattern == SIM_WRITEBACK &&
			   gc->start_ns < stop_time(&s, gc)) {
			s.grps[i].dirtied_ns = gc->start_ns;
			flusher_wake_at(&s, i, gc->start_ns);
		}
	}
	if (cfg->nr_events)
		ev_push(&s, cfg->events[0].at_ns, EV_CONFIG, 0, NULL);
	ev_push(&s, cfg->warmup_ns, EV_WINDOW, 0, NULL);
	ev_push(&s, cfg->duration_ns, EV_END, 0, NULL);
	s.budget = (s64)cfg->dev.budget_bytes;

	while (s.heap_len) {
		struct ev ev = ev_pop(&s);

		s.now = ev.t;
		if (s.held && s.now - s.progress_ns > STUCK_NS) {
			violation(&s, SIM_LOST,
				  "items held, nothing sent down for 1000 s");
			break;
		}
		res->events++;
		switch (ev.kind) {
		case EV_ARRIVAL:
			if (!s.arrivals_stopped)
				arrival(&s, ev.idx);
			break;
		case EV_COMPLETE:
			device_done(&s, ev.item);
			break;
		case EV_DEVICE:
			device_arrive(&s, ev.item);
			break;
		case EV_REPORT:
			completion(&s, ev.item);
			break;
		case EV_CONFIG:
			config_event(&s, &cfg->events[next_event++]);
			if (next_event < cfg->nr_events)
				ev_push(&s, cfg->events[next_event].at_ns,
					EV_CONFIG, 0, NULL);
			break;
		case EV_WINDOW:
			window_start(&s);
			break;
		case EV_END:
			window_end(&s);
			break;
		case EV_TIMER:
			if (ev.t != s.timer_at)
				break;		/* moved since */
			s.timer_at = 0;
			res->timers++;
			if (s.timer_fired_at != s.now)
				s.timer_fired_now = 0;
			s.timer_fired_at = s.now;
			s.timer_fired_now++;
			s.kick = true;
			break;
		case EV_TICK:
			device_tick(&s);
			break;
		case EV_FLUSH:
			if (!s.grps[ev.idx].flush_pending ||
			    ev.t != s.grps[ev.idx].flush_at)
				break;		/* an earlier wake-up came */
			s.grps[ev.idx].flush_pending = false;
			flusher_run(&s, ev.idx);
			break;
		}
		if (s.kick) {
			s.kick = false;
			pump(&s);
		}
		check_conserving(&s);
	}

	/* Drained: nothing held, nothing in flight, nothing lost. */
	intervals_reset(&s);
	for (i = 0; i < s.n; i++) {
		struct sim_group_result *gr = &res->groups[i];

		if (gr->submitted != gr->completed)
			res->violations[SIM_LOST] +=
				gr->submitted - gr->completed;
	}
	if (!ioband_sched_idle(&s.sched) || s.held)
		violation(&s, SIM_LOST, "core not idle after drain");
	res->window_ns = cfg->duration_ns > cfg->warmup_ns ?
			 cfg->duration_ns - cfg->warmup_ns : 0;
	if (res->window_ns)
		res->utilisation = (double)s.started_ns /
				   ((double)cfg->dev.depth * res->window_ns);
	/* Ticks: the budget may bound it first, or the servers. */
	if (cfg->dev.budget_bytes && res->window_ns &&
	    (double)s.started_bytes / ((double)cfg->dev.budget_bytes *
				       res->window_ns / cfg->dev.tick_ns) >
	    res->utilisation)
		res->utilisation = (double)s.started_bytes /
				   ((double)cfg->dev.budget_bytes *
				    res->window_ns / cfg->dev.tick_ns);
	res->tree_steps = s.sched.stats.tree_steps;
	res->stats = s.sched.stats;
	res->time_model = s.sched.time_model;
	res->window_sectors = s.sched.window.sectors;
	res->window_items = s.sched.window.items;

	while (s.chunks) {
		struct item_chunk *c = s.chunks;

		s.chunks = c->next;
		free(c);
	}
	free(s.heap);
	free(s.snap);
	free(s.snap_unpaid);
	free(s.waiters);
	free(s.grps);
	return 0;
}

/* ---- Expectations ---- */

/* What a split of kind @what (SIM_EXPECT_*) counts of @gr. */
static double split_value(const struct sim_group_result *gr, int what)
{
	if (what == SIM_EXPECT_SECTORS)
		return gr->sectors;
	if (what == SIM_EXPECT_TIME)
		return gr->device_ns;
	return gr->tokens;
}

static u32 check_split(const struct sim_cfg *cfg, const struct sim_result *res,
		       const struct sim_expect *x, char *msg, size_t len)
{
	const char *what = x->what == SIM_EXPECT_SECTORS ? "sectors" :
			   x->what == SIM_EXPECT_TIME ? "device time" : "tokens";
	double total = 0, rsum = 0, got, want;
	u32 i, k = 0;

	for (i = 0; i < cfg->nr_groups; i++) {
		if (!res->groups[i].active)
			continue;
		total += split_value(&res->groups[i], x->what);
		if (k < x->nr)
			rsum += x->ratio[k];
		k++;
	}
	if (k != x->nr) {
		snprintf(msg, len, "expected a split of %s between %u groups, %u active",
			 what, x->nr, k);
		return 1;
	}
	for (i = 0, k = 0; i < cfg->nr_groups; i++) {
		if (!res->groups[i].active)
			continue;
		got = split_value(&res->groups[i], x->what) /
		      (total ? total : 1);
		want = x->ratio[k++] / rsum;
		if (got < want * (1 - x->within) || got > want * (1 + x->within)) {
			snprintf(msg, len,
				 "group %s: %.2f%% of %s, expected %.2f%% +- %.1f%%",
				 cfg->groups[i].name, 100 * got, what, 100 * want,
				 100 * x->within);
			return 1;
		}
	}
	return 0;
}

u32 sim_check_expects(const struct sim_cfg *cfg, const struct sim_result *res,
		      char *msg, size_t len)
{
	u32 i, missed = 0;
	char one[160];

	msg[0] = '\0';
	for (i = 0; i < cfg->nr_expects; i++) {
		const struct sim_expect *x = &cfg->expects[i];

		one[0] = '\0';
		if (x->what == SIM_EXPECT_UTILISED) {
			if (res->utilisation < x->within)
				snprintf(one, sizeof(one),
					 "device %.1f%% utilised, expected at least %.1f%%",
					 100 * res->utilisation, 100 * x->within);
		} else {
			check_split(cfg, res, x, one, sizeof(one));
		}
		if (one[0] && !missed++)
			snprintf(msg, len, "%s", one);
	}
	return missed;
}

/* ---- Report ---- */

static const char *pattern_name(const struct sim_group_cfg *gc, char *buf,
				size_t len)
{
	switch (gc->pattern) {
	case SIM_CLOSED:
		if (gc->think_ns)
			snprintf(buf, len, "closed:%u+%lluus", gc->depth,
				 (unsigned long long)gc->think_ns / 1000);
		else
			snprintf(buf, len, "closed:%u", gc->depth);
		break;
	case SIM_OPEN:
		snprintf(buf, len, "%s:%llu/s", gc->poisson ? "poisson" : "rate",
			 gc->interval_ns ?
			 (unsigned long long)(1000000000ULL / gc->interval_ns) :
			 0ULL);
		break;
	case SIM_WRITEBACK:
		snprintf(buf, len, "writeback:%lluK",
			 (unsigned long long)gc->pool_sectors / 2);
		break;
	default:
		snprintf(buf, len, "idle");
	}
	return buf;
}

const char *sim_policy_name(enum ioband_policy policy)
{
	static const char *const names[IOBAND_NR_POLICIES] = {
		[IOBAND_POLICY_WEIGHT] = "weight",
		[IOBAND_POLICY_WEIGHT_IOSIZE] = "weight-iosize",
		[IOBAND_POLICY_RANGE_BW] = "range-bw",
		[IOBAND_POLICY_WEIGHT_RANGE] = "weight-range",
		[IOBAND_POLICY_WEIGHT_TIME] = "weight-time",
	};

	return (unsigned int)policy < IOBAND_NR_POLICIES ? names[policy] : "?";
}

/*
 * One line of shares: @what of each group active in the window, and the
 * weights, both scaled so that the last such group counts 1.
 */
static void print_split(FILE *out, const struct sim_cfg *cfg,
			const struct sim_result *res, const char *what,
			int kind)
{
	const struct sim_group_result *last = NULL;
	u32 i, last_weight = 0, nr = 0;
	const char *sep = "";

	for (i = 0; i < cfg->nr_groups; i++) {
		if (res->groups[i].active) {
			last = &res->groups[i];
			last_weight = cfg->groups[i].weight;
			nr++;
		}
	}
	if (nr < 2 || !split_value(last, kind))
		return;
	fprintf(out, "split in %s: ", what);
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_result *gr = &res->groups[i];

		if (!gr->active)
			continue;
		fprintf(out, "%s%.2f", sep,
			split_value(gr, kind) / split_value(last, kind));
		sep = ":";
	}
	fprintf(out, "  (weights ");
	sep = "";
	for (i = 0; i < cfg->nr_groups; i++) {
		if (!res->groups[i].active)
			continue;
		fprintf(out, "%s%.2f", sep,
			(double)cfg->groups[i].weight / last_weight);
		sep = ":";
	}
	fprintf(out, ")\n");
}

void sim_print(FILE *out, const struct sim_cfg *cfg,
	       const struct sim_result *res)
{
	u64 total_ios = 0, total_sectors = 0, total_tokens = 0, wsum = 0;
	double secs = (double)res->window_ns / 1e9;
	char limit[16] = "none";
	u32 i;

	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_result *gr = &res->groups[i];

		total_ios += gr->ios;
		total_sectors += gr->sectors;
		total_tokens += gr->tokens;
		if (gr->active)
			wsum += cfg->groups[i].weight;
	}
	if (cfg->params.io_limit)
		snprintf(limit, sizeof(limit), "%u", cfg->params.io_limit);
	fprintf(out, "policy %s  io_limit %s  device %llu ns/IO + %llu ns/sector, depth %u\n",
		sim_policy_name(cfg->params.policy), limit,
		(unsigned long long)cfg->dev.per_io_ns,
		(unsigned long long)cfg->dev.per_sector_ns, cfg->dev.depth);
	if (cfg->dev.write_per_io_set || cfg->dev.write_per_sector_set)
		fprintf(out, "writes: %llu ns/IO + %llu ns/sector\n",
			(unsigned long long)(cfg->dev.write_per_io_set ?
			cfg->dev.write_per_io_ns : cfg->dev.per_io_ns),
			(unsigned long long)(cfg->dev.write_per_sector_set ?
			cfg->dev.write_per_sector_ns : cfg->dev.per_sector_ns));
	if (cfg->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		fprintf(out, "weight-time at the end: read %.2f + %.4f x sectors, write %.2f + %.4f x sectors (sector-equivalents); service read %.0f ns + %.1f ns/sector, write %.0f ns + %.1f ns/sector; busy %u%%%s\n",
			res->time_model.io_cost[IOBAND_READ] / 65536.0,
			res->time_model.sector_cost[IOBAND_READ] / 65536.0,
			res->time_model.io_cost[IOBAND_WRITE] / 65536.0,
			res->time_model.sector_cost[IOBAND_WRITE] / 65536.0,
			(double)res->time_model.io_ns[IOBAND_READ],
			res->time_model.sector_ns[IOBAND_READ] / 65536.0,
			(double)res->time_model.io_ns[IOBAND_WRITE],
			res->time_model.sector_ns[IOBAND_WRITE] / 65536.0,
			res->time_model.busy_pct,
			res->time_model.rate_limited ? ", rate-limited: sectors" : "");
	if (cfg->dev.budget_bytes)
		fprintf(out, "ticks: %llu bytes every %.3f ms (%.2f MiB/s)\n",
			(unsigned long long)cfg->dev.budget_bytes,
			cfg->dev.tick_ns / 1e6,
			cfg->dev.budget_bytes * 1e9 / cfg->dev.tick_ns /
			1048576.0);
	fprintf(out, "window %.3f s: %llu IOs (%.0f IOPS), %.2f MiB/s, device busy %.1f%%, utilised %.1f%%\n",
		secs, (unsigned long long)total_ios,
		secs > 0 ? total_ios / secs : 0.0,
		secs > 0 ? total_sectors / 2048.0 / secs : 0.0,
		res->window_ns ? 100.0 * res->busy_ns / res->window_ns : 0.0,
		100.0 * res->utilisation);
	fprintf(out, "dispatch window %llu sectors at the end, %llu at most; in flight at most %llu IOs, %llu sectors; held for the window %llu times, for a competing group %llu; urgent %llu\n",
		(unsigned long long)res->window_sectors,
		(unsigned long long)res->window_max,
		(unsigned long long)res->max_in_flight,
		(unsigned long long)res->max_in_flight_sectors,
		(unsigned long long)res->stats.window_full,
		(unsigned long long)res->stats.idle_waits,
		(unsigned long long)res->stats.urgent);
	if (cfg->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		fprintf(out, "weight-time's window (in items) %llu at the end, %llu at most\n",
			(unsigned long long)res->window_items,
			(unsigned long long)res->window_items_max);
	fprintf(out, "%-12s %6s %-18s %9s %11s %7s %7s %7s %7s %6s %4s %7s %6s %10s %10s %9s %9s %9s %6s\n",
		"group", "weight", "pattern", "ios", "sectors", "io%",
		"sect%", "token%", "expect%", "ratio", "bklg", "urgent",
		"held", "wait_max_us", "wait_avg_us", "KB/s", "min", "max",
		"resv%");
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *gc = &cfg->groups[i];
		const struct sim_group_result *gr = &res->groups[i];
		double tok = total_tokens ? 100.0 * gr->tokens / total_tokens : 0;
		double exp = gr->active && wsum ? 100.0 * gc->weight / wsum : 0;
		char pat[32];

		if (!gr->submitted && gc->pattern == SIM_IDLE)
			continue;
		fprintf(out, "%-12s %6u %-18s %9llu %11llu %7.3f %7.3f %7.3f %7.3f %6.3f %4s %7llu %6u %10.1f %10.1f %9.0f %9u %9u %6.1f\n",
			gc->name, gc->weight, pattern_name(gc, pat, sizeof(pat)),
			(unsigned long long)gr->ios,
			(unsigned long long)gr->sectors,
			total_ios ? 100.0 * gr->ios / total_ios : 0.0,
			total_sectors ? 100.0 * gr->sectors / total_sectors : 0.0,
			tok, exp, exp > 0 ? tok / exp : 0.0,
			gr->backlogged ? "yes" : "no",
			(unsigned long long)gr->urgent, gr->max_held,
			gr->max_wait_ns / 1e3,
			gr->waits ? gr->sum_wait_ns / 1e3 / gr->waits : 0.0,
			secs > 0 ? gr->sectors / 2.0 / secs : 0.0,
			gc->min_kbps, gc->max_kbps,
			gr->waits ? 100.0 * gr->reserved / gr->waits : 0.0);
	}
	fprintf(out, "expect%% = weight / sum of weights of groups active in the window; ratio = token%% / expect%% (1 for backlogged groups); tokens include urgent debt; bklg = held or competing throughout; held = most items held at once\n");
	print_split(out, cfg, res, "sectors", SIM_EXPECT_SECTORS);
	if (cfg->params.policy != IOBAND_POLICY_WEIGHT_IOSIZE)
		print_split(out, cfg, res, "tokens", SIM_EXPECT_TOKENS);
	print_split(out, cfg, res, "device time", SIM_EXPECT_TIME);
	fprintf(out, "invariants:");
	for (i = 0; i < SIM_NR_VIOLATIONS; i++)
		fprintf(out, "%s %s %llu", i ? "," : "", sim_violation_names[i],
			(unsigned long long)res->violations[i]);
	fprintf(out, "; worst pair gap %.2f of bound; timers %llu\n",
		res->worst_pair_ratio, (unsigned long long)res->timers);
	if (res->first_violation[0])
		fprintf(out, "first violation: %s\n", res->first_violation);
}
