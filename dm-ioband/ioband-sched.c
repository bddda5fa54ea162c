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
 * of the device's speed: we see only submissions and completions, which
 * is enough to measure it (section 14).
 *
 * The original dm-ioband gave each group tokens every epoch and scanned
 * the groups for the richest one. Its shares held only under saturation
 * (a new epoch started whenever the device ran short), carried-over
 * tokens let returning groups burst, small weights rounded to zero tokens
 * and the scan was linear. This file keeps its knobs and their meaning,
 * but schedules with start-time fair queuing over a window of D in
 * flight: SFQ(D) (Jin, Chase and Kaur, SIGMETRICS 2004), with one start
 * tag per group rather than per bio. D is not a count of bios: it is the
 * sectors that keep the device busy, measured from its completions
 * (section 14), so that the backlog forms here, where the weights act,
 * and not in the device's queue. Groups that submit in bursts stay
 * competing for a moment after their last bio (section 15), what
 * everyone waits for never waits here (section 16), and a group's
 * flusher waits for its own writeback rather than park it all here
 * (section 17).
 *
 * 1. Tokens, tags and virtual time
 *
 * A token is the unit of cost: one per IO under `weight`, one per sector
 * under `weight-iosize` (an empty bio costs one; one bio is charged at
 * most IOBAND_MAX_ITEM_COST = 2^20 sectors, so that a 2^32-sector discard
 * neither overflows a tag nor freezes its group for hours). Discards,
 * write-zeroes and secure erases are charged by the size they cover under
 * `weight` too, one token per 4 KiB: one bio of them can ask the device
 * for as much work as hundreds of writes.
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
 * long as the window has room (section 14). The group's S then
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
 *   io_limit	a cap on the bios in flight below us, on top of the
 *		window of section 14; 0 (the default) sets none, and the
 *		window alone decides. An explicit cap only ever lowers D:
 *		it is for a device whose queue is known to be shallower
 *		than the window would grow. Unlike dm-ioband it bounds
 *		only what is in flight: map sleeps for no group's limit
 *		on held bios but writeback's own (section 17), so what is
 *		held is otherwise bounded by the submitters themselves.
 *   io_throttle	dm-ioband started an epoch early when fewer than this
 *		were in flight, to keep the device busy. SFQ(D) needs no
 *		such trigger: it dispatches whenever the window has room,
 *		and the window is sized to keep the device busy. Validated
 *		(<= io_limit when io_limit is set) and reported only.
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
 * (D + 1) (c_f / w_f + c_g / w_g) + 2 C, with D the items the window
 * holds (its sectors over the smallest item's, plus the one item that
 * may overshoot it): hence a window no larger than keeps the device
 * busy (section 14). The device's own reordering below us cannot be
 * undone; D bounds it.
 *
 * "Backlogged" here includes a group that is still competing (section
 * 15): its queue ran empty less than IOBAND_IDLE_NS ago and it keeps its
 * place at its next start tag, so a closed-loop submitter with a few IOs
 * outstanding is treated as backlogged between its bios, and the bounds
 * above hold for it at any queue depth.
 *
 * The scheduler is work-conserving but for that: while anything is held
 * and the window has room, an item goes down now (submit sends it, or
 * the caller's dispatch loop takes it from ioband_sched_next()), unless
 * the next turn is a competing group's, which is waited for at most
 * IOBAND_IDLE_NS after its last submission or completion. An idle
 * group's share then goes to the others: V is driven by whoever is
 * dispatched, so nobody waits long for an absent group.
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
 *		FIFO), or goes down at once and stays leftmost; O(log n)
 *		if it becomes backlogged or competing (insert).
 *   next	O(1) to find the minimum; past competing groups that
 *		have nothing queued, at most IOBAND_WAIT_SKIP (8) steps
 *		more (section 15). O(1) again if the group stays leftmost
 *		after its tag moves (a heavy group's run); else an erase
 *		and an insert, O(log n) in the worst case.
 *   complete	O(1) for the window (a period's end adds a pass over
 *		IOBAND_WINDOW_RATE_PERIODS rates and
 *		IOBAND_WINDOW_SIZE_CLASSES size classes and three 64-step
 *		divisions, every 50 ms); O(log n) when the group starts
 *		competing again (insert).
 *   weight, knobs	O(1), plus a 64-step division for the credit.
 *   detach	O(log n) plus O(1) to splice the FIFO onto the heir.
 *
 * n counts backlogged and competing groups only. Measured
 * (tests/unit/sched, with 9 or with 1 IO outstanding per group): 7 tree
 * steps per dispatch on average with 10 groups, 17.5 with 10,000, at
 * most 32. Per bio, the caller embeds 32 bytes; per group, 264
 * (88 before the range policies: section 12).
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
 * means send the bio down now. The dispatch loop (a worker, which
 * submit and end_io kick) calls ioband_sched_next() until it returns
 * NULL; end_io calls
 * ioband_sched_complete() with the item's entity, whose result says
 * whether the loop should run. Every item that went down (by submit or
 * next) is completed exactly once, with the entity it went down for; a
 * detached group's entity must live until its last item completes.
 * Before it submits an async write that a group's own flusher sends, the
 * glue asks ioband_sched_writeback_full() whether the group holds its
 * share of writeback, and if so lets the flusher wait (section 17).
 * Presuspend drains its target's groups (ioband_sched_drain()) and sends
 * that target's later bios down as urgent until it resumes. Passthrough,
 * which sends every held item down regardless of the window and every
 * new one at once, uncharged, drains a whole domain: the simulator's
 * suspend uses it, the glue suspends one target at a time.
 * submit, next and complete take now_ns, monotonic nanoseconds
 * (ktime_get_ns()): the window and the competing groups run on it, and
 * so do the range policies; the glue keeps one timer (section 13).
 *
 * 8. Range policies: reservation, limit and share tags
 *
 * `range-bw` gives each group a minimum and a maximum in KB/s (dm-ioband's
 * meaning: at least min while it asks for it, never more than max, what
 * is left shared equally); `weight-range` adds the weight: first each
 * group's reservation, never above its limit, the capacity left split by
 * weight. Both are mClock (Gulati, Merchant and Varman, OSDI 2010) as
 * dmClock runs it, with the SFQ tag of sections 1 to 6 as the share tag,
 * so that weights still need no model of the device's capacity. Cost is
 * in sectors (an empty bio costs one, one bio at most 2^20), and
 * 1 KB/s is 2 sectors per second. Each backlogged group has three tags:
 *
 *	R  reservation, in ns of real time: when its next item is due
 *	   under its min. Advances by c * 10^9 / (2 min) per item served
 *	   in the constraint phase, and only then.
 *	L  limit, in ns: the group may be served from L on. Advances by
 *	   c * 10^9 / (2 max) per item served in either phase.
 *	S  share, in virtual time: SFQ's start tag, advanced by c * 2^32 / w
 *	   per item served in the weight phase, and only then (range-bw
 *	   uses w = 100 for every group: equal shares of what is left).
 *
 * The rates are precomputed when a range is set, as ns per sector
 * << 12 (a 64-step division; the IO path multiplies and shifts), rounded
 * down for R and up for L, so rounding never breaks a cap or a
 * reservation by more than one part in 2^12 / (ns per sector), under
 * 1 ppm for any rate below 500 MB/s.
 *
 * 9. Two phases, and the cap
 *
 * At each dispatch decision, at time now and with room below:
 *
 *  a. groups held back by their max whose L is due (L <= now) come back;
 *  b. constraint phase: if the smallest R among groups with a
 *     reservation is due (R <= now), that group goes, and R += c / r;
 *  c. weight phase: otherwise the group with the smallest S among groups
 *     not over their max goes, SFQ as in section 1; its R is left alone
 *     (dmClock subtracts c / r from its R tags: the same thing), so
 *     weight-phase service never eats into a reservation;
 *  d. after either, L = max(L + c / l, now - B) with B =
 *     IOBAND_RANGE_LIMIT_BURST_NS = 20 ms; a group with L > now leaves
 *     both phases until then.
 *
 * Cap: a group is served only while L <= now, and every item moves L by
 * c / l, from no earlier than now - B. Summing over the items it is
 * served between t0 and t1 gives
 *
 *	sectors(t0, t1)  <=  max * (t1 - t0 + B) + 2 items
 *
 * (one item at each end of the window). B forgives lateness: a group
 * whose L came due while every slot below was busy gets the time back,
 * up to B, so a capped group holds its max (to 0.1% in the simulator)
 * rather than losing the wait for a completion on every item; without
 * it, a device that completes in batches served a 20% cap at 12.5%.
 * B is 20 ms because devices batch that coarsely: null_blk's mbps cap
 * serves each 20 ms budget in one burst, and with B = 2 ms a capped
 * group beside a greedy one got half its max there (measured in the
 * guest); over a second, B lets a group exceed its max by 2%.
 * Only limits leave the device idle: when every group holding items is
 * over its max, next() returns NULL with room below, and
 * ioband_sched_next_event_ns() gives the earliest L.
 *
 * 10. Why reservations are met, and what if they cannot be
 *
 * Groups with a due R go before anything else. While the device serves
 * at least sum(min) and a group keeps items queued (and min <= max, which
 * set_range enforces), its R is due at most one dispatch decision after
 * real time reaches it, so over any interval T it is served at least
 * min * T - one item - the wait for one free slot: its reservation. The
 * rest of the capacity goes to the weight phase and splits by weight
 * (range-bw: equally) among the groups under their max: reservation +
 * share of the leftover, which is what weight-range promises.
 *
 * Over-subscribed (the device delivers C < sum(min)): the constraint
 * phase takes every slot, always serving the smallest R. Every R then
 * advances only by c / r_g per item, so the R tags stay within one item
 * of each other and each group gets C * min_g / sum(min): reservations
 * degrade proportionally, never by arrival order; groups without a
 * reservation get nothing until the reservations fit again (mClock's
 * choice: reservations first). The R tags fall behind real time; lest
 * they fall behind without bound (and a group then catch up for as long
 * as the overload lasted, starving the weight phase), whenever the
 * smallest R is more than IOBAND_RANGE_MAX_LAG_NS = 100 ms behind now,
 * every R moves forward by the excess. The rtree keys are R - r_shift,
 * so this is one addition to r_shift, order kept: proportionality holds,
 * and once the reservations fit again each group catches up at most
 * 100 ms of its reservation (the simulator: 27 of 40 MB at most).
 *
 * 11. Idle and returning groups
 *
 * No credit in real time: a group that becomes backlogged, or comes back
 * from over its max, takes R = max(R, floor), with floor = now, or the
 * smallest R of the groups already waiting if that is behind now (so
 * that in an overload a newcomer joins the others rather than waiting
 * 100 ms behind them), and L as it stands (an idle group's L is in the
 * past: it may go at once, with at most B of burst). A synchronous
 * reader that empties its queue between IOs keeps R (still ahead of
 * now) and its place; S returns as in section 3. A range change resets
 * the group's R and L to the latest now; a policy switch between a
 * weight and a range policy takes every backlogged group out of its
 * trees and puts it back under the new policy, S kept.
 *
 * 12. Cost
 *
 * Three trees threaded through the entities: ptree by S (groups under
 * their max), rtree by R - r_shift (those of them with a reservation),
 * ltree by L (groups over their max). The weight policies use ptree
 * alone and their path is unchanged (one comparison more per call). A
 * range dispatch erases and inserts the group in ptree and rtree, or
 * moves it to ltree: O(log n); a group coming back from ltree is one
 * more erase and insert, paid once per time it went over. Measured
 * (tests/unit/sched, half the groups reserved, a quarter capped): 8
 * tree steps per dispatch with 10 groups, 36 with 10,000. No division
 * on the IO path; set_range does two 64-step divisions. A policy switch
 * between weight and range is O(n log n), once. Per group, 136 bytes
 * more (224 in all before the window's per-group counts of section 15).
 *
 * 13. The caller, for the range policies
 *
 * The glue arms one timer (an hrtimer on CLOCK_MONOTONIC, the clock of
 * now_ns) at ioband_sched_next_event_ns() whenever that is not 0,
 * after its dispatch loop and after a submit or a completion that did
 * not kick the loop; re-arming moves it, since the value is always the
 * earliest. When the timer fires it runs the dispatch loop. The value is
 * 0 when nothing is held back by a max or by a competing group, and also
 * while the window is full: a completion comes first and reruns the
 * loop, which re-arms. Reservation tags need no timer: a group with a
 * due R is also in the weight phase's tree, so there is work whenever
 * there is room. The weight policies use the same timer for the end of a
 * competing group's wait (section 15).
 *
 * 14. The window
 *
 * SFQ(D) leaves D open, and D decides everything: a backlog must form
 * above the window for the weights to act, yet the window must keep the
 * device busy. Counted in bios (dm-ioband's io_limit, 32), it did
 * neither: a moderate load (16 IOs per group) or writeback's few large
 * bios never filled it, so nothing was held and the queue formed below
 * us, in the device's tags, the writeback throttle or the page cache;
 * 800:100 came out 1.11:1 at 16 outstanding per group. So D is measured
 * in sectors and sized from what the device does, as TCP BBR sizes a
 * congestion window: the bandwidth-delay product.
 *
 *	window = IOBAND_WINDOW_GAIN * rate * min_lat
 *
 * rate is the best of the last IOBAND_WINDOW_RATE_PERIODS (8) rates, each
 * the sectors completed over a period of IOBAND_WINDOW_PERIOD_NS (50 ms);
 * min_lat the latency of the load with no queue below: the least latency
 * (dispatch to completion) of each size class of items (sectors by powers
 * of two), each renewed from the latest period if no item of its class
 * was that fast for 10 s, averaged over the items completed in the latest
 * period. By Little's law the items that keep the device busy are each
 * class's item rate times its latency, summed: the servers a parallel
 * device keeps busy, about one for a device that serves one IO at a
 * time at its rate; rate * min_lat is that many items of the load's mean
 * size, in sectors. One least latency over all items would not do when
 * latency grows with size: beside 6 KiB bios taking 266 us, 200 KiB ones
 * taking 1 ms made a window smaller than one of them; with one in flight
 * the rate, and so the window, never grew (a 54-server device 2.5%
 * utilised in the simulator). Weighting by sectors would not do either:
 * a 1 MiB discard through a 16 MiB/s cap takes 62 ms, and counted by its
 * sectors it made the window hold a 4 KiB reader's whole queue (the
 * reader got 1/17 of its share). What it costs: when the items in flight
 * are larger on average than those completing (the large ones take
 * longer), part of the gain goes to them; one such mix settled with 42
 * servers 93% busy (a 48-sector item in 323 us, a 754-sector one in
 * 1.3 ms). The gain of 2 keeps the device busy through jitter and lets
 * the window probe: while more in flight raises the rate, each period
 * that a full window completes may double it, and once the rate stops
 * rising the extra only queues in the device, so the window stops
 * growing. It then stays within twice what keeps the device busy,
 * whatever the depth of the load above. The window is clamped to
 * [IOBAND_WINDOW_MIN_SECTORS, IOBAND_WINDOW_MAX_SECTORS], 8 KiB to
 * 64 MiB, and starts at the floor: a fast device reaches its full window
 * within a few periods (from 8 KiB to 1 MiB in 7 doublings), a device
 * that slows down is followed within 400 ms as its fast periods age out.
 * One item always goes down when nothing is in flight, whatever its
 * size, and an item may overshoot the window by itself: the window never
 * stalls on a bio larger than it.
 *
 * Some devices complete at once when they can and not at all when they
 * cannot: null_blk's mbps= cap serves each 20 ms budget as it comes and
 * then nothing until the next tick, so min_lat is microseconds and the
 * window stays at its floor. That is right: two 4 KiB IOs in flight keep
 * such a device at its cap (measured, 16 MiB/s in a TCG guest, at 100%
 * of dm-linear's throughput), and the backlog stays here.
 *
 * Other devices complete every bio in the task that sends it down,
 * before its submission returns: brd, zram, a null_blk without a cap.
 * They have no queue. What is in flight below us there is only what the
 * submitting tasks have not yet flushed from their plugs, and an IO costs
 * its submitter's CPU time, not the device's. A backlog held here cannot
 * make such a device serve one group before another; it can only idle the
 * CPU that would have served it, and make a worker's wake-up of every
 * window's worth (8 groups behind a two-bio window on an uncapped null_blk
 * in a 2-vCPU TCG guest got about half of dm-linear's IOPS). So the glue
 * marks an item that completed in the task that dispatched it
 * (IOBAND_ITEM_COMPLETED_INLINE; not a poller's own bios, which waited in
 * the device's queue). Once every item of a whole period completed so
 * (of more periods in a row, below), and as long as every one does
 * (window.completes_inline), the window is open, and no group waits
 * (section 15). While nothing is held either and nothing caps (no
 * io_limit, not a range policy: ioband_sched_lets_all_through()), the
 * glue sends each bio down past the scheduler, with no lock taken: it
 * counts the bio for its group per CPU and, at its completion, checks
 * that it completed inline. The tags do not move, and neither the window
 * nor the group's service time (the stats' open_ios) measures anything
 * meanwhile; the shares are those of the CPU scheduler
 * (cpu.weight), as without us. Under io_limit or a range policy the items
 * still go through the scheduler, and the window is
 * IOBAND_INLINE_MAX_SECTORS (4 MiB, or the window if larger), which such
 * a device never fills: nothing is held but beyond that, for io_limit and
 * for the max. One item completed otherwise (from an interrupt, or by
 * another task) closes the window at once: a device that turns from
 * inline to queueing gets past the weights what it takes before its
 * first such completion, at most 4 MiB through the scheduler and at most
 * its own queue (nr_requests bios) past it. A group that was waiting
 * when the window opened stops waiting at its next bio or when it is
 * found first in line, whichever comes first.
 *
 * A device with a queue can look inline for a while. A null_blk with
 * mbps= completes each request at once while its 20 ms budget lasts and
 * the rest from its timer; fed at its rate by the window itself, it
 * completes whole periods inline, so a window that opened again after
 * one such period opened every few periods, 4 MiB past the weights each
 * time (seed004 under weight-iosize split 1.75:1 for 2:1). So it opens
 * only after window.inline_periods whole periods in a row completed
 * inline: one before the first close, and 2^6 times as many after each
 * close (IOBAND_INLINE_BACKOFF_SHIFT), 3.2 s, then 3.4 min, then at most
 * 3.6 h. Such a device gets its 4 MiB past the weights a few times in
 * its life, not every second; one that completes inline never closes
 * the window and is never held back by the backoff.
 *
 * Costs. Every dispatch and completion adds and subtracts sectors, and a
 * completion counts its item in its size class; a period's end, every
 * 50 ms, takes the maximum of eight rates, sums twelve classes and makes
 * three 64-step divisions. A bio that goes down past the scheduler while
 * the window is open costs a group lookup (mostly this CPU's last answer
 * for its cgroup) and two per-CPU additions, and its completion a test
 * that it was inline: no lock, no shared write, no clock read, and no
 * call but dm's for the per-bio data and blk-cgroup's for the bio's
 * cgroup. Its group is not held for it: detached meanwhile, it is freed
 * after a grace period, which waits for the lookup and the count, done
 * with preemption disabled (rcu_read_lock() would be two calls on a
 * preemptible kernel), and the bio was counted already.
 * Fairness: D in section 2 is the window over the smallest item, plus
 * one. Latency: an urgent or a newcomer's bio waits behind at most a
 * window, about twice the device's unloaded latency.
 * io_limit, when set, caps the bios in flight as well.
 *
 * 15. Competing groups
 *
 * A closed-loop submitter with a few IOs outstanding (fio at iodepth 4,
 * a database, a flusher between bursts) empties its queue each time its
 * bios go down, and its next bio comes only after a completion. Strict
 * SFQ would then hand the free slot to whoever else holds bios, and the
 * shares would follow the depths, not the weights: at 4 IOs outstanding
 * per group, 800:100 came out as 1:1. So a group whose queue runs empty
 * stays in the tree at its next start tag, "waiting", and while it is
 * the group with the smallest tag the dispatcher sends nothing else: it
 * waits for that group's next bio, as BFQ idles for its in-service
 * queue. The wait is bounded: a waiting group stops competing (leaves
 * the tree, keeping F) once IOBAND_IDLE_NS (2 ms) has passed since its
 * latest submission or completion, and the glue's timer wakes the
 * dispatcher then. A completion of one of its bios makes an idle group
 * wait again: it is why a closed-loop submitter comes back.
 *
 * Only groups whose bios have tended to come within IOBAND_IDLE_NS of
 * their previous event wait at all: the mean gap before a bio that finds
 * the group's queue empty is kept per group (over about eight, each
 * counted at most 8 ms; a group's first bio counts 0), and a group whose
 * mean exceeds 2 ms never makes the others wait. A reader that thinks
 * for 3 ms between IOs therefore costs nothing; one that comes back
 * within 2 ms gets its share. Nor does a group wait whose mean gap is
 * over IOBAND_WAIT_LATENCIES (2) of the device's mean latency in the
 * latest period: waiting for it would idle the device for more IOs than
 * the group gets back. A disk (8 ms an IO) and null_blk's mbps= cap
 * (hundreds of microseconds on average) wait for a reader that comes
 * back within tens of microseconds; a device that completes in 10 us
 * does not wait for one that thinks 100 us, nor does a device faster
 * than the CPU that feeds it, whose submitters' gaps are those of the
 * CPU's scheduler.
 *
 * Waiting is only worth it when what the others would get is taken from
 * the waiting group: when the device queues our bios. A device with
 * parallelism to spare (an SSD with 8 of its 32 channels busy) serves
 * the others without slowing the waiting group, and waiting for it there
 * only idles the device (in the simulator: a one-IO reader beside a deep
 * writer held the device to 12,000 of its 80,000 IOPS, for no gain to
 * the reader). So the window also measures how much the device queues:
 * over each period, the latency of the completed items over the least
 * latency of their size class (window.queueing, x 256). While that is
 * below IOBAND_NO_QUEUEING (1.25), the dispatcher may pass a waiting
 * group, leaving room in the window for what the group recently had in
 * flight and held (its peak, which forgets an eighth per completion),
 * and send the next backlogged group in tag order, looking past at most
 * IOBAND_WAIT_SKIP waiting groups. Otherwise (and before the first
 * period) it waits. A group passed over keeps its tag, but comes back no
 * further behind V than an idle group would: V - credit. On null_blk's
 * mbps= cap, which completes at once or after the next 20 ms tick, the
 * ratio is far above 1.25 and the dispatcher always waits, as it does on
 * a device that serves one IO at a time (one in service, one behind it:
 * 1.5). A parallel device whose latency jitters by more than a quarter
 * of its best is taken to queue: fairness first. The simulated
 * tick device then splits 800:100 at 8.00:1 at 4, 16, 64 and 256 IOs
 * outstanding per group.
 *
 * Cost in idle time: at most IOBAND_IDLE_NS per submission or
 * completion of a waiting group, and only while it is the next in line,
 * the window has room and the device queues our bios; after that the
 * scheduler is work-conserving again. A group that leaves for good costs
 * the others 2 ms once. A device slower than 2 ms per IO at depth one
 * (a disk seeking) lets a waiting reader's wait end while its IO is in
 * flight: there the weights hold only for groups that keep more than one
 * IO outstanding. The range policies do not wait: their tags run on
 * real time.
 *
 * Where it cost: a device faster than the CPU that feeds it. On an
 * uncapped null_blk in a 2-vCPU TCG guest, two groups at 1 x 32 got 25%
 * of dm-linear's IOPS while they waited for each other's fio threads to
 * get a CPU, and 61-76% with the latency bound above: the waits cost CPU
 * there (a timer and a worker's wake-up each), not device time. Waiting
 * only after bios found the window full took them away there, but also
 * from the case waiting exists for (two groups with one IO outstanding
 * each, on a device that serves one at a time, split 1:1 instead of 8:1).
 * The signal that tells the two apart is the one of section 14: such a
 * null_blk completes every bio in the task that sends it down, and a
 * device that serves one at a time does not. With it, nobody waits and
 * nothing is held there: 8 groups got 88.8% of dm-linear's IOPS on 6.1
 * and 77.5% on 6.12 (medians of six pairs in one boot) where they got
 * 46.4% and 39.1% held behind the window at its floor, and two groups at
 * 1 x 32 81.3% and 72.1% against 73.6% and 63.1%
 * (bench/results/inline-completion.md, with the ranges).
 *
 * The rest was the path itself. A profile then (perf in the guest, two
 * groups at 1 x 32) put ioband at 10% of the samples: spinning for the
 * domain's lock, which every submission and completion took from both
 * vCPUs, 2.7%; the group's lookup 1.4%; map's and end_io's own code 1.9%;
 * the core's submit and complete 1.5%; the clock 0.9%. With the window
 * open, a bio now goes down past the scheduler (section 14), as iocost
 * lets a bio within its group's budget go with an atomic add: no lock, no
 * clock, and mostly the group of this CPU's last answer for its cgroup.
 * Measured the same way (bench/run-overhead --profile, in
 * bench/results/profile.md), ioband's own functions now cost 0.65 us of
 * CPU an IO on 6.1 and 0.35 us on 6.12, 3% and 2% of what an IO takes
 * in this guest. Its IOs there still took 4% and 12% more CPU than
 * dm-linear's, most of it outside ioband's code: fio's own code, which
 * ioband does not touch, took 5% and 12% more per IO. Counted in
 * instructions instead, which depend neither on the host nor on how fast
 * TCG runs them (bench/run-overhead --icount, QEMU counting them:
 * bench/results/icount.md), an IO through ioband ran 303 more than
 * through dm-linear on 6.1 and 290 more on 6.12, 2.6% and 2.4%
 * (icount-f574ec7.md), and with the lookup inline and no rcu_read_lock()
 * (above) 222 and 266 more, 1.9% and 2.2%: 187 and 186 in ioband's
 * functions, the rest in dm's for a target with per-bio data, an end_io
 * and a largest IO. fio runs the same instructions an IO through both.
 * Yet in the counted runs at dacb84d ioband got only 88% and 91% of
 * dm-linear's reads, for 2.4% and 2.5% more instructions: TCG spent more
 * host time on each guest instruction in ioband's runs (in the profile's
 * runs, QEMU had the same host CPU for both devices, and the guest the
 * same interrupts). Where shows on the host, with a QEMU that names the
 * guest code of each block it translated (bench/run-overhead
 * --host-profile: Debian 13's QEMU with -perfmap, in
 * bench/results/host-profile.md). The largest part is QEMU finding the
 * next translated block where it could not chain one to the next, at a
 * return, an indirect call or a jump to another page: 0.36 us more an IO
 * on 6.1 and 0.63 us on 6.12, more than ioband's own code takes (0.21 and
 * 0.19 us). A bio through ioband takes more such jumps: dm calls ioband's
 * map and end_io through pointers (dm-linear has no end_io, and 6.12
 * calls linear_map() directly), and every call out of ioband's code
 * returns through a lookup. A CPU predicts such jumps in a few cycles.
 * Against that, runs of one device differ by up to 21% there, on the
 * host's side as much as in the guest's code.
 *
 * 16. What nobody may wait for, and what costs by size
 *
 * Some bios hold up everyone: metadata (REQ_META, REQ_PRIO), swap
 * (REQ_SWAP), the journal's commits. Held behind a tenant's backlog,
 * one group's throttled data would stall another's fsync, or reclaim.
 * The glue marks them IOBAND_ITEM_URGENT (blk-cgroup's
 * bio_issue_as_root_blkg() names the same, and iocost issues them as
 * debt too). An urgent item goes down at once, whatever the window, is
 * counted in flight like any other, and is charged to its group as
 * debt: the group's tag moves on by the item's cost, so that its next
 * items start that much later. A backlogged group's S moves; an idle
 * group's F, from where it would start again; never beyond V +
 * IOBAND_MAX_CREDIT (tags must stay comparable). V does not move: the
 * urgent item took no turn. Debt is paid from the group's later bios
 * only; a group that issues nothing but urgent bios is never slowed.
 * Under the range policies the debt moves the share tag only: an urgent
 * item is not charged against the group's reservation or its limit.
 *
 * 17. Backpressure on writeback
 *
 * Held writeback is counted by the page cache's dirty throttling
 * (balance_dirty_pages() weighs dirty plus writeback pages against the
 * dirty limit, each cgroup's writeback against its share of the
 * completions), but background writeback starts and stops on dirty
 * pages alone (over dirty_background_bytes in all, or a cgroup's share
 * of it). Accepting every writeback bio turned the light groups' pages
 * into writeback held here, most of the dirty limit ended up there, the
 * dirty pages in all fell below the background threshold, and the heavy
 * group's flusher stopped with its pages dirty: four groups of buffered
 * writers at 4:2:1:1 split 2.92:1.83:1.02:1, the heavy one holding 0 to
 * 16 bios here while each light one held 15 MB and it had 10 MB dirty
 * and none under writeback (a 32 MiB/s device, a 64 MiB dirty limit).
 *
 * So while a group holds window.writeback_hold_sectors or more, 50 ms of
 * the device's best recent rate and at least 1 MiB
 * (ioband_sched_writeback_full()), the flusher writing its pages back
 * waits in map before adding more: the rest of its pages stay dirty,
 * where both limits see them, every group's flusher keeps running, and
 * every group keeps a backlog here, where its weight acts. The same four
 * groups then split 4.00:2.00:1.00:1 in bytes under `weight-iosize` and
 * 4.00:2.00:1.00:1 in IOs under `weight`, which counts IOs, at 99% to
 * 100% of dm-linear's throughput (medians of three boots,
 * bench/results/6.1/bench.md). In bytes `weight` gave them
 * 3.38:1.86:1.00:1 there: the heavy group's flusher sends smaller bios,
 * by an amount that changes from boot to boot.
 *
 * Only a group's own flusher waits, and only for its own group: the
 * glue waits in the work item of the bdi_writeback whose cgroup owns the
 * bio (group type cgroup), for async writes (not fsync's, sync(2)'s
 * integrity pass, direct IO or metadata), never while it holds a
 * journal handle (a commit, which every group waits for, would wait for
 * it), nor while a bio it sent down in the same call is still to be
 * submitted, nor while the group's target drains. A wait ends when the
 * dispatcher takes the group's held writeback below the hold, when the
 * target is suspended or its group detached; it looks again every
 * IOBAND_WRITEBACK_WAIT_POLL_NS (100 ms) in any case. What it costs: the
 * flusher sleeps while its group is over its share, as under iocost or
 * blk-throttle, which hold it in the submission path; a group can still
 * hold more than the hold by what its file system maps under one
 * journal handle (ext4 submits an extent of up to 8 MiB under it); the
 * dispatch loop makes one comparison more per item while a flusher
 * waits, and map one function call per async write.
 */
#include "ioband-sched.h"

/* A tag window of 2^62 is far wider than any live spread of tags. */
#define IOBAND_ERA_SHIFT	62

/* Return credit is clamped so that live tags stay within 2^62. */
#define IOBAND_MAX_CREDIT	(1ULL << 61)

/* A 4 KiB page is 8 sectors: the unit of a sized item under `weight`. */
#define IOBAND_SECTORS_PER_PAGE_SHIFT	3

#define IOBAND_NS_PER_SEC	1000000000ULL

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

static void ioband_sched_update_credit(struct ioband_sched *sched)
{
	u64 tokens = (u64)sched->params.carryover * sched->token_base;
	u64 weight = sched->total_weight;

	/* range-bw shares what is left equally: every weight counts 100 */
	if (sched->params.policy == IOBAND_POLICY_RANGE_BW)
		weight = (u64)sched->nr_entities * IOBAND_DEFAULT_WEIGHT;
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
 * Cost of @item in tokens: one per IO under `weight`, else one per
 * sector (the range policies count KB/s, hence sectors).
 */
static u64 ioband_sched_cost(const struct ioband_sched *sched,
			     const struct ioband_sched_item *item)
{
	u64 cost = item->sectors;

	if (sched->params.policy == IOBAND_POLICY_WEIGHT)
		cost = item->flags & IOBAND_ITEM_SIZED ?
		       cost >> IOBAND_SECTORS_PER_PAGE_SHIFT : 1;
	if (!cost)
		return 1;
	if (cost > IOBAND_MAX_ITEM_COST)
		return IOBAND_MAX_ITEM_COST;
	return cost;
}

/* 2^32 / weight for the share tag: range-bw weighs every group alike. */
static inline u64 ioband_sched_inv_weight(const struct ioband_sched *sched,
					  const struct ioband_sched_entity *e)
{
	if (sched->params.policy == IOBAND_POLICY_RANGE_BW)
		return (u64)(0xFFFFFFFFU / IOBAND_DEFAULT_WEIGHT) + 1;
	return e->inv_weight;
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
	sched->in_flight++;
	sched->window.in_flight_sectors += item->sectors;
	sched->stats.dispatched++;
	e->in_flight_sectors += item->sectors;
}

/* Charges @item to @e at share tag @start and counts it in flight. */
static void ioband_sched_charge(struct ioband_sched *sched,
				struct ioband_sched_entity *e,
				struct ioband_sched_item *item, u64 start)
{
	if (ioband_vt_before(sched->vtime, start)) {
		if ((start ^ sched->vtime) >> IOBAND_ERA_SHIFT)
			sched->vtime_era++;
		sched->vtime = start;
	}
	e->finish = start + ioband_sched_cost(sched, item) *
			    ioband_sched_inv_weight(sched, e);
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
	ioband_rb_erase(sched, &sched->ptree, &e->pnode);
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
			ioband_rb_insert(sched, &sched->ptree, &e->pnode);
		}
		return;
	}
	e->waiting = false;
	if (in_tree)
		ioband_rb_erase(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_erase(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_erase(sched, &sched->ptree, &e->pnode);
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
	ioband_rb_insert(sched, &sched->ptree, &e->pnode);
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
	struct ioband_sched empty = { 0 };

	*sched = empty;
	sched->window.sectors = IOBAND_WINDOW_MIN_SECTORS;
	sched->window.writeback_hold_sectors = IOBAND_WRITEBACK_HOLD_MIN_SECTORS;
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
	if (weight < IOBAND_MIN_WEIGHT || weight > IOBAND_MAX_WEIGHT)
		return false;
	if (entity->attached)
		sched->total_weight += (u64)weight - entity->weight;
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
	u64 step = ioband_sched_cost(sched, item) *
		   ioband_sched_inv_weight(sched, e);
	u64 limit = sched->vtime + IOBAND_MAX_CREDIT;
	u64 tag;

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

	sched->now = now_ns;
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
		ioband_rb_insert(sched, &sched->ptree, &entity->pnode);
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

	sched->now = now_ns;
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

	/* With no room below, a completion comes first: no timer. */
	if (sched->passthrough || !ioband_sched_room(sched))
		return 0;
	if (!ioband_sched_range(sched)) {
		if (sched->nr_queued && !ioband_sched_pick(sched, &until))
			return until;
		return 0;
	}
	return n ? n->key : 0;
}

/* ---- The window (section 14) ---- */

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
	w->period_index = (w->period_index + 1) % IOBAND_WINDOW_RATE_PERIODS;
	w->rate = 0;
	for (i = 0; i < IOBAND_WINDOW_RATE_PERIODS; i++)
		if (w->period_rates[i] > w->rate)
			w->rate = w->period_rates[i];
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

bool ioband_sched_complete(struct ioband_sched *sched,
			   struct ioband_sched_entity *entity,
			   struct ioband_sched_item *item, u64 now_ns)
{
	sched->now = now_ns;
	if (sched->in_flight)
		sched->in_flight--;
	ioband_window_complete(&sched->window, item,
			       now_ns - item->dispatch_ns, now_ns);
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
			ioband_rb_insert(sched, &sched->ptree, &entity->pnode);
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

	sched->now = now_ns;
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
