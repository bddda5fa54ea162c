// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Build and parse dm-ioband tables and status lines.
 *
 * Table:  <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *         <policy> <token_base> :<default spec> [<id>:<spec> ...]
 *         where a spec is, by policy, <weight> (weight, weight-iosize),
 *         <min>:<max> (range-bw, KiB/s) or <weight>:<min>:<max>
 *         (weight-range).
 * Status: <ioband_device_id> -1 <6 counters of the default group>
 *         [<id> <6 counters> ...]
 * Stats:  the reply to the "stats" message, see ioband_parse_stats().
 *
 * Tables, specs, group types and policies are checked by the kernel's
 * own parsers (dm-ioband/ioband-core.c, compiled in): a table that this
 * file builds or accepts is one the target accepts. The status and stats
 * come from the kernel (or from a fuzzer): every token is checked,
 * numbers never overflow, and nothing is read past the NUL.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"

/* The policies whose cost is a sector count rather than an IO. */
int ioband_iosize_policy(const char *policy)
{
	return ioband_parse_policy(policy) == IOBAND_POLICY_WEIGHT_IOSIZE;
}

/* The policies that give groups a minimum and a maximum bandwidth. */
int ioband_range_policy(const char *policy)
{
	return ioband_spec_has_range(ioband_spec_of_policy(policy));
}

/* How policy @policy spells a group (an unknown one: as weight does). */
enum ioband_spec ioband_spec_of_policy(const char *policy)
{
	int parsed = ioband_parse_policy(policy);

	return parsed < 0 ? IOBAND_SPEC_WEIGHT : ioband_policy_spec(parsed);
}

/* How a group's spec is written, for messages. */
const char *ioband_spec_help(enum ioband_spec spec)
{
	switch (spec) {
	case IOBAND_SPEC_RANGE:
		return "<min>:<max> (KiB/s, max 0: no limit)";
	case IOBAND_SPEC_WEIGHT_RANGE:
		return "<weight>:<min>:<max> (KiB/s, max 0: no limit)";
	default:
		return "<weight>";
	}
}

int ioband_valid_group_type(const char *type)
{
	return ioband_parse_group_type(type) >= 0;
}

