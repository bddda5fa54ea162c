// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of iobandctl's pure functions: table building and parsing,
 * status and stats parsing, rates, the stat report (its JSON checked by a
 * strict parser), weights, sizes, group keys, and cgroup path <-> id
 * resolution against
 * a fake cgroup tree in a temporary directory (an id is an inode number, so
 * any directory tree will do).
 *
 * Prints one PASS/FAIL line per test, then "N passed, N failed"; exits
 * non-zero if a test failed.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "groupkey.h"
#include "ioband.h"
#include "iobandtab.h"
#include "json_check.h"
#include "metrics.h"
#include "options.h"
#include "report.h"
#include "schema.h"
#include "unit.h"

static int failed;	/* the current test failed */
static int verbose_options;	/* --list-options: print them */

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "    %s:%d: CHECK(%s)\n", __FILE__,	\
			__LINE__, #cond);				\
		failed = 1;						\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *a_ = (a), *b_ = (b);				\
	if (!a_ || !b_ || strcmp(a_, b_)) {				\
		fprintf(stderr, "    %s:%d: \"%s\" != \"%s\"\n",	\
			__FILE__, __LINE__, a_ ? a_ : "(null)",		\
			b_ ? b_ : "(null)");				\
		failed = 1;						\
	}								\
} while (0)

/* The fake cgroup tree: root/{a/b,c} plus a file and a symlink out. */
static char root[PATH_MAX];

static uint64_t ino_of(const char *rel)
{
	char path[PATH_MAX * 2];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (stat(path, &st)) {
		perror(path);
		exit(2);
	}
	return st.st_ino;
}

static void make_tree(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX * 2];
	const char *dirs[] = { "a", "a/b", "c", "with=equal" };
	size_t i;
	FILE *f;

	snprintf(root, sizeof(root), "%s/iobandctl-test.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	for (i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		if (mkdir(path, 0755)) {
			perror(path);
			exit(2);
		}
	}
	snprintf(path, sizeof(path), "%s/a/file", root);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/out", root);
	if (symlink("/", path)) {
		perror(path);
		exit(2);
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(void)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write @text to a temporary file; the caller unlinks it. */
static char *temp_file(const char *text)
{
	static char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/mountinfo", root);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	return path;
}

/*
 * Weights and sizes
 */

static void test_parse_weight(void)
{
	unsigned int w = 0;

	CHECK(ioband_parse_weight("1", &w) == 0 && w == 1);
	CHECK(ioband_parse_weight("32767", &w) == 0 && w == 32767);
	CHECK(ioband_parse_weight("0100", &w) == 0 && w == 100);
	CHECK(ioband_parse_weight("0", &w) == -ERANGE);
	CHECK(ioband_parse_weight("32768", &w) == -ERANGE);
	/* The kernel's grammar: no sign, and a number of at most 64 bits. */
	CHECK(ioband_parse_weight("-1", &w) == -EINVAL);
	CHECK(ioband_parse_weight("99999999999999999999999", &w) == -EINVAL);
	CHECK(ioband_parse_weight("18446744073709551615", &w) == -ERANGE);
	CHECK(ioband_parse_weight("", &w) == -EINVAL);
	CHECK(ioband_parse_weight("-", &w) == -EINVAL);
	CHECK(ioband_parse_weight("abc", &w) == -EINVAL);
	CHECK(ioband_parse_weight("12a", &w) == -EINVAL);
	CHECK(ioband_parse_weight(" 12", &w) == -EINVAL);
	CHECK(ioband_parse_weight("+12", &w) == -EINVAL);
	CHECK(w == 100);	/* untouched by the failures */
}

static void test_split_weight_arg(void)
{
	unsigned int w;
	char *key = NULL;

	CHECK(ioband_split_weight_arg("a/b=200", &key, &w) == 0 && w == 200);
	CHECK_STR(key, "a/b");
	free(key);
	CHECK(ioband_split_weight_arg("x=y=3", &key, &w) == 0 && w == 3);
	CHECK_STR(key, "x=y");
	free(key);
	CHECK(ioband_split_weight_arg("=3", &key, &w) == -EINVAL);
	CHECK(ioband_split_weight_arg("a=", &key, &w) == -EINVAL);
	CHECK(ioband_split_weight_arg("a", &key, &w) == -EINVAL);
	CHECK(ioband_split_weight_arg("", &key, &w) == -EINVAL);
	CHECK(ioband_split_weight_arg("a=0", &key, &w) == -ERANGE);
	CHECK(ioband_split_weight_arg("a=40000", &key, &w) == -ERANGE);
	CHECK(ioband_split_weight_arg("a=x", &key, &w) == -ERANGE);
}

static void test_size_to_human(void)
{
	static const struct {
		uint64_t bytes;
		const char *human;
	} cases[] = {
		{ 0, "0B" },
		{ 512, "512B" },
		{ 1023, "1023B" },
		{ 1024, "1K" },
		{ 1536, "1.5K" },
		{ 1024 * 1024, "1M" },
		{ 1024 * 1024 + 1024 * 1024 / 10, "1.1M" },
		{ 10ULL << 30, "10G" },
		{ 3ULL << 40, "3T" },
		{ UINT64_MAX, "16E" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ioband_size_to_human(cases[i].bytes, buf, sizeof(buf));
		CHECK_STR(buf, cases[i].human);
	}
	ioband_size_to_human(1536, buf, 3);	/* truncates, terminates */
	CHECK_STR(buf, "1.");
}

/*
 * Table building
 */

static void init_table(struct ioband_table_args *t, char *device)
{
	memset(t, 0, sizeof(*t));
	t->device = device;
	strcpy(t->domain, "ioband1");
	strcpy(t->group_type, "cgroup");
	strcpy(t->policy, "weight");
	t->default_weight = IOBAND_DEFAULT_WEIGHT;
}

static void test_format_default_only(void)
{
	struct ioband_table_args t;
	char *params = NULL;

	init_table(&t, "/dev/sda1");
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK_STR(params, "/dev/sda1 ioband1 0 0 cgroup weight 0 :100");
	free(params);

	t.io_throttle = 4;
	t.io_limit = 128;
	t.token_base = 2048;
	t.default_weight = 40;
	strcpy(t.group_type, "none");
	strcpy(t.policy, "weight-iosize");
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK_STR(params, "/dev/sda1 ioband1 4 128 none weight-iosize 2048 :40");
	free(params);
}

static void test_format_cgroup_weights(void)
{
	struct ioband_table_args t;
	char *params = NULL, expected[256], abs[PATH_MAX * 2];
	uint64_t id_ab, id_c, id_eq;

	init_table(&t, "8:1");
	snprintf(abs, sizeof(abs), "%s/c", root);
	CHECK(cgroup_path_to_id(root, "a/b", &id_ab) == 0);
	CHECK(cgroup_path_to_id(root, abs, &id_c) == 0);
	CHECK(cgroup_path_to_id(root, "with=equal", &id_eq) == 0);
	CHECK(ioband_table_add_weight(&t, id_ab, 200) == 0);
	CHECK(ioband_table_add_weight(&t, id_c, 1) == 0);
	CHECK(ioband_table_add_weight(&t, id_eq, 32767) == 0);
	CHECK(ioband_format_params(&t, &params) == 0);
	snprintf(expected, sizeof(expected),
		 "8:1 ioband1 0 0 cgroup weight 0 :100 %llu:200 %llu:1 %llu:32767",
		 (unsigned long long)ino_of("a/b"), (unsigned long long)ino_of("c"),
		 (unsigned long long)ino_of("with=equal"));
	CHECK_STR(params, expected);
	free(params);
	free(t.weights);
}

static void test_add_weight_checks(void)
{
	struct ioband_table_args t;

	init_table(&t, "8:1");
	CHECK(ioband_table_add_weight(&t, 7, 10) == 0);
	CHECK(ioband_table_add_weight(&t, 7, 20) == -EEXIST);
	CHECK(ioband_table_add_weight(&t, 8, 0) == -ERANGE);
	CHECK(ioband_table_add_weight(&t, 8, 32768) == -ERANGE);
	CHECK(ioband_table_add_weight(&t, UINT64_MAX, 5) == 0);
	CHECK(t.nr_weights == 2);
	CHECK(ioband_table_find_weight(&t, 7)->weight == 10);
	CHECK(ioband_table_find_weight(&t, UINT64_MAX)->weight == 5);
	CHECK(ioband_table_find_weight(&t, 8) == NULL);
	free(t.weights);
}

static void test_format_rejects(void)
{
	struct ioband_weight bad = { .id = 1, .weight = 0 };
	struct ioband_table_args t;
	char *params = NULL;

	init_table(&t, "");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/my disk");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/sda");
	strcpy(t.domain, "0123456789012345678901234567890");	/* 31: fine */
	CHECK(ioband_format_params(&t, &params) == 0);
	free(params);
	params = NULL;
	strcpy(t.domain, "a b");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	t.domain[0] = '\0';
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/sda");
	t.default_weight = 0;
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	t.default_weight = 32768;
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/sda");
	strcpy(t.group_type, "node");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/sda");
	strcpy(t.policy, "range");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	init_table(&t, "/dev/sda");
	t.weights = &bad;
	t.nr_weights = 1;
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	CHECK(params == NULL);
}

static void test_valid_domain(void)
{
	CHECK(ioband_valid_domain("1"));
	CHECK(ioband_valid_domain("share-1_x.y"));
	CHECK(ioband_valid_domain("0123456789012345678901234567890"));
	CHECK(!ioband_valid_domain("01234567890123456789012345678901"));
	CHECK(!ioband_valid_domain(""));
	CHECK(!ioband_valid_domain("a\tb"));
	CHECK(!ioband_valid_domain("a\x01"));
}

/*
 * Table parsing
 */

static void test_parse_table_kernel_line(void)
{
	struct ioband_table_args t;

	CHECK(ioband_parse_params("254:0 ioband1 0 0 cgroup weight 0 :100 1234:200 "
				 "18446744073709551615:50", &t) == 0);
	CHECK_STR(t.device, "254:0");
	CHECK_STR(t.domain, "ioband1");
	CHECK(t.io_throttle == 0 && t.io_limit == 0 && t.token_base == 0);
	CHECK_STR(t.group_type, "cgroup");
	CHECK_STR(t.policy, "weight");
	CHECK(t.default_weight == 100);
	CHECK(t.nr_weights == 2);
	CHECK(t.nr_weights == 2 && t.weights[0].id == 1234 && t.weights[0].weight == 200);
	CHECK(t.nr_weights == 2 && t.weights[1].id == UINT64_MAX &&
	      t.weights[1].weight == 50);
	ioband_table_free(&t);
	CHECK(t.device == NULL && t.weights == NULL);

	/* The historical examples. */
	CHECK(ioband_parse_params("8:1 1 0 0 none weight 0 :40", &t) == 0);
	CHECK(t.nr_weights == 0 && t.default_weight == 40);
	ioband_table_free(&t);
	CHECK(ioband_parse_params("8:1 share1 10 400 user weight 2048 :100 1000:80 2000:20\n",
				 &t) == 0);
	CHECK(t.io_throttle == 10 && t.io_limit == 400 && t.token_base == 2048);
	CHECK(t.nr_weights == 2);
	ioband_table_free(&t);
}

static void test_parse_table_round_trip(void)
{
	struct ioband_table_args t, back;
	char *params = NULL, *again = NULL;
	uint64_t id;

	init_table(&t, "/dev/vdb");
	strcpy(t.domain, "shared-domain");
	t.io_throttle = 4;
	t.io_limit = 65536;
	t.token_base = 7;
	t.default_weight = 1;
	for (id = 0; id < 100; id++)
		CHECK(ioband_table_add_weight(&t, id * 1000003, 1 + id * 300) == 0);
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK(params && ioband_parse_params(params, &back) == 0);
	if (!failed) {
		CHECK_STR(back.device, t.device);
		CHECK_STR(back.domain, t.domain);
		CHECK(back.io_throttle == 4 && back.io_limit == 65536);
		CHECK(back.token_base == 7 && back.default_weight == 1);
		CHECK(back.nr_weights == 100);
		CHECK(!memcmp(back.weights, t.weights, 100 * sizeof(*t.weights)));
		CHECK(ioband_format_params(&back, &again) == 0);
		CHECK_STR(again, params);
		ioband_table_free(&back);
	}
	free(again);
	free(params);
	free(t.weights);
}

static void test_parse_table_malformed(void)
{
	static const char *const bad[] = {
		"",
		"   ",
		"8:1 d 0 0 cgroup weight 0 100",		/* no ':' */
		"8:1 d 0 0 cgroup weight 0 :",
		"8:1 d 0 0 cgroup weight 0 :0",
		"8:1 d 0 0 cgroup weight 0 :32768",
		"8:1 d 0 0 cgroup weight 0 :-1",
		"8:1 d 0 0 cgroup weight 0 :abc",
		"8:1 d 0 0 cgroup weight 0 :100 12",		/* group without weight */
		"8:1 d 0 0 cgroup weight 0 :100 12:",
		"8:1 d 0 0 cgroup weight 0 :100 :5",
		"8:1 d 0 0 cgroup weight 0 :100 a:5",
		"8:1 d 0 0 cgroup weight 0 :100 -1:5",
		"8:1 d 0 0 cgroup weight 0 :100 12:0",
		"8:1 d 0 0 cgroup weight 0 :100 12:5:6",
		"8:1 d 0 0 cgroup weight 0 :100 12:5 12:6",	/* twice */
		"8:1 d 0 0 cgroup weight 0 :100 18446744073709551616:5",
		"8:1 d 4294967296 0 cgroup weight 0 :100",
		"8:1 d 0 -1 cgroup weight 0 :100",
		"8:1 d 0 0 cgroup weight x :100",
		"8:1 d 0 0 node weight 0 :100",
		"8:1 d 0 0 cgroup range-bw 0 :100",
		"8:1 d 0 0 cgroupcgroupcgroupcgroup weight 0 :100",
		"8:1 01234567890123456789012345678901 0 0 cgroup weight 0 :100",
		"d 0 0 cgroup weight 0 :100",			/* no device */
	};
	struct ioband_table_args t;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		memset(&t, 0x5a, sizeof(t));
		if (ioband_parse_params(bad[i], &t) != -EINVAL) {
			fprintf(stderr, "    accepted: \"%s\"\n", bad[i]);
			failed = 1;
		}
	}
	/* The kernel takes a table without the default group's weight. */
	CHECK(ioband_parse_params("8:1 d 0 0 cgroup weight 0", &t) == 0);
	if (!failed) {
		CHECK(t.default_weight == IOBAND_DEFAULT_WEIGHT && !t.nr_weights);
		ioband_table_free(&t);
	}
}

