// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobandctl - create, inspect and remove dm-ioband devices.
 *
 * Talks to device-mapper through libdevmapper and prints with
 * libsmartcols; the table and status formats live in ioband.c and the
 * cgroup lookups in cgroup.c, which need neither library.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>

#include <libdevmapper.h>
#include <libsmartcols.h>

#include "cgroup.h"
#include "ioband.h"

#ifndef IOBANDCTL_VERSION
#define IOBANDCTL_VERSION "unknown"
#endif

#define MOUNTINFO	"/proc/self/mountinfo"
#define UDEV_CONTROL	"/run/udev/control"

/* libdm's log levels (libdm/misc/dm-logging.h); higher bits are flags. */
#define DM_LOG_LEVEL(l)	((l) & 0xf)
#define DM_LOG_ERR	3
#define DM_LOG_WARN	4

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

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		err(EXIT_FAILURE, "cannot allocate memory");
	return s;
}

/*
 * Device-mapper is missing or closed to us: dm_task_create() fails when
 * it cannot open /dev/mapper/control.
 */
static void __attribute__((noreturn)) die_no_dm(void)
{
	if (geteuid() != 0)
		errx(EXIT_FAILURE, "permission denied: device-mapper needs root; "
		     "run iobandctl as root");
	errx(EXIT_FAILURE, "device-mapper is not available: is dm-ioband "
	     "loaded? try modprobe dm-ioband");
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
	case ENODEV:
		warnx("no device-mapper device named %s", name);
		break;
	case EACCES:
	case EPERM:
		warnx("cannot %s %s: permission denied; run iobandctl as root",
		      what, name);
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
 * Run a TABLE or STATUS task on @name and check that every target is an
 * ioband one. Returns NULL after a warning.
 */
static struct dm_task *ioband_task(int type, const char *name)
{
	struct dm_task *dmt = new_task(type);
	uint64_t start, length;
	char *target, *params;
	struct dm_info info;
	void *next = NULL;

	if (!dm_task_set_name(dmt, name) || !dm_task_no_open_count(dmt)) {
		warnx("no device-mapper device named %s", name);
		goto bad;
	}
	if (!dm_task_run(dmt)) {
		warn_dm_errno(dm_task_get_errno(dmt), "query", name);
		goto bad;
	}
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		warnx("no device-mapper device named %s", name);
		goto bad;
	}
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &target,
					  &params);
		if (!target || strcmp(target, IOBAND_TARGET_NAME)) {
			warnx("%s is not an ioband device", name);
			goto bad;
		}
	} while (next);
	return dmt;
bad:
	dm_task_destroy(dmt);
	return NULL;
}

/*
 * create
 */

static void __attribute__((noreturn)) usage_create(void)
{
	printf("Usage:\n"
	       " iobandctl create [options] <name> <device>\n"
	       "\n"
	       "Create /dev/mapper/<name>, an ioband device on top of <device> (a path\n"
	       "or major:minor) that shares its bandwidth between cgroups by weight.\n"
	       "\n"
	       "Options:\n"
	       " -d, --domain <id>           bandwidth domain, shared by the devices that\n"
	       "                               give the same id (at most %d characters;\n"
	       "                               default: <name>)\n"
	       " -w, --weight <cgroup>=<w>   weight of a cgroup; repeat for more cgroups\n"
	       " -D, --default-weight <w>    weight of every other cgroup (default %d)\n"
	       " -n, --dry-run               print the table, create nothing\n"
	       " -h, --help                  display this help\n"
	       "\n"
	       "Weights range from %d to %d. A <cgroup> is a directory of the cgroup v2\n"
	       "hierarchy: absolute (/sys/fs/cgroup/a/b), or relative to its mount point\n"
	       "(a/b, or /a/b as /proc/<pid>/cgroup prints it).\n",
	       IOBAND_DOMAIN_MAX, IOBAND_WEIGHT_DEFAULT, IOBAND_WEIGHT_MIN,
	       IOBAND_WEIGHT_MAX);
	exit(EXIT_SUCCESS);
}

