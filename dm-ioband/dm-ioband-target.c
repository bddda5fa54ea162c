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
 * map classifies a bio and asks the scheduler whether it may go down now;
 * if not, the bio waits in its group's queue, threaded through its per-bio
 * data, and map returns at once: a submitter never sleeps here. Completions
 * (end_io) free a slot below and kick the dispatch worker, which sends the
 * bios the scheduler picks with dm_submit_bio_remap(), under a plug.
 */

#include <linux/device-mapper.h>

#include <linux/bio.h>
#include <linux/blk-cgroup.h>
#include <linux/blkdev.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>

#include "ioband-compat.h"
#include "ioband-core.h"
#include "ioband-sched.h"

#define DM_MSG_PREFIX "ioband"

/* The largest bio ioband lets through, in sectors (512 KiB). */
#define IOBAND_MAX_IO_SECTORS	1024

#ifndef CONFIG_BLK_CGROUP
#error "dm-ioband needs a kernel with CONFIG_BLK_CGROUP"
#endif

/* The targets that share one ioband_device_id. */
struct ioband_domain {
	struct list_head list;		/* in ioband_domains */
	char id[IOBAND_DOMAIN_ID_MAX + 1];
	unsigned int nr_targets;	/* under ioband_domains_lock */

	/*
	 * Protects sched, nr_suspended and every target's groups and their
	 * counters. Taken from end_io, so with interrupts off.
	 */
	spinlock_t lock;
	struct ioband_sched sched;
	unsigned int nr_suspended;	/* targets draining for a suspend */

	struct workqueue_struct *wq;
	struct work_struct dispatch_work;
	/* Wakes the worker when a group held back by its max may go. */
	struct hrtimer limit_timer;
};

static LIST_HEAD(ioband_domains);
static DEFINE_MUTEX(ioband_domains_lock);	/* protects ioband_domains */

struct ioband_c {
	struct dm_dev *dev;
	struct ioband_domain *domain;
	unsigned int type_index;	/* ioband_parse_group_type()'s */
	bool suspended;			/* counted in domain->nr_suspended */

	/* Under domain->lock. */
	struct ioband_group_set groups;
	struct ioband_group **buckets;
	u64 stats_start_ns;		/* counters started or were reset */
};

/*
 * Per-bio data. A held bio waits in its group's queue through @item;
 * @group is the group the bio went down for, NULL when it bypassed the
 * scheduler; @time_ns is when it was held, then when it went down.
 */
struct ioband_bio {
	struct ioband_sched_item item;
	struct ioband_group *group;
	u64 time_ns;
};

static enum ioband_group_type ioband_type(const struct ioband_c *ic)
{
	return ioband_group_type_of(ic->type_index);
}

/*
 * Which cgroup owns a bio
 *
 * Inside map the clone has no blkg yet: dm allocates it without a block
 * device and copies the original bio's cgroup association only when it
 * submits the clone. Asking the current task instead is right for
 * synchronous submitters and wrong for writeback by the flusher, the data
 * half of a PREFLUSH write and bios dm deferred across a suspend: those run
 * in kernel threads. Every kernel from 6.1 to 7.3 does so (alloc_tio()
 * clones with a NULL bdev, so __bio_clone() copies no association;
 * dm_submit_bio_remap() calls bio_clone_blkg_association() later), and no
 * exported function gives a target the original bio. It is reachable only
 * through dm's private per-io structures, struct dm_target_io and struct
 * dm_io of drivers/md/dm-core.h, which the headers lack. Their offsets come
 * from ioband-dm-layout.h, which Kbuild generates by compiling
 * ioband-dm-layout.c against this very kernel's dm-core.h (IOBAND_DM_SOURCE).
 * Each use is validated (both magic numbers, our target, our mapped device
 * in tio->io->md and as the original bio's disk), and the current task's
 * cgroup is the fallback. A module built without that source charges every
 * bio to the submitting task, and says so at load and in the stats
 * message (writeback_attribution=task).
 */