int ioband_valid_policy(const char *policy)
{
	return ioband_parse_policy(policy) >= 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* The id is one token of the table and status lines. */
int ioband_valid_domain(const char *domain)
{
	size_t len = strlen(domain);
	size_t i;

	if (!len || len > IOBAND_DOMAIN_ID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (is_space(domain[i]) || (unsigned char)domain[i] < 0x20)
			return 0;
	return 1;
}

struct token {
	const char *s;
	size_t len;
};

/* Fetch the next whitespace-separated token; 0 at the end of the string. */
static int next_token(const char **pos, struct token *tok)
{
	const char *p = *pos;

	while (is_space(*p))
		p++;
	if (!*p)
		return 0;
	tok->s = p;
	while (*p && !is_space(*p))
		p++;
	tok->len = p - tok->s;
	*pos = p;
	return 1;
}

static size_t count_tokens(const char *s)
{
	struct token tok;
	size_t n = 0;

	while (next_token(&s, &tok))
		n++;
	return n;
}

/* Unsigned decimal, digits only, at most @max. */
static int parse_u64(const char *s, size_t len, uint64_t max, uint64_t *val)
{
	uint64_t v = 0;
	size_t i;

	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = s[i] - '0';
		if (v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*val = v;
	return 0;
}

static int token_is(const struct token *tok, const char *s)
{
	return tok->len == strlen(s) && !memcmp(tok->s, s, tok->len);
}

/* Copy a token into a fixed buffer of @size bytes, refusing to truncate. */
static int copy_token(const struct token *tok, char *buf, size_t size)
{
	if (tok->len >= size)
		return -EINVAL;
	memcpy(buf, tok->s, tok->len);
	buf[tok->len] = '\0';
	return 0;
}

/*
 * A spec is a group argument of the table without its "<id>": the kernel
 * core parses ":<spec>", the default group's spelling, with the rules of
 * a table's groups. Returns -EINVAL when malformed, -ERANGE when a number
 * is out of range or min > max, or -ENOMEM.
 */
int ioband_parse_spec(enum ioband_spec spec, const char *str,
		      struct ioband_group_spec *out)
{
	u64 id, values[IOBAND_MAX_SPEC_VALUES];
	struct ioband_group_arg arg;
	char *text;
	bool dflt;
	int rc = 0;

	text = malloc(strlen(str) + 2);
	if (!text)
		return -ENOMEM;
	text[0] = ':';
	strcpy(text + 1, str);
	if (ioband_parse_group_spec(text, 0, ioband_spec_nr_values(spec), &id,
				    &dflt, values))
		rc = -EINVAL;
	else if (ioband_parse_group_arg(text, spec, 0, &arg))
		rc = -ERANGE;
	free(text);
	if (rc)
		return rc;
	/* Weight 100 under range-bw, range 0:0 under the weight policies. */
	out->weight = ioband_spec_has_weight(spec) ? arg.weight :
						     IOBAND_DEFAULT_WEIGHT;
	out->min_kbps = arg.min_kbps;
	out->max_kbps = arg.max_kbps;
	return 0;
}

/* Returns -EINVAL if @str is not a number, -ERANGE if out of 1..32767. */
int ioband_parse_weight(const char *str, unsigned int *weight)
{
	struct ioband_group_spec g;
	int rc = ioband_parse_spec(IOBAND_SPEC_WEIGHT, str, &g);

	if (!rc)
		*weight = g.weight;
	return rc;
}

/* Render a spec as the table writes it (without the id and first ':'). */
int ioband_format_spec(enum ioband_spec spec, const struct ioband_group_spec *g,
		       char *buf, size_t len)
{
	struct ioband_group_arg arg = {
		.is_default = true,
		.spec = spec,
		.weight = g->weight,
		.min_kbps = g->min_kbps,
		.max_kbps = g->max_kbps,
	};
	char text[IOBAND_GROUP_ARG_MAX];
	int n = ioband_format_group_arg(text, sizeof(text), &arg);

	if (n < 0 || (size_t)n >= sizeof(text) || (size_t)n > len)
		return -ENOSPC;
	memcpy(buf, text + 1, n);	/* after the default group's ':' */
	return 0;
}

/*
 * Split "KEY=SPEC" at the last '=' that leaves a SPEC of @spec (a cgroup
 * name may hold '='); *key is allocated. Returns -EINVAL if there is no
 * '=' or an empty side, -ERANGE if SPEC is not a valid spec, or -ENOMEM.
 */
int ioband_split_spec_arg(enum ioband_spec spec, const char *arg, char **key,
			  struct ioband_group_spec *out)
{
	const char *eq = strrchr(arg, '=');
	int rc;

	if (!eq || eq == arg || !eq[1])
		return -EINVAL;
	rc = ioband_parse_spec(spec, eq + 1, out);
	if (rc)
		return rc == -ENOMEM ? rc : -ERANGE;
	*key = strndup(arg, eq - arg);
	return *key ? 0 : -ENOMEM;
}

/* ioband_split_spec_arg() of a weight. */
int ioband_split_weight_arg(const char *arg, char **key, unsigned int *weight)
{
	struct ioband_group_spec g;
	int rc = ioband_split_spec_arg(IOBAND_SPEC_WEIGHT, arg, key, &g);

	if (!rc)
		*weight = g.weight;
	return rc;
}

void ioband_table_default_spec(const struct ioband_table_args *t,
			       struct ioband_group_spec *g)
{
	g->weight = t->default_weight;
	g->min_kbps = t->default_min_kbps;
	g->max_kbps = t->default_max_kbps;
}

void ioband_group_to_spec(const struct ioband_weight *w,
			  struct ioband_group_spec *g)
{
	g->weight = w->weight;
	g->min_kbps = w->min_kbps;
	g->max_kbps = w->max_kbps;
}

const struct ioband_weight *ioband_table_find_weight(const struct ioband_table_args *t,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < t->nr_weights; i++)
		if (t->weights[i].id == id)
			return &t->weights[i];
	return NULL;
}

/* Would the kernel take @g as a group's weight and range? */
static int valid_group_spec(const struct ioband_group_spec *g)
{
	struct ioband_group_spec parsed;
	char text[IOBAND_GROUP_ARG_MAX];

	return !ioband_format_spec(IOBAND_SPEC_WEIGHT_RANGE, g, text,
				   sizeof(text)) &&
	       !ioband_parse_spec(IOBAND_SPEC_WEIGHT_RANGE, text, &parsed);
}

/* -EEXIST if @id is already there: one group, one spec. */
int ioband_table_add_group(struct ioband_table_args *t, uint64_t id,
			   const struct ioband_group_spec *g)
{
	struct ioband_weight *w;

	if (!valid_group_spec(g))
		return -ERANGE;
	if (ioband_table_find_weight(t, id))
		return -EEXIST;
	w = realloc(t->weights, (t->nr_weights + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[t->nr_weights].id = id;
	w[t->nr_weights].weight = g->weight;
	w[t->nr_weights].min_kbps = g->min_kbps;
	w[t->nr_weights].max_kbps = g->max_kbps;
	t->weights = w;
	t->nr_weights++;
	return 0;
}

int ioband_table_add_weight(struct ioband_table_args *t, uint64_t id,
			    unsigned int weight)
{
	struct ioband_group_spec g = { weight, 0, 0 };

	return ioband_table_add_group(t, id, &g);
}

void ioband_table_free(struct ioband_table_args *t)
{
	free(t->device);
	free(t->weights);
	memset(t, 0, sizeof(*t));
}

/*
 * The table's arguments as the kernel's dm_split_args() makes them (a
 * table of iobandctl's or of the kernel has no backslash): *argv and the
 * strings in it are one allocation. Returns the count, or -ENOMEM.
 */
static int split_args(const char *params, char ***argv)
{
	size_t n = count_tokens(params), i = 0, len = strlen(params);
	const char *pos = params;
	struct token tok;
	char **args, *text;

	args = malloc((n + 1) * sizeof(*args) + len + 1);
	if (!args)
		return -ENOMEM;
	text = (char *)(args + n + 1);
	while (next_token(&pos, &tok)) {
		args[i++] = text;
		memcpy(text, tok.s, tok.len);
		text[tok.len] = '\0';
		text += tok.len + 1;
	}
	args[n] = NULL;
	*argv = args;
	return n;
}

/* A number of the table, which the kernel's parser has checked. */
static unsigned int table_number(const char *arg)
{
	u64 value = 0;

	ioband_parse_u64(arg, &value);
	return (unsigned int)value;
}

/*
 * Parse the table arguments, as "dmsetup table" prints them, with the
 * kernel's parser. Returns 0, -EINVAL on a table the kernel would refuse
 * or on a group given twice, or -ENOMEM; on error @out holds nothing to
 * free.
 */
int ioband_parse_params(const char *params, struct ioband_table_args *out)
{
	char detail[IOBAND_ERROR_MAX], **argv;
	struct ioband_table_args t;
	struct ioband_table parsed;
	struct ioband_group_arg arg;
	struct ioband_group_spec g;
	int argc, rc = -EINVAL;
	unsigned int i;

	memset(&t, 0, sizeof(t));
	argc = split_args(params, &argv);
	if (argc < 0)
		return argc;
	if (ioband_parse_table(&parsed, argc, argv, detail, sizeof(detail)))
		goto out;
	t.device = strdup(parsed.device);
	if (!t.device) {
		rc = -ENOMEM;
		goto out;
	}
	snprintf(t.domain, sizeof(t.domain), "%s", parsed.domain_id);
	snprintf(t.group_type, sizeof(t.group_type), "%s",
		 ioband_group_type_name(parsed.type_index));
	snprintf(t.policy, sizeof(t.policy), "%s",
		 ioband_policy_name(parsed.params.policy));
	/* As given: the kernel's parser raises io_limit and fills defaults. */
	t.io_throttle = table_number(argv[2]);
	t.io_limit = table_number(argv[3]);
	t.token_base = table_number(argv[6]);
	t.default_weight = IOBAND_DEFAULT_WEIGHT;
	for (i = 0; i < parsed.nr_group_args; i++) {
		/* The policy's form or the full one (a table keeps both). */
		if (ioband_parse_table_group(&parsed, i, &arg))
			goto out;
		g.weight = ioband_spec_has_weight(arg.spec) ? arg.weight :
							      IOBAND_DEFAULT_WEIGHT;
		g.min_kbps = arg.min_kbps;
		g.max_kbps = arg.max_kbps;
		if (arg.is_default) {
			t.default_weight = g.weight;
			t.default_min_kbps = g.min_kbps;
			t.default_max_kbps = g.max_kbps;
			continue;
		}
		/* A group given twice is malformed, not a reason to merge. */
		rc = ioband_table_add_group(&t, arg.id, &g);
		if (rc) {
			rc = rc == -ENOMEM ? rc : -EINVAL;
			goto out;
		}
	}
	rc = 0;
	*out = t;
out:
	if (rc)
		ioband_table_free(&t);
	free(argv);
	return rc;
}

static int valid_device(const char *device)
{
	const char *p;

	if (!device || !*device)
		return 0;
	for (p = device; *p; p++)
		if (is_space(*p) || (unsigned char)*p < 0x20)
			return 0;
	return 1;
}

/*
 * Render the constructor arguments, unchecked; *params is allocated.
 * Returns 0, -EINVAL when the device or the domain is not one word, or
 * -ENOMEM.
 */
int ioband_build_params(const struct ioband_table_args *t, char **params)
{
	struct ioband_group_spec g;
	enum ioband_spec spec;
	char *buf = NULL, s[IOBAND_GROUP_ARG_MAX];
	size_t size, i;
	FILE *f;

	/* The words must stay words: the kernel splits the table at blanks. */
	if (!valid_device(t->device) || !ioband_valid_domain(t->domain))
		return -EINVAL;

	spec = ioband_spec_of_policy(t->policy);
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	ioband_table_default_spec(t, &g);
	if (ioband_format_spec(spec, &g, s, sizeof(s)))
		s[0] = '\0';
	fprintf(f, "%s %s %u %u %s %s %u :%s", t->device, t->domain,
		t->io_throttle, t->io_limit, t->group_type, t->policy,
		t->token_base, s);
	for (i = 0; i < t->nr_weights; i++) {
		ioband_group_to_spec(&t->weights[i], &g);
		if (ioband_format_spec(spec, &g, s, sizeof(s)))
			s[0] = '\0';
		fprintf(f, " %llu:%s", (unsigned long long)t->weights[i].id, s);
	}
	if (ferror(f) | fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	*params = buf;
	return 0;
}

const char *ioband_params_error(const char *params, char *detail, size_t size)
{
	struct ioband_table parsed;
	const char *error;
	char **argv;
	int argc;

	if (size)
		detail[0] = '\0';
	argc = split_args(params, &argv);
	if (argc < 0)
		return "out of memory";
	error = ioband_parse_table(&parsed, argc, argv, detail, size);
	free(argv);
	return error;
}

/*
 * Render the constructor arguments; *params is allocated. Returns 0,
 * -EINVAL when the kernel's parser would refuse the table (see
 * ioband_params_error() for why), or -ENOMEM.
 */
int ioband_format_params(const struct ioband_table_args *t, char **params)
{
	struct ioband_table_args check;
	char *buf;
	int rc;

	rc = ioband_build_params(t, &buf);
	if (rc)
		return rc;
	rc = ioband_parse_params(buf, &check);
	if (rc) {
		free(buf);
		return rc;
	}
	ioband_table_free(&check);
	*params = buf;
	return 0;
}

void ioband_status_free(struct ioband_status *st)
{
	free(st->groups);
	memset(st, 0, sizeof(*st));
}

static int parse_group_stat(const char **pos, struct ioband_group_stat *g,
			    int first)
{
	uint64_t *counters[] = {
		&g->reads, &g->delayed_reads, &g->read_sectors,
		&g->writes, &g->delayed_writes, &g->write_sectors,
	};
	struct token tok;
	size_t i;

	next_token(pos, &tok);
	g->is_default = token_is(&tok, "-1");
	/* The default group comes first, and only there. */
	if (g->is_default != first)
		return -EINVAL;
	if (!g->is_default && parse_u64(tok.s, tok.len, UINT64_MAX, &g->id))
		return -EINVAL;

	for (i = 0; i < sizeof(counters) / sizeof(*counters); i++) {
		next_token(pos, &tok);
		if (parse_u64(tok.s, tok.len, UINT64_MAX, counters[i]))
			return -EINVAL;
	}
	return 0;
}

/*
 * Parse the status arguments. Returns 0, -EINVAL on anything malformed
 * (a missing default group, a truncated group, a non-decimal or overflowing
 * counter, a group listed twice) or -ENOMEM; on error @out holds nothing
 * to free.
 */
int ioband_parse_status(const char *params, struct ioband_status *out)
{
	struct ioband_status st;
	size_t ntok = count_tokens(params);
	const char *pos = params;
	struct token tok;
	size_t i, j;

	memset(&st, 0, sizeof(st));
	if (ntok < 1 + IOBAND_STATUS_FIELDS ||
	    (ntok - 1) % IOBAND_STATUS_FIELDS)
		return -EINVAL;

	next_token(&pos, &tok);
	if (copy_token(&tok, st.domain, sizeof(st.domain)))
		return -EINVAL;

	st.nr_groups = (ntok - 1) / IOBAND_STATUS_FIELDS;
	st.groups = calloc(st.nr_groups, sizeof(*st.groups));
	if (!st.groups)
		return -ENOMEM;

	for (i = 0; i < st.nr_groups; i++) {
		if (parse_group_stat(&pos, &st.groups[i], i == 0))
			goto bad;
		for (j = 1; j < i; j++)
			if (st.groups[j].id == st.groups[i].id)
				goto bad;
	}
	*out = st;
	return 0;
bad:
	ioband_status_free(&st);
	return -EINVAL;
}

/*
 * The "stats" reply
 */

enum stats_kind {
	STATS_U64,
	STATS_GROUP_ID,		/* "-1" for the default group, else a u64 */
	STATS_WORD,		/* a string of at most IOBAND_TYPE_MAX chars */
	STATS_DOMAIN,		/* a string of at most IOBAND_DOMAIN_ID_MAX chars */
};

struct stats_key {
	const char *name;
	enum stats_kind kind;
	size_t offset;
	int optional;		/* else a record without it is malformed */
	size_t has_offset;	/* optional: the int set when present */
};

#define KEY(name, kind, type, field) { name, kind, offsetof(type, field), 0, 0 }
#define OPT_KEY(name, type, field, has) \
	{ name, STATS_U64, offsetof(type, field), 1, offsetof(type, has) }

/* The first key of each table names the record. */
static const struct stats_key domain_keys[] = {
	KEY("domain",      STATS_DOMAIN, struct ioband_stats, domain),
	KEY("policy",      STATS_WORD,   struct ioband_stats, policy),
	KEY("token_base",  STATS_U64,    struct ioband_stats, token_base),
	KEY("io_throttle", STATS_U64,    struct ioband_stats, io_throttle),
	KEY("io_limit",    STATS_U64,    struct ioband_stats, io_limit),
	KEY("carryover",   STATS_U64,    struct ioband_stats, carryover),
	KEY("in_flight",   STATS_U64,    struct ioband_stats, in_flight),
	KEY("queued",      STATS_U64,    struct ioband_stats, queued),
	KEY("vtime",       STATS_U64,    struct ioband_stats, vtime),
	OPT_KEY("elapsed_ns", struct ioband_stats, elapsed_ns, has_elapsed),
};

static const struct stats_key group_keys[] = {
	KEY("group",          STATS_GROUP_ID, struct ioband_stats_group, id),
	KEY("weight",         STATS_U64, struct ioband_stats_group, weight),
	KEY("reads",          STATS_U64, struct ioband_stats_group, reads),
	KEY("read_sectors",   STATS_U64, struct ioband_stats_group, read_sectors),
	KEY("writes",         STATS_U64, struct ioband_stats_group, writes),
	KEY("write_sectors",  STATS_U64, struct ioband_stats_group, write_sectors),
	KEY("delayed_reads",  STATS_U64, struct ioband_stats_group, delayed_reads),
	KEY("delayed_writes", STATS_U64, struct ioband_stats_group, delayed_writes),
	KEY("queued",         STATS_U64, struct ioband_stats_group, queued),
	KEY("in_flight",      STATS_U64, struct ioband_stats_group, in_flight),
	KEY("wait_ns",        STATS_U64, struct ioband_stats_group, wait_ns),
	KEY("wait_max_ns",    STATS_U64, struct ioband_stats_group, wait_max_ns),
	KEY("service_ns",     STATS_U64, struct ioband_stats_group, service_ns),
	KEY("finish_tag",     STATS_U64, struct ioband_stats_group, finish_tag),
	OPT_KEY("min_kbps", struct ioband_stats_group, min_kbps, has_range),
	OPT_KEY("max_kbps", struct ioband_stats_group, max_kbps, has_range),
	OPT_KEY("writeback_waits", struct ioband_stats_group, writeback_waits,
		has_writeback),
	OPT_KEY("writeback_wait_ns", struct ioband_stats_group,
		writeback_wait_ns, has_writeback),
	OPT_KEY("open_ios", struct ioband_stats_group, open_ios, has_open),
	OPT_KEY("parent", struct ioband_stats_group, parent, has_parent),
};

#define NR_DOMAIN_KEYS	(sizeof(domain_keys) / sizeof(*domain_keys))
#define NR_GROUP_KEYS	(sizeof(group_keys) / sizeof(*group_keys))
#define NR_KEYS_MAX	(NR_DOMAIN_KEYS > NR_GROUP_KEYS ? NR_DOMAIN_KEYS : NR_GROUP_KEYS)

static int parse_stats_value(const struct stats_key *key, const char *s,
			     size_t len, char *base)
{
	struct token tok = { s, len };
	void *field = base + key->offset;

	switch (key->kind) {
	case STATS_GROUP_ID:
		/* Only group records have an id: @base is their struct. */
		if (len == 2 && !memcmp(s, "-1", 2)) {
			((struct ioband_stats_group *)base)->is_default = 1;
			return 0;
		}
		return parse_u64(s, len, UINT64_MAX, field) ? -EINVAL : 0;
	case STATS_WORD:
		if (!len)
			return -EINVAL;
		return copy_token(&tok, field, IOBAND_TYPE_MAX + 1);
	case STATS_DOMAIN:
		if (!len)
			return -EINVAL;
		return copy_token(&tok, field, IOBAND_DOMAIN_ID_MAX + 1);
	default:
		return parse_u64(s, len, UINT64_MAX, field) ? -EINVAL : 0;
	}
}

static void free_fields(struct ioband_stats_field *fields, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(fields[i].key);
		free(fields[i].value);
	}
	free(fields);
}

/* Keep "key=value" (@eq at the '=', @end after the value). */
static int add_field(struct ioband_stats_field **fields, size_t *n,
		     const char *key, const char *eq, const char *end)
{
	struct ioband_stats_field *grown, *f;

	grown = realloc(*fields, (*n + 1) * sizeof(**fields));
	if (!grown)
		return -ENOMEM;
	*fields = grown;
	f = &grown[*n];
	f->key = strndup(key, eq - key);
	f->value = strndup(eq + 1, end - eq - 1);
	if (!f->key || !f->value) {
		free(f->key);
		free(f->value);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

const char *ioband_stats_field(const struct ioband_stats_field *fields,
			       size_t n, const char *key)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(fields[i].key, key))
			return fields[i].value;
	return NULL;
}

int ioband_stats_number(const char *s, uint64_t *v)
{
	uint64_t n = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (UINT64_MAX - (*s - '0')) / 10)
			return 0;
		n = n * 10 + (*s - '0');
	}
	*v = n;
	return 1;
}

/*
 * Parse one record, the @len chars at @line, into @base with @keys, and
 * keep each of its fields in *@fields. Fields are "key=value" separated
 * by single spaces. Unknown keys are only kept (a newer kernel may add
 * some); a key given twice, or a known one missing unless optional, makes
 * the record malformed. Returns 0, -EINVAL or -ENOMEM.
 */
static int parse_stats_record(const char *line, size_t len,
			      const struct stats_key *keys, size_t nkeys,
			      void *base, struct ioband_stats_field **fields,
			      size_t *nr_fields)
{
	const char *p = line, *end = line + len;
	char seen[NR_KEYS_MAX] = { 0 };
	size_t i;

	while (p < end) {
		const char *sp = memchr(p, ' ', end - p);
		const char *fend = sp ? sp : end;
		const char *eq = memchr(p, '=', fend - p);

		if (!eq || eq == p)
			return -EINVAL;
		for (i = 0; i < *nr_fields; i++)
			if (strlen((*fields)[i].key) == (size_t)(eq - p) &&
			    !memcmp((*fields)[i].key, p, eq - p))
				return -EINVAL;
		if (add_field(fields, nr_fields, p, eq, fend))
			return -ENOMEM;
		for (i = 0; i < nkeys; i++) {
			size_t klen = strlen(keys[i].name);

			if (klen != (size_t)(eq - p) || memcmp(p, keys[i].name, klen))
				continue;
			if (seen[i] || parse_stats_value(&keys[i], eq + 1,
							 fend - eq - 1, base))
				return -EINVAL;
			seen[i] = 1;
			if (keys[i].optional)
				*(int *)((char *)base + keys[i].has_offset) = 1;
			break;
		}
		if (!sp)
			break;
		p = sp + 1;
		if (p == end)		/* a trailing space */
			return -EINVAL;
	}
	for (i = 0; i < nkeys; i++)
		if (!seen[i] && !keys[i].optional)
			return -EINVAL;
	return 0;
}

/* Does the record at @line start with "@name="? */
static int record_is(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && !memcmp(line, name, n) && line[n] == '=';
}

static int add_stats_group(struct ioband_stats *st, const char *line, size_t len)
{
	struct ioband_stats_group g, *groups;
	size_t i;
	int rc;

	memset(&g, 0, sizeof(g));
	rc = parse_stats_record(line, len, group_keys, NR_GROUP_KEYS, &g,
				&g.fields, &g.nr_fields);
	/* The default group comes first, and only there. */
	if (!rc && g.is_default != !st->nr_groups)
		rc = -EINVAL;
	for (i = 1; !rc && i < st->nr_groups; i++)
		if (st->groups[i].id == g.id)
			rc = -EINVAL;
	groups = rc ? NULL : realloc(st->groups,
				     (st->nr_groups + 1) * sizeof(*groups));
	if (!groups) {
		free_fields(g.fields, g.nr_fields);
		return rc ? rc : -ENOMEM;
	}
	groups[st->nr_groups++] = g;
	st->groups = groups;
	return 0;
}

static int parse_stats_lines(const char *text, struct ioband_stats *st)
{
	const char *p = text;
	int first = 1, rc;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (first) {
			if (!record_is(p, len, "domain"))
				return -EINVAL;
			rc = parse_stats_record(p, len, domain_keys,
						NR_DOMAIN_KEYS, st, &st->fields,
						&st->nr_fields);
			if (rc)
				return rc;
			first = 0;
		} else if (record_is(p, len, "group")) {
			rc = add_stats_group(st, p, len);
			if (rc)
				return rc;
		} else if (len && !memchr(p, '=', len)) {
			return -EINVAL;
		}
		/* Other records are a newer kernel's: skipped. */
		if (!nl)
			break;
		p = nl + 1;
	}
	return st->nr_groups ? 0 : -EINVAL;
}

/*
 * Parse the reply to the "stats" message. Returns 0, -EINVAL on anything
 * malformed (no domain record first, no default group first, a known key
 * missing or repeated, a bad number, a group listed twice) or -ENOMEM; on
 * error @out holds nothing to free.
 */
int ioband_parse_stats(const char *text, struct ioband_stats *out)
{
	struct ioband_stats st;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = parse_stats_lines(text, &st);
	if (rc) {
		ioband_stats_free(&st);
		return rc;
	}
	st.has_sched = 1;
	*out = st;
	return 0;
}

void ioband_stats_free(struct ioband_stats *st)
{
	size_t i;

	for (i = 0; i < st->nr_groups; i++)
		free_fields(st->groups[i].fields, st->groups[i].nr_fields);
	free_fields(st->fields, st->nr_fields);
	free(st->groups);
	memset(st, 0, sizeof(*st));
}

/*
 * The same model from the classic status line and the table, for a module
 * without the "stats" message: weights and counters, no queue or wait.
 */
int ioband_stats_from_status(const struct ioband_table_args *t,
			     const struct ioband_status *status,
			     struct ioband_stats *out)
{
	struct ioband_stats st;
	size_t i;

	memset(&st, 0, sizeof(st));
	memcpy(st.domain, status->domain, sizeof(st.domain));
	memcpy(st.policy, t->policy, sizeof(st.policy));
	st.token_base = t->token_base;
	st.io_throttle = t->io_throttle;
	st.io_limit = t->io_limit;
	st.groups = calloc(status->nr_groups, sizeof(*st.groups));
	if (!st.groups)
		return -ENOMEM;
	st.nr_groups = status->nr_groups;
	for (i = 0; i < st.nr_groups; i++) {
		const struct ioband_group_stat *s = &status->groups[i];
		struct ioband_stats_group *g = &st.groups[i];
		const struct ioband_weight *w;

		g->is_default = s->is_default;
		g->id = s->id;
		g->has_range = ioband_range_policy(t->policy);
		if (g->is_default) {
			g->weight = t->default_weight;
			g->min_kbps = t->default_min_kbps;
			g->max_kbps = t->default_max_kbps;
		} else {
			/* 0 when the group lost its weight between two ioctls. */
			w = ioband_table_find_weight(t, s->id);
			g->weight = w ? w->weight : 0;
			g->min_kbps = w ? w->min_kbps : 0;
			g->max_kbps = w ? w->max_kbps : 0;
			g->has_range = g->has_range && w;
		}
		g->reads = s->reads;
		g->read_sectors = s->read_sectors;
		g->writes = s->writes;
		g->write_sectors = s->write_sectors;
		g->delayed_reads = s->delayed_reads;
		g->delayed_writes = s->delayed_writes;
	}
	*out = st;
	return 0;
}

static const struct ioband_stats_group *find_group(const struct ioband_stats *st,
						   const struct ioband_stats_group *g)
{
	size_t i;

	if (!st)
		return NULL;
	for (i = 0; i < st->nr_groups; i++)
		if (st->groups[i].is_default == g->is_default &&
		    (g->is_default || st->groups[i].id == g->id))
			return &st->groups[i];
	return NULL;
}

/* A counter's growth; a counter that went back was reset: count from 0. */
static uint64_t delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

/*
 * Compute each group's activity between @prev (NULL: since the counters
 * started) and @cur, @interval_ns apart (0: unknown, no rates). A group
 * new in @cur counts from 0. @rates has cur->nr_groups entries.
 */
void ioband_stats_rates(const struct ioband_stats *prev,
			const struct ioband_stats *cur, uint64_t interval_ns,
			struct ioband_rates *rates)
{
	static const struct ioband_stats_group zero;
	int by_sectors = ioband_iosize_policy(cur->policy);
	double total = 0, secs = interval_ns / 1e9;
	size_t i;

	for (i = 0; i < cur->nr_groups; i++) {
		const struct ioband_stats_group *g = &cur->groups[i];
		const struct ioband_stats_group *p = find_group(prev, g);
		struct ioband_rates *r = &rates[i];
		uint64_t wait, open;

		if (!p)
			p = &zero;
		memset(r, 0, sizeof(*r));
		/*
		 * A reset between the samples: the whole of each counter is
		 * new, taken together rather than counter by counter.
		 */
		if (g->reads < p->reads || g->writes < p->writes)
			p = &zero;
		r->ios = delta(p->reads, g->reads) + delta(p->writes, g->writes);
		r->sectors = delta(p->read_sectors, g->read_sectors) +
			     delta(p->write_sectors, g->write_sectors);
		r->delayed = delta(p->delayed_reads, g->delayed_reads) +
			     delta(p->delayed_writes, g->delayed_writes);
		if (interval_ns) {
			r->has_rate = 1;
			r->iops = r->ios / secs;
			r->bytes_per_sec = r->sectors * 512.0 / secs;
		}
		wait = delta(p->wait_ns, g->wait_ns);
		if (cur->has_sched && r->ios) {
			r->has_wait = 1;
			r->wait_mean_ns = (double)wait / r->ios;
			/*
			 * What went down past the scheduler, while the device
			 * completed inline, has no service time.
			 */
			open = delta(p->open_ios, g->open_ios);
			if (open < r->ios) {
				r->has_service = 1;
				r->service_mean_ns = (double)delta(p->service_ns,
						g->service_ns) / (r->ios - open);
			}
		}
		total += by_sectors ? r->sectors : r->ios;
	}
	if (!total)
		return;
	for (i = 0; i < cur->nr_groups; i++) {
		rates[i].has_share = 1;
		rates[i].share = (by_sectors ? rates[i].sectors : rates[i].ios) / total;
	}
}

/* Like lsblk: 512B, 1K, 1.5M, 12.3G. */
void ioband_size_to_human(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	uint64_t whole = bytes, rem = 0;
	unsigned int exp = 0, frac;

	while (whole >= 1024 && exp < sizeof(units) - 2) {
		rem = whole % 1024;
		whole /= 1024;
		exp++;
	}
	/* One rounded decimal; 1023.96K rounds up to 1024.0K, not 1.0M. */
	frac = (rem * 10 + 512) / 1024;
	if (frac == 10) {
		whole++;
		frac = 0;
	}
	if (frac)
		snprintf(buf, len, "%llu.%u%c", (unsigned long long)whole, frac,
			 units[exp]);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)whole, units[exp]);
}