static void __attribute__((noreturn)) die_bad_weight(int rc, const char *arg)
{
	if (rc == -ENOMEM)
		errx(EXIT_FAILURE, "cannot allocate memory");
	errx(EXIT_FAILURE, "invalid weight '%s': expected a number from %d to %d",
	     arg, IOBAND_WEIGHT_MIN, IOBAND_WEIGHT_MAX);
}

static void __attribute__((noreturn)) die_cgroup(int rc, const char *path,
						 const char *root)
{
	switch (rc) {
	case -ENOENT:
		errx(EXIT_FAILURE, "cgroup %s not found under %s: create it first "
		     "(mkdir)", path, root);
	case -ENOTDIR:
		errx(EXIT_FAILURE, "%s is not a cgroup: a cgroup is a directory "
		     "under %s", path, root);
	case -EXDEV:
		errx(EXIT_FAILURE, "%s is outside the cgroup v2 hierarchy "
		     "mounted on %s", path, root);
	default:
		errx(EXIT_FAILURE, "cannot resolve cgroup %s: %s", path,
		     strerror(-rc));
	}
}

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

/* Turn each "CGROUP=W" into an id:weight of the table. */
static void add_cgroup_weights(struct ioband_table *t, char **args, size_t n)
{
	char *root, *path;
	unsigned int weight;
	uint64_t id;
	size_t i;
	int rc;

	if (!n)
		return;
	root = cgroup_root();
	for (i = 0; i < n; i++) {
		rc = ioband_split_weight_arg(args[i], &path, &weight);
		if (rc == -EINVAL)
			errx(EXIT_FAILURE, "invalid --weight '%s': expected "
			     "<cgroup>=<weight>, e.g. a/b=200", args[i]);
		if (rc)
			die_bad_weight(rc, strrchr(args[i], '=') + 1);

		rc = cgroup_path_to_id(root, path, &id);
		if (rc)
			die_cgroup(rc, path, root);
		rc = ioband_table_add_weight(t, id, weight);
		if (rc == -EEXIST)
			errx(EXIT_FAILURE, "cgroup %s is given more than once", path);
		if (rc)
			errx(EXIT_FAILURE, "cannot allocate memory");
		free(path);
	}
	free(root);
}

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

