/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How a test that cannot run here says so, and why. tests/run-tests.sh
 * prints every skip with its reason and counts it; a cmocka skip without
 * a reason fails, and with TRACER_E2E_REQUIRE=1 (CI) every skip fails.
 *
 *   TEST_SKIP("needs root to run the consumer as uid %d", NOBODY);   one cmocka test
 *   return test_skip_all("no tracer-ingest: run 'make all' first");  main(): the whole executable
 *
 * TEST_SKIP prints "SKIP <test>: <reason>" on stderr, the test being the
 * function it is written in (call it from the test function itself), so
 * that run-tests.sh can pair it with cmocka's "[  SKIPPED ] <test>".
 * test_skip_all prints "SKIP <reason>" and returns 77, the exit status of
 * a skipped executable. Include after <cmocka.h>.
 */
#ifndef TRACER_TESTS_SKIP_H
#define TRACER_TESTS_SKIP_H

#include <stdarg.h>
#include <stdio.h>

#define TEST_SKIP_EXIT 77

/* One line, one write: stderr is shared with the code under test. */
static inline void __attribute__((format(printf, 2, 0))) test_skip_say(const char *test, const char *fmt, va_list ap)
{
	char why[512];

	vsnprintf(why, sizeof(why), fmt, ap);
	if (test)
		fprintf(stderr, "SKIP %s: %s\n", test, why);
	else
		fprintf(stderr, "SKIP %s\n", why);
}

static inline void __attribute__((format(printf, 2, 3))) test_skip_why(const char *test, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_skip_say(test, fmt, ap);
	va_end(ap);
}

#define TEST_SKIP(...)                                   \
	do {                                             \
		test_skip_why(__func__, __VA_ARGS__);    \
		skip();                                  \
	} while (0)

static inline int __attribute__((format(printf, 1, 2))) test_skip_all(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_skip_say(NULL, fmt, ap);
	va_end(ap);
	return TEST_SKIP_EXIT;
}

#endif /* TRACER_TESTS_SKIP_H */
