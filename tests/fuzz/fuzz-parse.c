// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the text parsers of dm-ioband/ioband-core.c:
 * ioband_parse_u64() (token, io_limit, ... and group ids) and
 * ioband_parse_group_weight() (a table's "<id>:<weight>" / ":<weight>",
 * the weight message's "[<id>:]<weight>").
 *
 * Each input is checked against a slow, obviously right reference parser
 * (differential fuzzing), besides ASan/UBSan: same verdict, same values,
 * outputs untouched on failure, @id untouched for the default group.
 *
 * Input: byte 0 selects bare_weight (bit 0); the rest is the text, cut at
 * the first NUL (as the kernel's argv strings are).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ioband-core.h"

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz-parse: CHECK(%s) failed on '%s'\n", \
				#cond, text);				\
			abort();					\
		}							\
	} while (0)

/* Reference: [0-9]+ whose value fits in 64 bits, computed in 128 bits. */
static int ref_u64(const char *s, size_t len, u64 *value)
{
	unsigned __int128 v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned int)(s[i] - '0');
		if (v > (unsigned __int128)UINT64_MAX)
			return -1;
	}
	*value = (u64)v;
	return 0;
}

static int ref_group_weight(const char *s, bool bare, u64 *id, u32 *weight,
			    bool *is_default)
{
	const char *colon = strchr(s, ':');
	u64 i = 0, w;

	if (!colon) {
		if (!bare || ref_u64(s, strlen(s), &w))
			return -1;
		*is_default = true;
	} else {
		if (colon != s && ref_u64(s, (size_t)(colon - s), &i))
			return -1;
		if (ref_u64(colon + 1, strlen(colon + 1), &w))
			return -1;
		*is_default = colon == s;
		*id = i;
	}
	if (w < IOBAND_MIN_WEIGHT || w > IOBAND_MAX_WEIGHT)
		return -1;
	*weight = (u32)w;
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *text;
	bool bare;
	u64 v = 0x5a5a5a5a5a5a5a5aULL, rv = 0;
	int r, rr;

	if (size < 1)
		return 0;
	bare = data[0] & 1;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	/* ioband_parse_u64 */
	r = ioband_parse_u64(text, &v);
	rr = ref_u64(text, strlen(text), &rv);
	CHECK(r == 0 || r == -1);
	CHECK(r == rr);
	if (!r)
		CHECK(v == rv);
	else
		CHECK(v == 0x5a5a5a5a5a5a5a5aULL);

	/* ioband_parse_group_weight */
	{
		u64 id = 0x1234, rid = 0x1234;
		u32 w = 0xdead, rw = 0xdead;
		bool def = false, rdef = false;

		r = ioband_parse_group_weight(text, bare, &id, &w, &def);
		rr = ref_group_weight(text, bare, &rid, &rw, &rdef);
		CHECK(r == 0 || r == -1);
		CHECK(r == rr);
		if (!r) {
			CHECK(w == rw);
			CHECK(w >= IOBAND_MIN_WEIGHT && w <= IOBAND_MAX_WEIGHT);
			CHECK(def == rdef);
			if (def)
				CHECK(id == 0x1234);	/* untouched */
			else
				CHECK(id == rid);
		} else {
			CHECK(w == 0xdead && id == 0x1234);
		}
	}
	free(text);
	return 0;
}
