// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband: share a block device's bandwidth between groups of processes
 * (cgroup v2 above all) by weight.
 *
 * This file is the device-mapper glue: bandwidth domains, bio
 * classification, holding and dispatching bios, suspend, status, and
 * applying the table and the messages. The groups and the parsing of the
 * table and the messages (ioband-core.c) and the choice of which held bio
 * goes next (ioband-sched.c) are plain C shared with the userspace tests
 * and fuzzers.
 *
 * Every target names a bandwidth domain (its ioband_device_id); targets
 * with the same id share one domain: one scheduler, one lock, one dispatch
 * worker. Each target has its own groups, and all of them compete in the
 * domain by weight.
 *
 * As dm wants, a table changes nothing until it is resumed: the
 * constructor parses it and builds its groups aside, and the first resume
 * makes its knobs the domain's and its groups the domain's (ioband_apply()).
 * A suspend drains and stops that one target: its domain goes on
 * scheduling the others (ioband_drain()).
 *
 * map classifies a bio and asks the scheduler whether it may go down now;
 * if not, the bio waits in its group's queue, threaded through its per-bio
 * data, and map returns at once: a submitter never sleeps here for another
 * group's sake. Only a group's own flusher waits, while the group holds its
 * share of writeback (ioband_writeback_wait()). Completions
 * (end_io) free a slot below and kick the dispatch worker, which sends the
 * bios the scheduler picks with dm_submit_bio_remap(), under a plug.
 *
 * While the device completes every bio in the task that sends it down and
 * the scheduler holds nothing (ioband_sched_lets_all_through()), map takes
 * no lock at all: the bio goes down at once, counted per CPU for its group
 * (ioband_map_open()).
 */

#include <linux/device-mapper.h>

#include <linux/bio.h>
#include <linux/blk-cgroup.h>
#include <linux/blkdev.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/writeback.h>

#include "ioband-compat.h"
#include "ioband-core.h"
#include "ioband-sched.h"

#define DM_MSG_PREFIX "ioband"

/* The largest bio ioband lets through, in sectors (512 KiB). */
#define IOBAND_MAX_IO_SECTORS	1024

#ifndef CONFIG_BLK_CGROUP
#error "dm-ioband needs a kernel with CONFIG_BLK_CGROUP"
#endif

/*
 * Walks of all of a target's groups (status, stats, reset, suspend, the
 * first resume, dtr) take the domain's lock for this many groups at a
 * time and drop it in between, so that interrupts are never off for
 * longer than one chunk takes, however many groups a target has.
 */
#define IOBAND_WALK_CHUNK	32

/*
 * While a group waits for its max, the worker runs at least this often,
 * to find a device whose IO dm blocks without telling its targets
 * (__ioband_find_blocked()).
 */
#define IOBAND_BLOCKED_POLL_NS	(100ULL * NSEC_PER_MSEC)

/*
 * The bios that went down past the scheduler (ioband_map_open()) from
 * one CPU and are still below, as one atomic64_t per target and CPU:
 * bios in the upper half, sectors in the lower. A bio is counted on the
 * CPU that mapped it and uncounted there whichever CPU completes it.
 * Each CPU sends at most IOBAND_OPEN_MAX_SECTORS down so at a time: a
 * bio-based device below has no nr_requests to stop a submitter, and one
 * that stops completing inline would get everything past the weights
 * until its first completion says so (ioband-design.rst section 14).
 */
#define IOBAND_OPEN_BIO_SHIFT		32
#define IOBAND_OPEN_BIO			(1ULL << IOBAND_OPEN_BIO_SHIFT)
#define IOBAND_OPEN_SECTORS_MASK	(IOBAND_OPEN_BIO - 1)
#define IOBAND_OPEN_MAX_SECTORS		IOBAND_INLINE_MAX_SECTORS

/* The targets that share one ioband_device_id. */
struct ioband_domain {
	struct list_head list;		/* in ioband_domains */
	char id[IOBAND_DOMAIN_ID_MAX + 1];
	unsigned int nr_targets;	/* under ioband_domains_lock */

	/*
	 * Protects sched, targets, and every target's groups, their counters
	 * and its suspended and blocked flags. Taken from end_io, so with
	 * interrupts off: held for one bio, one message or one chunk of a
	 * walk of groups (IOBAND_WALK_CHUNK), never for all of a target's.
	 */
	spinlock_t lock;
	struct ioband_sched sched;
	struct list_head targets;	/* resumed once, not destroyed yet */

	struct workqueue_struct *wq;
	struct work_struct dispatch_work;
	/* Wakes the worker when a group held back by its max may go. */
	struct hrtimer limit_timer;

	/*
	 * Flushers waiting for their group's writeback to go down
	 * (ioband_writeback_wait()): how many, and a count that every wake-up
	 * moves on, both under lock.
	 */
	wait_queue_head_t writeback_wait;
	unsigned int writeback_waiters;
	unsigned int writeback_wakes;

	/* sched.stats.overdue when last logged (__ioband_report_overdue()). */
	u64 overdue_reported;
};

static LIST_HEAD(ioband_domains);
static DEFINE_MUTEX(ioband_domains_lock);	/* protects ioband_domains */

/*
 * What a group's bios that went down past the scheduler (ioband_map_open())
 * added to its counters, less what a CPU still holds for it in its
 * ioband_open_batch; a report adds them to the group's stats
 * (ioband_read_stats()). Their time below is not measured, so that such a
 * bio costs no clock read.
 */
struct ioband_open_counts {
	atomic64_t ios[IOBAND_NR_DIRS];
	atomic64_t sectors[IOBAND_NR_DIRS];
};

/*
 * A CPU's count, per target, of the bios that went down past the
 * scheduler for the group it counted last: a task sends bio after bio of
 * one group, and they add up here, with no cache line shared between CPUs
 * written, until the CPU counts another group, or a report or a reset
 * folds the batch into its group's ioband_open_counts
 * (__ioband_fold_open_batch()). Per target and CPU, not per group and CPU,
 * so that the per-CPU memory does not grow with the groups, nor the work
 * of a report with groups times CPUs (ioband-design.rst section 14).
 *
 * @group may be detached and freed meanwhile: it is used only while
 * @generation, the target's groups_generation read before the group was
 * looked up, is still current (a detach bumps it after it took the group
 * out of the index, before it lets the group go); else the group is
 * looked up again by @id and known by @serial, which no other group entry
 * has, so that a group attached again under that id gets none of its
 * predecessor's counts. @lock, taken with interrupts off (and raw: the
 * map takes it with preemption disabled), keeps the CPU's map apart from
 * a report or reset on another CPU.
 */
struct ioband_open_batch {
	raw_spinlock_t lock;
	struct ioband_group *group;	/* NULL: nothing counted yet */
	unsigned long generation;
	u64 id;
	u64 serial;
	u64 ios[IOBAND_NR_DIRS];
	u64 sectors[IOBAND_NR_DIRS];
};

/* How a bio's owner was found (see "Which cgroup owns a bio"). */
enum ioband_route {
	IOBAND_ROUTE_ORIG_BIO,
	IOBAND_ROUTE_WB,
	IOBAND_ROUTE_TASK,
	IOBAND_NR_ROUTES
};

/*
 * A target's bios by the route that found their owner, and those whose
 * clone ioband associated with that owner for the device below; per CPU,
 * counted in map, added up by the stats message.
 */
struct ioband_route_stats {
	u64 bios[IOBAND_NR_ROUTES];
	u64 associated;
};

/*
 * A CPU's last answers of ioband_cgroup_group(), by io css: a task sends
 * bio after bio from one cgroup, and a hit costs two comparisons where a
 * miss walks up the cgroup's ancestors through the group table. A css is
 * known by its address and its serial number, which is never reused, as a
 * freed css's memory may be another's later. Keyed so, a hit reads only
 * the css, not its cgroup and the cgroup's kernfs node, where the
 * cgroup's id is: two more cache lines on every bio. An answer holds
 * while @generation is the target's groups_generation, which every attach
 * and detach bumps.
 */
#define IOBAND_CLASS_CACHE_BITS		2
#define IOBAND_CLASS_CACHE_SLOTS	(1 << IOBAND_CLASS_CACHE_BITS)

struct ioband_class_cache {
	struct {
		const struct cgroup_subsys_state *css;
		u64 serial_nr;
		struct ioband_group *group;
		unsigned long generation;
	} slot[IOBAND_CLASS_CACHE_SLOTS];
};

struct ioband_c {
	struct dm_target *ti;
	struct mapped_device *md;	/* ti's, for map's checks */
	struct gendisk *disk;		/* md's */
	struct dm_dev *dev;
	struct ioband_domain *domain;
	/* The table's knobs, the domain's from the table's first resume. */
	struct ioband_sched_params params;
	bool applied;			/* resumed once: in domain->targets */
	wait_queue_head_t applied_wait;	/* woken when it is */

	/*
	 * Serialises what changes the group set (attach, detach, type, the
	 * first resume, dtr) with the walks of it that drop domain->lock
	 * between chunks (status, stats, reset, suspend), so that the
	 * attach-order list stays put under them. Taken before domain->lock,
	 * and never held while waiting for the domain's worker.
	 */
	struct mutex groups_lock;
	/*
	 * The attached groups by id, for map's lookups, which run under
	 * domain->lock (and RCU). Changed under groups_lock with interrupts
	 * on (rhashtable's bucket locks only disable bottom halves on 6.1);
	 * it doubles and halves by itself, in a worker, as groups come and
	 * go, so a lookup costs the same however the groups were attached.
	 */
	struct rhashtable group_index;
	bool group_index_ready;
	/*
	 * Bumped under groups_lock after every change of group_index
	 * (release), read before a lookup in it (acquire).
	 */
	unsigned long groups_generation;
	struct ioband_class_cache __percpu *class_cache;
	struct ioband_route_stats __percpu *route_stats;

	/* Under domain->lock. */
	unsigned int type_index;	/* ioband_parse_group_type()'s */
	enum ioband_group_type type;	/* type_index's, for map */
	bool suspended;			/* presuspend to resume: holds nothing */
	bool blocked;			/* __ioband_find_blocked(): holds nothing */
	struct list_head domain_node;	/* in domain->targets */
	struct ioband_group_set groups;
	u64 stats_start_ns;		/* counters started or were reset */
	/* Not under domain->lock: atomic, and each batch under its own. */
	struct ioband_open_counts default_open_counts;
	struct ioband_open_batch __percpu *open_batch;
	/* See IOBAND_OPEN_BIO; read under domain->lock by the stats. */
	atomic64_t __percpu *open_in_flight;

	struct work_struct drain_work;	/* for __ioband_find_blocked() */

	/* What a bdi_writeback's flusher runs: wb_workfn(), not exported. */
	work_func_t flusher_fn;
};

/*
 * An attached group, as the target's group_index holds it. It is freed
 * once detached and its last bio that the scheduler dispatched completed
 * (group.in_flight, under domain->lock), after a grace period:
 * ioband_map_open() finds it under RCU alone. A bio that went down past
 * the scheduler needs it no more once counted.
 */
struct ioband_group_entry {
	struct ioband_group group;
	struct rhash_head node;
	struct ioband_open_counts open_counts;
	u64 serial;			/* see struct ioband_open_batch */
	struct rcu_head rcu;
};

/* The last serial number given to a group entry. */
static atomic64_t ioband_entry_serial = ATOMIC64_INIT(0);

/* A u64 compared as such, not through an out-of-line memcmp(). */
static int ioband_group_index_cmp(struct rhashtable_compare_arg *arg,
				  const void *obj)
{
	const struct ioband_group_entry *entry = obj;

	return entry->group.id != *(const u64 *)arg->key;
}

static const struct rhashtable_params ioband_group_index_params = {
	.key_len = sizeof(u64),
	.key_offset = offsetof(struct ioband_group_entry, group.id),
	.head_offset = offsetof(struct ioband_group_entry, node),
	.automatic_shrinking = true,
	.obj_cmpfn = ioband_group_index_cmp,
};

/*
 * Per-bio data. A held bio waits in its group's queue through @item;
 * @group is the group the bio went down for, NULL when it is not
 * scheduled; @open says it went down past the scheduler
 * (ioband_map_open()), counted in @open_cpu's open_in_flight with
 * item.sectors; @time_ns is when it was held, then when it went
 * down; @dispatcher the task that sent it down, to tell a device that
 * completes inline (ioband_completed_inline()).
 */
struct ioband_bio {
	struct ioband_sched_item item;
	struct ioband_group *group;
	bool open;
	unsigned int open_cpu;
	u64 time_ns;
	struct task_struct *dispatcher;
};

/*
 * Read without domain->lock by map (ioband_classify(),
 * ioband_bio_own_writeback()): a type message that it misses charges
 * one bio as before.
 */
static enum ioband_group_type ioband_type(const struct ioband_c *ic)
{
	return READ_ONCE(ic->type);
}

