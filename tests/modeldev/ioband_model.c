// SPDX-License-Identifier: GPL-2.0
/*
 * ioband_model: a memory-backed blk-mq block device that completes each
 * request at a modelled cost. Test code for dm-ioband's guest tests and
 * bench; it is never installed.
 *
 * 1. The model
 *
 * Each request is served by one of `channels` servers (1: a disk; more:
 * the parallel units of an SSD). Its service time is
 *
 *	io_ns[dir] + bytes * kib_ns[dir] / 1024 + seek
 *
 * where seek is 0 when the request starts where the last one ended, else
 * min(seek_min_ns + seek_ns_per_gib * distance / GiB, max_seek_ns). The
 * request goes to the channel that is free first and completes, by an
 * hrtimer, at max(now, that channel's free time) + service: the device is
 * work-conserving and never faster than the model. With slow_period_ms
 * and slow_ms set, every slow_period_ms the first slow_ms are a slow phase
 * (garbage collection) in which service times are multiplied by
 * slow_factor. Writing "READ WRITE" to model/slowdown multiplies each
 * direction's service times by those factors from then on, on top of
 * that, until "1 1" is written: a slow phase a test starts and ends when
 * it wants, and one that slows writes more than reads, as an SSD's
 * garbage collection does.
 *
 * 2. Presets (preset=ssd|hdd|none sets the defaults; any cost parameter
 * given overrides its preset value). The figures are explained in
 * tests/modeldev/README.md:
 *
 * ssd: Samsung 870 EVO (SATA) data sheet figures as Samsung quotes them:
 *	sequential read 560 MB/s, write 530 MB/s; 4 KiB random QD1 13,000
 *	read and 36,000 write IOPS; QD32 98,000 read and 88,000 write IOPS.
 *	4 channels; a 4 KiB read costs 76.7 us (13,000 IOPS at QD1) and a
 *	128 KiB read 936 us, so that 4 channels give 560 MB/s; writes
 *	32.9 us and 991 us (30,000 IOPS at QD1, 529 MB/s). The QD32 random
 *	figures are then 52,000 read and 122,000 write IOPS: one cost per
 *	IO plus one per byte on 4 channels cannot meet all six figures.
 * hdd: typical 7200 rpm figures, not one product's: average seek 8.5 ms,
 *	average rotational latency 4.17 ms (half a turn at 7200 rpm),
 *	track-to-track seek 1 ms, sustained transfer 200 MB/s. The device's
 *	size stands for the whole stroke: seek = 5.17 ms (track-to-track +
 *	rotation) + 22.5 ms * distance / size, so a random request averages
 *	5.17 + 22.5 / 3 = 12.67 ms = 8.5 + 4.17 ms. 1 channel, rotational.
 * none: no cost at all (a plain memory disk).
 *
 * 3. Device time per cgroup
 *
 * Each completed request adds its modelled service time, bytes and one IO
 * to the cgroup of its first bio (blk-mq does not merge bios of different
 * cgroups), in a table of MODEL_MAX_CGROUPS entries (beyond that, to an
 * entry of id 0). /sys/block/modelN/model/cgroup_time lists it, a line
 * "<cgroup id> <service ns> <bytes> <ios>" per cgroup; writing anything to
 * it empties the table. model/stats has the device's totals and
 * model/params the parameters in force.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/blk-cgroup.h>
#include <linux/cgroup.h>
#include <linux/hrtimer.h>
#include <linux/highmem.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/xarray.h>

#define MODEL_NAME		"ioband_model"
#define MODEL_MAX_CHANNELS	64
#define MODEL_MAX_CGROUPS	32
#define MODEL_MAX_DEVICES	16
#define MODEL_MAX_SLOWDOWN	100	/* model/slowdown's factors */
#define MODEL_SECTORS_PER_PAGE	(PAGE_SIZE >> SECTOR_SHIFT)