/*
 * Status parsing
 */

static void test_parse_status_example(void)
{
	struct ioband_status st;
	const struct ioband_group_stat *g;

	CHECK(ioband_parse_status("ioband1 -1 143 90 424 122 78 352 "
				  "5012 10 0 80 20 0 160", &st) == 0);
	CHECK_STR(st.domain, "ioband1");
	CHECK(st.nr_groups == 2);
	if (failed)
		return;
	g = &st.groups[0];
	CHECK(g->is_default);
	CHECK(g->reads == 143 && g->delayed_reads == 90 && g->read_sectors == 424);
	CHECK(g->writes == 122 && g->delayed_writes == 78 && g->write_sectors == 352);
	g = &st.groups[1];
	CHECK(!g->is_default && g->id == 5012);
	CHECK(g->reads == 10 && g->delayed_reads == 0 && g->read_sectors == 80);
	CHECK(g->writes == 20 && g->delayed_writes == 0 && g->write_sectors == 160);
	ioband_status_free(&st);
	CHECK(st.groups == NULL && st.nr_groups == 0);
}

static void test_parse_status_default_only(void)
{
	struct ioband_status st;

	CHECK(ioband_parse_status("128 -1 0 0 0 0 0 0", &st) == 0);
	CHECK_STR(st.domain, "128");
	CHECK(st.nr_groups == 1 && st.groups[0].is_default);
	ioband_status_free(&st);
	/* Trailing and repeated blanks are no error. */
	CHECK(ioband_parse_status("d  -1 1 2 3 4 5 6\n", &st) == 0);
	CHECK(st.nr_groups == 1 && st.groups[0].write_sectors == 6);
	ioband_status_free(&st);
}

static void test_parse_status_many_groups(void)
{
	const size_t n = 5000;
	struct ioband_status st;
	size_t i, len = 0, size = 64 + n * 160;
	char *buf = malloc(size);

	if (!buf) {
		failed = 1;
		return;
	}
	len += snprintf(buf, size, "many -1 1 2 3 4 5 6");
	for (i = 1; i < n; i++)
		len += snprintf(buf + len, size - len,
				" %zu 18446744073709551615 %zu 0 %zu 1 2", i * 7,
				i, i * 8);
	CHECK(ioband_parse_status(buf, &st) == 0);
	CHECK(st.nr_groups == n);
	if (!failed) {
		CHECK(st.groups[n - 1].id == (n - 1) * 7);
		CHECK(st.groups[n - 1].reads == UINT64_MAX);
		CHECK(st.groups[n - 1].read_sectors == 0);
		CHECK(st.groups[n - 1].writes == (n - 1) * 8);
		ioband_status_free(&st);
	}
	free(buf);
}

static void test_parse_status_malformed(void)
{
	static const char *const bad[] = {
		"",
		" \n",
		"ioband1",						/* no groups */
		"ioband1 -1 1 2 3 4 5",					/* truncated */
		"ioband1 -1 1 2 3 4 5 6 7",
		"ioband1 -1 1 2 3 4 5 6 7 1 2 3 4 5",			/* truncated 2nd */
		"ioband1 5 1 2 3 4 5 6",				/* no default */
		"ioband1 -1 1 2 3 4 5 6 -1 1 2 3 4 5 6",		/* default twice */
		"ioband1 -1 1 2 3 4 5 6 7 1 2 3 4 5 6 7 1 2 3 4 5 6",	/* id twice */
		"ioband1 -1 1 2 3 4 -5 6",				/* negative */
		"ioband1 -1 1 2 3 4 5 6 -2 1 2 3 4 5 6",
		"ioband1 -1 1 2 3 4 5 18446744073709551616",		/* overflow */
		"ioband1 -1 99999999999999999999999 2 3 4 5 6",
		"ioband1 -1 +1 2 3 4 5 6",
		"ioband1 -1 1 2 3 4 5 0x6",
		"ioband1 -1 1 2 3 4 5 6.0",
		"ioband1 -1 a b c d e f",
		"ioband1 -01 1 2 3 4 5 6",
		"01234567890123456789012345678901 -1 1 2 3 4 5 6",	/* long id */
		"\x01\x02\xff -1 1 2 3 4 5 x",
	};
	struct ioband_status st;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (ioband_parse_status(bad[i], &st) != -EINVAL) {
			fprintf(stderr, "    accepted: \"%s\"\n", bad[i]);
			failed = 1;
		}
	}
}

/* A status cut anywhere is an error or a shorter valid status, never a crash. */
static void test_parse_status_every_prefix(void)
{
	const char *full = "ioband1 -1 143 90 424 122 78 352 5012 10 0 80 20 0 160";
	struct ioband_status st;
	size_t len, ok = 0;
	char buf[128];

	for (len = 0; len <= strlen(full); len++) {
		memcpy(buf, full, len);
		buf[len] = '\0';
		if (ioband_parse_status(buf, &st) == 0) {
			ok++;
			ioband_status_free(&st);
		}
	}
	/*
	 * A cut inside the last counter leaves a valid, smaller number: the
	 * line ending "3", "35", "352", "352 ", then "1", "16", "160".
	 */
	CHECK(ok == 7);
}


/*
 * Stats parsing
 */

#define STATS_DOMAIN_LINE \
	"domain=ioband1 policy=weight token_base=2048 io_throttle=4 " \
	"io_limit=32 carryover=1 in_flight=3 queued=5 vtime=123456789012"
#define STATS_GROUP(id, w, reads, rsec, writes, wsec, wait) \
	"group=" id " weight=" w " reads=" reads " read_sectors=" rsec \
	" writes=" writes " write_sectors=" wsec " delayed_reads=1 " \
	"delayed_writes=2 queued=3 in_flight=4 wait_ns=" wait \
	" wait_max_ns=9000000 service_ns=2000000 finish_tag=77"

static const char stats_example[] =
	STATS_DOMAIN_LINE "\n"
	STATS_GROUP("-1", "100", "10", "80", "0", "0", "10000000") "\n"
	STATS_GROUP("5012", "300", "30", "240", "0", "0", "30000000") "\n";

static void test_parse_stats_example(void)
{
	struct ioband_stats st;
	const struct ioband_stats_group *g;

	CHECK(ioband_parse_stats(stats_example, &st) == 0);
	if (failed)
		return;
	CHECK_STR(st.domain, "ioband1");
	CHECK_STR(st.policy, "weight");
	CHECK(st.token_base == 2048 && st.io_throttle == 4 && st.io_limit == 32);
	CHECK(st.carryover == 1 && st.in_flight == 3 && st.queued == 5);
	CHECK(st.vtime == 123456789012ULL);
	CHECK(!st.has_elapsed && st.has_sched);
	CHECK(st.nr_groups == 2);
	g = &st.groups[0];
	CHECK(g->is_default && g->weight == 100 && g->reads == 10);
	CHECK(g->read_sectors == 80 && g->delayed_reads == 1);
	CHECK(g->delayed_writes == 2 && g->queued == 3 && g->in_flight == 4);
	CHECK(g->wait_ns == 10000000 && g->wait_max_ns == 9000000);
	CHECK(g->service_ns == 2000000 && g->finish_tag == 77);
	g = &st.groups[1];
	CHECK(!g->is_default && g->id == 5012 && g->weight == 300);
	ioband_stats_free(&st);
	CHECK(st.groups == NULL && st.nr_groups == 0);
}

/* Keys in any order, unknown keys and records skipped, no final newline. */
static void test_parse_stats_forward_compatible(void)
{
	struct ioband_stats st;

	CHECK(ioband_parse_stats(
		"domain=d future=x policy=weight-range-bw token_base=1 "
		"io_throttle=2 io_limit=3 carryover=4 in_flight=5 queued=6 "
		"vtime=7 elapsed_ns=2000000000\n"
		"sched=new tree_steps=5\n"
		"\n"
		"group=-1 finish_tag=1 weight=100 reads=1 read_sectors=8 writes=0 "
		"write_sectors=0 delayed_reads=0 delayed_writes=0 queued=0 "
		"in_flight=0 wait_ns=0 wait_max_ns=0 service_ns=0 new=1 x=",
		&st) == 0);
	if (failed)
		return;
	CHECK_STR(st.policy, "weight-range-bw");
	CHECK(st.has_elapsed && st.elapsed_ns == 2000000000);
	CHECK(st.nr_groups == 1 && st.groups[0].finish_tag == 1);
	ioband_stats_free(&st);
}

/* Every field of a record is kept, in order; a key given twice is bad. */
static void test_parse_stats_fields(void)
{
	struct ioband_stats st, bad;

	CHECK(ioband_parse_stats(STATS_DOMAIN_LINE " window_ns=5000000 "
				 "writeback_attribution=cgroup\n"
				 STATS_GROUP("-1", "100", "10", "80", "0", "0", "1")
				 " future_ns=12\n", &st) == 0);
	if (failed)
		return;
	CHECK(st.nr_fields == 11);
	CHECK_STR(st.fields[0].key, "domain");
	CHECK_STR(st.fields[0].value, "ioband1");
	CHECK_STR(ioband_stats_field(st.fields, st.nr_fields, "window_ns"),
		  "5000000");
	CHECK_STR(ioband_stats_field(st.fields, st.nr_fields,
				     "writeback_attribution"), "cgroup");
	CHECK(!ioband_stats_field(st.fields, st.nr_fields, "nope"));
	CHECK_STR(ioband_stats_field(st.groups[0].fields, st.groups[0].nr_fields,
				     "future_ns"), "12");
	CHECK_STR(ioband_stats_field(st.groups[0].fields, st.groups[0].nr_fields,
				     "reads"), "10");
	ioband_stats_free(&st);
	CHECK(ioband_parse_stats(STATS_DOMAIN_LINE " new=1 new=2\n"
				 STATS_GROUP("-1", "100", "10", "80", "0", "0", "1"),
				 &bad) == -EINVAL);
	CHECK(ioband_parse_stats(STATS_DOMAIN_LINE "\n"
				 STATS_GROUP("-1", "100", "10", "80", "0", "0", "1")
				 " x=1 x=1", &bad) == -EINVAL);
}