#ifdef IOBAND_DM_LAYOUT
#include "ioband-dm-layout.h"

#define IOBAND_WRITEBACK_ATTRIBUTION	"orig-bio"

/* The field of @type at @offset in dm's private struct at @base. */
#define ioband_dm_field(type, base, offset) \
	(*(type *)((char *)(base) + (offset)))

static struct bio *ioband_orig_bio(struct dm_target *ti, struct bio *clone)
{
	struct mapped_device *md = dm_table_get_md(ti->table);
	void *tio = (char *)clone - IOBAND_TIO_CLONE;
	struct bio *orig;
	void *io;

	if (ioband_dm_field(unsigned short, tio, IOBAND_TIO_MAGIC) !=
	    IOBAND_DM_TIO_MAGIC ||
	    ioband_dm_field(struct dm_target *, tio, IOBAND_TIO_TI) != ti)
		return NULL;
	io = ioband_dm_field(void *, tio, IOBAND_TIO_IO);
	if (!io ||
	    ioband_dm_field(unsigned short, io, IOBAND_IO_MAGIC) !=
	    IOBAND_DM_IO_MAGIC ||
	    ioband_dm_field(struct mapped_device *, io, IOBAND_IO_MD) != md)
		return NULL;
	orig = ioband_dm_field(struct bio *, io, IOBAND_IO_ORIG_BIO);
	if (!orig || !orig->bi_bdev || orig->bi_bdev->bd_disk != dm_disk(md))
		return NULL;
	return orig;
}
#else
#define IOBAND_WRITEBACK_ATTRIBUTION	"task"

static struct bio *ioband_orig_bio(struct dm_target *ti, struct bio *clone)
{
	return NULL;
}
#endif

/*
 * The io controller's css that owns @bio, the one io.stat charges. The
 * caller holds rcu_read_lock(): the current task's css is only stable
 * under it (the original bio pins its own).
 */
static struct cgroup_subsys_state *ioband_bio_css(struct dm_target *ti,
						  struct bio *bio)
{
	struct cgroup_subsys_state *css = NULL;
	struct bio *orig = ioband_orig_bio(ti, bio);

	if (orig)
		css = bio_blkcg_css(orig);
	if (!css)
		css = task_css(current, io_cgrp_id);
	return css;
}

/*
 * The nearest attached group of @cgrp or of one of its ancestors, so that
 * child cgroups share their attached parent's weight.
 */
static struct ioband_group *__ioband_cgroup_group(struct ioband_c *ic,
						  struct cgroup *cgrp)
{
	struct ioband_group *group;
	int level;

	for (level = cgrp->level; level >= 0; level--) {
		group = ioband_group_find(&ic->groups,
					  cgroup_id(cgroup_ancestor(cgrp, level)));
		if (group)
			return group;
	}
	return &ic->groups.default_group;
}

/*
 * The group that @bio, a read or write, is charged to. Types other than
 * cgroup look at the submitting task: writeback by the flusher is not
 * charged to the writer under them.
 */
static struct ioband_group *__ioband_classify(struct dm_target *ti,
					      struct bio *bio)
{
	struct ioband_c *ic = ti->private;
	struct cgroup_subsys_state *css;
	struct ioband_group *group;
	u64 id;

	lockdep_assert_held(&ic->domain->lock);
	if (!ic->groups.nr_groups)
		return &ic->groups.default_group;

