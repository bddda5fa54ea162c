// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the scheduling core: random scenarios from fixed
 * seeds, each run through the simulator, which checks on every event
 * that
 *
 *   - an item (not urgent, not in passthrough) goes down only with room
 *     below: fewer sectors in flight than the window, or nothing in
 *     flight, so the window is exceeded only by the item that went down
 *     last; and fewer items than io_limit, when io_limit is set;
 *   - items are held with room below only while the next turn is a
 *     waiting (competing) group's, within IOBAND_IDLE_NS of its latest
 *     submission or completion, with the glue's timer due by then, or
 *     (range policies) while every holder is over its max, with the
 *     timer due when the first may go;
 *   - for every two groups backlogged (holding items, or waiting) over a
 *     common interval, the gap between their normalised services
 *     (cost * 2^32 / weight, urgent debt included) stays within
 *     2 * credit + step_f + step_g, the bound of ioband-design.rst section
 *     2, plus the debt either had not yet paid at the interval's start
 *     or end (section 16);
 *   - urgent items are never held; every submitted item completes, and
 *     the counters agree;
 *
 * and, for scenarios where every group stays backlogged or competing
 * throughout the window, that each group's share of tokens (urgent debt
 * included) is within the absolute bound of section 2:
 *   |tokens_g - T * w_g / W| <= c_g + w_g * sum(c_f) / W
 *                               + 2 * carryover * token_base * w_g / W
 *                               + D_g + w_g * sum(D_f) / W
 *                               + T * 2^-16
 * (T = tokens dispatched in the window, c = largest cost of one of the
 * group's items, W = sum of weights, D = urgent tokens not yet paid at
 * the window's start and at its end; the credit term is there because a
 * group may enter the window holding return credit, the last term is the
 * rounding of 2^32 / weight).
 *
 * The random scenarios cover both device models (servers, some of them
 * disks that seek, and ticks as null_blk's mbps=), io_limit unset or set, closed loops of depth 1 to
 * 256 with think times on both sides of IOBAND_IDLE_NS, open loops,
 * writeback groups (bounded pools, bursts, gaps), urgent and sized
 * items, and live changes. Separate families: deep loads run long
 * enough for the window to settle, which must then keep the device at
 * least 95% utilised (section 14); and the range policies, checked for
 * caps and reservations.
 *
 * Scenario files given as arguments are replayed and must break no
 * invariant. Prints one PASS/FAIL line per property and per file, then
 * "N passed, N failed".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

#define NR_SCENARIOS		3000
#define NR_THROUGHPUT_SCENARIOS	600
#define NR_RANGE_SCENARIOS	600

/* The least utilisation a settled window leaves a backlogged device. */
#define MIN_UTILISATION		0.95

/* The simulator's invariants (enum sim_violation), then these. */
enum prop {
	P_SHARES = SIM_NR_VIOLATIONS, P_THROUGHPUT, P_RESERVE, NR_PROPS
};

static const char *const prop_names[NR_PROPS] = {
	[SIM_OVER_LIMIT] = "io_limit_respected",
	[SIM_OVER_WINDOW] = "window_respected",
	[SIM_NOT_CONSERVING] = "work_conserving",
	[SIM_STALLED] = "timer_due_while_waiting",
	[SIM_UNFAIR] = "pairwise_fairness_bound",
	[SIM_URGENT_HELD] = "urgent_never_held",
	[SIM_LOST] = "no_item_lost",
	[SIM_ACCOUNTING] = "counters_agree",
	[SIM_OVER_CAP] = "range_caps_never_exceeded",
	[P_SHARES] = "shares_within_bound_when_backlogged_or_competing",
	[P_THROUGHPUT] = "settled_window_keeps_device_busy",
	[P_RESERVE] = "range_reservations_met_when_feasible",
};

static u64 failures[NR_PROPS];
static u64 first_fail_seed[NR_PROPS];
static const char *family;	/* of the scenarios being run */

static u64 pick(u64 *rng, u64 lo, u64 hi)
{
	return lo + sim_rand(rng) % (hi - lo + 1);
}

/* weight, weight-iosize or weight-time. */
static enum ioband_policy random_weight_policy(u64 *rng)
{
	static const enum ioband_policy policies[] = {
		IOBAND_POLICY_WEIGHT, IOBAND_POLICY_WEIGHT_IOSIZE,
		IOBAND_POLICY_WEIGHT_TIME,
	};

	return policies[pick(rng, 0, 2)];
}

static u32 pick_weight(u64 *rng)
{
	u64 w;

	switch (pick(rng, 0, 3)) {
	case 0:
		return (u32)pick(rng, 1, 10);
	case 1:
		return (u32)pick(rng, 1, 1000);
	case 2:
		/* roughly log-uniform over 1..32767 */
		w = pick(rng, 1, 1ULL << pick(rng, 0, 15));
		return w > IOBAND_MAX_WEIGHT ? IOBAND_MAX_WEIGHT : (u32)w;
	default:
		return (u32)pick(rng, 1, IOBAND_MAX_WEIGHT);
	}
}

static void fail(enum prop p, u64 seed, const char *detail)
{
	if (!failures[p]++) {
		first_fail_seed[p] = seed;
		printf("  %s: first failure, %s seed %llu: %s\n", prop_names[p],
		       family, (unsigned long long)seed, detail);
	}
}

static void add_groups(struct sim_cfg *cfg, u32 n)
{
	cfg->groups = realloc(cfg->groups, (n + 1) * sizeof(*cfg->groups));
	if (!cfg->groups)
		abort();
	memset(cfg->groups + 1, 0, n * sizeof(*cfg->groups));
	cfg->nr_groups = n + 1;
}

/*
 * A random device, either model; returns its capacity in IOs per ns for
 * IOs of @avg_sectors.
 */
static double random_device(u64 *rng, struct sim_cfg *cfg, u32 max_size,
			    double avg_sectors, bool slow)
{
	struct sim_device *dev = &cfg->dev;
	double capacity;

	dev->depth = (u32)(pick(rng, 0, 3) ? pick(rng, 1, 64) :
			   pick(rng, 65, 256));
	if (pick(rng, 0, 2)) {
		/*
		 * servers; one in four a disk that seeks, from its own draws
		 * so that the other scenarios stay what they were
		 */
		u64 disk = *rng ^ 0xd15c;
		double seek = 0;

		dev->per_io_ns = slow ? pick(rng, 200000, 5000000) :
				 pick(rng, 1000, 1000000);
		dev->per_sector_ns = pick(rng, 0, 3) ? pick(rng, 0, 2000) : 0;
		if (!pick(&disk, 0, 3)) {
			dev->depth = 1;
			dev->seek_ns = pick(&disk, 1000000, 10000000);
			dev->stroke_ns = pick(&disk, 0, 40000000);
			dev->size_sectors = 1ULL << 25;	/* 16 GiB: 64 regions */
			dev->jitter_pct = (u32)pick(&disk, 0, 30);
			dev->sort = pick(&disk, 0, 1);
			seek = (double)dev->seek_ns + dev->stroke_ns / 3.0;
		}
		return dev->depth / ((double)dev->per_io_ns + seek +
				     (double)dev->per_sector_ns * avg_sectors);
	}
	/*
	 * ticks, each granting a few to a few hundred average IOs; slow:
	 * at least 20 of the largest, so that what the tick rule leaves of
	 * each budget (less than one IO) is small
	 */
	dev->per_io_ns = pick(rng, 0, 1) ? 0 : pick(rng, 1000, 200000);
	dev->per_sector_ns = 0;
	dev->tick_ns = pick(rng, 1, 20) * 1000000ULL;
	dev->budget_bytes = slow ? (u64)max_size * 512 * pick(rng, 20, 60) :
			    (u64)(avg_sectors * 512 * pick(rng, 2, 400));
	if (dev->budget_bytes < (u64)max_size * 512)
		dev->budget_bytes = (u64)max_size * 512;
	capacity = dev->budget_bytes / (avg_sectors * 512) / dev->tick_ns;
	if (dev->per_io_ns && dev->depth / (double)dev->per_io_ns < capacity)
		capacity = dev->depth / (double)dev->per_io_ns;
	return capacity;
}

/* A think time: none, short, or on either side of IOBAND_IDLE_NS. */
static u64 pick_think(u64 *rng)
{
	switch (pick(rng, 0, 5)) {
	case 0:
	case 1:
		return 0;
	case 2:
		return pick(rng, 1000, 100000);
	case 3:
		return pick(rng, 100000, IOBAND_IDLE_NS);
	default:
		return pick(rng, IOBAND_IDLE_NS / 2, 3 * IOBAND_IDLE_NS);
	}
}

/* Urgent and sized items, in a minority of groups. */
static void pick_marks(u64 *rng, struct sim_group_cfg *g)
{
	if (pick(rng, 0, 3) == 0)
		g->urgent_pct = pick(rng, 0, 5) ? (u32)pick(rng, 1, 30) : 100;
	if (pick(rng, 0, 5) == 0)
		g->discard_pct = (u32)pick(rng, 1, 100);
}

/* A writeback group: a pool of a few to a few hundred bios. */
static void pick_writeback(u64 *rng, struct sim_group_cfg *g, u32 max_size,
			   double capacity, bool deep)
{
	g->pattern = SIM_WRITEBACK;
	g->size_min = (u32)pick(rng, 1, max_size);
	g->size_max = (u32)pick(rng, g->size_min, max_size);
	g->write_pct = 100;
	g->pool_sectors = (u64)g->size_max * (deep ? pick(rng, 64, 512) :
					      pick(rng, 1, 256));
	if (!deep && pick(rng, 0, 1))
		/* between 5% and 150% of the device, in sectors per second */
		g->dirty_rate = (u64)(capacity * 1e9 * g->size_max *
				      pick(rng, 5, 150) / 100.0) + 1;
	if (pick(rng, 0, 1))
		g->burst_sectors = (u64)g->size_max * pick(rng, 1, 64);
	if (g->burst_sectors && pick(rng, 0, 1))
		g->gap_ns = deep ? pick(rng, 0, IOBAND_IDLE_NS / 2) :
			    pick(rng, 0, 3 * IOBAND_IDLE_NS);
}

struct gen {
	struct sim_cfg cfg;
	bool all_backlogged;
};

static void generate(u64 seed, struct gen *gen)
{
	struct sim_cfg *cfg = &gen->cfg;
	u64 rng = seed * 0x2545F4914F6CDD1DULL + 7;
	u32 n, i, io_limit, max_size;
	double capacity;

	sim_cfg_init(cfg);
	cfg->seed = seed;
	gen->all_backlogged = pick(&rng, 0, 2) == 0;

	n = pick(&rng, 0, 9) ? (u32)pick(&rng, 1, 8) : (u32)pick(&rng, 9, 40);
	max_size = pick(&rng, 0, 1) ? 8 : (u32)pick(&rng, 8, 2048);
	capacity = random_device(&rng, cfg, max_size, max_size / 2.0 + 1,
				 false);
	cfg->params.policy = random_weight_policy(&rng);
	io_limit = pick(&rng, 0, 2) ? 0 : (u32)pick(&rng, 1, 64);
	cfg->params.io_limit = io_limit;
	cfg->params.io_throttle = (u32)pick(&rng, 1, io_limit ? io_limit : 64);
	cfg->params.token_base = pick(&rng, 0, 2) ? 0 :
				 (u32)pick(&rng, 1, 100000);
	cfg->params.carryover = (u32)pick(&rng, 0, 4);
	if (pick(&rng, 0, 7) == 0)
		cfg->vtime_start = ~0ULL - pick(&rng, 0, 1ULL << 40);

	add_groups(cfg, n);
	for (i = 0; i <= n; i++) {
		struct sim_group_cfg *g = &cfg->groups[i];

		if (i)
			snprintf(g->name, sizeof(g->name), "g%u", i);
		else if (!gen->all_backlogged)
			continue;	/* the default group stays idle */
		g->weight = pick_weight(&rng);
		if (pick(&rng, 0, 4) == 0) {
			pick_writeback(&rng, g, max_size, capacity,
				       gen->all_backlogged);
			continue;
		}
		g->size_min = (u32)pick(&rng, 1, max_size);
		g->size_max = pick(&rng, 0, 1) ? g->size_min :
			      (u32)pick(&rng, g->size_min, max_size);
		g->write_pct = (u32)pick(&rng, 0, 100);
		pick_marks(&rng, g);
		if (gen->all_backlogged) {
			/* Deep, or shallow but quick to come back. */
			g->pattern = SIM_CLOSED;
			g->depth = (u32)pick(&rng, 1, 256);
			g->think_ns = pick(&rng, 0, 1) ? 0 :
				      pick(&rng, 1000, IOBAND_IDLE_NS / 4);
			continue;
		}
		switch (pick(&rng, 0, 3)) {
		case 0:
		case 1:
			g->pattern = SIM_CLOSED;
			g->depth = (u32)(pick(&rng, 0, 1) ? pick(&rng, 1, 16) :
					 pick(&rng, 1, 256));
			g->think_ns = pick_think(&rng);
			break;
		case 2:
			g->pattern = SIM_OPEN;
			g->poisson = pick(&rng, 0, 1);
			/* between 5% and 150% of the device */
			g->interval_ns = (u64)(100.0 /
					       (capacity * pick(&rng, 5, 150)))
					 + 1;
			break;
		default:
			g->pattern = SIM_IDLE;
		}
		if (g->pattern != SIM_IDLE && pick(&rng, 0, 2) == 0) {
			g->on_ns = (u64)(pick(&rng, 10, 2000) / capacity) + 1;
			g->off_ns = (u64)(pick(&rng, 10, 2000) / capacity) + 1;
			g->start_ns = (u64)(pick(&rng, 0, 1000) / capacity);
		}
	}
	/* About 2,000 to 6,000 IOs of device time. */
	cfg->duration_ns = (u64)(pick(&rng, 2000, 6000) / capacity) + 1;
	cfg->warmup_ns = cfg->duration_ns / 10;

	if (!gen->all_backlogged && pick(&rng, 0, 2) == 0) {
		u32 k, nr = (u32)pick(&rng, 1, 4);

		cfg->events = calloc(nr, sizeof(*cfg->events));
		if (!cfg->events)
			abort();
		for (k = 0; k < nr; k++) {
			struct sim_event_cfg *ev = &cfg->events[k];

			ev->at_ns = cfg->duration_ns * (k + 1) / (nr + 1);
			ev->group = (u32)pick(&rng, 1, n);
			switch (pick(&rng, 0, 6)) {
			case 0:
				ev->kind = SIM_EV_DETACH;
				break;
			case 1:
				ev->kind = SIM_EV_PASSTHROUGH;
				ev->value = 1;
				break;
			case 2:
				/* 0 (no cap) is valid whatever io_throttle */
				ev->kind = SIM_EV_IO_LIMIT;
				ev->value = pick(&rng, 0, 1) ? 0 :
					    pick(&rng, cfg->params.io_throttle,
						 64);
				break;
			case 3:
				ev->kind = SIM_EV_CARRYOVER;
				ev->value = pick(&rng, 0, 4);
				break;
			case 4:
				ev->kind = SIM_EV_POLICY;
				ev->value = random_weight_policy(&rng);
				break;
			default:
				ev->kind = SIM_EV_WEIGHT;
				ev->value = pick_weight(&rng);
			}
		}
		cfg->nr_events = nr;
		/* Never end a run in passthrough: turn it off again. */
		for (k = 0; k < nr; k++)
			if (cfg->events[k].kind == SIM_EV_PASSTHROUGH &&
			    k + 1 < nr) {
				cfg->events[k + 1].kind = SIM_EV_PASSTHROUGH;
				cfg->events[k + 1].value = 0;
			}
	}
}

/*
 * Deep loads on a slow device (few IOs per simulated second), run for
 * 1.2 s so that the window, which starts at its floor and may double
 * every 50 ms period, has settled by the time the measure starts at
 * 0.6 s. Every group keeps more outstanding than the window can hold
 * (at most twice the device's servers, section 14), closed loops with
 * no think time or writeback pools as deep, so that none ever waits as
 * a competing group: what is measured is the window, not the cost of
 * waiting for a group (section 15), which a group that cannot use its
 * share makes the others pay.
 */
static void generate_throughput(u64 seed, struct gen *gen)
{
	struct sim_cfg *cfg = &gen->cfg;
	u64 rng = seed * 0xD1B54A32D192ED03ULL + 3;
	u32 n = (u32)pick(&rng, 0, 5), i, max_size, deep;
	double capacity;

	sim_cfg_init(cfg);
	cfg->seed = seed;
	gen->all_backlogged = true;
	max_size = pick(&rng, 0, 1) ? 8 : (u32)pick(&rng, 8, 1024);
	capacity = random_device(&rng, cfg, max_size, max_size / 2.0 + 1,
				 true);
	/* Twice the pipe within the window's cap, 64 MiB (section 14). */
	if ((u64)cfg->dev.depth * max_size > IOBAND_WINDOW_MAX_SECTORS / 4)
		max_size = IOBAND_WINDOW_MAX_SECTORS / 4 / cfg->dev.depth;
	cfg->params.policy = random_weight_policy(&rng);
	deep = 2 * cfg->dev.depth + 8;
	add_groups(cfg, n);
	for (i = 0; i <= n; i++) {
		struct sim_group_cfg *g = &cfg->groups[i];

		if (i)
			snprintf(g->name, sizeof(g->name), "g%u", i);
		g->weight = pick_weight(&rng);
		if (pick(&rng, 0, 3) == 0) {
			pick_writeback(&rng, g, max_size, capacity, true);
			g->gap_ns = 0;
			if (g->pool_sectors < (u64)g->size_max * 2 * deep)
				g->pool_sectors = (u64)g->size_max * 2 * deep;
			continue;
		}
		g->pattern = SIM_CLOSED;
		g->depth = deep + (u32)pick(&rng, 0, deep);
		g->size_min = (u32)pick(&rng, 1, max_size);
		g->size_max = pick(&rng, 0, 1) ? g->size_min :
			      (u32)pick(&rng, g->size_min, max_size);
		if (pick(&rng, 0, 3) == 0)
			g->urgent_pct = (u32)pick(&rng, 1, 20);
	}
	cfg->duration_ns = 1200000000ULL;
	cfg->warmup_ns = 600000000ULL;
}

/*
 * A random scenario under range-bw or weight-range. Groups with a
 * reservation are greedy (closed loops deeper than io_limit, fixed
 * size), and the reservations use at most 60% of the device's servers
 * (reservation_feasible); others are random, some capped, some both.
 * Some scenarios add live changes (policy, range, passthrough, detach),
 * which void the reservation check. The device is slow enough that the
 * window has settled (about 300 ms) before the measure starts.
 */
struct range_gen {
	struct sim_cfg cfg;
	bool check_reservations;
};

static void generate_range(u64 seed, struct range_gen *gen)
{
	struct sim_cfg *cfg = &gen->cfg;
	u64 rng = seed * 0x9E3779B97F4A7C15ULL + 11;
	u32 n, i, io_limit, servers;
	double budget, used = 0, per_io_avg, capacity;

	sim_cfg_init(cfg);
	cfg->seed = seed;
	n = (u32)pick(&rng, 1, pick(&rng, 0, 4) ? 8 : 24);
	cfg->dev.per_io_ns = pick(&rng, 500000, 5000000);
	cfg->dev.per_sector_ns = pick(&rng, 0, 1) ? pick(&rng, 0, 5000) : 0;
	cfg->dev.depth = (u32)pick(&rng, 1, 32);
	cfg->params.policy = pick(&rng, 0, 1) ? IOBAND_POLICY_RANGE_BW :
			     IOBAND_POLICY_WEIGHT_RANGE;
	io_limit = (u32)pick(&rng, 1, 32);
	cfg->params.io_limit = io_limit;
	cfg->params.io_throttle = 1;
	cfg->params.carryover = (u32)pick(&rng, 0, 2);
	servers = io_limit < cfg->dev.depth ? io_limit : cfg->dev.depth;
	budget = 0.6 * servers;		/* server-seconds per second */
	per_io_avg = (double)cfg->dev.per_io_ns +
		     (double)cfg->dev.per_sector_ns * 64;
	capacity = cfg->dev.depth / per_io_avg;		/* IOs per ns */

	add_groups(cfg, n);
	for (i = 1; i <= n; i++) {
		struct sim_group_cfg *g = &cfg->groups[i];
		u32 kind = (u32)pick(&rng, 0, 3);
		double svc, full_kbps;

		snprintf(g->name, sizeof(g->name), "g%u", i);
		g->weight = pick_weight(&rng);
		g->size_min = (u32)pick(&rng, 1, 128);
		g->size_max = g->size_min;
		svc = (double)cfg->dev.per_io_ns +
		      (double)cfg->dev.per_sector_ns * g->size_min;
		/* KB/s if this group had every server */
		full_kbps = servers * 1e9 / svc * g->size_min / 2.0;
		if (kind == 0 && used < budget) {
			/* reserved and greedy */
			double frac = (double)pick(&rng, 5, 60) / 100.0 *
				      (budget - used);

			g->pattern = SIM_CLOSED;
			g->depth = 2 * io_limit + (u32)pick(&rng, 1, 16);
			g->min_kbps = (u32)(frac / servers * full_kbps) + 1;
			used += frac;
			if (pick(&rng, 0, 2) == 0)
				g->max_kbps = g->min_kbps +
					      (u32)pick(&rng, 0, g->min_kbps);
			continue;
		}
		if (pick(&rng, 0, 1))
			g->size_max = (u32)pick(&rng, g->size_min, 256);
		switch (pick(&rng, 0, 2)) {
		case 0:
			g->pattern = SIM_CLOSED;
			g->depth = (u32)pick(&rng, 1, 2 * io_limit + 2);
			break;
		case 1:
			g->pattern = SIM_OPEN;
			g->poisson = pick(&rng, 0, 1);
			g->interval_ns = (u64)(100.0 /
					       (capacity * pick(&rng, 5, 150)))
					 + 1;
			break;
		default:
			g->pattern = SIM_IDLE;
		}
		if (pick(&rng, 0, 2) == 0) {
			g->on_ns = (u64)(pick(&rng, 10, 2000) / capacity) + 1;
			g->off_ns = (u64)(pick(&rng, 10, 2000) / capacity) + 1;
		}
		if (kind != 1)	/* a cap between 1% and 100% of the device */
			g->max_kbps = (u32)(full_kbps * pick(&rng, 1, 100) /
					    100.0) + 1;
	}
	/* About 4,000 to 12,000 IOs of device time after 400 ms. */
	cfg->warmup_ns = 400000000ULL;
	cfg->duration_ns = cfg->warmup_ns +
			   (u64)(pick(&rng, 4000, 12000) / capacity) + 1;
	gen->check_reservations = true;

	if (pick(&rng, 0, 3) == 0) {
		u32 k, nr = (u32)pick(&rng, 1, 4);

		gen->check_reservations = false;
		cfg->events = calloc(nr, sizeof(*cfg->events));
		if (!cfg->events)
			abort();
		for (k = 0; k < nr; k++) {
			struct sim_event_cfg *ev = &cfg->events[k];
			u64 lo;

			ev->at_ns = cfg->duration_ns * (k + 1) / (nr + 1);
			ev->group = (u32)pick(&rng, 1, n);
			switch (pick(&rng, 0, 4)) {
			case 0:
				ev->kind = SIM_EV_POLICY;
				ev->value = pick(&rng, 0, IOBAND_NR_POLICIES - 1);
				break;
			case 1:
				ev->kind = SIM_EV_PASSTHROUGH;
				ev->value = 1;
				break;
			case 2:
				ev->kind = SIM_EV_DETACH;
				break;
			default:
				ev->kind = SIM_EV_RANGE;
				lo = pick(&rng, 0, 100000);
				ev->value = lo << 32 |
					    (pick(&rng, 0, 1) ? 0 :
					     lo + pick(&rng, 1, 1000000));
			}
		}
		cfg->nr_events = nr;
		for (k = 0; k < nr; k++)
			if (cfg->events[k].kind == SIM_EV_PASSTHROUGH &&
			    k + 1 < nr) {
				cfg->events[k + 1].kind = SIM_EV_PASSTHROUGH;
				cfg->events[k + 1].value = 0;
			}
	}
}

/*
 * A reserved, always-backlogged group gets at least 97% of min over the
 * window, less four of its items (ioband-design.rst section 10).
 */
static void check_reservations(u64 seed, const struct sim_cfg *cfg,
			       const struct sim_result *res)
{
	double secs = (double)(cfg->duration_ns - cfg->warmup_ns) / 1e9;
	u32 i;

	for (i = 1; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *g = &cfg->groups[i];
		double want = 2.0 * g->min_kbps * secs;	/* sectors */
		double got = (double)res->groups[i].sectors;

		if (!g->min_kbps || !res->groups[i].backlogged)
			continue;
		if (got < 0.97 * want - 4.0 * g->size_max) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "group %u: %.0f sectors, reserved %.0f",
				 i, got, want);
			fail(P_RESERVE, seed, msg);
			return;
		}
	}
}