static void test_parse_stats_malformed(void)
{
	static const char *const bad[] = {
		"",
		"\n",
		STATS_DOMAIN_LINE,					/* no group */
		STATS_DOMAIN_LINE "\n",
		/* no domain record first */
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1") "\n" STATS_DOMAIN_LINE,
		/* a key missing: vtime */
		"domain=d policy=weight token_base=1 io_throttle=2 io_limit=3 "
		"carryover=4 in_flight=5 queued=6\n"
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		/* a key twice */
		STATS_DOMAIN_LINE " queued=5\n"
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		/* no default group first, default twice, a group twice */
		STATS_DOMAIN_LINE "\n" STATS_GROUP("7", "1", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1")
		"\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1")
		"\n" STATS_GROUP("7", "1", "1", "1", "1", "1", "1")
		"\n" STATS_GROUP("7", "1", "1", "1", "1", "1", "1"),
		/* bad numbers */
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-2", "1", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "-1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "1", "1", "1", "1",
						   "18446744073709551616"),
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "0x1", "1", "1", "1", "1"),
		/* separators: two spaces, a trailing space, a field without '=' */
		STATS_DOMAIN_LINE "\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1")
		"  x=1",
		STATS_DOMAIN_LINE " \n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE " junk\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		STATS_DOMAIN_LINE "\njunk\n" STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		/* a domain id too long, a policy too long, empty */
		"domain=01234567890123456789012345678901 policy=weight token_base=1 "
		"io_throttle=2 io_limit=3 carryover=4 in_flight=5 queued=6 vtime=7\n"
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		"domain=d policy=weight-weight-weight token_base=1 "
		"io_throttle=2 io_limit=3 carryover=4 in_flight=5 queued=6 vtime=7\n"
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
		"domain= policy=weight token_base=1 "
		"io_throttle=2 io_limit=3 carryover=4 in_flight=5 queued=6 vtime=7\n"
		STATS_GROUP("-1", "1", "1", "1", "1", "1", "1"),
	};
	struct ioband_stats st;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (ioband_parse_stats(bad[i], &st) != -EINVAL) {
			fprintf(stderr, "    accepted #%zu: \"%s\"\n", i, bad[i]);
			failed = 1;
		}
	}
}

/* A reply cut anywhere is an error or a valid reply, never a crash. */
static void test_parse_stats_every_prefix(void)
{
	size_t len, full = strlen(stats_example), ok = 0;
	struct ioband_stats st;
	char *buf = malloc(full + 1);

	for (len = 0; buf && len <= full; len++) {
		memcpy(buf, stats_example, len);
		buf[len] = '\0';
		if (ioband_parse_stats(buf, &st) == 0) {
			ok++;
			ioband_stats_free(&st);
		}
	}
	free(buf);
	/*
	 * Each group line's last "finish_tag=77" cut to "7", whole, and
	 * whole with its "\n": the first group alone is a valid reply.
	 */
	CHECK(ok == 6);
}

static void test_stats_from_status(void)
{
	struct ioband_status status;
	struct ioband_table_args t;
	struct ioband_stats st;

	CHECK(ioband_parse_params("254:0 d 0 0 cgroup weight-iosize 0 :40 5012:300",
				 &t) == 0);
	CHECK(ioband_parse_status("d -1 1 2 3 4 5 6 5012 7 8 9 10 11 12 99 0 0 0 0 0 0",
				  &status) == 0);
	if (failed)
		return;
	CHECK(ioband_stats_from_status(&t, &status, &st) == 0);
	CHECK_STR(st.policy, "weight-iosize");
	CHECK(!st.has_sched && st.nr_groups == 3);
	CHECK(st.groups[0].is_default && st.groups[0].weight == 40);
	CHECK(st.groups[0].reads == 1 && st.groups[0].delayed_reads == 2);
	CHECK(st.groups[0].read_sectors == 3 && st.groups[0].writes == 4);
	CHECK(st.groups[0].delayed_writes == 5 && st.groups[0].write_sectors == 6);
	CHECK(st.groups[1].id == 5012 && st.groups[1].weight == 300);
	CHECK(st.groups[2].id == 99 && st.groups[2].weight == 0);	/* gone */
	ioband_stats_free(&st);
	ioband_status_free(&status);
	ioband_table_free(&t);
}

/*
 * Rates
 */

static int near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

static void test_rates_since_start(void)
{
	struct ioband_rates r[2];
	struct ioband_stats st;

	CHECK(ioband_parse_stats(stats_example, &st) == 0);
	if (failed)
		return;
	/* Without an interval: shares and waits, no rates. */
	ioband_stats_rates(NULL, &st, 0, r);
	CHECK(r[0].has_share && near(r[0].share, 0.25));
	CHECK(r[1].has_share && near(r[1].share, 0.75));
	CHECK(!r[0].has_rate && !r[1].has_rate);
	CHECK(r[1].ios == 30 && r[1].sectors == 240 && r[1].delayed == 3);
	CHECK(r[1].has_wait && near(r[1].wait_mean_ns, 1000000));
	CHECK(near(r[1].service_mean_ns, 2000000 / 30.0));
	/* Over 2 s. */
	ioband_stats_rates(NULL, &st, 2000000000ULL, r);
	CHECK(r[1].has_rate && near(r[1].iops, 15));
	CHECK(near(r[1].bytes_per_sec, 240 * 512 / 2.0));

	/* weight-iosize shares sectors. */
	strcpy(st.policy, "weight-iosize");
	st.groups[0].read_sectors = 720;
	ioband_stats_rates(NULL, &st, 0, r);
	CHECK(near(r[0].share, 0.75) && near(r[1].share, 0.25));
	ioband_stats_free(&st);
}

static void test_rates_interval(void)
{
	struct ioband_stats prev, cur;
	struct ioband_rates r[3];

	CHECK(ioband_parse_stats(stats_example, &prev) == 0);
	CHECK(ioband_parse_stats(
		STATS_DOMAIN_LINE "\n"
		STATS_GROUP("-1", "100", "10", "80", "0", "0", "10000000") "\n"
		STATS_GROUP("77", "50", "5", "40", "5", "40", "0") "\n"
		STATS_GROUP("5012", "300", "50", "400", "10", "80", "60000000"),
		&cur) == 0);
	if (failed)
		return;
	ioband_stats_rates(&prev, &cur, 1000000000ULL, r);
	/* The default group did nothing: no wait to average. */
	CHECK(r[0].ios == 0 && !r[0].has_wait && r[0].has_share);
	CHECK(near(r[0].share, 0) && near(r[0].iops, 0));
	/* Group 77 is new: counted from 0, matched by id not position. */
	CHECK(r[1].ios == 10 && near(r[1].iops, 10));
	CHECK(r[2].ios == 30 && r[2].sectors == 240);
	CHECK(near(r[2].wait_mean_ns, 1000000));
	CHECK(near(r[1].share, 0.25) && near(r[2].share, 0.75));
	CHECK(r[2].delayed == 0);

	/* A reset between the samples: the counters count from 0. */
	cur.groups[2].reads = 3;
	cur.groups[2].writes = 0;
	cur.groups[2].read_sectors = 24;
	cur.groups[2].write_sectors = 0;
	ioband_stats_rates(&prev, &cur, 1000000000ULL, r);
	CHECK(r[2].ios == 3 && r[2].sectors == 24);

	/* No IO at all: no share. */
	ioband_stats_rates(&cur, &cur, 1000000000ULL, r);
	CHECK(!r[0].has_share && !r[1].has_share && !r[2].has_share);
	ioband_stats_free(&prev);
	ioband_stats_free(&cur);
}

/*
 * IOs that went down past the scheduler (open_ios) have no service time:
 * the mean is over the others, and there is none when all were untimed.
 */
static void test_rates_untimed_ios(void)
{
	struct ioband_stats prev, cur;
	struct ioband_rates r[2];

	CHECK(ioband_parse_stats(
		STATS_DOMAIN_LINE "\n"
		STATS_GROUP("-1", "100", "10", "80", "0", "0", "0") " open_ios=0\n"
		STATS_GROUP("5", "100", "10", "80", "0", "0", "0") " open_ios=4\n",
		&prev) == 0);
	CHECK(ioband_parse_stats(
		STATS_DOMAIN_LINE "\n"
		STATS_GROUP("-1", "100", "40", "320", "0", "0", "0") " open_ios=20\n"
		STATS_GROUP("5", "100", "30", "240", "0", "0", "0") " open_ios=24\n",
		&cur) == 0);
	if (failed)
		return;
	/* service_ns is 2000000 in both samples: make it grow by 3 ms. */
	cur.groups[0].service_ns += 3000000;
	ioband_stats_rates(&prev, &cur, 1000000000ULL, r);
	CHECK(r[0].ios == 30 && r[0].has_wait && r[0].has_service);
	CHECK(near(r[0].service_mean_ns, 3000000 / 10.0));
	CHECK(r[1].ios == 20 && r[1].has_wait && !r[1].has_service);
	/* Since the counters started: 20 of the default group's 40 timed. */
	ioband_stats_rates(NULL, &cur, 0, r);
	CHECK(r[0].has_service && near(r[0].service_mean_ns, 5000000 / 20.0));
	ioband_stats_free(&prev);
	ioband_stats_free(&cur);
}

/*
 * The stat report
 */

static char *render_example(struct stat_report *rep, int has_sched)
{
	struct ioband_rates r[2];
	struct ioband_stats st;
	struct stat_row rows[2];
	char *out = NULL;
	size_t i;

	if (ioband_parse_stats(stats_example, &st))
		return NULL;
	ioband_stats_rates(NULL, &st, has_sched ? 1000000000ULL : 0, r);
	CHECK(stat_report_init(rep) == 0);
	for (i = 0; i < 2; i++) {
		rows[i].device = "dev \"1\"";
		rows[i].group = i ? "a/b\\c" : NULL;
		rows[i].g = &st.groups[i];
		rows[i].rates = &r[i];
		rows[i].has_sched = has_sched;
		CHECK(stat_report_add(rep, &rows[i]) == 0);
	}
	CHECK(scols_print_table_to_string(rep->tb, &out) == 0);
	stat_report_free(rep);
	ioband_stats_free(&st);
	return out;
}

static void check_json(const char *out)
{
	size_t at = 0;

	if (!out || !json_valid(out, &at)) {
		fprintf(stderr, "    invalid JSON at %zu:\n%s\n", at, out ? out : "");
		failed = 1;
	}
}

/*
 * Metrics: two devices, the second from a kernel with domain fields this
 * iobandctl does not know, one of them a word.
 */
static const char stats_newer[] =
	"domain=shared policy=range-bw token_base=0 io_throttle=4 io_limit=32 "
	"carryover=2 in_flight=0 queued=0 vtime=1 elapsed_ns=1500000000 "
	"window_ns=20000000 writeback_attribution=cgroup\n"
	"group=-1 weight=100 reads=0 read_sectors=0 writes=7 write_sectors=56 "
	"delayed_reads=0 delayed_writes=0 queued=0 in_flight=0 wait_ns=0 "
	"wait_max_ns=0 service_ns=0 finish_tag=0 min_kbps=0 max_kbps=0 "
	"open_ios=7\n"
	"group=77 weight=100 reads=1 read_sectors=8 writes=0 write_sectors=0 "
	"delayed_reads=0 delayed_writes=0 queued=0 in_flight=0 "
	"wait_ns=1000000001 wait_max_ns=1000000001 service_ns=5 finish_tag=0 "
	"min_kbps=100 max_kbps=2000 open_ios=0\n";

/* Writes the metrics of the two example devices; allocated. */
static char *example_metrics(enum metrics_format format)
{
	static char *names[] = { NULL, "web \"a\"\\b" };
	struct ioband_stats st[2];
	struct metrics_device devs[2] = {
		{ "io1", &st[0], names },
		{ "io2", &st[1], NULL },
	};
	char *text = NULL;
	size_t size;
	FILE *f;

	if (ioband_parse_stats(stats_example, &st[0]) ||
	    ioband_parse_stats(stats_newer, &st[1]))
		return NULL;
	f = open_memstream(&text, &size);
	if (f) {
		metrics_write(f, format, devs, 2);
		fclose(f);
	}
	ioband_stats_free(&st[0]);
	ioband_stats_free(&st[1]);
	return text;
}