	switch (ioband_type(ic)) {
	case IOBAND_TYPE_CGROUP:
		css = ioband_bio_css(ti, bio);
		if (css)
			return __ioband_cgroup_group(ic, css->cgroup);
		return &ic->groups.default_group;
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
	group = ioband_group_find(&ic->groups, id);
	return group ? group : &ic->groups.default_group;
}

/*
 * Bios that everyone may be waiting for go down at once and are charged
 * to their group as debt (ioband-sched.c section 16): what blk-cgroup's
 * bio_issue_as_root_blkg() issues as root (metadata, swap), priority IO,
 * and the journal's writes, that is sync, FUA or PREFLUSH writes that a
 * kernel thread issues for the root cgroup (jbd2, xfsaild). A tenant's
 * own O_SYNC or FUA writes are not among them: they would escape its
 * weight. The caller holds rcu_read_lock().
 */
static bool ioband_bio_urgent(struct dm_target *ti, struct bio *bio)
{
	struct cgroup_subsys_state *css;

	if (bio->bi_opf & (REQ_META | REQ_PRIO | REQ_SWAP))
		return true;
	if (!op_is_write(bio_op(bio)) ||
	    !(bio->bi_opf & (REQ_SYNC | REQ_FUA | REQ_PREFLUSH)) ||
	    !(current->flags & PF_KTHREAD))
		return false;
	css = ioband_bio_css(ti, bio);
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
	group->in_flight++;
	ioband_group_account(group, ib->item.dir, ib->item.sectors);
}

static void ioband_kick(struct ioband_domain *domain)
{
	queue_work(domain->wq, &domain->dispatch_work);
}

/*
 * Bios may wait with room below: under the range policies for a group
 * over its max, under the weight policies for a competing group's next
 * bio (at most 2 ms). Wake the worker when the earliest such wait ends.
 * Called whenever the dispatch loop will not run otherwise.
 */
static void __ioband_arm_limit_timer(struct ioband_domain *domain)
{
	u64 next_event_ns;

	lockdep_assert_held(&domain->lock);
	next_event_ns = ioband_sched_next_event_ns(&domain->sched);
	if (next_event_ns)
		hrtimer_start(&domain->limit_timer, ns_to_ktime(next_event_ns),
			      HRTIMER_MODE_ABS);
}

/* Sends down the bios the scheduler picks, while it picks any. */
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
	u64 now_ns;

	blk_start_plug(&plug);
	for (;;) {
		now_ns = ktime_get_ns();
		spin_lock_irqsave(&domain->lock, flags);
		item = ioband_sched_next(&domain->sched, &entity, now_ns);
		if (item) {
			ib = container_of(item, struct ioband_bio, item);
			group = ioband_entity_group(entity);
			ioband_group_account_wait(group, now_ns - ib->time_ns);
			__ioband_start(ib, group, now_ns);
		}
		spin_unlock_irqrestore(&domain->lock, flags);
		if (!item)
			break;
		dm_submit_bio_remap(dm_bio_from_per_bio_data(ib, sizeof(*ib)),
				    NULL);
	}
	blk_finish_plug(&plug);

