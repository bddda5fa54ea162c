// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband: share a block device's bandwidth between groups of processes
 * (cgroup v2 above all) by weight.
 *
 * This file is the device-mapper glue: table parsing, bio classification,
 * holding and dispatching bios, suspend, status and the target type. The
 * groups (ioband-core.c) and the choice of which held bio goes next
 * (ioband-sched.c) are plain C shared with the userspace tests.
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
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "ioband-core.h"
#include "ioband-sched.h"

#define DM_MSG_PREFIX "ioband"

#ifndef CONFIG_BLK_CGROUP
#error "dm-ioband needs a kernel with CONFIG_BLK_CGROUP"
#endif

enum ioband_group_type {
	IOBAND_TYPE_NONE,
	IOBAND_TYPE_CGROUP,
};

static const char * const ioband_group_type_names[] = {
	[IOBAND_TYPE_NONE] = "none",
	[IOBAND_TYPE_CGROUP] = "cgroup",
};

static const char * const ioband_policy_names[] = {
	[IOBAND_POLICY_WEIGHT] = "weight",
	[IOBAND_POLICY_WEIGHT_IOSIZE] = "weight-iosize",
};

struct ioband_c {
	struct dm_dev *dev;
	char domain_id[IOBAND_DOMAIN_ID_MAX + 1];
	/* io_throttle and io_limit as the table gave them, 0 = default. */
	unsigned int io_throttle;
	unsigned int io_limit;
	enum ioband_group_type group_type;

	spinlock_t lock;	/* protects groups, their counters and sched */
	struct ioband_group_set groups;
	struct ioband_group **buckets;
	struct ioband_sched sched;

	struct workqueue_struct *wq;
	struct work_struct dispatch_work;
};

/* Per-bio data: a held bio waits in its group's queue through @item. */
struct ioband_bio {
	struct ioband_sched_item item;
	bool scheduled;		/* went through the scheduler: complete it */
};

/*
 * Which cgroup owns a bio
 *
 * Inside map the clone has no blkg yet: dm allocates it without a block
 * device and copies the original bio's cgroup association only when it
 * submits the clone. Asking the current task instead is right for
 * synchronous submitters and wrong for writeback by the flusher, the data
 * half of a PREFLUSH write and bios dm deferred across a suspend: those run
 * in kernel threads. The original bio is reachable through dm's private
 * per-io structures, mirrored below for the kernels whose dm-core.h they
 * were checked against (Kbuild defines IOBAND_DM_CORE_LAYOUT_CHECKED for
 * them). Each use is validated (magic numbers, our target,
 * our disk), and the current task's cgroup is the fallback.
 */
#ifdef IOBAND_DM_CORE_LAYOUT_CHECKED
#define IOBAND_DM_TIO_MAGIC	28714
#define IOBAND_DM_IO_MAGIC	19577

/* struct dm_io of drivers/md/dm-core.h, 6.1 to 6.12, up to orig_bio. */
struct ioband_dm_io {
	unsigned short magic;
	blk_short_t flags;
	spinlock_t lock;
	unsigned long start_time;
	void *data;
	struct ioband_dm_io *next;
	struct {
		bool merged;
		unsigned long long duration_ns;
	} stats_aux;
	blk_status_t status;
	atomic_t io_count;
	struct mapped_device *md;
	struct bio *orig_bio;
};

/* struct dm_target_io of drivers/md/dm-core.h, 6.1 to 6.12. */
struct ioband_dm_target_io {
	unsigned short magic;
	blk_short_t flags;
	unsigned int target_bio_nr;
	struct ioband_dm_io *io;
	struct dm_target *ti;
	unsigned int *len_ptr;
	sector_t old_sector;
	struct bio clone;
};

static struct bio *ioband_orig_bio(struct dm_target *ti, struct bio *clone)
{
	struct ioband_dm_target_io *tio;
	struct bio *orig;

	tio = container_of(clone, struct ioband_dm_target_io, clone);
	if (tio->magic != IOBAND_DM_TIO_MAGIC || tio->ti != ti || !tio->io ||
	    tio->io->magic != IOBAND_DM_IO_MAGIC)
		return NULL;
	orig = tio->io->orig_bio;
	if (!orig || !orig->bi_bdev ||
	    orig->bi_bdev->bd_disk != dm_disk(dm_table_get_md(ti->table)))
		return NULL;
	return orig;
}
#else
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

	lockdep_assert_held(&ic->lock);
	for (level = cgrp->level; level >= 0; level--) {
		group = ioband_group_find(&ic->groups,
					  cgroup_id(cgroup_ancestor(cgrp, level)));
		if (group)
			return group;
	}
	return &ic->groups.default_group;
}

