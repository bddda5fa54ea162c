// SPDX-License-Identifier: GPL-2.0
/* The event loop, device model and invariant checks of sim.h. */
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
	u32 group;			/* the group that issued it */
	u64 submit_ns;
	struct ioband_sched_entity *ent;
};

#define ITEM_CHUNK 4096
struct item_chunk {
	struct item_chunk *next;
	struct sim_item items[ITEM_CHUNK];
};

enum ev_kind {
	EV_ARRIVAL, EV_COMPLETE, EV_CONFIG, EV_WINDOW, EV_END, EV_TIMER,
	EV_TICK
};

struct ev {
	u64 t;
	u64 seq;
	enum ev_kind kind;
	u32 idx;
	struct sim_item *item;
};

struct grp {
	struct ioband_sched_entity ent;
	struct ioband_sched_entity *charge_to;
	u64 rng;
	bool detached;
	/* pairwise checker, by entity */
	bool was_backlogged;
	u64 interval_seq;
	unsigned __int128 norm;	/* sum of cost * inv_weight charged */
	u64 max_step;
	/* cap checker: max over runs of (sectors - max * time) */
	double cap_excess;
	u64 cap_last_ns;
	u32 cap_cmax;
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
	u64 busy_since;
	s64 budget;		/* bytes left in this tick (mbps=) */

	/* checker */
	unsigned __int128 *snap;	/* n x n, when n <= SIM_PAIRWISE_MAX */
	u64 seq;
	u64 credit_max;
	u64 held;
	bool range_ever;	/* the pairwise SFQ bound is not checked */
	u64 timer_at;		/* the glue's one timer, 0 = not armed */
};