/*
 * Which cgroup owns a bio
 *
 * Inside map the clone has no blkg yet: dm allocates it without a block
 * device and copies the original bio's cgroup association only when it
 * submits the clone. Asking the current task is right for synchronous
 * submitters and wrong for writeback by the flusher, the data half of a
 * PREFLUSH write and bios dm deferred across a suspend: those run in
 * kernel threads. Every kernel from 6.1 to 7.3 does so (alloc_tio()
 * clones with a NULL bdev, so __bio_clone() copies no association), and
 * no exported function gives a target the original bio. So a bio's owner
 * is found by the first of three routes that applies (enum ioband_route),
 * and each bio counts under the route that charged it (stats):
 *
 * - wb: a write that a flusher submits runs in the work item of one
 *   struct bdi_writeback (public header), whose blkcg_css is the cgroup
 *   that dirtied the pages: the css that wbc_init_bio() gives the
 *   original bio. Needs nothing private, so it serves every build.
 * - orig-bio: the original bio, through dm's private per-io structures,
 *   struct dm_target_io and struct dm_io of drivers/md/dm-core.h, which
 *   the headers lack. Their offsets come from ioband-dm-layout.h, which
 *   Kbuild generates from this very kernel's dm-core.h, else from the BTF
 *   of its dm-mod.ko (IOBAND_DM_LAYOUT_FROM). Each use is validated: the
 *   target and the mapped device it names, and dm's magic numbers where
 *   the source gave them (BTF holds no macros).
 * - task: the cgroup bio_set_dev() gave the clone in map, the fallback:
 *   the submitting task's, or the one a kernel thread works for
 *   (kthread_associate_blkcg(): loop's workers).
 */
#ifdef IOBAND_DM_LAYOUT
#include "ioband-dm-layout.h"

#define IOBAND_WRITEBACK_ATTRIBUTION	"wb+orig-bio"
#define IOBAND_DM_LAYOUT_NAME		IOBAND_DM_LAYOUT_FROM

/* The field of @type at @offset in dm's private struct at @base. */
#define ioband_dm_field(type, base, offset) \
	(*(type *)((char *)(base) + (offset)))

/*
 * @clone lives in a struct dm_target_io, its tio->io in the same per-bio
 * allocation: once tio->ti is our target, tio->io is a struct dm_io, and
 * the magic numbers only double-check it.
 */
static __always_inline struct bio *ioband_orig_bio(struct dm_target *ti,
						   struct bio *clone)
{
	const struct ioband_c *ic = ti->private;
	void *tio = (char *)clone - IOBAND_TIO_CLONE;
	struct bio *orig;
	void *io;

#ifdef IOBAND_DM_TIO_MAGIC
	if (ioband_dm_field(unsigned short, tio, IOBAND_TIO_MAGIC) !=
	    IOBAND_DM_TIO_MAGIC)
		return NULL;
#endif
	if (ioband_dm_field(struct dm_target *, tio, IOBAND_TIO_TI) != ti)
		return NULL;
	io = ioband_dm_field(void *, tio, IOBAND_TIO_IO);
	if (!io)
		return NULL;
#ifdef IOBAND_DM_IO_MAGIC
	if (ioband_dm_field(unsigned short, io, IOBAND_IO_MAGIC) !=
	    IOBAND_DM_IO_MAGIC)
		return NULL;
#endif
	if (ioband_dm_field(struct mapped_device *, io, IOBAND_IO_MD) != ic->md)
		return NULL;
	orig = ioband_dm_field(struct bio *, io, IOBAND_IO_ORIG_BIO);
	if (!orig || !orig->bi_bdev || orig->bi_bdev->bd_disk != ic->disk)
		return NULL;
	return orig;
}
#else
#ifdef CONFIG_CGROUP_WRITEBACK
#define IOBAND_WRITEBACK_ATTRIBUTION	"wb"
#else
#define IOBAND_WRITEBACK_ATTRIBUTION	"task"
#endif
#define IOBAND_DM_LAYOUT_NAME		"none"

static struct bio *ioband_orig_bio(struct dm_target *ti, struct bio *clone)
{
	return NULL;
}
#endif

#ifdef IOBAND_DMF_BLOCK_IO_FOR_SUSPEND
/* dm blocks new IO of @ti's device for a suspend. */
static bool ioband_md_blocks_io(struct dm_target *ti)
{
	const struct ioband_c *ic = ti->private;

	return test_bit(IOBAND_DMF_BLOCK_IO_FOR_SUSPEND,
			&ioband_dm_field(unsigned long, ic->md, IOBAND_MD_FLAGS));
}
#else
/*
 * Without the flag's number (from dm-core.h only) we cannot see it: a fast
 * internal suspend waits for our held bios at their groups' pace
 * (__ioband_find_blocked()).
 */
static bool ioband_md_blocks_io(struct dm_target *ti)
{
	return false;
}
#endif

/*
 * The css of the bdi_writeback whose flusher submits @bio, a write, or
 * NULL. The flusher is a workqueue worker running wb_workfn(), which is
 * not exported: ic->flusher_fn is read from our own disk's wb at ctr. The
 * wb, and with it its css, outlives the work item, so this map call.
 */
static __always_inline struct cgroup_subsys_state *
ioband_flusher_css(const struct ioband_c *ic, struct bio *bio)
{
#ifdef CONFIG_CGROUP_WRITEBACK
	struct work_struct *work;

	if (!(current->flags & PF_WQ_WORKER) || !op_is_write(bio_op(bio)))
		return NULL;
	work = current_work();
	if (!work || work->func != ic->flusher_fn)
		return NULL;
	return container_of(to_delayed_work(work), struct bdi_writeback,
			    dwork)->blkcg_css;
#else
	return NULL;
#endif
}

/*
 * The io controller's css that owns @bio, the one io.stat charges, and the
 * route that found it. The caller is in an RCU read-side section,
 * rcu_read_lock() or one with preemption disabled: the current task's css
 * is only stable inside one (a wb and the original bio pin their own).
 */
static __always_inline struct cgroup_subsys_state *
ioband_bio_css(struct dm_target *ti, struct bio *bio, enum ioband_route *route)
{
	struct cgroup_subsys_state *css = ioband_flusher_css(ti->private, bio);
	struct bio *orig;

	if (css) {
		*route = IOBAND_ROUTE_WB;
		return css;
	}
	orig = ioband_orig_bio(ti, bio);
	if (orig) {
		css = bio_blkcg_css(orig);
		if (css) {
			*route = IOBAND_ROUTE_ORIG_BIO;
			return css;
		}
	}
	*route = IOBAND_ROUTE_TASK;
	css = bio_blkcg_css(bio);
	if (css)
		return css;
	return task_css_check(current, io_cgrp_id, rcu_read_lock_any_held());
}

/*
 * The owner of @bio (ioband_bio_css()), counted under its route, once per
 * bio. bio_set_dev() in map associated the clone with the submitting
 * task's css; where the owner is another (writeback, a bio dm's worker
 * submits), the clone is associated with the owner, so that io.stat and
 * io.max of the device below charge the cgroup ioband charges. A kernel
 * whose dm copies the original bio's association at submission does the
 * same again for the orig-bio and wb routes.
 */
static __always_inline struct cgroup_subsys_state *
ioband_bio_owner(struct dm_target *ti, struct bio *bio)
{
	struct ioband_c *ic = ti->private;
	struct cgroup_subsys_state *css;
	enum ioband_route route;

	css = ioband_bio_css(ti, bio, &route);
	this_cpu_inc(ic->route_stats->bios[route]);
	if (route != IOBAND_ROUTE_TASK && css != bio_blkcg_css(bio)) {
		bio_associate_blkg_from_css(bio, css);
		this_cpu_inc(ic->route_stats->associated);
	}
	return css;
}

static struct ioband_group_entry *ioband_entry_of(struct ioband_group *group)
{
	return container_of(group, struct ioband_group_entry, group);
}

/*
 * The attached group @id of @ic, or NULL. In an RCU read-side section
 * (rcu_read_lock() or preemption disabled), which keeps a group that a
 * detach takes out meanwhile in memory (ioband_free_group_rcu()), or under
 * groups_lock or domain->lock, either of which a detach needs before it
 * lets the group go.
 */
static struct ioband_group *ioband_find_group(struct ioband_c *ic, u64 id)
{
	struct ioband_group_entry *entry;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held() &&
			 !lockdep_is_held(&ic->groups_lock) &&
			 !lockdep_is_held(&ic->domain->lock),
			 "ioband group lookup without RCU or a lock of ioband's");
	entry = rhashtable_lookup_fast(&ic->group_index, &id,
				       ioband_group_index_params);
	return entry ? &entry->group : NULL;
}

/*
 * The nearest attached group of @cgrp or of one of its ancestors, so that
 * child cgroups share their attached parent's weight.
 */
static struct ioband_group *ioband_cgroup_group(struct ioband_c *ic,
						  struct cgroup *cgrp)
{
	struct ioband_group *group;
	int level;

	for (level = cgrp->level; level >= 0; level--) {
		group = ioband_find_group(ic,
					    cgroup_id(cgroup_ancestor(cgrp, level)));
		if (group)
			return group;
	}
	return &ic->groups.default_group;
}

/* ioband_cgroup_group() of @css's cgroup, through this CPU's class_cache. */
static __always_inline struct ioband_group *
ioband_cgroup_group_cached(struct ioband_c *ic,
			   const struct cgroup_subsys_state *css)
{
	unsigned int i = hash_ptr(css, IOBAND_CLASS_CACHE_BITS);
	struct ioband_class_cache *cache;
	struct ioband_group *group;
	unsigned long generation;

	/*
	 * Preemption, disabled here, keeps tasks apart on one CPU, but not an
	 * interrupt, which could come between a task's stores to a slot and
	 * tear it: a bio classified from softirq or hardirq takes the walk
	 * and leaves the cache alone.
	 */
	if (!in_task())
		return ioband_cgroup_group(ic, css->cgroup);
	/* Pairs with ioband_groups_changed(): a lookup sees what it bumped. */
	generation = smp_load_acquire(&ic->groups_generation);
	cache = get_cpu_ptr(ic->class_cache);
	if (cache->slot[i].css == css &&
	    cache->slot[i].serial_nr == css->serial_nr &&
	    cache->slot[i].generation == generation) {
		group = cache->slot[i].group;
	} else {
		group = ioband_cgroup_group(ic, css->cgroup);
		cache->slot[i].css = css;
		cache->slot[i].serial_nr = css->serial_nr;
		cache->slot[i].group = group;
		cache->slot[i].generation = generation;
	}
	put_cpu_ptr(ic->class_cache);
	return group;
}

/*
 * Every CPU's cached answers are stale: @ic's group_index changed. Under
 * groups_lock; the change is visible before the new generation is.
 */
static void ioband_groups_changed(struct ioband_c *ic)
{
	lockdep_assert_held(&ic->groups_lock);
	/* Pairs with ioband_cgroup_group_cached()'s acquire. */
	smp_store_release(&ic->groups_generation, ic->groups_generation + 1);
}

/*
 * The group of the task that submits a bio, under type uid, gid, pid or
 * pgrp: writeback by the flusher is not charged to the writer under them.
 */
static struct ioband_group *ioband_task_group(struct ioband_c *ic)
{
	struct ioband_group *group;
	u64 id;

	switch (ioband_type(ic)) {
	case IOBAND_TYPE_UID:
		id = from_kuid(&init_user_ns, current_uid());
		break;
	case IOBAND_TYPE_GID:
		id = from_kgid(&init_user_ns, current_gid());
		break;
	case IOBAND_TYPE_PID:
		id = task_tgid_nr(current);
		break;
	case IOBAND_TYPE_PGRP:
		id = pid_nr(task_pgrp(current));
		break;
	default:
		return &ic->groups.default_group;
	}
	group = ioband_find_group(ic, id);
	return group ? group : &ic->groups.default_group;
}

/*
 * The group that a bio owned by @css (ioband_bio_owner()), a read or
 * write, is charged to. In an RCU read-side
 * section (ioband_find_group()); without domain->lock too
 * (ioband_map_open()), a group attached or detached meanwhile may be
 * missed or found. Inline, as is the original bio's lookup: the open
 * window's path (ioband-design.rst section 14) then makes no call of
 * ioband's own, which saves instructions on any CPU and, under QEMU's
 * TCG, a lookup of the next translated block at each return.
 */
static __always_inline struct ioband_group *
ioband_classify(struct ioband_c *ic, const struct cgroup_subsys_state *css)
{
	if (!READ_ONCE(ic->groups.nr_groups))
		return &ic->groups.default_group;
	if (ioband_type(ic) != IOBAND_TYPE_CGROUP)
		return ioband_task_group(ic);
	if (css)
		return ioband_cgroup_group_cached(ic, css);
	return &ic->groups.default_group;
}

/*
 * Bios that everyone may be waiting for go down at once and are charged
 * to their group as debt (ioband-design.rst section 16): what blk-cgroup's
 * bio_issue_as_root_blkg() issues as root (metadata, swap), priority IO,
 * and the journal's writes, that is sync, FUA or PREFLUSH writes that a
 * kernel thread issues for the root cgroup (jbd2, xfsaild). A tenant's
 * own O_SYNC or FUA writes are not among them: they would escape its
 * weight. @css owns @bio (ioband_bio_owner()).
 */
