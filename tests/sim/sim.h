/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A discrete-event model of dm-ioband in front of a block device, driving
 * the real scheduling core (dm-ioband/ioband-sched.c) exactly as the
 * kernel glue does: submit from map, complete from end_io with the entity
 * the item went down for, the dispatch loop only when the core says there
 * is work (ioband_sched_has_work(), complete()'s result), and otherwise
 * one timer moved to ioband_sched_next_event_ns(), as hrtimer_start()
 * moves it.
 *
 * Two device models. Servers: `depth` servers, an IO occupies one for
 * per_io_ns + per_sector_ns * sectors, IOs beyond depth wait in the
 * device's own FIFO (the lower queue). Tick, null_blk's mbps= cap: a
 * budget of bytes granted every tick_ns; IOs start (and, with per_io 0,
 * complete) at once while it lasts, and one larger than what is left
 * waits with everything behind it for the next tick.
 *
 * Groups generate IOs closed-loop (N outstanding, a think time between a
 * completion and the next submission), open-loop (fixed or Poisson
 * interval), optionally in on/off cycles, or as writeback: a writer
 * dirties pages into a bounded pool at some rate, one flusher submits
 * what is dirty as bios of the group's size, in bursts with gaps, and
 * completions return the pool's space. Any group's IOs may be urgent
 * (metadata: they go down at once and are charged as debt) or sized
 * (discards: charged per 4 KiB under `weight`). Everything is
 * deterministic for a given seed.
 *
 * While running, the model checks the core's invariants (see struct
 * sim_result): the window and io_limit, work conservation (held with
 * room below only while a competing group is waited for, with a timer
 * due at its deadline, or every holder is capped), the pairwise fairness
 * bound of ioband-design.rst section 2, urgent items never held, and that
 * nothing is lost.
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
	SIM_WRITEBACK,		/* a flusher over a bounded dirty pool */
	SIM_IDLE,		/* no IO at all */
};