static void check_name(const char *name)
{
	if (!*name || strchr(name, '/') || strlen(name) >= DM_NAME_LEN)
		errx(EXIT_FAILURE, "invalid device name '%s': give 1 to %d "
		     "characters without '/'", name, DM_NAME_LEN - 1);
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
	e = dm_task_get_errno(dmt);
	/* Also on failure: it releases the cookie and runs the node ops. */
	dm_udev_wait(cookie);
	if (ok)
		goto out;

	if (e == EEXIST || e == EACCES || e == EPERM)
		warn_dm_errno(e, "create", name);
	else if (!ioband_target_loaded())
		warnx("cannot create %s: dm-ioband is not loaded; try modprobe "
		      "dm-ioband", name);
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

static int cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "domain",         required_argument, NULL, 'd' },
		{ "weight",         required_argument, NULL, 'w' },
		{ "default-weight", required_argument, NULL, 'D' },
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
	char **weight_args, *params;
	size_t nr_weight_args = 0;
	uint64_t sectors;
	int c, dry_run = 0, ok = 1, rc;

	/* Every --weight fits in argc slots. */
	weight_args = calloc(argc, sizeof(*weight_args));
	if (!weight_args)
		err(EXIT_FAILURE, "cannot allocate memory");

	while ((c = getopt_long(argc, argv, "d:w:D:nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			domain = optarg;
			break;
		case 'w':
			weight_args[nr_weight_args++] = optarg;
			break;
		case 'D':
			rc = ioband_parse_weight(optarg, &t.default_weight);
			if (rc)
				die_bad_weight(rc, optarg);
			break;
		case 'n':
			dry_run = 1;
			break;
		case 'h':
			usage_create();
		default:
			errtryhelp("create");
		}
	}
	if (argc - optind != 2) {
		warnx(argc - optind < 2 ? "missing <name> or <device>" :
		      "too many arguments");
		errtryhelp("create");
	}
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

	add_cgroup_weights(&t, weight_args, nr_weight_args);
	free(weight_args);

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
 * stat
 */

enum {
	COL_NAME,
	COL_GROUP,
	COL_ID,
	COL_WEIGHT,
	COL_READS,
	COL_DREADS,
	COL_RBYTES,
	COL_WRITES,
	COL_DWRITES,
	COL_WBYTES,
};

struct colinfo {
	const char *name;
	double whint;
	int flags;
	int json_type;
	const char *help;
};

static const struct colinfo infos[] = {
	[COL_NAME]    = { "NAME",           0.1, 0, SCOLS_JSON_STRING,
			  "device name" },
	[COL_GROUP]   = { "GROUP",          0.3, 0, SCOLS_JSON_STRING,
			  "cgroup path, or <default>" },
	[COL_ID]      = { "ID",             5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "group id (-1: the default group)" },
	[COL_WEIGHT]  = { "WEIGHT",         5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "weight" },
	[COL_READS]   = { "READS",          5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "reads" },
	[COL_DREADS]  = { "DELAYED-READS",  5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "reads that waited for tokens" },
	[COL_RBYTES]  = { "READ-BYTES",     5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "bytes read" },
	[COL_WRITES]  = { "WRITES",         5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "writes" },
	[COL_DWRITES] = { "DELAYED-WRITES", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "writes that waited for tokens" },
	[COL_WBYTES]  = { "WRITE-BYTES",    5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "bytes written" },
};

#define NR_INFOS	(sizeof(infos) / sizeof(*infos))

struct stat_ctl {
	int columns[NR_INFOS * 2];	/* -o may repeat a column */
	size_t ncolumns;
	int bytes;			/* --bytes: no human sizes */
	char *cgroup_root;		/* NULL: cgroup2 not mounted */
	struct libscols_table *tb;
};

static void __attribute__((noreturn)) usage_stat(void)
{
	size_t i;

	printf("Usage:\n"
	       " iobandctl stat [options] <name>...\n"
	       "\n"
	       "Show the weight and I/O counters of each group of ioband devices.\n"
	       "\n"
	       "Options:\n"
	       " -b, --bytes          print sizes in bytes, not in human-readable form\n"
	       " -J, --json           use JSON output format\n"
	       " -r, --raw            use raw output format\n"
	       " -n, --noheadings     don't print headings\n"
	       " -o, --output <list>  columns to print (+<list> adds to the default)\n"
	       " -h, --help           display this help\n"
	       "\n"
	       "Available output columns:\n");
	for (i = 0; i < NR_INFOS; i++)
		printf(" %14s  %s\n", infos[i].name, infos[i].help);
	printf("\nThe default group holds every cgroup without a weight of its own.\n");
	exit(EXIT_SUCCESS);
}

static int column_id(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NR_INFOS; i++)
		if (strlen(infos[i].name) == len &&
		    !strncasecmp(infos[i].name, name, len))
			return i;
	return -1;
}

/* Parse "-o A,B" (replace) or "-o +A,B" (append) into ctl->columns. */
static void parse_columns(struct stat_ctl *ctl, const char *list)
{
	const char *p = list;

	if (*p == '+')
		p++;
	else
		ctl->ncolumns = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int id = column_id(p, len);

		if (id < 0) {
			warnx("unknown column '%.*s' in '%s'", (int)len, p, list);
			errtryhelp("stat");
		}
		if (ctl->ncolumns == sizeof(ctl->columns) / sizeof(*ctl->columns))
			errx(EXIT_FAILURE, "too many columns in '%s'", list);
		ctl->columns[ctl->ncolumns++] = id;
		p += len;
		if (*p == ',')
			p++;
	}
}