/* The group that @bio, a read or write, is charged to. */
static struct ioband_group *__ioband_classify(struct dm_target *ti,
					      struct bio *bio)
{
	struct ioband_c *ic = ti->private;
	struct cgroup_subsys_state *css;

	lockdep_assert_held(&ic->lock);
	if (ic->group_type == IOBAND_TYPE_CGROUP && ic->groups.nr_groups) {
		css = ioband_bio_css(ti, bio);
		if (css)
			return __ioband_cgroup_group(ic, css->cgroup);
	}
	return &ic->groups.default_group;
}

static void ioband_kick(struct ioband_c *ic)
{
	queue_work(ic->wq, &ic->dispatch_work);
}

/* Sends down the bios the scheduler picks, while it picks any. */
static void ioband_dispatch_work(struct work_struct *work)
{
	struct ioband_c *ic = container_of(work, struct ioband_c,
					   dispatch_work);
	struct ioband_sched_item *item;
	struct ioband_bio *ib;
	unsigned long flags;
	struct blk_plug plug;

	blk_start_plug(&plug);
	for (;;) {
		spin_lock_irqsave(&ic->lock, flags);
		item = ioband_sched_next(&ic->sched, NULL);
		spin_unlock_irqrestore(&ic->lock, flags);
		if (!item)
			break;
		ib = container_of(item, struct ioband_bio, item);
		dm_submit_bio_remap(dm_bio_from_per_bio_data(ib, sizeof(*ib)),
				    NULL);
	}
	blk_finish_plug(&plug);
}