struct sim_device {
	u64 per_io_ns;
	u64 per_sector_ns;
	/* Writes' costs, when given (write_per_io=, write_per_sector=). */
	u64 write_per_io_ns;
	u64 write_per_sector_ns;
	bool write_per_io_set;
	bool write_per_sector_set;
	u32 depth;
	/*
	 * The tick model, when budget_bytes is set (mbps= sets it as
	 * null_blk does, mbps MiB/s x tick_ns): every tick_ns the device
	 * may start budget_bytes more; the IO that does not fit waits in
	 * the FIFO, with all behind it, for the next tick, as null_blk
	 * stops its queues and requeues it (one larger than a whole budget
	 * starts on a whole one, its excess paid from the ticks after);
	 * the timer stops after a tick with no IO, and restarts with one.
	 */
	u64 budget_bytes;
	u64 tick_ns;
	/*
	 * A disk's head (seek=, stroke=): an IO that does not start where
	 * the previous one ended costs seek_ns more, plus stroke_ns times
	 * its distance over size_sectors. jitter_pct draws each service
	 * time from +-jitter_pct% of its cost. sort: the FIFO is served in
	 * ascending LBA order from the head, wrapping (mq-deadline's sort).
	 */
	u64 seek_ns;
	u64 stroke_ns;
	u64 size_sectors;
	u32 jitter_pct;
	bool sort;
	/*
	 * The stack between ioband and the device: an item reaches the
	 * device lag_ns after it goes down, and ioband hears of its
	 * completion lag_ns after the device finished it (the TCG guests'
	 * block layer takes 20 to 40 us each way).
	 */
	u64 lag_ns;
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
	u32 urgent_pct;		/* IOs marked IOBAND_ITEM_URGENT */
	u32 discard_pct;	/* IOs marked IOBAND_ITEM_SIZED (writes) */
	/* writeback: the pool of dirty and written-back sectors */
	u64 pool_sectors;	/* dirty + under writeback, at most */
	u64 dirty_rate;		/* sectors/s the writer dirties, 0: at once */
	u64 burst_sectors;	/* the flusher's burst, 0 = all that is dirty */
	u64 gap_ns;		/* the flusher's pause after a full burst */
	u32 min_kbps;		/* reservation (range policies), 0 = none */
	u32 max_kbps;		/* limit (range policies), 0 = none */
	int parent;		/* index of the parent group, 0: none */
	/*
	 * Where its IOs go on a device with a head: random within
	 * [offset, offset + span), or sequential through it (seq).
	 */
	bool seq;
	bool region_set;
	u64 offset;		/* sectors, with region_set */
	u64 span;		/* sectors, with region_set */
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

/* At most this many groups in one expected split. */
#define SIM_EXPECT_MAX		16

/*
 * An expected result: the split of sectors or tokens between the groups
 * active in the window, in the order they were declared, each group's
 * share within @within (relative) of its ratio's; or the least device
 * utilisation.
 */
struct sim_expect {
	enum { SIM_EXPECT_SECTORS, SIM_EXPECT_TOKENS, SIM_EXPECT_TIME,
	       SIM_EXPECT_UTILISED } what;
	u32 nr;
	double ratio[SIM_EXPECT_MAX];
	double within;		/* SIM_EXPECT_UTILISED: the least, 0 to 1 */
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
	u32 nr_expects;
	struct sim_expect *expects;
};

/* The invariants the model checks: what breaks one, counted per kind. */
enum sim_violation {
	SIM_OVER_LIMIT,		/* dispatched with io_limit in flight */
	SIM_OVER_WINDOW,	/* dispatched with the window full */
	SIM_NOT_CONSERVING,	/* held with room, nothing waited for */
	SIM_STALLED,		/* held, room below, no timer due in time */
	SIM_UNFAIR,		/* pairwise bound exceeded */
	SIM_URGENT_HELD,	/* an urgent item not sent down at once */
	SIM_LOST,		/* submitted and never completed */
	SIM_ACCOUNTING,		/* queue counters disagree */
	SIM_OVER_CAP,		/* a group above max by more than 2 items */
	SIM_NR_VIOLATIONS
};

/* Their names in ioband-sim's "invariants:" line. */
extern const char *const sim_violation_names[SIM_NR_VIOLATIONS];

struct sim_group_result {
	u64 submitted;
	u64 completed;
	/* Dispatched during the window [warmup_ns, duration_ns). */
	u64 ios;
	u64 sectors;
	u64 tokens;		/* cost charged, urgent debt included */
	u64 device_ns;		/* the device's service time of its ios */
	u64 max_item_tokens;	/* most charged for one (not urgent) */
	u64 urgent;		/* urgent items among ios */
	u64 max_wait_ns;	/* submit to dispatch, whole run */
	u64 reserved;		/* dispatched in the constraint phase */
	/* Largest (sectors - max * time) over any run of dispatches. */
	double max_cap_excess;
	u64 sum_wait_ns;
	u64 waits;
	u32 max_held;		/* most items held at once, whole run */
	/*
	 * Urgent tokens charged since the group's latest other dispatch
	 * (debt not yet paid: section 16), at the window's start and end.
	 */
	u64 unpaid_start;
	u64 unpaid_end;
	/* items held, or competing (waiting), throughout the window */
	bool backlogged;
	bool active;		/* submitted during the window */
};

struct sim_result {
	struct sim_group_result *groups;	/* nr_groups entries */
	u64 window_ns;
	u64 busy_ns;		/* device busy time within the window */
	/*
	 * What the device did in the window against what it could: server
	 * time started over depth x window, or (tick model) bytes started
	 * over the budgets granted, whichever is higher.
	 */
	double utilisation;
	u64 dispatches;
	u64 events;
	u64 tree_steps;
	u64 max_in_flight;
	u64 max_in_flight_sectors;
	/* The window at the end and its largest size, in sectors. */
	u64 window_sectors;
	u64 window_max;
	u64 window_items;	/* the window of weight-time (section 14) */
	u64 window_items_max;
	struct ioband_sched_stats stats;	/* the core's, at the end */
	struct ioband_time_model time_model;	/* the core's, at the end */
	u64 violations[SIM_NR_VIOLATIONS];	/* all must stay 0 */
	u64 timers;		/* times the glue's timer fired */
	double worst_pair_ratio; /* largest |gap| / bound seen */
	char first_violation[160];
};

/* Fills @cfg with one default group and the core's default knobs. */
void sim_cfg_init(struct sim_cfg *cfg);

/*
 * Group @i's region on a device with a head, in sectors: its region=, or
 * by default the 128 MiB at (i - 1) x 256 MiB, where the bench puts its
 * jobs.
 */
void sim_group_region(const struct sim_cfg *cfg, u32 i, u64 *offset,
		      u64 *span);

/* Runs @cfg; @res->groups is allocated here, freed by sim_result_free. */
int sim_run(const struct sim_cfg *cfg, struct sim_result *res);
void sim_result_free(struct sim_result *res);

/* Sum of violation counters. */
u64 sim_violations(const struct sim_result *res);

/*
 * How many of @cfg's expectations @res misses; the first is described in
 * @msg.
 */
u32 sim_check_expects(const struct sim_cfg *cfg, const struct sim_result *res,
		      char *msg, size_t len);

/* The table ioband-sim prints. */
void sim_print(FILE *out, const struct sim_cfg *cfg,
	       const struct sim_result *res);
const char *sim_policy_name(enum ioband_policy policy);

/* Scenario files (format in sim-parse.c). Returns 0 or -1, with a
 * message in @err. Free with sim_cfg_free(). */
int sim_parse(FILE *in, struct sim_cfg *cfg, char *err, size_t err_len);
void sim_cfg_free(struct sim_cfg *cfg);

/* splitmix64: the deterministic generator used everywhere. */
u64 sim_rand(u64 *state);

#endif /* IOBAND_SIM_H */