	spin_lock_irqsave(&domain->lock, flags);
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
	 * (eq8 at io_limit 8: 85.6% of dm-linear's throughput, 100.9% so).
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

/* Attaches a new group @id of @weight to @ic. */
static int ioband_attach(struct ioband_c *ic, u64 id, u32 weight)
{
	struct ioband_domain *domain = ic->domain;
	struct ioband_group *group;
	unsigned long flags;
	bool attached;

	group = kzalloc(sizeof(*group), GFP_KERNEL);
	if (!group)
		return -ENOMEM;
	group->id = id;

	spin_lock_irqsave(&domain->lock, flags);
	attached = ioband_group_attach(&ic->groups, group);
	if (attached)
		ioband_sched_entity_init(&domain->sched, &group->entity, weight);
	spin_unlock_irqrestore(&domain->lock, flags);

	if (!attached) {
		kfree(group);
		return -EEXIST;
	}
	return 0;
}

/*
 * Takes @group out of @ic; its held bios move to the default group. The
 * group is freed now, or by the completion of its last bio in flight.
 */
static void __ioband_detach(struct ioband_c *ic, struct ioband_group *group)
{
	lockdep_assert_held(&ic->domain->lock);
	ioband_group_detach(&ic->groups, group);
	ioband_sched_detach(&ic->domain->sched, &group->entity,
			    &ic->groups.default_group.entity);
	group->detached = true;
	if (!group->in_flight)
		kfree(group);
}

/*
 * Gives @entity the weight and range that @arg, a parsed group argument,
 * says. Returns false when the scheduler refuses one.
 */
static bool __ioband_apply_group_arg(struct ioband_sched *sched,
				     struct ioband_sched_entity *entity,
				     const struct ioband_group_arg *arg)
{
	if (ioband_spec_has_range(arg->spec) &&
	    !ioband_sched_set_range(sched, entity, arg->min_kbps,
				    arg->max_kbps))
		return false;
	return !ioband_spec_has_weight(arg->spec) ||
	       ioband_sched_set_weight(sched, entity, arg->weight);
}

/*
 * Attaches the table's groups, parsed and checked by the core: what is
 * left to find is an id given twice.
 */
static int ioband_attach_groups(struct dm_target *ti,
				const struct ioband_table *table)
{
	struct ioband_c *ic = ti->private;
	struct ioband_sched *sched = &ic->domain->sched;
	struct ioband_group_arg arg;
	struct ioband_group *group;
	unsigned int hash_bits, i;
	unsigned long flags;
	const char *text;
	bool valid;
	int ret;

	hash_bits = ioband_hash_bits_for(table->nr_groups);
	ic->buckets = kvcalloc(1U << hash_bits, sizeof(*ic->buckets), GFP_KERNEL);
	if (!ic->buckets) {
		ti->error = "Cannot allocate the group table";
		return -ENOMEM;
	}
	ioband_group_set_init(&ic->groups, ic->buckets, hash_bits);
	spin_lock_irqsave(&ic->domain->lock, flags);
	ioband_sched_entity_init(sched, &ic->groups.default_group.entity,
				 IOBAND_DEFAULT_WEIGHT);
	spin_unlock_irqrestore(&ic->domain->lock, flags);

	for (i = 0; i < table->nr_group_args; i++) {
		text = table->group_args[i];
		if (ioband_parse_group_arg(text, table->spec, 0, &arg)) {
			ti->error = "group: malformed or out of range";
			return -EINVAL;
		}
		if (!arg.is_default) {
			ret = ioband_attach(ic, arg.id, IOBAND_DEFAULT_WEIGHT);
			if (ret == -EEXIST) {
				DMERR("group '%s': id %llu is given twice",
				      text, arg.id);
				ti->error = "group: the same <id> is given twice";
				return -EINVAL;
			}
			if (ret) {
				ti->error = "Cannot allocate a group";
				return ret;
			}
		}

		spin_lock_irqsave(&ic->domain->lock, flags);
		group = arg.is_default ? &ic->groups.default_group :
					 ioband_group_find(&ic->groups, arg.id);
		valid = __ioband_apply_group_arg(sched, &group->entity, &arg);
		spin_unlock_irqrestore(&ic->domain->lock, flags);
		if (!valid) {
			ti->error = "group: out of range";
			return -EINVAL;
		}
	}
	return 0;
}

/* dtr runs after the last suspend: no bio of ours is held or in flight. */
static void ioband_dtr(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;
	struct ioband_group *group;
	unsigned long flags;

	if (ic->domain) {
		spin_lock_irqsave(&ic->domain->lock, flags);
		while ((group = ic->groups.first))
			__ioband_detach(ic, group);
		ioband_sched_detach(&ic->domain->sched,
				    &ic->groups.default_group.entity, NULL);
		if (ic->suspended)
			ic->domain->nr_suspended--;
		ioband_sched_set_passthrough(&ic->domain->sched,
					     ic->domain->nr_suspended);
		spin_unlock_irqrestore(&ic->domain->lock, flags);
		ioband_put_domain(ic->domain);
	}
	kvfree(ic->buckets);
	if (ic->dev)
		dm_put_device(ti, ic->dev);
	kfree(ic);
}

/*
 * Construct an ioband mapping:
 *
 *   <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *   <policy> <token_base> [:<default group>] [<id>:<group>]...
 *
 * group_type: none | cgroup | uid | user | gid | pid | pgrp; for cgroup
 * the ids are cgroup v2 ids (the inode numbers of the cgroup directories).
 * policy: weight | weight-iosize (groups <id>:<weight>) | range-bw
 * (<id>:<min>:<max>, KB/s) | weight-range (<id>:<weight>:<min>:<max>).
 * io_throttle, io_limit and token_base: 0
 * means the default; an io_limit below io_throttle is raised to it, as
 * dm-ioband did. The default weight is 100. The domain's knobs (policy,
 * token_base, io_throttle, io_limit) are the latest loaded table's.
 * The core (ioband_parse_table()) parses and checks the arguments.
 */
static int ioband_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	char detail[IOBAND_ERROR_MAX];
	struct ioband_table table;
	unsigned long flags;
	struct ioband_c *ic;
	const char *error;
	int ret;

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
	ic->stats_start_ns = ktime_get_ns();
	ic->type_index = table.type_index;

	ic->domain = ioband_get_domain(table.domain_id, &table.params);
	if (!ic->domain) {
		ti->error = "Cannot allocate the bandwidth domain";
		ret = -ENOMEM;
		goto bad;
	}

	ret = ioband_attach_groups(ti, &table);
	if (ret)
		goto bad;

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

	/* Nothing fails from here: the table's knobs become the domain's. */
	spin_lock_irqsave(&ic->domain->lock, flags);
	table.params.carryover = ic->domain->sched.params.carryover;
	ioband_sched_set_params(&ic->domain->sched, &table.params);
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	ioband_kick(ic->domain);

	ti->num_flush_bios = 1;
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

static int ioband_map(struct dm_target *ti, struct bio *bio)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_group *group;
	unsigned long flags;
	u32 item_flags;
	bool now, kick;
	u64 now_ns;
	int dir;

	ib->group = NULL;
	bio_set_dev(bio, ic->dev->bdev);
	if (!bio_sectors(bio))
		return DM_MAPIO_REMAPPED;	/* empty flush: never held */
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	dir = ioband_bio_dir(bio, &item_flags);
	if (dir < 0)
		return DM_MAPIO_REMAPPED;

	now_ns = ktime_get_ns();
	rcu_read_lock();
	/* A polled bio is urgent too: its poller spins until it completes. */
	if (ioband_bio_urgent(ti, bio) || ioband_bio_must_not_wait(bio))
		item_flags |= IOBAND_ITEM_URGENT;
	ioband_sched_item_init(&ib->item, bio_sectors(bio), dir, item_flags);
	spin_lock_irqsave(&domain->lock, flags);
	group = __ioband_classify(ti, bio);
	now = ioband_sched_submit(&domain->sched, &group->entity, &ib->item,
				  now_ns);
	if (now) {
		__ioband_start(ib, group, now_ns);
	} else {
		group->stats.delayed[dir]++;
		ib->time_ns = now_ns;
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

static int ioband_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_group *group = ib->group;
	struct ioband_group *gone = NULL;
	unsigned long flags;
	u64 now_ns;
	bool kick;

	if (!group)
		return DM_ENDIO_DONE;
	now_ns = ktime_get_ns();
	spin_lock_irqsave(&domain->lock, flags);
	group->stats.service_ns += now_ns - ib->time_ns;
	if (!--group->in_flight && group->detached)
		gone = group;
	kick = ioband_sched_complete(&domain->sched, &group->entity, &ib->item,
				     now_ns);
	if (!kick)
		__ioband_arm_limit_timer(domain);
	spin_unlock_irqrestore(&domain->lock, flags);
	kfree(gone);
	if (kick)
		ioband_kick(domain);
	return DM_ENDIO_DONE;
}

/*
 * dm waits for every bio we hold before it suspends. While any target of
 * a domain is suspending or suspended, the domain sends every held bio
 * down and every new one at once.
 */
static void ioband_set_suspended(struct ioband_c *ic, bool suspended)
{
	struct ioband_domain *domain = ic->domain;
	unsigned long flags;

	spin_lock_irqsave(&domain->lock, flags);
	if (ic->suspended != suspended) {
		ic->suspended = suspended;
		if (suspended)
			domain->nr_suspended++;
		else
			domain->nr_suspended--;
		ioband_sched_set_passthrough(&domain->sched,
					     domain->nr_suspended);
	}
	spin_unlock_irqrestore(&domain->lock, flags);
}

static void ioband_presuspend(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;

	ioband_set_suspended(ic, true);
	ioband_kick(ic->domain);
	flush_workqueue(ic->domain->wq);
}

static void ioband_presuspend_undo(struct dm_target *ti)
{
	ioband_set_suspended(ti->private, false);
}

static void ioband_resume(struct dm_target *ti)
{
	ioband_set_suspended(ti->private, false);
}

static void ioband_emit_group(const struct ioband_group *group, bool is_default,
			      char *result, unsigned int maxlen, size_t *psz)
{
	const struct ioband_group_stats *st = &group->stats;
	size_t sz = *psz;

	if (is_default)
		DMEMIT(" -1");
	else
		DMEMIT(" %llu", group->id);
	DMEMIT(" %llu %llu %llu %llu %llu %llu",
	       st->ios[IOBAND_READ], st->delayed[IOBAND_READ],
	       st->sectors[IOBAND_READ], st->ios[IOBAND_WRITE],
	       st->delayed[IOBAND_WRITE], st->sectors[IOBAND_WRITE]);
	*psz = sz;
}

/* A group argument of the table, as the policy's @spec spells it. */
static void ioband_emit_spec(const struct ioband_group *group, bool is_default,
			     enum ioband_spec spec, char *result,
			     unsigned int maxlen, size_t *psz)
{
	const struct ioband_sched_entity *e = &group->entity;
	const struct ioband_group_arg arg = {
		.id = is_default ? 0 : group->id,
		.is_default = is_default,
		.spec = spec,
		.weight = e->weight,
		.min_kbps = e->min_kbps,
		.max_kbps = e->max_kbps,
	};
	char text[IOBAND_GROUP_ARG_MAX];
	size_t sz = *psz;

	ioband_format_group_arg(text, sizeof(text), &arg);
	DMEMIT("%s", text);
	*psz = sz;
}

static void ioband_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct ioband_c *ic = ti->private;
	struct ioband_domain *domain = ic->domain;
	const struct ioband_sched_params *params = &domain->sched.params;
	const struct ioband_group *group;
	unsigned long flags;
	size_t sz = 0;

	spin_lock_irqsave(&domain->lock, flags);
	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%s", domain->id);
		ioband_emit_group(&ic->groups.default_group, true, result,
				  maxlen, &sz);
		for (group = ic->groups.first; group; group = group->next)
			ioband_emit_group(group, false, result, maxlen, &sz);
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %s %u %u %s %s %u ", ic->dev->name, domain->id,
		       params->io_throttle, params->io_limit,
		       ioband_group_type_name(ic->type_index),
		       ioband_policy_name(params->policy), params->token_base);
		ioband_emit_spec(&ic->groups.default_group, true,
				 ioband_policy_spec(params->policy), result,
				 maxlen, &sz);
		for (group = ic->groups.first; group; group = group->next) {
			DMEMIT(" ");
			ioband_emit_spec(group, false,
					 ioband_policy_spec(params->policy),
					 result, maxlen, &sz);
		}
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,ioband_device_id=%s,group_type=%s,policy=%s,groups=%u;",
		       ic->dev->name, domain->id,
		       ioband_group_type_name(ic->type_index),
		       ioband_policy_name(params->policy),
		       ic->groups.nr_groups);
		break;
	}
	spin_unlock_irqrestore(&domain->lock, flags);
}

