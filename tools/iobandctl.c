// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobandctl - create, inspect, tune and remove dm-ioband devices.
 *
 * Talks to device-mapper through libdevmapper: tables to create, target
 * messages to change a live device (never a suspend), the "stats" message
 * (or, from an older module, the status line) to watch it. The table and
 * stats formats live in ioband.c, group names in groupkey.c and cgroup.c,
 * the output tables in report.c; none of them needs libdevmapper.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>

#include <libdevmapper.h>
#include <libsmartcols.h>

#include "cgroup.h"
#include "groupkey.h"
#include "ioband.h"
#include "iobandtab.h"
#include "report.h"
#include "strprintf.h"

#include <blkid.h>

#ifndef IOBANDCTL_VERSION
#define IOBANDCTL_VERSION "unknown"
#endif

#define MOUNTINFO	"/proc/self/mountinfo"
#define UDEV_CONTROL	"/run/udev/control"
#define DM_CONTROL	"/dev/mapper/control"

/* libdm's log levels (libdm/misc/dm-logging.h); higher bits are flags. */
#define DM_LOG_LEVEL(l)	((l) & 0xf)
#define DM_LOG_ERR	3
#define DM_LOG_WARN	4

#define MSG_PERMISSION	"permission denied: configuring device-mapper needs " \
			"root (CAP_SYS_ADMIN)"

static int verbose;		/* -v: libdm's warnings, -vv: its debug too */
static char dm_last_error[256];	/* libdm's last error, for our message */

/* Keep libdm quiet unless asked: the user gets one message, ours. */
__attribute__((format(printf, 5, 6)))
static void log_libdm(int level, const char *file __attribute__((unused)),
		      int line __attribute__((unused)),
		      int dm_errno_or_class __attribute__((unused)),
		      const char *f, ...)
{
	va_list ap;

	level = DM_LOG_LEVEL(level);
	va_start(ap, f);
	if (verbose > 1 || (verbose && level <= DM_LOG_WARN)) {
		fputs("libdevmapper: ", stderr);
		vfprintf(stderr, f, ap);
		fputc('\n', stderr);
	} else if (level <= DM_LOG_ERR) {
		vsnprintf(dm_last_error, sizeof(dm_last_error), f, ap);
	}
	va_end(ap);
}

static void __attribute__((noreturn)) errtryhelp(const char *cmd)
{
	fprintf(stderr, "Try 'iobandctl %s%s--help' for more information.\n",
		cmd ? cmd : "", cmd ? " " : "");
	exit(EXIT_FAILURE);
}

static void __attribute__((noreturn)) die_nomem(void)
{
	errx(EXIT_FAILURE, "cannot allocate memory");
}

/* @p, or the end of iobandctl for want of memory. */
static void *must(void *p)
{
	if (!p)
		die_nomem();
	return p;
}

/* A new string, printf-style; exits when out of memory. */
#define xasprintf(...)	((char *)must(strprintf(__VA_ARGS__)))

static void *xcalloc(size_t n, size_t size)
{
	return must(calloc(n ? n : 1, size));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Arguments
 */

static unsigned int parse_uint_arg(const char *what, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || *arg == '-' || *arg == '+' || errno || v > UINT_MAX)
		errx(EXIT_FAILURE, "invalid %s '%s': expected a number from 0 "
		     "to %u", what, arg, UINT_MAX);
	return v;
}

static double parse_seconds_arg(const char *what, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v >= 0.1 && v <= 86400))
		errx(EXIT_FAILURE, "invalid %s '%s': expected seconds from 0.1 "
		     "to 86400", what, arg);
	return v;
}

static void __attribute__((noreturn)) die_bad_weight(int rc, const char *arg)
{
	if (rc == -ENOMEM)
		die_nomem();
	errx(EXIT_FAILURE, "invalid weight '%s': expected a number from %d to %d",
	     arg, IOBAND_WEIGHT_MIN, IOBAND_WEIGHT_MAX);
}

static unsigned int parse_weight_arg(const char *arg)
{
	unsigned int weight;
	int rc = ioband_parse_weight(arg, &weight);

	if (rc)
		die_bad_weight(rc, arg);
	return weight;
}

static const char *spec_example(enum ioband_spec spec)
{
	switch (spec) {
	case IOBAND_SPEC_RANGE:
		return "a/b=10240:51200";
	case IOBAND_SPEC_WEIGHT_RANGE:
		return "a/b=200:10240:0";
	default:
		return "a/b=200";
	}
}

/*
 * Split "KEY=SPEC" (at its last '='), SPEC as policy @policy spells a
 * group; *key is allocated.
 */
static char *split_key_spec(const char *what, const char *policy,
			    const char *arg, struct ioband_group_spec *g)
{
	enum ioband_spec spec = ioband_policy_spec(policy);
	char *key;
	int rc = ioband_split_spec_arg(spec, arg, &key, g);

	if (rc == -EINVAL)
		errx(EXIT_FAILURE, "invalid %s '%s': expected <key>=%s, e.g. %s",
		     what, arg, ioband_spec_help(spec), spec_example(spec));
	if (rc == -ENOMEM)
		die_nomem();
	if (rc)
		errx(EXIT_FAILURE, "invalid %s '%s': policy %s wants <key>=%s, "
		     "weights from %d to %d, KB/s with min <= max or max 0 (no "
		     "limit)", what, arg, policy, ioband_spec_help(spec),
		     IOBAND_WEIGHT_MIN, IOBAND_WEIGHT_MAX);
	return key;
}

static void check_policy(const char *policy)
{
	if (!ioband_valid_policy(policy))
		errx(EXIT_FAILURE, "unknown policy '%s': use weight, "
		     "weight-iosize, range-bw or weight-range", policy);
}

/* "MIN:MAX" in KB/s. */
static void parse_range_arg(const char *what, const char *arg,
			    struct ioband_group_spec *g)
{
	struct ioband_group_spec r;

	if (ioband_parse_spec(IOBAND_SPEC_RANGE, arg, &r))
		errx(EXIT_FAILURE, "invalid %s '%s': expected <min>:<max> in "
		     "KB/s, min <= max or max 0 (no limit)", what, arg);
	g->min_kbps = r.min_kbps;
	g->max_kbps = r.max_kbps;
}

/*
 * cgroups and group keys
 */

static char *cgroup_root(void)
{
	char *root;
	int rc = cgroup_find_mount(MOUNTINFO, &root);

	if (rc == -ENOENT)
		errx(EXIT_FAILURE, "cgroup v2 is not mounted: "
		     "mount -t cgroup2 none /sys/fs/cgroup");
	if (rc)
		errx(EXIT_FAILURE, "cannot read %s: %s", MOUNTINFO, strerror(-rc));
	return root;
}

static void __attribute__((noreturn)) die_key(int rc, const char *type,
					      const char *key, const char *root)
{
	if (rc == -ENOMEM)
		die_nomem();
	if (!group_type_uses_cgroups(type)) {
		if (rc == -ENOENT)
			errx(EXIT_FAILURE, "no %s named '%s'", !strcmp(type, "gid") ?
			     "group" : "user", key);
		errx(EXIT_FAILURE, "invalid %s group '%s': give %s", type, key,
		     group_type_key_help(type));
	}
	switch (rc) {
	case -ENOENT:
		errx(EXIT_FAILURE, "cgroup path %s not found under %s: create it "
		     "first (mkdir)", key, root);
	case -ENOTDIR:
		errx(EXIT_FAILURE, "%s is not a cgroup: a cgroup is a directory "
		     "under %s", key, root);
	case -EXDEV:
		errx(EXIT_FAILURE, "%s is outside the cgroup v2 hierarchy "
		     "mounted on %s", key, root);
	default:
		errx(EXIT_FAILURE, "cannot resolve cgroup %s: %s", key,
		     strerror(-rc));
	}
}

/* The id of group @key of @type; *root is looked up on first need. */
static uint64_t resolve_key(const char *type, const char *key, char **root)
{
	uint64_t id;
	int rc;

	if (!strcmp(type, "none"))
		errx(EXIT_FAILURE, "group type none has only the default group: "
		     "no group '%s'", key);
	if (group_type_uses_cgroups(type) && !*root)
		*root = cgroup_root();
	rc = group_key_to_id(type, key, *root, &id);
	if (rc)
		die_key(rc, type, key, *root);
	return id;
}

/*
 * Names for groups @ids[0..n-1] of @type: each allocated, or NULL (print
 * the id). One walk of the cgroup tree names every cgroup.
 */
static char **group_names(const char *type, const uint64_t *ids, size_t n)
{
	char **names = xcalloc(n, sizeof(*names));
	char *root;
	size_t i;

	if (group_type_uses_cgroups(type)) {
		/* Not fatal: groups print as ids without a tree to walk. */
		if (n && !cgroup_find_mount(MOUNTINFO, &root)) {
			if (cgroup_ids_to_paths(root, ids, n, names))
				warnx("cannot walk the cgroup tree at %s: "
				      "printing ids", root);
			free(root);
		}
		return names;
	}
	for (i = 0; i < n; i++)
		if (!(names[i] = group_id_to_name(type, ids[i])))
			die_nomem();
	return names;
}

static void free_names(char **names, size_t n)
{
	size_t i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/*
 * libdevmapper
 */

/*
 * Why did a task fail? libdm opens the control node on the first run: a
 * failure to open it leaves no ioctl errno, so look at the node.
 */
static int task_errno(struct dm_task *dmt)
{
	int e = dm_task_get_errno(dmt);

	if (!e && access(DM_CONTROL, R_OK | W_OK))
		e = errno == ENOENT ? ENODEV : errno;
	return e;
}

/*
 * dm_task_create() fails when it cannot open the control node or its
 * version ioctl fails: which, and why?
 */
static void __attribute__((noreturn)) die_no_dm(void)
{
	struct dm_ioctl dmi = {
		.version = { DM_VERSION_MAJOR, 0, 0 },
		.data_size = sizeof(dmi),
	};
	int fd = open(DM_CONTROL, O_RDWR | O_CLOEXEC);
	int e = fd < 0 ? errno : 0;

	if (fd >= 0) {
		/* Without CAP_SYS_ADMIN every dm ioctl fails with EACCES. */
		if (ioctl(fd, DM_VERSION, &dmi))
			e = errno;
		close(fd);
	}
	if (e == EACCES || e == EPERM)
		errx(EXIT_FAILURE, MSG_PERMISSION);
	errx(EXIT_FAILURE, "device-mapper is not available (%s: %s): load it "
	     "with modprobe dm-mod", DM_CONTROL, e ? strerror(e) : "unusable");
}

static struct dm_task *new_task(int type)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt)
		die_no_dm();
	return dmt;
}