static int ioband_parse_name(const char *arg, const char * const *names,
			     unsigned int nr_names)
{
	unsigned int i;

	for (i = 0; i < nr_names; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -EINVAL;
}

/*
 * Parses the policy's group arguments: ":<default weight>" at most once
 * and "<id>:<weight>" for each attached group.
 */
static int ioband_parse_groups(struct dm_target *ti, struct dm_arg_set *as)
{
	struct ioband_c *ic = ti->private;
	bool default_seen = false, is_default;
	struct ioband_group *group;
	unsigned int nr_groups = 0;
	unsigned int hash_bits, i;
	const char *arg;
	u32 weight;
	u64 id = 0;

	for (i = 0; i < as->argc; i++)
		nr_groups += as->argv[i][0] != ':';
	if (nr_groups && ic->group_type == IOBAND_TYPE_NONE) {
		ti->error = "group: group_type none takes no <id>:<weight> groups";
		return -EINVAL;
	}

	hash_bits = ioband_hash_bits_for(nr_groups);
	ic->buckets = kvcalloc(1U << hash_bits, sizeof(*ic->buckets), GFP_KERNEL);
	if (!ic->buckets) {
		ti->error = "Cannot allocate the group table";
		return -ENOMEM;
	}
	ioband_group_set_init(&ic->groups, ic->buckets, hash_bits);
	ioband_sched_entity_init(&ic->sched, &ic->groups.default_group.entity,
				 IOBAND_DEFAULT_WEIGHT);

	while ((arg = dm_shift_arg(as))) {
		if (ioband_parse_group_weight(arg, &id, &weight, &is_default)) {
			DMERR("group '%s': want <id>:<weight> or :<weight>, weight %u..%u",
			      arg, IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
			ti->error = "group: want <id>:<weight> or :<weight> with weight 1..32767";
			return -EINVAL;
		}
		if (is_default) {
			if (default_seen) {
				ti->error = "group: the default weight :<weight> is given twice";
				return -EINVAL;
			}
			default_seen = true;
			ioband_sched_set_weight(&ic->sched,
						&ic->groups.default_group.entity,
						weight);
			continue;
		}

		group = kzalloc(sizeof(*group), GFP_KERNEL);
		if (!group) {
			ti->error = "Cannot allocate a group";
			return -ENOMEM;
		}
		group->id = id;
		if (!ioband_group_attach(&ic->groups, group)) {
			kfree(group);
			DMERR("group '%s': id %llu is given twice", arg, id);
			ti->error = "group: the same <id> is given twice";
			return -EINVAL;
		}
		ioband_sched_entity_init(&ic->sched, &group->entity, weight);
	}
	return 0;
}

static void ioband_dtr(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;
	struct ioband_group *group, *next;

	for (group = ic->groups.first; group; group = next) {
		next = group->next;
		kfree(group);
	}
	kvfree(ic->buckets);
	if (ic->wq)
		destroy_workqueue(ic->wq);
	if (ic->dev)
		dm_put_device(ti, ic->dev);
	kfree(ic);
}

/*
 * Construct an ioband mapping:
 *
 *   <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *   <policy> <token_base> [:<default weight>] [<id>:<weight>]...
 *
 * group_type: none | cgroup (ids are cgroup v2 ids, the inode numbers of
 * the cgroup directories). policy: weight | weight-iosize. io_throttle,
 * io_limit and token_base: 0 means the default; an io_limit below
 * io_throttle is raised to it, as dm-ioband did. The default weight is 100.
 */
static int ioband_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	static const struct dm_arg _args[] = {
		{0, IOBAND_MAX_IO_LIMIT, "io_throttle: want a number 0..65536"},
		{0, IOBAND_MAX_IO_LIMIT, "io_limit: want a number 0..65536"},
		{0, IOBAND_MAX_TOKEN_BASE, "token_base: want a number 0..1073741824"},
	};
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct ioband_sched_params params;
	const char *device, *domain_id;
	struct ioband_c *ic;
	int ret;

	if (argc < 7) {
		ti->error = "Not enough arguments: want <device> <ioband_device_id> <io_throttle> <io_limit> <group_type> <policy> <token_base> [groups]";
		return -EINVAL;
	}

	ic = kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic) {
		ti->error = "Cannot allocate ioband context";
		return -ENOMEM;
	}
	ti->private = ic;
	spin_lock_init(&ic->lock);

	device = dm_shift_arg(&as);
	domain_id = dm_shift_arg(&as);
	if (strlen(domain_id) > IOBAND_DOMAIN_ID_MAX) {
		ti->error = "ioband_device_id: longer than 31 characters";
		ret = -EINVAL;
		goto bad;
	}
	strscpy(ic->domain_id, domain_id, sizeof(ic->domain_id));

	ret = dm_read_arg(&_args[0], &as, &ic->io_throttle, &ti->error);
	if (ret)
		goto bad;
	ret = dm_read_arg(&_args[1], &as, &ic->io_limit, &ti->error);
	if (ret)
		goto bad;

	ret = ioband_parse_name(dm_shift_arg(&as), ioband_group_type_names,
				ARRAY_SIZE(ioband_group_type_names));
	if (ret < 0) {
		ti->error = "group_type: unknown, want none or cgroup";
		goto bad;
	}
	ic->group_type = ret;

	ret = ioband_parse_name(dm_shift_arg(&as), ioband_policy_names,
				ARRAY_SIZE(ioband_policy_names));
	if (ret < 0) {
		ti->error = "policy: unknown, want weight or weight-iosize";
		goto bad;
	}
	ioband_sched_params_default(&params, ret);

	ret = dm_read_arg(&_args[2], &as, &params.token_base, &ti->error);
	if (ret)
		goto bad;
	params.io_throttle = ic->io_throttle;
	params.io_limit = ic->io_limit;
	if (params.io_limit && params.io_limit < ic->io_throttle)
		params.io_limit = ic->io_throttle;
	if (!params.io_limit && IOBAND_DEFAULT_IO_LIMIT < ic->io_throttle)
		params.io_limit = ic->io_throttle;
	ioband_sched_init(&ic->sched, &params);

	ret = ioband_parse_groups(ti, &as);
	if (ret)
		goto bad;

	ret = dm_get_device(ti, device, dm_table_get_mode(ti->table), &ic->dev);
	if (ret) {
		ti->error = "device: cannot open the device";
		goto bad;
	}

	ic->wq = alloc_workqueue("kioband", WQ_MEM_RECLAIM, 0);
	if (!ic->wq) {
		ti->error = "Cannot allocate the dispatch workqueue";
		ret = -ENOMEM;
		goto bad;
	}
	INIT_WORK(&ic->dispatch_work, ioband_dispatch_work);

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
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	struct ioband_group *group;
	enum ioband_dir dir;
	unsigned long flags;
	bool now, kick;

	ib->scheduled = false;
	bio_set_dev(bio, ic->dev->bdev);
	if (!bio_sectors(bio))
		return DM_MAPIO_REMAPPED;	/* empty flush: never held */
	bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);

	/* Discards and write-zeroes are neither counted nor held. */
	if (bio_op(bio) == REQ_OP_READ)
		dir = IOBAND_READ;
	else if (bio_op(bio) == REQ_OP_WRITE)
		dir = IOBAND_WRITE;
	else
		return DM_MAPIO_REMAPPED;

	ioband_sched_item_init(&ib->item, bio_sectors(bio), dir);
	ib->scheduled = true;
	rcu_read_lock();
	spin_lock_irqsave(&ic->lock, flags);
	group = __ioband_classify(ti, bio);
	ioband_group_account(group, dir, bio_sectors(bio));
	now = ioband_sched_submit(&ic->sched, &group->entity, &ib->item);
	if (!now)
		group->stats.delayed[dir]++;
	kick = !now && ioband_sched_has_work(&ic->sched);
	spin_unlock_irqrestore(&ic->lock, flags);
	rcu_read_unlock();

	if (kick)
		ioband_kick(ic);
	return now ? DM_MAPIO_REMAPPED : DM_MAPIO_SUBMITTED;
}

