/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host unit tests of kmod/core: a tiny flat-TAP harness.
 */
#ifndef COLLX_UNIT_H
#define COLLX_UNIT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>

extern unsigned int unit_ntests, unit_nfail;

/* One TAP line per call: "ok N - desc" or "not ok N - desc". */
__attribute__((format(printf, 2, 3)))
static inline int unit_ok(int pass, const char *fmt, ...)
{
	va_list ap;

	unit_ntests++;
	if (!pass)
		unit_nfail++;
	printf("%sok %u - ", pass ? "" : "not ", unit_ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

/* Diagnostics go to stdout as TAP comments. */
#define unit_diag(...) do { printf("# " __VA_ARGS__); putchar('\n'); } while (0)

/* xorshift64*: reproducible; the seed is printed at start. */
extern uint64_t unit_rng_state;
static inline uint64_t unit_rand(void)
{
	uint64_t x = unit_rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	unit_rng_state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

void test_reduce(void);
void test_sched(void);
void test_coll(void);
void test_uapi(void);

#endif