static void ioband_emit_group_stats(const struct ioband_group *group,
				    bool is_default, char *result,
				    unsigned int maxlen, size_t *psz)
{
	const struct ioband_group_stats *st = &group->stats;
	size_t sz = *psz;

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
	DMEMIT(" wait_ns=%llu wait_max_ns=%llu service_ns=%llu finish_tag=%llu min_kbps=%u max_kbps=%u",
	       st->wait_ns, st->wait_max_ns, st->service_ns,
	       group->entity.finish, group->entity.min_kbps,
	       group->entity.max_kbps);
	*psz = sz;
}

/* The stats message: the domain, then one line per group of this target. */
static void __ioband_emit_stats(struct ioband_c *ic, char *result,
				unsigned int maxlen)
{
	const struct ioband_sched *sched = &ic->domain->sched;
	const struct ioband_window *w = &sched->window;
	const struct ioband_group *group;
	size_t sz = 0;

	DMEMIT("domain=%s policy=%s token_base=%u io_throttle=%u io_limit=%u carryover=%u in_flight=%u queued=%u vtime=%llu elapsed_ns=%llu",
	       ic->domain->id, ioband_policy_name(sched->params.policy),
	       sched->token_base, sched->io_throttle, sched->io_limit,
	       sched->params.carryover, sched->in_flight, sched->nr_queued,
	       sched->vtime, ktime_get_ns() - ic->stats_start_ns);
	DMEMIT(" window_sectors=%llu in_flight_sectors=%llu window_rate_kbps=%llu window_min_lat_ns=%llu window_periods=%llu window_full=%llu idle_waits=%llu urgent=%llu window_queueing_pct=%u window_probe_sectors=%llu",
	       w->sectors, w->in_flight_sectors, w->rate / 2, w->min_lat_ns,
	       w->periods, sched->stats.window_full, sched->stats.idle_waits,
	       sched->stats.urgent, w->queueing * 100 / 256, w->probe_sectors);
	DMEMIT(" writeback_attribution=%s", IOBAND_WRITEBACK_ATTRIBUTION);
	ioband_emit_group_stats(&ic->groups.default_group, true, result,
				maxlen, &sz);
	for (group = ic->groups.first; group; group = group->next)
		ioband_emit_group_stats(group, false, result, maxlen, &sz);
}

