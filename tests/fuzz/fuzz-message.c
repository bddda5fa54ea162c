// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the argument parsers of dm-ioband/ioband-core.c:
 * ioband_parse_message() (what `dmsetup message` sends) and
 * ioband_parse_table() (a table's arguments after "ioband"), both given
 * the argv that dm_split_args() makes of a line.
 *
 * Input: one line of text, split at white space into at most MAX_ARGS
 * arguments; every input is tried as a message and as a table. Besides
 * ASan and UBSan, each parse must:
 *
 *  - either succeed with every value within its documented limits, or
 *    fail with a non-empty error, never both; the error names the
 *    argument it refuses;
 *  - round-trip: the canonical text of what was parsed (the form the
 *    status and iobandctl print) parses to the same thing again;
 *  - for a parsed message, word every fault the glue may report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ioband-core.h"

#define MAX_ARGS	32
#define MAX_TEXT	4096

static const char *input;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-message: CHECK(%s) failed at line %d on '%s'\n", \
				#cond, __LINE__, input);		\
			abort();					\
		}							\
	} while (0)

/* Splits @text in place at white space, as dm_split_args() does. */
static unsigned int split(char *text, char **argv)
{
	unsigned int argc = 0;
	char *p = text;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (!*p || argc == MAX_ARGS)
			return argc;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       *p != '\r')
			p++;
	}
}

/*
 * An error: NUL-terminated in its buffer, empty or not as told, and no
 * NULL string printed into it.
 */
static void check_error(const char *error, bool empty)
{
	CHECK(memchr(error, '\0', IOBAND_ERROR_MAX) != NULL);
	CHECK((error[0] == '\0') == empty);
	if (!strstr(input, "(null)"))
		CHECK(!strstr(error, "(null)"));
}

/* @needle is in @error, unless too long to be there whole. */
static void check_names(const char *error, const char *needle)
{
	if (strlen(needle) < 64)
		CHECK(strstr(error, needle) != NULL);
}

static bool group_arg_equal(const struct ioband_group_arg *a,
			    const struct ioband_group_arg *b)
{
	return a->id == b->id && a->is_default == b->is_default &&
	       a->spec == b->spec && a->weight == b->weight &&
	       a->min_kbps == b->min_kbps && a->max_kbps == b->max_kbps;
}

/* The values of a parsed group argument are within their limits. */
static void check_group_arg(const struct ioband_group_arg *g)
{
	if (g->is_default)
		CHECK(g->id == 0);
	if (ioband_spec_has_weight(g->spec))
		CHECK(g->weight >= IOBAND_MIN_WEIGHT &&
		      g->weight <= IOBAND_MAX_WEIGHT);
	else
		CHECK(g->weight == 0);
	if (ioband_spec_has_range(g->spec))
		CHECK(!g->max_kbps || g->min_kbps <= g->max_kbps);
	else
		CHECK(g->min_kbps == 0 && g->max_kbps == 0);
}

/* ---- messages ---- */

static void check_message_values(const struct ioband_message *m,
				  unsigned int argc, char **argv)
{
	CHECK(m->kind > IOBAND_MSG_NONE && m->kind < IOBAND_NR_MESSAGES);
	CHECK(!strcasecmp(argv[0], ioband_message_name(m->kind)));
	if (m->kind == IOBAND_MSG_RESET || m->kind == IOBAND_MSG_STATS) {
		CHECK(argc == 1 && m->arg == NULL);
		return;
	}
	CHECK(argc == 2 && m->arg == argv[1]);

	switch (m->kind) {
	case IOBAND_MSG_ATTACH:
		CHECK(!m->group.is_default);
		CHECK(m->group.spec == IOBAND_SPEC_ID ||
		      m->group.spec == IOBAND_SPEC_WEIGHT);
		check_group_arg(&m->group);
		break;
	case IOBAND_MSG_DETACH:
		CHECK(!m->group.is_default && m->group.spec == IOBAND_SPEC_ID);
		break;
	case IOBAND_MSG_WEIGHT:
		CHECK(m->group.spec == IOBAND_SPEC_WEIGHT);
		check_group_arg(&m->group);
		break;
	case IOBAND_MSG_RANGE_BW:
		CHECK(m->group.spec == IOBAND_SPEC_RANGE);
		check_group_arg(&m->group);
		break;
	case IOBAND_MSG_POLICY:
		CHECK(m->value < IOBAND_NR_POLICIES);
		CHECK(!strcmp(ioband_policy_name(m->value), m->arg));
		break;
	case IOBAND_MSG_TYPE:
		CHECK(!strcmp(ioband_group_type_name(m->value), m->arg));
		break;
	case IOBAND_MSG_TOKEN:
		CHECK(m->value <= IOBAND_MAX_TOKEN_BASE);
		break;
	case IOBAND_MSG_CARRYOVER:
		CHECK(m->value <= IOBAND_MAX_CARRYOVER);
		break;
	case IOBAND_MSG_IO_LIMIT:
	case IOBAND_MSG_IO_THROTTLE:
		CHECK(m->value <= IOBAND_MAX_IO_LIMIT);
		break;
	default:
		CHECK(0);
	}
}

