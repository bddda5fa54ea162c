// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Build and parse dm-ioband tables and status lines.
 *
 * Table:  <device> <ioband_device_id> <io_throttle> <io_limit> <group_type>
 *         <policy> <token_base> :<default_weight> [<id>:<weight> ...]
 * Status: <ioband_device_id> -1 <7 counters of the default group>
 *         [<id> <6 counters> ...]
 *
 * The input comes from the kernel (or from a fuzzer): every token is
 * checked, numbers never overflow, and nothing is read past the NUL.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband.h"

static const char *const group_types[] = {
	"none", "cgroup", "uid", "user", "gid", "pid", "pgrp",
};

/* range-bw takes <min>:<max> pairs instead of weights: not parsed yet. */
static const char *const policies[] = {
	"weight", "weight-iosize",
};

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

const struct ioband_weight *ioband_table_find_weight(const struct ioband_table *t,
						     uint64_t id)
{
	size_t i;

	for (i = 0; i < t->nr_weights; i++)
		if (t->weights[i].id == id)
			return &t->weights[i];
	return NULL;
}

/* -EEXIST if @id already has a weight: one group, one weight. */
int ioband_table_add_weight(struct ioband_table *t, uint64_t id,
			    unsigned int weight)
{
	struct ioband_weight *w;

	if (weight < IOBAND_WEIGHT_MIN || weight > IOBAND_WEIGHT_MAX)
		return -ERANGE;
	if (ioband_table_find_weight(t, id))
		return -EEXIST;
	w = realloc(t->weights, (t->nr_weights + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	w[t->nr_weights].id = id;
	w[t->nr_weights].weight = weight;
	t->weights = w;
	t->nr_weights++;
	return 0;
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
	char *buf = NULL;
	size_t size, i;
	FILE *f;

	if (!valid_device(t->device) || !ioband_valid_domain(t->domain) ||
	    !ioband_valid_group_type(t->group_type) ||
	    !ioband_valid_policy(t->policy) ||
	    t->default_weight < IOBAND_WEIGHT_MIN ||
	    t->default_weight > IOBAND_WEIGHT_MAX)
		return -EINVAL;
	for (i = 0; i < t->nr_weights; i++)
		if (t->weights[i].weight < IOBAND_WEIGHT_MIN ||
		    t->weights[i].weight > IOBAND_WEIGHT_MAX)
			return -EINVAL;

	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s %s %u %u %s %s %u :%u", t->device, t->domain,
		t->io_throttle, t->io_limit, t->group_type, t->policy,
		t->token_base, t->default_weight);
	for (i = 0; i < t->nr_weights; i++)
		fprintf(f, " %llu:%u", (unsigned long long)t->weights[i].id,
			t->weights[i].weight);
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

static int parse_table_weight(const struct token *tok, struct ioband_table *t)
{
	const char *colon = memchr(tok->s, ':', tok->len);
	unsigned int weight;
	uint64_t id;
	size_t idlen;

	if (!colon)
		return -EINVAL;
	idlen = colon - tok->s;
	if (parse_u64(tok->s, idlen, UINT64_MAX, &id) ||
	    parse_weight_len(colon + 1, tok->len - idlen - 1, &weight))
		return -EINVAL;
	/* A group given twice is malformed, not a reason to merge. */
	switch (ioband_table_add_weight(t, id, weight)) {
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
	    parse_weight_len(tok.s + 1, tok.len - 1, &t->default_weight))
		return -EINVAL;

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