static char *preset = "ssd";
module_param(preset, charp, 0444);
MODULE_PARM_DESC(preset, "Default costs: ssd, hdd or none (default ssd)");

static int nr_devices = 1;
module_param(nr_devices, int, 0444);
MODULE_PARM_DESC(nr_devices, "Number of devices model0.. (default 1)");

static unsigned int size_mb = 1024;
module_param(size_mb, uint, 0444);
MODULE_PARM_DESC(size_mb, "Size of each device in MiB (default 1024; memory is used as written)");

static unsigned int queue_depth = 64;
module_param(queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "Queue depth (default 64)");

/* Cost parameters: -1 takes the preset's value. */
static long channels = -1;
module_param(channels, long, 0444);
MODULE_PARM_DESC(channels, "Parallel servers (1 to 64)");

static long read_io_ns = -1;
module_param(read_io_ns, long, 0444);
MODULE_PARM_DESC(read_io_ns, "Cost of a read request, ns");

static long write_io_ns = -1;
module_param(write_io_ns, long, 0444);
MODULE_PARM_DESC(write_io_ns, "Cost of a write request, ns");

static long read_kib_ns = -1;
module_param(read_kib_ns, long, 0444);
MODULE_PARM_DESC(read_kib_ns, "Cost of a KiB read, ns");

static long write_kib_ns = -1;
module_param(write_kib_ns, long, 0444);
MODULE_PARM_DESC(write_kib_ns, "Cost of a KiB written, ns");

static long seek_min_ns = -1;
module_param(seek_min_ns, long, 0444);
MODULE_PARM_DESC(seek_min_ns, "Cost of any seek (a request not starting where the last ended), ns");

static long seek_ns_per_gib = -1;
module_param(seek_ns_per_gib, long, 0444);
MODULE_PARM_DESC(seek_ns_per_gib, "Seek cost per GiB of distance, ns (hdd: 22.5 ms over the device)");

static long max_seek_ns = -1;
module_param(max_seek_ns, long, 0444);
MODULE_PARM_DESC(max_seek_ns, "Cap of the seek cost, ns");

static long slow_period_ms = -1;
module_param(slow_period_ms, long, 0444);
MODULE_PARM_DESC(slow_period_ms, "Period of slow phases, ms (0: none)");

static long slow_ms = -1;
module_param(slow_ms, long, 0444);
MODULE_PARM_DESC(slow_ms, "Length of a slow phase, ms");

static long slow_factor = -1;
module_param(slow_factor, long, 0444);
MODULE_PARM_DESC(slow_factor, "Cost multiplier in a slow phase");

enum { MODEL_READ, MODEL_WRITE };

struct model_params {
	u64 io_ns[2];
	u64 kib_ns[2];
	u64 seek_min_ns;
	u64 seek_ns_per_gib;
	u64 max_seek_ns;
	u64 slow_period_ns;
	u64 slow_ns;
	u32 slow_factor;
	u32 channels;
	bool rotational;
};

struct model_cg {
	u64 id;
	u64 ns;
	u64 bytes;
	u64 ios;
};

/* What a request in flight carries from queue_rq to its completion. */
struct model_cmd {
	struct hrtimer timer;
	struct request *rq;
	struct model_dev *md;
	u64 cgid;
	u64 cost;
};

struct model_dev {
	struct model_params p;
	int index;
	sector_t sectors;
	struct blk_mq_tag_set set;
	struct gendisk *disk;
	struct xarray pages;		/* sector / MODEL_SECTORS_PER_PAGE -> page */
	struct model_cmd *cmds;		/* one per driver tag */
	u64 epoch_ns;			/* slow phases count from here */

	spinlock_t lock;		/* guards the fields below; taken in hardirq */
	u64 free_at[MODEL_MAX_CHANNELS];
	sector_t next_pos;		/* where the last request ended */
	u32 slowdown[2];		/* model/slowdown: per direction */
	struct model_cg cg[MODEL_MAX_CGROUPS + 1];	/* the last: overflow */
	unsigned int nr_cg;
	u64 total_ns;
	u64 total_bytes;
	u64 total_ios;
};

