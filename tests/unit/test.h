/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal test runner: TEST(name) defines a test, CHECK() records a
 * failure without stopping the test, and RUN_TESTS() runs every test in
 * order and prints "N passed, N failed".
 */
#ifndef IOBAND_TEST_H
#define IOBAND_TEST_H

#include <stdio.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

static int test_failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",	\
				__FILE__, __LINE__, #cond);		\
			test_failures++;				\
		}							\
	} while (0)

#define TEST(name) static void name(void)

static inline int run_tests(const char *suite, const struct test_case *tests,
			    unsigned int nr_tests)
{
	unsigned int i, passed = 0, failed = 0;

	for (i = 0; i < nr_tests; i++) {
		int before = test_failures;

		tests[i].fn();
		if (test_failures == before) {
			passed++;
			printf("PASS %s %s\n", suite, tests[i].name);
		} else {
			failed++;
			printf("FAIL %s %s\n", suite, tests[i].name);
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define T(fn) { #fn, fn }
#define RUN_TESTS(suite, ...)						\
	({								\
		static const struct test_case tests_[] = { __VA_ARGS__ }; \
		run_tests(suite, tests_, sizeof(tests_) / sizeof(tests_[0])); \
	})

#endif /* IOBAND_TEST_H */