static int ioband_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct ioband_c *ic = ti->private;
	struct ioband_bio *ib = dm_per_bio_data(bio, sizeof(*ib));
	unsigned long flags;
	bool kick;

	if (!ib->scheduled)
		return DM_ENDIO_DONE;
	spin_lock_irqsave(&ic->lock, flags);
	kick = ioband_sched_complete(&ic->sched, &ib->item);
	spin_unlock_irqrestore(&ic->lock, flags);
	if (kick)
		ioband_kick(ic);
	return DM_ENDIO_DONE;
}

/*
 * dm waits for every bio we hold before it suspends: send them all down,
 * and every new one at once, until resume.
 */
static void ioband_set_passthrough(struct ioband_c *ic, bool on)
{
	unsigned long flags;

	spin_lock_irqsave(&ic->lock, flags);
	ioband_sched_set_passthrough(&ic->sched, on);
	spin_unlock_irqrestore(&ic->lock, flags);
}

static void ioband_presuspend(struct dm_target *ti)
{
	struct ioband_c *ic = ti->private;

	ioband_set_passthrough(ic, true);
	ioband_kick(ic);
	flush_workqueue(ic->wq);
}

static void ioband_presuspend_undo(struct dm_target *ti)
{
	ioband_set_passthrough(ti->private, false);
}

static void ioband_resume(struct dm_target *ti)
{
	ioband_set_passthrough(ti->private, false);
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

static void ioband_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct ioband_c *ic = ti->private;
	const struct ioband_group *group;
	unsigned long flags;
	size_t sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		spin_lock_irqsave(&ic->lock, flags);
		DMEMIT("%s", ic->domain_id);
		ioband_emit_group(&ic->groups.default_group, true, result,
				  maxlen, &sz);
		for (group = ic->groups.first; group; group = group->next)
			ioband_emit_group(group, false, result, maxlen, &sz);
		spin_unlock_irqrestore(&ic->lock, flags);
		break;

	case STATUSTYPE_TABLE:
		spin_lock_irqsave(&ic->lock, flags);
		DMEMIT("%s %s %u %u %s %s %u :%u", ic->dev->name, ic->domain_id,
		       ic->io_throttle, ic->io_limit,
		       ioband_group_type_names[ic->group_type],
		       ioband_policy_names[ic->sched.params.policy],
		       ic->sched.params.token_base,
		       ic->groups.default_group.entity.weight);
		for (group = ic->groups.first; group; group = group->next)
			DMEMIT(" %llu:%u", group->id, group->entity.weight);
		spin_unlock_irqrestore(&ic->lock, flags);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,ioband_device_id=%s,group_type=%s,policy=%s,groups=%u;",
		       ic->dev->name, ic->domain_id,
		       ioband_group_type_names[ic->group_type],
		       ioband_policy_names[ic->sched.params.policy],
		       ic->groups.nr_groups);
		break;
	}
}

static int ioband_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct ioband_c *ic = ti->private;

	return fn(ti, ic->dev, 0, ti->len, data);
}

static struct target_type ioband_target = {
	.name = "ioband",
	.version = {0, 1, 0},
	.module = THIS_MODULE,
	.ctr = ioband_ctr,
	.dtr = ioband_dtr,
	.map = ioband_map,
	.end_io = ioband_end_io,
	.presuspend = ioband_presuspend,
	.presuspend_undo = ioband_presuspend_undo,
	.resume = ioband_resume,
	.status = ioband_status,
	.iterate_devices = ioband_iterate_devices,
};

static int __init dm_ioband_init(void)
{
	return dm_register_target(&ioband_target);
}

static void __exit dm_ioband_exit(void)
{
	dm_unregister_target(&ioband_target);
}

module_init(dm_ioband_init);
module_exit(dm_ioband_exit);

MODULE_DESCRIPTION(DM_NAME " bandwidth sharing between groups by weight");
MODULE_LICENSE("GPL");