static int model_major;
static struct model_dev *model_devs[MODEL_MAX_DEVICES];

/* ---- parameters ---- */

static int model_preset(struct model_params *p, sector_t sectors)
{
	u64 size_bytes = (u64)sectors << SECTOR_SHIFT;

	memset(p, 0, sizeof(*p));
	p->channels = 1;
	p->slow_factor = 1;
	if (!strcmp(preset, "ssd")) {
		/* Samsung 870 EVO data sheet; see the comment at the top. */
		p->channels = 4;
		p->io_ns[MODEL_READ] = 49000;
		p->kib_ns[MODEL_READ] = 6930;
		p->io_ns[MODEL_WRITE] = 2000;
		p->kib_ns[MODEL_WRITE] = 7730;
	} else if (!strcmp(preset, "hdd")) {
		/* Typical 7200 rpm disk; see the comment at the top. */
		p->rotational = true;
		p->io_ns[MODEL_READ] = 100000;
		p->io_ns[MODEL_WRITE] = 100000;
		p->kib_ns[MODEL_READ] = 5120;
		p->kib_ns[MODEL_WRITE] = 5120;
		p->seek_min_ns = 5170000;
		p->seek_ns_per_gib = div64_u64(22500000ULL << 30, size_bytes);
		p->max_seek_ns = 5170000 + 22500000;
	} else if (strcmp(preset, "none")) {
		pr_err(MODEL_NAME ": preset=%s: not ssd, hdd nor none\n", preset);
		return -EINVAL;
	}

#define MODEL_SET(field, param)	do { if ((param) >= 0) (field) = (param); } while (0)
	MODEL_SET(p->channels, channels);
	MODEL_SET(p->io_ns[MODEL_READ], read_io_ns);
	MODEL_SET(p->io_ns[MODEL_WRITE], write_io_ns);
	MODEL_SET(p->kib_ns[MODEL_READ], read_kib_ns);
	MODEL_SET(p->kib_ns[MODEL_WRITE], write_kib_ns);
	MODEL_SET(p->seek_min_ns, seek_min_ns);
	MODEL_SET(p->seek_ns_per_gib, seek_ns_per_gib);
	MODEL_SET(p->max_seek_ns, max_seek_ns);
	MODEL_SET(p->slow_period_ns, slow_period_ms * NSEC_PER_MSEC);
	MODEL_SET(p->slow_ns, slow_ms * NSEC_PER_MSEC);
	MODEL_SET(p->slow_factor, slow_factor);
#undef MODEL_SET

	if (p->channels < 1 || p->channels > MODEL_MAX_CHANNELS) {
		pr_err(MODEL_NAME ": channels=%u: not 1 to %d\n", p->channels,
		       MODEL_MAX_CHANNELS);
		return -EINVAL;
	}
	/* No cap given (or one below the least seek): the whole device's. */
	if (!p->max_seek_ns || p->max_seek_ns < p->seek_min_ns)
		p->max_seek_ns = p->seek_min_ns + (p->seek_ns_per_gib ?
			mul_u64_u64_div_u64(p->seek_ns_per_gib, size_bytes, 1ULL << 30) : 0);
	if (p->slow_factor < 1)
		p->slow_factor = 1;
	return 0;
}

/* ---- data ---- */

static struct page *model_page(struct model_dev *md, pgoff_t idx, bool alloc)
{
	struct page *page, *old;

	page = xa_load(&md->pages, idx);
	if (page || !alloc)
		return page;
	page = alloc_page(GFP_NOIO | __GFP_ZERO | __GFP_HIGHMEM);
	if (!page)
		return NULL;
	old = xa_cmpxchg(&md->pages, idx, NULL, page, GFP_NOIO);
	if (old) {
		__free_page(page);
		return xa_is_err(old) ? NULL : old;
	}
	return page;
}