static char *size_cell(const struct stat_ctl *ctl, uint64_t sectors)
{
	char buf[32];

	if (ctl->bytes)
		return xasprintf("%" PRIu64, (uint64_t)(sectors * 512u));
	ioband_size_to_human(sectors * 512u, buf, sizeof(buf));
	return xasprintf("%s", buf);
}

static char *group_cell(const struct ioband_table *t,
			const struct ioband_group_stat *g, const char *path)
{
	if (g->is_default)
		return xasprintf("<default>");
	if (!strcmp(t->group_type, "cgroup") && path)
		return xasprintf("%s", path);
	return xasprintf("%" PRIu64, g->id);
}

static char *weight_cell(const struct ioband_table *t,
			 const struct ioband_group_stat *g)
{
	const struct ioband_weight *w;

	if (g->is_default)
		return xasprintf("%u", t->default_weight);
	w = ioband_table_find_weight(t, g->id);
	/* Empty when the group lost its weight between our two ioctls. */
	return w ? xasprintf("%u", w->weight) : xasprintf("%s", "");
}

static void add_row(struct stat_ctl *ctl, const char *name,
		    const struct ioband_table *t,
		    const struct ioband_group_stat *g, const char *path)
{
	struct libscols_line *ln = scols_table_new_line(ctl->tb, NULL);
	size_t i;

	if (!ln)
		err(EXIT_FAILURE, "cannot allocate memory");
	for (i = 0; i < ctl->ncolumns; i++) {
		char *data;

		switch (ctl->columns[i]) {
		case COL_NAME:
			data = xasprintf("%s", name);
			break;
		case COL_GROUP:
			data = group_cell(t, g, path);
			break;
		case COL_ID:
			data = g->is_default ? xasprintf("-1") :
					       xasprintf("%" PRIu64, g->id);
			break;
		case COL_WEIGHT:
			data = weight_cell(t, g);
			break;
		case COL_READS:
			data = xasprintf("%" PRIu64, g->reads);
			break;
		case COL_DREADS:
			data = xasprintf("%" PRIu64, g->delayed_reads);
			break;
		case COL_RBYTES:
			data = size_cell(ctl, g->read_sectors);
			break;
		case COL_WRITES:
			data = xasprintf("%" PRIu64, g->writes);
			break;
		case COL_DWRITES:
			data = xasprintf("%" PRIu64, g->delayed_writes);
			break;
		default: /* COL_WBYTES */
			data = size_cell(ctl, g->write_sectors);
			break;
		}
		if (scols_line_refer_data(ln, i, data)) {
			free(data);
			err(EXIT_FAILURE, "failed to add output data");
		}
	}
}

/* Rows for one target: its table gives the weights, its status the counters. */
static int add_target_rows(struct stat_ctl *ctl, const char *name,
			   const char *table_params, const char *status_params)
{
	struct ioband_status st;
	struct ioband_table t;
	uint64_t *ids = NULL;
	char **paths = NULL;
	size_t i;

	if (ioband_parse_table(table_params, &t)) {
		warnx("%s: cannot parse the table '%s': do iobandctl and the "
		      "dm-ioband module come from the same version?", name,
		      table_params);
		return 0;
	}
	if (ioband_parse_status(status_params, &st)) {
		warnx("%s: cannot parse the status '%s': do iobandctl and the "
		      "dm-ioband module come from the same version?", name,
		      status_params);
		ioband_table_free(&t);
		return 0;
	}

	/* One walk of the cgroup tree names every group of the target. */
	if (!strcmp(t.group_type, "cgroup") && ctl->cgroup_root && st.nr_groups > 1) {
		ids = calloc(st.nr_groups, sizeof(*ids));
		paths = calloc(st.nr_groups, sizeof(*paths));
		if (!ids || !paths)
			err(EXIT_FAILURE, "cannot allocate memory");
		for (i = 0; i < st.nr_groups; i++)
			ids[i] = st.groups[i].id;
		/* groups[0] is the default group: its id means nothing. */
		if (cgroup_ids_to_paths(ctl->cgroup_root, ids + 1,
					st.nr_groups - 1, paths + 1))
			warnx("cannot walk the cgroup tree at %s: printing ids",
			      ctl->cgroup_root);
	}

	for (i = 0; i < st.nr_groups; i++)
		add_row(ctl, name, &t, &st.groups[i], paths ? paths[i] : NULL);

	if (paths)
		for (i = 0; i < st.nr_groups; i++)
			free(paths[i]);
	free(paths);
	free(ids);
	ioband_status_free(&st);
	ioband_table_free(&t);
	return 1;
}

