// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The iobandtab file: parse it line by line (a bad line is reported with
 * its number and left out, the others still count) and write entries back.
 *
 *   # <name>  <device>            <options>                  <groups>
 *   tenants   PARTUUID=5e1c-01    policy=weight,default=50   a=200 b=100
 *   capped    /dev/sdc            policy=range-bw            db=10240:0
 *   uids      8:32                type=uid,domain=disk2      alice=300 1000=100
 *
 * Fields are separated by blanks; a field that starts with '#' starts a
 * comment, as does a line. In a field, \ooo (three octal digits) is that
 * character and \\ a backslash, as in fstab: \040 is a space. <options>
 * is "-" or "defaults" or a comma-separated list of domain=, type=,
 * policy=, default=, io_limit=, io_throttle=, token_base=, carryover=,
 * weights_from=.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iobandtab.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
	       c == '\n';
}

__attribute__((format(printf, 3, 4)))
static int bad(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Decode \ooo and \\ in place; -EINVAL on another backslash or a NUL. */
static int unescape(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (*r != '\\') {
			*w++ = *r++;
			continue;
		}
		if (r[1] == '\\') {
			*w++ = '\\';
			r += 2;
			continue;
		}
		if (r[1] < '0' || r[1] > '3' || r[2] < '0' || r[2] > '7' ||
		    r[3] < '0' || r[3] > '7')
			return -EINVAL;
		*w = (r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0');
		if (!*w)
			return -EINVAL;
		w++;
		r += 4;
	}
	*w = '\0';
	return 0;
}

/* Allocated, with blanks, controls, '\\', '#' and ',' escaped. */
char *iobandtab_escape(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *w = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '\\') {
			*w++ = '\\';
			*w++ = '\\';
		} else if (c <= ' ' || c == '#' || c == ',' || c == 0x7f) {
			w += sprintf(w, "\\%03o", c);
		} else {
			*w++ = c;
		}
	}
	*w = '\0';
	return out;
}

static int parse_uint(const char *s, unsigned int max, unsigned int *val)
{
	unsigned long long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > max)
			return -ERANGE;
	}
	*val = v;
	return 0;
}

static int copy_word(char *buf, size_t size, const char *s)
{
	if (!*s || strlen(s) >= size)
		return -EINVAL;
	strcpy(buf, s);
	return 0;
}

/*
 * The options field. The default group's spec is parsed after the policy
 * is known: *default_arg points at it.
 */
static int parse_options(char *opts, struct iobandtab_entry *e,
			 char **default_arg, char *err, size_t errlen)
{
	char *opt, *save = NULL;
	unsigned int seen = 0;
	static const char *const names[] = {
		"domain", "type", "policy", "default", "io_limit",
		"io_throttle", "token_base", "carryover", "weights_from",
	};

	if (!strcmp(opts, "-") || !strcmp(opts, "defaults"))
		return 0;
	for (opt = strtok_r(opts, ",", &save); opt;
	     opt = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(opt, '=');
		const char *val;
		size_t i;
		int rc = 0;

		if (!eq)
			return bad(err, errlen, "option '%s': want <option>=<value>",
				   opt);
		*eq = '\0';
		val = eq + 1;
		if (unescape(eq + 1))
			return bad(err, errlen, "bad escape in option %s: want "
				   "\\ooo (octal) or \\\\", opt);
		for (i = 0; i < sizeof(names) / sizeof(*names); i++)
			if (!strcmp(opt, names[i]))
				break;
		if (i == sizeof(names) / sizeof(*names))
			return bad(err, errlen, "unknown option '%s': want domain, "
				   "type, policy, default, io_limit, io_throttle, "
				   "token_base, carryover or weights_from", opt);
		if (seen & (1u << i))
			return bad(err, errlen, "option %s given twice", opt);
		seen |= 1u << i;
		switch (i) {
		case 0:
			if (copy_word(e->domain, sizeof(e->domain), val) ||
			    !ioband_valid_domain(e->domain))
				return bad(err, errlen, "domain '%s': want 1 to %d "
					   "characters", val, IOBAND_DOMAIN_ID_MAX);
			break;
		case 1:
			if (copy_word(e->group_type, sizeof(e->group_type), val) ||
			    !ioband_valid_group_type(val))
				return bad(err, errlen, "type '%s': want cgroup, uid, "
					   "user, gid, pid, pgrp or none", val);
			break;
		case 2:
			if (copy_word(e->policy, sizeof(e->policy), val) ||
			    !ioband_valid_policy(val))
				return bad(err, errlen, "policy '%s': want weight, "
					   "weight-iosize, range-bw, weight-range "
					   "or weight-time", val);
			break;
		case 3:
			*default_arg = (char *)val;
			break;
		case 4:
			rc = parse_uint(val, UINT_MAX, &e->io_limit);
			break;
		case 5:
			rc = parse_uint(val, UINT_MAX, &e->io_throttle);
			break;
		case 6:
			rc = parse_uint(val, UINT_MAX, &e->token_base);
			break;
		case 7:
			rc = parse_uint(val, UINT_MAX, &e->carryover);
			e->has_carryover = 1;
			break;
		case 8:
			if (iobandtab_weights_from(val, &val))
				return bad(err, errlen, "weights_from '%s': want "
					   "cgroup or cgroup:<subtree>", eq + 1);
			e->weights_from = strdup(eq + 1);
			if (!e->weights_from)
				return -ENOMEM;
			break;
		}
		if (rc)
			return bad(err, errlen, "%s '%s': want a number from 0 "
				   "to %u", opt, val, UINT_MAX);
	}
	return 0;
}

