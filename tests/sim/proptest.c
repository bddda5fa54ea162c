// SPDX-License-Identifier: GPL-2.0
/*
 * Property test of the scheduling core: NR_SCENARIOS random scenarios,
 * generated from fixed seeds, each run through the simulator, which
 * checks on every event that
 *
 *   - no item is dispatched while io_limit are in flight (passthrough
 *     aside), and nothing is held while fewer than io_limit are in flight
 *     (work conservation);
 *   - for every two groups backlogged over a common interval, the gap
 *     between their normalised services (cost * 2^32 / weight) stays
 *     within 2 * credit + step_f + step_g, the bound of ioband-sched.c
 *     section 3;
 *   - every submitted item completes, and the counters agree;
 *
 * and, for scenarios where every group stays backlogged, that each
 * group's share of tokens is within the absolute bound of section 3:
 *   |tokens_g - T * w_g / W| <= c_g + w_g * sum(c_f) / W
 *                               + 2 * carryover * token_base * w_g / W
 *                               + T * 2^-16
 * (T = tokens dispatched in the window, c = largest cost of one item,
 * W = sum of weights; the credit term is there because a group may enter
 * the window holding return credit, the last term is the rounding of
 * 2^32 / weight).
 *
 * Scenario files given as arguments are replayed and must break no
 * invariant. Prints one PASS/FAIL line per property and per file, then
 * "N passed, N failed".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

#define NR_SCENARIOS	3000
#define NR_RANGE_SCENARIOS	600

enum prop {
	P_LIMIT, P_CONSERVING, P_FAIR, P_LOSS, P_ACCOUNTING, P_SHARES,
	P_CAP, P_STALL, P_RESERVE, NR_PROPS
};

static const char *const prop_names[NR_PROPS] = {
	"io_limit_respected", "work_conserving", "pairwise_fairness_bound",
	"no_item_lost", "counters_agree", "backlogged_shares_within_bound",
	"range_caps_never_exceeded", "range_idle_only_when_all_capped",
	"range_reservations_met_when_feasible",
};

static u64 failures[NR_PROPS];
static u64 first_fail_seed[NR_PROPS];

static u64 pick(u64 *rng, u64 lo, u64 hi)
{
	return lo + sim_rand(rng) % (hi - lo + 1);
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

struct gen {
	struct sim_cfg cfg;
	bool all_backlogged;
};

static void generate(u64 seed, struct gen *gen)
{
	struct sim_cfg *cfg = &gen->cfg;
	u64 rng = seed * 0x2545F4914F6CDD1DULL + 7;
	u32 n, i, io_limit, max_size;
	double per_io_avg, capacity;

	sim_cfg_init(cfg);
	cfg->seed = seed;
	gen->all_backlogged = pick(&rng, 0, 3) == 0;

	n = pick(&rng, 0, 9) ? (u32)pick(&rng, 1, 8) : (u32)pick(&rng, 9, 40);
	cfg->dev.per_io_ns = pick(&rng, 1000, 1000000);
	cfg->dev.per_sector_ns = pick(&rng, 0, 3) ? pick(&rng, 0, 2000) : 0;
	cfg->dev.depth = (u32)pick(&rng, 1, 64);

	cfg->params.policy = pick(&rng, 0, 1) ? IOBAND_POLICY_WEIGHT :
			     IOBAND_POLICY_WEIGHT_IOSIZE;
	io_limit = (u32)pick(&rng, 1, 64);
	cfg->params.io_limit = io_limit;
	cfg->params.io_throttle = (u32)pick(&rng, 1, io_limit);
	cfg->params.token_base = pick(&rng, 0, 2) ? 0 :
				 (u32)pick(&rng, 1, 100000);
	cfg->params.carryover = (u32)pick(&rng, 0, 4);
	if (pick(&rng, 0, 7) == 0)
		cfg->vtime_start = ~0ULL - pick(&rng, 0, 1ULL << 40);

	max_size = pick(&rng, 0, 1) ? 8 : (u32)pick(&rng, 8, 2048);
	cfg->groups = realloc(cfg->groups, (n + 1) * sizeof(*cfg->groups));
	if (!cfg->groups)
		abort();
	memset(cfg->groups + 1, 0, n * sizeof(*cfg->groups));
	cfg->nr_groups = n + 1;
	cfg->groups[0].weight = pick_weight(&rng);
	if (gen->all_backlogged) {
		cfg->groups[0].pattern = SIM_CLOSED;
		cfg->groups[0].depth = io_limit + (u32)pick(&rng, 1, 16);
		cfg->groups[0].size_min = (u32)pick(&rng, 1, max_size);
		cfg->groups[0].size_max = cfg->groups[0].size_min;
	}
	per_io_avg = (double)cfg->dev.per_io_ns +
		     (double)cfg->dev.per_sector_ns * max_size / 2.0;
	capacity = cfg->dev.depth / per_io_avg;	/* IOs per ns */

	for (i = 1; i <= n; i++) {
		struct sim_group_cfg *g = &cfg->groups[i];

		snprintf(g->name, sizeof(g->name), "g%u", i);
		g->weight = pick_weight(&rng);
		g->size_min = (u32)pick(&rng, 1, max_size);
		g->size_max = pick(&rng, 0, 1) ? g->size_min :
			      (u32)pick(&rng, g->size_min, max_size);
		g->write_pct = (u32)pick(&rng, 0, 100);
		if (gen->all_backlogged) {
			g->pattern = SIM_CLOSED;
			g->depth = io_limit + (u32)pick(&rng, 1, 16);
			continue;
		}
		switch (pick(&rng, 0, 3)) {
		case 0:
		case 1:
			g->pattern = SIM_CLOSED;
			g->depth = (u32)pick(&rng, 1, 2 * io_limit + 2);
			if (pick(&rng, 0, 3) == 0)
				g->think_ns = (u64)(pick(&rng, 1, 20) /
						    capacity);
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
		if (pick(&rng, 0, 2) == 0) {
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
				ev->kind = SIM_EV_IO_LIMIT;
				ev->value = pick(&rng, io_limit, 64);
				break;
			case 3:
				ev->kind = SIM_EV_CARRYOVER;
				ev->value = pick(&rng, 0, 4);
				break;
			case 4:
				ev->kind = SIM_EV_POLICY;
				ev->value = pick(&rng, 0, 1);
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

static void fail(enum prop p, u64 seed, const char *detail);

/*
 * A random scenario under range-bw or weight-range. Groups with a
 * reservation are greedy (closed loops deeper than io_limit, fixed
 * size), and the reservations use at most 60% of the device's servers
 * (reservation_feasible); others are random, some capped, some both.
 * Some scenarios add live changes (policy, range, passthrough, detach),
 * which void the reservation check.
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
	cfg->dev.per_io_ns = pick(&rng, 5000, 500000);
	cfg->dev.per_sector_ns = pick(&rng, 0, 1) ? pick(&rng, 0, 500) : 0;
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

	cfg->groups = realloc(cfg->groups, (n + 1) * sizeof(*cfg->groups));
	if (!cfg->groups)
		abort();
	memset(cfg->groups + 1, 0, n * sizeof(*cfg->groups));
	cfg->nr_groups = n + 1;
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
			g->depth = io_limit + (u32)pick(&rng, 1, 16);
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
	/* About 4,000 to 12,000 IOs of device time. */
	cfg->duration_ns = (u64)(pick(&rng, 4000, 12000) / capacity) + 1;
	cfg->warmup_ns = cfg->duration_ns / 10;
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
 * window, less four of its items (ioband-sched.c section 10).
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

static void fail(enum prop p, u64 seed, const char *detail)
{
	if (!failures[p]++) {
		first_fail_seed[p] = seed;
		printf("  %s: first failure, seed %llu: %s\n", prop_names[p],
		       (unsigned long long)seed, detail);
	}
}

static void check_shares(u64 seed, const struct sim_cfg *cfg,
			 const struct sim_result *res)
{
	u64 total = 0, wsum = 0, csum = 0;
	u64 token_base = cfg->params.token_base;
	double credit;
	u32 i;

	if (!token_base)
		token_base = cfg->params.policy == IOBAND_POLICY_WEIGHT ?
			     IOBAND_DEFAULT_TOKEN_BASE :
			     IOBAND_DEFAULT_TOKEN_BASE_IOSIZE;
	/* The return credit, in tokens per unit of weight times W. */
	credit = (double)cfg->params.carryover * token_base;

	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *g = &cfg->groups[i];
		u64 c = cfg->params.policy == IOBAND_POLICY_WEIGHT ? 1 :
			g->size_max;

		if (!res->groups[i].backlogged)
			return;	/* not every group stayed backlogged */
		total += res->groups[i].tokens;
		wsum += g->weight;
		csum += c;
	}
	for (i = 0; i < cfg->nr_groups; i++) {
		const struct sim_group_cfg *g = &cfg->groups[i];
		u64 c = cfg->params.policy == IOBAND_POLICY_WEIGHT ? 1 :
			g->size_max;
		double expect = (double)total * g->weight / wsum;
		double bound = c + (double)g->weight * csum / wsum +
			       2.0 * credit * g->weight / wsum +
			       total / 65536.0;
		double dev = (double)res->groups[i].tokens - expect;

		if (dev > bound || -dev > bound) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "group %u weight %u: %llu tokens, expected %.1f +- %.1f",
				 i, g->weight,
				 (unsigned long long)res->groups[i].tokens,
				 expect, bound);
			fail(P_SHARES, seed, msg);
			return;
		}
	}
}

