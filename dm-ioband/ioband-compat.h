/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels dm-ioband builds for, asked of their
 * headers (Kbuild's checks or the headers' own macros), not of a version
 * number.
 */
#ifndef IOBAND_COMPAT_H
#define IOBAND_COMPAT_H

#include <linux/blkdev.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>

/* hrtimer_init() is gone since 6.15; hrtimer_setup() came in 6.13. */
static inline void
ioband_hrtimer_setup(struct hrtimer *timer,
		     enum hrtimer_restart (*function)(struct hrtimer *),
		     clockid_t clock_id, enum hrtimer_mode mode)
{
#ifdef IOBAND_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, function, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
#endif
}

/*
 * A workqueue bound to the submitting CPU was the default until WQ_PERCPU
 * came to say so (7.x warns when a workqueue says neither it nor
 * WQ_UNBOUND).
 */
#ifndef IOBAND_HAVE_WQ_PERCPU
#define WQ_PERCPU	0
#endif

/*
 * Where polling is a queue limit (BLK_FEAT_POLL, 6.11+), io_hints turns it
 * off and no polled bio reaches map. Before that, dm advertises polling
 * whenever the devices below poll, so map sees REQ_POLLED bios: it
 * schedules them like any other, clearing the flag (the poller spins on,
 * the clone completes by interrupt), and lets them poll only past the
 * scheduler (ioband_map_open()).
 */
#ifdef BLK_FEAT_POLL
static inline void ioband_disable_polling(struct queue_limits *limits)
{
	limits->features &= ~BLK_FEAT_POLL;
}

static inline bool ioband_bio_polled(struct bio *bio)
{
	return false;
}
#else
static inline void ioband_disable_polling(struct queue_limits *limits)
{
}

static inline bool ioband_bio_polled(struct bio *bio)
{
	return bio->bi_opf & REQ_POLLED;
}
#endif

#endif /* IOBAND_COMPAT_H */