int iobandtab_weights_from(const char *spec, const char **subtree)
{
	if (!strcmp(spec, "cgroup")) {
		*subtree = "/";
		return 0;
	}
	if (strncmp(spec, "cgroup:", 7) || !spec[7])
		return -EINVAL;
	*subtree = spec + 7;
	return 0;
}

int iobandtab_add_group(struct iobandtab_entry *e, const char *key,
			const struct ioband_group_spec *spec)
{
	struct iobandtab_group *g;
	size_t i;

	for (i = 0; i < e->nr_groups; i++)
		if (!strcmp(e->groups[i].key, key))
			return -EEXIST;
	g = realloc(e->groups, (e->nr_groups + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	e->groups = g;
	g[e->nr_groups].key = strdup(key);
	if (!g[e->nr_groups].key)
		return -ENOMEM;
	g[e->nr_groups].spec = *spec;
	e->nr_groups++;
	return 0;
}

#define FIELDS_MAX	4096

/*
 * The device's knobs and default group as the kernel's table parser
 * takes them (the groups' specs are checked as they are read): an
 * io_limit or token_base out of the kernel's range is the line's error,
 * in the kernel's words, before apply builds a table.
 */
static int check_knobs(const struct iobandtab_entry *e, char *err,
		       size_t errlen)
{
	char nums[3][16], spec[IOBAND_GROUP_ARG_MAX + 1], detail[IOBAND_ERROR_MAX];
	struct ioband_table table;
	const char *error;
	char *argv[8];

	snprintf(nums[0], sizeof(nums[0]), "%u", e->io_throttle);
	snprintf(nums[1], sizeof(nums[1]), "%u", e->io_limit);
	snprintf(nums[2], sizeof(nums[2]), "%u", e->token_base);
	spec[0] = ':';
	if (ioband_format_spec(ioband_spec_of_policy(e->policy), &e->default_spec,
			       spec + 1, sizeof(spec) - 1))
		return bad(err, errlen, "the default group's spec is too long");
	argv[0] = "0:0";	/* the device is resolved when applied */
	argv[1] = (char *)e->domain;
	argv[2] = nums[0];
	argv[3] = nums[1];
	argv[4] = (char *)e->group_type;
	argv[5] = (char *)e->policy;
	argv[6] = nums[2];
	argv[7] = spec;
	error = ioband_parse_table(&table, 8, argv, detail, sizeof(detail));
	if (error)
		return bad(err, errlen, "%s", error);
	if (e->has_carryover && e->carryover > IOBAND_MAX_CARRYOVER)
		return bad(err, errlen, "carryover '%u': want a number 0..%u",
			   e->carryover, IOBAND_MAX_CARRYOVER);
	return 0;
}

static int parse_fields(char **f, size_t nf, struct iobandtab_entry *e,
			char *err, size_t errlen)
{
	enum ioband_spec spec;
	char *default_arg = NULL;
	size_t i;
	int rc;

	if (nf < 3)
		return bad(err, errlen, "want <name> <device> <options> "
			   "[<key>=<spec>...], got %zu field%s", nf,
			   nf == 1 ? "" : "s");
	for (i = 0; i < 2; i++)
		if (unescape(f[i]) || !*f[i])
			return bad(err, errlen, "bad escape in '%s': want \\ooo "
				   "(octal) or \\\\", f[i]);
	if (strchr(f[0], '/') || strlen(f[0]) > IOBANDTAB_NAME_MAX)
		return bad(err, errlen, "name '%s': want 1 to %d characters "
			   "without '/'", f[0], IOBANDTAB_NAME_MAX);
	e->name = strdup(f[0]);
	e->device = strdup(f[1]);
	if (!e->name || !e->device)
		return -ENOMEM;
	rc = parse_options(f[2], e, &default_arg, err, errlen);
	if (rc)
		return rc;
	if (!*e->domain) {
		if (copy_word(e->domain, sizeof(e->domain), e->name) ||
		    !ioband_valid_domain(e->domain))
			return bad(err, errlen, "name '%s' is longer than %d "
				   "characters: give domain=<id>", e->name,
				   IOBAND_DOMAIN_ID_MAX);
	}
	if (e->weights_from && strcmp(e->group_type, "cgroup"))
		return bad(err, errlen, "weights_from needs type cgroup, not %s",
			   e->group_type);
	if (e->weights_from && nf > 3)
		return bad(err, errlen, "group '%s': with weights_from the "
			   "groups and their weights come from the cgroups", f[3]);
	spec = ioband_spec_of_policy(e->policy);
	if (default_arg) {
		if (ioband_parse_spec(spec, default_arg, &e->default_spec))
			return bad(err, errlen, "default '%s': want %s under "
				   "policy %s", default_arg, ioband_spec_help(spec),
				   e->policy);
		e->has_default = 1;
	}
	for (i = 3; i < nf; i++) {
		struct ioband_group_spec g;
		char *key;

		if (!strcmp(e->group_type, "none"))
			return bad(err, errlen, "group '%s': type none has no "
				   "groups but the default one", f[i]);
		rc = ioband_split_spec_arg(spec, f[i], &key, &g);
		if (rc == -ENOMEM)
			return rc;
		if (rc == -EINVAL)
			return bad(err, errlen, "group '%s': want <key>=%s", f[i],
				   ioband_spec_help(spec));
		if (rc)
			return bad(err, errlen, "group '%s': want <key>=%s under "
				   "policy %s (weight 1..32767, min <= max or max "
				   "0)", f[i], ioband_spec_help(spec), e->policy);
		if (unescape(key) || !*key) {
			rc = bad(err, errlen, "group '%s': bad escape in the key",
				 f[i]);
			free(key);
			return rc;
		}
		if (!strcmp(key, "default")) {
			free(key);
			if (e->has_default)
				return bad(err, errlen, "the default group is "
					   "given twice");
			e->default_spec = g;
			e->has_default = 1;
			continue;
		}
		rc = iobandtab_add_group(e, key, &g);
		if (rc == -EEXIST)
			rc = bad(err, errlen, "group '%s' is given twice", key);
		free(key);
		if (rc)
			return rc;
	}
	return check_knobs(e, err, errlen);
}

/*
 * Parse one line (without its newline). Returns 1 and fills @e for an
 * entry, 0 for a blank or comment line, -EINVAL with a message in @err,
 * or -ENOMEM. On error @e holds nothing to free.
 */
int iobandtab_parse_line(const char *line, unsigned int lineno,
			 struct iobandtab_entry *e, char *err, size_t errlen)
{
	char *buf = strdup(line), *p, **f;
	size_t nf = 0;
	int rc;

	if (!buf)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->line = lineno;
	strcpy(e->group_type, "cgroup");
	strcpy(e->policy, "weight");
	e->default_spec.weight = IOBAND_DEFAULT_WEIGHT;

	f = calloc(FIELDS_MAX, sizeof(*f));
	if (!f) {
		free(buf);
		return -ENOMEM;
	}
	for (p = buf;;) {
		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (nf == FIELDS_MAX) {
			rc = bad(err, errlen, "more than %d fields", FIELDS_MAX);
			goto out;
		}
		if ((unsigned char)*p < ' ' || *p == 0x7f) {
			rc = bad(err, errlen, "a control character (0x%02x): "
				 "write it \\ooo", (unsigned char)*p);
			goto out;
		}
		f[nf++] = p;
		while (*p && !is_blank(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	rc = nf ? parse_fields(f, nf, e, err, errlen) : 0;
	if (!rc && nf)
		rc = 1;
out:
	if (rc < 0)
		iobandtab_entry_free(e);
	free(f);
	free(buf);
	return rc;
}

/*
 * Parse a whole file: each good line is an entry of *entries, each bad one
 * goes to @error (its line number and why) and is left out. A name given
 * on two lines is an error on the second. Returns the number of bad
 * lines, or -ENOMEM.
 */
int iobandtab_parse(const char *text, struct iobandtab_entry **entries,
		    size_t *n, iobandtab_error_fn error, void *ctx)
{
	struct iobandtab_entry *list = NULL, e, *grown;
	unsigned int lineno = 0;
	const char *p = text;
	size_t count = 0, i;
	int nbad = 0, rc;
	char err[512];

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, len);

		lineno++;
		if (!line)
			goto nomem;
		if (strlen(line) != len) {
			snprintf(err, sizeof(err), "a NUL character");
			rc = -EINVAL;
		} else {
			rc = iobandtab_parse_line(line, lineno, &e, err,
						  sizeof(err));
		}
		free(line);
		if (rc == -ENOMEM)
			goto nomem;
		for (i = 0; rc == 1 && i < count; i++) {
			if (strcmp(list[i].name, e.name))
				continue;
			snprintf(err, sizeof(err), "device %s is already given "
				 "on line %u", e.name, list[i].line);
			iobandtab_entry_free(&e);
			rc = -EINVAL;
		}
		if (rc < 0) {
			nbad++;
			if (error)
				error(ctx, lineno, err);
		} else if (rc == 1) {
			grown = realloc(list, (count + 1) * sizeof(*list));
			if (!grown) {
				iobandtab_entry_free(&e);
				goto nomem;
			}
			list = grown;
			list[count++] = e;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	*entries = list;
	*n = count;
	return nbad;
nomem:
	iobandtab_free(list, count);
	return -ENOMEM;
}

void iobandtab_entry_free(struct iobandtab_entry *e)
{
	size_t i;

	for (i = 0; i < e->nr_groups; i++)
		free(e->groups[i].key);
	free(e->groups);
	free(e->name);
	free(e->device);
	free(e->weights_from);
	memset(e, 0, sizeof(*e));
}

void iobandtab_free(struct iobandtab_entry *entries, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		iobandtab_entry_free(&entries[i]);
	free(entries);
}

/* Write @e as one line that iobandtab_parse_line() reads back. */
int iobandtab_format_entry(const struct iobandtab_entry *e, FILE *out)
{
	enum ioband_spec spec = ioband_spec_of_policy(e->policy);
	char *name = iobandtab_escape(e->name);
	char *dev = iobandtab_escape(e->device);
	char *domain = iobandtab_escape(e->domain);
	char s[48];
	size_t i;
	int rc = -ENOMEM;

	if (!name || !dev || !domain)
		goto out;
	ioband_format_spec(spec, &e->default_spec, s, sizeof(s));
	fprintf(out, "%s %s domain=%s,type=%s,policy=%s,default=%s", name, dev,
		domain, e->group_type, e->policy, s);
	if (e->io_limit)
		fprintf(out, ",io_limit=%u", e->io_limit);
	if (e->io_throttle)
		fprintf(out, ",io_throttle=%u", e->io_throttle);
	if (e->token_base)
		fprintf(out, ",token_base=%u", e->token_base);
	if (e->has_carryover)
		fprintf(out, ",carryover=%u", e->carryover);
	if (e->weights_from) {
		char *from = iobandtab_escape(e->weights_from);

		if (!from)
			goto out;
		fprintf(out, ",weights_from=%s", from);
		free(from);
	}
	for (i = 0; i < e->nr_groups; i++) {
		char *key = iobandtab_escape(e->groups[i].key);

		if (!key)
			goto out;
		ioband_format_spec(spec, &e->groups[i].spec, s, sizeof(s));
		/* A key named "default" would be the default group. */
		fprintf(out, " %s%s=%s", strcmp(key, "default") ? "" : "./",
			key, s);
		free(key);
	}
	fputc('\n', out);
	rc = ferror(out) ? -EIO : 0;
out:
	free(name);
	free(dev);
	free(domain);
	return rc;
}