/*
 * The largest cost of one of @g's items that takes a turn (not urgent):
 * what its policy charges its largest, or the most it was charged (@gr),
 * which is all a bound can take under weight-time, whose costs are
 * learnt, or after a live change of policy.
 */
static u64 max_cost(const struct sim_cfg *cfg, const struct sim_group_cfg *g,
		    const struct sim_group_result *gr)
{
	u64 c = g->size_max;

	if (cfg->params.policy == IOBAND_POLICY_WEIGHT)
		c = g->discard_pct ? g->size_max >> 3 : 1;
	if (!c)
		c = 1;
	if (c > IOBAND_MAX_ITEM_COST)
		c = IOBAND_MAX_ITEM_COST;
	return c > gr->max_item_tokens ? c : gr->max_item_tokens;
}

/*
 * Section 2's share bound, when every group stayed backlogged or
 * competing; returns whether it was checked.
 */
static bool check_shares(u64 seed, const struct sim_cfg *cfg,
			 const struct sim_result *res)
{
	u64 total = 0, wsum = 0, csum = 0, dsum = 0;
	u64 token_base = cfg->params.token_base;
	double credit;
	u32 i;

	if (!token_base)
		token_base = cfg->params.policy == IOBAND_POLICY_WEIGHT ?
			     IOBAND_DEFAULT_TOKEN_BASE :
			     IOBAND_DEFAULT_TOKEN_BASE_IOSIZE;
	/* weight-time's token_base is in sector-equivalents, 16 tokens */
	if (cfg->params.policy == IOBAND_POLICY_WEIGHT_TIME)
		token_base <<= IOBAND_TIME_TOKEN_SHIFT;
	/* The return credit, in tokens per unit of weight times W. */
	credit = (double)cfg->params.carryover * token_base;

	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_result *gr = &res->groups[i];

		if (!gr->backlogged)
			return false;	/* not every group stayed backlogged */
		total += gr->tokens;
		wsum += cfg->groups[i].weight;
		csum += max_cost(cfg, &cfg->groups[i], gr);
		dsum += gr->unpaid_start + gr->unpaid_end;
	}
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *g = &cfg->groups[i];
		const struct sim_group_result *gr = &res->groups[i];
		double share = (double)g->weight / wsum;
		double expect = (double)total * share;
		double bound = max_cost(cfg, g, gr) + share * csum +
			       2.0 * credit * share +
			       gr->unpaid_start + gr->unpaid_end +
			       share * dsum + total / 65536.0;
		double dev = (double)gr->tokens - expect;

		if (dev > bound || -dev > bound) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "group %u weight %u: %llu tokens, expected %.1f +- %.1f",
				 i, g->weight, (unsigned long long)gr->tokens,
				 expect, bound);
			fail(P_SHARES, seed, msg);
			break;
		}
	}
	return true;
}