static void test_metrics(void)
{
	char *out = example_metrics(METRICS_PROMETHEUS);

	CHECK(out != NULL);
	if (!out)
		return;
	CHECK(strstr(out, "# HELP ioband_group_read_bytes_total Bytes read"));
	CHECK(strstr(out, "\n# TYPE ioband_group_read_bytes_total counter\n"
		      "ioband_group_read_bytes_total{device=\"io1\",group=\"<default>\",id=\"-1\"} 40960\n"
		      "ioband_group_read_bytes_total{device=\"io1\",group=\"web \\\"a\\\"\\\\b\",id=\"5012\"} 122880\n"
		      "ioband_group_read_bytes_total{device=\"io2\",group=\"<default>\",id=\"-1\"} 0\n"
		      "ioband_group_read_bytes_total{device=\"io2\",group=\"77\",id=\"77\"} 4096\n"));
	CHECK(strstr(out, "ioband_group_wait_seconds_total{device=\"io2\",group=\"77\",id=\"77\"} 1.000000001\n"));
	CHECK(strstr(out, "# TYPE ioband_group_wait_max_seconds gauge\n"));
	CHECK(strstr(out, "ioband_group_device_seconds_total{device=\"io1\",group=\"<default>\",id=\"-1\"} 0.002000000\n"));
	CHECK(strstr(out, "ioband_group_queued_ios{device=\"io1\",group=\"<default>\",id=\"-1\"} 3\n"));
	/* Untimed IOs only from a module that counts them. */
	CHECK(strstr(out, "ioband_group_open_ios_total{device=\"io2\",group=\"<default>\",id=\"-1\"} 7\n"));
	CHECK(!strstr(out, "ioband_group_open_ios_total{device=\"io1\""));
	CHECK(strstr(out, "ioband_group_weight{device=\"io1\",group=\"<default>\",id=\"-1\"} 100\n"));
	/* Ranges only under range policies; no limit, no sample. */
	CHECK(strstr(out, "ioband_group_min_bytes_per_second{device=\"io2\",group=\"77\",id=\"77\"} 102400\n"));
	CHECK(strstr(out, "ioband_group_max_bytes_per_second{device=\"io2\",group=\"77\",id=\"77\"} 2048000\n"));
	CHECK(!strstr(out, "ioband_group_max_bytes_per_second{device=\"io2\",group=\"<default>\""));
	CHECK(!strstr(out, "ioband_group_min_bytes_per_second{device=\"io1\""));
	/* Domain fields by key; the words are labels of the info metric. */
	CHECK(strstr(out, "ioband_domain_in_flight_ios{device=\"io1\",domain=\"ioband1\"} 3\n"));
	CHECK(strstr(out, "ioband_domain_elapsed_seconds{device=\"io2\",domain=\"shared\"} 1.500000000\n"));
	CHECK(strstr(out, "# TYPE ioband_domain_info gauge\n"));
	CHECK(strstr(out, "ioband_domain_info{device=\"io1\",domain=\"ioband1\",policy=\"weight\"} 1\n"));
	CHECK(strstr(out, "ioband_domain_info{device=\"io2\",domain=\"shared\",policy=\"range-bw\",writeback_attribution=\"cgroup\"} 1\n"));
	CHECK(!strstr(out, "# EOF"));
	/* Neither example module gives bios by route. */
	CHECK(!strstr(out, "ioband_attributed_bios"));
	free(out);

	out = example_metrics(METRICS_OPENMETRICS);
	CHECK(out && strstr(out, "# TYPE ioband_group_read_bytes counter\n"));
	CHECK(out && strstr(out, "\nioband_group_read_bytes_total{device=\"io1\""));
	CHECK(out && strstr(out, "# TYPE ioband_domain info\n"));
	CHECK(out && strlen(out) > 6 && !strcmp(out + strlen(out) - 6, "# EOF\n"));
	free(out);

	CHECK(metrics_parse_format("openmetrics") == METRICS_OPENMETRICS);
	CHECK(metrics_parse_format("prometheus") == METRICS_PROMETHEUS);
	CHECK(metrics_parse_format("json") == -1);
}

/*
 * --json, schema 1 (schema.h): what list, table, stat and top print from
 * canned tables and stats. test-tools --print-json KIND prints them for
 * check_schema.py, which validates them against tools/iobandctl.schema.json.
 */

/* A module with the writeback attribution of issue 43. */
static const char stats_attributed[] =
	"domain=att policy=weight-range token_base=0 io_throttle=4 io_limit=0 "
	"carryover=2 in_flight=1 queued=0 vtime=9 elapsed_ns=2000000000 "
	"window_sectors=256 in_flight_sectors=8 window_rate_kbps=1000 "
	"window_min_lat_ns=150000 window_inline=0 window_full=3 idle_waits=4 "
	"urgent=5 overdue=6 overdue_in_flight=1 overdue_after_ns=1000000000 "
	"open_in_flight=2 open_in_flight_sectors=16 "
	"writeback_attribution=wb+orig-bio dm_layout=btf "
	"attributed_orig_bio=11 attributed_wb=22 attributed_task=33 "
	"writeback_hold_sectors=2048 time_read_io_ns=49000 "
	"time_read_sector_ps=3465000 time_write_io_ns=2000 "
	"time_write_sector_ps=3865000 time_read_io_cost_milli=14141 "
	"time_read_sector_cost_milli=1000 time_write_io_cost_milli=577 "
	"time_write_sector_cost_milli=1115 time_unit_ps=3465000 "
	"time_rate_limited=0 time_busy_pct=398 time_periods=120 "
	"time_read_least=8:76720/512:1823080 time_write_least=- "
	"time_window_items=9 epoch_tokens=4096 future_word=abc future_count=7\n"
	"group=-1 weight=100 reads=4 read_sectors=32 writes=0 write_sectors=0 "
	"delayed_reads=0 delayed_writes=0 queued=0 in_flight=0 wait_ns=400 "
	"wait_max_ns=300 service_ns=800 finish_tag=0 min_kbps=0 max_kbps=0 "
	"writeback_waits=1 writeback_wait_ns=5000 open_ios=0 group_future=1\n";

static const char *const stats_texts[] = {
	stats_example, stats_newer, stats_attributed
};
#define NR_STATS_TEXTS	(sizeof(stats_texts) / sizeof(*stats_texts))

/*
 * stat or top --json of the example devices: @interval_ns 0 is since the
 * counters started (stat's first report), else the rates between two
 * samples (top's refresh, stat --interval). Allocated.
 */
static char *example_stats_json(uint64_t interval_ns)
{
	static char *names[] = { NULL, "web \"a\"\\b" };
	struct ioband_stats prev[NR_STATS_TEXTS], st[NR_STATS_TEXTS];
	struct ioband_rates rates[NR_STATS_TEXTS][4];
	struct schema_device devs[NR_STATS_TEXTS];
	char *text = NULL;
	size_t size, i;
	FILE *f;

	for (i = 0; i < NR_STATS_TEXTS; i++) {
		if (ioband_parse_stats(stats_texts[i], &st[i]) ||
		    ioband_parse_stats(stats_texts[i], &prev[i]))
			return NULL;
		/* Some IO since the previous sample. */
		prev[i].groups[0].reads = 0;
		prev[i].groups[0].read_sectors = 0;
		ioband_stats_rates(interval_ns ? &prev[i] : NULL, &st[i],
				   interval_ns ? interval_ns :
				   st[i].has_elapsed ? st[i].elapsed_ns : 0,
				   rates[i]);
		devs[i].name = i == 1 ? "io2" : i ? "io3" : "io1";
		devs[i].stats = &st[i];
		devs[i].group_names = i ? NULL : names;
		devs[i].rates = rates[i];
	}
	f = open_memstream(&text, &size);
	if (f) {
		schema_write_stats(f, devs, NR_STATS_TEXTS);
		if (interval_ns)	/* top: a second refresh */
			schema_write_stats(f, devs, 1);
		fclose(f);
	}
	for (i = 0; i < NR_STATS_TEXTS; i++) {
		ioband_stats_free(&st[i]);
		ioband_stats_free(&prev[i]);
	}
	return text;
}

/* stat --json of a module without the stats message: its status line. */
static char *example_old_module_json(void)
{
	struct ioband_status status;
	struct ioband_table_args t;
	struct ioband_stats st;
	struct ioband_rates rates[3];
	struct schema_device dev = { "old", &st, NULL, rates };
	char *text = NULL;
	size_t size;
	FILE *f;

	if (ioband_parse_params("254:0 d 0 0 cgroup weight-iosize 0 :40 5012:300", &t) ||
	    ioband_parse_status("d -1 1 2 3 4 5 6 5012 7 8 9 10 11 12 99 0 0 0 0 0 0",
				&status) ||
	    ioband_stats_from_status(&t, &status, &st))
		return NULL;
	ioband_stats_rates(NULL, &st, 0, rates);
	f = open_memstream(&text, &size);
	if (f) {
		schema_write_stats(f, &dev, 1);
		fclose(f);
	}
	ioband_stats_free(&st);
	ioband_status_free(&status);
	ioband_table_free(&t);
	return text;
}

static const char *const example_tables[] = {
	"254:0 ioband1 0 0 cgroup weight 0 :100 1234:200 18446744073709551615:50",
	"8:16 shared 4 32 uid weight-range 2048 :100:0:0 0:300:1024:4096",
	"8:16 shared 0 0 gid range-bw 0 :0:0 10:100:0",
};
#define NR_EXAMPLE_TABLES	(sizeof(example_tables) / sizeof(*example_tables))

static char *example_list_json(void)
{
	struct ioband_table_args t[NR_EXAMPLE_TABLES];
	struct schema_list_entry devs[NR_EXAMPLE_TABLES];
	static const char *const names[] = { "io1", "io \"2\"", "io3" };
	char *text = NULL;
	size_t size, i;
	FILE *f;

	for (i = 0; i < NR_EXAMPLE_TABLES; i++) {
		if (ioband_parse_params(example_tables[i], &t[i]))
			return NULL;
		devs[i].name = names[i];
		devs[i].table = &t[i];
		devs[i].device = i ? "/dev/sdb" : "254:0";
	}
	f = open_memstream(&text, &size);
	if (f) {
		schema_write_list(f, devs, NR_EXAMPLE_TABLES);
		fclose(f);
	}
	for (i = 0; i < NR_EXAMPLE_TABLES; i++)
		ioband_table_free(&t[i]);
	return text;
}

static char *example_table_json(void)
{
	static char *names[] = { "a/b", NULL };
	char *text = NULL;
	size_t size, i;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return NULL;
	for (i = 0; i < NR_EXAMPLE_TABLES; i++) {
		struct ioband_table_args t;

		if (ioband_parse_params(example_tables[i], &t))
			break;
		schema_write_table(f, "io1", 2097152, &t, "/dev/sdb",
				   t.nr_weights == 2 ? names : NULL);
		ioband_table_free(&t);
	}
	fclose(f);
	return i == NR_EXAMPLE_TABLES ? text : (free(text), NULL);
}

static char *example_json(const char *kind)
{
	if (!strcmp(kind, "list"))
		return example_list_json();
	if (!strcmp(kind, "table"))
		return example_table_json();
	if (!strcmp(kind, "stat"))
		return example_stats_json(0);
	if (!strcmp(kind, "stat-old-module"))
		return example_old_module_json();
	if (!strcmp(kind, "top"))
		return example_stats_json(1000000000ULL);
	return NULL;
}

/* Every output is one strict JSON value per object, "schema": 1 first. */
static void check_json_objects(const char *out)
{
	const char *p = out;

	CHECK(out != NULL);
	while (p && *p) {
		const char *end = strstr(p, "\n}\n");
		char *one;

		CHECK(end != NULL && !strncmp(p, "{\n  \"schema\": 1,\n", 17));
		if (!end)
			return;
		one = strndup(p, end + 3 - p);
		check_json(one);
		free(one);
		p = end + 3;
	}
}