/* The canonical text of a parsed message. */
static void format_message(const struct ioband_message *m, char *buf,
			   size_t size)
{
	const char *name = ioband_message_name(m->kind);
	char arg[IOBAND_GROUP_ARG_MAX];

	switch (m->kind) {
	case IOBAND_MSG_RESET:
	case IOBAND_MSG_STATS:
		snprintf(buf, size, "%s", name);
		return;
	case IOBAND_MSG_ATTACH:
	case IOBAND_MSG_DETACH:
	case IOBAND_MSG_WEIGHT:
	case IOBAND_MSG_RANGE_BW:
		CHECK(ioband_format_group_arg(arg, sizeof(arg), &m->group) <
		      (int)sizeof(arg));
		snprintf(buf, size, "%s %s", name, arg);
		return;
	case IOBAND_MSG_POLICY:
		snprintf(buf, size, "%s %s", name, ioband_policy_name(m->value));
		return;
	case IOBAND_MSG_TYPE:
		snprintf(buf, size, "%s %s", name,
			 ioband_group_type_name(m->value));
		return;
	default:
		snprintf(buf, size, "%s %u", name, m->value);
		return;
	}
}

static void check_message(unsigned int argc, char **argv)
{
	char error[IOBAND_ERROR_MAX], again_error[IOBAND_ERROR_MAX];
	char canonical[128], *again_argv[MAX_ARGS];
	struct ioband_message m, again;
	unsigned int fault, again_argc;
	int r;

	memset(error, 'x', sizeof(error));
	r = ioband_parse_message(&m, argc, argv, error, sizeof(error));
	CHECK(r == 0 || r == -1);
	check_error(error, r == 0);
	if (r) {
		/* Which argument: the name, or the refused argument. */
		if (m.kind == IOBAND_MSG_NONE && argc)
			check_names(error, argv[0]);
		else if (m.kind != IOBAND_MSG_NONE)
			check_names(error, argv[1]);
		return;
	}
	check_message_values(&m, argc, argv);

	/* Every fault the glue may report on it is worded. */
	for (fault = IOBAND_FAULT_NO_GROUPS; fault <= IOBAND_FAULT_NOT_RESUMED;
	     fault++) {
		memset(error, 'x', sizeof(error));
		ioband_message_error(&m, fault, error, sizeof(error));
		check_error(error, false);
	}

	format_message(&m, canonical, sizeof(canonical));
	again_argc = split(canonical, again_argv);
	r = ioband_parse_message(&again, again_argc, again_argv, again_error,
				 sizeof(again_error));
	CHECK(r == 0);
	CHECK(again.kind == m.kind && again.value == m.value);
	CHECK(group_arg_equal(&again.group, &m.group));
}

/* ---- tables ---- */

static bool params_equal(const struct ioband_sched_params *a,
			 const struct ioband_sched_params *b)
{
	return a->policy == b->policy && a->token_base == b->token_base &&
	       a->io_throttle == b->io_throttle && a->io_limit == b->io_limit &&
	       a->carryover == b->carryover;
}

/* Parses a table's group arguments again, into @args. */
static void table_groups(const struct ioband_table *t,
			 struct ioband_group_arg *args)
{
	unsigned int i, nr_groups = 0, nr_default = 0;

