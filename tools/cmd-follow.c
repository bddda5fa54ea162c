// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Weights from the cgroup files: create --weights-from and apply's
 * weights_from= take them once; follow keeps a device's groups what the
 * cgroups of a subtree say, as they change.
 *
 * A cgroup of the subtree (the subtree's own included) that has an
 * io.weight or io.bfq.weight file, that is whose parent enables the io
 * controller, is a group with that weight (cgroup_parse_weight(): the
 * entry for the ioband device or the device below it, else the default
 * one). A cgroup without them counts, as in the block layer, as its
 * nearest ancestor that has them.
 *
 * follow learns of changes through inotify: one watch per cgroup folder,
 * for the folders made and removed in it (IN_CREATE, IN_DELETE) and the
 * files written in it (IN_MODIFY: kernfs files notify on each write).
 * Only io.weight, io.bfq.weight and cgroup.subtree_control writes are
 * read; the rest (cgroup.procs, memory.*, cgroup.events) are only the
 * cost of reading an event. A full rescan every --interval seconds, and
 * at once when the event queue overflowed, mends anything missed.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "iobandctl.h"

/* A cgroup folder of the subtree. */
struct followed {
	char *path;		/* absolute */
	uint64_t id;		/* its inode number, the group id */
	int wd;			/* its inotify watch, -1 without one */
	unsigned int weight;	/* 0: no weight file, not a group */
	int seen;		/* found by the current rescan */
};

struct follower {
	const char *name;	/* the ioband device */
	char *subtree;		/* absolute, without a trailing '/' */
	const char *devices[2];	/* "major:minor": ioband's, the one below */
	size_t nr_devices;
	char dev_self[32];
	char *dev_below;
	int fd;			/* inotify, -1: take the weights once */
	struct followed *cg;
	size_t n, size;
	int overflowed;		/* events were lost: rescan */
	int changed;		/* a weight or a cgroup changed: sync */
};

/* Read small file @dir/@file; NULL when it is not there. */
static char *read_small(const char *dir, const char *file)
{
	char path[PATH_MAX], buf[4096];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return NULL;
	buf[len] = '\0';
	return xasprintf("%s", buf);
}

static unsigned int file_weight(struct follower *f, const char *dir,
				const char *file)
{
	char *text = read_small(dir, file);
	unsigned int w;

	if (!text)
		return 0;
	w = cgroup_parse_weight(text, f->devices, f->nr_devices);
	free(text);
	return w;
}

static unsigned int read_weight(struct follower *f, const char *dir)
{
	return cgroup_pick_weight(file_weight(f, dir, "io.weight"),
				  file_weight(f, dir, "io.bfq.weight"));
}

static struct followed *find_path(struct follower *f, const char *path)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->cg[i].path, path))
			return &f->cg[i];
	return NULL;
}

static struct followed *find_wd(struct follower *f, int wd)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->cg[i].wd == wd)
			return &f->cg[i];
	return NULL;
}

/* Is @path @dir or below it? */
static int at_or_below(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return !strncmp(path, dir, len) && (!path[len] || path[len] == '/');
}

static void update_weight(struct follower *f, struct followed *c,
		       unsigned int weight)
{
	if (c->weight != weight)
		f->changed = 1;
	c->weight = weight;
}

#define WATCH_MASK	(IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | \
			 IN_MOVED_TO | IN_ONLYDIR | IN_EXCL_UNLINK)

/* Add or refresh cgroup @path (inode @ino), and mark it seen. */
static void add_cgroup(struct follower *f, const char *path, uint64_t ino)
{
	struct followed *c = find_path(f, path);

	if (c && c->id != ino) {
		/* Removed and made again between two looks: a new cgroup. */
		c->id = ino;
	}
	if (!c) {
		if (f->n == f->size) {
			f->size = f->size ? f->size * 2 : 64;
			f->cg = must(realloc(f->cg, f->size * sizeof(*f->cg)));
		}
		c = &f->cg[f->n++];
		c->path = xasprintf("%s", path);
		c->id = ino;
		c->wd = -1;
		c->weight = 0;
	}
	if (f->fd >= 0 && c->wd < 0) {
		c->wd = inotify_add_watch(f->fd, path, WATCH_MASK);
		if (c->wd < 0 && errno == ENOSPC)
			warnx("no inotify watch left for %s (fs.inotify."
			      "max_user_watches): its changes wait for the "
			      "next rescan", path);
	}
	update_weight(f, c, read_weight(f, path));
	c->seen = 1;
}

/* Drop @c (its watch too); the last entry takes its place. */
static void drop_cgroup(struct follower *f, struct followed *c)
{
	if (c->wd >= 0)
		inotify_rm_watch(f->fd, c->wd);
	if (c->weight)
		f->changed = 1;
	free(c->path);
	*c = f->cg[--f->n];
}

/* Forget @path and every cgroup below it. */
static void drop_below(struct follower *f, const char *path)
{
	size_t i = 0;

	while (i < f->n) {
		if (at_or_below(f->cg[i].path, path))
			drop_cgroup(f, &f->cg[i]);
		else
			i++;
	}
}

