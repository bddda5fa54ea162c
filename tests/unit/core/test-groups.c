// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the group set, the userspace group table and the table's group
 * arguments (ioband-core.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ioband-core.h"
#include "../test.h"

struct fixture {
	struct ioband_group_set set;
	struct ioband_group_table table;
	struct ioband_group *groups;
	struct ioband_group **buckets;
};

static void fixture_init(struct fixture *f, unsigned int nr_groups)
{
	unsigned int bits = ioband_hash_bits_for(nr_groups);

	f->buckets = calloc(1U << bits, sizeof(*f->buckets));
	f->groups = calloc(nr_groups ? nr_groups : 1, sizeof(*f->groups));
	ioband_group_set_init(&f->set);
	ioband_group_table_init(&f->table, f->buckets, bits);
}

/* What the kernel's attach does with its rhashtable: index, then list. */
static bool attach(struct fixture *f, struct ioband_group *group)
{
	if (!ioband_group_table_insert(&f->table, group))
		return false;
	ioband_group_set_add(&f->set, group);
	return true;
}

static void detach(struct fixture *f, struct ioband_group *group)
{
	ioband_group_table_remove(&f->table, group);
	ioband_group_set_remove(&f->set, group);
}

static struct ioband_group *find(struct fixture *f, u64 id)
{
	return ioband_group_table_find(&f->table, id);
}

static void fixture_free(struct fixture *f)
{
	free(f->buckets);
	free(f->groups);
}

TEST(empty_set_finds_nothing)
{
	struct fixture f;

	fixture_init(&f, 0);
	CHECK(find(&f, 1) == NULL);
	CHECK(f.set.nr_groups == 0);
	CHECK(f.set.first == NULL);
	fixture_free(&f);
}

TEST(attach_then_find_each_id)
{
	static const u64 ids[] = { 1, 2, 4021, 1ULL << 40, ~0ULL };
	const unsigned int n = sizeof(ids) / sizeof(ids[0]);
	struct fixture f;
	unsigned int i;

	fixture_init(&f, n);
	for (i = 0; i < n; i++) {
		f.groups[i].id = ids[i];
		CHECK(attach(&f, &f.groups[i]));
	}
	CHECK(f.set.nr_groups == n);
	for (i = 0; i < n; i++)
		CHECK(find(&f, ids[i]) == &f.groups[i]);
	CHECK(find(&f, 3) == NULL);
	fixture_free(&f);
}

TEST(attach_rejects_a_duplicate_id)
{
	struct fixture f;

	fixture_init(&f, 2);
	f.groups[0].id = 7;
	f.groups[1].id = 7;
	CHECK(attach(&f, &f.groups[0]));
	CHECK(!attach(&f, &f.groups[1]));
	CHECK(f.set.nr_groups == 1);
	CHECK(find(&f, 7) == &f.groups[0]);
	CHECK(f.set.first == &f.groups[0] && f.set.last == &f.groups[0]);
	fixture_free(&f);
}

TEST(attach_order_is_kept)
{
	struct fixture f;
	struct ioband_group *g;
	unsigned int i;
	u64 expected = 100;

	fixture_init(&f, 50);
	for (i = 0; i < 50; i++) {
		f.groups[i].id = 100 + i;
		CHECK(attach(&f, &f.groups[i]));
	}
	for (g = f.set.first; g; g = g->next)
		CHECK(g->id == expected++);
	CHECK(expected == 150);
	fixture_free(&f);
}

/* Sequential ids, as cgroup inode numbers are, spread over the buckets. */
TEST(ten_thousand_groups_keep_chains_short)
{
	const unsigned int n = 10000;
	unsigned int i, longest = 0, bits;
	struct fixture f;

	fixture_init(&f, n);
	bits = f.table.hash_bits;
	CHECK((1U << bits) >= n);
	for (i = 0; i < n; i++) {
		f.groups[i].id = 4000 + i;
		CHECK(attach(&f, &f.groups[i]));
	}
	for (i = 0; i < (1U << bits); i++) {
		unsigned int len = 0;
		struct ioband_group *g;

		for (g = f.buckets[i]; g; g = g->hash_next)
			len++;
		if (len > longest)
			longest = len;
	}
	CHECK(longest <= 8);
	for (i = 0; i < n; i++)
		CHECK(find(&f, 4000 + i) == &f.groups[i]);
	fixture_free(&f);
}

TEST(hash_bits_grow_with_groups)
{
	CHECK(ioband_hash_bits_for(0) == IOBAND_MIN_HASH_BITS);
	CHECK(ioband_hash_bits_for(64) == IOBAND_MIN_HASH_BITS);
	CHECK(ioband_hash_bits_for(65) == IOBAND_MIN_HASH_BITS + 1);
	CHECK(ioband_hash_bits_for(10000) == 14);
	CHECK(ioband_hash_bits_for(~0U) == 20);
}

TEST(account_counts_ios_and_sectors_per_direction)
{
	struct ioband_group g;

	memset(&g, 0, sizeof(g));
	ioband_group_account(&g, IOBAND_READ, 8);
	ioband_group_account(&g, IOBAND_READ, 16);
	ioband_group_account(&g, IOBAND_WRITE, 2048);
	CHECK(g.stats.ios[IOBAND_READ] == 2);
	CHECK(g.stats.sectors[IOBAND_READ] == 24);
	CHECK(g.stats.ios[IOBAND_WRITE] == 1);
	CHECK(g.stats.sectors[IOBAND_WRITE] == 2048);
	CHECK(g.stats.delayed[IOBAND_READ] == 0);
}

TEST(weight_range)
{
	CHECK(!ioband_weight_valid(0));
	CHECK(ioband_weight_valid(1));
	CHECK(ioband_weight_valid(32767));
	CHECK(!ioband_weight_valid(32768));
}

TEST(parse_group_weight_accepts_valid_arguments)
{
	bool is_default;
	u32 weight;
	u64 id = 42;

	CHECK(ioband_parse_group_weight(":40", false, &id, &weight, &is_default) == 0);
	CHECK(is_default && weight == 40 && id == 42);
	CHECK(ioband_parse_group_weight("4021:200", false, &id, &weight, &is_default) == 0);
	CHECK(!is_default && weight == 200 && id == 4021);
	CHECK(ioband_parse_group_weight("18446744073709551615:32767", false, &id,
					&weight, &is_default) == 0);
	CHECK(id == ~0ULL && weight == 32767);
	CHECK(ioband_parse_group_weight("0:1", false, &id, &weight, &is_default) == 0);
	CHECK(id == 0 && weight == 1);
}

TEST(parse_group_weight_rejects_malformed_arguments)
{
	static const char * const bad[] = {
		"", ":", "1:", ":0", "1:0", "1:32768", "1:99999999999999999999",
		"18446744073709551616:1", "-1:10", "1:-10", "a:1", "1:1x",
		"1::1", "1:1:1", " 1:1", "1 :1", "1: 1", "12", ":+1", "0x10:1",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool is_default;
		u32 weight = 77;
		u64 id = 42;
		int ret = ioband_parse_group_weight(bad[i], false, &id,
						    &weight, &is_default);

		if (ret != -1)
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
		CHECK(ret == -1);
		CHECK(id == 42 && weight == 77);
	}
}

TEST(parse_group_weight_bare_weight_is_the_default_groups)
{
	bool is_default;
	u32 weight;
	u64 id = 42;

	CHECK(ioband_parse_group_weight("300", true, &id, &weight,
					&is_default) == 0);
	CHECK(is_default && weight == 300 && id == 42);
	CHECK(ioband_parse_group_weight("300", false, &id, &weight,
					&is_default) == -1);
	CHECK(ioband_parse_group_weight("0", true, &id, &weight,
					&is_default) == -1);
	CHECK(ioband_parse_group_weight("7:5", true, &id, &weight,
					&is_default) == 0);
	CHECK(!is_default && id == 7 && weight == 5);
}

TEST(parse_group_spec_reads_each_policys_groups)
{
	u64 values[IOBAND_MAX_SPEC_VALUES] = { 0 };
	bool is_default;
	u64 id = 42;

	CHECK(ioband_parse_group_spec("7:100:2000", 0, 2, &id, &is_default,
				      values) == 0);
	CHECK(!is_default && id == 7 && values[0] == 100 && values[1] == 2000);
	CHECK(ioband_parse_group_spec(":3:0:0", 0, 3, &id, &is_default,
				      values) == 0);
	CHECK(is_default && id == 7 && values[0] == 3 && values[2] == 0);
	/* -1 names the default group only where the flag allows it. */
	CHECK(ioband_parse_group_spec("-1:5:6", IOBAND_SPEC_MINUS_ONE, 2, &id,
				      &is_default, values) == 0);
	CHECK(is_default && values[0] == 5 && values[1] == 6);
	CHECK(ioband_parse_group_spec("-1:5:6", 0, 2, &id, &is_default,
				      values) == -1);
	/* The number of values is exact. */
	CHECK(ioband_parse_group_spec("7:1", 0, 2, &id, &is_default,
				      values) == -1);
	CHECK(ioband_parse_group_spec("7:1:2:3", 0, 2, &id, &is_default,
				      values) == -1);
	CHECK(ioband_parse_group_spec("7:1::3", 0, 3, &id, &is_default,
				      values) == -1);
	CHECK(ioband_parse_group_spec("7:1:2", 0, 4, &id, &is_default,
				      values) == -1);
	CHECK(ioband_parse_group_spec("7:1:2", 0, 0, &id, &is_default,
				      values) == -1);
	CHECK(ioband_parse_group_spec("-2:1:2", IOBAND_SPEC_MINUS_ONE, 2, &id,
				      &is_default, values) == -1);
	CHECK(id == 7);
}

TEST(parse_u64_whole_numbers_only)
{
	u64 v = 9;

	CHECK(ioband_parse_u64("0", &v) == 0 && v == 0);
	CHECK(ioband_parse_u64("18446744073709551615", &v) == 0 && v == ~0ULL);
	CHECK(ioband_parse_u64("18446744073709551616", &v) == -1);
	CHECK(ioband_parse_u64("", &v) == -1);
	CHECK(ioband_parse_u64("12a", &v) == -1);
	CHECK(ioband_parse_u64("-1", &v) == -1);
	CHECK(v == ~0ULL);
}

TEST(detach_removes_from_lookup_and_order)
{
	struct fixture f;
	struct ioband_group *g;
	unsigned int i, n = 0;

	fixture_init(&f, 5);
	for (i = 0; i < 5; i++) {
		f.groups[i].id = 10 + i;
		CHECK(attach(&f, &f.groups[i]));
	}
	detach(&f, &f.groups[0]);	/* first */
	detach(&f, &f.groups[2]);	/* middle */
	detach(&f, &f.groups[4]);	/* last */
	CHECK(f.set.nr_groups == 2);
	CHECK(find(&f, 10) == NULL);
	CHECK(find(&f, 12) == NULL);
	CHECK(find(&f, 14) == NULL);
	CHECK(find(&f, 11) == &f.groups[1]);
	CHECK(find(&f, 13) == &f.groups[3]);
	for (g = f.set.first; g; g = g->next)
		n++;
	CHECK(n == 2);
	CHECK(f.set.first == &f.groups[1] && f.set.last == &f.groups[3]);
	CHECK(f.set.last->prev == &f.groups[1]);
	/* A detached id may be attached again. */
	CHECK(attach(&f, &f.groups[2]));
	CHECK(f.set.last == &f.groups[2]);
	fixture_free(&f);
}

TEST(wait_accounting_keeps_total_and_max)
{
	struct ioband_group g;

	memset(&g, 0, sizeof(g));
	ioband_group_account_wait(&g, 500);
	ioband_group_account_wait(&g, 2000);
	ioband_group_account_wait(&g, 100);
	CHECK(g.stats.wait_ns == 2600);
	CHECK(g.stats.wait_max_ns == 2000);
}

int main(void)
{
	return RUN_TESTS("core",
			 T(empty_set_finds_nothing),
			 T(attach_then_find_each_id),
			 T(attach_rejects_a_duplicate_id),
			 T(attach_order_is_kept),
			 T(ten_thousand_groups_keep_chains_short),
			 T(hash_bits_grow_with_groups),
			 T(account_counts_ios_and_sectors_per_direction),
			 T(weight_range),
			 T(parse_group_weight_accepts_valid_arguments),
			 T(parse_group_weight_rejects_malformed_arguments),
			 T(parse_group_weight_bare_weight_is_the_default_groups),
			 T(parse_group_spec_reads_each_policys_groups),
			 T(parse_u64_whole_numbers_only),
			 T(detach_removes_from_lookup_and_order),
			 T(wait_accounting_keeps_total_and_max));
}