static void __ioband_reset_stats(struct ioband_c *ic)
{
	struct ioband_group_stats zero = { 0 };
	struct ioband_group *group;

	ic->groups.default_group.stats = zero;
	for (group = ic->groups.first; group; group = group->next)
		group->stats = zero;
	ic->stats_start_ns = ktime_get_ns();
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

static enum ioband_message_fault
ioband_message_attach(struct ioband_c *ic, const struct ioband_message *msg)
{
	u32 weight = ic->groups.default_group.entity.weight;
	int ret;

	if (ioband_spec_has_weight(msg->group.spec))
		weight = msg->group.weight;
	ret = ioband_attach(ic, msg->group.id, weight);
	if (ret == -EEXIST)
		return IOBAND_FAULT_ATTACHED;
	return ret ? IOBAND_FAULT_NO_MEMORY : IOBAND_FAULT_NONE;
}

static enum ioband_message_fault
ioband_message_detach(struct ioband_c *ic, const struct ioband_message *msg)
{
	struct ioband_domain *domain = ic->domain;
	struct ioband_group *group;
	unsigned long flags;

	spin_lock_irqsave(&domain->lock, flags);
	group = ioband_group_find(&ic->groups, msg->group.id);
	if (group)
		__ioband_detach(ic, group);
	spin_unlock_irqrestore(&domain->lock, flags);
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
		ioband_group_find(&ic->groups, msg->group.id);
	if (group)
		valid = __ioband_apply_group_arg(&domain->sched, &group->entity,
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
	valid = ioband_sched_set_policy(&domain->sched, msg->value);
	spin_unlock_irqrestore(&domain->lock, flags);
	if (!valid)
		return IOBAND_FAULT_REFUSED;
	ioband_kick(domain);	/* leaving a range policy frees capped groups */
	return IOBAND_FAULT_NONE;
}

static enum ioband_message_fault
ioband_message_type(struct ioband_c *ic, const struct ioband_message *msg)
{
	enum ioband_message_fault fault = IOBAND_FAULT_NONE;
	unsigned long flags;

	spin_lock_irqsave(&ic->domain->lock, flags);
	if (ic->groups.nr_groups)
		fault = IOBAND_FAULT_BUSY;
	else
		ic->type_index = msg->value;
	spin_unlock_irqrestore(&ic->domain->lock, flags);
	return fault;
}

/* Applies @msg, parsed by the core, to @ic. */
static enum ioband_message_fault
ioband_apply_message(struct ioband_c *ic, const struct ioband_message *msg,
		     char *result, unsigned int maxlen)
{
	unsigned long flags;

	switch (msg->kind) {
	case IOBAND_MSG_ATTACH:
		if (ioband_type(ic) == IOBAND_TYPE_NONE)
			return IOBAND_FAULT_NO_GROUPS;
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
		spin_lock_irqsave(&ic->domain->lock, flags);
		__ioband_reset_stats(ic);
		spin_unlock_irqrestore(&ic->domain->lock, flags);
		return IOBAND_FAULT_NONE;
	case IOBAND_MSG_STATS:
		spin_lock_irqsave(&ic->domain->lock, flags);
		__ioband_emit_stats(ic, result, maxlen);
		spin_unlock_irqrestore(&ic->domain->lock, flags);
		return IOBAND_FAULT_NONE;
	default:
		return IOBAND_FAULT_REFUSED;
	}
}

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
	/* attach under group_type none: that, before a malformed id. */
	if (ret && !(msg.kind == IOBAND_MSG_ATTACH &&
		     ioband_type(ic) == IOBAND_TYPE_NONE)) {
		DMERR("%s", error);
		return -EINVAL;
	}
	fault = ioband_apply_message(ic, &msg, result, maxlen);
	switch (fault) {
	case IOBAND_FAULT_NONE:
		return msg.kind == IOBAND_MSG_STATS;
	case IOBAND_FAULT_BUSY:
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
	DMERR("%s", error);
	return ret;
}

static int ioband_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct ioband_c *ic = ti->private;

	return fn(ti, ic->dev, 0, ti->len, data);
}

static void ioband_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	ioband_disable_polling(limits);
}