/* Is the ioband target registered with device-mapper? */
static int ioband_target_loaded(void)
{
	struct dm_task *dmt = new_task(DM_DEVICE_LIST_VERSIONS);
	struct dm_versions *v, *last;
	int found = 0;

	if (!dm_task_run(dmt))
		goto out;
	v = dm_task_get_versions(dmt);
	do {
		last = v;
		if (!strcmp(v->name, IOBAND_TARGET_NAME)) {
			found = 1;
			break;
		}
		v = (struct dm_versions *)((char *)v + v->next);
	} while (last != v);
out:
	dm_task_destroy(dmt);
	return found;
}

/* Explain why an ioctl on device @name failed, with what to do. */
static void warn_dm_errno(int e, const char *what, const char *name)
{
	switch (e) {
	case ENXIO:
		warnx("no device-mapper device named %s: see iobandctl list", name);
		break;
	case ENODEV:
		warnx("device-mapper is not available (no %s): modprobe dm-mod",
		      DM_CONTROL);
		break;
	case EACCES:
	case EPERM:
		warnx(MSG_PERMISSION);
		break;
	case EBUSY:
		warnx("cannot %s %s: it is in use (mounted, or open by a "
		      "process or another device); close it first", what, name);
		break;
	case EEXIST:
		warnx("cannot %s %s: a device-mapper device of that name "
		      "already exists", what, name);
		break;
	default:
		warnx("cannot %s %s: %s%s%s%s", what, name,
		      e ? strerror(e) : "device-mapper error",
		      *dm_last_error ? " (" : "", dm_last_error,
		      *dm_last_error ? ")" : "");
	}
}

/*
 * udev makes the /dev/mapper nodes when it runs; when it does not (the test
 * guest, rescue shells), turning the sync off and leaving the library
 * fallback on makes libdm mknod/unlink the nodes itself in dm_udev_wait().
 * Returns the cookie flags for dm_task_set_cookie().
 */
static uint16_t setup_udev(void)
{
	if (access(UDEV_CONTROL, F_OK)) {
		dm_udev_set_sync_support(0);
		return 0;
	}
	return DM_UDEV_DISABLE_LIBRARY_FALLBACK;
}

/*
 * Run a TABLE or STATUS task on @name and check that it is an ioband
 * device of one target, as iobandctl makes them. Returns NULL after a
 * warning (unless @quiet).
 */
static struct dm_task *ioband_task(int type, const char *name, int quiet)
{
	struct dm_task *dmt = new_task(type);
	char *target, *params;
	uint64_t start, length;
	struct dm_info info;
	void *next;

	if (!dm_task_set_name(dmt, name) || !dm_task_no_open_count(dmt)) {
		if (!quiet)
			warnx("invalid device name '%s'", name);
		goto bad;
	}
	if (!dm_task_run(dmt)) {
		if (!quiet)
			warn_dm_errno(task_errno(dmt), "query", name);
		goto bad;
	}
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		if (!quiet)
			warn_dm_errno(ENXIO, "query", name);
		goto bad;
	}
	next = dm_get_next_target(dmt, NULL, &start, &length, &target, &params);
	if (!target || strcmp(target, IOBAND_TARGET_NAME) || !params) {
		if (!quiet)
			warnx("%s is not an ioband device (its target is %s): "
			      "see iobandctl list", name, target ? target : "none");
		goto bad;
	}
	if (next) {
		if (!quiet)
			warnx("%s has several targets: iobandctl handles ioband "
			      "devices of one target; use dmsetup", name);
		goto bad;
	}
	return dmt;
bad:
	dm_task_destroy(dmt);
	return NULL;
}

/* The params of the one target of a task made by ioband_task(). */
static const char *task_params(struct dm_task *dmt, uint64_t *length)
{
	uint64_t start, len;
	char *target, *params;

	dm_get_next_target(dmt, NULL, &start, &len, &target, &params);
	if (length)
		*length = len;
	return params;
}

/*
 * After parsing @text, the kernel's @what of device @name: out of memory
 * is the end, and so is text we cannot parse, unless @quiet. Returns
 * whether it parsed.
 */
static int check_parsed(int rc, const char *name, const char *what,
			const char *text, int quiet)
{
	if (rc == -ENOMEM)
		die_nomem();
	if (rc && !quiet)
		errx(EXIT_FAILURE, "%s: cannot parse the %s '%s': do iobandctl "
		     "and the dm-ioband module come from the same version?",
		     name, what, text);
	return !rc;
}

/* Read the table of ioband device @name; 0 after a warning. */
static int load_table(const char *name, struct ioband_table *t,
		      uint64_t *sectors, int quiet)
{
	struct dm_task *dmt = ioband_task(DM_DEVICE_TABLE, name, quiet);
	const char *params;
	int ok;

	if (!dmt)
		return 0;
	params = task_params(dmt, sectors);
	ok = check_parsed(ioband_parse_table(params, t), name, "table", params,
			  quiet);
	dm_task_destroy(dmt);
	return ok;
}

/*
 * Send @msg to ioband device @name (whose table was checked). Returns 1
 * and, if @response, the kernel's reply (allocated); 0 with *err set.
 */
static int send_message(const char *name, const char *msg, char **response,
			int *err)
{
	struct dm_task *dmt = new_task(DM_DEVICE_TARGET_MSG);
	const char *reply;
	int ok;

	ok = dm_task_set_name(dmt, name) && dm_task_set_sector(dmt, 0) &&
	     dm_task_set_message(dmt, msg) && dm_task_run(dmt);
	if (!ok) {
		*err = task_errno(dmt);
	} else if (response) {
		reply = dm_task_get_message_response(dmt);
		*response = xasprintf("%s", reply ? reply : "");
	}
	dm_task_destroy(dmt);
	return ok;
}

/* Send a message to change device @name; exits on failure. */
/*
 * While set, a refused message is a warning and a count in soft_failures,
 * not the end: apply goes on with the other lines.
 */
static int soft_changes;
static unsigned int soft_failures;

static void change_device(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void change_device(const char *name, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int e;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		die_nomem();
	va_end(ap);
	if (verbose)
		fprintf(stderr, "iobandctl: message to %s: %s\n", name, msg);
	if (!send_message(name, msg, NULL, &e)) {
		if (e == EINVAL)
			warnx("%s refused '%s': the kernel log (dmesg) says why; "
			      "an older dm-ioband module may not know this "
			      "message", name, msg);
		else
			warn_dm_errno(e, "change", name);
		if (!soft_changes)
			exit(EXIT_FAILURE);
		soft_failures++;
	}
	free(msg);
}

/* Names of every ioband device, sorted as device-mapper lists them. */
static char **list_ioband_devices(size_t *count)
{
	struct dm_task *dmt = new_task(DM_DEVICE_LIST);
	struct dm_names *names;
	char **list = NULL;
	size_t n = 0;
	unsigned int next = 0;

	if (!dm_task_run(dmt)) {
		warn_dm_errno(task_errno(dmt), "list", "devices");
		exit(EXIT_FAILURE);
	}
	names = dm_task_get_names(dmt);
	if (names && names->dev) {
		do {
			struct dm_task *t;

			names = (struct dm_names *)((char *)names + next);
			t = ioband_task(DM_DEVICE_TABLE, names->name, 1);
			if (t) {
				dm_task_destroy(t);
				list = realloc(list, (n + 1) * sizeof(*list));
				if (!list)
					die_nomem();
				list[n++] = xasprintf("%s", names->name);
			}
			next = names->next;
		} while (next);
	}
	dm_task_destroy(dmt);
	*count = n;
	return list;
}

/* "/dev/sda1" for a table's "8:1" when sysfs knows it, else "8:1". */
static char *device_name(const char *majmin)
{
	char path[PATH_MAX], line[256], *name = NULL;
	FILE *f;

	if (snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", majmin) >=
	    (int)sizeof(path) || strchr(majmin, '/'))
		return xasprintf("%s", majmin);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = '\0';
			name = xasprintf("/dev/%s", line + 8);
			break;
		}
	if (f)
		fclose(f);
	return name ? name : xasprintf("%s", majmin);
}

/*
 * A device to change: its table checked and read, and a lazily found
 * cgroup root to resolve keys.
 */
struct target {
	const char *name;
	struct ioband_table table;
	char *cgroup_root;
};

/* Open ioband device @name; 0 after a warning (unless @quiet). */
static int open_target(struct target *tg, const char *name, int quiet)
{
	memset(tg, 0, sizeof(*tg));
	tg->name = name;
	return load_table(name, &tg->table, NULL, quiet);
}

static void close_target(struct target *tg)
{
	ioband_table_free(&tg->table);
	free(tg->cgroup_root);
}

static uint64_t target_key(struct target *tg, const char *key)
{
	return resolve_key(tg->table.group_type, key, &tg->cgroup_root);
}

/*
 * Samples: what "stat" and "top" print
 */

struct sample {
	char *name;
	struct ioband_table table;
	struct ioband_stats stats;
	char **names;		/* per group; NULL entries print the id */
	uint64_t when_ns;
};

/* Set when the module answers "stats" with -EINVAL: use the status line. */
static int no_stats_message;

static int sample_from_status(struct sample *s, int quiet)
{
	struct dm_task *dmt = ioband_task(DM_DEVICE_STATUS, s->name, quiet);
	struct ioband_status status;
	const char *params;
	int rc;

	if (!dmt)
		return 0;
	params = task_params(dmt, NULL);
	check_parsed(ioband_parse_status(params, &status), s->name, "status",
		     params, 0);
	dm_task_destroy(dmt);
	rc = ioband_stats_from_status(&s->table, &status, &s->stats);
	ioband_status_free(&status);
	if (rc)
		die_nomem();
	return 1;
}

static int sample_from_stats(struct sample *s, int quiet)
{
	char *reply;
	int e;

	if (!send_message(s->name, "stats", &reply, &e)) {
		if (e == EINVAL) {
			no_stats_message = 1;
			return sample_from_status(s, quiet);
		}
		if (!quiet)
			warn_dm_errno(e, "query", s->name);
		return 0;
	}
	check_parsed(ioband_parse_stats(reply, &s->stats), s->name,
		     "stats reply", reply, 0);
	free(reply);
	return 1;
}

