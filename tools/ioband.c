// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Build and parse dm-ioband tables and status lines.
 *
 * Table:  <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *         <policy> <token_base> :<default spec> [<id>:<spec> ...]
 *         where a spec is, by policy, <weight> (weight, weight-iosize),
 *         <min>:<max> (range-bw, KB/s) or <weight>:<min>:<max>
 *         (weight-range).
 * Status: <ioband_device_id> -1 <6 counters of the default group>
 *         [<id> <6 counters> ...]
 * Stats:  the reply to the "stats" message, see ioband_parse_stats().
 *
 * The input comes from the kernel (or from a fuzzer): every token is
 * checked, numbers never overflow, and nothing is read past the NUL.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"

static const char *const group_types[] = {
	"none", "cgroup", "uid", "user", "gid", "pid", "pgrp",
};

static const char *const policies[] = {
	"weight", "weight-iosize", "range-bw", "weight-range",
};

/* The policies whose cost is a sector count rather than an IO. */
int ioband_iosize_policy(const char *policy)
{
	return !strcmp(policy, "weight-iosize");
}

/* The policies that give groups a minimum and a maximum bandwidth. */
int ioband_range_policy(const char *policy)
{
	return !strcmp(policy, "range-bw") || !strcmp(policy, "weight-range");
}

enum ioband_spec ioband_policy_spec(const char *policy)
{
	if (!strcmp(policy, "range-bw"))
		return IOBAND_SPEC_RANGE;
	if (!strcmp(policy, "weight-range"))
		return IOBAND_SPEC_WEIGHT_RANGE;
	return IOBAND_SPEC_WEIGHT;
}