int main(int argc, char **argv)
{
	u64 seed, ios = 0, shares_checked = 0;
	unsigned int passed = 0, failed = 0;
	clock_t t0 = clock();
	const char *only = getenv("PROPTEST_SEED");
	int i, p;

	if (getenv("PROPTEST_RANGE_SEED")) {
		struct range_gen gen;
		struct sim_result res;
		u64 seed = strtoull(getenv("PROPTEST_RANGE_SEED"), NULL, 0);

		generate_range(seed, &gen);
		sim_run(&gen.cfg, &res);
		sim_print(stdout, &gen.cfg, &res);
		if (gen.check_reservations)
			check_reservations(seed, &gen.cfg, &res);
		i = sim_violations(&res) || failures[P_RESERVE];
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
		return i;
	}
	if (only) {
		/* Replay one scenario and print it: PROPTEST_SEED=N ./proptest */
		struct gen gen;
		struct sim_result res;

		generate(strtoull(only, NULL, 0), &gen);
		sim_run(&gen.cfg, &res);
		sim_print(stdout, &gen.cfg, &res);
		if (gen.all_backlogged)
			check_shares(strtoull(only, NULL, 0), &gen.cfg, &res);
		i = sim_violations(&res) || failures[P_SHARES];
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
		return i;
	}

	for (seed = 0; seed < NR_SCENARIOS; seed++) {
		struct gen gen;
		struct sim_result res;
		const char *why;

		generate(seed, &gen);
		sim_run(&gen.cfg, &res);
		ios += res.dispatches;
		why = res.first_violation;
		if (res.over_limit)
			fail(P_LIMIT, seed, why);
		if (res.not_conserving)
			fail(P_CONSERVING, seed, why);
		if (res.unfair)
			fail(P_FAIR, seed, why);
		if (res.lost)
			fail(P_LOSS, seed, why);
		if (res.accounting)
			fail(P_ACCOUNTING, seed, why);
		if (gen.all_backlogged) {
			shares_checked++;
			check_shares(seed, &gen.cfg, &res);
		}
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
	}
	printf("%u random scenarios, %llu IOs, %llu with every group backlogged, %.1f s\n",
	       NR_SCENARIOS, (unsigned long long)ios,
	       (unsigned long long)shares_checked,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	t0 = clock();
	ios = 0;
	shares_checked = 0;
	for (seed = 0; seed < NR_RANGE_SCENARIOS; seed++) {
		struct range_gen gen;
		struct sim_result res;
		const char *why;

		generate_range(seed, &gen);
		sim_run(&gen.cfg, &res);
		ios += res.dispatches;
		why = res.first_violation;
		if (res.over_limit)
			fail(P_LIMIT, seed, why);
		if (res.not_conserving)
			fail(P_CONSERVING, seed, why);
		if (res.lost)
			fail(P_LOSS, seed, why);
		if (res.accounting)
			fail(P_ACCOUNTING, seed, why);
		if (res.over_cap)
			fail(P_CAP, seed, why);
		if (res.stalled)
			fail(P_STALL, seed, why);
		if (gen.check_reservations) {
			shares_checked++;
			check_reservations(seed, &gen.cfg, &res);
		}
		sim_result_free(&res);
		sim_cfg_free(&gen.cfg);
	}
	printf("%u random range scenarios (PROPTEST_RANGE_SEED=N to replay one), %llu IOs, %llu with reservations checked, %.1f s\n",
	       NR_RANGE_SCENARIOS, (unsigned long long)ios,
	       (unsigned long long)shares_checked,
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
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
