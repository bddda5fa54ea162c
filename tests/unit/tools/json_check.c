// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A strict JSON validator: one value, RFC 8259 grammar, UTF-8 not checked
 * beyond control characters. Recursive descent with a depth limit.
 */
#include <string.h>

#include "json_check.h"

#define JSON_DEPTH_MAX	64

struct json {
	const char *p;
	int depth;
};

static int value(struct json *j);

static void skip_ws(struct json *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int string(struct json *j)
{
	if (*j->p != '"')
		return 0;
	j->p++;
	for (;;) {
		unsigned char c = *j->p;

		if (c == '"') {
			j->p++;
			return 1;
		}
		if (c < 0x20)		/* includes the NUL at the end */
			return 0;
		if (c == '\\') {
			j->p++;
			if (*j->p == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (!is_hex(j->p[i]))
						return 0;
				j->p += 5;
				continue;
			}
			if (!*j->p || !strchr("\"\\/bfnrt", *j->p))
				return 0;
		}
		j->p++;
	}
}

static int number(struct json *j)
{
	if (*j->p == '-')
		j->p++;
	if (*j->p == '0')
		j->p++;
	else if (is_digit(*j->p))
		while (is_digit(*j->p))
			j->p++;
	else
		return 0;
	if (*j->p == '.') {
		j->p++;
		if (!is_digit(*j->p))
			return 0;
		while (is_digit(*j->p))
			j->p++;
	}
	if (*j->p == 'e' || *j->p == 'E') {
		j->p++;
		if (*j->p == '+' || *j->p == '-')
			j->p++;
		if (!is_digit(*j->p))
			return 0;
		while (is_digit(*j->p))
			j->p++;
	}
	return 1;
}

static int literal(struct json *j, const char *word)
{
	size_t len = strlen(word);

	if (strncmp(j->p, word, len))
		return 0;
	j->p += len;
	return 1;
}

/* An object or an array: the members between @open and @close. */
static int container(struct json *j, char close, int keys)
{
	if (++j->depth > JSON_DEPTH_MAX)
		return 0;
	j->p++;
	skip_ws(j);
	if (*j->p == close) {
		j->p++;
		j->depth--;
		return 1;
	}
	for (;;) {
		skip_ws(j);
		if (keys) {
			if (!string(j))
				return 0;
			skip_ws(j);
			if (*j->p != ':')
				return 0;
			j->p++;
		}
		if (!value(j))
			return 0;
		skip_ws(j);
		if (*j->p == close) {
			j->p++;
			j->depth--;
			return 1;
		}
		if (*j->p != ',')
			return 0;
		j->p++;
	}
}

static int value(struct json *j)
{
	skip_ws(j);
	switch (*j->p) {
	case '{':
		return container(j, '}', 1);
	case '[':
		return container(j, ']', 0);
	case '"':
		return string(j);
	case 't':
		return literal(j, "true");
	case 'f':
		return literal(j, "false");
	case 'n':
		return literal(j, "null");
	default:
		return number(j);
	}
}

/* 1 if @text is one JSON value (with blanks around); else 0, *error_at set. */
int json_valid(const char *text, size_t *error_at)
{
	struct json j = { text, 0 };
	int ok = value(&j);

	if (ok) {
		skip_ws(&j);
		ok = !*j.p;
	}
	if (!ok && error_at)
		*error_at = j.p - text;
	return ok;
}