static void test_json_schema_stats(void)
{
	char *out = example_json("stat");

	check_json_objects(out);
	if (!out)
		return;
	/* Fixed snake_case keys, units in their names, none of the old ones. */
	CHECK(strstr(out, "\"read_bytes\": 40960,"));
	CHECK(strstr(out, "\"wait_max_ns\": 9000000,"));
	CHECK(strstr(out, "\"share_pct\": 25.0,"));
	CHECK(!strstr(out, "mb/s") && !strstr(out, "read-bytes") &&
	      !strstr(out, "wait-max"));
	CHECK(strstr(out, "\"group\": \"web \\\"a\\\"\\\\b\","));
	CHECK(strstr(out, "\"id\": -1,"));
	/* A range policy's limit in bytes/s; 0 is no limit. */
	CHECK(strstr(out, "\"max_bytes_per_second\": 2048000,"));
	/* The module's fields the schema does not name, under "module". */
	CHECK(strstr(out, "\"module\": {\n        \"vtime\": 123456789012\n      },"));
	CHECK(strstr(out, "\"window_ns\": 20000000\n"));
	CHECK(strstr(out, "\"future_word\": \"abc\","));
	CHECK(strstr(out, "\"group_future\": 1\n"));
	CHECK(strstr(out, "\"finish_tag\": 77\n"));
	/* Known fields are not repeated there. */
	CHECK(!strstr(out, "\"writeback_attribution\""));
	CHECK(!strstr(out, "\"window_sectors\""));
	/* The attribution: route, layout, bios by route; null when absent. */
	CHECK(strstr(out, "\"attribution\": {\n        \"route\": \"wb+orig-bio\",\n"
		      "        \"dm_layout\": \"btf\",\n        \"bios_orig_bio\": 11,\n"
		      "        \"bios_wb\": 22,\n        \"bios_task\": 33\n      },"));
	CHECK(strstr(out, "\"attribution\": {\n        \"route\": \"cgroup\",\n"
		      "        \"dm_layout\": null,\n        \"bios_orig_bio\": null,"));
	CHECK(strstr(out, "\"route\": null,"));
	/* Overdue IOs and the open window's: named, null when absent. */
	CHECK(strstr(out, "\"open_in_flight_ios\": 2,\n      \"open_in_flight_bytes\": 8192,\n"));
	CHECK(strstr(out, "\"inline_closes\": null,\n        \"overdue_ios\": 6,\n"
		      "        \"overdue_in_flight_ios\": 1,\n"
		      "        \"overdue_after_ns\": 1000000000\n"));
	CHECK(strstr(out, "\"overdue_ios\": null,"));
	CHECK(!strstr(out, "\"overdue\":"));
	CHECK(strstr(out, "\"window\": {\n        \"inline\": false,\n"
		      "        \"bytes\": 131072,\n        \"in_flight_bytes\": 4096,\n"
		      "        \"rate_bytes_per_second\": 1024000,"));
	/* weight-time's model: its numbers, its inputs as a list. */
	CHECK(strstr(out, "\"time_model\": {\n        \"rate_limited\": false,\n"
		      "        \"read_io_ns\": 49000,\n        \"read_sector_ps\": 3465000,"));
	CHECK(strstr(out, "\"read_least\": [\n          {\n            \"bytes\": 4096,\n"
		      "            \"least_latency_ns\": 76720\n          },\n          {\n"
		      "            \"bytes\": 262144,\n            \"least_latency_ns\": 1823080\n"
		      "          }\n        ],\n        \"write_least\": []\n"));
	CHECK(strstr(out, "\"periods\": 120,\n        \"window_ios\": 9,\n"));
	CHECK(strstr(out, "\"epoch_tokens\": 4096,\n"));
	CHECK(strstr(out, "\"epoch_tokens\": null,\n"));
	CHECK(strstr(out, "\"time_model\": null,"));
	CHECK(!strstr(out, "\"time_read_least\"") && !strstr(out, "\"time_unit_ps\"") &&
	      !strstr(out, "\"time_window_items\""));
	free(out);

	/* From a status line: no queue, no rates, all keys still there. */
	out = example_json("stat-old-module");
	check_json_objects(out);
	CHECK(out && strstr(out, "\"queued_ios\": null,"));
	CHECK(out && strstr(out, "\"iops\": null,"));
	CHECK(out && strstr(out, "\"module\": {},"));
	free(out);

	/* top: an object per refresh. */
	out = example_json("top");
	check_json_objects(out);
	CHECK(out && strstr(out, "\"iops\": 10.0,"));
	free(out);
}

static void test_json_schema_list_table(void)
{
	char *out = example_json("list");

	check_json_objects(out);
	CHECK(out && strstr(out, "\"name\": \"io \\\"2\\\"\","));
	CHECK(out && strstr(out, "\"nr_groups\": 2,"));
	CHECK(out && strstr(out, "\"group_type\": \"uid\","));
	free(out);
	out = example_json("table");
	check_json_objects(out);
	CHECK(out && strstr(out, "\"group\": \"a/b\",\n        \"id\": 1234,\n"
			    "        \"weight\": 200,\n"
			    "        \"min_bytes_per_second\": null,"));
	CHECK(out && strstr(out, "\"group\": null,\n        \"id\": 0,\n"
			    "        \"weight\": 300,\n"
			    "        \"min_bytes_per_second\": 1048576,\n"
			    "        \"max_bytes_per_second\": 4194304\n"));
	/* range-bw: no weight. */
	CHECK(out && strstr(out, "\"id\": 10,\n        \"weight\": null,\n"));
	free(out);
}

/* The bios by route of a module that gives them, a counter per route. */
static void test_metrics_attributed(void)
{
	struct ioband_stats st;
	struct metrics_device dev = { "io3", &st, NULL };
	char *text = NULL;
	size_t size;
	FILE *f;

	CHECK(ioband_parse_stats(stats_attributed, &st) == 0);
	if (failed)
		return;
	f = open_memstream(&text, &size);
	CHECK(f != NULL);
	if (f) {
		metrics_write(f, METRICS_PROMETHEUS, &dev, 1);
		fclose(f);
	}
	CHECK(text && strstr(text, "# TYPE ioband_attributed_bios_total counter\n"
		"ioband_attributed_bios_total{device=\"io3\",domain=\"att\",route=\"orig_bio\"} 11\n"
		"ioband_attributed_bios_total{device=\"io3\",domain=\"att\",route=\"wb\"} 22\n"
		"ioband_attributed_bios_total{device=\"io3\",domain=\"att\",route=\"task\"} 33\n"));
	/* Overdue IOs: a counter, those below now and the threshold gauges. */
	CHECK(text && strstr(text, "# TYPE ioband_domain_overdue_ios_total counter\n"
		"ioband_domain_overdue_ios_total{device=\"io3\",domain=\"att\"} 6\n"));
	CHECK(text && strstr(text, "ioband_domain_overdue_in_flight_ios{device=\"io3\",domain=\"att\"} 1\n"));
	CHECK(text && strstr(text, "ioband_domain_overdue_after_seconds{device=\"io3\",domain=\"att\"} 1.000000000\n"));
	CHECK(text && strstr(text, "ioband_domain_open_in_flight_bytes{device=\"io3\",domain=\"att\"} 8192\n"));
	/* The route and the layout are words: labels of the info metric. */
	CHECK(text && strstr(text, "writeback_attribution=\"wb+orig-bio\",dm_layout=\"btf\""));
	free(text);
	ioband_stats_free(&st);
}

static void test_report_human(void)
{
	struct stat_report rep = {
		.columns = { COL_GROUP, COL_SHARE, COL_IOPS, COL_RBYTES, COL_WAIT },
		.ncolumns = 5,
		.opts = { .raw = 1, .noheadings = 1 },
	};
	const char *bad = NULL;
	size_t len = 0;
	char *out;

	out = render_example(&rep, 0);
	CHECK_STR(out, "<default> 25.0% - 40K -\na/b\\x5cc 75.0% - 120K -");
	free(out);
	out = render_example(&rep, 1);
	CHECK_STR(out, "<default> 25.0% 10.0 40K 1.00\na/b\\x5cc 75.0% 30.0 120K 1.00");
	free(out);

	CHECK(stat_report_columns(&rep, "+name", &bad, &len) == 0);
	CHECK(rep.ncolumns == 6 && rep.columns[5] == COL_NAME);
	CHECK(stat_report_columns(&rep, "group,nope,weight", &bad, &len) == -EINVAL);
	CHECK(bad && len == 4 && !strncmp(bad, "nope", 4));
	CHECK(rep.ncolumns == 6);	/* untouched */
}

static void test_sort_throughput(void)
{
	struct ioband_rates r[3] = {
		{ .bytes_per_sec = 10, .ios = 1 },
		{ .bytes_per_sec = 30, .ios = 1 },
		{ .bytes_per_sec = 10, .ios = 5, .sectors = 1 },
	};
	struct stat_row rows[3] = {
		{ .device = "a", .rates = &r[0] },
		{ .device = "b", .rates = &r[1] },
		{ .device = "c", .rates = &r[2] },
	};

	qsort(rows, 3, sizeof(*rows), stat_row_cmp_throughput);
	CHECK_STR(rows[0].device, "b");
	CHECK_STR(rows[1].device, "c");
	CHECK_STR(rows[2].device, "a");
}

static void test_json_check(void)
{
	static const char *const good[] = {
		"{}", "[]", " {\"a\": [1, -2.5e+3, true, false, null, \"x\\u00e9\\n\"]} ",
		"0", "\"\"", "{\"a\":{\"b\":[{}]}}",
	};
	static const char *const bad[] = {
		"", "{", "{\"a\"}", "{\"a\":1,}", "[1,]", "[01]", "1.", "-", "\"\x01\"",
		"\"\\x\"", "{a:1}", "[1] [2]", "nul", "\"abc", "[1,,2]", "+1",
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++)
		CHECK(json_valid(good[i], NULL));
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (json_valid(bad[i], NULL)) {
			fprintf(stderr, "    accepted: \"%s\"\n", bad[i]);
			failed = 1;
		}
}

/*
 * Group keys
 */

static void test_group_keys(void)
{
	uint64_t id = 0;
	char *name;

	CHECK(group_key_to_id("uid", "1000", NULL, &id) == 0 && id == 1000);
	CHECK(group_key_to_id("user", "0", NULL, &id) == 0 && id == 0);
	CHECK(group_key_to_id("gid", "42", NULL, &id) == 0 && id == 42);
	CHECK(group_key_to_id("pid", "4194304", NULL, &id) == 0 && id == 4194304);
	CHECK(group_key_to_id("pgrp", "1", NULL, &id) == 0 && id == 1);
	CHECK(group_key_to_id("pid", "x", NULL, &id) == -EINVAL);
	CHECK(group_key_to_id("pid", "-1", NULL, &id) == -EINVAL);
	CHECK(group_key_to_id("pid", "99999999999", NULL, &id) == -EINVAL);
	CHECK(group_key_to_id("uid", "no-such-user-iobandctl", NULL, &id) == -ENOENT);
	CHECK(group_key_to_id("gid", "no-such-group-iobandctl", NULL, &id) == -ENOENT);
	CHECK(group_key_to_id("none", "1", NULL, &id) == -EINVAL);
	CHECK(group_key_to_id("cgroup", "a/b", root, &id) == 0 && id == ino_of("a/b"));
	CHECK(group_key_to_id("cgroup", "nope", root, &id) == -ENOENT);

	name = group_id_to_name("pid", 123);
	CHECK_STR(name, "123");
	free(name);
	name = group_id_to_name("uid", 4000000000u);	/* nobody's, surely */
	CHECK_STR(name, "4000000000");
	free(name);
}

/*
 * cgroups
 */

/* systemd units as keys: the names, the layout, and keys to ids. */
static void test_units(void)
{
	static const char *const dirs[] = {
		"system.slice", "system.slice/web.service", "a.slice",
		"a.slice/a-b.slice", "a.slice/a-b.slice/db@1.service",
		"nginx.service",
	};
	char path[PATH_MAX * 2], *p;
	uint64_t id;
	size_t i;

	CHECK(unit_key("nginx.service") && unit_key("web.slice"));
	CHECK(unit_key("getty@tty1.service") && unit_key("run-r1.scope"));
	CHECK(unit_key("-.slice") && unit_key("a-b-c.slice"));
	CHECK(unit_key("dev-sda.swap") && unit_key("sshd.socket"));
	CHECK(!unit_key("a/nginx.service") && !unit_key("./nginx.service"));
	CHECK(!unit_key("/nginx.service") && !unit_key(".service"));
	CHECK(!unit_key("nginx.target") && !unit_key("nginx") && !unit_key(""));
	CHECK(!unit_key("a b.service") && !unit_key("a--b.slice"));
	CHECK(!unit_key("-a.slice") && !unit_key("a-.slice"));

	p = unit_cgroup_by_layout("nginx.service", NULL);
	CHECK_STR(p, "/system.slice/nginx.service");
	free(p);
	p = unit_cgroup_by_layout("db@1.service", "a-b.slice");
	CHECK_STR(p, "/a.slice/a-b.slice/db@1.service");
	free(p);
	p = unit_cgroup_by_layout("a-b-c.slice", NULL);
	CHECK_STR(p, "/a.slice/a-b.slice/a-b-c.slice");
	free(p);
	p = unit_cgroup_by_layout("web.slice", "ignored.slice");
	CHECK_STR(p, "/web.slice");
	free(p);
	p = unit_cgroup_by_layout("-.slice", NULL);
	CHECK_STR(p, "");
	free(p);
	p = unit_cgroup_by_layout("x.scope", "-.slice");
	CHECK_STR(p, "/x.scope");
	free(p);

	/* Without systemd, a key resolves by the layout. */
	for (i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK(mkdir(path, 0755) == 0);
	}
	CHECK(group_key_to_id("cgroup", "web.service", root, &id) == 0);
	CHECK(id == ino_of("system.slice/web.service"));
	CHECK(group_key_to_id("cgroup", "a-b.slice", root, &id) == 0);
	CHECK(id == ino_of("a.slice/a-b.slice"));
	CHECK(group_key_to_id("cgroup", "system.slice", root, &id) == 0);
	CHECK(id == ino_of("system.slice"));
	/* Not running: no cgroup; a cgroup of a unit's name is ./name. */
	CHECK(group_key_to_id("cgroup", "nginx.service", root, &id) == -ESRCH);
	CHECK(group_key_to_id("cgroup", "./nginx.service", root, &id) == 0);
	CHECK(id == ino_of("nginx.service"));
	CHECK(group_key_to_id("cgroup", "/nginx.service", root, &id) == 0);
	CHECK(group_key_to_id("cgroup", "/system.slice/web.service", root,
			      &id) == 0);
	CHECK(id == ino_of("system.slice/web.service"));
	/* Other types know no units. */
	CHECK(group_key_to_id("uid", "web.service", NULL, &id) != 0);
	for (i = sizeof(dirs) / sizeof(*dirs); i-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK(rmdir(path) == 0);
	}
}

