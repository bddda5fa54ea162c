// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobandctl's calls to libdevmapper: tasks on ioband devices, target
 * messages, the device list, creating a device; and the block devices
 * below them (their size, major:minor).
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>

#include <libdevmapper.h>

#include "iobandctl.h"

#define UDEV_CONTROL	"/run/udev/control"
#define DM_CONTROL	"/dev/mapper/control"

/* libdm's log levels (libdm/misc/dm-logging.h); higher bits are flags. */
#define DM_LOG_LEVEL(l)	((l) & 0xf)
#define DM_LOG_ERR	3
#define DM_LOG_WARN	4

#define MSG_PERMISSION	"permission denied: configuring device-mapper needs " \
			"root (CAP_SYS_ADMIN)"

static char dm_last_error[256];	/* libdm's last error, for our message */

/* Keep libdm quiet unless asked: the user gets one message, ours. */
__attribute__((format(printf, 5, 6)))
void log_libdm(int level, const char *file __attribute__((unused)),
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

/*
 * libdevmapper
 */

/*
 * Why did a task fail? libdm opens the control node on the first run: a
 * failure to open it leaves no ioctl errno, so look at the node.
 */
int task_errno(struct dm_task *dmt)
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

struct dm_task *new_task(int type)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt)
		die_no_dm();
	return dmt;
}

/* Is the ioband target registered with device-mapper? */
int ioband_target_loaded(void)
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
void warn_dm_errno(int e, const char *what, const char *name)
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
uint16_t setup_udev(void)
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
struct dm_task *ioband_task(int type, const char *name, int quiet)
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
const char *task_params(struct dm_task *dmt, uint64_t *length)
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
int check_parsed(int rc, const char *name, const char *what,
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
int load_table(const char *name, struct ioband_table_args *t,
		      uint64_t *sectors, int quiet)
{
	struct dm_task *dmt = ioband_task(DM_DEVICE_TABLE, name, quiet);
	const char *params;
	int ok;

	if (!dmt)
		return 0;
	params = task_params(dmt, sectors);
	ok = check_parsed(ioband_parse_params(params, t), name, "table", params,
			  quiet);
	dm_task_destroy(dmt);
	return ok;
}

/*
 * Send @msg to ioband device @name (whose table was checked). Returns 1
 * and, if @response, the kernel's reply (allocated); 0 with *err set.
 */
int send_message(const char *name, const char *msg, char **response,
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

int soft_changes;
unsigned int soft_failures;

/* Send a message to change device @name; exits on failure (see soft_changes). */
void change_device(const char *name, const char *fmt, ...)
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
char **list_ioband_devices(size_t *count)
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
char *device_name(const char *majmin)
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

/* Open ioband device @name; 0 after a warning (unless @quiet). */
int open_target(struct target *tg, const char *name, int quiet)
{
	memset(tg, 0, sizeof(*tg));
	tg->name = name;
	return load_table(name, &tg->table, NULL, quiet);
}

void close_target(struct target *tg)
{
	ioband_table_free(&tg->table);
	free(tg->cgroup_root);
}

uint64_t target_key(struct target *tg, const char *key)
{
	return resolve_key(tg->table.group_type, key, &tg->cgroup_root);
}


/*
 * Block devices
 */

/* "major:minor" with nothing else, as the kernel's dm_get_device() takes it. */
int parse_majmin(const char *s, unsigned int *major, unsigned int *minor)
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

uint64_t device_sectors(const char *device)
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

int device_exists(const char *name)
{
	struct dm_task *dmt = new_task(DM_DEVICE_INFO);
	struct dm_info info;
	int exists;

	exists = dm_task_set_name(dmt, name) && dm_task_run(dmt) &&
		 dm_task_get_info(dmt, &info) && info.exists;
	dm_task_destroy(dmt);
	return exists;
}

int create_device(const char *name, uint64_t sectors, const char *params)
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