/*
 * A settled window keeps the device MIN_UTILISATION busy; a tick may
 * leave less than its largest IO of each budget unused (null_blk's rule).
 */
static void check_throughput(u64 seed, const struct sim_cfg *cfg,
			     const struct sim_result *res)
{
	double least = MIN_UTILISATION;
	char msg[120];
	u32 i, max_size = 0;

	for (i = 0; i < cfg->nr_groups; i++)
		if (cfg->groups[i].size_max > max_size)
			max_size = cfg->groups[i].size_max;
	if (cfg->dev.budget_bytes)
		least -= (double)max_size * 512 / cfg->dev.budget_bytes;
	if (res->utilisation >= least)
		return;
	snprintf(msg, sizeof(msg), "device %.1f%% utilised, window %llu sectors",
		 100.0 * res->utilisation,
		 (unsigned long long)res->window_sectors);
	fail(P_THROUGHPUT, seed, msg);
}

static bool has_writeback(const struct sim_cfg *cfg)
{
	u32 i;

	for (i = 0; i < cfg->nr_groups; i++)
		if (cfg->groups[i].pattern == SIM_WRITEBACK)
			return true;
	return false;
}

/* The invariants the simulator checks on every event. */
static void check_invariants(u64 seed, const struct sim_result *res)
{
	u32 v;

	for (v = 0; v < SIM_NR_VIOLATIONS; v++)
		if (res->violations[v])
			fail((enum prop)v, seed, res->first_violation);
}