static bool ioband_bio_urgent(struct bio *bio,
			      const struct cgroup_subsys_state *css)
{
	if (bio->bi_opf & (REQ_META | REQ_PRIO | REQ_SWAP))
		return true;
	if (!op_is_write(bio_op(bio)) ||
	    !(bio->bi_opf & (REQ_SYNC | REQ_FUA | REQ_PREFLUSH)) ||
	    !(current->flags & PF_KTHREAD))
		return false;
	return !css || !css->parent;
}

/*
 * The scheduler's view of @bio: its direction and flags, or -1 for an
 * operation that is not scheduled (zone management and the like).
 * Discards, write-zeroes and secure erases are held and charged by the
 * size they cover, as writes.
 */
static int ioband_bio_dir(struct bio *bio, u32 *flags)
{
	*flags = 0;
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return IOBAND_READ;
	case REQ_OP_WRITE:
		return IOBAND_WRITE;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
	case REQ_OP_SECURE_ERASE:
		*flags = IOBAND_ITEM_SIZED;
		return IOBAND_WRITE;
	default:
		return -1;
	}
}

static struct ioband_group *ioband_entity_group(struct ioband_sched_entity *e)
{
	return container_of(e, struct ioband_group, entity);
}

static struct ioband_group_entry *ioband_alloc_entry(u64 id)
{
	struct ioband_group_entry *entry = kzalloc(sizeof(*entry), GFP_KERNEL);

	if (!entry)
		return NULL;
	entry->serial = atomic64_inc_return(&ioband_entry_serial);
	entry->group.id = id;
	return entry;
}

/* Frees an entry that no lookup can have found. */
static void ioband_free_entry(struct ioband_group_entry *entry)
{
	kfree(entry);
}

static void ioband_free_entry_rcu(struct rcu_head *head)
{
	ioband_free_entry(container_of(head, struct ioband_group_entry, rcu));
}

/*
 * Frees detached @group once no lookup under RCU can be using it, nor one
 * with preemption disabled (ioband_map_open()): call_rcu() waits for both.
 */
static void ioband_free_group_rcu(struct ioband_group *group)
{
	call_rcu(&ioband_entry_of(group)->rcu, ioband_free_entry_rcu);
}

static struct ioband_open_counts *
ioband_open_counts_of(struct ioband_c *ic, struct ioband_group *group)
{
	if (group == &ic->groups.default_group)
		return &ic->default_open_counts;
	return &ioband_entry_of(group)->open_counts;
}

/*
 * The group that @batch counted for, or NULL when it is detached (its
 * counts go with it). @generation is the target's groups_generation, read
 * under groups_lock, or in the same RCU read-side section (preemption
 * disabled) as this, before the group of the bio being counted was looked
 * up: a group that @batch->generation still names was not let go before
 * that section began.
 */
static struct ioband_group *
ioband_open_batch_group(struct ioband_c *ic,
			const struct ioband_open_batch *batch,
			unsigned long generation)
{
	struct ioband_group *group = batch->group;

	if (group == &ic->groups.default_group ||
	    batch->generation == generation)
		return group;
	group = ioband_find_group(ic, batch->id);
	if (group && ioband_entry_of(group)->serial == batch->serial)
		return group;
	return NULL;
}

/* Under @batch's lock: its counts go to their group's, and it is empty. */
static void __ioband_fold_open_batch(struct ioband_c *ic,
				     struct ioband_open_batch *batch,
				     unsigned long generation)
{
	struct ioband_open_counts *counts;
	struct ioband_group *group;
	int dir;

	if (!batch->ios[IOBAND_READ] && !batch->ios[IOBAND_WRITE])
		return;
	group = ioband_open_batch_group(ic, batch, generation);
	counts = group ? ioband_open_counts_of(ic, group) : NULL;
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++) {
		if (counts && batch->ios[dir]) {
			atomic64_add(batch->ios[dir], &counts->ios[dir]);
			atomic64_add(batch->sectors[dir],
				     &counts->sectors[dir]);
		}
		batch->ios[dir] = 0;
		batch->sectors[dir] = 0;
	}
}

/*
 * Every CPU's batch of @ic into its group's counters, before a report or a
 * reset reads or clears them: O(CPUs), each CPU's in its own short section
 * with interrupts off, none under domain->lock. Under groups_lock, which
 * keeps groups_generation. A bio counted on another CPU meanwhile may be
 * in the report or not.
 */
static void ioband_fold_open_batches(struct ioband_c *ic)
{
	struct ioband_open_batch *batch;
	unsigned long flags;
	int cpu;

	lockdep_assert_held(&ic->groups_lock);
	for_each_possible_cpu(cpu) {
		batch = per_cpu_ptr(ic->open_batch, cpu);
		raw_spin_lock_irqsave(&batch->lock, flags);
		__ioband_fold_open_batch(ic, batch, ic->groups_generation);
		raw_spin_unlock_irqrestore(&batch->lock, flags);
	}
}

/*
 * A bio of @group, found after @generation was read, in the same RCU
 * read-side section, went down past the scheduler: counted in this CPU's
 * batch. Interrupts off for the batch's lock, so that a bio mapped from an
 * interrupt on this CPU cannot come between the batch's updates.
 */
static __always_inline void ioband_count_open(struct ioband_c *ic,
					      struct ioband_group *group,
					      unsigned long generation,
					      int dir, u32 sectors)
{
	struct ioband_open_batch *batch = this_cpu_ptr(ic->open_batch);
	unsigned long flags;

	raw_spin_lock_irqsave(&batch->lock, flags);
	if (batch->group != group || batch->generation != generation) {
		__ioband_fold_open_batch(ic, batch, generation);
		batch->group = group;
		batch->generation = generation;
		if (group != &ic->groups.default_group) {
			batch->id = group->id;
			batch->serial = ioband_entry_of(group)->serial;
		}
	}
	batch->ios[dir]++;
	batch->sectors[dir] += sectors;
	raw_spin_unlock_irqrestore(&batch->lock, flags);
}

/*
 * @group's counters into @st, with what its bios that went down past the
 * scheduler added (ioband_fold_open_batches() first); returns how many
 * those were, of which service_ns has no time. O(1): a report's walk
 * reads no per-CPU memory with interrupts off.
 */
static u64 ioband_read_stats(struct ioband_c *ic, struct ioband_group *group,
			     struct ioband_group_stats *st)
{
	const struct ioband_open_counts *counts =
		ioband_open_counts_of(ic, group);
	u64 open_ios = 0, ios;
	int dir;

	*st = group->stats;
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++) {
		ios = atomic64_read(&counts->ios[dir]);
		st->ios[dir] += ios;
		st->sectors[dir] += atomic64_read(&counts->sectors[dir]);
		open_ios += ios;
	}
	return open_ios;
}

/*
 * Completed in the task that sent it down, not from an interrupt or
 * another task: the device completes at submission (section 14 of
 * ioband-design.rst). A poller completes its own bios too, from the device's
 * queue: those do not count.
 */
static bool ioband_completed_inline(struct bio *bio,
				    const struct ioband_bio *ib)
{
	return in_task() && current == ib->dispatcher &&
	       !(bio->bi_opf & REQ_POLLED);
}

/*
 * @ib goes down for @group now: counted as the group's IO here, when the
 * device gets it, so that the counters tell what each group had of the
 * device, not what it asked for.
 */
static void __ioband_start(struct ioband_bio *ib, struct ioband_group *group,
			   u64 now_ns)
{
	ib->group = group;
	ib->time_ns = now_ns;
	ib->dispatcher = current;
	group->in_flight++;
	ioband_group_account(group, ib->item.dir, ib->item.sectors);
}

static void ioband_kick(struct ioband_domain *domain)
{
	queue_work(domain->wq, &domain->dispatch_work);
}

/* The flushers waiting in ioband_writeback_wait() look again. */
static void __ioband_wake_writeback(struct ioband_domain *domain)
{
	lockdep_assert_held(&domain->lock);
	if (!domain->writeback_waiters)
		return;
	domain->writeback_wakes++;
	wake_up_all(&domain->writeback_wait);
}

/*
 * If @bio is writeback that its own cgroup's flusher submits, and that
 * flusher may wait here (ioband-design.rst section 17), that cgroup's css,
 * else NULL: an async write, submitted from the work item of a
 * bdi_writeback, which the wb route charges to the wb's cgroup
 * (ioband_flusher_css()), so that a wait holds back no page but that
 * cgroup's. Not while the flusher holds a journal handle (a commit, which
 * every group waits for, would wait for it), nor when a bio it sent down
 * in this call still waits in current->bio_list to be submitted (the
 * window it fills would never empty). Only under type cgroup, where that
 * group is the bio's.
 */
static struct cgroup_subsys_state *
ioband_bio_own_writeback(struct dm_target *ti, struct bio *bio)
{
	struct ioband_c *ic = ti->private;

	if (bio_op(bio) != REQ_OP_WRITE || op_is_sync(bio->bi_opf) ||
	    (bio->bi_opf & (REQ_NOWAIT | REQ_META | REQ_PRIO | REQ_SWAP)) ||
	    ioband_type(ic) != IOBAND_TYPE_CGROUP || current->journal_info ||
	    (current->bio_list && !bio_list_empty(&current->bio_list[0])) ||
	    !preemptible())
		return NULL;
	return ioband_flusher_css(ic, bio);
}

/*
 * Backpressure on writeback (ioband-design.rst section 17): while the group
 * of @css, the flusher's (ioband_bio_own_writeback()), holds a full share
 * of writeback, its flusher waits here, so that
 * the rest of its pages stay dirty, where the page cache's limits see
 * them, rather than held here as writeback. It waits for its own group
 * only, and never while that group's target drains.
 */
static void ioband_writeback_wait(struct dm_target *ti,
				  const struct cgroup_subsys_state *css)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_group *group;
	unsigned int wakes;
	unsigned long flags;
	u64 start_ns = 0;
	bool full;

	spin_lock_irqsave(&domain->lock, flags);
	for (;;) {
		rcu_read_lock();
		group = ioband_classify(ic, css);
		rcu_read_unlock();
		full = !ic->suspended && !ic->blocked &&
		       ioband_sched_writeback_full(&domain->sched,
						   &group->entity);
		if (!full)
			break;
		if (!start_ns) {
			start_ns = ktime_get_ns();
			group->stats.writeback_waits++;
		}
		wakes = domain->writeback_wakes;
		domain->writeback_waiters++;
		spin_unlock_irqrestore(&domain->lock, flags);
		wait_event_timeout(domain->writeback_wait,
				   READ_ONCE(domain->writeback_wakes) != wakes,
				   nsecs_to_jiffies(IOBAND_WRITEBACK_WAIT_POLL_NS));
		spin_lock_irqsave(&domain->lock, flags);
		domain->writeback_waiters--;
	}
	if (start_ns)
		group->stats.writeback_wait_ns += ktime_get_ns() - start_ns;
	spin_unlock_irqrestore(&domain->lock, flags);
}

/*
 * Items that the core found overdue since the last report (section 14a
 * of ioband-design.rst): said once, ratelimited, as they no longer hold
 * the domain back.
 */
static void __ioband_report_overdue(struct ioband_domain *domain)
{
	const struct ioband_sched *sched = &domain->sched;

	lockdep_assert_held(&domain->lock);
	if (likely(sched->stats.overdue == domain->overdue_reported))
		return;
	DMWARN_LIMIT("domain %s: %llu bio(s) below for over %llu ms, %u now: no longer counted against the window",
		     domain->id, sched->stats.overdue - domain->overdue_reported,
		     sched->window.overdue_ns / NSEC_PER_MSEC, sched->nr_overdue);
	domain->overdue_reported = sched->stats.overdue;
}

/*
 * Bios may wait with room below: under the range policies for a group
 * over its max, under the weight policies for a competing group's next
 * bio (at most 2 ms). Wake the worker when the earliest such wait ends.
 * Called whenever the dispatch loop will not run otherwise, so on most
 * submissions and completions while a group competes: a timer already
 * armed no later is left alone (moving it costs more than the early
 * run of the dispatch loop, which arms it again: ioband-design.rst
 * section 13 has the figures).
 */
static void __ioband_arm_limit_timer(struct ioband_domain *domain)
{
	u64 next_event_ns;

	lockdep_assert_held(&domain->lock);
	next_event_ns = ioband_sched_next_event_ns(&domain->sched);
	if (next_event_ns > domain->sched.now + IOBAND_BLOCKED_POLL_NS)
		next_event_ns = domain->sched.now + IOBAND_BLOCKED_POLL_NS;
	if (!next_event_ns ||
	    (hrtimer_is_queued(&domain->limit_timer) &&
	     ktime_to_ns(hrtimer_get_expires(&domain->limit_timer)) <=
	     next_event_ns))
		return;
	hrtimer_start(&domain->limit_timer, ns_to_ktime(next_event_ns),
		      HRTIMER_MODE_ABS);
}