/* @path and the cgroups below it, depth first. */
static void scan(struct follower *f, const char *path)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;

	if (lstat(path, &st) || !S_ISDIR(st.st_mode))
		return;
	add_cgroup(f, path, st.st_ino);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *sub;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		sub = xasprintf("%s/%s", path, de->d_name);
		scan(f, sub);
		free(sub);
	}
	closedir(dir);
}

/* The whole subtree again: what vanished is dropped, what came added. */
static void rescan(struct follower *f)
{
	size_t i = 0;

	for (i = 0; i < f->n; i++)
		f->cg[i].seen = 0;
	scan(f, f->subtree);
	i = 0;
	while (i < f->n) {
		if (!f->cg[i].seen)
			drop_cgroup(f, &f->cg[i]);
		else
			i++;
	}
	f->overflowed = 0;
}

/*
 * Bring the device's groups to the cgroups': attach the new, reweigh the
 * changed, detach the groups no cgroup of the subtree has a weight for.
 * The table is read afresh each time: what another tool changed is seen.
 */
static int sync_device(struct follower *f)
{
	struct ioband_table_args t;
	size_t i, j;

	f->changed = 0;
	if (!load_table(f->name, &t, NULL, 0))
		return 0;
	for (i = 0; i < f->n; i++) {
		const struct followed *c = &f->cg[i];
		const struct ioband_weight *have;

		if (!c->weight)
			continue;
		have = ioband_table_find_weight(&t, c->id);
		if (!have)
			change_device(f->name, "attach %" PRIu64 ":%u", c->id,
				      c->weight);
		else if (have->weight != c->weight)
			change_device(f->name, "weight %" PRIu64 ":%u", c->id,
				      c->weight);
	}
	for (j = 0; j < t.nr_weights; j++) {
		for (i = 0; i < f->n; i++)
			if (f->cg[i].weight && f->cg[i].id == t.weights[j].id)
				break;
		if (i == f->n)
			change_device(f->name, "detach %" PRIu64, t.weights[j].id);
	}
	ioband_table_free(&t);
	return 1;
}

/* What one event changes; the device is synced after the batch. */
static void handle_event(struct follower *f, const struct inotify_event *ev)
{
	struct followed *c;
	char *path;
	size_t i;

	if (ev->mask & IN_Q_OVERFLOW) {
		f->overflowed = 1;
		return;
	}
	c = find_wd(f, ev->wd);
	if (!c)
		return;
	if (ev->mask & IN_IGNORED) {
		/* The folder is gone; its IN_DELETE in the parent drops it. */
		c->wd = -1;
		return;
	}
	if (!ev->len)
		return;
	path = xasprintf("%s/%s", c->path, ev->name);
	if (ev->mask & IN_ISDIR) {
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
			drop_below(f, path);
		if (ev->mask & (IN_CREATE | IN_MOVED_TO))
			scan(f, path);
	} else if (!strcmp(ev->name, "io.weight") ||
		   !strcmp(ev->name, "io.bfq.weight")) {
		update_weight(f, c, read_weight(f, c->path));
	} else if (!strcmp(ev->name, "cgroup.subtree_control")) {
		/* +io or -io: the weight files of the children come or go. */
		for (i = 0; i < f->n; i++)
			if (at_or_below(f->cg[i].path, c->path))
				update_weight(f, &f->cg[i],
					   read_weight(f, f->cg[i].path));
	}
	free(path);
}

/* Read the events there are; 0 when the inotify descriptor failed. */
static int read_events(struct follower *f)
{
	char buf[64 * 1024]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t len;
	char *p;

	len = read(f->fd, buf, sizeof(buf));
	if (len < 0)
		return errno == EAGAIN || errno == EINTR;
	for (p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
		ev = (const struct inotify_event *)p;
		handle_event(f, ev);
	}
	return 1;
}

/*
 * The subtree of @spec (cgroup[:<subtree>]): a cgroup folder, absolute
 * or below the cgroup2 mount, or a systemd unit (a slice, mostly).
 * Allocated, or NULL after a warning.
 */
static char *subtree_path(const char *spec)
{
	char *root, *rel, *path, *real = NULL;
	const char *sub;
	uint64_t id;
	int rc;

	if (iobandtab_weights_from(spec, &sub)) {
		warnx("weights from '%s': want cgroup or cgroup:<subtree>", spec);
		return NULL;
	}
	root = cgroup_root();
	if (unit_key(sub)) {
		/*
		 * A slice's folder is its name's (systemd.slice(5)): no need
		 * to ask systemd, which early in the boot, where the units of
		 * iobandctl-generator start, may not answer yet.
		 */
		rel = strcmp(sub + strlen(sub) - 6, ".slice") ? NULL :
		      unit_cgroup_by_layout(sub, NULL);
		rc = rel ? 0 : unit_cgroup(sub, &rel);
		if (rc == -ENOMEM)
			die_nomem();
		if (rc) {
			warnx("weights from %s: systemd has no unit %s", spec, sub);
			free(root);
			return NULL;
		}
		path = xasprintf("%s%s", root, rel);
		free(rel);
	} else if (!strncmp(sub, root, strlen(root)) &&
		   (sub[strlen(root)] == '/' || !sub[strlen(root)])) {
		path = xasprintf("%s", sub);
	} else {
		path = xasprintf("%s/%s", root, sub + (*sub == '/'));
	}
	rc = cgroup_path_to_id(root, path, &id);
	if (rc)
		warnx("weights from %s: %s: %s", spec, path,
		      rc == -EXDEV ? "not in the cgroup tree" : strerror(-rc));
	else if (!(real = realpath(path, NULL)))
		die_nomem();
	free(path);
	free(root);
	return real;
}

