// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commands that make, list and remove devices: create, remove, list, table.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdevmapper.h>
#include <libsmartcols.h>

#include "iobandctl.h"

/* Turn each "KEY=SPEC" into a group of the table ("default": its own). */
static void add_group_args(struct ioband_table_args *t, char **args, size_t n)
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

int cmd_create(const struct command *cmd, int argc, char **argv)
{
	struct ioband_group_spec range = { 0, 0, 0 };
	const char *range_arg = NULL;
	struct ioband_table_args t = {
		.group_type = "cgroup",
		.policy = "weight",
		.default_weight = IOBAND_DEFAULT_WEIGHT,
	};
	const char *domain = NULL, *name, *weights_from = NULL;
	char **group_args, *params, *tagged = NULL;
	size_t nr_group_args = 0;
	uint64_t sectors;
	int c, dry_run = 0, ok = 1;

	/* Every --group fits in argc slots. */
	group_args = xcalloc(argc, sizeof(*group_args));
	while ((c = next_option(cmd, argc, argv)) != -1) {
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
		case OPT_DRY_RUN:
			dry_run = 1;
			break;
		case OPT_WEIGHTS_FROM:
			weights_from = optarg;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 2, 2);
	name = argv[optind];
	t.device = argv[optind + 1];
	check_name(name);

	if (!domain && strlen(name) > IOBAND_DOMAIN_ID_MAX)
		errx(EXIT_FAILURE, "name %s is longer than %d characters: give "
		     "the bandwidth domain with --domain <id>", name,
		     IOBAND_DOMAIN_ID_MAX);
	if (!domain)
		domain = name;
	if (!ioband_valid_domain(domain))
		errx(EXIT_FAILURE, "invalid domain '%s': give 1 to %d characters "
		     "without spaces", domain, IOBAND_DOMAIN_ID_MAX);
	strcpy(t.domain, domain);
	if (!*t.device || strpbrk(t.device, " \t\n"))
		errx(EXIT_FAILURE, "invalid device '%s'", t.device);
	/* UUID=, PARTUUID=, LABEL=, PARTLABEL=: as iobandtab takes them. */
	if (*t.device != '/' && strchr(t.device, '=')) {
		tagged = resolve_tab_device(t.device);
		if (!tagged)
			errx(EXIT_FAILURE, "no block device with %s", t.device);
		t.device = tagged;
	}

	if (range_arg && !ioband_range_policy(t.policy))
		errx(EXIT_FAILURE, "--default-range %s needs policy range-bw or "
		     "weight-range", range_arg);
	t.default_min_kbps = range.min_kbps;
	t.default_max_kbps = range.max_kbps;
	add_group_args(&t, group_args, nr_group_args);
	if (weights_from) {
		if (strcmp(t.group_type, "cgroup"))
			errx(EXIT_FAILURE, "--weights-from needs --type cgroup");
		if (!add_cgroup_weights(&t, weights_from))
			exit(EXIT_FAILURE);
	}
	free(group_args);

	sectors = device_sectors(t.device);
	if (!sectors)
		errx(EXIT_FAILURE, "%s is empty", t.device);

	params = checked_params(&t);
	if (!params)
		exit(EXIT_FAILURE);
	t.device = NULL;	/* argv's, or tagged */
	ioband_table_free(&t);
	free(tagged);

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

int cmd_remove(const struct command *cmd, int argc, char **argv)
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


/* list --json: schema.h; frees @names. */
static int list_json(char **names, size_t n)
{
	struct schema_list_entry *devs = xcalloc(n, sizeof(*devs));
	struct ioband_table_args *tables = xcalloc(n, sizeof(*tables));
	size_t i, k = 0;
	int rc;

	for (i = 0; i < n; i++) {
		/* Gone since the listing: skip it. */
		if (!load_table(names[i], &tables[k], NULL, 1))
			continue;
		devs[k].name = names[i];
		devs[k].table = &tables[k];
		devs[k].device = device_name(tables[k].device);
		k++;
	}
	rc = schema_write_list(stdout, devs, k);
	for (i = 0; i < k; i++) {
		free((char *)devs[i].device);
		ioband_table_free(&tables[i]);
	}
	free(tables);
	free(devs);
	free_names(names, n);
	return rc || fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cmd_list(const struct command *cmd, int argc, char **argv)
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

	while ((c = next_option(cmd, argc, argv)) != -1) {
		if (output_option(c, &opts))
			continue;
		other_option(cmd, c);
	}
	check_operands(cmd, argc, 0, 0);

	names = list_ioband_devices(&n);
	if (!n && !ioband_target_loaded())
		errx(EXIT_FAILURE, "dm-ioband is not loaded: load it with "
		     "modprobe dm-ioband");

	if (opts.json)
		return list_json(names, n);
	tb = report_new_table(&opts, "iobanddevices");
	if (!tb)
		die_nomem();
	for (i = 0; i < sizeof(cols) / sizeof(*cols); i++)
		if (report_add_column(tb, cols[i].name, 0, cols[i].flags,
				      cols[i].json_type))
			die_nomem();
	for (i = 0; i < n; i++) {
		struct libscols_line *ln;
		struct ioband_table_args t;
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

int cmd_table(const struct command *cmd, int argc, char **argv)
{
	struct ioband_group_spec g;
	enum ioband_spec spec;
	struct ioband_table_args t;
	char s[48];
	uint64_t sectors, *ids;
	char **names, *dev;
	size_t i;
	int c, json = 0;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		if (c == 'J')
			json = 1;
		else
			other_option(cmd, c);
	}
	check_operands(cmd, argc, 1, 1);
	if (!load_table(argv[optind], &t, &sectors, 0))
		return EXIT_FAILURE;
	spec = ioband_spec_of_policy(t.policy);

	ids = xcalloc(t.nr_weights, sizeof(*ids));
	for (i = 0; i < t.nr_weights; i++)
		ids[i] = t.weights[i].id;
	names = group_names(t.group_type, ids, t.nr_weights);
	dev = device_name(t.device);

	if (json) {
		schema_write_table(stdout, argv[optind], sectors, &t, dev, names);
		goto out;
	}
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
out:
	free(dev);
	free_names(names, t.nr_weights);
	free(ids);
	ioband_table_free(&t);
	return EXIT_SUCCESS;
}