static blk_status_t model_transfer(struct model_dev *md, struct request *rq)
{
	bool write = op_is_write(req_op(rq));
	sector_t sector = blk_rq_pos(rq);
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			pgoff_t idx = sector / MODEL_SECTORS_PER_PAGE;
			size_t off = (sector % MODEL_SECTORS_PER_PAGE) << SECTOR_SHIFT;
			size_t n = min_t(size_t, bv.bv_len - done, PAGE_SIZE - off);
			struct page *page = model_page(md, idx, write);

			if (write) {
				if (!page)
					return BLK_STS_RESOURCE;
				memcpy_page(page, off, bv.bv_page,
					    bv.bv_offset + done, n);
			} else if (page) {
				memcpy_page(bv.bv_page, bv.bv_offset + done,
					    page, off, n);
			} else {
				memzero_page(bv.bv_page, bv.bv_offset + done, n);
			}
			done += n;
			sector += n >> SECTOR_SHIFT;
		}
	}
	return BLK_STS_OK;
}

static void model_free_pages(struct model_dev *md)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&md->pages, idx, page)
		__free_page(page);
	xa_destroy(&md->pages);
}

/* ---- the model ---- */

/* The cost of @rq and when it completes; caller holds md->lock. */
static u64 __model_schedule(struct model_dev *md, struct request *rq, u64 now,
			    u64 *cost)
{
	const struct model_params *p = &md->p;
	int dir = op_is_write(req_op(rq)) ? MODEL_WRITE : MODEL_READ;
	sector_t pos = blk_rq_pos(rq);
	u64 bytes = blk_rq_bytes(rq);
	u64 c, start, rem;
	unsigned int i, ch = 0;

	lockdep_assert_held(&md->lock);
	c = p->io_ns[dir] + div_u64(bytes * p->kib_ns[dir], 1024);
	if (pos != md->next_pos && (p->seek_min_ns || p->seek_ns_per_gib)) {
		u64 dist = pos > md->next_pos ? pos - md->next_pos : md->next_pos - pos;
		u64 seek = p->seek_min_ns +
			mul_u64_u64_div_u64(dist, p->seek_ns_per_gib,
					    1ULL << (30 - SECTOR_SHIFT));

		c += min(seek, p->max_seek_ns);
	}
	if (p->slow_period_ns && p->slow_ns && p->slow_factor > 1) {
		div64_u64_rem(now - md->epoch_ns, p->slow_period_ns, &rem);
		if (rem < p->slow_ns)
			c *= p->slow_factor;
	}
	c *= md->slowdown[dir];
	md->next_pos = pos + blk_rq_sectors(rq);

	for (i = 1; i < p->channels; i++)
		if (md->free_at[i] < md->free_at[ch])
			ch = i;
	start = max(now, md->free_at[ch]);
	md->free_at[ch] = start + c;
	*cost = c;
	return start + c;
}

/* Add a completed request to its cgroup's entry; caller holds md->lock. */
static void __model_account(struct model_dev *md, u64 cgid, u64 cost, u64 bytes)
{
	struct model_cg *e = NULL;
	unsigned int i;

	lockdep_assert_held(&md->lock);
	for (i = 0; i < md->nr_cg; i++) {
		if (md->cg[i].id == cgid) {
			e = &md->cg[i];
			break;
		}
	}
	if (!e) {
		if (md->nr_cg < MODEL_MAX_CGROUPS) {
			e = &md->cg[md->nr_cg++];
			e->id = cgid;
		} else {
			e = &md->cg[MODEL_MAX_CGROUPS];
		}
	}
	e->ns += cost;
	e->bytes += bytes;
	e->ios++;
	md->total_ns += cost;
	md->total_bytes += bytes;
	md->total_ios++;
}

static u64 model_rq_cgroup(struct request *rq)
{
#ifdef CONFIG_BLK_CGROUP
	struct cgroup_subsys_state *css;

	if (rq->bio) {
		css = bio_blkcg_css(rq->bio);
		if (css)
			return cgroup_id(css->cgroup);
	}
#endif
	return 0;
}