static void test_find_mount(void)
{
	char *mnt = NULL;
	char *path;

	path = temp_file(
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"garbage\n"
		"\n"
		"41 31 0:38 / /sys/fs/my\\040cgroup rw,nosuid shared:9 master:2 - cgroup2 cgroup2 rw\n"
		"42 31 0:39 / /other rw - cgroup2 cgroup2 rw\n");
	CHECK(cgroup_find_mount(path, &mnt) == 0);
	CHECK_STR(mnt, "/sys/fs/my cgroup");
	free(mnt);

	/* A line without its newline at the end of the file. */
	path = temp_file("35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw");
	CHECK(cgroup_find_mount(path, &mnt) == 0);
	CHECK_STR(mnt, "/sys/fs/cgroup");
	free(mnt);

	/* "cgroup2" as a mount point or source is not the fstype. */
	path = temp_file("31 23 0:28 / /cgroup2 rw - tmpfs cgroup2 rw\n"
			 "32 31 0:29 / /x rw cgroup2 - cgroup cgroup rw\n");
	CHECK(cgroup_find_mount(path, &mnt) == -ENOENT);
	unlink(path);
	CHECK(cgroup_find_mount(path, &mnt) == -ENOENT);
}

static void test_path_to_id(void)
{
	char path[PATH_MAX * 2];
	uint64_t id = 0;

	CHECK(cgroup_path_to_id(root, "a/b", &id) == 0 && id == ino_of("a/b"));
	CHECK(cgroup_path_to_id(root, "a/b/", &id) == 0 && id == ino_of("a/b"));
	CHECK(cgroup_path_to_id(root, "a//b", &id) == 0 && id == ino_of("a/b"));
	CHECK(cgroup_path_to_id(root, "/a/b", &id) == 0 && id == ino_of("a/b"));
	CHECK(cgroup_path_to_id(root, "a/b/../../c", &id) == 0 && id == ino_of("c"));
	CHECK(cgroup_path_to_id(root, ".", &id) == 0 && id == ino_of("."));
	CHECK(cgroup_path_to_id(root, "/", &id) == 0 && id == ino_of("."));
	snprintf(path, sizeof(path), "%s/a", root);
	CHECK(cgroup_path_to_id(root, path, &id) == 0 && id == ino_of("a"));
	CHECK(cgroup_path_to_id(root, root, &id) == 0 && id == ino_of("."));
	snprintf(path, sizeof(path), "%s/", root);	/* root given with a '/' */
	CHECK(cgroup_path_to_id(path, "c", &id) == 0 && id == ino_of("c"));

	CHECK(cgroup_path_to_id(root, "nope", &id) == -ENOENT);
	CHECK(cgroup_path_to_id(root, "a/nope", &id) == -ENOENT);
	CHECK(cgroup_path_to_id(root, "a/file", &id) == -ENOTDIR);
	CHECK(cgroup_path_to_id(root, "..", &id) == -EXDEV);
	CHECK(cgroup_path_to_id(root, "a/../..", &id) == -EXDEV);
	CHECK(cgroup_path_to_id(root, "out", &id) == -EXDEV);	/* symlink to / */
	snprintf(path, sizeof(path), "%s/nonexistent-root", root);
	CHECK(cgroup_path_to_id(path, "a", &id) == -ENOENT);
}

static void test_ids_to_paths(void)
{
	uint64_t ids[] = {
		ino_of("a/b"), ino_of("."), 1, ino_of("c"), ino_of("a/b"),
		ino_of("with=equal"),
	};
	char *paths[6];
	size_t i;

	CHECK(cgroup_ids_to_paths(root, ids, 6, paths) == 0);
	CHECK_STR(paths[0], "a/b");
	CHECK_STR(paths[1], "/");
	CHECK(paths[2] == NULL);	/* no such cgroup */
	CHECK_STR(paths[3], "c");
	CHECK_STR(paths[4], "a/b");
	CHECK_STR(paths[5], "with=equal");
	for (i = 0; i < 6; i++)
		free(paths[i]);

	CHECK(cgroup_ids_to_paths(root, ids, 0, paths) == 0);
	CHECK(cgroup_ids_to_paths("/nonexistent/cgroup", ids, 1, paths) == -ENOENT);
	CHECK(paths[0] == NULL);
}

/* What iobandctl stat does: table ids back to the paths they came from. */
static void test_cgroup_round_trip(void)
{
	const char *const rels[] = { "a", "a/b", "c" };
	uint64_t ids[3];
	char *paths[3];
	size_t i;

	for (i = 0; i < 3; i++)
		CHECK(cgroup_path_to_id(root, rels[i], &ids[i]) == 0);
	CHECK(cgroup_ids_to_paths(root, ids, 3, paths) == 0);
	for (i = 0; i < 3; i++) {
		CHECK_STR(paths[i], rels[i]);
		free(paths[i]);
	}
}

/*
 * Range policies: range-bw (<min>:<max>) and weight-range
 * (<weight>:<min>:<max>), KB/s, max 0 no limit
 */

static void test_parse_spec(void)
{
	struct ioband_group_spec g;
	char buf[64];

	CHECK(ioband_parse_spec(IOBAND_SPEC_WEIGHT, "200", &g) == 0 &&
	      g.weight == 200 && g.min_kbps == 0 && g.max_kbps == 0);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "10:20", &g) == 0 &&
	      g.weight == 100 && g.min_kbps == 10 && g.max_kbps == 20);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "500:0", &g) == 0 &&
	      g.min_kbps == 500 && g.max_kbps == 0);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "4294967295:4294967295", &g) == 0);
	CHECK(ioband_parse_spec(IOBAND_SPEC_WEIGHT_RANGE, "3:1:2", &g) == 0 &&
	      g.weight == 3 && g.min_kbps == 1 && g.max_kbps == 2);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "20:10", &g) == -ERANGE);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "4294967296:0", &g) == -ERANGE);
	CHECK(ioband_parse_spec(IOBAND_SPEC_WEIGHT_RANGE, "0:1:2", &g) == -ERANGE);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "10", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "10:", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, ":10", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "1:2:3", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_WEIGHT_RANGE, "1:2", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_WEIGHT, "1:2", &g) == -EINVAL);
	CHECK(ioband_parse_spec(IOBAND_SPEC_RANGE, "-1:2", &g) == -EINVAL);
	g.weight = 7;
	g.min_kbps = 8;
	g.max_kbps = 0;
	CHECK(ioband_format_spec(IOBAND_SPEC_WEIGHT, &g, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "7");
	CHECK(ioband_format_spec(IOBAND_SPEC_RANGE, &g, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "8:0");
	CHECK(ioband_format_spec(IOBAND_SPEC_WEIGHT_RANGE, &g, buf, sizeof(buf)) == 0);
	CHECK_STR(buf, "7:8:0");
	CHECK(ioband_format_spec(IOBAND_SPEC_WEIGHT_RANGE, &g, buf, 4) == -ENOSPC);
	CHECK(ioband_spec_of_policy("weight") == IOBAND_SPEC_WEIGHT);
	CHECK(ioband_spec_of_policy("weight-iosize") == IOBAND_SPEC_WEIGHT);
	CHECK(ioband_spec_of_policy("range-bw") == IOBAND_SPEC_RANGE);
	CHECK(ioband_spec_of_policy("weight-range") == IOBAND_SPEC_WEIGHT_RANGE);
	CHECK(ioband_range_policy("range-bw") && ioband_range_policy("weight-range"));
	CHECK(!ioband_range_policy("weight") && !ioband_range_policy("weight-iosize"));
}

static void test_split_spec_arg(void)
{
	struct ioband_group_spec g;
	char *key = NULL;

	CHECK(ioband_split_spec_arg(IOBAND_SPEC_RANGE, "a/b=1:2", &key, &g) == 0);
	CHECK_STR(key, "a/b");
	CHECK(g.min_kbps == 1 && g.max_kbps == 2);
	free(key);
	CHECK(ioband_split_spec_arg(IOBAND_SPEC_WEIGHT_RANGE, "x=y=5:1:0", &key, &g) == 0);
	CHECK_STR(key, "x=y");
	free(key);
	CHECK(ioband_split_spec_arg(IOBAND_SPEC_RANGE, "a=5", &key, &g) == -ERANGE);
	CHECK(ioband_split_spec_arg(IOBAND_SPEC_RANGE, "a", &key, &g) == -EINVAL);
	CHECK(ioband_split_spec_arg(IOBAND_SPEC_RANGE, "=1:2", &key, &g) == -EINVAL);
	CHECK(ioband_split_spec_arg(IOBAND_SPEC_RANGE, "a=", &key, &g) == -EINVAL);
}

static void test_range_tables(void)
{
	static const char *const good[] = {
		"8:1 d 0 0 cgroup range-bw 0 :0:0",
		"8:1 d 0 0 cgroup range-bw 0 :10:0 12:100:200 13:0:0",
		"8:1 d 0 0 uid weight-range 0 :100:0:0 12:300:1024:0 13:1:0:4294967295",
	};
	/* weight-range's full form, which every policy takes (the kernel's) */
	static const char *const full[] = {
		"8:1 d 0 0 cgroup range-bw 0 :1:2:3",
		"8:1 d 0 0 cgroup range-bw 0 :0:0 12:5:6:7",
		"8:1 d 0 0 cgroup weight 0 :100:0:0",
	};
	static const char *const bad[] = {
		"8:1 d 0 0 cgroup range-bw 0 :100",		/* a weight */
		"8:1 d 0 0 cgroup range-bw 0 :20:10",		/* min > max */
		"8:1 d 0 0 cgroup range-bw 0 :0:0 12:5",
		"8:1 d 0 0 cgroup range-bw 0 :0:0 12:6:5",
		"8:1 d 0 0 cgroup range-bw 0 :0:0 12:1:2 12:1:2",
		"8:1 d 0 0 cgroup range-bw 0 :0:0 12:4294967296:0",
		"8:1 d 0 0 cgroup weight-range 0 :100:0",
		"8:1 d 0 0 cgroup weight-range 0 :0:0:0",
		"8:1 d 0 0 cgroup weight-range 0 :1:0:0 12:1:2",
		"8:1 d 0 0 cgroup weight-range 0 :1:0:0 12:32768:0:0",
		"8:1 d 0 0 cgroup weight-range 0 :1:0:0 12:1::0",
	};
	struct ioband_table_args t, back;
	char *params, *again;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		params = again = NULL;
		CHECK(ioband_parse_params(good[i], &t) == 0);
		if (failed)
			return;
		CHECK(ioband_format_params(&t, &params) == 0);
		CHECK_STR(params, good[i]);
		CHECK(params && ioband_parse_params(params, &back) == 0);
		if (!failed) {
			CHECK(ioband_format_params(&back, &again) == 0);
			CHECK_STR(again, params);
			ioband_table_free(&back);
		}
		free(params);
		free(again);
		ioband_table_free(&t);
	}
	CHECK(ioband_parse_params(good[1], &t) == 0);
	if (!failed) {
		CHECK(t.default_min_kbps == 10 && t.default_max_kbps == 0);
		CHECK(t.default_weight == 100);
		CHECK(t.nr_weights == 2 && t.weights[0].id == 12 &&
		      t.weights[0].min_kbps == 100 && t.weights[0].max_kbps == 200 &&
		      t.weights[0].weight == 100);
		ioband_table_free(&t);
	}
	CHECK(ioband_parse_params(good[2], &t) == 0);
	if (!failed) {
		CHECK(t.nr_weights == 2 && t.weights[0].weight == 300 &&
		      t.weights[0].min_kbps == 1024 && t.weights[1].max_kbps == 4294967295u);
		ioband_table_free(&t);
	}
	for (i = 0; i < sizeof(full) / sizeof(*full); i++) {
		CHECK(ioband_parse_params(full[i], &t) == 0);
		if (!failed)
			ioband_table_free(&t);
	}
	/* The full form's group is kept, weight and range (apply needs it). */
	CHECK(ioband_parse_params(full[1], &t) == 0);
	if (!failed) {
		CHECK(t.nr_weights == 1 && t.weights[0].id == 12 &&
		      t.weights[0].weight == 5 && t.weights[0].min_kbps == 6 &&
		      t.weights[0].max_kbps == 7);
		ioband_table_free(&t);
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (ioband_parse_params(bad[i], &t) != -EINVAL) {
			fprintf(stderr, "    accepted: \"%s\"\n", bad[i]);
			failed = 1;
		}
	}
	/* Building: a range policy writes ranges, min > max is refused. */
	memset(&t, 0, sizeof(t));
	t.device = "8:1";
	strcpy(t.domain, "d");
	strcpy(t.group_type, "cgroup");
	strcpy(t.policy, "weight-range");
	t.default_weight = 50;
	t.default_max_kbps = 100;
	{
		struct ioband_group_spec g = { 7, 1, 2 };

		CHECK(ioband_table_add_group(&t, 9, &g) == 0);
		g.min_kbps = 3;
		CHECK(ioband_table_add_group(&t, 10, &g) == -ERANGE);
		CHECK(ioband_table_add_group(&t, 9, &(struct ioband_group_spec){ 1, 0, 0 }) == -EEXIST);
	}
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK_STR(params, "8:1 d 0 0 cgroup weight-range 0 :50:0:100 9:7:1:2");
	free(params);
	strcpy(t.policy, "range-bw");
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK_STR(params, "8:1 d 0 0 cgroup range-bw 0 :0:100 9:1:2");
	free(params);
	strcpy(t.policy, "weight");
	CHECK(ioband_format_params(&t, &params) == 0);
	CHECK_STR(params, "8:1 d 0 0 cgroup weight 0 :50 9:7");
	free(params);
	/* min > max: refused where the table holds a range. */
	t.default_min_kbps = 200;
	strcpy(t.policy, "weight-range");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	strcpy(t.policy, "range-bw");
	CHECK(ioband_format_params(&t, &params) == -EINVAL);
	free(t.weights);
}

