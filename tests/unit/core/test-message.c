// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the text the target takes (ioband-core.c): the messages, the
 * table's arguments and the group arguments, with the exact error each
 * wrong one gets in the kernel log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-core.h"
#include "../test.h"

#define MAX_ARGS	16

/* @line split at spaces, as dm_split_args() does, in a static buffer. */
struct args {
	char text[512];
	char *argv[MAX_ARGS];
	unsigned int argc;
};

static struct args *split(const char *line)
{
	static struct args a;
	char *p;

	memset(&a, 0, sizeof(a));
	snprintf(a.text, sizeof(a.text), "%s", line);
	for (p = strtok(a.text, " "); p && a.argc < MAX_ARGS;
	     p = strtok(NULL, " "))
		a.argv[a.argc++] = p;
	return &a;
}

static char error[IOBAND_ERROR_MAX];

/* Parses the message @line: 0 or -1, error in error[]. */
static int parse(const char *line, struct ioband_message *msg)
{
	struct args *a = split(line);

	return ioband_parse_message(msg, a->argc, a->argv, error,
				    sizeof(error));
}

/* @line is refused with exactly @expected. */
static int refused(const char *line, const char *expected)
{
	struct ioband_message msg;

	if (parse(line, &msg) != -1)
		return 0;
	if (strcmp(error, expected)) {
		fprintf(stderr, "  '%s':\n    got  '%s'\n    want '%s'\n",
			line, error, expected);
		return 0;
	}
	return 1;
}

#define KNOB_RANGE "out of range (io_throttle <= io_limit <= 65536, io_limit 0 for no cap, token <= 1073741824, carryover <= 1024)"
#define ALL_MESSAGES "want attach, detach, weight, range-bw, token, carryover, io_limit, io_throttle, policy or type with one argument, or reset or stats alone"