static int stat_device(struct stat_ctl *ctl, const char *name)
{
	struct dm_task *status, *table;
	char *ttype, *tparams, *stype, *sparams;
	void *tnext = NULL, *snext = NULL;
	uint64_t start, length;
	int ok = 1;

	status = ioband_task(DM_DEVICE_STATUS, name);
	if (!status)
		return 0;
	table = ioband_task(DM_DEVICE_TABLE, name);
	if (!table) {
		dm_task_destroy(status);
		return 0;
	}
	/* Targets come in the same order from both ioctls. */
	do {
		tnext = dm_get_next_target(table, tnext, &start, &length,
					   &ttype, &tparams);
		snext = dm_get_next_target(status, snext, &start, &length,
					   &stype, &sparams);
		if (!tparams || !sparams || !!tnext != !!snext) {
			warnx("%s changed while being read: try again", name);
			ok = 0;
			break;
		}
		ok = add_target_rows(ctl, name, tparams, sparams);
	} while (ok && tnext);

	dm_task_destroy(table);
	dm_task_destroy(status);
	return ok;
}

static int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bytes",      no_argument,       NULL, 'b' },
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, 'r' },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'o' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct stat_ctl ctl = {
		.columns = { COL_GROUP, COL_WEIGHT, COL_READS, COL_WRITES,
			     COL_RBYTES, COL_WBYTES },
		.ncolumns = 6,
	};
	const char *outarg = NULL;
	int c, json = 0, raw = 0, noheadings = 0, failed = 0, i;
	size_t j;

	while ((c = getopt_long(argc, argv, "bJrno:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			ctl.bytes = 1;
			break;
		case 'J':
			json = 1;
			break;
		case 'r':
			raw = 1;
			break;
		case 'n':
			noheadings = 1;
			break;
		case 'o':
			outarg = optarg;
			break;
		case 'h':
			usage_stat();
		default:
			errtryhelp("stat");
		}
	}
	if (optind == argc) {
		warnx("missing <name>");
		errtryhelp("stat");
	}
	/* With several devices, say which device a row belongs to. */
	if (argc - optind > 1) {
		memmove(ctl.columns + 1, ctl.columns, ctl.ncolumns * sizeof(int));
		ctl.columns[0] = COL_NAME;
		ctl.ncolumns++;
	}
	if (outarg)
		parse_columns(&ctl, outarg);

	/* Not fatal: groups print as ids without a cgroup tree to walk. */
	if (cgroup_find_mount(MOUNTINFO, &ctl.cgroup_root))
		ctl.cgroup_root = NULL;

	scols_init_debug(0);
	ctl.tb = scols_new_table();
	if (!ctl.tb)
		err(EXIT_FAILURE, "cannot allocate memory");
	scols_table_enable_json(ctl.tb, json);
	scols_table_enable_raw(ctl.tb, raw);
	scols_table_enable_noheadings(ctl.tb, noheadings);
	scols_table_set_name(ctl.tb, "ioband");
	for (j = 0; j < ctl.ncolumns; j++) {
		const struct colinfo *ci = &infos[ctl.columns[j]];
		struct libscols_column *cl;
		int type = ci->json_type;

		cl = scols_table_new_column(ctl.tb, ci->name, ci->whint, ci->flags);
		if (!cl)
			err(EXIT_FAILURE, "cannot allocate memory");
		/* Human sizes like "1.5M" are strings in JSON, as in lsblk. */
		if (!ctl.bytes && (ctl.columns[j] == COL_RBYTES ||
				   ctl.columns[j] == COL_WBYTES))
			type = SCOLS_JSON_STRING;
		scols_column_set_json_type(cl, type);
	}

	for (i = optind; i < argc; i++)
		if (!stat_device(&ctl, argv[i]))
			failed = 1;

	if (scols_table_get_nlines(ctl.tb))
		scols_print_table(ctl.tb);
	scols_unref_table(ctl.tb);
	free(ctl.cgroup_root);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/*
 * remove
 */

static void __attribute__((noreturn)) usage_remove(void)
{
	printf("Usage:\n"
	       " iobandctl remove <name>\n"
	       "\n"
	       "Remove the ioband device /dev/mapper/<name>; <device> below it is left\n"
	       "as it was.\n"
	       "\n"
	       "Options:\n"
	       " -h, --help   display this help\n");
	exit(EXIT_SUCCESS);
}

static int cmd_remove(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct dm_task *dmt;
	uint32_t cookie = 0;
	uint16_t flags;
	const char *name;
	int c, ok;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage_remove();
		default:
			errtryhelp("remove");
		}
	}
	if (argc - optind != 1) {
		warnx(optind == argc ? "missing <name>" : "too many arguments");
		errtryhelp("remove");
	}
	name = argv[optind];

	/* Remove nothing that is not ours. */
	dmt = ioband_task(DM_DEVICE_TABLE, name);
	if (!dmt)
		return EXIT_FAILURE;
	dm_task_destroy(dmt);

	flags = setup_udev();
	dmt = new_task(DM_DEVICE_REMOVE);
	/* A transient opener (udev's blkid) must not fail the removal. */
	ok = dm_task_set_name(dmt, name) && dm_task_retry_remove(dmt) &&
	     dm_task_set_cookie(dmt, &cookie, flags) && dm_task_run(dmt);
	if (!ok)
		warn_dm_errno(dm_task_get_errno(dmt), "remove", name);
	dm_udev_wait(cookie);
	dm_task_destroy(dmt);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * main
 */