/*
 * dm's fast internal suspend, which dm-stats uses for @stats_create and
 * @stats_delete, calls no hook of its targets: it blocks the device's new
 * IO and waits for every bio in it, the ones we hold included, which would
 * then go down only at their groups' pace (for a capped group's backlog,
 * minutes). So whenever the worker runs while bios are held, it looks for
 * a target whose device blocks IO although the target was not suspended,
 * and drains it (ioband_drain_work()); map sends that target's bios down
 * at once until it sees the device unblocked. The worker runs at least
 * every IOBAND_BLOCKED_POLL_NS while a group waits for its max, and after
 * completions otherwise.
 */
static void __ioband_find_blocked(struct ioband_domain *domain)
{
	struct ioband_c *ic;

	lockdep_assert_held(&domain->lock);
	if (!domain->sched.nr_queued)
		return;
	list_for_each_entry(ic, &domain->targets, domain_node) {
		if (ic->suspended || ic->blocked || !ioband_md_blocks_io(ic->ti))
			continue;
		ic->blocked = true;
		__ioband_wake_writeback(domain);
		queue_work(domain->wq, &ic->drain_work);
	}
}

/*
 * Sends down the bios the scheduler picks, while it picks any.
 *
 * They go down under a plug, so the window's sectors are in the plug
 * until it is flushed. A device that completes at submission some of the
 * time (a capped null_blk within its budget, a cache hit, or any such
 * device before the window learns that it completes inline) frees the
 * window as soon as the plug goes, but only then: when the window is
 * full of what this plug still holds and bios wait, the plug is flushed
 * and the scheduler asked again, so that such a device is fed a window
 * per flush, not a window per kick of this worker (at its floor, a
 * window is two 4 KiB bios). Elsewhere that costs one flush and one look
 * more per run.
 */
static void ioband_dispatch_work(struct work_struct *work)
{
	struct ioband_domain *domain = container_of(work, struct ioband_domain,
						    dispatch_work);
	struct ioband_sched_entity *entity;
	struct ioband_sched_item *item;
	struct ioband_group *group;
	struct ioband_bio *ib;
	unsigned long flags;
	struct blk_plug plug;
	unsigned int plugged = 0;
	bool wake_flushers = false;
	bool flush;
	u64 now_ns;

	blk_start_plug(&plug);
	for (;;) {
		/*
		 * The clock is read under the lock, so that a bio that map
		 * held meanwhile on another CPU was held before now.
		 */
		spin_lock_irqsave(&domain->lock, flags);
		item = ioband_sched_next(&domain->sched, &entity,
					 ktime_get_ns());
		now_ns = domain->sched.now;
		if (item) {
			ib = container_of(item, struct ioband_bio, item);
			group = ioband_entity_group(entity);
			ioband_group_account_wait(group, now_ns - ib->time_ns);
			__ioband_start(ib, group, now_ns);
			wake_flushers |= domain->writeback_waiters &&
					 !ioband_sched_writeback_full(&domain->sched,
								      entity);
		}
		flush = !item && plugged && domain->sched.nr_queued &&
			!ioband_sched_room(&domain->sched);
		if (wake_flushers && !item && !flush)
			__ioband_wake_writeback(domain);
		spin_unlock_irqrestore(&domain->lock, flags);
		if (flush) {
			blk_finish_plug(&plug);
			blk_start_plug(&plug);
			plugged = 0;
			continue;
		}
		if (!item)
			break;
		dm_submit_bio_remap(dm_bio_from_per_bio_data(ib, sizeof(*ib)),
				    NULL);
		plugged++;
	}
	blk_finish_plug(&plug);

	spin_lock_irqsave(&domain->lock, flags);
	__ioband_report_overdue(domain);
	__ioband_find_blocked(domain);
	__ioband_arm_limit_timer(domain);
	spin_unlock_irqrestore(&domain->lock, flags);
}

static enum hrtimer_restart ioband_limit_timer_fn(struct hrtimer *timer)
{
	struct ioband_domain *domain = container_of(timer, struct ioband_domain,
						    limit_timer);

	ioband_kick(domain);
	return HRTIMER_NORESTART;
}

/* ---- Domains ---- */

static struct ioband_domain *ioband_find_domain(const char *id)
{
	struct ioband_domain *domain;

	lockdep_assert_held(&ioband_domains_lock);
	list_for_each_entry(domain, &ioband_domains, list)
		if (!strcmp(domain->id, id))
			return domain;
	return NULL;
}

/*
 * The domain named @id, created with @params if it does not exist yet;
 * the caller's reference is dropped with ioband_put_domain().
 */