/*
 * The devices whose io.weight entry counts: @self (may be NULL), @below
 * (a path or "major:minor"). 0 after a warning.
 */
static int follower_init(struct follower *f, const char *name,
			 const char *spec, const char *self, const char *below)
{
	unsigned int major, minor;
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->fd = -1;
	f->subtree = subtree_path(spec);
	if (!f->subtree)
		return 0;
	if (self) {
		snprintf(f->dev_self, sizeof(f->dev_self), "%s", self);
		f->devices[f->nr_devices++] = f->dev_self;
	}
	if (parse_majmin(below, &major, &minor))
		f->dev_below = xasprintf("%u:%u", major, minor);
	else if (!stat(below, &st) && S_ISBLK(st.st_mode))
		f->dev_below = xasprintf("%u:%u", major(st.st_rdev),
					 minor(st.st_rdev));
	if (f->dev_below)
		f->devices[f->nr_devices++] = f->dev_below;
	return 1;
}

static void follower_free(struct follower *f)
{
	while (f->n)
		drop_cgroup(f, &f->cg[0]);
	free(f->cg);
	free(f->subtree);
	free(f->dev_below);
	if (f->fd >= 0)
		close(f->fd);
}

int add_cgroup_weights(struct ioband_table_args *t, const char *spec)
{
	struct follower f;
	struct ioband_group_spec g = { 0, 0, 0 };
	size_t i;

	/* Not created yet: only the device below can have an entry. */
	if (!follower_init(&f, NULL, spec, NULL, t->device))
		return 0;
	scan(&f, f.subtree);
	for (i = 0; i < f.n; i++) {
		if (!f.cg[i].weight || ioband_table_find_weight(t, f.cg[i].id))
			continue;
		g.weight = f.cg[i].weight;
		if (ioband_table_add_group(t, f.cg[i].id, &g))
			die_nomem();
	}
	follower_free(&f);
	return 1;
}

/* "major:minor" of device-mapper device @name. */
static void dm_majmin(const char *name, char *buf, size_t size)
{
	struct dm_task *dmt = new_task(DM_DEVICE_INFO);
	struct dm_info info;

	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt) ||
	    !dm_task_get_info(dmt, &info) || !info.exists)
		errx(EXIT_FAILURE, "%s: no such device", name);
	snprintf(buf, size, "%u:%u", info.major, info.minor);
	dm_task_destroy(dmt);
}

int cmd_follow(const struct command *cmd, int argc, char **argv)
{
	const char *spec = "cgroup";
	double interval = 60;
	struct follower f;
	struct target tg;
	char self[32];
	uint64_t next;
	int c, ok = 1;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_WEIGHTS_FROM:
			spec = optarg;
			break;
		case 'i':
			interval = parse_seconds_arg("--interval", optarg);
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 1, 1);
	if (!open_target(&tg, argv[optind], 0))
		return EXIT_FAILURE;
	if (strcmp(tg.table.group_type, "cgroup"))
		errx(EXIT_FAILURE, "%s groups by %s, not by cgroup", tg.name,
		     tg.table.group_type);
	dm_majmin(tg.name, self, sizeof(self));
	if (!follower_init(&f, tg.name, spec, self, tg.table.device))
		return EXIT_FAILURE;
	close_target(&tg);
	/* A refused message is a warning: the next change or rescan retries. */
	soft_changes = 1;

	f.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f.fd < 0)
		err(EXIT_FAILURE, "inotify");
	rescan(&f);
	if (!sync_device(&f))
		return EXIT_FAILURE;
	fprintf(stderr, "iobandctl: %s: following the weights of %s\n",
		f.name, f.subtree);
	next = now_ns() + (uint64_t)(interval * 1e9);
	while (ok) {
		struct pollfd p = { .fd = f.fd, .events = POLLIN };
		uint64_t now = now_ns();
		int timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;

		if (poll(&p, 1, timeout) < 0 && errno != EINTR)
			err(EXIT_FAILURE, "poll");
		if (p.revents & POLLIN)
			ok = read_events(&f);
		if (f.overflowed || now_ns() >= next) {
			rescan(&f);
			/* What another tool changed in the table, mended too. */
			f.changed = 1;
			next = now_ns() + (uint64_t)(interval * 1e9);
		}
		/* The device is gone (removed): so is the reason to follow. */
		if (f.changed && !sync_device(&f))
			ok = 0;
		if (!find_path(&f, f.subtree)) {
			warnx("%s: %s is gone", f.name, f.subtree);
			ok = 0;
		}
	}
	follower_free(&f);
	return EXIT_FAILURE;
}