static void test_stats_ranges(void)
{
	static const char text[] =
		"domain=d policy=range-bw token_base=1 io_throttle=4 io_limit=8 "
		"carryover=2 in_flight=0 queued=0 vtime=0 elapsed_ns=1000000000\n"
		"group=-1 weight=100 reads=1 read_sectors=8 writes=0 write_sectors=0 "
		"delayed_reads=0 delayed_writes=0 queued=0 in_flight=0 wait_ns=0 "
		"wait_max_ns=0 service_ns=0 finish_tag=0 min_kbps=10 max_kbps=0\n"
		"group=7 weight=100 reads=1 read_sectors=8 writes=0 write_sectors=0 "
		"delayed_reads=0 delayed_writes=0 queued=0 in_flight=0 wait_ns=0 "
		"wait_max_ns=0 service_ns=0 finish_tag=0 min_kbps=100 max_kbps=2048\n";
	struct stat_report r = { .columns = { COL_GROUP, COL_WEIGHT, COL_IOPS },
				 .ncolumns = 3 };
	struct ioband_rates rates[2];
	struct stat_row rows[2];
	struct ioband_stats st;
	char *out = NULL;
	size_t i;

	CHECK(ioband_parse_stats(text, &st) == 0);
	if (failed)
		return;
	CHECK(st.has_elapsed && st.elapsed_ns == 1000000000);
	CHECK(st.groups[0].has_range && st.groups[0].min_kbps == 10 &&
	      st.groups[0].max_kbps == 0);
	CHECK(st.groups[1].has_range && st.groups[1].min_kbps == 100 &&
	      st.groups[1].max_kbps == 2048);
	/* A repeated optional key is malformed, as any key. */
	{
		struct ioband_stats bad;
		char *dup = malloc(sizeof(text) + 16);

		strcpy(dup, text);
		strcpy(strstr(dup, "max_kbps=2048"), "max_kbps=1 max_kbps=2\n");
		CHECK(ioband_parse_stats(dup, &bad) == -EINVAL);
		free(dup);
	}

	ioband_stats_rates(NULL, &st, st.elapsed_ns, rates);
	stat_report_insert_after(&r, COL_WEIGHT, COL_MIN);
	stat_report_insert_after(&r, COL_MIN, COL_MAX);
	stat_report_insert_after(&r, COL_MIN, COL_MAX);	/* once */
	CHECK(r.ncolumns == 5 && r.columns[2] == COL_MIN && r.columns[3] == COL_MAX &&
	      r.columns[4] == COL_IOPS);
	r.opts.raw = 1;
	for (i = 0; i < 2; i++) {
		rows[i].device = "d";
		rows[i].group = i ? "a/b" : NULL;
		rows[i].g = &st.groups[i];
		rows[i].rates = &rates[i];
		rows[i].has_sched = 1;
	}
	CHECK(stat_report_init(&r) == 0);
	for (i = 0; i < 2; i++)
		CHECK(stat_report_add(&r, &rows[i]) == 0);
	CHECK(scols_print_table_to_string(r.tb, &out) == 0);
	CHECK_STR(out, "GROUP WEIGHT MIN MAX IOPS\n<default> 100 10 - 1.0\na/b 100 100 2048 1.0");
	free(out);
	stat_report_free(&r);
	r.opts.raw = 0;
	r.opts.json = 1;
	CHECK(stat_report_init(&r) == 0);
	for (i = 0; i < 2; i++)
		CHECK(stat_report_add(&r, &rows[i]) == 0);
	out = NULL;
	CHECK(scols_print_table_to_string(r.tb, &out) == 0);
	CHECK(out && json_valid(out, NULL));
	CHECK(out && strstr(out, "\"max\": null"));
	CHECK(out && strstr(out, "\"max\": 2048"));
	free(out);
	stat_report_free(&r);
	ioband_stats_free(&st);
}

/*
 * The iobandtab file
 */

static void test_tab_line(void)
{
	struct iobandtab_entry e;
	char err[256];

	CHECK(iobandtab_parse_line("", 1, &e, err, sizeof(err)) == 0);
	CHECK(iobandtab_parse_line("   # comment", 1, &e, err, sizeof(err)) == 0);
	CHECK(iobandtab_parse_line("a /dev/sdb -", 3, &e, err, sizeof(err)) == 1);
	if (!failed) {
		CHECK(e.line == 3);
		CHECK_STR(e.name, "a");
		CHECK_STR(e.device, "/dev/sdb");
		CHECK_STR(e.domain, "a");
		CHECK_STR(e.group_type, "cgroup");
		CHECK_STR(e.policy, "weight");
		CHECK(e.default_spec.weight == 100 && !e.has_default);
		CHECK(e.nr_groups == 0);
		iobandtab_entry_free(&e);
	}
	CHECK(iobandtab_parse_line("\tx\\040y UUID=12-34 domain=d1,type=uid,"
				   "policy=weight-range,default=5:1:0,io_limit=8,"
				   "io_throttle=4,token_base=99,carryover=0 "
				   "alice=300:0:1024 1000=1:2:3  # the rest\r",
				   9, &e, err, sizeof(err)) == 1);
	if (!failed) {
		CHECK_STR(e.name, "x y");
		CHECK_STR(e.device, "UUID=12-34");
		CHECK_STR(e.domain, "d1");
		CHECK_STR(e.group_type, "uid");
		CHECK_STR(e.policy, "weight-range");
		CHECK(e.has_default && e.default_spec.weight == 5 &&
		      e.default_spec.min_kbps == 1);
		CHECK(e.io_limit == 8 && e.io_throttle == 4 && e.token_base == 99);
		CHECK(e.has_carryover && e.carryover == 0);
		CHECK(e.nr_groups == 2);
		CHECK(e.nr_groups == 2 && !strcmp(e.groups[0].key, "alice") &&
		      e.groups[0].spec.weight == 300 && e.groups[0].spec.max_kbps == 1024);
		iobandtab_entry_free(&e);
	}
	/* A group named default is the default group; ./default a cgroup. */
	CHECK(iobandtab_parse_line("a 8:1 policy=range-bw default=1:2 ./default=3:4 "
				   "a\\\\b=0:0", 1, &e, err, sizeof(err)) == 1);
	if (!failed) {
		CHECK(e.has_default && e.default_spec.min_kbps == 1);
		CHECK(e.nr_groups == 2 && !strcmp(e.groups[0].key, "./default"));
		CHECK(e.nr_groups == 2 && !strcmp(e.groups[1].key, "a\\b"));
		iobandtab_entry_free(&e);
	}
}

static const char *const tab_bad_lines[] = {
	"a",						/* fields */
	"a /dev/sdb",
	"a/b /dev/sdb -",				/* name */
	"a /dev/sdb policy",				/* option */
	"a /dev/sdb policy=bogus",
	"a /dev/sdb io_limit=65537",			/* the kernel's ranges */
	"a /dev/sdb token_base=1073741825",
	"a /dev/sdb carryover=1025",
	"a /dev/sdb type=node",
	"a /dev/sdb color=red",
	"a /dev/sdb domain=0123456789012345678901234567890123",
	"a /dev/sdb domain=",
	"a /dev/sdb io_limit=-1",
	"a /dev/sdb io_throttle=x",
	"a /dev/sdb token_base=4294967296",
	"a /dev/sdb carryover=",
	"a /dev/sdb policy=weight,policy=weight",	/* twice */
	"a /dev/sdb default=0",				/* specs */
	"a /dev/sdb policy=range-bw,default=100",
	"a /dev/sdb policy=weight-range,default=1:2",
	"a /dev/sdb - g",
	"a /dev/sdb - g=",
	"a /dev/sdb - =5",
	"a /dev/sdb - g=32768",
	"a /dev/sdb policy=range-bw g=5",
	"a /dev/sdb policy=range-bw g=9:5",
	"a /dev/sdb policy=weight-range g=1:5",
	"a /dev/sdb - g=1 g=2",				/* a group twice */
	"a /dev/sdb default=5 default=6",		/* default twice */
	"a /dev/sdb type=none g=1",			/* no groups */
	"a\\x /dev/sdb -",				/* escapes */
	"a /dev/\\400 -",
	"a /dev/sdb - g\\0=1",
	"a /dev/sdb - \\000=1",
	"0123456789012345678901234567890123 /dev/sdb -",	/* long domain */
	"a /dev/sdb - g=1\x01",				/* a control char */
	"a /dev/sdb weights_from=",			/* weights_from */
	"a /dev/sdb weights_from=io",
	"a /dev/sdb weights_from=cgroup:",
	"a /dev/sdb weights_from=cgroupx",
	"a /dev/sdb type=uid,weights_from=cgroup",
	"a /dev/sdb weights_from=cgroup g=5",
};

struct tab_errors {
	unsigned int lines[64];
	size_t n;
};

static void record_error(void *ctx, unsigned int line, const char *msg)
{
	struct tab_errors *e = ctx;

	CHECK(msg && *msg);
	if (e->n < 64)
		e->lines[e->n++] = line;
}

/* Each bad line is reported with its number; the good lines still count. */
static void test_tab_malformed(void)
{
	struct iobandtab_entry *entries, e;
	struct tab_errors errs = { .n = 0 };
	size_t nbad = sizeof(tab_bad_lines) / sizeof(*tab_bad_lines), n, i;
	char *text = NULL, err[256];
	size_t size;
	FILE *f = open_memstream(&text, &size);
	int rc;

	/* Alone, each is an error. */
	for (i = 0; i < nbad; i++) {
		err[0] = '\0';
		rc = iobandtab_parse_line(tab_bad_lines[i], 1, &e, err, sizeof(err));
		if (rc != -EINVAL || !*err) {
			fprintf(stderr, "    accepted: \"%s\"\n", tab_bad_lines[i]);
			failed = 1;
			if (rc == 1)
				iobandtab_entry_free(&e);
		}
	}
	/* In a file: good line i*2+1, bad line i*2+2, then a duplicate. */
	for (i = 0; i < nbad; i++)
		fprintf(f, "good%zu 8:%zu -\n%s\n", i, i, tab_bad_lines[i]);
	fprintf(f, "# a comment\n\ngood0 8:1 -");	/* no final newline */
	fclose(f);
	rc = iobandtab_parse(text, &entries, &n, record_error, &errs);
	CHECK(rc == (int)nbad + 1);
	CHECK(n == nbad);
	CHECK(errs.n == nbad + 1);
	for (i = 0; i < nbad && i < errs.n; i++)
		if (errs.lines[i] != i * 2 + 2) {
			fprintf(stderr, "    \"%s\": reported on line %u, not %zu\n",
				tab_bad_lines[i], errs.lines[i], i * 2 + 2);
			failed = 1;
		}
	CHECK(errs.n == nbad + 1 && errs.lines[nbad] == nbad * 2 + 3);
	for (i = 0; i < n; i++)
		CHECK(entries[i].line == i * 2 + 1);
	iobandtab_free(entries, n);
	free(text);
}