static struct ioband_domain *
ioband_get_domain(const char *id, const struct ioband_sched_params *params)
{
	struct ioband_domain *domain;

	mutex_lock(&ioband_domains_lock);
	domain = ioband_find_domain(id);
	if (domain) {
		domain->nr_targets++;
		goto out;
	}

	domain = kzalloc(sizeof(*domain), GFP_KERNEL);
	if (!domain)
		goto out;
	/*
	 * High priority: held bios go down only from this worker, and beside
	 * busy submitters a normal one ran late and left the device idle
	 * (ioband-design.rst section 7 has the figures).
	 */
	domain->wq = alloc_workqueue("kioband",
				     WQ_MEM_RECLAIM | WQ_HIGHPRI | WQ_PERCPU, 0);
	if (!domain->wq) {
		kfree(domain);
		domain = NULL;
		goto out;
	}
	strscpy(domain->id, id, sizeof(domain->id));
	domain->nr_targets = 1;
	spin_lock_init(&domain->lock);
	INIT_LIST_HEAD(&domain->targets);
	init_waitqueue_head(&domain->writeback_wait);
	ioband_sched_init(&domain->sched, params);
	INIT_WORK(&domain->dispatch_work, ioband_dispatch_work);
	ioband_hrtimer_setup(&domain->limit_timer, ioband_limit_timer_fn,
			     CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	list_add(&domain->list, &ioband_domains);
out:
	mutex_unlock(&ioband_domains_lock);
	return domain;
}

static void ioband_put_domain(struct ioband_domain *domain)
{
	mutex_lock(&ioband_domains_lock);
	if (--domain->nr_targets) {
		mutex_unlock(&ioband_domains_lock);
		return;
	}
	list_del(&domain->list);
	mutex_unlock(&ioband_domains_lock);
	/* The worker may arm the timer, and the timer queue the worker. */
	do {
		hrtimer_cancel(&domain->limit_timer);
		flush_workqueue(domain->wq);
	} while (hrtimer_active(&domain->limit_timer));
	destroy_workqueue(domain->wq);
	kfree(domain);
}

/* ---- Groups ---- */

/*
 * The core keeps the latest now_ns it was given as its clock, and calls
 * that take none (attach, detach, set_range, a policy switch) start tags
 * from it: bring it up to date first, or after an idle spell a group's
 * reservation and limit would start in the past, and it would burst.
 */
static void __ioband_sync_clock(struct ioband_domain *domain)
{
	lockdep_assert_held(&domain->lock);
	domain->sched.now = ktime_get_ns();
}

/*
 * Until its table is resumed, a group's entity is not attached to the
 * domain: it only carries the weight and range the table gave it.
 */
static void ioband_preset_entity(struct ioband_sched_entity *entity,
				 const struct ioband_group_arg *arg)
{
	entity->weight = ioband_spec_has_weight(arg->spec) ? arg->weight :
							     IOBAND_DEFAULT_WEIGHT;
	entity->min_kbps = arg->min_kbps;
	entity->max_kbps = arg->max_kbps;
}

/* A preset entity joins the domain, with its weight and range. */
static void __ioband_attach_entity(struct ioband_domain *domain,
				   struct ioband_sched_entity *entity)
{
	u32 min_kbps = entity->min_kbps, max_kbps = entity->max_kbps;

	lockdep_assert_held(&domain->lock);
	ioband_sched_entity_init(&domain->sched, entity, entity->weight);
	/* The table's ranges were checked: min <= max, or max 0. */
	WARN_ON_ONCE(!ioband_sched_set_range(&domain->sched, entity, min_kbps,
					     max_kbps));
}

/*
 * Takes @group, no longer in the group index, out of @ic; its held bios
 * move to the default group. The group is freed now, or by the completion
 * of its last bio in flight. (For a table never resumed the entities are
 * not attached, and the core leaves them alone.)
 */
static void __ioband_detach(struct ioband_c *ic, struct ioband_group *group)
{
	lockdep_assert_held(&ic->domain->lock);
	__ioband_sync_clock(ic->domain);
	ioband_group_set_remove(&ic->groups, group);
	ioband_sched_detach(&ic->domain->sched, &group->entity,
			    &ic->groups.default_group.entity);
	__ioband_wake_writeback(ic->domain);
	group->detached = true;
	if (!group->in_flight)
		ioband_free_group_rcu(group);
}

/*
 * Gives @entity the weight and range that @arg, a parsed group argument,
 * says. Returns false when the scheduler refuses one.
 */
static bool __ioband_apply_group_arg(struct ioband_domain *domain,
				     struct ioband_sched_entity *entity,
				     const struct ioband_group_arg *arg)
{
	struct ioband_sched *sched = &domain->sched;

	__ioband_sync_clock(domain);
	if (ioband_spec_has_range(arg->spec) &&
	    !ioband_sched_set_range(sched, entity, arg->min_kbps,
				    arg->max_kbps))
		return false;
	return !ioband_spec_has_weight(arg->spec) ||
	       ioband_sched_set_weight(sched, entity, arg->weight);
}

/*
 * A walk of all of a target's groups, the default group first if
 * @with_default: @visit is called on each, IOBAND_WALK_CHUNK at a time
 * under domain->lock, then @after_chunk, if set, with the lock dropped.
 * The walker holds groups_lock, so the attach-order list stays put
 * between chunks; @visit may take the group it is given out of it, and
 * stops the walk by setting @done.
 */
struct ioband_walk {
	void (*visit)(struct ioband_walk *walk, struct ioband_group *group,
		      bool is_default);
	void (*after_chunk)(struct ioband_walk *walk);
	struct ioband_c *ic;
	bool with_default;
	bool done;
};

/*
 * One chunk of a walk from @group on, the default group if @is_default:
 * the one section of a walk with interrupts off. Returns the group to go
 * on from, or NULL. Out of line, so that ftrace can time it (the test
 * ioband-lifecycle-scale prints the longest).
 */
static noinline struct ioband_group *
ioband_walk_chunk(struct ioband_walk *walk, struct ioband_group *group,
		  bool is_default)
{
	struct ioband_c *ic = walk->ic;
	struct ioband_group *next;
	unsigned long flags;
	unsigned int n;

	spin_lock_irqsave(&ic->domain->lock, flags);
	for (n = 0; group && !walk->done && n < IOBAND_WALK_CHUNK; n++) {
		next = is_default ? ic->groups.first : group->next;
		walk->visit(walk, group, is_default);
		group = next;
		is_default = false;
	}
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	return group;
}

static void ioband_walk_groups(struct ioband_c *ic, struct ioband_walk *walk)
{
	struct ioband_group *group;

	lockdep_assert_held(&ic->groups_lock);
	walk->ic = ic;
	group = walk->with_default ? &ic->groups.default_group :
				     ic->groups.first;
	if (!group)
		return;
	group = ioband_walk_chunk(walk, group, walk->with_default);
	for (;;) {
		if (walk->after_chunk)
			walk->after_chunk(walk);
		if (!group || walk->done)
			return;
		group = ioband_walk_chunk(walk, group, false);
	}
}

/* ---- Nested cgroup groups (section 19 of the design) ---- */

/*
 * The attached group of the nearest cgroup above cgroup @id, or NULL: at
 * the top, and for a cgroup that is gone or outside the caller's cgroup
 * namespace. The cgroup tree never changes shape under a cgroup, so this
 * changes only when groups are attached or detached. Under groups_lock.
 */
static struct ioband_group *ioband_cgroup_parent(struct ioband_c *ic, u64 id)
{
	struct ioband_group *parent = NULL;
	struct cgroup *cgrp;
	int level;

	lockdep_assert_held(&ic->groups_lock);
	cgrp = cgroup_get_from_id(id);
	if (IS_ERR_OR_NULL(cgrp))
		return NULL;
	for (level = cgrp->level - 1; level >= 0 && !parent; level--)
		parent = ioband_find_group(ic,
					   cgroup_id(cgroup_ancestor(cgrp, level)));
	cgroup_put(cgrp);
	return parent;
}

/* Whether cgroup @id is below @ancestor (a cgroup that has descendants). */
static bool ioband_cgroup_below(u64 id, struct cgroup *ancestor)
{
	struct cgroup *cgrp = cgroup_get_from_id(id);
	bool below;

	if (IS_ERR_OR_NULL(cgrp))
		return false;
	below = cgrp != ancestor && cgroup_is_descendant(cgrp, ancestor);
	cgroup_put(cgrp);
	return below;
}

/*
 * Whether @group has at most as many groups above it as the core allows;
 * it stops counting there.
 */
static bool ioband_depth_fits(const struct ioband_group *group)
{
	unsigned int depth = 0;

	for (group = group->parent; group; group = group->parent)
		if (++depth > IOBAND_SCHED_MAX_DEPTH)
			return false;
	return true;
}

/* Whether no group of @ic is nested deeper than the core allows. */
static bool ioband_nesting_fits(struct ioband_c *ic)
{
	struct ioband_group *group;

	lockdep_assert_held(&ic->groups_lock);
	for (group = ic->groups.first; group; group = group->next)
		if (!ioband_depth_fits(group))
			return false;
	return true;
}

/*
 * The table's groups, nested as their cgroups are: fails when they nest
 * deeper than the core allows. Under groups_lock, before the first resume.
 */
static bool ioband_nest_table_groups(struct ioband_c *ic)
{
	struct ioband_group *group;

	if (ioband_type(ic) != IOBAND_TYPE_CGROUP)
		return true;
	for (group = ic->groups.first; group; group = group->next)
		group->parent = ioband_cgroup_parent(ic, group->id);
	return ioband_nesting_fits(ic);
}

/* The scheduler nests @group's entity as its parent field says. */
static void ioband_sync_parent(struct ioband_walk *walk,
			       struct ioband_group *group, bool is_default)
{
	struct ioband_sched_entity *parent = NULL;

	if (group->parent)
		parent = &group->parent->entity;
	if (group->entity.parent != parent)
		ioband_sched_set_parent(&walk->ic->domain->sched,
					&group->entity, parent);
}

/* Every group at the top, as a target that goes away must leave them. */
static void ioband_unnest_group(struct ioband_walk *walk,
				struct ioband_group *group, bool is_default)
{
	group->parent = NULL;
	ioband_sync_parent(walk, group, is_default);
}

/*
 * @group, attached by a message under @parent, becomes the parent of the
 * groups below its cgroup that were @parent's, unless some would then
 * nest too deep: returns false then, having changed nothing. *@adopted
 * says whether it took any. Under groups_lock; the scheduler follows in
 * a walk of ioband_sync_parent().
 */
static bool ioband_adopt_below(struct ioband_c *ic, struct ioband_group *group,
			       struct ioband_group *parent, bool *adopted)
{
	struct ioband_group *other;
	struct cgroup *cgrp;
	bool fits;

	*adopted = false;
	cgrp = cgroup_get_from_id(group->id);
	/*
	 * A leaf cgroup, the common case, has no group below it: only its
	 * own depth to check, and attaching n groups costs O(n) lookups.
	 */
	if (IS_ERR_OR_NULL(cgrp) || !READ_ONCE(cgrp->nr_descendants)) {
		if (!IS_ERR_OR_NULL(cgrp))
			cgroup_put(cgrp);
		return ioband_depth_fits(group);
	}
	for (other = ic->groups.first; other; other = other->next)
		if (other != group && other->parent == parent &&
		    ioband_cgroup_below(other->id, cgrp)) {
			other->parent = group;
			*adopted = true;
		}
	cgroup_put(cgrp);
	fits = ioband_nesting_fits(ic);
	if (!fits) {
		for (other = ic->groups.first; other; other = other->next)
			if (other->parent == group)
				other->parent = parent;
		*adopted = false;
	}
	return fits;
}

/* ---- Suspend and resume ---- */

/*
 * A drain: the bios a chunk of groups held, sent down (outside the lock)
 * after each chunk.
 */
struct ioband_drain_walk {
	struct ioband_walk walk;
	struct ioband_sched_item *items;
	struct ioband_sched_item **tail;
};

static void ioband_drain_group(struct ioband_walk *walk,
			       struct ioband_group *group, bool is_default)
{
	struct ioband_drain_walk *dw = container_of(walk, struct ioband_drain_walk,
						    walk);
	struct ioband_sched_item *items, *item;
	struct ioband_bio *ib;
	u64 now_ns;

	if (!group->entity.nr_queued && !group->entity.waiting)
		return;
	now_ns = ktime_get_ns();
	items = ioband_sched_drain(&walk->ic->domain->sched, &group->entity,
				   now_ns);
	for (item = items; item; item = item->next) {
		ib = container_of(item, struct ioband_bio, item);
		ioband_group_account_wait(group, now_ns - ib->time_ns);
		__ioband_start(ib, group, now_ns);
		*dw->tail = item;
		dw->tail = &item->next;
	}
}

static void ioband_drain_submit(struct ioband_walk *walk)
{
	struct ioband_drain_walk *dw = container_of(walk, struct ioband_drain_walk,
						    walk);
	struct ioband_sched_item *item = dw->items, *next;
	struct ioband_bio *ib;

	while (item) {
		/* Once sent down, the bio and its item may be gone. */
		next = item->next;
		ib = container_of(item, struct ioband_bio, item);
		dm_submit_bio_remap(dm_bio_from_per_bio_data(ib, sizeof(*ib)),
				    NULL);
		item = next;
	}
	dw->items = NULL;
	dw->tail = &dw->items;
}

/*
 * Sends every bio @ic holds down at once, whatever its group's share or
 * max, for a suspend of this one target: its domain goes on scheduling
 * the others. The caller has set ic->suspended or ic->blocked, so map
 * holds none of its bios any more.
 */
static void ioband_drain(struct ioband_c *ic)
{
	struct ioband_drain_walk dw = {
		.walk = {
			.visit = ioband_drain_group,
			.after_chunk = ioband_drain_submit,
			.with_default = true,
		},
	};
	struct blk_plug plug;

	dw.tail = &dw.items;
	mutex_lock(&ic->groups_lock);
	blk_start_plug(&plug);
	ioband_walk_groups(ic, &dw.walk);
	blk_finish_plug(&plug);
	mutex_unlock(&ic->groups_lock);
}

static void ioband_drain_work(struct work_struct *work)
{
	ioband_drain(container_of(work, struct ioband_c, drain_work));
}

static void ioband_set_suspended(struct ioband_c *ic, bool suspended)
{
	unsigned long flags;

	spin_lock_irqsave(&ic->domain->lock, flags);
	ic->suspended = suspended;
	if (!suspended)
		ic->blocked = false;
	__ioband_wake_writeback(ic->domain);
	spin_unlock_irqrestore(&ic->domain->lock, flags);
}

static void ioband_apply_group(struct ioband_walk *walk,
			       struct ioband_group *group, bool is_default)
{
	__ioband_sync_clock(walk->ic->domain);
	__ioband_attach_entity(walk->ic->domain, &group->entity);
}

/*
 * The table's first resume: its knobs become the domain's, and its groups
 * join the domain. Until then the table changed nothing, so that one that
 * is never resumed, or is rejected with another target of its table,
 * leaves the domain and its groups as they were.
 */
static void ioband_apply(struct ioband_c *ic)
{
	struct ioband_walk walk = {
		.visit = ioband_apply_group,
		.with_default = true,
	};
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;

	mutex_lock(&ic->groups_lock);
	spin_lock_irqsave(&domain->lock, flags);
	__ioband_sync_clock(domain);
	/* ioband_parse_table() gives valid knobs. */
	WARN_ON_ONCE(!ioband_sched_set_params(&domain->sched, &ic->params));
	spin_unlock_irqrestore(&domain->lock, flags);
	ioband_walk_groups(ic, &walk);
	/* Every group is attached: now each may be another's parent. */
	walk.visit = ioband_sync_parent;
	ioband_walk_groups(ic, &walk);
	spin_lock_irqsave(&domain->lock, flags);
	list_add_tail(&ic->domain_node, &domain->targets);
	WRITE_ONCE(ic->applied, true);
	spin_unlock_irqrestore(&domain->lock, flags);
	mutex_unlock(&ic->groups_lock);
	wake_up_all(&ic->applied_wait);
	ioband_kick(domain);	/* a higher io_limit frees slots */
}

/*
 * dm waits for every bio we hold before a suspend completes: presuspend
 * drains this target, and until it resumes map sends its bios (those of
 * the file system's freeze) down at once, as urgent items. The domain's
 * other targets are scheduled as before.
 */
static void ioband_presuspend(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;

	ioband_set_suspended(ic, true);
	ioband_drain(ic);
}

static void ioband_presuspend_undo(struct dm_target *ti)
{
	ioband_set_suspended(ti->private, false);
}

static void ioband_resume(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;

	if (!ic->applied)
		ioband_apply(ic);
	ioband_set_suspended(ic, false);
}

/* ---- Constructor and destructor ---- */

static void ioband_dtr_group(struct ioband_walk *walk,
			     struct ioband_group *group, bool is_default)
{
	/* Its completion would find the target gone. */
	WARN_ON_ONCE(group->in_flight);
	__ioband_detach(walk->ic, group);
}

/* dtr runs after the last suspend: no bio of ours is held or in flight. */
static void ioband_dtr(struct dm_target *ti)
{
	struct ioband_walk walk = { .visit = ioband_dtr_group };
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;

	if (domain) {
		spin_lock_irqsave(&domain->lock, flags);
		if (ic->applied)
			list_del(&ic->domain_node);
		spin_unlock_irqrestore(&domain->lock, flags);
	}
	/* Out of domain->targets: the worker queues it no more. */
	cancel_work_sync(&ic->drain_work);
	/* First, as its resize worker may be walking the groups. */
	if (ic->group_index_ready)
		rhashtable_destroy(&ic->group_index);
	if (domain) {
		mutex_lock(&ic->groups_lock);
		if (ic->applied) {
			/* No group may go before a group nested under it. */
			walk.visit = ioband_unnest_group;
			ioband_walk_groups(ic, &walk);
			walk.visit = ioband_dtr_group;
		}
		ioband_walk_groups(ic, &walk);
		spin_lock_irqsave(&domain->lock, flags);
		/* Its heir is gone: the default group must hold nothing. */
		WARN_ON_ONCE(ic->groups.default_group.entity.nr_queued);
		ioband_sched_detach(&domain->sched,
				    &ic->groups.default_group.entity, NULL);
		spin_unlock_irqrestore(&domain->lock, flags);
		mutex_unlock(&ic->groups_lock);
		ioband_put_domain(domain);
	}
	mutex_destroy(&ic->groups_lock);
	free_percpu(ic->open_batch);
	free_percpu(ic->open_in_flight);
	free_percpu(ic->class_cache);
	free_percpu(ic->route_stats);
	if (ic->dev)
		dm_put_device(ti, ic->dev);
	kfree(ic);
}

/*
 * Builds the table's groups, not attached to the domain yet (the first
 * resume attaches them); what is left to find is an id given twice.
 */
static int ioband_add_table_groups(struct dm_target *ti,
				   const struct ioband_table *table)
{
	struct ioband_c *ic = ti->private;
	struct ioband_group_entry *entry;
	struct ioband_group_arg arg;
	unsigned long flags;
	unsigned int i;
	int ret;

	for (i = 0; i < table->nr_group_args; i++) {
		if (ioband_parse_table_group(table, i, &arg)) {
			ti->error = "group: malformed or out of range";
			return -EINVAL;
		}
		if (arg.is_default) {
			ioband_preset_entity(&ic->groups.default_group.entity,
					     &arg);
			continue;
		}
		entry = ioband_alloc_entry(arg.id);
		if (!entry) {
			ti->error = "Cannot allocate a group";
			return -ENOMEM;
		}
		ioband_preset_entity(&entry->group.entity, &arg);
		ret = rhashtable_lookup_insert_fast(&ic->group_index,
						    &entry->node,
						    ioband_group_index_params);
		if (ret) {
			ioband_free_entry(entry);
			if (ret != -EEXIST) {
				ti->error = "Cannot allocate a group";
				return ret;
			}
			DMERR("group '%s': id %llu is given twice",
			      table->group_args[i], arg.id);
			ti->error = "group: the same <id> is given twice";
			return -EINVAL;
		}
		spin_lock_irqsave(&ic->domain->lock, flags);
		ioband_group_set_add(&ic->groups, &entry->group);
		spin_unlock_irqrestore(&ic->domain->lock, flags);
	}
	return 0;
}

/*
 * Construct an ioband mapping:
 *
 *   <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *   <policy> <token_base> [:<default group>] [<id>:<group>]...
 *   [carryover=<n>]
 *
 * group_type: none | cgroup | uid | user | gid | pid | pgrp; for cgroup
 * the ids are cgroup v2 ids (the inode numbers of the cgroup directories).
 * policy: weight | weight-iosize (groups <id>:<weight>) | range-bw
 * (<id>:<min>:<max>, KB/s) | weight-range (<id>:<weight>:<min>:<max>);
 * every policy also takes the last form, so that a table keeps a weight
 * policy's ranges and range-bw's weights. io_throttle, io_limit and
 * token_base: 0 means the default; an io_limit below io_throttle is raised
 * to it, as dm-ioband did. The default weight is 100, carryover 2. The
 * domain's knobs (policy, token_base, io_throttle, io_limit, carryover)
 * are those of the latest table resumed in it. The core
 * (ioband_parse_table()) parses and checks the arguments; nothing changes
 * in the domain before the first resume (ioband_apply()).
 */
static int ioband_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct rhashtable_params index_params = ioband_group_index_params;
	char detail[IOBAND_ERROR_MAX];
	struct ioband_table table;
	struct ioband_c *ic;
	const char *error;
	int cpu, ret;

	error = ioband_parse_table(&table, argc, argv, detail, sizeof(detail));
	if (error) {
		if (detail[0])
			DMERR("%s", detail);
		ti->error = (char *)error;
		return -EINVAL;
	}

	ic = kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic) {
		ti->error = "Cannot allocate ioband context";
		return -ENOMEM;
	}
	ti->private = ic;
	ic->ti = ti;
	mutex_init(&ic->groups_lock);
	init_waitqueue_head(&ic->applied_wait);
	INIT_WORK(&ic->drain_work, ioband_drain_work);
	INIT_LIST_HEAD(&ic->domain_node);
	ic->md = dm_table_get_md(ti->table);
	ic->disk = dm_disk(ic->md);
	ic->open_batch = alloc_percpu(struct ioband_open_batch);
	if (!ic->open_batch) {
		ti->error = "Cannot allocate the open window's batches";
		ret = -ENOMEM;
		goto bad;
	}
	for_each_possible_cpu(cpu)
		raw_spin_lock_init(&per_cpu_ptr(ic->open_batch, cpu)->lock);
	ic->open_in_flight = alloc_percpu(atomic64_t);
	if (!ic->open_in_flight) {
		ti->error = "Cannot allocate the open window's counters";
		ret = -ENOMEM;
		goto bad;
	}
	ic->class_cache = alloc_percpu(struct ioband_class_cache);
	if (!ic->class_cache) {
		ti->error = "Cannot allocate the group cache";
		ret = -ENOMEM;
		goto bad;
	}
	ic->route_stats = alloc_percpu(struct ioband_route_stats);
	if (!ic->route_stats) {
		ti->error = "Cannot allocate the attribution counters";
		ret = -ENOMEM;
		goto bad;
	}
	ioband_group_set_init(&ic->groups);
	ic->groups.default_group.entity.weight = IOBAND_DEFAULT_WEIGHT;
	ic->stats_start_ns = ktime_get_ns();
	ic->type_index = table.type_index;
	ic->type = ioband_group_type_of(table.type_index);
	ic->params = table.params;
	ic->flusher_fn = ic->disk->bdi->wb.dwork.work.func;

	/* Sized for the table's groups; it grows with later attaches. */
	index_params.nelem_hint = table.nr_groups;
	ret = rhashtable_init(&ic->group_index, &index_params);
	if (ret) {
		ti->error = "Cannot allocate the group table";
		goto bad;
	}
	ic->group_index_ready = true;

	ic->domain = ioband_get_domain(table.domain_id, &table.params);
	if (!ic->domain) {
		ti->error = "Cannot allocate the bandwidth domain";
		ret = -ENOMEM;
		goto bad;
	}

	ret = ioband_add_table_groups(ti, &table);
	if (ret)
		goto bad;
	mutex_lock(&ic->groups_lock);
	ret = ioband_nest_table_groups(ic) ? 0 : -EINVAL;
	mutex_unlock(&ic->groups_lock);
	if (ret) {
		ti->error = "group: attached cgroups nest more than 8 deep";
		goto bad;
	}

	ret = dm_get_device(ti, table.device, dm_table_get_mode(ti->table),
			    &ic->dev);
	if (ret) {
		ti->error = "device: cannot open the device";
		goto bad;
	}

	/*
	 * dm splits bios at IOBAND_MAX_IO_SECTORS boundaries, and then at
	 * the largest request of the device below too: one bio (a writeback
	 * bio can cover megabytes) then occupies the device for
	 * milliseconds, not for a quarter of a second of a slow disk, and a
	 * reader waits behind no more than that.
	 */
	ret = dm_set_target_max_io_len(ti, IOBAND_MAX_IO_SECTORS);
	if (ret) {
		ti->error = "Cannot set the largest bio";
		goto bad;
	}

	ti->num_flush_bios = 1;
	ioband_let_flushes_bypass(ti);
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->per_io_data_size = sizeof(struct ioband_bio);
	/* dm_submit_bio_remap() accounts held bios when they go down. */
	ti->accounts_remapped_io = true;
	return 0;

