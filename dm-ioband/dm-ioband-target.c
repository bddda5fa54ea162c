// SPDX-License-Identifier: GPL-2.0
/*
 * dm-ioband: share a block device's bandwidth between groups of processes
 * (cgroup v2 above all) by weight.
 *
 * This file is the device-mapper glue: table parsing, bio classification,
 * status and the target type. The groups live in ioband-core.c, plain C
 * shared with the userspace tests.
 */

#include <linux/device-mapper.h>

#include <linux/bio.h>
#include <linux/blk-cgroup.h>
#include <linux/blkdev.h>
#include <linux/cgroup.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "ioband-core.h"

#define DM_MSG_PREFIX "ioband"

#ifndef CONFIG_BLK_CGROUP
#error "dm-ioband needs a kernel with CONFIG_BLK_CGROUP"
#endif

/* Upper bound of io_throttle, io_limit and token_base. */
#define IOBAND_MAX_TUNABLE	(1U << 20)

enum ioband_group_type {
	IOBAND_TYPE_NONE,
	IOBAND_TYPE_CGROUP,
};

static const char * const ioband_group_type_names[] = {
	[IOBAND_TYPE_NONE] = "none",
	[IOBAND_TYPE_CGROUP] = "cgroup",
};

enum ioband_policy {
	IOBAND_POLICY_WEIGHT,
};

static const char * const ioband_policy_names[] = {
	[IOBAND_POLICY_WEIGHT] = "weight",
};

struct ioband_c {
	struct dm_dev *dev;
	char domain_id[IOBAND_DOMAIN_ID_MAX + 1];
	/* The tunables as the table gave them, 0 meaning "default". */
	unsigned int io_throttle;
	unsigned int io_limit;
	unsigned int token_base;
	enum ioband_group_type group_type;
	enum ioband_policy policy;

	spinlock_t lock;		/* protects groups and their counters */
	struct ioband_group_set groups;
	struct ioband_group **buckets;
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

static void ioband_account(struct dm_target *ti, struct bio *bio,
			   enum ioband_dir dir)
{
	struct ioband_c *ic = ti->private;
	struct cgroup_subsys_state *css;
	struct ioband_group *group;
	unsigned long flags;

	rcu_read_lock();
	spin_lock_irqsave(&ic->lock, flags);
	group = &ic->groups.default_group;
	if (ic->group_type == IOBAND_TYPE_CGROUP && ic->groups.nr_groups) {
		css = ioband_bio_css(ti, bio);
		if (css)
			group = __ioband_cgroup_group(ic, css->cgroup);
	}
	ioband_group_account(group, dir, bio_sectors(bio));
	spin_unlock_irqrestore(&ic->lock, flags);
	rcu_read_unlock();
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
	ioband_group_set_init(&ic->groups, IOBAND_DEFAULT_WEIGHT, ic->buckets,
			      hash_bits);

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
			ic->groups.default_group.weight = weight;
			continue;
		}

		group = kzalloc(sizeof(*group), GFP_KERNEL);
		if (!group) {
			ti->error = "Cannot allocate a group";
			return -ENOMEM;
		}
		group->id = id;
		group->weight = weight;
		if (!ioband_group_attach(&ic->groups, group)) {
			kfree(group);
			DMERR("group '%s': id %llu is given twice", arg, id);
			ti->error = "group: the same <id> is given twice";
			return -EINVAL;
		}
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
 * the cgroup directories). policy: weight. io_throttle, io_limit and
 * token_base: 0 means the default. The default weight is 100.
 */
static int ioband_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	static const struct dm_arg _args[] = {
		{0, IOBAND_MAX_TUNABLE, "io_throttle: want a number 0..1048576"},
		{0, IOBAND_MAX_TUNABLE, "io_limit: want a number 0..1048576"},
		{0, IOBAND_MAX_TUNABLE, "token_base: want a number 0..1048576"},
	};
	struct dm_arg_set as = { .argc = argc, .argv = argv };
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
		ti->error = "policy: unknown, want weight";
		goto bad;
	}
	ic->policy = ret;

	ret = dm_read_arg(&_args[2], &as, &ic->token_base, &ti->error);
	if (ret)
		goto bad;

	ret = ioband_parse_groups(ti, &as);
	if (ret)
		goto bad;

	ret = dm_get_device(ti, device, dm_table_get_mode(ti->table), &ic->dev);
	if (ret) {
		ti->error = "device: cannot open the device";
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_secure_erase_bios = 1;
	ti->num_write_zeroes_bios = 1;
	return 0;

bad:
	ioband_dtr(ti);
	return ret;
}

static int ioband_map(struct dm_target *ti, struct bio *bio)
{
	struct ioband_c *ic = ti->private;

	if (bio_sectors(bio)) {
		if (bio_op(bio) == REQ_OP_READ)
			ioband_account(ti, bio, IOBAND_READ);
		else if (bio_op(bio) == REQ_OP_WRITE)
			ioband_account(ti, bio, IOBAND_WRITE);
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	}
	bio_set_dev(bio, ic->dev->bdev);
	return DM_MAPIO_REMAPPED;
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
		       ioband_policy_names[ic->policy], ic->token_base,
		       ic->groups.default_group.weight);
		for (group = ic->groups.first; group; group = group->next)
			DMEMIT(" %llu:%u", group->id, group->weight);
		spin_unlock_irqrestore(&ic->lock, flags);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,ioband_device_id=%s,group_type=%s,policy=%s,groups=%u;",
		       ic->dev->name, ic->domain_id,
		       ioband_group_type_names[ic->group_type],
		       ioband_policy_names[ic->policy], ic->groups.nr_groups);
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