static void free_sample(struct sample *s)
{
	free_names(s->names, s->stats.nr_groups);
	ioband_stats_free(&s->stats);
	ioband_table_free(&s->table);
	free(s->name);
	memset(s, 0, sizeof(*s));
}

/* Read device @name's counters; 0 after a warning (unless @quiet). */
static int take_sample(struct sample *s, const char *name, int quiet)
{
	uint64_t *ids;
	size_t i;
	int ok;

	memset(s, 0, sizeof(*s));
	s->name = xasprintf("%s", name);
	if (!load_table(name, &s->table, NULL, quiet)) {
		free(s->name);
		return 0;
	}
	s->when_ns = now_ns();
	ok = no_stats_message ? sample_from_status(s, quiet) :
				sample_from_stats(s, quiet);
	if (!ok) {
		ioband_table_free(&s->table);
		free(s->name);
		return 0;
	}

	/* groups[0] is the default group: its id means nothing. */
	ids = xcalloc(s->stats.nr_groups, sizeof(*ids));
	for (i = 1; i < s->stats.nr_groups; i++)
		ids[i - 1] = s->stats.groups[i].id;
	s->names = xcalloc(s->stats.nr_groups, sizeof(*s->names));
	if (s->stats.nr_groups > 1) {
		char **names = group_names(s->table.group_type, ids,
					   s->stats.nr_groups - 1);

		memcpy(s->names + 1, names, (s->stats.nr_groups - 1) * sizeof(*names));
		free(names);
	}
	free(ids);
	return 1;
}

/*
 * The rows of @cur against @prev (NULL: since the counters started),
 * appended to *rows; @rates is allocated for cur's groups and returned.
 */
static struct ioband_rates *sample_rows(const struct sample *prev,
					const struct sample *cur,
					struct stat_row **rows, size_t *nrows)
{
	const struct ioband_stats *st = &cur->stats;
	struct ioband_rates *rates = xcalloc(st->nr_groups, sizeof(*rates));
	uint64_t interval = 0;
	size_t i;

	if (prev)
		interval = cur->when_ns - prev->when_ns;
	else if (st->has_elapsed)
		interval = st->elapsed_ns;
	ioband_stats_rates(prev ? &prev->stats : NULL, st, interval, rates);

	*rows = realloc(*rows, (*nrows + st->nr_groups) * sizeof(**rows));
	if (!*rows)
		die_nomem();
	for (i = 0; i < st->nr_groups; i++) {
		struct stat_row *row = &(*rows)[(*nrows)++];

		row->device = cur->name;
		row->group = cur->names[i];
		row->g = &st->groups[i];
		row->rates = &rates[i];
		row->has_sched = st->has_sched;
	}
	return rates;
}

/* A set of samples, one per device, and the rows they make. */
struct sample_set {
	struct sample *samples;
	size_t n;
	struct ioband_rates **rates;
	struct stat_row *rows;
	size_t nrows;
};

static void free_sample_set(struct sample_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		free_sample(&set->samples[i]);
		free(set->rates[i]);
	}
	free(set->samples);
	free(set->rates);
	free(set->rows);
	memset(set, 0, sizeof(*set));
}

static const struct sample *find_sample(const struct sample_set *set,
					const char *name)
{
	size_t i;

	for (i = 0; set && i < set->n; i++)
		if (!strcmp(set->samples[i].name, name))
			return &set->samples[i];
	return NULL;
}

/*
 * Sample devices @names and make the rows against @prev. Devices that
 * fail are skipped (after a warning unless @quiet); returns how many.
 */
static size_t take_sample_set(struct sample_set *set, char *const *names,
			      size_t n, const struct sample_set *prev, int quiet)
{
	size_t i, failed = 0;

	memset(set, 0, sizeof(*set));
	set->samples = xcalloc(n, sizeof(*set->samples));
	set->rates = xcalloc(n, sizeof(*set->rates));
	for (i = 0; i < n; i++) {
		struct sample *s = &set->samples[set->n];

		if (!take_sample(s, names[i], quiet)) {
			failed++;
			continue;
		}
		set->n++;
	}
	/* Rows point into the samples: make them once all are taken. */
	for (i = 0; i < set->n; i++)
		set->rates[i] = sample_rows(find_sample(prev, set->samples[i].name),
					    &set->samples[i], &set->rows,
					    &set->nrows);
	return failed;
}

/*
 * Commands
 */

struct command {
	const char *name;
	int (*fn)(const struct command *cmd, int argc, char **argv);
	const char *args;
	const char *summary;
	const char *help;	/* printed after the usage line */
	void (*extra_help)(void);
};

static void __attribute__((noreturn)) usage_command(const struct command *cmd)
{
	printf("Usage:\n iobandctl %s %s\n\n%s.\n\n%s", cmd->name, cmd->args,
	       cmd->summary, cmd->help);
	if (cmd->extra_help)
		cmd->extra_help();
	exit(EXIT_SUCCESS);
}

/* An option that @cmd's own parsing did not take: -h, or a misuse. */
static void __attribute__((noreturn)) other_option(const struct command *cmd,
						   int c)
{
	if (c == 'h')
		usage_command(cmd);
	errtryhelp(cmd->name);
}

static const struct option help_only[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Check the number of operands of @cmd: at least @min, at most @max. */
static void check_operands(const struct command *cmd, int argc, int min, int max)
{
	int n = argc - optind;

	if (n >= min && n <= max)
		return;
	warnx(n < min ? "missing operand: expected %s" : "too many arguments: "
	      "expected %s", cmd->args);
	errtryhelp(cmd->name);
}

/* For commands with no option but --help. */
static void parse_no_options(const struct command *cmd, int argc, char **argv,
			     int min, int max)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", help_only, NULL)) != -1) {
		other_option(cmd, c);
	}
	check_operands(cmd, argc, min, max);
}

static void check_name(const char *name)
{
	if (!*name || strchr(name, '/') || strlen(name) >= DM_NAME_LEN)
		errx(EXIT_FAILURE, "invalid device name '%s': give 1 to %d "
		     "characters without '/'", name, DM_NAME_LEN - 1);
}

/*
 * create
 */

/* "major:minor" with nothing else, as the kernel's dm_get_device() takes it. */
static int parse_majmin(const char *s, unsigned int *major, unsigned int *minor)
{
	size_t a = strspn(s, "0123456789");
	size_t b;

	if (!a || a > 9 || s[a] != ':')
		return 0;
	b = strspn(s + a + 1, "0123456789");
	if (!b || b > 9 || s[a + 1 + b])
		return 0;
	*major = strtoul(s, NULL, 10);
	*minor = strtoul(s + a + 1, NULL, 10);
	return 1;
}

static uint64_t device_sectors(const char *device)
{
	unsigned int major, minor;
	uint64_t bytes;
	struct stat st;
	int fd;

	if (parse_majmin(device, &major, &minor)) {
		unsigned long long sectors;
		char path[64];
		FILE *f;
		int n;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size",
			 major, minor);
		f = fopen(path, "re");
		if (!f)
			errx(EXIT_FAILURE, "no block device %s", device);
		n = fscanf(f, "%llu", &sectors);
		fclose(f);
		if (n != 1)
			errx(EXIT_FAILURE, "cannot read the size of %s from %s",
			     device, path);
		return sectors;
	}

	fd = open(device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(EXIT_FAILURE, "cannot open %s", device);
	if (fstat(fd, &st))
		err(EXIT_FAILURE, "stat of %s failed", device);
	if (!S_ISBLK(st.st_mode))
		errx(EXIT_FAILURE, "%s is not a block device", device);
	if (ioctl(fd, BLKGETSIZE64, &bytes))
		err(EXIT_FAILURE, "cannot get the size of %s", device);
	close(fd);
	return bytes >> 9;
}

static int device_exists(const char *name)
{
	struct dm_task *dmt = new_task(DM_DEVICE_INFO);
	struct dm_info info;
	int exists;

	exists = dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
		 dm_task_get_info(dmt, &info) && info.exists;
	dm_task_destroy(dmt);
	return exists;
}

static int create_device(const char *name, uint64_t sectors, const char *params)
{
	struct dm_task *dmt;
	uint32_t cookie = 0;
	uint16_t flags;
	int ok = 0, e;

	/*
	 * libdm creates and loads with two ioctls of inner tasks whose errno
	 * does not reach dm_task_get_errno(): ask first, to say why.
	 */
	if (device_exists(name)) {
		warn_dm_errno(EEXIST, "create", name);
		return 0;
	}
	flags = setup_udev();
	dmt = new_task(DM_DEVICE_CREATE);
	if (!dm_task_set_name(dmt, name) ||
	    !dm_task_add_target(dmt, 0, sectors, IOBAND_TARGET_NAME, params) ||
	    !dm_task_set_cookie(dmt, &cookie, flags)) {
		warn_dm_errno(0, "create", name);
		goto out;
	}
	ok = dm_task_run(dmt);
	e = task_errno(dmt);
	/* Also on failure: it releases the cookie and runs the node ops. */
	dm_udev_wait(cookie);
	if (ok)
		goto out;

	if (e == EEXIST || e == EACCES || e == EPERM || e == ENODEV)
		warn_dm_errno(e, "create", name);
	else if (!ioband_target_loaded())
		warnx("cannot create %s: dm-ioband is not loaded; load it with "
		      "modprobe dm-ioband", name);
	else if (!e || e == EINVAL)
		warnx("cannot create %s: the kernel rejected the table (dmesg "
		      "tells why):\n  0 %" PRIu64 " %s %s%s%s", name, sectors,
		      IOBAND_TARGET_NAME, params, *dm_last_error ? "\n  " : "",
		      dm_last_error);
	else
		warn_dm_errno(e, "create", name);
out:
	dm_task_destroy(dmt);
	return ok;
}