bad:
	ioband_dtr(ti);
	return ret;
}

/*
 * The open window's path (ioband-design.rst section 14): while the scheduler
 * lets every bio through, @bio goes down with no shared lock taken, counted
 * in this CPU's batch for its group and in this CPU's open_in_flight, and
 * untimed; its
 * completion uncounts it and checks that it was inline
 * (ioband_end_open()). False, with nothing done, when it must go through
 * the scheduler: also when this CPU has IOBAND_OPEN_MAX_SECTORS below so.
 */
static bool ioband_map_open(struct dm_target *ti, struct bio *bio,
			    struct ioband_bio *ib, int dir)
{
	struct ioband_c *ic = ti->private;
	u32 sectors = bio_sectors(bio);
	unsigned long generation;
	atomic64_t *open;

	/* A change that this misses lets one bio through. */
	if (!data_race(ioband_sched_lets_all_through(&ic->domain->sched) &&
		       !ic->suspended && !ic->blocked))
		return false;
	/*
	 * A group that a detach takes out meanwhile stays in memory: the RCU
	 * grace period before it is freed waits for code that runs with
	 * preemption disabled too. On a preemptible kernel, unlike
	 * rcu_read_lock(), that costs no call, and the counts need it anyway.
	 */
	rcu_read_lock_sched();
	open = this_cpu_ptr(ic->open_in_flight);
	if ((atomic64_read(open) & IOBAND_OPEN_SECTORS_MASK) >=
	    IOBAND_OPEN_MAX_SECTORS) {
		rcu_read_unlock_sched();
		return false;
	}
	atomic64_add(IOBAND_OPEN_BIO + sectors, open);
	ib->open = true;
	ib->open_cpu = smp_processor_id();
	ib->item.sectors = sectors;
	ib->dispatcher = current;
	/* Before the lookup: see struct ioband_open_batch. */
	generation = smp_load_acquire(&ic->groups_generation);
	ioband_count_open(ic, ioband_classify(ic, ioband_bio_owner(ti, bio)),
			  generation, dir, sectors);
	rcu_read_unlock_sched();
	return true;
}

static int ioband_map(struct dm_target *ti, struct bio *bio)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct cgroup_subsys_state *css;
	struct ioband_group *group;
	unsigned long flags;
	u32 item_flags;
	bool now, kick;
	u64 now_ns;
	int dir;

	ib->group = NULL;
	ib->open = false;
	bio_set_dev(bio, ic->dev->bdev);
	if (!bio_sectors(bio))
		return DM_MAPIO_REMAPPED;	/* empty flush: never held */
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	dir = ioband_bio_dir(bio, &item_flags);
	if (dir < 0)
		return DM_MAPIO_REMAPPED;
	css = ioband_bio_own_writeback(ti, bio);
	if (css)
		ioband_writeback_wait(ti, css);
	if (ioband_map_open(ti, bio, ib, dir))
		return DM_MAPIO_REMAPPED;
	/*
	 * The device polls when the devices below do (dm's rule), but a
	 * scheduled bio goes down unpolled and completes by interrupt while
	 * its poller spins: the worker that sends a held one down does not
	 * poll, and a polled request may be served apart from the others
	 * below (null_blk does not cap its poll queues), outside its
	 * group's share. Only the open window's bios poll.
	 */
	bio->bi_opf &= ~REQ_POLLED;

	now_ns = ktime_get_ns();
	rcu_read_lock();
	css = ioband_bio_owner(ti, bio);
	if (ioband_bio_urgent(bio, css))
		item_flags |= IOBAND_ITEM_URGENT;
	ioband_sched_item_init(&ib->item, bio_sectors(bio), dir, item_flags);
	spin_lock_irqsave(&domain->lock, flags);
	/* A target being suspended holds nothing (ioband_drain()). */
	if (unlikely(ic->blocked) && !ioband_md_blocks_io(ti))
		ic->blocked = false;
	if (unlikely(ic->suspended || ic->blocked))
		ib->item.flags |= IOBAND_ITEM_URGENT;
	group = ioband_classify(ic, css);
	now = ioband_sched_submit(&domain->sched, &group->entity, &ib->item,
				  now_ns);
	__ioband_report_overdue(domain);
	/* Never before a time another CPU gave (ioband_dispatch_work()). */
	now_ns = domain->sched.now;
	if (now) {
		__ioband_start(ib, group, now_ns);
	} else {
		group->stats.delayed[dir]++;
		ib->time_ns = now_ns;
		/*
		 * The worker that sends it down may wait, and nobody there
		 * would retry it: a BLK_STS_AGAIN from below would fail a bio
		 * its group already paid for (io_uring retries only in the
		 * submitter's context).
		 */
		bio->bi_opf &= ~REQ_NOWAIT;
	}
	/* A bio that went down may have ended a wait: others may go too. */
	kick = ioband_sched_has_work(&domain->sched);
	if (!kick)
		__ioband_arm_limit_timer(domain);
	spin_unlock_irqrestore(&domain->lock, flags);
	rcu_read_unlock();

	if (kick)
		ioband_kick(domain);
	return now ? DM_MAPIO_REMAPPED : DM_MAPIO_SUBMITTED;
}

/*
 * A bio that went down past the scheduler (ioband_map_open()) completed:
 * if not inline, the scheduler must see bios again.
 */
static void ioband_end_open(struct ioband_c *ic, struct bio *bio,
			    const struct ioband_bio *ib)
{
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;

	atomic64_sub(IOBAND_OPEN_BIO + ib->item.sectors,
		     per_cpu_ptr(ic->open_in_flight, ib->open_cpu));
	if (ioband_completed_inline(bio, ib))
		return;
	spin_lock_irqsave(&domain->lock, flags);
	ioband_sched_missed_inline(&domain->sched);
	spin_unlock_irqrestore(&domain->lock, flags);
}

static int ioband_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_group *group = ib->group;
	struct ioband_group *gone = NULL;
	unsigned long flags;
	bool kick;

	if (ib->open) {
		ioband_end_open(ic, bio, ib);
		return DM_ENDIO_DONE;
	}
	if (!group)
		return DM_ENDIO_DONE;
	if (ioband_completed_inline(bio, ib))
		ib->item.flags |= IOBAND_ITEM_COMPLETED_INLINE;
	spin_lock_irqsave(&domain->lock, flags);
	/* Every bio that went down for a group comes back once. */
	WARN_ON_ONCE(!group->in_flight || !domain->sched.in_flight);
	if (!--group->in_flight && group->detached)
		gone = group;
	/* Read under the lock: never before the bio's dispatch. */
	kick = ioband_sched_complete(&domain->sched, &group->entity, &ib->item,
				     ktime_get_ns());
	__ioband_report_overdue(domain);
	group->stats.service_ns += domain->sched.now - ib->time_ns;
	if (!kick)
		__ioband_arm_limit_timer(domain);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (gone)
		ioband_free_group_rcu(gone);
	if (kick)
		ioband_kick(domain);
	return DM_ENDIO_DONE;
}

/* ---- Status and messages ---- */

/* A walk that writes each group's record into a status or message reply. */
struct ioband_emit_walk {
	struct ioband_walk walk;
	char *result;
	unsigned int maxlen;
	size_t sz;
	enum ioband_policy policy;	/* the table's group forms */
};

static struct ioband_emit_walk *ioband_emit_walk_of(struct ioband_walk *walk)
{
	struct ioband_emit_walk *ew = container_of(walk, struct ioband_emit_walk,
						   walk);

	/* The reply is full: dm asks again with more room. */
	if (ew->sz + 1 >= ew->maxlen)
		walk->done = true;
	return ew;
}

static void ioband_emit_status_group(struct ioband_walk *walk,
				     struct ioband_group *group,
				     bool is_default)
{
	struct ioband_emit_walk *ew = ioband_emit_walk_of(walk);
	struct ioband_group_stats st_now;
	const struct ioband_group_stats *st = &st_now;
	unsigned int maxlen = ew->maxlen;
	char *result = ew->result;
	size_t sz = ew->sz;

	ioband_read_stats(walk->ic, group, &st_now);
	if (is_default)
		DMEMIT(" -1");
	else
		DMEMIT(" %llu", group->id);
	DMEMIT(" %llu %llu %llu %llu %llu %llu",
	       st->ios[IOBAND_READ], st->delayed[IOBAND_READ],
	       st->sectors[IOBAND_READ], st->ios[IOBAND_WRITE],
	       st->delayed[IOBAND_WRITE], st->sectors[IOBAND_WRITE]);
	ew->sz = sz;
}