static struct target_type ioband_target = {
	.name = "ioband",
	.version = {0, 2, 0},
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
	.io_hints = ioband_io_hints,
	/*
	 * map never sleeps; bios go down to one device with nothing changed
	 * but their sector, so their integrity and inline crypto contexts
	 * hold.
	 */
	.features = DM_TARGET_NOWAIT | DM_TARGET_PASSES_INTEGRITY |
		    DM_TARGET_PASSES_CRYPTO,
};

static int __init dm_ioband_init(void)
{
	int ret = dm_register_target(&ioband_target);

	if (ret)
		return ret;
#ifdef IOBAND_DM_LAYOUT
	DMINFO("writeback attribution: orig-bio (each bio's original bio, dm-core layout checked against this kernel's source at build time)");
#else
	DMWARN("writeback attribution: task (built without this kernel's drivers/md/dm-core.h, IOBAND_DM_SOURCE): every bio is charged to the submitting task, writeback to the flusher's group");
#endif
	return 0;
}

static void __exit dm_ioband_exit(void)
{
	dm_unregister_target(&ioband_target);
}

module_init(dm_ioband_init);
module_exit(dm_ioband_exit);

MODULE_DESCRIPTION(DM_NAME " bandwidth sharing between groups by weight");
MODULE_LICENSE("GPL");
