/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A small test harness in the shape of DPDK's app/test: a suite is a list of
 * cases; a case returns TEST_SUCCESS, TEST_FAILED or TEST_SKIPPED; the
 * TEST_ASSERT_* macros print the failing expression with file and line and
 * return TEST_FAILED. A program whose cases were all skipped exits 77 (meson's
 * "skip").
 */

#ifndef VBR_TEST_H
#define VBR_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TEST_SUCCESS 0
#define TEST_FAILED (-1)
#define TEST_SKIPPED 77

#define TEST_ASSERT(cond, fmt, ...) do { \
	if (!(cond)) { \
		printf("%s:%d: assertion failed: %s: " fmt "\n", \
		       __FILE__, __LINE__, #cond, ##__VA_ARGS__); \
		return TEST_FAILED; \
	} \
} while (0)

#define TEST_ASSERT_EQUAL(a, b, fmt, ...) do { \
	long long test_a_ = (long long)(a), test_b_ = (long long)(b); \
	if (test_a_ != test_b_) { \
		printf("%s:%d: %s == %s failed (%lld != %lld): " fmt "\n", \
		       __FILE__, __LINE__, #a, #b, test_a_, test_b_, \
		       ##__VA_ARGS__); \
		return TEST_FAILED; \
	} \
} while (0)

#define TEST_ASSERT_NOT_EQUAL(a, b, fmt, ...) \
	TEST_ASSERT((a) != (b), fmt, ##__VA_ARGS__)
#define TEST_ASSERT_NULL(p, fmt, ...) \
	TEST_ASSERT((p) == NULL, fmt, ##__VA_ARGS__)
#define TEST_ASSERT_NOT_NULL(p, fmt, ...) \
	TEST_ASSERT((p) != NULL, fmt, ##__VA_ARGS__)
#define TEST_ASSERT_SUCCESS(v, fmt, ...) \
	TEST_ASSERT_EQUAL(v, 0, fmt, ##__VA_ARGS__)

#define TEST_SKIP(fmt, ...) do { \
	printf("skip: " fmt "\n", ##__VA_ARGS__); \
	return TEST_SKIPPED; \
} while (0)

struct unit_test_case {
	const char *name;
	int (*fn)(void);
};

#define TEST_CASE(f) { #f, f }
#define TEST_CASES_END() { NULL, NULL }

struct unit_test_suite {
	const char *name;
	int (*setup)(void);	/**< may be NULL; TEST_SKIPPED skips all */
	void (*teardown)(void);	/**< may be NULL */
	struct unit_test_case cases[];
};

/**
 * Run a suite; return the process exit status: 0 (all passed or some
 * skipped), 1 (a case failed), 77 (all skipped).
 */
static inline int
unit_test_suite_runner(const struct unit_test_suite *s)
{
	const struct unit_test_case *c;
	unsigned int passed = 0, failed = 0, skipped = 0;
	int ret;

	printf("suite %s\n", s->name);
	ret = s->setup != NULL ? s->setup() : TEST_SUCCESS;
	if (ret == TEST_SKIPPED) {
		printf("suite %s skipped\n", s->name);
		return 77;
	}
	if (ret != TEST_SUCCESS) {
		printf("suite %s: setup failed\n", s->name);
		return 1;
	}
	for (c = s->cases; c->name != NULL; c++) {
		fflush(stdout);
		ret = c->fn();
		if (ret == TEST_SUCCESS) {
			passed++;
			printf("  ok   %s\n", c->name);
		} else if (ret == TEST_SKIPPED) {
			skipped++;
			printf("  skip %s\n", c->name);
		} else {
			failed++;
			printf("  FAIL %s\n", c->name);
		}
	}
	if (s->teardown != NULL)
		s->teardown();
	printf("suite %s: %u passed, %u failed, %u skipped\n", s->name,
	       passed, failed, skipped);
	fflush(stdout);
	if (failed > 0)
		return 1;
	if (passed == 0 && skipped > 0)
		return 77;
	return 0;
}

#endif /* VBR_TEST_H */
