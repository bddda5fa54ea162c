// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The iobandtab commands: apply (the file to the devices) and save (the
 * devices to a file).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <blkid.h>

#include "iobandctl.h"

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
char *resolve_tab_device(const char *dev)
{
	char *path, *mm, *dm;
	struct ioband_table_args t;

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
	if (rc == -ESRCH) {
		fprintf(stderr, "iobandctl: %s:%u: %s: unit %s is not running: "
			"attached when it starts (iobandctl apply)\n",
			st->file, e->line, e->name, g->key);
		st->pending++;
		return 0;
	}
	if (rc == -ENXIO) {
		entry_error(st, e, "group %s: systemd has no such unit (write "
			    "./%s for a cgroup of that name)", g->key, g->key);
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
			  const struct ioband_table_args *want, const char *mm)
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
	spec = ioband_spec_of_policy(want->policy);
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
	struct ioband_table_args want;
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

	if (e->weights_from && !add_cgroup_weights(&want, e->weights_from))
		entry_error(st, e, "weights_from=%s: no such subtree, so no group "
			    "(the device is set up still)", e->weights_from);
	if (device_exists(e->name)) {
		update_device(st, e, &want, mm);
	} else {
		params = checked_params(&want);
		if (!params || !create_device(e->name, device_sectors(mm), params))
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

int cmd_apply(const struct command *cmd, int argc, char **argv)
{
	struct apply_state st = { 0 };
	struct iobandtab_entry *entries;
	const char *only = NULL;
	int c, check = 0, rc, found = 0;
	char *text;
	size_t n, i, j;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_CHECK:
			check = 1;
			break;
		case OPT_PRINT_CGROUPS:
			st.print_cgroups = 1;
			break;
		case OPT_NAME:
			only = optarg;
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
				char *unit_path;

				/* A unit's, where its cgroup appears. */
				if (unit_key(k)) {
					if (unit_cgroup(k, &unit_path))
						continue;
					printf("%s%s\n", root, unit_path);
					free(unit_path);
				} else if (!strncmp(k, root, strlen(root)) &&
					   k[strlen(root)] == '/') {
					printf("%s\n", k);
				} else {
					printf("%s%s%s\n", root, *k == '/' ? "" : "/",
					       k);
				}
			}
		}
		free(root);
	} else if (!check) {
		soft_changes = 1;
		for (i = 0; i < n; i++) {
			if (only && strcmp(entries[i].name, only))
				continue;
			apply_entry(&st, &entries[i]);
			found = 1;
		}
		if (only && !found) {
			warnx("%s: no line for device %s", st.file, only);
			st.bad++;
		}
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

int cmd_save(const struct command *cmd, int argc, char **argv)
{
	blkid_cache cache = NULL;
	char **devs, *text = NULL;
	const char *file = NULL;
	int c, paths = 0, ok = 1;
	size_t n, i, j, size;
	time_t now = time(NULL);
	char when[64];
	FILE *out = stdout;

	while ((c = next_option(cmd, argc, argv)) != -1) {
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
	/* A file is written aside, then renamed: never half a file. */
	if (file) {
		out = open_memstream(&text, &size);
		if (!out)
			die_nomem();
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now));
	fprintf(out, "# iobandtab(5) written by iobandctl save on %s\n"
		"# <name> <device> <options> [<key>=<spec>...]\n", when);
	for (i = 0; i < n; i++) {
		struct iobandtab_entry e;
		struct ioband_table_args t;
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
		if (ferror(out) | fclose(out))
			die_nomem();
		ok = ok && write_file_atomically(file, text);
		free(text);
	} else if (fflush(stdout) || ferror(stdout)) {
		ok = 0;
	}
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