/* A group argument of the table, in the form its policy spells it. */
static void ioband_emit_table_group(struct ioband_walk *walk,
				    struct ioband_group *group,
				    bool is_default)
{
	struct ioband_emit_walk *ew = ioband_emit_walk_of(walk);
	const struct ioband_sched_entity *e = &group->entity;
	struct ioband_group_arg arg = {
		.id = is_default ? 0 : group->id,
		.is_default = is_default,
		.weight = e->weight,
		.min_kbps = e->min_kbps,
		.max_kbps = e->max_kbps,
	};
	char text[IOBAND_GROUP_ARG_MAX];
	unsigned int maxlen = ew->maxlen;
	char *result = ew->result;
	size_t sz = ew->sz;

	arg.spec = ioband_table_spec(ew->policy, &arg);
	ioband_format_group_arg(text, sizeof(text), &arg);
	DMEMIT(" %s", text);
	ew->sz = sz;
}

static void ioband_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_emit_walk ew = {
		.walk.with_default = true,
		.result = result,
		.maxlen = maxlen,
	};
	char knobs[IOBAND_GROUP_ARG_MAX];
	struct ioband_sched_params params;
	unsigned int type_index, nr_groups;
	unsigned long flags;
	size_t sz = 0;

	mutex_lock(&ic->groups_lock);
	spin_lock_irqsave(&domain->lock, flags);
	/* A table not resumed yet reports its own knobs, not the domain's. */
	params = ic->applied ? domain->sched.params : ic->params;
	type_index = ic->type_index;
	nr_groups = ic->groups.nr_groups;
	spin_unlock_irqrestore(&domain->lock, flags);

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s", domain->id);
		ew.walk.visit = ioband_emit_status_group;
		ew.sz = sz;
		ioband_fold_open_batches(ic);
		ioband_walk_groups(ic, &ew.walk);
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %s %u %u %s %s %u", ic->dev->name, domain->id,
		       params.io_throttle, params.io_limit,
		       ioband_group_type_name(type_index),
		       ioband_policy_name(params.policy), params.token_base);
		ew.walk.visit = ioband_emit_table_group;
		ew.policy = params.policy;
		ew.sz = sz;
		ioband_walk_groups(ic, &ew.walk);
		sz = ew.sz;
		ioband_format_table_knobs(knobs, sizeof(knobs), &params);
		DMEMIT("%s", knobs);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,ioband_device_id=%s,group_type=%s,policy=%s,groups=%u;",
		       ic->dev->name, domain->id,
		       ioband_group_type_name(type_index),
		       ioband_policy_name(params.policy), nr_groups);
		break;
	}
	mutex_unlock(&ic->groups_lock);
}

static void ioband_emit_stats_group(struct ioband_walk *walk,
				    struct ioband_group *group,
				    bool is_default)
{
	struct ioband_emit_walk *ew = ioband_emit_walk_of(walk);
	struct ioband_group_stats st_now;
	const struct ioband_group_stats *st = &st_now;
	unsigned int maxlen = ew->maxlen;
	char *result = ew->result;
	size_t sz = ew->sz;
	u64 open_ios;

	open_ios = ioband_read_stats(walk->ic, group, &st_now);
	if (is_default)
		DMEMIT("\ngroup=-1");
	else
		DMEMIT("\ngroup=%llu", group->id);
	DMEMIT(" weight=%u reads=%llu read_sectors=%llu writes=%llu write_sectors=%llu",
	       group->entity.weight, st->ios[IOBAND_READ],
	       st->sectors[IOBAND_READ], st->ios[IOBAND_WRITE],
	       st->sectors[IOBAND_WRITE]);
	DMEMIT(" delayed_reads=%llu delayed_writes=%llu queued=%u in_flight=%u",
	       st->delayed[IOBAND_READ], st->delayed[IOBAND_WRITE],
	       group->entity.nr_queued, group->in_flight);
	DMEMIT(" wait_ns=%llu wait_max_ns=%llu service_ns=%llu finish_tag=%llu min_kbps=%u max_kbps=%u writeback_waits=%llu writeback_wait_ns=%llu",
	       st->wait_ns, st->wait_max_ns, st->service_ns,
	       group->entity.finish, group->entity.min_kbps,
	       group->entity.max_kbps, st->writeback_waits,
	       st->writeback_wait_ns);
	DMEMIT(" open_ios=%llu parent=%llu", open_ios,
	       group->parent ? group->parent->id : 0);
	ew->sz = sz;
}

/* The stats message: the domain, then one line per group of this target. */
/*
 * @ic's route counters, added up over the CPUs with interrupts on: a bio
 * counted meanwhile may be in the sum or not.
 */
static void ioband_read_route_stats(struct ioband_c *ic,
				    struct ioband_route_stats *sum)
{
	const struct ioband_route_stats *rs;
	int cpu, route;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		rs = per_cpu_ptr(ic->route_stats, cpu);
		for (route = 0; route < IOBAND_NR_ROUTES; route++)
			sum->bios[route] += READ_ONCE(rs->bios[route]);
		sum->associated += READ_ONCE(rs->associated);
	}
}

/*
 * weight-time's model (ioband-design.rst section 18), under every policy:
 * each direction's service time (per IO in ns, per sector in ps), the
 * costs in thousandths of a sector-equivalent and what one is in ps, and
 * its inputs, each size class's mean size and least latency as
 * sectors:ns pairs joined by '/' ('-' for none).
 */
static void ioband_emit_time_model(const struct ioband_time_model *m,
				   char *result, unsigned int maxlen,
				   size_t *szp)
{
	static const char * const dir_names[IOBAND_NR_DIRS] = { "read", "write" };
	const struct ioband_time_class *c;
	size_t sz = *szp;
	const char *sep;
	u32 dir, i;

	for (dir = 0; dir < IOBAND_NR_DIRS; dir++)
		DMEMIT(" time_%s_io_ns=%llu time_%s_sector_ps=%llu time_%s_io_cost_milli=%llu time_%s_sector_cost_milli=%llu",
		       dir_names[dir], m->io_ns[dir], dir_names[dir],
		       (m->sector_ns[dir] * 1000) >> 16, dir_names[dir],
		       (m->io_cost[dir] * 1000) >> IOBAND_TIME_SHIFT,
		       dir_names[dir],
		       (m->sector_cost[dir] * 1000) >> IOBAND_TIME_SHIFT);
	DMEMIT(" time_unit_ps=%llu time_rate_limited=%d time_busy_pct=%u time_periods=%llu",
	       (m->unit_ns * 1000) >> 16, m->rate_limited, m->busy_pct,
	       m->periods);
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++) {
		DMEMIT(" time_%s_least=", dir_names[dir]);
		sep = "";
		for (i = 0; i < IOBAND_WINDOW_SIZE_CLASSES; i++) {
			c = &m->classes[dir][i];
			if (!c->least_ns || !c->items)
				continue;
			DMEMIT("%s%llu:%llu", sep,
			       div64_u64(c->sectors, c->items), c->least_ns);
			sep = "/";
		}
		if (!*sep)
			DMEMIT("-");
	}
	*szp = sz;
}

/*
 * The bios of @domain's targets that went down past the scheduler and are
 * still below, and their sectors: a bio mapped or completed on another
 * CPU meanwhile may be counted or not.
 */
static u64 __ioband_open_in_flight(struct ioband_domain *domain, u64 *sectors)
{
	struct ioband_c *ic;
	u64 bios = 0, v;
	int cpu;

	lockdep_assert_held(&domain->lock);
	*sectors = 0;
	list_for_each_entry(ic, &domain->targets, domain_node) {
		for_each_possible_cpu(cpu) {
			v = atomic64_read(per_cpu_ptr(ic->open_in_flight, cpu));
			bios += v >> IOBAND_OPEN_BIO_SHIFT;
			*sectors += v & IOBAND_OPEN_SECTORS_MASK;
		}
	}
	return bios;
}

static void ioband_emit_stats(struct ioband_c *ic, char *result,
			      unsigned int maxlen)
{
	const struct ioband_sched *sched = &ic->domain->sched;
	const struct ioband_window *w = &sched->window;
	struct ioband_emit_walk ew = {
		.walk = {
			.visit = ioband_emit_stats_group,
			.with_default = true,
		},
		.result = result,
		.maxlen = maxlen,
	};
	struct ioband_route_stats routes;
	u64 open_bios, open_sectors;
	unsigned long flags;
	size_t sz = 0;

	ioband_read_route_stats(ic, &routes);
	mutex_lock(&ic->groups_lock);
	spin_lock_irqsave(&ic->domain->lock, flags);
	open_bios = __ioband_open_in_flight(ic->domain, &open_sectors);
	DMEMIT("domain=%s policy=%s token_base=%u io_throttle=%u io_limit=%u carryover=%u in_flight=%llu queued=%u vtime=%llu elapsed_ns=%llu",
	       ic->domain->id, ioband_policy_name(sched->params.policy),
	       sched->token_base, sched->io_throttle, sched->io_limit,
	       sched->params.carryover, sched->in_flight + open_bios,
	       sched->nr_queued, sched->vtime,
	       ktime_get_ns() - ic->stats_start_ns);
	DMEMIT(" open_in_flight=%llu open_in_flight_sectors=%llu overdue=%llu overdue_in_flight=%u overdue_after_ns=%llu",
	       open_bios, open_sectors, sched->stats.overdue,
	       sched->nr_overdue, w->overdue_ns);
	DMEMIT(" window_sectors=%llu in_flight_sectors=%llu window_rate_kbps=%llu window_min_lat_ns=%llu window_periods=%llu window_full=%llu idle_waits=%llu urgent=%llu window_queueing_pct=%u window_inline=%d window_inline_closes=%u",
	       w->sectors, w->in_flight_sectors, w->rate / 2, w->min_lat_ns,
	       w->periods, sched->stats.window_full, sched->stats.idle_waits,
	       sched->stats.urgent, w->queueing * 100 / 256,
	       w->completes_inline, w->inline_closes);
	DMEMIT(" writeback_attribution=%s writeback_hold_sectors=%llu",
	       IOBAND_WRITEBACK_ATTRIBUTION, w->writeback_hold_sectors);
	ioband_emit_time_model(&sched->time_model, result, maxlen, &sz);
	DMEMIT(" time_window_items=%u epoch_tokens=%llu", w->items,
	       ioband_sched_epoch_tokens(sched));
	DMEMIT(" dm_layout=%s attributed_orig_bio=%llu attributed_wb=%llu attributed_task=%llu associated=%llu",
	       IOBAND_DM_LAYOUT_NAME, routes.bios[IOBAND_ROUTE_ORIG_BIO],
	       routes.bios[IOBAND_ROUTE_WB], routes.bios[IOBAND_ROUTE_TASK],
	       routes.associated);
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	ew.sz = sz;
	ioband_fold_open_batches(ic);
	ioband_walk_groups(ic, &ew.walk);
	mutex_unlock(&ic->groups_lock);
}

/*
 * A bio going down past the scheduler on another CPU meanwhile may count
 * before or after the reset.
 */
static void ioband_reset_group(struct ioband_walk *walk,
			       struct ioband_group *group, bool is_default)
{
	struct ioband_open_counts *counts =
		ioband_open_counts_of(walk->ic, group);
	struct ioband_group_stats zero = { 0 };
	int dir;

	group->stats = zero;
	for (dir = 0; dir < IOBAND_NR_DIRS; dir++) {
		atomic64_set(&counts->ios[dir], 0);
		atomic64_set(&counts->sectors[dir], 0);
	}
}

static void ioband_reset_stats(struct ioband_c *ic)
{
	struct ioband_walk walk = {
		.visit = ioband_reset_group,
		.with_default = true,
	};
	unsigned long flags;
	int cpu;

	mutex_lock(&ic->groups_lock);
	/* Counted before the reset, so that it clears them. */
	ioband_fold_open_batches(ic);
	ioband_walk_groups(ic, &walk);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(ic->route_stats, cpu), 0,
		       sizeof(struct ioband_route_stats));
	spin_lock_irqsave(&ic->domain->lock, flags);
	ic->stats_start_ns = ktime_get_ns();
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	mutex_unlock(&ic->groups_lock);
}

/* The setters of the messages that change one of the domain's knobs. */
static bool (* const ioband_knob_setters[])(struct ioband_sched *sched,
					    u32 value) = {
	[IOBAND_MSG_TOKEN] = ioband_sched_set_token_base,
	[IOBAND_MSG_CARRYOVER] = ioband_sched_set_carryover,
	[IOBAND_MSG_IO_LIMIT] = ioband_sched_set_io_limit,
	[IOBAND_MSG_IO_THROTTLE] = ioband_sched_set_io_throttle,
};

static enum ioband_message_fault
ioband_message_knob(struct ioband_c *ic, const struct ioband_message *msg)
{
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;
	bool valid;

	spin_lock_irqsave(&domain->lock, flags);
	valid = ioband_knob_setters[msg->kind](&domain->sched, msg->value);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (!valid)
		return IOBAND_FAULT_REFUSED;
	ioband_kick(domain);	/* a higher io_limit frees slots */
	return IOBAND_FAULT_NONE;
}

/*
 * Attaches a new group: into the domain and the attach order first, then
 * into the index, where map finds it. The type is checked under
 * groups_lock, which the type message takes too: no group is attached
 * under group_type none.
 */