	for (i = 0; i < t->nr_group_args; i++) {
		CHECK(!ioband_parse_table_group(t, i, &args[i]));
		check_group_arg(&args[i]);
		/* The policy's form, or the full one any policy takes. */
		CHECK(args[i].spec == t->spec ||
		      args[i].spec == IOBAND_SPEC_WEIGHT_RANGE);
		nr_groups += !args[i].is_default;
		nr_default += args[i].is_default;
	}
	CHECK(nr_groups == t->nr_groups && nr_default <= 1);
}

static void check_table(unsigned int argc, char **argv)
{
	struct ioband_group_arg args[MAX_ARGS], again_args[MAX_ARGS];
	char detail[IOBAND_ERROR_MAX], again_detail[IOBAND_ERROR_MAX];
	char canonical[MAX_TEXT + MAX_ARGS * IOBAND_GROUP_ARG_MAX];
	char *again_argv[MAX_ARGS];
	struct ioband_table t, again;
	unsigned int i, again_argc;
	const char *error;
	size_t n;

	memset(detail, 'x', sizeof(detail));
	error = ioband_parse_table(&t, argc, argv, detail, sizeof(detail));
	/* The errors that say which argument in the detail, and only those. */
	check_error(detail, !error ||
		    (strncmp(error, "group: malformed", 16) != 0 &&
		     strncmp(error, "group: after", 12) != 0 &&
		     strncmp(error, "knob:", 5) != 0));
	if (error) {
		CHECK(error[0] != '\0');
		if (detail[0])
			CHECK(!strncmp(detail, "group '", 7) ||
			      !strncmp(detail, "knob '", 6));
		return;
	}

	CHECK(argc >= 7);
	CHECK(t.device == argv[0] && t.domain_id == argv[1]);
	CHECK(strlen(t.domain_id) <= IOBAND_DOMAIN_ID_MAX);
	CHECK(!strcmp(ioband_group_type_name(t.type_index), argv[4]));
	CHECK(!strcmp(ioband_policy_name(t.params.policy), argv[5]));
	CHECK(ioband_sched_params_valid(&t.params));
	CHECK(t.spec == ioband_policy_spec(t.params.policy));
	CHECK(t.nr_group_args + t.nr_knobs == argc - 7);
	CHECK(t.group_args == argv + 7);
	if (ioband_group_type_of(t.type_index) == IOBAND_TYPE_NONE)
		CHECK(t.nr_groups == 0);
	table_groups(&t, args);

	/* The canonical table, as the status prints it, parses the same. */
	n = snprintf(canonical, sizeof(canonical), "%s %s %u %u %s %s %u",
		     t.device, t.domain_id, t.params.io_throttle,
		     t.params.io_limit, ioband_group_type_name(t.type_index),
		     ioband_policy_name(t.params.policy), t.params.token_base);
	for (i = 0; i < t.nr_group_args; i++) {
		canonical[n++] = ' ';
		n += ioband_format_group_arg(canonical + n,
					     sizeof(canonical) - n, &args[i]);
		CHECK(n < sizeof(canonical));
	}
	/* Knobs at their default are left out, as the status does. */
	n += ioband_format_table_knobs(canonical + n, sizeof(canonical) - n,
				       &t.params);
	CHECK(n < sizeof(canonical));
	again_argc = split(canonical, again_argv);
	CHECK(again_argc <= argc);
	error = ioband_parse_table(&again, again_argc, again_argv, again_detail,
				   sizeof(again_detail));
	CHECK(error == NULL);
	CHECK(!strcmp(again.device, t.device));
	CHECK(!strcmp(again.domain_id, t.domain_id));
	CHECK(again.type_index == t.type_index && again.spec == t.spec);
	CHECK(params_equal(&again.params, &t.params));
	CHECK(again.nr_groups == t.nr_groups);
	CHECK(again.nr_group_args == t.nr_group_args);
	table_groups(&again, again_args);
	for (i = 0; i < t.nr_group_args; i++)
		CHECK(group_arg_equal(&again_args[i], &args[i]));
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text, *copy, *argv[MAX_ARGS];
	unsigned int argc;

	if (size > MAX_TEXT)
		return 0;
	text = malloc(size + 1);
	copy = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';		/* the kernel's argv: cut at a NUL */
	memcpy(copy, text, size + 1);
	input = copy;

	argc = split(text, argv);
	check_message(argc, argv);
	check_table(argc, argv);

	free(text);
	free(copy);
	return 0;
}