static void __attribute__((noreturn)) usage(void)
{
	printf("Usage:\n"
	       " iobandctl [options] <command> [<args>]\n"
	       "\n"
	       "Control dm-ioband, the device-mapper target that shares the bandwidth\n"
	       "of a block device between cgroups by weight.\n"
	       "\n"
	       "Commands:\n"
	       " create <name> <device>  create an ioband device on top of <device>\n"
	       " stat <name>...          show the weight and I/O of each group\n"
	       " remove <name>           remove an ioband device\n"
	       "\n"
	       "Options:\n"
	       " -v, --verbose           show libdevmapper's messages (twice: debug)\n"
	       " -h, --help              display this help\n"
	       " -V, --version           display version\n"
	       "\n"
	       "Run 'iobandctl <command> --help' for the options of a command.\n");
	exit(EXIT_SUCCESS);
}

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "create", cmd_create },
	{ "stat",   cmd_stat },
	{ "remove", cmd_remove },
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static char prog[64];
	const struct command *cmd = NULL;
	size_t i;
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
	for (i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[optind], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		warnx("unknown command '%s'", argv[optind]);
		errtryhelp(NULL);
	}

	dm_log_with_errno_init(log_libdm);

	/* getopt's messages start with argv[0]: make it "iobandctl stat". */
	snprintf(prog, sizeof(prog), "iobandctl %s", cmd->name);
	argv[optind] = prog;
	argc -= optind;
	argv += optind;
	optind = 0;
	return cmd->fn(argc, argv);
}
