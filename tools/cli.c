// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every command of iobandctl shares: memory and the clock, parsing
 * arguments, group keys, the command table's helpers (usage, operands)
 * and the output options.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "iobandctl.h"

int verbose;

void __attribute__((noreturn)) errtryhelp(const char *cmd)
{
	fprintf(stderr, "Try 'iobandctl %s%s--help' for more information.\n",
		cmd ? cmd : "", cmd ? " " : "");
	exit(EXIT_FAILURE);
}

void __attribute__((noreturn)) die_nomem(void)
{
	errx(EXIT_FAILURE, "cannot allocate memory");
}

/* @p, or the end of iobandctl for want of memory. */
void *must(void *p)
{
	if (!p)
		die_nomem();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	return must(calloc(n ? n : 1, size));
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}


/*
 * Arguments
 */

unsigned int parse_uint_arg(const char *what, const char *arg)
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

double parse_seconds_arg(const char *what, const char *arg)
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
	     arg, IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
}

unsigned int parse_weight_arg(const char *arg)
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
char *split_key_spec(const char *what, const char *policy,
			    const char *arg, struct ioband_group_spec *g)
{
	enum ioband_spec spec = ioband_spec_of_policy(policy);
	char *key;
	int rc = ioband_split_spec_arg(spec, arg, &key, g);

	if (rc == -EINVAL)
		errx(EXIT_FAILURE, "invalid %s '%s': expected <key>=%s, e.g. %s",
		     what, arg, ioband_spec_help(spec), spec_example(spec));
	if (rc == -ENOMEM)
		die_nomem();
	if (rc)
		errx(EXIT_FAILURE, "invalid %s '%s': policy %s wants <key>=%s, "
		     "weights from %d to %d, KiB/s with min <= max or max 0 (no "
		     "limit)", what, arg, policy, ioband_spec_help(spec),
		     IOBAND_MIN_WEIGHT, IOBAND_MAX_WEIGHT);
	return key;
}

void check_policy(const char *policy)
{
	if (!ioband_valid_policy(policy))
		errx(EXIT_FAILURE, "unknown policy '%s': use weight, "
		     "weight-iosize, range-bw, weight-range or weight-time",
		     policy);
}

/* "MIN:MAX" in KiB/s. */
void parse_range_arg(const char *what, const char *arg,
			    struct ioband_group_spec *g)
{
	struct ioband_group_spec r;

	if (ioband_parse_spec(IOBAND_SPEC_RANGE, arg, &r))
		errx(EXIT_FAILURE, "invalid %s '%s': expected <min>:<max> in "
		     "KiB/s, min <= max or max 0 (no limit)", what, arg);
	g->min_kbps = r.min_kbps;
	g->max_kbps = r.max_kbps;
}

/*
 * The table of @t, checked by the kernel's own parser; NULL after saying
 * why the kernel would refuse it (which argument, in its words).
 */
char *checked_params(const struct ioband_table_args *t)
{
	char detail[IOBAND_ERROR_MAX], *params;
	const char *error;
	int rc = ioband_format_params(t, &params);

	if (!rc)
		return params;
	if (rc == -ENOMEM)
		die_nomem();
	rc = ioband_build_params(t, &params);
	if (rc == -ENOMEM)
		die_nomem();
	if (rc) {
		warnx("cannot build the table: the device or the domain is not "
		      "one word");
		return NULL;
	}
	error = ioband_params_error(params, detail, sizeof(detail));
	warnx("invalid table '%s': %s%s%s", params,
	      error ? error : "a group is given twice", *detail ? "; " : "",
	      detail);
	free(params);
	return NULL;
}

/*
 * Write @text to @path so that a reader sees all of it or none: written
 * aside as @path.XXXXXX (mode 0644), synced, renamed. 1, or 0 after a
 * warning.
 */
int write_file_atomically(const char *path, const char *text)
{
	char *tmp = xasprintf("%s.XXXXXX", path);
	size_t len = strlen(text), done = 0;
	int fd = mkstemp(tmp), ok;

	if (fd < 0) {
		warn("cannot create a file beside %s", path);
		free(tmp);
		return 0;
	}
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += w;
	}
	ok = done == len && !fchmod(fd, 0644) && !fsync(fd);
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		warn("cannot write %s", path);
		unlink(tmp);
		ok = 0;
	}
	free(tmp);
	return ok;
}