/*
 * Under group type cgroup, where the group nests (section 19 of the
 * design): its parent, and the groups below its cgroup that it adopts;
 * the scheduler follows once the group is in the index.
 */
static enum ioband_message_fault
ioband_message_attach(struct ioband_c *ic, const struct ioband_message *msg)
{
	enum ioband_message_fault fault = IOBAND_FAULT_NONE;
	struct ioband_walk walk = { .visit = ioband_sync_parent };
	struct ioband_domain *domain = ic->domain;
	struct ioband_group *group, *parent = NULL, *other;
	struct ioband_group_entry *entry;
	struct ioband_sched_entity *entity;
	unsigned long flags;
	bool adopted = false;

	entry = ioband_alloc_entry(msg->group.id);
	if (!entry)
		return IOBAND_FAULT_NO_MEMORY;
	group = &entry->group;
	entity = &group->entity;

	mutex_lock(&ic->groups_lock);
	if (ioband_type(ic) == IOBAND_TYPE_CGROUP)
		parent = ioband_cgroup_parent(ic, msg->group.id);
	group->parent = parent;
	spin_lock_irqsave(&domain->lock, flags);
	if (ioband_type(ic) == IOBAND_TYPE_NONE) {
		fault = IOBAND_FAULT_NO_GROUPS;
	} else if (ioband_find_group(ic, msg->group.id)) {
		fault = IOBAND_FAULT_ATTACHED;
	} else {
		entity->weight = ioband_spec_has_weight(msg->group.spec) ?
				 msg->group.weight :
				 ic->groups.default_group.entity.weight;
		__ioband_sync_clock(domain);
		__ioband_attach_entity(domain, entity);
		ioband_group_set_add(&ic->groups, group);
	}
	spin_unlock_irqrestore(&domain->lock, flags);
	if (fault)
		goto out;
	if (ioband_type(ic) == IOBAND_TYPE_CGROUP &&
	    !ioband_adopt_below(ic, group, parent, &adopted))
		fault = IOBAND_FAULT_TOO_DEEP;
	else if (rhashtable_insert_fast(&ic->group_index, &entry->node,
					ioband_group_index_params))
		fault = IOBAND_FAULT_NO_MEMORY;
	if (fault) {
		/* Never found, so it holds nothing, and it adopts nobody. */
		for (other = ic->groups.first; other; other = other->next)
			if (other->parent == group)
				other->parent = parent;
		spin_lock_irqsave(&domain->lock, flags);
		ioband_group_set_remove(&ic->groups, group);
		ioband_sched_detach(&domain->sched, entity, NULL);
		spin_unlock_irqrestore(&domain->lock, flags);
		goto out;
	}
	ioband_groups_changed(ic);
	if (adopted) {
		ioband_walk_groups(ic, &walk);
	} else if (parent) {
		/* A leaf: only its own place, not a walk of every group. */
		spin_lock_irqsave(&domain->lock, flags);
		ioband_sched_set_parent(&domain->sched, entity,
					&parent->entity);
		spin_unlock_irqrestore(&domain->lock, flags);
	}
out:
	mutex_unlock(&ic->groups_lock);
	if (fault)
		ioband_free_entry(entry);
	return fault;
}

/*
 * Out of the index first, with interrupts on, then out of the domain under
 * its lock: a map that found the group before it left the index held that
 * lock while it used the group, and is done with it by now, so the group
 * may be freed.
 */
static enum ioband_message_fault
ioband_message_detach(struct ioband_c *ic, const struct ioband_message *msg)
{
	struct ioband_walk walk = { .visit = ioband_sync_parent };
	struct ioband_domain *domain = ic->domain;
	struct ioband_group_entry *entry;
	struct ioband_group *group, *other;
	unsigned long flags;

	mutex_lock(&ic->groups_lock);
	spin_lock_irqsave(&domain->lock, flags);
	group = ioband_find_group(ic, msg->group.id);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (group) {
		entry = container_of(group, struct ioband_group_entry, group);
		rhashtable_remove_fast(&ic->group_index, &entry->node,
				       ioband_group_index_params);
		ioband_groups_changed(ic);
		/* Its children move up to its parent first. */
		if (group->entity.nr_children) {
			for (other = ic->groups.first; other;
			     other = other->next)
				if (other->parent == group)
					other->parent = group->parent;
			ioband_walk_groups(ic, &walk);
		}
		spin_lock_irqsave(&domain->lock, flags);
		__ioband_detach(ic, group);
		spin_unlock_irqrestore(&domain->lock, flags);
	}
	mutex_unlock(&ic->groups_lock);
	if (!group)
		return IOBAND_FAULT_NOT_ATTACHED;
	ioband_kick(domain);
	return IOBAND_FAULT_NONE;
}

/* weight and range-bw: the group's weight or range. */
static enum ioband_message_fault
ioband_message_group(struct ioband_c *ic, const struct ioband_message *msg)
{
	struct ioband_domain *domain = ic->domain;
	struct ioband_group *group;
	unsigned long flags;
	bool valid = false;

	spin_lock_irqsave(&domain->lock, flags);
	group = msg->group.is_default ? &ic->groups.default_group :
		ioband_find_group(ic, msg->group.id);
	if (group)
		valid = __ioband_apply_group_arg(domain, &group->entity,
						 &msg->group);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (!group)
		return IOBAND_FAULT_NOT_ATTACHED;
	if (!valid)
		return IOBAND_FAULT_REFUSED;
	if (msg->kind == IOBAND_MSG_RANGE_BW)
		ioband_kick(domain);
	return IOBAND_FAULT_NONE;
}

static enum ioband_message_fault
ioband_message_policy(struct ioband_c *ic, const struct ioband_message *msg)
{
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;
	bool valid;

	spin_lock_irqsave(&domain->lock, flags);
	__ioband_sync_clock(domain);
	valid = ioband_sched_set_policy(&domain->sched, msg->value);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (!valid)
		return IOBAND_FAULT_REFUSED;
	ioband_kick(domain);	/* leaving a range policy frees capped groups */
	return IOBAND_FAULT_NONE;
}

/* Under groups_lock, which attach takes too (ioband_message_attach()). */
static enum ioband_message_fault
ioband_message_type(struct ioband_c *ic, const struct ioband_message *msg)
{
	enum ioband_message_fault fault = IOBAND_FAULT_NONE;
	unsigned long flags;

	mutex_lock(&ic->groups_lock);
	spin_lock_irqsave(&ic->domain->lock, flags);
	if (ic->groups.nr_groups) {
		fault = IOBAND_FAULT_BUSY;
	} else {
		ic->type_index = msg->value;
		WRITE_ONCE(ic->type, ioband_group_type_of(msg->value));
	}
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	mutex_unlock(&ic->groups_lock);
	return fault;
}

/*
 * Applies @msg, parsed by the core, to @ic. A table becomes live just
 * before its first resume applies it: a message in between (one sent
 * while a reload resumes) waits for that, up to a second; it would
 * change groups the domain does not know yet. A table left live and
 * never applied (a failed resume) refuses it.
 */
static enum ioband_message_fault
ioband_apply_message(struct ioband_c *ic, const struct ioband_message *msg,
		     char *result, unsigned int maxlen)
{
	if (msg->kind != IOBAND_MSG_STATS &&
	    !wait_event_timeout(ic->applied_wait, READ_ONCE(ic->applied), HZ))
		return IOBAND_FAULT_NOT_RESUMED;

	switch (msg->kind) {
	case IOBAND_MSG_ATTACH:
		return ioband_message_attach(ic, msg);
	case IOBAND_MSG_DETACH:
		return ioband_message_detach(ic, msg);
	case IOBAND_MSG_WEIGHT:
	case IOBAND_MSG_RANGE_BW:
		return ioband_message_group(ic, msg);
	case IOBAND_MSG_POLICY:
		return ioband_message_policy(ic, msg);
	case IOBAND_MSG_TYPE:
		return ioband_message_type(ic, msg);
	case IOBAND_MSG_TOKEN:
	case IOBAND_MSG_CARRYOVER:
	case IOBAND_MSG_IO_LIMIT:
	case IOBAND_MSG_IO_THROTTLE:
		return ioband_message_knob(ic, msg);
	case IOBAND_MSG_RESET:
		ioband_reset_stats(ic);
		return IOBAND_FAULT_NONE;
	case IOBAND_MSG_STATS:
		ioband_emit_stats(ic, result, maxlen);
		return IOBAND_FAULT_NONE;
	default:
		return IOBAND_FAULT_REFUSED;
	}
}

/*
 * A refused message's reason goes to the kernel log, the only place dm
 * lets a target say why (iobandctl points there). 20 a second on
 * average, in bursts of up to 100, keep every reason of a tool's batch
 * while a loop that sends a bad message over and over cannot flood the
 * log.
 */
static DEFINE_RATELIMIT_STATE(ioband_refusal_ratelimit, 5 * HZ, 100);

/*
 * Messages, all applied live (the core parses them and words the errors):
 *   attach <id>[:<weight>]   detach <id>   weight [<id>:]<weight>
 *   range-bw <id>:<min>:<max>   token <n>   carryover <n>   io_limit <n>
 *   io_throttle <n>   policy <name>   type <name>   reset   stats
 */
static int ioband_message(struct dm_target *ti, unsigned int argc,
			  char **argv, char *result, unsigned int maxlen)
{
	struct ioband_c *ic = ti->private;
	char error[IOBAND_ERROR_MAX];
	enum ioband_message_fault fault;
	struct ioband_message msg;
	int ret;

	ret = ioband_parse_message(&msg, argc, argv, error, sizeof(error));
	if (!ret) {
		fault = ioband_apply_message(ic, &msg, result, maxlen);
	} else if (msg.kind == IOBAND_MSG_ATTACH &&
		   ioband_type(ic) == IOBAND_TYPE_NONE) {
		/* attach under group_type none: that, before a malformed id. */
		fault = IOBAND_FAULT_NO_GROUPS;
	} else {
		if (__ratelimit(&ioband_refusal_ratelimit))
			DMERR("%s", error);
		return -EINVAL;
	}
	switch (fault) {
	case IOBAND_FAULT_NONE:
		return msg.kind == IOBAND_MSG_STATS;
	case IOBAND_FAULT_BUSY:
	case IOBAND_FAULT_NOT_RESUMED:
		ret = -EBUSY;
		break;
	case IOBAND_FAULT_NO_MEMORY:
		ret = -ENOMEM;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	ioband_message_error(&msg, fault, error, sizeof(error));
	if (__ratelimit(&ioband_refusal_ratelimit))
		DMERR("%s", error);
	return ret;
}

static int ioband_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct ioband_c *ic = ti->private;

	return fn(ti, ic->dev, 0, ti->len, data);
}

static struct target_type ioband_target = {
	.name = "ioband",
	.version = {0, 3, 0},
	.module = THIS_MODULE,
	.ctr = ioband_ctr,
	.dtr = ioband_dtr,
	.map = ioband_map,
	.end_io = ioband_end_io,
	.presuspend = ioband_presuspend,
	.presuspend_undo = ioband_presuspend_undo,
	.resume = ioband_resume,
	.status = ioband_status,
	.message = ioband_message,
	.iterate_devices = ioband_iterate_devices,
	/*
	 * map never sleeps on a REQ_NOWAIT bio (only its own flusher's
	 * async writeback may wait: ioband_bio_own_writeback()); bios go
	 * down to one device with nothing changed but their sector, so
	 * their integrity and inline crypto contexts hold.
	 */
	.features = DM_TARGET_NOWAIT | DM_TARGET_PASSES_INTEGRITY |
		    DM_TARGET_PASSES_CRYPTO,
};

static int __init dm_ioband_init(void)
{
	int ret = dm_register_target(&ioband_target);

	if (ret)
		return ret;
#if defined(IOBAND_DM_LAYOUT)
	DMINFO("writeback attribution: wb+orig-bio (the flusher's bdi_writeback, else each bio's original bio, dm's layout from this kernel's %s)",
	       IOBAND_DM_LAYOUT_FROM);
#elif defined(CONFIG_CGROUP_WRITEBACK)
	DMINFO("writeback attribution: wb (the flusher's bdi_writeback; built without dm's layout, so bios that dm's own worker submits are charged to it)");
#else
	DMWARN("writeback attribution: task (a kernel without CONFIG_CGROUP_WRITEBACK): writeback is charged to the flusher's group");
#endif
	return 0;
}

static void __exit dm_ioband_exit(void)
{
	dm_unregister_target(&ioband_target);
	/* Groups freed after a grace period (ioband_free_group_rcu()). */
	rcu_barrier();
}

module_init(dm_ioband_init);
module_exit(dm_ioband_exit);

MODULE_DESCRIPTION(DM_NAME " bandwidth sharing between groups by weight");
MODULE_LICENSE("GPL");
/* The release, from the top-level VERSION file (dm-ioband/Makefile). */
#ifdef IOBAND_VERSION
MODULE_VERSION(IOBAND_VERSION);
#endif
/* Where the build took dm's private layout: source, btf or none. */
MODULE_INFO(dm_layout, IOBAND_DM_LAYOUT_NAME);