TEST(message_attach_takes_an_id_and_maybe_a_weight)
{
	struct ioband_message m;

	CHECK(parse("attach 4021", &m) == 0 && error[0] == '\0');
	CHECK(m.kind == IOBAND_MSG_ATTACH && m.group.id == 4021);
	CHECK(m.group.spec == IOBAND_SPEC_ID && !m.group.is_default);
	CHECK(!strcmp(m.arg, "4021"));
	CHECK(parse("attach 4021:200", &m) == 0);
	CHECK(m.group.id == 4021 && m.group.spec == IOBAND_SPEC_WEIGHT);
	CHECK(m.group.weight == 200);
	CHECK(parse("ATTACH 18446744073709551615:32767", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_ATTACH && m.group.id == ~0ULL);
}

TEST(message_attach_refusals)
{
	struct ioband_message m;

	CHECK(refused("attach x1", "attach 'x1': want <id> or <id>:<weight>, weight 1..32767"));
	CHECK(refused("attach 5:0", "attach '5:0': want <id> or <id>:<weight>, weight 1..32767"));
	CHECK(refused("attach 5:32768", "attach '5:32768': want <id> or <id>:<weight>, weight 1..32767"));
	CHECK(refused("attach :5", "attach ':5': want <id> or <id>:<weight>, weight 1..32767"));
	CHECK(refused("attach 18446744073709551616", "attach '18446744073709551616': want <id> or <id>:<weight>, weight 1..32767"));
	/* The kind is known although the argument is refused. */
	CHECK(parse("attach x1", &m) == -1 && m.kind == IOBAND_MSG_ATTACH);
}

TEST(message_detach)
{
	struct ioband_message m;

	CHECK(parse("detach 4021", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_DETACH && m.group.id == 4021);
	CHECK(m.group.spec == IOBAND_SPEC_ID);
	CHECK(refused("detach x", "detach 'x': want a group id"));
	CHECK(refused("detach -1", "detach '-1': want a group id"));
	CHECK(refused("detach 5:10", "detach '5:10': want a group id"));
}

TEST(message_weight_of_a_group_or_the_default)
{
	struct ioband_message m;

	CHECK(parse("weight 4090:300", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_WEIGHT && m.group.id == 4090);
	CHECK(!m.group.is_default && m.group.weight == 300);
	CHECK(parse("weight 50", &m) == 0);
	CHECK(m.group.is_default && m.group.weight == 50 && m.group.id == 0);
	CHECK(parse("weight :50", &m) == 0);
	CHECK(m.group.is_default && m.group.weight == 50);
	CHECK(refused("weight 0", "weight '0': want [<id>:]<weight>, weight 1..32767"));
	CHECK(refused("weight 4021:40000", "weight '4021:40000': want [<id>:]<weight>, weight 1..32767"));
	CHECK(refused("weight 4021:", "weight '4021:': want [<id>:]<weight>, weight 1..32767"));
	CHECK(refused("weight -1:5", "weight '-1:5': want [<id>:]<weight>, weight 1..32767"));
}

TEST(message_range_bw)
{
	struct ioband_message m;

	CHECK(parse("range-bw 4021:100:2000", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_RANGE_BW && m.group.id == 4021);
	CHECK(m.group.spec == IOBAND_SPEC_RANGE);
	CHECK(m.group.min_kbps == 100 && m.group.max_kbps == 2000);
	CHECK(parse("range-bw -1:0:500", &m) == 0);
	CHECK(m.group.is_default && m.group.max_kbps == 500);
	CHECK(parse("range-bw :0:500", &m) == 0 && m.group.is_default);
	CHECK(parse("range-bw 7:100:0", &m) == 0);	/* max 0: no limit */
	CHECK(parse("range-bw 7:4294967295:0", &m) == 0);
	CHECK(m.group.min_kbps == 4294967295U);
	CHECK(refused("range-bw 4021:100", "range-bw '4021:100': want <id>:<min>:<max> or -1:<min>:<max> (KB/s)"));
	CHECK(refused("range-bw -2:1:2", "range-bw '-2:1:2': want <id>:<min>:<max> or -1:<min>:<max> (KB/s)"));
	CHECK(refused("range-bw 4021:3000:2000", "range-bw 4021:3000:2000: want 0 <= min <= max, or max 0 for no limit"));
	CHECK(refused("range-bw 1:4294967296:0", "range-bw 1:4294967296:0: want 0 <= min <= max, or max 0 for no limit"));
}

TEST(message_knobs)
{
	struct ioband_message m;

	CHECK(parse("token 4096", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_TOKEN && m.value == 4096);
	CHECK(parse("token 1073741824", &m) == 0);
	CHECK(parse("carryover 0", &m) == 0 && m.kind == IOBAND_MSG_CARRYOVER);
	CHECK(parse("carryover 1024", &m) == 0 && m.value == 1024);
	CHECK(parse("io_limit 65536", &m) == 0 && m.kind == IOBAND_MSG_IO_LIMIT);
	CHECK(parse("IO_THROTTLE 6", &m) == 0);
	CHECK(m.kind == IOBAND_MSG_IO_THROTTLE && m.value == 6);
	CHECK(refused("token abc", "token 'abc': want an unsigned number"));
	CHECK(refused("Token 4294967296", "token '4294967296': want an unsigned number"));
	CHECK(refused("io_limit -1", "io_limit '-1': want an unsigned number"));
	CHECK(refused("token 1073741825", "token 1073741825: " KNOB_RANGE));
	CHECK(refused("io_limit 99999999", "io_limit 99999999: " KNOB_RANGE));
	CHECK(refused("io_throttle 65537", "io_throttle 65537: " KNOB_RANGE));
	CHECK(refused("carryover 5000", "carryover 5000: " KNOB_RANGE));
}

TEST(message_policy_and_type)
{
	static const char * const policies[] = {
		"weight", "weight-iosize", "range-bw", "weight-range",
		"weight-time",
	};
	static const char * const types[] = {
		"none", "cgroup", "uid", "user", "gid", "pid", "pgrp",
	};
	struct ioband_message m;
	char line[64];
	unsigned int i;

	for (i = 0; i < 5; i++) {
		snprintf(line, sizeof(line), "policy %s", policies[i]);
		CHECK(parse(line, &m) == 0 && m.kind == IOBAND_MSG_POLICY);
		CHECK(m.value == i && !strcmp(ioband_policy_name(i), policies[i]));
	}
	for (i = 0; i < 7; i++) {
		snprintf(line, sizeof(line), "type %s", types[i]);
		CHECK(parse(line, &m) == 0 && m.kind == IOBAND_MSG_TYPE);
		CHECK(!strcmp(ioband_group_type_name(m.value), types[i]));
	}
	CHECK(parse("type user", &m) == 0);
	CHECK(ioband_group_type_of(m.value) == IOBAND_TYPE_UID);
	CHECK(refused("policy fast", "policy 'fast': unknown, want weight, weight-iosize, range-bw, weight-range or weight-time"));
	CHECK(refused("policy WEIGHT", "policy 'WEIGHT': unknown, want weight, weight-iosize, range-bw, weight-range or weight-time"));
	CHECK(refused("type blkio", "type 'blkio': unknown, want none, cgroup, uid, user, gid, pid or pgrp"));
}

TEST(message_reset_and_stats_take_no_argument)
{
	struct ioband_message m;

	CHECK(parse("reset", &m) == 0 && m.kind == IOBAND_MSG_RESET);
	CHECK(m.arg == NULL);
	CHECK(parse("STATS", &m) == 0 && m.kind == IOBAND_MSG_STATS);
	CHECK(refused("stats 1", "unknown message 'stats'"));
}

TEST(message_names_and_counts)
{
	struct ioband_message m;

	CHECK(refused("frob 1", "unknown message 'frob'"));
	CHECK(refused("frob", "message 'frob' with 0 arguments: " ALL_MESSAGES));
	CHECK(refused("weight 1 2", "message 'weight' with 2 arguments: " ALL_MESSAGES));
	CHECK(refused("attach", "message 'attach' with 0 arguments: " ALL_MESSAGES));
	CHECK(refused("", "message '' with 0 arguments: " ALL_MESSAGES));
	CHECK(parse("frob 1", &m) == -1 && m.kind == IOBAND_MSG_NONE);
	CHECK(parse("weight 1 2", &m) == -1 && m.kind == IOBAND_MSG_NONE);
}

/* @fault on the message @line says exactly @expected. */
static int fault_says(const char *line, enum ioband_message_fault fault,
		      const char *expected)
{
	struct ioband_message m;

	if (parse(line, &m))
		return 0;
	ioband_message_error(&m, fault, error, sizeof(error));
	if (strcmp(error, expected)) {
		fprintf(stderr, "  '%s':\n    got  '%s'\n    want '%s'\n",
			line, error, expected);
		return 0;
	}
	return 1;
}

TEST(message_faults_of_the_glue)
{
	struct ioband_message m;

	CHECK(parse("attach x1", &m) == -1);
	ioband_message_error(&m, IOBAND_FAULT_NO_GROUPS, error, sizeof(error));
	CHECK(!strcmp(error, "attach: group_type none has no groups to attach"));
	CHECK(fault_says("attach 4021", IOBAND_FAULT_ATTACHED, "attach 4021: already attached"));
	CHECK(fault_says("attach 4021:5", IOBAND_FAULT_ATTACHED, "attach 4021: already attached"));
	CHECK(fault_says("attach 5", IOBAND_FAULT_NO_MEMORY, "attach 5: out of memory"));
	CHECK(fault_says("weight 5", IOBAND_FAULT_NOT_RESUMED, "weight: the table is not resumed yet (try again after the resume)"));
	CHECK(fault_says("detach 99999", IOBAND_FAULT_NOT_ATTACHED, "detach 99999: no such group"));
	CHECK(fault_says("weight 123:5", IOBAND_FAULT_NOT_ATTACHED, "weight 123:5: group 123 is not attached"));
	CHECK(fault_says("range-bw 9:1:2", IOBAND_FAULT_NOT_ATTACHED, "range-bw 9:1:2: group 9 is not attached"));
	CHECK(fault_says("range-bw 9:1:2", IOBAND_FAULT_REFUSED, "range-bw 9:1:2: want 0 <= min <= max, or max 0 for no limit"));
	CHECK(fault_says("io_limit 2", IOBAND_FAULT_REFUSED, "io_limit 2: " KNOB_RANGE));
	CHECK(fault_says("io_throttle 13", IOBAND_FAULT_REFUSED, "io_throttle 13: " KNOB_RANGE));
	CHECK(fault_says("type uid", IOBAND_FAULT_BUSY, "type uid: detach every group first"));
}

TEST(message_error_is_cut_to_its_buffer)
{
	struct ioband_message m;
	char line[400], small[16];
	struct args *a;

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line, "weight ", 7);
	a = split(line);
	CHECK(ioband_parse_message(&m, a->argc, a->argv, error, sizeof(error)) == -1);
	CHECK(strlen(error) == sizeof(error) - 1);
	CHECK(ioband_parse_message(&m, a->argc, a->argv, small, sizeof(small)) == -1);
	CHECK(!strcmp(small, "weight 'aaaaaaa"));
}

/* ---- group arguments ---- */

TEST(group_arg_parse_and_format_each_spec)
{
	static const struct {
		const char *text;
		enum ioband_spec spec;
	} good[] = {
		{ "4021:200", IOBAND_SPEC_WEIGHT },
		{ ":100", IOBAND_SPEC_WEIGHT },
		{ "4021:0:3276", IOBAND_SPEC_RANGE },
		{ ":0:0", IOBAND_SPEC_RANGE },
		{ "4021:1:4915:0", IOBAND_SPEC_WEIGHT_RANGE },
		{ ":100:10:20", IOBAND_SPEC_WEIGHT_RANGE },
		{ "18446744073709551615:32767:4294967295:0", IOBAND_SPEC_WEIGHT_RANGE },
	};
	struct ioband_group_arg arg;
	char text[IOBAND_GROUP_ARG_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(ioband_parse_group_arg(good[i].text, good[i].spec, 0, &arg) == 0);
		CHECK(arg.spec == good[i].spec);
		CHECK(ioband_format_group_arg(text, sizeof(text), &arg) ==
		      (int)strlen(good[i].text));
		CHECK(!strcmp(text, good[i].text));
	}
	arg.spec = IOBAND_SPEC_ID;
	arg.id = 77;
	ioband_format_group_arg(text, sizeof(text), &arg);
	CHECK(!strcmp(text, "77"));
}

TEST(group_arg_rejects_out_of_range_values)
{
	static const struct {
		const char *text;
		enum ioband_spec spec;
	} bad[] = {
		{ "4021:0", IOBAND_SPEC_WEIGHT },
		{ "4021:32768", IOBAND_SPEC_WEIGHT },
		{ "4021", IOBAND_SPEC_WEIGHT },
		{ "4021:500:100", IOBAND_SPEC_RANGE },
		{ "4021:0:4294967296", IOBAND_SPEC_RANGE },
		{ "4021:10:20:30", IOBAND_SPEC_RANGE },
		{ "4021:0:10:20", IOBAND_SPEC_WEIGHT_RANGE },
		{ "4021:10:4294967296:0", IOBAND_SPEC_WEIGHT_RANGE },
		{ "4021", IOBAND_SPEC_ID },
	};
	struct ioband_group_arg arg = { .id = 5 };
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(ioband_parse_group_arg(bad[i].text, bad[i].spec, 0, &arg) == -1);
		CHECK(arg.id == 5);	/* untouched */
	}
}

/* ---- tables ---- */

static char detail[IOBAND_ERROR_MAX];

static const char *parse_table(const char *line, struct ioband_table *t)
{
	struct args *a = split(line);

	return ioband_parse_table(t, a->argc, a->argv, detail, sizeof(detail));
}

/* The table @line is refused with @expected, and @expected_detail. */
static int table_refused(const char *line, const char *expected,
			 const char *expected_detail)
{
	struct ioband_table t;
	const char *err = parse_table(line, &t);

	if (!err || strcmp(err, expected) || strcmp(detail, expected_detail)) {
		fprintf(stderr, "  '%s':\n    got  '%s' '%s'\n    want '%s' '%s'\n",
			line, err ? err : "(accepted)", detail, expected,
			expected_detail);
		return 0;
	}
	return 1;
}

TEST(table_accepts_each_policy)
{
	struct ioband_table t;

	CHECK(parse_table("/dev/sdb disk1 0 0 cgroup weight 0 :100 4021:200 4090:100", &t) == NULL);
	CHECK(detail[0] == '\0');
	CHECK(!strcmp(t.device, "/dev/sdb") && !strcmp(t.domain_id, "disk1"));
	CHECK(ioband_group_type_of(t.type_index) == IOBAND_TYPE_CGROUP);
	CHECK(t.params.policy == IOBAND_POLICY_WEIGHT && t.spec == IOBAND_SPEC_WEIGHT);
	CHECK(t.params.io_throttle == 0 && t.params.io_limit == 0 && t.params.token_base == 0);
	CHECK(t.nr_groups == 2 && t.nr_group_args == 3);
	CHECK(!strcmp(t.group_args[0], ":100") && !strcmp(t.group_args[2], "4090:100"));
	CHECK(ioband_sched_params_valid(&t.params));

	CHECK(parse_table("8:16 d 4 32 user weight-iosize 16384", &t) == NULL);
	CHECK(!strcmp(ioband_group_type_name(t.type_index), "user"));
	CHECK(t.params.policy == IOBAND_POLICY_WEIGHT_IOSIZE && t.params.token_base == 16384);
	CHECK(t.nr_groups == 0 && t.nr_group_args == 0);

	CHECK(parse_table("/dev/sdb rg 0 4 cgroup range-bw 0 :0:0 4021:0:3276 4090:0:0", &t) == NULL);
	CHECK(t.spec == IOBAND_SPEC_RANGE && t.nr_groups == 2 && t.params.io_limit == 4);
	CHECK(parse_table("/dev/sdb rg 0 4 cgroup weight-range 0 :100:0:0 4021:1:4915:0", &t) == NULL);
	CHECK(t.spec == IOBAND_SPEC_WEIGHT_RANGE && t.nr_groups == 1);
	CHECK(parse_table("/dev/sdb abcdefghijklmnopqrstuvwxyz01234 65536 65536 none weight 1073741824 :1", &t) == NULL);
}

TEST(table_raises_io_limit_to_io_throttle)
{
	struct ioband_table t;

	CHECK(parse_table("/dev/sdb d 10 5 cgroup weight 0", &t) == NULL);
	CHECK(t.params.io_throttle == 10 && t.params.io_limit == 10);
	/* io_limit 0 sets no cap: there is nothing to raise. */
	CHECK(parse_table("/dev/sdb d 40 0 cgroup weight 0", &t) == NULL);
	CHECK(t.params.io_limit == 0);
	/* io_throttle 0 is 4: io_limit 2 is raised to it. */
	CHECK(parse_table("/dev/sdb d 0 2 cgroup weight 0", &t) == NULL);
	CHECK(t.params.io_throttle == 0 && t.params.io_limit == 4);
	CHECK(ioband_sched_params_valid(&t.params));
}

TEST(table_refusals_name_the_argument)
{
	const char *long_id = "/dev/sdb abcdefghijklmnopqrstuvwxyz0123456 0 0 cgroup weight 0";

	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight", "Not enough arguments: want <device> <ioband_device_id> <io_throttle> <io_limit> <group_type> <policy> <token_base> [groups] [carryover=<n>]", ""));
	CHECK(table_refused("", "Not enough arguments: want <device> <ioband_device_id> <io_throttle> <io_limit> <group_type> <policy> <token_base> [groups] [carryover=<n>]", ""));
	CHECK(table_refused(long_id, "ioband_device_id: longer than 31 characters", ""));
	CHECK(table_refused("/dev/sdb 1 x 0 cgroup weight 0", "io_throttle: want a number 0..65536", ""));
	CHECK(table_refused("/dev/sdb 1 -1 0 cgroup weight 0", "io_throttle: want a number 0..65536", ""));
	CHECK(table_refused("/dev/sdb 1 65537 0 cgroup weight 0", "io_throttle: want a number 0..65536", ""));
	CHECK(table_refused("/dev/sdb 1 0 99999999999 cgroup weight 0", "io_limit: want a number 0..65536", ""));
	CHECK(table_refused("/dev/sdb 1 0 4294967297 cgroup weight 0", "io_limit: want a number 0..65536", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 blkio weight 0", "group_type: unknown, want none, cgroup, uid, user, gid, pid or pgrp", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup fastest 0", "policy: unknown, want weight, weight-iosize, range-bw, weight-range or weight-time", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup range 0", "policy: unknown, want weight, weight-iosize, range-bw, weight-range or weight-time", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 1.5", "token_base: want a number 0..1073741824", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 1073741825", "token_base: want a number 0..1073741824", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 none weight 0 :100 4021:10", "group: group_type none takes no <id>:... groups", ""));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 :10 :20", "group: the default group's :... is given twice", ""));
}

TEST(table_refuses_a_bad_group_with_the_grammar)
{
	const char *bad = "group: malformed or out of range; the kernel log has the grammar";

	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 :100 4021:0", bad,
			    "group '4021:0': want <id>:<weight> or :<weight> (or <id>:<weight>:<min>:<max> under any policy), weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 :100 4021", bad,
			    "group '4021': want <id>:<weight> or :<weight> (or <id>:<weight>:<min>:<max> under any policy), weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 abc:10", bad,
			    "group 'abc:10': want <id>:<weight> or :<weight> (or <id>:<weight>:<min>:<max> under any policy), weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup range-bw 0 :0:0 4021:500:100", bad,
			    "group '4021:500:100': want <id>:<min>:<max> or :<min>:<max> (or <id>:<weight>:<min>:<max> under any policy), weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup range-bw 0 :100", bad,
			    "group ':100': want <id>:<min>:<max> or :<min>:<max> (or <id>:<weight>:<min>:<max> under any policy), weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight-range 0 :100:0:0 4021:10:4294967296:0", bad,
			    "group '4021:10:4294967296:0': want <id>:<weight>:<min>:<max> or :<weight>:<min>:<max>, weight 1..32767, 0 <= min <= max or max 0 (KB/s)"));
}

/*
 * The extensions that let `dmsetup table` restore the state: the full
 * group form under every policy, and key=value knobs after the groups.
 */
TEST(table_full_form_and_knobs)
{
	struct ioband_group_arg arg;
	struct ioband_table t;
	char text[64];

	CHECK(parse_table("/dev/sdb d 0 0 cgroup weight 0 :100:0:0 4021:200 4090:300:100:2000 carryover=7", &t) == NULL);
	CHECK(t.nr_group_args == 3 && t.nr_groups == 2 && t.nr_knobs == 1);
	CHECK(t.params.carryover == 7);
	CHECK(ioband_parse_table_group(&t, 0, &arg) == 0);
	CHECK(arg.is_default && arg.spec == IOBAND_SPEC_WEIGHT_RANGE && arg.weight == 100);
	CHECK(ioband_parse_table_group(&t, 1, &arg) == 0);
	CHECK(arg.id == 4021 && arg.spec == IOBAND_SPEC_WEIGHT && arg.weight == 200);
	CHECK(ioband_parse_table_group(&t, 2, &arg) == 0);
	CHECK(arg.id == 4090 && arg.spec == IOBAND_SPEC_WEIGHT_RANGE);
	CHECK(arg.weight == 300 && arg.min_kbps == 100 && arg.max_kbps == 2000);

	/* range-bw keeps a weight in the full form; its own form has none. */
	CHECK(parse_table("/dev/sdb d 0 0 cgroup range-bw 0 :0:0 4021:10:20:30 4090:0:3276", &t) == NULL);
	CHECK(ioband_parse_table_group(&t, 1, &arg) == 0);
	CHECK(arg.weight == 10 && arg.min_kbps == 20 && arg.max_kbps == 30);
	CHECK(ioband_parse_table_group(&t, 2, &arg) == 0);
	CHECK(arg.spec == IOBAND_SPEC_RANGE && arg.max_kbps == 3276);
	CHECK(t.params.carryover == IOBAND_DEFAULT_CARRYOVER && t.nr_knobs == 0);

	/* The form a table prints: the policy's, unless it would lose something. */
	arg.weight = 100;
	arg.min_kbps = 0;
	arg.max_kbps = 0;
	CHECK(ioband_table_spec(IOBAND_POLICY_WEIGHT, &arg) == IOBAND_SPEC_WEIGHT);
	CHECK(ioband_table_spec(IOBAND_POLICY_RANGE_BW, &arg) == IOBAND_SPEC_RANGE);
	CHECK(ioband_table_spec(IOBAND_POLICY_WEIGHT_RANGE, &arg) == IOBAND_SPEC_WEIGHT_RANGE);
	arg.max_kbps = 10;
	CHECK(ioband_table_spec(IOBAND_POLICY_WEIGHT_IOSIZE, &arg) == IOBAND_SPEC_WEIGHT_RANGE);
	arg.max_kbps = 0;
	arg.weight = 300;
	CHECK(ioband_table_spec(IOBAND_POLICY_RANGE_BW, &arg) == IOBAND_SPEC_WEIGHT_RANGE);
	CHECK(ioband_table_spec(IOBAND_POLICY_WEIGHT, &arg) == IOBAND_SPEC_WEIGHT);

	/* Knobs print only when they differ from the default. */
	t.params.carryover = IOBAND_DEFAULT_CARRYOVER;
	CHECK(ioband_format_table_knobs(text, sizeof(text), &t.params) == 0 && !text[0]);
	t.params.carryover = 0;
	ioband_format_table_knobs(text, sizeof(text), &t.params);
	CHECK(!strcmp(text, " carryover=0"));
}

TEST(table_knob_refusals)
{
	const char *knob = "knob: unknown or out of range; the kernel log says which";

	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 carryover=1025", knob,
			    "knob 'carryover=1025': want carryover=<n>, n 0..1024"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 carryover=", knob,
			    "knob 'carryover=': want carryover=<n>, n 0..1024"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 carryover=1 carryover=2", knob,
			    "knob 'carryover=2': carryover given twice"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 io_limit=4", knob,
			    "knob 'io_limit=4': unknown, want carryover=<n>"));
	CHECK(table_refused("/dev/sdb 1 0 0 cgroup weight 0 carryover=1 4021:100",
			    "group: after a key=value knob; the knobs come last",
			    "group '4021:100': after the key=value knobs, which come last"));
	CHECK(table_refused("/dev/sdb 1 0 0 none weight 0 :100:0:0 4021:1:2:3",
			    "group: group_type none takes no <id>:... groups", ""));
}

int main(void)
{
	return RUN_TESTS("message",
			 T(message_attach_takes_an_id_and_maybe_a_weight),
			 T(message_attach_refusals),
			 T(message_detach),
			 T(message_weight_of_a_group_or_the_default),
			 T(message_range_bw),
			 T(message_knobs),
			 T(message_policy_and_type),
			 T(message_reset_and_stats_take_no_argument),
			 T(message_names_and_counts),
			 T(message_faults_of_the_glue),
			 T(message_error_is_cut_to_its_buffer),
			 T(group_arg_parse_and_format_each_spec),
			 T(group_arg_rejects_out_of_range_values),
			 T(table_accepts_each_policy),
			 T(table_raises_io_limit_to_io_throttle),
			 T(table_refusals_name_the_argument),
			 T(table_refuses_a_bad_group_with_the_grammar),
			 T(table_full_form_and_knobs),
			 T(table_knob_refusals));
}