static enum hrtimer_restart model_timer_fn(struct hrtimer *timer)
{
	struct model_cmd *cmd = container_of(timer, struct model_cmd, timer);
	struct model_dev *md = cmd->md;
	struct request *rq = cmd->rq;
	unsigned long flags;

	spin_lock_irqsave(&md->lock, flags);
	__model_account(md, cmd->cgid, cmd->cost, blk_rq_bytes(rq));
	spin_unlock_irqrestore(&md->lock, flags);
	blk_mq_end_request(rq, BLK_STS_OK);
	return HRTIMER_NORESTART;
}

static blk_status_t model_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct model_dev *md = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	struct model_cmd *cmd;
	unsigned long flags;
	blk_status_t sts;
	u64 done;

	if (WARN_ON_ONCE(rq->tag < 0 || rq->tag >= md->set.queue_depth))
		return BLK_STS_IOERR;
	blk_mq_start_request(rq);
	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		break;
	case REQ_OP_FLUSH:
		blk_mq_end_request(rq, BLK_STS_OK);
		return BLK_STS_OK;
	default:
		return BLK_STS_NOTSUPP;
	}
	sts = model_transfer(md, rq);
	if (sts != BLK_STS_OK)
		return sts == BLK_STS_RESOURCE ? BLK_STS_IOERR : sts;

	cmd = &md->cmds[rq->tag];
	cmd->rq = rq;
	cmd->cgid = model_rq_cgroup(rq);
	spin_lock_irqsave(&md->lock, flags);
	done = __model_schedule(md, rq, ktime_get_ns(), &cmd->cost);
	spin_unlock_irqrestore(&md->lock, flags);
	hrtimer_start(&cmd->timer, ns_to_ktime(done), HRTIMER_MODE_ABS);
	return BLK_STS_OK;
}

static const struct blk_mq_ops model_mq_ops = {
	.queue_rq = model_queue_rq,
};

static const struct block_device_operations model_fops = {
	.owner = THIS_MODULE,
};

/* ---- sysfs: /sys/block/modelN/model/ ---- */

static struct model_dev *model_from_dev(struct device *dev)
{
	return dev_to_disk(dev)->private_data;
}

static ssize_t cgroup_time_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct model_dev *md = model_from_dev(dev);
	struct model_cg *snap;
	unsigned long flags;
	unsigned int i, n;
	int len = 0;

	snap = kmalloc_array(MODEL_MAX_CGROUPS + 1, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	spin_lock_irqsave(&md->lock, flags);
	n = md->nr_cg;
	memcpy(snap, md->cg, sizeof(md->cg));
	spin_unlock_irqrestore(&md->lock, flags);
	if (snap[MODEL_MAX_CGROUPS].ios)
		snap[n++] = snap[MODEL_MAX_CGROUPS];
	for (i = 0; i < n; i++)
		len += sysfs_emit_at(buf, len, "%llu %llu %llu %llu\n",
				     snap[i].id, snap[i].ns, snap[i].bytes,
				     snap[i].ios);
	kfree(snap);
	return len;
}

static ssize_t cgroup_time_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct model_dev *md = model_from_dev(dev);
	unsigned long flags;

	spin_lock_irqsave(&md->lock, flags);
	memset(md->cg, 0, sizeof(md->cg));
	md->nr_cg = 0;
	spin_unlock_irqrestore(&md->lock, flags);
	return count;
}
static DEVICE_ATTR_RW(cgroup_time);

static ssize_t stats_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct model_dev *md = model_from_dev(dev);
	u64 ns, bytes, ios;
	unsigned long flags;

	spin_lock_irqsave(&md->lock, flags);
	ns = md->total_ns;
	bytes = md->total_bytes;
	ios = md->total_ios;
	spin_unlock_irqrestore(&md->lock, flags);
	return sysfs_emit(buf, "service_ns %llu\nbytes %llu\nios %llu\n",
			  ns, bytes, ios);
}
static DEVICE_ATTR_RO(stats);

