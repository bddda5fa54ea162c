/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A discrete-event model of dm-ioband in front of a block device, driving
 * the real scheduling core (dm-ioband/ioband-sched.c) exactly as the
 * kernel glue does: submit from map, a dispatch loop after every submit
 * and completion, complete from end_io.
 *
 * The device has `depth` servers; an IO occupies one for
 * per_io_ns + per_sector_ns * sectors; IOs beyond depth wait in the
 * device's own FIFO (the lower queue). Groups generate IOs closed-loop
 * (N outstanding, optional think time) or open-loop (fixed or Poisson
 * interval), optionally in on/off cycles. Everything is deterministic for
 * a given seed.
 *
 * While running, the model checks the core's invariants (see struct
 * sim_result): io_limit, work conservation, the pairwise fairness bound
 * of ioband-sched.c section 3, and that nothing is lost.
 */
#ifndef IOBAND_SIM_H
#define IOBAND_SIM_H

#include <stdio.h>
#include "ioband-core.h"
#include "ioband-sched.h"

#define SIM_NAME_MAX		32
/* Pairwise fairness is checked for up to this many groups. */
#define SIM_PAIRWISE_MAX	64

enum sim_pattern {
	SIM_CLOSED,		/* `depth` IOs outstanding */
	SIM_OPEN,		/* one IO every interval_ns */
	SIM_IDLE,		/* no IO at all */
};

struct sim_device {
	u64 per_io_ns;
	u64 per_sector_ns;
	u32 depth;
	/*
	 * null_blk's mbps= cap, when mbps is set: every tick_ns the
	 * device may start mbps MiB/s x tick_ns more; an IO that does not
	 * fit waits in the FIFO for the next tick, as null_blk requeues it.
	 */
	u64 mbps;
	u64 tick_ns;
};

struct sim_group_cfg {
	char name[SIM_NAME_MAX];
	u32 weight;
	enum sim_pattern pattern;
	u32 depth;		/* closed loop */
	u64 think_ns;		/* closed loop: pause after a completion */
	u64 interval_ns;	/* open loop */
	bool poisson;		/* open loop: exponential intervals */
	u64 on_ns;		/* with off_ns: on/off cycles from start_ns */
	u64 off_ns;
	u64 start_ns;
	u64 stop_ns;		/* 0: until the end of the run */
	u32 size_min;		/* sectors, uniform in [min, max] */
	u32 size_max;
	u32 write_pct;
	u32 min_kbps;		/* reservation (range policies), 0 = none */
	u32 max_kbps;		/* limit (range policies), 0 = none */
};

enum sim_event_kind {
	SIM_EV_WEIGHT,		/* group, value = weight */
	SIM_EV_DETACH,		/* group: its IOs go to group 0 from now on */
	SIM_EV_PASSTHROUGH,	/* value = 0 or 1 */
	SIM_EV_POLICY,		/* value = enum ioband_policy */
	SIM_EV_IO_LIMIT,
	SIM_EV_IO_THROTTLE,
	SIM_EV_TOKEN_BASE,
	SIM_EV_CARRYOVER,
	SIM_EV_RANGE,		/* group, value = min << 32 | max (KB/s) */
};

struct sim_event_cfg {
	u64 at_ns;
	enum sim_event_kind kind;
	u32 group;
	u64 value;
};

struct sim_cfg {
	struct sim_device dev;
	struct ioband_sched_params params;
	u64 duration_ns;	/* arrivals stop here; then the run drains */
	u64 warmup_ns;		/* shares are counted from here */
	u64 seed;
	u32 nr_groups;		/* group 0 is the default group */
	struct sim_group_cfg *groups;
	u32 nr_events;
	struct sim_event_cfg *events;	/* sorted by at_ns */
	u64 vtime_start;	/* initial virtual time (wrap tests) */
};

struct sim_group_result {
	u64 submitted;
	u64 completed;
	/* Dispatched during the window [warmup_ns, duration_ns). */
	u64 ios;
	u64 sectors;
	u64 tokens;		/* cost charged, by the final policy */
	u64 max_wait_ns;	/* submit to dispatch, whole run */
	u64 reserved;		/* dispatched in the constraint phase */
	/* Largest (sectors - max * time) over any run of dispatches. */
	double max_cap_excess;
	u64 sum_wait_ns;
	u64 waits;
	bool backlogged;	/* queue never empty during the window */
	bool active;		/* submitted during the window */
};

struct sim_result {
	struct sim_group_result *groups;	/* nr_groups entries */
	u64 window_ns;
	u64 busy_ns;		/* device busy time within the window */
	u64 dispatches;
	u64 events;
	u64 tree_steps;
	u64 max_in_flight;
	/* Invariant violations: all must be 0. */
	u64 over_limit;		/* dispatched with io_limit in flight */
	u64 not_conserving;	/* held, under io_limit, nothing dispatched */
	u64 lost;		/* submitted and never completed */
	u64 unfair;		/* pairwise bound exceeded */
	u64 accounting;		/* queue counters disagree */
	u64 over_cap;		/* a group above max by more than 2 items */
	u64 stalled;		/* held, room below, nothing to wake us */
	u64 timers;		/* times the glue's timer fired */
	double worst_pair_ratio; /* largest |gap| / bound seen */
	char first_violation[160];
};

/* Fills @cfg with one default group and the core's default knobs. */
void sim_cfg_init(struct sim_cfg *cfg);

/* Runs @cfg; @res->groups is allocated here, freed by sim_result_free. */
int sim_run(const struct sim_cfg *cfg, struct sim_result *res);
void sim_result_free(struct sim_result *res);

/* Sum of violation counters. */
u64 sim_violations(const struct sim_result *res);

/* The table ioband-sim prints. */
void sim_print(FILE *out, const struct sim_cfg *cfg,
	       const struct sim_result *res);
const char *sim_policy_name(enum ioband_policy policy);

/* Scenario files (format in ioband-sim.c). Returns 0 or -1, with a
 * message in @err. Free with sim_cfg_free(). */
int sim_parse(FILE *in, struct sim_cfg *cfg, char *err, size_t err_len);
void sim_cfg_free(struct sim_cfg *cfg);

/* splitmix64: the deterministic generator used everywhere. */
u64 sim_rand(u64 *state);

#endif /* IOBAND_SIM_H */