/* What save writes, apply reads back the same. */
static void test_tab_round_trip(void)
{
	static const char *const lines[] = {
		"a 8:1 -",
		"b UUID=x policy=range-bw,default=1:0 c/d=10:20 with\\040space=0:0",
		"c /dev/sdb type=uid,domain=dd,policy=weight-range,default=1:2:3,"
		"io_limit=9,io_throttle=3,token_base=7,carryover=4 0=5:6:7 ./default=1:0:0",
		"d\\043x /dev/a\\\\b type=none,policy=weight-iosize,default=32767",
		"e 8:1 weights_from=cgroup:system.slice/a\\054b\\040c",
		"f 8:1 policy=range-bw,weights_from=cgroup",
	};
	struct iobandtab_entry e, back;
	char err[256], *text;
	size_t i, j, size;
	FILE *f;

	for (i = 0; i < sizeof(lines) / sizeof(*lines); i++) {
		CHECK(iobandtab_parse_line(lines[i], 1, &e, err, sizeof(err)) == 1);
		if (failed) {
			fprintf(stderr, "    %s: %s\n", lines[i], err);
			return;
		}
		text = NULL;
		f = open_memstream(&text, &size);
		CHECK(iobandtab_format_entry(&e, f) == 0);
		fclose(f);
		CHECK(iobandtab_parse_line(text, 1, &back, err, sizeof(err)) == 1);
		if (!failed) {
			CHECK_STR(back.name, e.name);
			CHECK_STR(back.device, e.device);
			CHECK_STR(back.domain, e.domain);
			CHECK_STR(back.group_type, e.group_type);
			CHECK_STR(back.policy, e.policy);
			CHECK(!memcmp(&back.default_spec, &e.default_spec,
				      sizeof(e.default_spec)));
			CHECK(back.io_limit == e.io_limit && back.io_throttle == e.io_throttle &&
			      back.token_base == e.token_base &&
			      back.has_carryover == e.has_carryover &&
			      back.carryover == e.carryover);
			CHECK(!back.weights_from == !e.weights_from);
			if (e.weights_from)
				CHECK_STR(back.weights_from, e.weights_from);
			CHECK(back.nr_groups == e.nr_groups);
			for (j = 0; j < e.nr_groups && j < back.nr_groups; j++) {
				CHECK_STR(back.groups[j].key, e.groups[j].key);
				CHECK(!memcmp(&back.groups[j].spec, &e.groups[j].spec,
					      sizeof(e.groups[j].spec)));
			}
			iobandtab_entry_free(&back);
		}
		free(text);
		iobandtab_entry_free(&e);
	}
}

/* The example file of packaging/ parses without an error, commented or not. */
static void test_tab_example(void)
{
	static const char *const files[] = {
		"../packaging/iobandtab.example",
	};
	struct iobandtab_entry *entries;
	struct tab_errors errs = { .n = 0 };
	char buf[65536];
	size_t i, len, n;
	FILE *f;

	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		f = fopen(files[i], "r");
		if (!f) {
			perror(files[i]);
			failed = 1;
			continue;
		}
		len = fread(buf, 1, sizeof(buf) - 1, f);
		buf[len] = '\0';
		fclose(f);
		CHECK(iobandtab_parse(buf, &entries, &n, record_error, &errs) == 0);
		iobandtab_free(entries, n);
		/* Uncommented, the example's lines parse too. */
		if (i == 0) {
			char *p, *q;

			for (p = q = buf; *p; p++) {
				if (*p == '#' && p[1] != ' ' && p[1] != '\n' &&
				    (p == buf || p[-1] == '\n'))
					continue;
				*q++ = *p;
			}
			*q = '\0';
			CHECK(iobandtab_parse(buf, &entries, &n, record_error, &errs) == 0);
			CHECK(n == 6);
			iobandtab_free(entries, n);
		}
	}
	CHECK(errs.n == 0);
}

/*
 * Options: every short option of every command, listed; a letter means
 * one long option in all of them (util-linux: -n --noheadings, -J --json,
 * -o --output, -r --raw, -b --bytes). A deprecated letter is no option of
 * its command and stands for one that is.
 */
static const char *long_name_of(const struct cmd_options *o, int val)
{
	const struct option *lo;

	for (lo = o->longopts; lo->name; lo++)
		if (lo->val == val)
			return lo->name;
	return NULL;
}

static void test_option_letters(void)
{
	const char *meaning[128] = { NULL }, *owner[128] = { NULL };
	const struct deprecated_option *d;
	char buf[64];
	size_t i;

	for (i = 0; i < nr_cmd_options; i++) {
		const struct cmd_options *o = &cmd_options[i];
		const char *p;

		CHECK(cmd_optstring(o, buf, sizeof(buf)) == 0);
		for (p = o->shortopts; *p; p++) {
			const char *name;
			int c = (unsigned char)*p;

			if (c == ':' || c == '+' || c >= 128)
				continue;
			name = long_name_of(o, c);
			if (!name) {
				fprintf(stderr, "    %s -%c has no long name\n",
					o->cmd, c);
				failed = 1;
				continue;
			}
			if (verbose_options)
				printf("    %-9s -%c --%s\n", o->cmd, c, name);
			if (!meaning[c]) {
				meaning[c] = name;
				owner[c] = o->cmd;
			} else if (strcmp(meaning[c], name)) {
				fprintf(stderr, "    -%c means --%s in %s and --%s "
					"in %s\n", c, meaning[c], owner[c], name,
					o->cmd);
				failed = 1;
			}
		}
		for (d = o->deprecated; d->letter; d++) {
			CHECK(!strchr(o->shortopts, d->letter));
			CHECK(long_name_of(o, d->val) != NULL);
			CHECK(d->use && *d->use);
		}
	}
	/* The util-linux letters. */
	CHECK_STR(meaning['n'], "noheadings");
	CHECK_STR(meaning['J'], "json");
	CHECK_STR(meaning['o'], "output");
	CHECK_STR(meaning['r'], "raw");
	CHECK_STR(meaning['b'], "bytes");
	CHECK_STR(meaning['h'], "help");
}

/* io.weight and io.bfq.weight as the kernel prints them. */
static void test_cgroup_weight(void)
{
	static const char *const both[] = { "253:3", "8:16" };
	static const char *const below[] = { "8:16" };

	CHECK(cgroup_parse_weight("default 100\n", both, 2) == 100);
	CHECK(cgroup_parse_weight("default 250\n8:16 700\n", NULL, 0) == 250);
	CHECK(cgroup_parse_weight("default 250\n8:16 700\n", below, 1) == 700);
	CHECK(cgroup_parse_weight("default 250\n8:16 700\n253:3 40\n", both, 2) == 40);
	CHECK(cgroup_parse_weight("default 250\n253:3 40\n8:16 700\n", both, 2) == 40);
	CHECK(cgroup_parse_weight("default 250\n8:160 700\n", below, 1) == 250);
	CHECK(cgroup_parse_weight("default 250", below, 1) == 250);
	CHECK(cgroup_parse_weight("8:16 700\n", below, 1) == 700);
	CHECK(cgroup_parse_weight("", both, 2) == 0);
	CHECK(cgroup_parse_weight("default x\ndefault 0\ndefault 5 6\n", both, 2) == 0);
	CHECK(cgroup_pick_weight(300, 0) == 300);
	CHECK(cgroup_pick_weight(300, 500) == 300);
	CHECK(cgroup_pick_weight(100, 500) == 500);	/* runc with BFQ */
	CHECK(cgroup_pick_weight(100, 0) == 100);
	CHECK(cgroup_pick_weight(0, 40) == 40);
	CHECK(cgroup_pick_weight(0, 0) == 0);
}

static void test_weights_from(void)
{
	const char *sub = NULL;

	CHECK(iobandtab_weights_from("cgroup", &sub) == 0);
	CHECK_STR(sub, "/");
	CHECK(iobandtab_weights_from("cgroup:system.slice", &sub) == 0);
	CHECK_STR(sub, "system.slice");
	CHECK(iobandtab_weights_from("cgroup:", &sub) == -EINVAL);
	CHECK(iobandtab_weights_from("cgroups", &sub) == -EINVAL);
	CHECK(iobandtab_weights_from("io.weight", &sub) == -EINVAL);
}

#define TEST(fn) { &#fn[5], fn }	/* drop "test_" */

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	TEST(test_parse_weight),
	TEST(test_split_weight_arg),
	TEST(test_size_to_human),
	TEST(test_format_default_only),
	TEST(test_format_cgroup_weights),
	TEST(test_add_weight_checks),
	TEST(test_format_rejects),
	TEST(test_valid_domain),
	TEST(test_parse_table_kernel_line),
	TEST(test_parse_table_round_trip),
	TEST(test_parse_table_malformed),
	TEST(test_parse_status_example),
	TEST(test_parse_status_default_only),
	TEST(test_parse_status_many_groups),
	TEST(test_parse_status_malformed),
	TEST(test_parse_status_every_prefix),
	TEST(test_parse_stats_example),
	TEST(test_parse_stats_forward_compatible),
	TEST(test_parse_stats_fields),
	TEST(test_parse_stats_malformed),
	TEST(test_parse_stats_every_prefix),
	TEST(test_stats_from_status),
	TEST(test_rates_since_start),
	TEST(test_rates_untimed_ios),
	TEST(test_rates_interval),
	TEST(test_json_check),
	TEST(test_metrics),
	TEST(test_report_human),
	TEST(test_sort_throughput),
	TEST(test_group_keys),
	TEST(test_units),
	TEST(test_find_mount),
	TEST(test_path_to_id),
	TEST(test_ids_to_paths),
	TEST(test_cgroup_round_trip),
	TEST(test_parse_spec),
	TEST(test_split_spec_arg),
	TEST(test_range_tables),
	TEST(test_stats_ranges),
	TEST(test_tab_line),
	TEST(test_tab_malformed),
	TEST(test_tab_round_trip),
	TEST(test_tab_example),
	TEST(test_cgroup_weight),
	TEST(test_weights_from),
	TEST(test_option_letters),
	TEST(test_json_schema_stats),
	TEST(test_json_schema_list_table),
	TEST(test_metrics_attributed),
};

/*
 * test-tools --print-metrics prometheus|openmetrics|json: the example's
 * output, for a real parser to read (tests/unit/tools/parse-metrics).
 */
int main(int argc, char **argv)
{
	size_t i, passed = 0, nfailed = 0;

	if (argc == 3 && !strcmp(argv[1], "--print-metrics")) {
		int format = metrics_parse_format(argv[2]);
		char *out = !strcmp(argv[2], "json") ? example_stats_json(0) :
			    format >= 0 ? example_metrics(format) : NULL;

		if (!out)
			return EXIT_FAILURE;
		fputs(out, stdout);
		free(out);
		return EXIT_SUCCESS;
	}

	if (argc == 3 && !strcmp(argv[1], "--print-json")) {
		char *out = example_json(argv[2]);

		if (!out)
			return EXIT_FAILURE;
		fputs(out, stdout);
		free(out);
		return EXIT_SUCCESS;
	}
	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		verbose_options = 1;
		failed = 0;
		test_option_letters();
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;
	}

	make_tree();
	for (i = 0; i < sizeof(tests) / sizeof(*tests); i++) {
		failed = 0;
		tests[i].fn();
		printf("%s %s\n", failed ? "FAIL" : "PASS", tests[i].name);
		fflush(stdout);
		if (failed)
			nfailed++;
		else
			passed++;
	}
	remove_tree();
	printf("%zu passed, %zu failed\n", passed, nfailed);
	return nfailed ? EXIT_FAILURE : EXIT_SUCCESS;
}