/* How a group's spec is written, for messages. */
const char *ioband_spec_help(enum ioband_spec spec)
{
	switch (spec) {
	case IOBAND_SPEC_RANGE:
		return "<min>:<max> (KB/s, max 0: no limit)";
	case IOBAND_SPEC_WEIGHT_RANGE:
		return "<weight>:<min>:<max> (KB/s, max 0: no limit)";
	default:
		return "<weight>";
	}
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

int ioband_valid_group_type(const char *type)
{
	return in_list(type, group_types, sizeof(group_types) / sizeof(*group_types));
}

int ioband_valid_policy(const char *policy)
{
	return in_list(policy, policies, sizeof(policies) / sizeof(*policies));
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

	if (!len || len > IOBAND_DOMAIN_MAX)
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

static int parse_uint(const struct token *tok, unsigned int *val)
{
	uint64_t v;
	int rc = parse_u64(tok->s, tok->len, UINT_MAX, &v);

	if (!rc)
		*val = v;
	return rc;
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

static int parse_weight_len(const char *s, size_t len, unsigned int *weight)
{
	uint64_t v;
	int rc;

	/* "-1" is a number, out of range rather than malformed. */
	if (len > 1 && s[0] == '-')
		rc = parse_u64(s + 1, len - 1, UINT64_MAX, &v) ? -EINVAL : -ERANGE;
	else
		rc = parse_u64(s, len, UINT64_MAX, &v);
	if (rc)
		return rc;
	if (v < IOBAND_WEIGHT_MIN || v > IOBAND_WEIGHT_MAX)
		return -ERANGE;
	*weight = v;
	return 0;
}

/* Returns -EINVAL if @str is not a number, -ERANGE if out of 1..32767. */
int ioband_parse_weight(const char *str, unsigned int *weight)
{
	return parse_weight_len(str, strlen(str), weight);
}

/*
 * Split "KEY=W" at the last '=' (a cgroup name may hold one); *key is
 * allocated. Returns -EINVAL if there is no '=' or an empty side, -ERANGE if
 * W is not a weight (not a number, or out of range), or -ENOMEM.
 */
int ioband_split_weight_arg(const char *arg, char **key, unsigned int *weight)
{
	const char *eq = strrchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return -EINVAL;
	if (ioband_parse_weight(eq + 1, weight))
		return -ERANGE;
	*key = strndup(arg, eq - arg);
	return *key ? 0 : -ENOMEM;
}

/* min <= max, or max 0: no limit. */
int ioband_valid_range(uint32_t min_kbps, uint32_t max_kbps)
{
	return !max_kbps || min_kbps <= max_kbps;
}

static int parse_kbps_len(const char *s, size_t len, uint32_t *kbps)
{
	uint64_t v;
	int rc = parse_u64(s, len, UINT32_MAX, &v);

	if (!rc)
		*kbps = v;
	return rc;
}

/*
 * Parse the @len chars at @s as a spec of @spec into @out (weight 100
 * under range-bw, range 0:0 under the weight policies). Returns -EINVAL
 * when malformed, -ERANGE when a number is out of range or min > max.
 */
static int parse_spec_len(enum ioband_spec spec, const char *s, size_t len,
			  struct ioband_group_spec *out)
{
	const char *end = s + len, *c1, *c2 = NULL;
	struct ioband_group_spec g = { IOBAND_WEIGHT_DEFAULT, 0, 0 };
	size_t want = spec == IOBAND_SPEC_WEIGHT ? 0 :
		      spec == IOBAND_SPEC_RANGE ? 1 : 2, n = 0;
	const char *p;
	int rc;

	for (p = s; p < end; p++)
		if (*p == ':')
			n++;
	if (n != want)
		return -EINVAL;
	c1 = memchr(s, ':', len);
	if (c1)
		c2 = memchr(c1 + 1, ':', end - c1 - 1);
	switch (spec) {
	case IOBAND_SPEC_WEIGHT:
		rc = parse_weight_len(s, len, &g.weight);
		break;
	case IOBAND_SPEC_RANGE:
		rc = parse_kbps_len(s, c1 - s, &g.min_kbps);
		if (!rc)
			rc = parse_kbps_len(c1 + 1, end - c1 - 1, &g.max_kbps);
		break;
	default:
		rc = parse_weight_len(s, c1 - s, &g.weight);
		if (!rc)
			rc = parse_kbps_len(c1 + 1, c2 - c1 - 1, &g.min_kbps);
		if (!rc)
			rc = parse_kbps_len(c2 + 1, end - c2 - 1, &g.max_kbps);
		break;
	}
	if (rc)
		return rc;
	if (!ioband_valid_range(g.min_kbps, g.max_kbps))
		return -ERANGE;
	*out = g;
	return 0;
}

int ioband_parse_spec(enum ioband_spec spec, const char *str,
		      struct ioband_group_spec *out)
{
	return parse_spec_len(spec, str, strlen(str), out);
}

/* Render a spec as the table writes it (without the id and first ':'). */
int ioband_format_spec(enum ioband_spec spec, const struct ioband_group_spec *g,
		       char *buf, size_t len)
{
	int n;

	switch (spec) {
	case IOBAND_SPEC_RANGE:
		n = snprintf(buf, len, "%u:%u", g->min_kbps, g->max_kbps);
		break;
	case IOBAND_SPEC_WEIGHT_RANGE:
		n = snprintf(buf, len, "%u:%u:%u", g->weight, g->min_kbps,
			     g->max_kbps);
		break;
	default:
		n = snprintf(buf, len, "%u", g->weight);
		break;
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
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

	if (!eq || eq == arg || !eq[1])
		return -EINVAL;
	if (ioband_parse_spec(spec, eq + 1, out))
		return -ERANGE;
	*key = strndup(arg, eq - arg);
	return *key ? 0 : -ENOMEM;
}

void ioband_table_default_spec(const struct ioband_table *t,
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

const struct ioband_weight *ioband_table_find_weight(const struct ioband_table *t,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < t->nr_weights; i++)
		if (t->weights[i].id == id)
			return &t->weights[i];
	return NULL;
}

/* -EEXIST if @id is already there: one group, one spec. */
int ioband_table_add_group(struct ioband_table *t, uint64_t id,
			   const struct ioband_group_spec *g)
{
	struct ioband_weight *w;

	if (g->weight < IOBAND_WEIGHT_MIN || g->weight > IOBAND_WEIGHT_MAX ||
	    !ioband_valid_range(g->min_kbps, g->max_kbps))
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

int ioband_table_add_weight(struct ioband_table *t, uint64_t id,
			    unsigned int weight)
{
	struct ioband_group_spec g = { weight, 0, 0 };

	return ioband_table_add_group(t, id, &g);
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

/* Render the constructor arguments; *params is allocated. */
int ioband_format_params(const struct ioband_table *t, char **params)
{
	struct ioband_group_spec g;
	enum ioband_spec spec;
	char *buf = NULL, s[48];
	size_t size, i;
	FILE *f;

	if (!valid_device(t->device) || !ioband_valid_domain(t->domain) ||
	    !ioband_valid_group_type(t->group_type) ||
	    !ioband_valid_policy(t->policy) ||
	    t->default_weight < IOBAND_WEIGHT_MIN ||
	    t->default_weight > IOBAND_WEIGHT_MAX ||
	    !ioband_valid_range(t->default_min_kbps, t->default_max_kbps))
		return -EINVAL;
	for (i = 0; i < t->nr_weights; i++)
		if (t->weights[i].weight < IOBAND_WEIGHT_MIN ||
		    t->weights[i].weight > IOBAND_WEIGHT_MAX ||
		    !ioband_valid_range(t->weights[i].min_kbps,
					t->weights[i].max_kbps))
			return -EINVAL;

	spec = ioband_policy_spec(t->policy);
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	ioband_table_default_spec(t, &g);
	ioband_format_spec(spec, &g, s, sizeof(s));
	fprintf(f, "%s %s %u %u %s %s %u :%s", t->device, t->domain,
		t->io_throttle, t->io_limit, t->group_type, t->policy,
		t->token_base, s);
	for (i = 0; i < t->nr_weights; i++) {
		ioband_group_to_spec(&t->weights[i], &g);
		ioband_format_spec(spec, &g, s, sizeof(s));
		fprintf(f, " %llu:%s", (unsigned long long)t->weights[i].id, s);
	}
	if (ferror(f) | fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	*params = buf;
	return 0;
}

void ioband_table_free(struct ioband_table *t)
{
	free(t->device);
	free(t->weights);
	memset(t, 0, sizeof(*t));
}

#define IOBAND_GROUP_FIELDS_MAX	4	/* <id>:<weight>:<min>:<max> */

/*
 * Split a table group "<id>:<a>[:<b>...]" at its colons; returns the number
 * of fields, or 0 when there are too many.
 */
static size_t split_group(const struct token *tok, struct token *fields)
{
	const char *p = tok->s, *end = tok->s + tok->len;
	size_t n = 0;

	for (;;) {
		const char *colon = memchr(p, ':', end - p);

		if (n == IOBAND_GROUP_FIELDS_MAX)
			return 0;
		fields[n].s = p;
		fields[n].len = (colon ? colon : end) - p;
		n++;
		if (!colon)
			return n;
		p = colon + 1;
	}
}

/*
 * A group "<id>:<spec>" in the policy's form: <id>:<weight> (weight,
 * weight-iosize), <id>:<min>:<max> (range-bw), <id>:<weight>:<min>:<max>
 * (weight-range).
 */
static int parse_table_weight(const struct token *tok, struct ioband_table *t)
{
	struct token f[IOBAND_GROUP_FIELDS_MAX];
	enum ioband_spec spec = ioband_policy_spec(t->policy);
	struct ioband_group_spec g;
	size_t n = spec == IOBAND_SPEC_WEIGHT ? 2 :
		   spec == IOBAND_SPEC_RANGE ? 3 : 4;
	uint64_t id;

	if (split_group(tok, f) != n)
		return -EINVAL;
	if (parse_u64(f[0].s, f[0].len, UINT64_MAX, &id) ||
	    parse_spec_len(spec, f[1].s, tok->s + tok->len - f[1].s, &g))
		return -EINVAL;
	/* A group given twice is malformed, not a reason to merge. */
	switch (ioband_table_add_group(t, id, &g)) {
	case 0:
		return 0;
	case -ENOMEM:
		return -ENOMEM;
	default:
		return -EINVAL;
	}
}

static int parse_table_fields(const char *params, struct ioband_table *t)
{
	struct ioband_group_spec g;
	struct token tok;
	const char *pos = params;
	int rc;

	if (count_tokens(params) < 8)
		return -EINVAL;

	next_token(&pos, &tok);
	t->device = strndup(tok.s, tok.len);
	if (!t->device)
		return -ENOMEM;

	next_token(&pos, &tok);
	if (copy_token(&tok, t->domain, sizeof(t->domain)))
		return -EINVAL;

	next_token(&pos, &tok);
	if (parse_uint(&tok, &t->io_throttle))
		return -EINVAL;
	next_token(&pos, &tok);
	if (parse_uint(&tok, &t->io_limit))
		return -EINVAL;

	next_token(&pos, &tok);
	if (copy_token(&tok, t->group_type, sizeof(t->group_type)) ||
	    !ioband_valid_group_type(t->group_type))
		return -EINVAL;
	next_token(&pos, &tok);
	if (copy_token(&tok, t->policy, sizeof(t->policy)) ||
	    !ioband_valid_policy(t->policy))
		return -EINVAL;

	next_token(&pos, &tok);
	if (parse_uint(&tok, &t->token_base))
		return -EINVAL;

	next_token(&pos, &tok);
	if (tok.s[0] != ':' ||
	    parse_spec_len(ioband_policy_spec(t->policy), tok.s + 1,
			   tok.len - 1, &g))
		return -EINVAL;
	t->default_weight = g.weight;
	t->default_min_kbps = g.min_kbps;
	t->default_max_kbps = g.max_kbps;

	while (next_token(&pos, &tok)) {
		rc = parse_table_weight(&tok, t);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Parse the table arguments as "dmsetup table" prints them. Returns 0,
 * -EINVAL on anything malformed (including a group given twice) or -ENOMEM;
 * on error @out holds nothing to free.
 */
int ioband_parse_table(const char *params, struct ioband_table *out)
{
	struct ioband_table t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = parse_table_fields(params, &t);
	if (rc) {
		ioband_table_free(&t);
		return rc;
	}
	*out = t;
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
	STATS_DOMAIN,		/* a string of at most IOBAND_DOMAIN_MAX chars */
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
		return copy_token(&tok, field, IOBAND_DOMAIN_MAX + 1);
	default:
		return parse_u64(s, len, UINT64_MAX, field) ? -EINVAL : 0;
	}
}

/*
 * Parse one record, the @len chars at @line, into @base with @keys.
 * Fields are "key=value" separated by single spaces. Unknown keys are
 * skipped (a newer kernel may add some); a known key given twice, or
 * missing unless optional, makes the record malformed.
 */
static int parse_stats_record(const char *line, size_t len,
			      const struct stats_key *keys, size_t nkeys,
			      void *base)
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

	memset(&g, 0, sizeof(g));
	if (parse_stats_record(line, len, group_keys, NR_GROUP_KEYS, &g))
		return -EINVAL;
	/* The default group comes first, and only there. */
	if (g.is_default != !st->nr_groups)
		return -EINVAL;
	for (i = 1; i < st->nr_groups; i++)
		if (st->groups[i].id == g.id)
			return -EINVAL;
	groups = realloc(st->groups, (st->nr_groups + 1) * sizeof(*groups));
	if (!groups)
		return -ENOMEM;
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
			if (!record_is(p, len, "domain") ||
			    parse_stats_record(p, len, domain_keys,
					       NR_DOMAIN_KEYS, st))
				return -EINVAL;
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
	free(st->groups);
	memset(st, 0, sizeof(*st));
}

/*
 * The same model from the classic status line and the table, for a module
 * without the "stats" message: weights and counters, no queue or wait.
 */
int ioband_stats_from_status(const struct ioband_table *t,
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
		uint64_t wait;

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
			r->service_mean_ns =
				(double)delta(p->service_ns, g->service_ns) / r->ios;
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