static void violation(struct sim *s, u64 *counter, const char *what)
{
	(*counter)++;
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

/* ---- Pairwise fairness checker (ioband-sched.c, section 3) ---- */

static u32 grp_index(struct sim *s, struct ioband_sched_entity *e)
{
	return (u32)(container_of(e, struct grp, ent) - s->grps);
}

static bool checking(const struct sim *s)
{
	return s->snap != NULL && !s->range_ever;
}

static void check_pair(struct sim *s, u32 i, u32 j)
{
	struct grp *gi = &s->grps[i], *gj = &s->grps[j];
	unsigned __int128 *base, di, dj, gap, bound;

	base = gi->interval_seq > gj->interval_seq ? &s->snap[i * s->n] :
						     &s->snap[j * s->n];
	di = gi->norm - base[i];
	dj = gj->norm - base[j];
	gap = di > dj ? di - dj : dj - di;
	bound = (unsigned __int128)2 * s->credit_max + gi->max_step +
		gj->max_step;
	if (bound && (double)gap / (double)bound > s->res->worst_pair_ratio)
		s->res->worst_pair_ratio = (double)gap / (double)bound;
	if (gap > bound) {
		char msg[120];

		snprintf(msg, sizeof(msg),
			 "groups %u and %u: normalised gap %.3g > bound %.3g",
			 i, j, (double)gap, (double)bound);
		violation(s, &s->res->unfair, msg);
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
	for (j = 0; j < s->n; j++)
		s->snap[i * s->n + j] = s->grps[j].norm;
}

/* Notes a change of @i's backlog state after a call into the core. */
static void track(struct sim *s, u32 i)
{
	struct grp *g = &s->grps[i];
	bool now = g->ent.nr_queued > 0;

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

static u64 item_cost(const struct sim *s, const struct sim_item *item)
{
	if (s->sched.params.policy == IOBAND_POLICY_WEIGHT ||
	    !item->si.sectors)
		return 1;
	if (item->si.sectors > IOBAND_MAX_ITEM_COST)
		return IOBAND_MAX_ITEM_COST;
	return item->si.sectors;
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

static void device_start(struct sim *s, struct sim_item *item)
{
	u64 svc = s->cfg->dev.per_io_ns +
		  s->cfg->dev.per_sector_ns * item->si.sectors;

	busy_account(s);
	s->busy++;
	ev_push(s, s->now + svc, EV_COMPLETE, 0, item);
}

/*
 * May @item start now? With mbps= only while this tick's budget lasts:
 * like null_blk, the IO that overdraws it is refused (the debt stays
 * until the tick resets it) and everything waits for the next tick.
 */
static bool device_admit(struct sim *s, const struct sim_item *item)
{
	if (s->busy >= s->cfg->dev.depth)
		return false;
	if (!s->cfg->dev.mbps)
		return true;
	if (s->budget < 0)
		return false;
	s->budget -= (s64)item->si.sectors * 512;
	return s->budget >= 0;
}

/* Starts the device FIFO's head IOs while the device takes them. */
static void device_run_fifo(struct sim *s)
{
	while (s->fifo_head && device_admit(s, s->fifo_head)) {
		struct sim_item *next = s->fifo_head;

		s->fifo_head = next->dev_next;
		if (!s->fifo_head)
			s->fifo_tail = NULL;
		device_start(s, next);
	}
}

/* null_blk's bandwidth timer: a new budget, and the FIFO runs. */
static void device_tick(struct sim *s)
{
	s->budget = (s64)(s->cfg->dev.mbps * (1ULL << 20) *
			  s->cfg->dev.tick_ns / 1000000000ULL);
	device_run_fifo(s);
	if (s->now < s->cfg->duration_ns || s->fifo_head || s->busy)
		ev_push(s, s->now + s->cfg->dev.tick_ns, EV_TICK, 0, NULL);
}

/* The item goes down: account it, then into the device. */
/*
 * ioband-sched.c section 9: a capped group's sectors over any run of its
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
		violation(s, &s->res->over_cap, msg);
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

static void dispatched(struct sim *s, struct sim_item *item,
		       struct ioband_sched_entity *e, bool charged,
		       bool reserved)
{
	struct sim_group_result *gr = &s->res->groups[item->group];
	u64 wait = s->now - item->submit_ns;

	item->ent = e;
	s->res->dispatches++;
	if (s->sched.in_flight > s->res->max_in_flight)
		s->res->max_in_flight = s->sched.in_flight;
	if (!s->sched.passthrough && s->sched.io_limit &&
	    s->sched.in_flight > s->sched.io_limit)
		violation(s, &s->res->over_limit, "in flight above io_limit");
	if (reserved)
		gr->reserved++;
	if (charged && !s->sched.passthrough)
		cap_check(s, e, item);
	if (charged) {
		struct grp *g = &s->grps[grp_index(s, e)];
		u64 step = item_cost(s, item) * g->ent.inv_weight;

		g->norm += step;
		if (step > g->max_step)
			g->max_step = step;
	}
	if (s->in_window) {
		gr->ios++;
		gr->sectors += item->si.sectors;
		gr->tokens += item_cost(s, item);
	}
	if (wait > gr->max_wait_ns)
		gr->max_wait_ns = wait;
	gr->sum_wait_ns += wait;
	gr->waits++;

	if (!s->fifo_head && device_admit(s, item)) {
		device_start(s, item);
	} else {
		item->dev_next = NULL;
		if (s->fifo_tail)
			s->fifo_tail->dev_next = item;
		else
			s->fifo_head = item;
		s->fifo_tail = item;
	}
}

/*
 * The glue's timer: after every dispatch loop, one timer is armed at
 * ioband_sched_next_event_ns() when that is not 0.
 */
static void arm_timer(struct sim *s)
{
	u64 at = ioband_sched_next_event_ns(&s->sched);

	if (!at)
		return;
	if (at <= s->now) {
		violation(s, &s->res->stalled, "next event not in the future");
		return;
	}
	if (!s->timer_at || at < s->timer_at || s->timer_at < s->now) {
		s->timer_at = at;
		ev_push(s, at, EV_TIMER, 0, NULL);
	}
}

/* The glue's dispatch loop. */
static void pump(struct sim *s)
{
	struct ioband_sched_item *si;
	struct ioband_sched_entity *e;
	u64 reserved = s->sched.stats.reserved;

	while ((si = ioband_sched_next(&s->sched, &e, s->now))) {
		struct sim_item *item = container_of(si, struct sim_item, si);

		s->held--;
		dispatched(s, item, e, true,
			   s->sched.stats.reserved != reserved);
		reserved = s->sched.stats.reserved;
		track(s, grp_index(s, e));
	}
	/*
	 * Work conservation: nothing the core would dispatch is left while
	 * there is room below. Only limits may leave the device idle with
	 * items held, and then a timer must be due.
	 */
	if (ioband_sched_has_work(&s->sched))
		violation(s, &s->res->not_conserving,
			  "items held below io_limit");
	if (s->sched.nr_queued && !s->sched.passthrough &&
	    ioband_sched_room(&s->sched) &&
	    !ioband_sched_next_event_ns(&s->sched))
		violation(s, &s->res->stalled,
			  "items held, room below, no timer");
	arm_timer(s);
	if (s->sched.nr_queued != s->held)
		violation(s, &s->res->accounting, "nr_queued != held");
	if (s->sched.credit > s->credit_max)
		s->credit_max = s->sched.credit;
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

static void arrival(struct sim *s, u32 i, bool run_pump)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[i];
	struct grp *g = &s->grps[i];
	struct sim_item *item = item_alloc(s);
	struct ioband_sched_entity *e = g->charge_to;
	u32 sectors = (u32)rand_range(&g->rng, gc->size_min, gc->size_max);
	enum ioband_dir dir = rand_range(&g->rng, 1, 100) <= gc->write_pct ?
			      IOBAND_WRITE : IOBAND_READ;
	bool passthrough = s->sched.passthrough;
	u64 reserved = s->sched.stats.reserved;

	ioband_sched_item_init(&item->si, sectors, dir, 0);
	item->group = i;
	item->submit_ns = s->now;
	s->res->groups[i].submitted++;
	if (s->in_window)
		s->res->groups[i].active = true;

	if (ioband_sched_submit(&s->sched, e, &item->si, s->now))
		dispatched(s, item, e, !passthrough,
			   s->sched.stats.reserved != reserved);
	else
		s->held++;
	track(s, grp_index(s, e));
	if (run_pump)
		pump(s);

	if (gc->pattern == SIM_OPEN)
		schedule_arrival(s, i, s->now + open_interval(s, i));
}

static void completion(struct sim *s, struct sim_item *item)
{
	const struct sim_group_cfg *gc = &s->cfg->groups[item->group];
	u32 i = item->group;

	busy_account(s);
	s->busy--;
	device_run_fifo(s);
	s->res->groups[i].completed++;
	ioband_sched_complete(&s->sched, item->ent, &item->si, s->now);
	item_free(s, item);
	/*
	 * A closed-loop issuer with no think time re-issues from its
	 * completion, before the dispatch loop runs: so closed=N with N
	 * above io_limit stays backlogged even when IOs complete together.
	 */
	if (gc->pattern == SIM_CLOSED && !gc->think_ns &&
	    !s->arrivals_stopped && next_on(gc, s->now) == s->now &&
	    s->now < stop_time(s, gc))
		arrival(s, i, false);
	else if (gc->pattern == SIM_CLOSED)
		schedule_arrival(s, i, s->now + gc->think_ns);
	pump(s);
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
			track(s, ev->group);
			track(s, 0);
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
	intervals_reset(s);
	pump(s);
}

static void window_start(struct sim *s)
{
	u32 i;

	s->in_window = true;
	busy_account(s);
	for (i = 0; i < s->n; i++)
		s->res->groups[i].backlogged = s->grps[i].ent.nr_queued > 0;
}

static void window_end(struct sim *s)
{
	busy_account(s);
	s->in_window = false;
	s->arrivals_stopped = true;
}

/* ---- Run ---- */

void sim_cfg_init(struct sim_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->dev.per_io_ns = 100000;
	cfg->dev.per_sector_ns = 0;
	cfg->dev.depth = 32;
	cfg->dev.tick_ns = 20000000;	/* null_blk's TIMER_INTERVAL */
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
	cfg->groups = NULL;
	cfg->events = NULL;
}

void sim_result_free(struct sim_result *res)
{
	free(res->groups);
	res->groups = NULL;
}

u64 sim_violations(const struct sim_result *res)
{
	return res->over_limit + res->not_conserving + res->lost +
	       res->unfair + res->accounting + res->over_cap + res->stalled;
}

int sim_run(const struct sim_cfg *cfg, struct sim_result *res)
{
	struct sim s = { 0 };
	u32 i, j, next_event = 0;

	memset(res, 0, sizeof(*res));
	res->groups = calloc(cfg->nr_groups, sizeof(*res->groups));
	s.grps = calloc(cfg->nr_groups, sizeof(*s.grps));
	if (!res->groups || !s.grps)
		abort();
	s.cfg = cfg;
	s.res = res;
	s.n = cfg->nr_groups;
	if (s.n <= SIM_PAIRWISE_MAX) {
		s.snap = calloc((size_t)s.n * s.n, sizeof(*s.snap));
		if (!s.snap)
			abort();
	}

	ioband_sched_init(&s.sched, &cfg->params);
	s.sched.vtime = cfg->vtime_start;
	for (i = 0; i < s.n; i++) {
		ioband_sched_entity_init(&s.sched, &s.grps[i].ent,
					 cfg->groups[i].weight);
		ioband_sched_set_range(&s.sched, &s.grps[i].ent,
				       cfg->groups[i].min_kbps,
				       cfg->groups[i].max_kbps);
		s.grps[i].charge_to = &s.grps[i].ent;
		s.grps[i].rng = cfg->seed * 1000003 + i;
	}
	s.credit_max = s.sched.credit;
	s.range_ever = ioband_policy_is_range(cfg->params.policy);
	for (i = 0; i < cfg->nr_events; i++)
		if (cfg->events[i].kind == SIM_EV_POLICY &&
		    ioband_policy_is_range(cfg->events[i].value))
			s.range_ever = true;

	for (i = 0; i < s.n; i++) {
		const struct sim_group_cfg *gc = &cfg->groups[i];

		if (gc->pattern == SIM_CLOSED)
			for (j = 0; j < gc->depth; j++)
				schedule_arrival(&s, i, gc->start_ns);
		else if (gc->pattern == SIM_OPEN)
			schedule_arrival(&s, i, gc->start_ns);
	}
	if (cfg->nr_events)
		ev_push(&s, cfg->events[0].at_ns, EV_CONFIG, 0, NULL);
	ev_push(&s, cfg->warmup_ns, EV_WINDOW, 0, NULL);
	ev_push(&s, cfg->duration_ns, EV_END, 0, NULL);
	if (cfg->dev.mbps)
		device_tick(&s);

	while (s.heap_len) {
		struct ev ev = ev_pop(&s);

		s.now = ev.t;
		res->events++;
		switch (ev.kind) {
		case EV_ARRIVAL:
			if (!s.arrivals_stopped)
				arrival(&s, ev.idx, true);
			break;
		case EV_COMPLETE:
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
			res->timers++;
			if (ev.t == s.timer_at)
				s.timer_at = 0;
			pump(&s);
			break;
		case EV_TICK:
			device_tick(&s);
			break;
		}
	}

	/* Drained: nothing held, nothing in flight, nothing lost. */
	intervals_reset(&s);
	for (i = 0; i < s.n; i++) {
		struct sim_group_result *gr = &res->groups[i];

		if (gr->submitted != gr->completed)
			res->lost += gr->submitted - gr->completed;
	}
	if (!ioband_sched_idle(&s.sched) || s.held)
		violation(&s, &res->lost, "core not idle after drain");
	res->window_ns = cfg->duration_ns > cfg->warmup_ns ?
			 cfg->duration_ns - cfg->warmup_ns : 0;
	res->tree_steps = s.sched.stats.tree_steps;

	while (s.chunks) {
		struct item_chunk *c = s.chunks;

		s.chunks = c->next;
		free(c);
	}
	free(s.heap);
	free(s.snap);
	free(s.grps);
	return 0;
}

/* ---- Report ---- */

static const char *pattern_name(const struct sim_group_cfg *gc, char *buf,
				size_t len)
{
	switch (gc->pattern) {
	case SIM_CLOSED:
		snprintf(buf, len, "closed:%u", gc->depth);
		break;
	case SIM_OPEN:
		snprintf(buf, len, "%s:%llu/s", gc->poisson ? "poisson" : "rate",
			 gc->interval_ns ?
			 (unsigned long long)(1000000000ULL / gc->interval_ns) :
			 0ULL);
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
	};

	return (unsigned int)policy < IOBAND_NR_POLICIES ? names[policy] : "?";
}

void sim_print(FILE *out, const struct sim_cfg *cfg,
	       const struct sim_result *res)
{
	u64 total_ios = 0, total_sectors = 0, total_tokens = 0, wsum = 0;
	double secs = (double)res->window_ns / 1e9;
	u32 i;

	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_result *gr = &res->groups[i];

		total_ios += gr->ios;
		total_sectors += gr->sectors;
		total_tokens += gr->tokens;
		if (gr->active)
			wsum += cfg->groups[i].weight;
	}
	fprintf(out, "policy %s  io_limit %u  device %llu ns/IO + %llu ns/sector, depth %u\n",
		sim_policy_name(cfg->params.policy),
		cfg->params.io_limit,
		(unsigned long long)cfg->dev.per_io_ns,
		(unsigned long long)cfg->dev.per_sector_ns, cfg->dev.depth);
	if (cfg->dev.mbps)
		fprintf(out, "capped at %llu MiB/s, a budget every %llu ns\n",
			(unsigned long long)cfg->dev.mbps,
			(unsigned long long)cfg->dev.tick_ns);
	fprintf(out, "window %.3f s: %llu IOs (%.0f IOPS), %.1f MiB/s, device busy %.1f%%\n",
		secs, (unsigned long long)total_ios,
		secs > 0 ? total_ios / secs : 0.0,
		secs > 0 ? total_sectors / 2048.0 / secs : 0.0,
		res->window_ns ? 100.0 * res->busy_ns / res->window_ns : 0.0);
	fprintf(out, "%-12s %6s %-16s %9s %11s %7s %7s %7s %7s %6s %4s %10s %10s %9s %9s %9s %6s\n",
		"group", "weight", "pattern", "ios", "sectors", "io%",
		"sect%", "token%", "expect%", "ratio", "bklg", "wait_max_us",
		"wait_avg_us", "KB/s", "min", "max", "resv%");
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *gc = &cfg->groups[i];
		const struct sim_group_result *gr = &res->groups[i];
		double tok = total_tokens ? 100.0 * gr->tokens / total_tokens : 0;
		double exp = gr->active && wsum ? 100.0 * gc->weight / wsum : 0;
		char pat[32];

		if (!gr->submitted && gc->pattern == SIM_IDLE)
			continue;
		fprintf(out, "%-12s %6u %-16s %9llu %11llu %7.3f %7.3f %7.3f %7.3f %6.3f %4s %10.1f %10.1f %9.0f %9u %9u %6.1f\n",
			gc->name, gc->weight, pattern_name(gc, pat, sizeof(pat)),
			(unsigned long long)gr->ios,
			(unsigned long long)gr->sectors,
			total_ios ? 100.0 * gr->ios / total_ios : 0.0,
			total_sectors ? 100.0 * gr->sectors / total_sectors : 0.0,
			tok, exp, exp > 0 ? tok / exp : 0.0,
			gr->backlogged ? "yes" : "no",
			gr->max_wait_ns / 1e3,
			gr->waits ? gr->sum_wait_ns / 1e3 / gr->waits : 0.0,
			secs > 0 ? gr->sectors / 2.0 / secs : 0.0,
			gc->min_kbps, gc->max_kbps,
			gr->waits ? 100.0 * gr->reserved / gr->waits : 0.0);
	}
	fprintf(out, "expect%% = weight / sum of weights of groups active in the window; ratio = token%% / expect%% (1 for backlogged groups)\n");
	fprintf(out, "invariants: over_limit %llu, not_conserving %llu, lost %llu, unfair %llu, accounting %llu, over_cap %llu, stalled %llu; worst pair gap %.2f of bound; max in flight %llu; timers %llu\n",
		(unsigned long long)res->over_limit,
		(unsigned long long)res->not_conserving,
		(unsigned long long)res->lost,
		(unsigned long long)res->unfair,
		(unsigned long long)res->accounting,
		(unsigned long long)res->over_cap,
		(unsigned long long)res->stalled, res->worst_pair_ratio,
		(unsigned long long)res->max_in_flight,
		(unsigned long long)res->timers);
	if (res->first_violation[0])
		fprintf(out, "first violation: %s\n", res->first_violation);
}