/*
 * cgroups and group keys
 */


char *cgroup_root(void)
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
	case -ENXIO:
		errx(EXIT_FAILURE, "systemd has no unit %s (systemctl status "
		     "%s); a cgroup of that name is written ./%s", key, key, key);
	case -ESRCH: {
		char *path = NULL;

		unit_cgroup(key, &path);
		errx(EXIT_FAILURE, "unit %s has no cgroup (%s%s): it is not "
		     "running; start it first (systemctl start %s)", key, root,
		     path ? path : "", key);
	}
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
uint64_t resolve_key(const char *type, const char *key, char **root)
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
char **group_names(const char *type, const uint64_t *ids, size_t n)
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

void free_names(char **names, size_t n)
{
	size_t i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}



/*
 * Commands
 */

void __attribute__((noreturn)) usage_command(const struct command *cmd)
{
	printf("Usage:\n iobandctl %s %s\n\n%s.\n\n%s", cmd->name, cmd->args,
	       cmd->summary, cmd->help);
	if (cmd->extra_help)
		cmd->extra_help();
	exit(EXIT_SUCCESS);
}

/* An option that @cmd's own parsing did not take: -h, or a misuse. */
void __attribute__((noreturn)) other_option(const struct command *cmd,
						   int c)
{
	if (c == 'h')
		usage_command(cmd);
	errtryhelp(cmd->name);
}

/*
 * getopt_long() with @cmd's options (options.c). A letter @cmd took
 * before its letters got one meaning each is still taken, with a warning
 * naming its spelling now, and returned as the option it stands for.
 */
int next_option(const struct command *cmd, int argc, char **argv)
{
	static const struct cmd_options *o;
	static char optstring[64];
	const struct deprecated_option *d;
	int c;

	if (!o || strcmp(o->cmd, cmd->name)) {
		o = cmd_options_of(cmd->name);
		if (!o || cmd_optstring(o, optstring, sizeof(optstring)))
			errx(EXIT_FAILURE, "command %s has no options table",
			     cmd->name);
	}
	c = getopt_long(argc, argv, optstring, o->longopts, NULL);
	d = c > 0 ? cmd_deprecated(o, c) : NULL;
	if (!d)
		return c;
	warnx("%s -%c is deprecated: use %s", cmd->name, c, d->use);
	return d->val;
}

/* Check the number of operands of @cmd: at least @min, at most @max. */
void check_operands(const struct command *cmd, int argc, int min, int max)
{
	int n = argc - optind;

	if (n >= min && n <= max)
		return;
	warnx(n < min ? "missing operand: expected %s" : "too many arguments: "
	      "expected %s", cmd->args);
	errtryhelp(cmd->name);
}

/* For commands with no option but --help. */
void parse_no_options(const struct command *cmd, int argc, char **argv,
			     int min, int max)
{
	int c;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		other_option(cmd, c);
	}
	check_operands(cmd, argc, min, max);
}

void check_name(const char *name)
{
	if (!*name || strchr(name, '/') || strlen(name) >= DM_NAME_LEN)
		errx(EXIT_FAILURE, "invalid device name '%s': give 1 to %d "
		     "characters without '/'", name, DM_NAME_LEN - 1);
}



/*
 * list
 */

/* -J, -r, -n, -b; returns 0 if @c is not one of them. */
int output_option(int c, struct report_opts *opts)
{
	switch (c) {
	case 'J':
		opts->json = 1;
		return 1;
	case 'r':
		opts->raw = 1;
		return 1;
	case 'n':
	case OPT_NOHEADINGS:
		opts->noheadings = 1;
		return 1;
	case 'b':
	case OPT_BYTES:
		opts->bytes = 1;
		return 1;
	}
	return 0;
}

void add_cells(struct libscols_line *ln, char **cells, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (report_set_cell(ln, i, cells[i]))
			die_nomem();
}