/* PROPTEST_SEED=N, _THROUGHPUT_SEED=N or _RANGE_SEED=N: print one. */
static int replay(const char *var, u64 seed)
{
	struct sim_result res;
	struct sim_cfg *cfg;
	struct range_gen rgen;
	struct gen gen;
	int rc;

	family = var;
	if (!strcmp(var, "PROPTEST_RANGE_SEED")) {
		generate_range(seed, &rgen);
		cfg = &rgen.cfg;
	} else {
		if (!strcmp(var, "PROPTEST_SEED"))
			generate(seed, &gen);
		else
			generate_throughput(seed, &gen);
		cfg = &gen.cfg;
	}
	sim_run(cfg, &res);
	sim_print(stdout, cfg, &res);
	check_invariants(seed, &res);
	if (cfg == &rgen.cfg && rgen.check_reservations)
		check_reservations(seed, cfg, &res);
	if (cfg == &gen.cfg && gen.all_backlogged)
		printf("shares %schecked\n",
		       check_shares(seed, cfg, &res) ? "" : "not ");
	if (!strcmp(var, "PROPTEST_THROUGHPUT_SEED"))
		check_throughput(seed, cfg, &res);
	rc = sim_violations(&res) || failures[P_SHARES] ||
	     failures[P_RESERVE] || failures[P_THROUGHPUT];
	sim_result_free(&res);
	sim_cfg_free(cfg);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const vars[] = {
		"PROPTEST_SEED", "PROPTEST_THROUGHPUT_SEED",
		"PROPTEST_RANGE_SEED",
	};
	u64 seed, ios, checked, ticks, writeback, urgent, waited;
	unsigned int passed = 0, failed = 0, v;
	clock_t t0 = clock(), start = t0;
	int i, p;

	for (v = 0; v < sizeof(vars) / sizeof(vars[0]); v++)
		if (getenv(vars[v]))
			return replay(vars[v],
				      strtoull(getenv(vars[v]), NULL, 0));

	family = "PROPTEST_SEED";
	ios = checked = ticks = writeback = urgent = waited = 0;
	for (seed = 0; seed < NR_SCENARIOS; seed++) {
		struct gen gen;
		struct sim_result res;

		generate(seed, &gen);
		sim_run(&gen.cfg, &res);
		ios += res.dispatches;
		check_invariants(seed, &res);
		if (gen.all_backlogged && check_shares(seed, &gen.cfg, &res))
			checked++;
		ticks += gen.cfg.dev.budget_bytes != 0;
		writeback += has_writeback(&gen.cfg);
		urgent += res.stats.urgent != 0;
		waited += res.stats.idle_waits != 0;
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
	}
	printf("%u random scenarios (PROPTEST_SEED=N replays one), %llu IOs, %.1f s: %llu on the tick model, %llu with writeback, %llu with urgent items, %llu waited for a competing group; shares checked in %llu\n",
	       NR_SCENARIOS, (unsigned long long)ios,
	       (double)(clock() - t0) / CLOCKS_PER_SEC,
	       (unsigned long long)ticks, (unsigned long long)writeback,
	       (unsigned long long)urgent, (unsigned long long)waited,
	       (unsigned long long)checked);

	family = "PROPTEST_THROUGHPUT_SEED";
	t0 = clock();
	ios = checked = 0;
	for (seed = 0; seed < NR_THROUGHPUT_SCENARIOS; seed++) {
		struct gen gen;
		struct sim_result res;

		generate_throughput(seed, &gen);
		sim_run(&gen.cfg, &res);
		ios += res.dispatches;
		check_invariants(seed, &res);
		check_throughput(seed, &gen.cfg, &res);
		if (check_shares(seed, &gen.cfg, &res))
			checked++;
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
	}
	printf("%u deep scenarios (PROPTEST_THROUGHPUT_SEED=N), %llu IOs, shares checked in %llu, %.1f s\n",
	       NR_THROUGHPUT_SCENARIOS, (unsigned long long)ios,
	       (unsigned long long)checked,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);

	family = "PROPTEST_RANGE_SEED";
	t0 = clock();
	ios = checked = 0;
	for (seed = 0; seed < NR_RANGE_SCENARIOS; seed++) {
		struct range_gen gen;
		struct sim_result res;

		generate_range(seed, &gen);
		sim_run(&gen.cfg, &res);
		ios += res.dispatches;
		check_invariants(seed, &res);
		if (gen.check_reservations) {
			checked++;
			check_reservations(seed, &gen.cfg, &res);
		}
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
	}
	printf("%u random range scenarios (PROPTEST_RANGE_SEED=N), %llu IOs, %llu with reservations checked, %.1f s\n",
	       NR_RANGE_SCENARIOS, (unsigned long long)ios,
	       (unsigned long long)checked,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	for (p = 0; p < NR_PROPS; p++) {
		if (failures[p]) {
			failed++;
			printf("FAIL proptest %s (%llu scenarios, first seed %llu)\n",
			       prop_names[p], (unsigned long long)failures[p],
			       (unsigned long long)first_fail_seed[p]);
		} else {
			passed++;
			printf("PASS proptest %s\n", prop_names[p]);
		}
	}

	for (i = 1; i < argc; i++) {
		struct sim_cfg cfg = { 0 };
		struct sim_result res;
		char err[256];
		FILE *f = fopen(argv[i], "r");
		bool ok = false;

		if (f && !sim_parse(f, &cfg, err, sizeof(err))) {
			sim_run(&cfg, &res);
			ok = !sim_violations(&res);
			if (!ok)
				printf("  %s: %s\n", argv[i],
				       res.first_violation);
			if (ok && sim_check_expects(&cfg, &res, err,
						    sizeof(err))) {
				printf("  %s: %s\n", argv[i], err);
				ok = false;
			}
			sim_result_free(&res);
		} else {
			printf("  %s: %s\n", argv[i], f ? err : "cannot open");
		}
		if (f)
			fclose(f);
		sim_cfg_free(&cfg);
		if (ok)
			passed++;
		else
			failed++;
		printf("%s scenario %s\n", ok ? "PASS" : "FAIL", argv[i]);
	}
	printf("proptest and scenarios: %.1f s\n",
	       (double)(clock() - start) / CLOCKS_PER_SEC);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