static ssize_t slowdown_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct model_dev *md = model_from_dev(dev);
	unsigned long flags;
	u32 r, w;

	spin_lock_irqsave(&md->lock, flags);
	r = md->slowdown[MODEL_READ];
	w = md->slowdown[MODEL_WRITE];
	spin_unlock_irqrestore(&md->lock, flags);
	return sysfs_emit(buf, "%u %u\n", r, w);
}

/* "READ WRITE": each a factor from 1 to MODEL_MAX_SLOWDOWN. */
static ssize_t slowdown_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct model_dev *md = model_from_dev(dev);
	unsigned long flags;
	u32 r, w;
	char end;

	if (sscanf(buf, "%u %u %c", &r, &w, &end) != 2 ||
	    r < 1 || w < 1 || r > MODEL_MAX_SLOWDOWN || w > MODEL_MAX_SLOWDOWN)
		return -EINVAL;
	spin_lock_irqsave(&md->lock, flags);
	md->slowdown[MODEL_READ] = r;
	md->slowdown[MODEL_WRITE] = w;
	spin_unlock_irqrestore(&md->lock, flags);
	return count;
}
static DEVICE_ATTR_RW(slowdown);

static ssize_t params_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	const struct model_params *p = &model_from_dev(dev)->p;

	return sysfs_emit(buf,
			  "channels %u\nread_io_ns %llu\nwrite_io_ns %llu\n"
			  "read_kib_ns %llu\nwrite_kib_ns %llu\nseek_min_ns %llu\n"
			  "seek_ns_per_gib %llu\nmax_seek_ns %llu\n"
			  "slow_period_ns %llu\nslow_ns %llu\nslow_factor %u\n"
			  "rotational %d\n",
			  p->channels, p->io_ns[MODEL_READ],
			  p->io_ns[MODEL_WRITE], p->kib_ns[MODEL_READ],
			  p->kib_ns[MODEL_WRITE], p->seek_min_ns,
			  p->seek_ns_per_gib, p->max_seek_ns, p->slow_period_ns,
			  p->slow_ns, p->slow_factor, p->rotational);
}
static DEVICE_ATTR_RO(params);

static struct attribute *model_attrs[] = {
	&dev_attr_cgroup_time.attr,
	&dev_attr_stats.attr,
	&dev_attr_slowdown.attr,
	&dev_attr_params.attr,
	NULL,
};

static const struct attribute_group model_group = {
	.name = "model",
	.attrs = model_attrs,
};

static const struct attribute_group *model_groups[] = {
	&model_group,
	NULL,
};

/* ---- devices ---- */

