/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels dm-ioband builds for, asked of their
 * headers (Kbuild's checks or the headers' own macros), not of a version
 * number.
 */
#ifndef IOBAND_COMPAT_H
#define IOBAND_COMPAT_H

#include <linux/blkdev.h>
#include <linux/device-mapper.h>
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
 * An empty flush goes straight down, neither held nor counted, so dm may
 * send it to the devices itself, once per device rather than once per
 * target, where it knows how (flush_bypasses_map).
 */
static inline void ioband_let_flushes_bypass(struct dm_target *ti)
{
#ifdef IOBAND_HAVE_FLUSH_BYPASSES_MAP
	ti->flush_bypasses_map = true;
#endif
}

#endif /* IOBAND_COMPAT_H */