/* Turn each "KEY=SPEC" into a group of the table ("default": its own). */
static void add_group_args(struct ioband_table *t, char **args, size_t n)
{
	struct ioband_group_spec g;
	char *root = NULL, *key;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		key = split_key_spec("--group", t->policy, args[i], &g);
		if (!strcmp(key, GROUP_KEY_DEFAULT)) {
			t->default_weight = g.weight;
			t->default_min_kbps = g.min_kbps;
			t->default_max_kbps = g.max_kbps;
			free(key);
			continue;
		}
		rc = ioband_table_add_group(t, resolve_key(t->group_type, key,
							   &root), &g);
		if (rc == -EEXIST)
			errx(EXIT_FAILURE, "group %s is given more than once", key);
		if (rc)
			die_nomem();
		free(key);
	}
	free(root);
}

static void copy_word(char *buf, size_t size, const char *word)
{
	snprintf(buf, size, "%s", word);
}

static int cmd_create(const struct command *cmd, int argc, char **argv)
{
	enum { OPT_IO_LIMIT = 0x100, OPT_IO_THROTTLE, OPT_TOKEN_BASE };
	struct ioband_group_spec range = { 0, 0, 0 };
	const char *range_arg = NULL;
	static const struct option longopts[] = {
		{ "domain",         required_argument, NULL, 'd' },
		{ "policy",         required_argument, NULL, 'p' },
		{ "type",           required_argument, NULL, 't' },
		{ "group",          required_argument, NULL, 'g' },
		{ "weight",         required_argument, NULL, 'w' },
		{ "default-weight", required_argument, NULL, 'D' },
		{ "default-range",  required_argument, NULL, 'R' },
		{ "io-limit",       required_argument, NULL, OPT_IO_LIMIT },
		{ "io-throttle",    required_argument, NULL, OPT_IO_THROTTLE },
		{ "token-base",     required_argument, NULL, OPT_TOKEN_BASE },
		{ "dry-run",        no_argument,       NULL, 'n' },
		{ "help",           no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct ioband_table t = {
		.group_type = "cgroup",
		.policy = "weight",
		.default_weight = IOBAND_WEIGHT_DEFAULT,
	};
	const char *domain = NULL, *name;
	char **group_args, *params;
	size_t nr_group_args = 0;
	uint64_t sectors;
	int c, dry_run = 0, ok = 1, rc;

	/* Every --group fits in argc slots. */
	group_args = xcalloc(argc, sizeof(*group_args));
	while ((c = getopt_long(argc, argv, "d:p:t:g:w:D:R:nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			domain = optarg;
			break;
		case 'p':
			check_policy(optarg);
			copy_word(t.policy, sizeof(t.policy), optarg);
			break;
		case 't':
			if (!ioband_valid_group_type(optarg))
				errx(EXIT_FAILURE, "unknown group type '%s': use "
				     "cgroup, uid, gid, pid, pgrp or none", optarg);
			copy_word(t.group_type, sizeof(t.group_type), optarg);
			break;
		case 'g':
		case 'w':
			group_args[nr_group_args++] = optarg;
			break;
		case 'D':
			t.default_weight = parse_weight_arg(optarg);
			break;
		case 'R':
			range_arg = optarg;
			parse_range_arg("--default-range", optarg, &range);
			break;
		case OPT_IO_LIMIT:
			t.io_limit = parse_uint_arg("--io-limit", optarg);
			break;
		case OPT_IO_THROTTLE:
			t.io_throttle = parse_uint_arg("--io-throttle", optarg);
			break;
		case OPT_TOKEN_BASE:
			t.token_base = parse_uint_arg("--token-base", optarg);
			break;
		case 'n':
			dry_run = 1;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 2, 2);
	name = argv[optind];
	t.device = argv[optind + 1];
	check_name(name);

	if (!domain && strlen(name) > IOBAND_DOMAIN_MAX)
		errx(EXIT_FAILURE, "name %s is longer than %d characters: give "
		     "the bandwidth domain with --domain <id>", name,
		     IOBAND_DOMAIN_MAX);
	if (!domain)
		domain = name;
	if (!ioband_valid_domain(domain))
		errx(EXIT_FAILURE, "invalid domain '%s': give 1 to %d characters "
		     "without spaces", domain, IOBAND_DOMAIN_MAX);
	strcpy(t.domain, domain);
	if (!*t.device || strpbrk(t.device, " \t\n"))
		errx(EXIT_FAILURE, "invalid device '%s'", t.device);

	if (range_arg && !ioband_range_policy(t.policy))
		errx(EXIT_FAILURE, "--default-range %s needs policy range-bw or "
		     "weight-range", range_arg);
	t.default_min_kbps = range.min_kbps;
	t.default_max_kbps = range.max_kbps;
	add_group_args(&t, group_args, nr_group_args);
	free(group_args);

	sectors = device_sectors(t.device);
	if (!sectors)
		errx(EXIT_FAILURE, "%s is empty", t.device);

	rc = ioband_format_params(&t, &params);
	if (rc)
		errx(EXIT_FAILURE, "cannot build the table: %s", strerror(-rc));
	t.device = NULL;	/* argv's, not ours to free */
	ioband_table_free(&t);

	if (dry_run)
		printf("0 %" PRIu64 " %s %s\n", sectors, IOBAND_TARGET_NAME, params);
	else
		ok = create_device(name, sectors, params);
	free(params);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * remove
 */

static int cmd_remove(const struct command *cmd, int argc, char **argv)
{
	struct target tg;
	struct dm_task *dmt;
	uint32_t cookie = 0;
	uint16_t flags;
	const char *name;
	int ok;

	parse_no_options(cmd, argc, argv, 1, 1);
	name = argv[optind];

	/* Remove nothing that is not ours. */
	if (!open_target(&tg, name, 0))
		return EXIT_FAILURE;
	close_target(&tg);

	flags = setup_udev();
	dmt = new_task(DM_DEVICE_REMOVE);
	/* A transient opener (udev's blkid) must not fail the removal. */
	ok = dm_task_set_name(dmt, name) && dm_task_retry_remove(dmt) &&
	     dm_task_set_cookie(dmt, &cookie, flags) && dm_task_run(dmt);
	if (!ok)
		warn_dm_errno(task_errno(dmt), "remove", name);
	dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * list
 */

static const struct option output_opts[] = {
	{ "json",       no_argument, NULL, 'J' },
	{ "raw",        no_argument, NULL, 'r' },
	{ "noheadings", no_argument, NULL, 'n' },
	{ "help",       no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The options of output_opts; returns 0 if @c is not one of them. */
static int output_option(int c, struct report_opts *opts)
{
	switch (c) {
	case 'J':
		opts->json = 1;
		return 1;
	case 'r':
		opts->raw = 1;
		return 1;
	case 'n':
		opts->noheadings = 1;
		return 1;
	}
	return 0;
}

static void add_cells(struct libscols_line *ln, char **cells, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (report_set_cell(ln, i, cells[i]))
			die_nomem();
}

static int cmd_list(const struct command *cmd, int argc, char **argv)
{
	static const struct {
		const char *name;
		int flags;
		int json_type;
	} cols[] = {
		{ "NAME",   0,              SCOLS_JSON_STRING },
		{ "DOMAIN", 0,              SCOLS_JSON_STRING },
		{ "POLICY", 0,              SCOLS_JSON_STRING },
		{ "TYPE",   0,              SCOLS_JSON_STRING },
		{ "GROUPS", SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
		{ "DEVICE", 0,              SCOLS_JSON_STRING },
	};
	struct report_opts opts = { 0 };
	struct libscols_table *tb;
	char **names;
	size_t n, i;
	int c;

	while ((c = getopt_long(argc, argv, "Jrnh", output_opts, NULL)) != -1) {
		if (output_option(c, &opts))
			continue;
		other_option(cmd, c);
	}
	check_operands(cmd, argc, 0, 0);

	names = list_ioband_devices(&n);
	if (!n && !ioband_target_loaded())
		errx(EXIT_FAILURE, "dm-ioband is not loaded: load it with "
		     "modprobe dm-ioband");

	tb = report_new_table(&opts, "iobanddevices");
	if (!tb)
		die_nomem();
	for (i = 0; i < sizeof(cols) / sizeof(*cols); i++)
		if (report_add_column(tb, cols[i].name, 0, cols[i].flags,
				      cols[i].json_type))
			die_nomem();
	for (i = 0; i < n; i++) {
		struct libscols_line *ln;
		struct ioband_table t;
		char *cells[6];

		/* Gone since the listing: skip it. */
		if (!load_table(names[i], &t, NULL, 1))
			continue;
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			die_nomem();
		cells[0] = xasprintf("%s", names[i]);
		cells[1] = xasprintf("%s", t.domain);
		cells[2] = xasprintf("%s", t.policy);
		cells[3] = xasprintf("%s", t.group_type);
		cells[4] = xasprintf("%zu", t.nr_weights);
		cells[5] = device_name(t.device);
		add_cells(ln, cells, 6);
		ioband_table_free(&t);
	}
	/* An empty list is an empty JSON array, and no line at all. */
	if (opts.json || scols_table_get_nlines(tb))
		scols_print_table(tb);
	scols_unref_table(tb);
	free_names(names, n);
	return EXIT_SUCCESS;
}

/*
 * table
 */

static int cmd_table(const struct command *cmd, int argc, char **argv)
{
	struct ioband_group_spec g;
	enum ioband_spec spec;
	struct ioband_table t;
	char s[48];
	uint64_t sectors, *ids;
	char **names, *dev;
	size_t i;

	parse_no_options(cmd, argc, argv, 1, 1);
	if (!load_table(argv[optind], &t, &sectors, 0))
		return EXIT_FAILURE;
	spec = ioband_policy_spec(t.policy);

	ids = xcalloc(t.nr_weights, sizeof(*ids));
	for (i = 0; i < t.nr_weights; i++)
		ids[i] = t.weights[i].id;
	names = group_names(t.group_type, ids, t.nr_weights);
	dev = device_name(t.device);

	ioband_table_default_spec(&t, &g);
	ioband_format_spec(spec, &g, s, sizeof(s));
	printf("0 %" PRIu64 " %s %s %s %u %u %s %s %u :%s", sectors,
	       IOBAND_TARGET_NAME, dev, t.domain, t.io_throttle, t.io_limit,
	       t.group_type, t.policy, t.token_base, s);
	for (i = 0; i < t.nr_weights; i++) {
		ioband_group_to_spec(&t.weights[i], &g);
		ioband_format_spec(spec, &g, s, sizeof(s));
		if (names[i])
			printf(" %s:%s", names[i], s);
		else
			printf(" %" PRIu64 ":%s", ids[i], s);
	}
	putchar('\n');

	free(dev);
	free_names(names, t.nr_weights);
	free(ids);
	ioband_table_free(&t);
	return EXIT_SUCCESS;
}

/*
 * set, attach, detach, policy, reset: messages to a live device
 */

/*
 * Give group @id (@is_default: the default group) its spec under the
 * device's policy: "weight [<id>:]<w>" and "range-bw <id>|-1:<min>:<max>".
 */
static void send_spec(struct target *tg, int is_default, uint64_t id,
		      const struct ioband_group_spec *g)
{
	enum ioband_spec spec = ioband_policy_spec(tg->table.policy);

	if (spec != IOBAND_SPEC_RANGE) {
		if (is_default)
			change_device(tg->name, "weight %u", g->weight);
		else
			change_device(tg->name, "weight %" PRIu64 ":%u", id,
				      g->weight);
	}
	if (spec == IOBAND_SPEC_WEIGHT)
		return;
	if (is_default)
		change_device(tg->name, "range-bw -1:%u:%u", g->min_kbps,
			      g->max_kbps);
	else
		change_device(tg->name, "range-bw %" PRIu64 ":%u:%u", id,
			      g->min_kbps, g->max_kbps);
}

/* KEY=SPEC, the key "default" for the default group. */
static void set_weight(struct target *tg, const char *arg)
{
	struct ioband_group_spec g;
	char *key = split_key_spec("group", tg->table.policy, arg, &g);

	if (!strcmp(key, GROUP_KEY_DEFAULT))
		send_spec(tg, 1, 0, &g);
	else
		send_spec(tg, 0, target_key(tg, key), &g);
	free(key);
}

/*
 * set, attach, detach, policy and reset: open the device named by the
 * first operand (an ioband device of one target, its table read; exit if
 * not), let @send send the messages given the operands after the device
 * and @ctx, close it.
 */
static int change_command(char **argv,
			  void (*send)(struct target *tg, char **operands,
				       void *ctx),
			  void *ctx)
{
	struct target tg;

	if (!open_target(&tg, argv[optind], 0))
		exit(EXIT_FAILURE);
	send(&tg, argv + optind + 1, ctx);
	close_target(&tg);
	return EXIT_SUCCESS;
}

/* The tunables' messages (@ctx, NULL-terminated), then each KEY=SPEC. */
static void send_set(struct target *tg, char **operands, void *ctx)
{
	char **messages = ctx;

	for (; *messages; messages++)
		change_device(tg->name, "%s", *messages);
	for (; *operands; operands++)
		set_weight(tg, *operands);
}

static int cmd_set(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "io-limit",    required_argument, NULL, 'l' },
		{ "io-throttle", required_argument, NULL, 't' },
		{ "token-base",  required_argument, NULL, 'b' },
		{ "carryover",   required_argument, NULL, 'c' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	/* The message of each option. */
	static const struct {
		int opt;
		const char *option;
		const char *message;
	} tunables[] = {
		{ 'l', "--io-limit",    "io_limit" },
		{ 't', "--io-throttle", "io_throttle" },
		{ 'b', "--token-base",  "token" },
		{ 'c', "--carryover",   "carryover" },
	};
	char **messages = xcalloc(argc + 1, sizeof(*messages));
	size_t nmessages = 0, i;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		for (i = 0; i < sizeof(tunables) / sizeof(*tunables); i++)
			if (c == tunables[i].opt)
				break;
		if (i < sizeof(tunables) / sizeof(*tunables)) {
			messages[nmessages++] = xasprintf("%s %u",
				tunables[i].message,
				parse_uint_arg(tunables[i].option, optarg));
			continue;
		}
		other_option(cmd, c);
	}
	check_operands(cmd, argc, nmessages ? 1 : 2, INT_MAX);

	change_command(argv, send_set, messages);
	for (i = 0; i < nmessages; i++)
		free(messages[i]);
	free(messages);
	return EXIT_SUCCESS;
}

/* <key> [<spec>]: attach, then the spec's range under a range policy. */
static void send_attach(struct target *tg, char **operands,
			void *ctx __attribute__((unused)))
{
	enum ioband_spec spec = ioband_policy_spec(tg->table.policy);
	uint64_t id = target_key(tg, operands[0]);
	struct ioband_group_spec g;

	if (!operands[1]) {
		change_device(tg->name, "attach %" PRIu64, id);
	} else if (spec == IOBAND_SPEC_WEIGHT) {
		change_device(tg->name, "attach %" PRIu64 ":%u", id,
			      parse_weight_arg(operands[1]));
	} else {
		if (ioband_parse_spec(spec, operands[1], &g))
			errx(EXIT_FAILURE, "invalid spec '%s': policy %s "
			     "wants %s", operands[1], tg->table.policy,
			     ioband_spec_help(spec));
		change_device(tg->name, "attach %" PRIu64 ":%u", id, g.weight);
		send_spec(tg, 0, id, &g);
	}
}

static int cmd_attach(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 2, 3);
	return change_command(argv, send_attach, NULL);
}

static void send_detach(struct target *tg, char **operands,
			void *ctx __attribute__((unused)))
{
	change_device(tg->name, "detach %" PRIu64, target_key(tg, operands[0]));
}

static int cmd_detach(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 2, 2);
	return change_command(argv, send_detach, NULL);
}

static void send_policy(struct target *tg, char **operands,
			void *ctx __attribute__((unused)))
{
	change_device(tg->name, "policy %s", operands[0]);
}

static int cmd_policy(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 2, 2);
	check_policy(argv[optind + 1]);
	return change_command(argv, send_policy, NULL);
}

static void send_reset(struct target *tg,
		       char **operands __attribute__((unused)),
		       void *ctx __attribute__((unused)))
{
	change_device(tg->name, "reset");
}

static int cmd_reset(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 1, 1);
	return change_command(argv, send_reset, NULL);
}

/*
 * apply and save: the iobandtab file
 */

/* "major:minor" of block device @path, allocated; NULL if it is none. */
static char *majmin_of(const char *path)
{
	unsigned int major, minor;
	struct stat st;

	if (parse_majmin(path, &major, &minor))
		return xasprintf("%u:%u", major, minor);
	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return NULL;
	return xasprintf("%u:%u", major(st.st_rdev), minor(st.st_rdev));
}

/* The name of dm device @majmin, allocated; NULL if it is not dm. */
static char *dm_name_of(const char *majmin)
{
	char path[96], name[DM_NAME_LEN + 1];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/dev/block/%s/dm/name", majmin);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	ok = fgets(name, sizeof(name), f) != NULL;
	fclose(f);
	if (!ok)
		return NULL;
	name[strcspn(name, "\n")] = '\0';
	return xasprintf("%s", name);
}

/*
 * Resolve a device of the tab: a path, major:minor, or a TAG=value that
 * libblkid evaluates (UUID=, LABEL=, PARTUUID=, PARTLABEL=). A filesystem
 * is seen through the ioband device above its disk too, and libblkid
 * prefers device-mapper: an ioband device found so stands for its own
 * device. Returns "major:minor", allocated, or NULL.
 */
static char *resolve_tab_device(const char *dev)
{
	char *path, *mm, *dm;
	struct ioband_table t;

	if (*dev != '/' && strchr(dev, '=')) {
		path = blkid_evaluate_tag(dev, NULL, NULL);
		if (!path)
			return NULL;
		mm = majmin_of(path);
		free(path);
	} else {
		mm = majmin_of(dev);
	}
	if (!mm)
		return NULL;
	dm = dm_name_of(mm);
	if (dm && load_table(dm, &t, NULL, 1)) {
		free(mm);
		mm = majmin_of(t.device);
		ioband_table_free(&t);
	}
	free(dm);
	return mm;
}

struct apply_state {
	const char *file;
	unsigned int bad;	/* lines or groups that failed */
	unsigned int pending;	/* cgroups that do not exist yet */
	char *cgroup_root;
	int have_root;		/* 1: found, -1: looked, none */
	int print_cgroups;	/* --print-cgroups: only list them */
};

static void tab_error(void *ctx, unsigned int line, const char *msg)
{
	struct apply_state *st = ctx;

	warnx("%s:%u: %s", st->file, line, msg);
	st->bad++;
}

/* "%s:%u: NAME: ..." for entry @e; counts a failure. */
__attribute__((format(printf, 3, 4)))
static void entry_error(struct apply_state *st, const struct iobandtab_entry *e,
			const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iobandctl: %s:%u: %s: ", st->file, e->line, e->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	st->bad++;
}

/*
 * The id of group @g of entry @e: 1, or 0 when it cannot be had now (a
 * cgroup not created yet is pending and reported; anything else an error).
 */
static int tab_group_id(struct apply_state *st, const struct iobandtab_entry *e,
			const struct iobandtab_group *g, uint64_t *id)
{
	int rc;

	if (group_type_uses_cgroups(e->group_type) && !st->have_root) {
		st->have_root = cgroup_find_mount(MOUNTINFO, &st->cgroup_root) ?
				-1 : 1;
	}
	if (group_type_uses_cgroups(e->group_type) && st->have_root < 0) {
		entry_error(st, e, "group %s: cgroup v2 is not mounted", g->key);
		return 0;
	}
	rc = group_key_to_id(e->group_type, g->key, st->cgroup_root, id);
	if (!rc)
		return 1;
	if (rc == -ENOMEM)
		die_nomem();
	if (rc == -ENOENT && group_type_uses_cgroups(e->group_type)) {
		fprintf(stderr, "iobandctl: %s:%u: %s: cgroup %s does not exist "
			"yet: attached when it does (iobandctl apply)\n",
			st->file, e->line, e->name, g->key);
		st->pending++;
		return 0;
	}
	entry_error(st, e, "group %s: %s", g->key, rc == -ENOENT ?
		    "no such user or group" : group_type_key_help(e->group_type));
	return 0;
}

static int same_spec(enum ioband_spec spec, const struct ioband_group_spec *a,
		     const struct ioband_group_spec *b)
{
	return (spec == IOBAND_SPEC_RANGE || a->weight == b->weight) &&
	       (spec == IOBAND_SPEC_WEIGHT ||
		(a->min_kbps == b->min_kbps && a->max_kbps == b->max_kbps));
}

/* Bring the live device to entry @e with messages; never detaches. */
static void update_device(struct apply_state *st, const struct iobandtab_entry *e,
			  const struct ioband_table *want, const char *mm)
{
	struct ioband_group_spec cur;
	enum ioband_spec spec;
	struct target tg;
	int policy_changed;
	size_t i;

	if (!open_target(&tg, e->name, 1)) {
		entry_error(st, e, "a device-mapper device of that name exists "
			    "and is not an ioband device (or not ours)");
		return;
	}
	if (strcmp(tg.table.device, mm) || strcmp(tg.table.domain, want->domain) ||
	    strcmp(tg.table.group_type, want->group_type)) {
		entry_error(st, e, "it exists on %s, domain %s, type %s; the file "
			    "says %s, %s, %s: iobandctl remove %s first",
			    tg.table.device, tg.table.domain, tg.table.group_type,
			    mm, want->domain, want->group_type, e->name);
		goto out;
	}
	policy_changed = strcmp(tg.table.policy, want->policy);
	if (policy_changed) {
		change_device(e->name, "policy %s", want->policy);
		strcpy(tg.table.policy, want->policy);
	}
	spec = ioband_policy_spec(want->policy);
	/* io_throttle <= io_limit at each step. */
	if (want->io_throttle && want->io_throttle != tg.table.io_throttle &&
	    want->io_throttle <= tg.table.io_limit)
		change_device(e->name, "io_throttle %u", want->io_throttle);
	if (want->io_limit && want->io_limit != tg.table.io_limit)
		change_device(e->name, "io_limit %u", want->io_limit);
	if (want->io_throttle && want->io_throttle != tg.table.io_throttle &&
	    want->io_throttle > tg.table.io_limit)
		change_device(e->name, "io_throttle %u", want->io_throttle);
	if (want->token_base && want->token_base != tg.table.token_base)
		change_device(e->name, "token %u", want->token_base);
	if (e->has_carryover)
		change_device(e->name, "carryover %u", e->carryover);

	ioband_table_default_spec(&tg.table, &cur);
	if (policy_changed || !same_spec(spec, &e->default_spec, &cur))
		send_spec(&tg, 1, 0, &e->default_spec);
	for (i = 0; i < want->nr_weights; i++) {
		const struct ioband_weight *w = &want->weights[i];
		const struct ioband_weight *have =
			ioband_table_find_weight(&tg.table, w->id);
		struct ioband_group_spec g;

		ioband_group_to_spec(w, &g);
		if (!have) {
			change_device(e->name, "attach %" PRIu64 ":%u", w->id,
				      w->weight);
			if (spec != IOBAND_SPEC_WEIGHT)
				send_spec(&tg, 0, w->id, &g);
			continue;
		}
		ioband_group_to_spec(have, &cur);
		if (policy_changed || !same_spec(spec, &g, &cur))
			send_spec(&tg, 0, w->id, &g);
	}
out:
	close_target(&tg);
}

static void apply_entry(struct apply_state *st, const struct iobandtab_entry *e)
{
	struct ioband_table want;
	unsigned int failures = soft_failures, bad = st->bad;
	char *mm, *params;
	size_t i;
	int rc;

	mm = resolve_tab_device(e->device);
	if (!mm) {
		entry_error(st, e, "device %s not found", e->device);
		return;
	}
	memset(&want, 0, sizeof(want));
	want.device = mm;
	strcpy(want.domain, e->domain);
	strcpy(want.group_type, e->group_type);
	strcpy(want.policy, e->policy);
	want.io_throttle = e->io_throttle;
	want.io_limit = e->io_limit;
	want.token_base = e->token_base;
	want.default_weight = e->default_spec.weight;
	want.default_min_kbps = e->default_spec.min_kbps;
	want.default_max_kbps = e->default_spec.max_kbps;
	for (i = 0; i < e->nr_groups; i++) {
		uint64_t id;

		if (!tab_group_id(st, e, &e->groups[i], &id))
			continue;
		rc = ioband_table_add_group(&want, id, &e->groups[i].spec);
		if (rc == -EEXIST)
			entry_error(st, e, "group %s: the same group as another "
				    "key of the line", e->groups[i].key);
		else if (rc)
			die_nomem();
	}

	if (device_exists(e->name)) {
		update_device(st, e, &want, mm);
	} else {
		rc = ioband_format_params(&want, &params);
		if (rc)
			errx(EXIT_FAILURE, "cannot build the table: %s",
			     strerror(-rc));
		if (!create_device(e->name, device_sectors(mm), params))
			entry_error(st, e, "not created");
		free(params);
	}
	if (soft_failures != failures)
		st->bad++;
	if (verbose && st->bad == bad)
		fprintf(stderr, "iobandctl: %s:%u: %s applied\n", st->file,
			e->line, e->name);
	ioband_table_free(&want);
}

/* Read all of @file ("-": standard input); NULL after a warning. */
static char *read_file(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	char *text = NULL;
	size_t size = 0, len = 0, n;

	if (!f) {
		warn("cannot open %s", file);
		return NULL;
	}
	do {
		if (len + 4096 + 1 > size) {
			size = (len + 4096 + 1) * 2;
			text = realloc(text, size);
			if (!text)
				die_nomem();
		}
		n = fread(text + len, 1, size - len - 1, f);
		len += n;
	} while (n);
	text[len] = '\0';
	if (ferror(f)) {
		warn("cannot read %s", file);
		free(text);
		text = NULL;
	}
	if (f != stdin)
		fclose(f);
	return text;
}

static int cmd_apply(const struct command *cmd, int argc, char **argv)
{
	enum { OPT_PRINT_CGROUPS = 0x100 };
	static const struct option longopts[] = {
		{ "check",          no_argument, NULL, 'c' },
		{ "print-cgroups",  no_argument, NULL, OPT_PRINT_CGROUPS },
		{ "help",           no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct apply_state st = { 0 };
	struct iobandtab_entry *entries;
	int c, check = 0, rc;
	char *text;
	size_t n, i, j;

	while ((c = getopt_long(argc, argv, "ch", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			check = 1;
			break;
		case OPT_PRINT_CGROUPS:
			st.print_cgroups = 1;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, 1);
	st.file = optind < argc ? argv[optind] : IOBANDTAB_DEFAULT;
	text = read_file(st.file);
	if (!text)
		return EXIT_FAILURE;
	rc = iobandtab_parse(text, &entries, &n, tab_error, &st);
	free(text);
	if (rc < 0)
		die_nomem();

	if (st.print_cgroups) {
		/* For the systemd generator: the cgroup folders to watch. */
		char *root = NULL;

		if (cgroup_find_mount(MOUNTINFO, &root))
			root = xasprintf("/sys/fs/cgroup");
		for (i = 0; i < n; i++) {
			if (!group_type_uses_cgroups(entries[i].group_type))
				continue;
			for (j = 0; j < entries[i].nr_groups; j++) {
				const char *k = entries[i].groups[j].key;

				if (!strncmp(k, root, strlen(root)) &&
				    k[strlen(root)] == '/')
					printf("%s\n", k);
				else
					printf("%s%s%s\n", root, *k == '/' ? "" : "/",
					       k);
			}
		}
		free(root);
	} else if (!check) {
		soft_changes = 1;
		for (i = 0; i < n; i++)
			apply_entry(&st, &entries[i]);
	}
	iobandtab_free(entries, n);
	free(st.cgroup_root);
	return st.bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* A stable name of block device @majmin: PARTUUID=, UUID=, else its path. */
static char *stable_device_name(const char *majmin, int paths,
				blkid_cache cache)
{
	static const char *const tags[] = { "PARTUUID", "UUID" };
	char *dev = device_name(majmin), *val;
	size_t i;

	if (paths || !cache || *dev != '/')
		return dev;
	for (i = 0; i < sizeof(tags) / sizeof(*tags); i++) {
		val = blkid_get_tag_value(cache, tags[i], dev);
		if (val) {
			char *s = xasprintf("%s=%s", tags[i], val);

			free(val);
			free(dev);
			return s;
		}
	}
	return dev;
}

static int cmd_save(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "paths", no_argument, NULL, 'P' },
		{ "help",  no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	blkid_cache cache = NULL;
	char **devs, *tmp = NULL;
	const char *file = NULL;
	int c, paths = 0, ok = 1;
	size_t n, i, j;
	time_t now = time(NULL);
	char when[64];
	FILE *out = stdout;

	while ((c = getopt_long(argc, argv, "Ph", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			paths = 1;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, 1);
	if (optind < argc && strcmp(argv[optind], "-"))
		file = argv[optind];

	devs = list_ioband_devices(&n);
	if (!paths && blkid_get_cache(&cache, "/dev/null"))
		cache = NULL;
	if (file) {
		int fd;

		/* Written aside, then renamed: never half a file. */
		tmp = xasprintf("%s.XXXXXX", file);
		fd = mkstemp(tmp);
		if (fd < 0)
			err(EXIT_FAILURE, "cannot create %s", tmp);
		fchmod(fd, 0644);
		out = fdopen(fd, "w");
		if (!out)
			err(EXIT_FAILURE, "cannot write %s", tmp);
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now));
	fprintf(out, "# iobandtab(5) written by iobandctl save on %s\n"
		"# <name> <device> <options> [<key>=<spec>...]\n", when);
	for (i = 0; i < n; i++) {
		struct iobandtab_entry e;
		struct ioband_table t;
		struct ioband_group_spec g;
		uint64_t *ids;
		char **names;

		if (!load_table(devs[i], &t, NULL, 1))
			continue;
		memset(&e, 0, sizeof(e));
		e.name = devs[i];
		e.device = stable_device_name(t.device, paths, cache);
		strcpy(e.domain, t.domain);
		strcpy(e.group_type, t.group_type);
		strcpy(e.policy, t.policy);
		ioband_table_default_spec(&t, &e.default_spec);
		e.has_default = 1;
		e.io_throttle = t.io_throttle;
		e.io_limit = t.io_limit;
		e.token_base = t.token_base;
		ids = xcalloc(t.nr_weights, sizeof(*ids));
		for (j = 0; j < t.nr_weights; j++)
			ids[j] = t.weights[j].id;
		names = group_names(t.group_type, ids, t.nr_weights);
		for (j = 0; j < t.nr_weights; j++) {
			ioband_group_to_spec(&t.weights[j], &g);
			if (!names[j] && group_type_uses_cgroups(t.group_type)) {
				fprintf(out, "# %s: cgroup %" PRIu64 " has no path "
					"(removed?): left out\n", devs[i], ids[j]);
				continue;
			}
			if (names[j]) {
				if (iobandtab_add_group(&e, names[j], &g))
					die_nomem();
			} else {
				char *key = xasprintf("%" PRIu64, ids[j]);

				if (iobandtab_add_group(&e, key, &g))
					die_nomem();
				free(key);
			}
		}
		if (iobandtab_format_entry(&e, out))
			ok = 0;
		free_names(names, t.nr_weights);
		free(ids);
		e.name = NULL;
		iobandtab_entry_free(&e);
		ioband_table_free(&t);
	}
	if (cache)
		blkid_put_cache(cache);
	free_names(devs, n);
	if (file) {
		if (fflush(out) || fsync(fileno(out)) || ferror(out))
			ok = 0;
		if (fclose(out))
			ok = 0;
		if (!ok || rename(tmp, file)) {
			warn("cannot write %s", file);
			unlink(tmp);
			ok = 0;
		}
		free(tmp);
	} else if (fflush(stdout) || ferror(stdout)) {
		ok = 0;
	}
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * stat and top
 */

/* The options stat and top share. */
struct watch_opts {
	struct stat_report report;
	const char *columns;	/* -o */
	double interval;	/* seconds; 0: once */
	long count;		/* reports; 0: until stopped */
};

static void watch_columns(const struct command *cmd, struct watch_opts *w)
{
	const char *bad;
	size_t len;
	int rc;

	if (!w->columns)
		return;
	rc = stat_report_columns(&w->report, w->columns, &bad, &len);
	if (rc == -EINVAL) {
		warnx("unknown column '%.*s' in '%s'", (int)len, bad, w->columns);
		errtryhelp(cmd->name);
	}
	if (rc)
		errx(EXIT_FAILURE, "too many columns in '%s'", w->columns);
}

static long parse_count_arg(const char *arg)
{
	unsigned int n = parse_uint_arg("count", arg);

	if (!n)
		errx(EXIT_FAILURE, "invalid count '0': expected 1 or more");
	return n;
}

/*
 * Without -o, the default columns gain MIN and MAX (after WEIGHT) when a
 * device of @set shares by ranges.
 */
static void range_columns(struct watch_opts *w, const struct sample_set *set)
{
	size_t i;

	if (w->columns)
		return;
	for (i = 0; i < set->n; i++)
		if (ioband_range_policy(set->samples[i].stats.policy)) {
			stat_report_insert_after(&w->report, COL_WEIGHT, COL_MIN);
			stat_report_insert_after(&w->report, COL_MIN, COL_MAX);
			return;
		}
}

/* Render @rows of one report, in the order given, to a string. */
static char *render_rows(struct stat_report *r, const struct stat_row *rows,
			 size_t nrows)
{
	char *out = NULL;
	size_t i;

	if (stat_report_init(r))
		die_nomem();
	for (i = 0; i < nrows; i++)
		if (stat_report_add(r, &rows[i]))
			die_nomem();
	if (scols_print_table_to_string(r->tb, &out))
		die_nomem();
	stat_report_free(r);
	return out;
}

static void sleep_seconds(double secs)
{
	struct timespec ts = {
		.tv_sec = (time_t)secs,
		.tv_nsec = (long)((secs - (time_t)secs) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmd_stat(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bytes",      no_argument,       NULL, 'b' },
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, 'r' },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'o' },
		{ "interval",   required_argument, NULL, 'i' },
		{ "count",      required_argument, NULL, 'c' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct watch_opts w = {
		.report = {
			.columns = { COL_GROUP, COL_WEIGHT, COL_SHARE, COL_IOPS,
				     COL_MBPS, COL_QUEUED, COL_DELAYED, COL_WAIT,
				     COL_WAIT_MAX },
			.ncolumns = 9,
		},
		.count = 1,
	};
	struct sample_set prev = { 0 }, cur;
	int c, count_given = 0, failed = 0;
	long n;

	while ((c = getopt_long(argc, argv, "bJrno:i:c:h", longopts, NULL)) != -1) {
		if (output_option(c, &w.report.opts))
			continue;
		switch (c) {
		case 'b':
			w.report.opts.bytes = 1;
			break;
		case 'o':
			w.columns = optarg;
			break;
		case 'i':
			w.interval = parse_seconds_arg("interval", optarg);
			break;
		case 'c':
			w.count = parse_count_arg(optarg);
			count_given = 1;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 1, INT_MAX);
	if (count_given && !w.interval)
		errx(EXIT_FAILURE, "--count needs --interval: the reports after "
		     "the first cover an interval");
	if (w.interval && !count_given)
		w.count = 0;
	/* With several devices, say which device a row belongs to. */
	if (argc - optind > 1)
		stat_report_prepend_column(&w.report, COL_NAME);
	watch_columns(cmd, &w);

	for (n = 0; !w.count || n < w.count; n++) {
		char *out;

		if (n)
			sleep_seconds(w.interval);
		if (take_sample_set(&cur, argv + optind, argc - optind,
				    n ? &prev : NULL, n > 0))
			failed = 1;
		/* The first report tells what failed: then stop. */
		if (!cur.n || (failed && !n)) {
			free_sample_set(&cur);
			break;
		}
		range_columns(&w, &cur);
		out = render_rows(&w.report, cur.rows, cur.nrows);
		printf("%s%s\n", n && !w.report.opts.json ? "\n" : "", out);
		fflush(stdout);
		free(out);
		free_sample_set(&prev);
		prev = cur;
	}
	free_sample_set(&prev);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* top's terminal: raw keys, the alternate screen, restored at exit. */
static struct termios saved_termios;
static int term_saved;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig __attribute__((unused)))
{
	stop_requested = 1;
}

static void restore_terminal(void)
{
	if (term_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
	/* Cursor back, alternate screen off. */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
}

static void setup_terminal(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct termios raw;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved_termios)) {
		raw = saved_termios;
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
			term_saved = 1;
	}
	atexit(restore_terminal);
	fputs("\033[?1049h\033[?25l", stdout);
}

/*
 * Wait @secs for a key on stdin: returns 1 for q (quit). A closed stdin is
 * not looked at again.
 */
static int wait_key(double secs, int *stdin_open)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	while (!stop_requested) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char ch;
		int rc;

		if (now >= end)
			return 0;
		rc = poll(&pfd, *stdin_open, (end - now) / 1000000 + 1);
		if (rc <= 0)
			continue;
		if (read(STDIN_FILENO, &ch, 1) != 1) {
			*stdin_open = 0;
			continue;
		}
		if (ch == 'q' || ch == 'Q')
			return 1;
	}
	return 1;
}

static void terminal_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* Print @text, at most @max lines of at most @width columns. */
static void print_clipped(const char *text, int max, int width)
{
	int lines = 0;

	while (*text && lines < max) {
		size_t len = strcspn(text, "\n");

		printf("%.*s\033[K\n", (int)(len < (size_t)width ? len : (size_t)width),
		       text);
		text += len + !!text[len];
		lines++;
	}
}

static void top_frame(const struct sample_set *set, struct stat_report *r,
		      int batch)
{
	double iops = 0, bps = 0;
	char clock[16], *table;
	int rows, cols;
	time_t t = time(NULL);
	size_t i;

	for (i = 0; i < set->nrows; i++) {
		iops += set->rows[i].rates->iops;
		bps += set->rows[i].rates->bytes_per_sec;
	}
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&t));
	qsort(set->rows, set->nrows, sizeof(*set->rows), stat_row_cmp_throughput);
	table = render_rows(r, set->rows, set->nrows);

	terminal_size(&rows, &cols);
	if (batch) {
		printf("iobandctl top - %s, %zu device%s, %.1f IOPS, %.2f MB/s\n%s\n\n",
		       clock, set->n, set->n == 1 ? "" : "s", iops, bps / 1e6,
		       table);
	} else {
		printf("\033[H");
		printf("iobandctl top - %s, %zu device%s, %.1f IOPS, %.2f MB/s"
		       "   (q: quit)\033[K\n\033[K\n", clock, set->n,
		       set->n == 1 ? "" : "s", iops, bps / 1e6);
		print_clipped(table, rows - 3, cols);
		printf("\033[J");
	}
	fflush(stdout);
	free(table);
}

static int cmd_top(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "delay",      required_argument, NULL, 'd' },
		{ "batch",      no_argument,       NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "output",     required_argument, NULL, 'o' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct watch_opts w = {
		.report = {
			.columns = { COL_NAME, COL_GROUP, COL_WEIGHT, COL_SHARE,
				     COL_IOPS, COL_MBPS, COL_QUEUED, COL_WAIT },
			.ncolumns = 8,
		},
		.interval = 1,
	};
	struct sample_set prev = { 0 }, cur;
	int c, batch = 0, stdin_open = 1;
	char **names;
	size_t nnames;
	long n;

	while ((c = getopt_long(argc, argv, "d:bn:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			w.interval = parse_seconds_arg("delay", optarg);
			break;
		case 'b':
			batch = 1;
			break;
		case 'n':
			w.count = parse_count_arg(optarg);
			break;
		case 'o':
			w.columns = optarg;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, INT_MAX);
	watch_columns(cmd, &w);

	/* Named devices must exist; else every ioband device, as they come. */
	if (optind < argc) {
		take_sample_set(&cur, argv + optind, argc - optind, NULL, 0);
		if (cur.n < (size_t)(argc - optind))
			return EXIT_FAILURE;
		free_sample_set(&cur);
	} else if (!ioband_target_loaded()) {
		errx(EXIT_FAILURE, "dm-ioband is not loaded: load it with "
		     "modprobe dm-ioband");
	}

	if (!batch)
		setup_terminal();
	for (n = 0; !w.count || n < w.count; n++) {
		if (n && (batch ? (sleep_seconds(w.interval), stop_requested) :
				  wait_key(w.interval, &stdin_open)))
			break;
		if (optind < argc) {
			names = argv + optind;
			nnames = argc - optind;
		} else {
			names = list_ioband_devices(&nnames);
		}
		take_sample_set(&cur, names, nnames, n ? &prev : NULL, 1);
		if (names != argv + optind)
			free_names(names, nnames);
		range_columns(&w, &cur);
		top_frame(&cur, &w.report, batch);
		free_sample_set(&prev);
		prev = cur;
	}
	free_sample_set(&prev);
	return EXIT_SUCCESS;
}

/*
 * main
 */

static void stat_columns_help(void)
{
	printf("\nAvailable output columns:\n");
	stat_report_columns_help(stdout);
	printf("\nThe default group holds every process without a group of its "
	       "own.\nRates and shares cover the interval; the first report "
	       "covers the time\nsince the counters started (or reset), and "
	       "shows no rates when the\nmodule does not say how long that is.\n");
}

static int cmd_help(const struct command *cmd, int argc, char **argv);

static const struct command commands[] = {
	{ "create", cmd_create, "[options] <name> <device>",
	  "Create /dev/mapper/<name>, an ioband device on top of <device> (a path\n"
	  "or major:minor) that shares its bandwidth between groups by weight",
	  "Options:\n"
	  " -d, --domain <id>           bandwidth domain, shared by the devices that\n"
	  "                               give the same id (at most 31 characters;\n"
	  "                               default: <name>)\n"
	  " -t, --type <type>           what a group is: cgroup (default), uid, gid,\n"
	  "                               pid, pgrp, or none (only the default group)\n"
	  " -p, --policy <policy>       weight (share IOs, default), weight-iosize\n"
	  "                               (share sectors), range-bw (a minimum and\n"
	  "                               a maximum in KB/s per group) or\n"
	  "                               weight-range (both: reservation, limit,\n"
	  "                               and the rest by weight)\n"
	  " -g, --group <key>=<spec>    a group: <weight>, <min>:<max> (range-bw)\n"
	  "                               or <weight>:<min>:<max> (weight-range);\n"
	  "                               repeat for more groups; the key default\n"
	  "                               is the default group\n"
	  " -w, --weight <key>=<spec>   the same as --group\n"
	  " -D, --default-weight <w>    weight of every other process (default 100)\n"
	  " -R, --default-range <min>:<max>\n"
	  "                             range of the default group in KB/s (range\n"
	  "                               policies; default 0:0, max 0: no limit)\n"
	  "     --io-limit <n>          IOs in flight below before ioband holds\n"
	  "                               them (0: the module's default)\n"
	  "     --io-throttle <n>       IOs in flight below before the weights\n"
	  "                               apply (0: the module's default)\n"
	  "     --token-base <n>        tokens of an epoch (0: the module's default)\n"
	  " -n, --dry-run               print the table, create nothing\n"
	  " -h, --help                  display this help\n"
	  "\n"
	  "Weights range from 1 to 32767; min and max are KB/s, max 0 is no\n"
	  "limit. A <key> is, by --type: a cgroup v2\n"
	  "directory, absolute (/sys/fs/cgroup/a/b) or relative to its mount point\n"
	  "(a/b, or /a/b as /proc/<pid>/cgroup prints it); a user name or uid; a\n"
	  "group name or gid; a process or process group id.\n", NULL },
	{ "remove", cmd_remove, "<name>",
	  "Remove the ioband device /dev/mapper/<name>; the device below it is left\n"
	  "as it was",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "list", cmd_list, "[options]",
	  "List the ioband devices: name, bandwidth domain, policy, group type,\n"
	  "number of groups with a weight of their own, and the device below",
	  "Options:\n"
	  " -J, --json         use JSON output format\n"
	  " -r, --raw          use raw output format\n"
	  " -n, --noheadings   don't print headings\n"
	  " -h, --help         display this help\n", NULL },
	{ "table", cmd_table, "<name>",
	  "Print the table of ioband device <name> as dmsetup table does, with\n"
	  "the device and the groups named (cgroup paths, users, groups)",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "set", cmd_set, "[options] <name> [<key>=<spec>...]",
	  "Change the weights, ranges and tunables of a live ioband device (no\n"
	  "suspend)",
	  "Options:\n"
	  "     --io-limit <n>      IOs in flight below before ioband holds them\n"
	  "     --io-throttle <n>   IOs in flight below before the weights apply\n"
	  "     --token-base <n>    tokens of an epoch\n"
	  "     --carryover <n>     epochs of unused share an idle group keeps\n"
	  " -h, --help              display this help\n"
	  "\n"
	  "A <key> is a group of the device's type (see iobandctl create --help);\n"
	  "the key 'default' is the default group (write ./default for a cgroup\n"
	  "of that name). A <spec> is what the device's policy takes: <weight>\n"
	  "(1 to 32767), <min>:<max> (range-bw, KB/s, max 0: no limit) or\n"
	  "<weight>:<min>:<max> (weight-range).\n", NULL },
	{ "attach", cmd_attach, "<name> <key> [<spec>]",
	  "Give group <key> a weight (and range) of its own on device <name>\n"
	  "(default: the default group's weight, range 0:0); <spec> as for set",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "detach", cmd_detach, "<name> <key>",
	  "Return group <key> of device <name> to the default group",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "policy", cmd_policy, "<name> weight|weight-iosize|range-bw|weight-range",
	  "Change how device <name> (its whole domain) shares: by IOs (weight),\n"
	  "by sectors (weight-iosize), by minimum and maximum bandwidth\n"
	  "(range-bw) or by all three (weight-range)",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "reset", cmd_reset, "<name>",
	  "Zero the counters of device <name>",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "stat", cmd_stat, "[options] <name>...",
	  "Show each group of ioband devices: weight, share of the device, IOPS,\n"
	  "throughput, queue and wait, like iostat",
	  "Options:\n"
	  " -i, --interval <secs>  report again every <secs> seconds, the rates of\n"
	  "                          the interval\n"
	  " -c, --count <n>        stop after <n> reports (with --interval)\n"
	  " -J, --json             use JSON output format (one object per report)\n"
	  " -r, --raw              use raw output format\n"
	  " -n, --noheadings       don't print headings\n"
	  " -b, --bytes            print sizes in bytes, not in human-readable form\n"
	  " -o, --output <list>    columns to print (+<list> adds to the default)\n"
	  " -h, --help             display this help\n", stat_columns_help },
	{ "top", cmd_top, "[options] [<name>...]",
	  "Show the groups of all ioband devices (or of <name>...), the busiest\n"
	  "first, refreshed until q is pressed, like iotop",
	  "Options:\n"
	  " -d, --delay <secs>       seconds between refreshes (default 1)\n"
	  " -n, --iterations <n>     stop after <n> refreshes\n"
	  " -b, --batch              print each refresh below the last, without\n"
	  "                            terminal control, for logs and scripts\n"
	  " -o, --output <list>      columns to print (+<list> adds to the default)\n"
	  " -h, --help               display this help\n", stat_columns_help },
	{ "apply", cmd_apply, "[options] [<file>]",
	  "Set up the ioband devices of <file> (default /etc/iobandtab): create\n"
	  "those that do not exist, bring the others to the file's policy,\n"
	  "knobs and groups by messages (never detaching a group). A bad line\n"
	  "is reported as <file>:<line> and the others still apply; a cgroup\n"
	  "that does not exist yet is attached by a later apply",
	  "Options:\n"
	  " -c, --check           only parse the file and report bad lines\n"
	  "     --print-cgroups   print the cgroup folders the file names\n"
	  " -h, --help            display this help\n"
	  "\n"
	  "A line is: <name> <device> <options> [<key>=<spec>...]; <device> a\n"
	  "path, major:minor, UUID=, LABEL=, PARTUUID= or PARTLABEL=; <options>\n"
	  "- or a comma-separated list of domain=, type=, policy=, default=<spec>,\n"
	  "io_limit=, io_throttle=, token_base=, carryover=. See iobandctl(8).\n",
	  NULL },
	{ "save", cmd_save, "[options] [<file>]",
	  "Write the running ioband devices as an iobandtab file (default:\n"
	  "standard output), devices by PARTUUID= or UUID= when they have one",
	  "Options:\n"
	  " -P, --paths   write devices as /dev paths\n"
	  " -h, --help    display this help\n", NULL },
	{ "help", cmd_help, "[<command>]", "Show the help of iobandctl or of a command",
	  "", NULL },
};

#define NR_COMMANDS	(sizeof(commands) / sizeof(*commands))

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static void __attribute__((noreturn)) usage(void)
{
	size_t i;

	printf("Usage:\n"
	       " iobandctl [options] <command> [<args>]\n"
	       "\n"
	       "Control dm-ioband, the device-mapper target that shares the bandwidth\n"
	       "of a block device between cgroups (or users, groups, processes) by\n"
	       "weight.\n"
	       "\n"
	       "Commands:\n");
	for (i = 0; i < NR_COMMANDS; i++)
		printf(" %-8s %s\n", commands[i].name, commands[i].args);
	printf("\n"
	       "Options:\n"
	       " -v, --verbose   show the messages sent and libdevmapper's (twice: debug)\n"
	       " -h, --help      display this help\n"
	       " -V, --version   display version\n"
	       "\n"
	       "Run 'iobandctl <command> --help' for the options of a command.\n");
	exit(EXIT_SUCCESS);
}

static int cmd_help(const struct command *cmd, int argc, char **argv)
{
	const struct command *of;

	parse_no_options(cmd, argc, argv, 0, 1);
	if (optind == argc)
		usage();
	of = find_command(argv[optind]);
	if (!of) {
		warnx("unknown command '%s'", argv[optind]);
		errtryhelp(NULL);
	}
	usage_command(of);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char prog[64];
	const struct command *cmd;
	int c;

	/* '+': options after the command are the command's. */
	while ((c = getopt_long(argc, argv, "+vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose++;
			break;
		case 'h':
			usage();
		case 'V':
			printf("iobandctl %s\n", IOBANDCTL_VERSION);
			return EXIT_SUCCESS;
		default:
			errtryhelp(NULL);
		}
	}
	if (optind == argc) {
		warnx("missing <command>");
		errtryhelp(NULL);
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		warnx("unknown command '%s'", argv[optind]);
		errtryhelp(NULL);
	}

	dm_log_with_errno_init(log_libdm);
	scols_init_debug(0);

	/* getopt's messages start with argv[0]: make it "iobandctl stat". */
	snprintf(prog, sizeof(prog), "iobandctl %s", cmd->name);
	argv[optind] = prog;
	argc -= optind;
	argv += optind;
	optind = 0;
	return cmd->fn(cmd, argc, argv);
}