static void model_timer_setup(struct hrtimer *timer)
{
#ifdef IOBAND_MODEL_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, model_timer_fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
#else
	hrtimer_init(timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	timer->function = model_timer_fn;
#endif
}

static void model_destroy(struct model_dev *md)
{
	if (md->disk) {
		del_gendisk(md->disk);
		put_disk(md->disk);
	}
	if (md->set.tags)
		blk_mq_free_tag_set(&md->set);
	model_free_pages(md);
	kfree(md->cmds);
	kfree(md);
}

static int model_create(int index)
{
	struct model_dev *md;
	struct gendisk *disk;
	unsigned int i;
	int ret;

	md = kzalloc(sizeof(*md), GFP_KERNEL);
	if (!md)
		return -ENOMEM;
	md->index = index;
	md->sectors = (sector_t)size_mb << (20 - SECTOR_SHIFT);
	xa_init(&md->pages);
	spin_lock_init(&md->lock);
	ret = model_preset(&md->p, md->sectors);
	if (ret)
		goto bad;
	md->epoch_ns = ktime_get_ns();
	md->slowdown[MODEL_READ] = 1;
	md->slowdown[MODEL_WRITE] = 1;

	md->cmds = kcalloc(queue_depth, sizeof(*md->cmds), GFP_KERNEL);
	ret = -ENOMEM;
	if (!md->cmds)
		goto bad;
	for (i = 0; i < queue_depth; i++) {
		md->cmds[i].md = md;
		model_timer_setup(&md->cmds[i].timer);
	}

	md->set.ops = &model_mq_ops;
	md->set.nr_hw_queues = 1;
	md->set.queue_depth = queue_depth;
	md->set.numa_node = NUMA_NO_NODE;
	md->set.flags = BLK_MQ_F_BLOCKING;
#ifdef IOBAND_MODEL_HAVE_SHOULD_MERGE
	md->set.flags |= BLK_MQ_F_SHOULD_MERGE;
#endif
	md->set.driver_data = md;
	ret = blk_mq_alloc_tag_set(&md->set);
	if (ret) {
		md->set.tags = NULL;
		goto bad;
	}

#ifdef IOBAND_MODEL_ALLOC_DISK_LIM
	{
		struct queue_limits lim = {
			.logical_block_size = SECTOR_SIZE,
			.physical_block_size = PAGE_SIZE,
			.max_hw_sectors = 1024,
		};

#ifdef IOBAND_MODEL_HAVE_BLK_FEAT
		if (md->p.rotational)
			lim.features |= BLK_FEAT_ROTATIONAL;
#endif
		disk = blk_mq_alloc_disk(&md->set, &lim, md);
	}
#else
	disk = blk_mq_alloc_disk(&md->set, md);
#endif
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto bad;
	}
#ifndef IOBAND_MODEL_ALLOC_DISK_LIM
	blk_queue_logical_block_size(disk->queue, SECTOR_SIZE);
	blk_queue_physical_block_size(disk->queue, PAGE_SIZE);
	blk_queue_max_hw_sectors(disk->queue, 1024);
#endif
#ifndef IOBAND_MODEL_HAVE_BLK_FEAT
	if (md->p.rotational)
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, disk->queue);
	else
		blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
#endif
	disk->major = model_major;
	disk->first_minor = index;
	disk->minors = 1;
	disk->flags |= GENHD_FL_NO_PART;
	disk->fops = &model_fops;
	disk->private_data = md;
	snprintf(disk->disk_name, DISK_NAME_LEN, "model%d", index);
	set_capacity(disk, md->sectors);
	ret = device_add_disk(NULL, disk, model_groups);
	if (ret) {
		put_disk(disk);
		goto bad;
	}
	md->disk = disk;
	model_devs[index] = md;
	return 0;

bad:
	model_destroy(md);
	return ret;
}

static void model_exit(void)
{
	int i;

	for (i = 0; i < MODEL_MAX_DEVICES; i++) {
		if (model_devs[i]) {
			model_destroy(model_devs[i]);
			model_devs[i] = NULL;
		}
	}
	if (model_major > 0)
		unregister_blkdev(model_major, MODEL_NAME);
}

static int __init model_init(void)
{
	int i, ret;

	if (nr_devices < 0 || nr_devices > MODEL_MAX_DEVICES || !size_mb ||
	    !queue_depth || queue_depth > 4096) {
		pr_err(MODEL_NAME ": nr_devices 0-%d, size_mb > 0, queue_depth 1-4096\n",
		       MODEL_MAX_DEVICES);
		return -EINVAL;
	}
	model_major = register_blkdev(0, MODEL_NAME);
	if (model_major < 0)
		return model_major;
	for (i = 0; i < nr_devices; i++) {
		ret = model_create(i);
		if (ret) {
			model_exit();
			return ret;
		}
	}
	return 0;
}

static void __exit model_module_exit(void)
{
	model_exit();
}

module_init(model_init);
module_exit(model_module_exit);

MODULE_DESCRIPTION("Memory-backed block device completing IO at a modelled cost (dm-ioband tests)");
MODULE_LICENSE("GPL");
