/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Minimal TAP for the host unit tests: ok()/diag(), done() prints the plan. */
#ifndef CKPT_TAP_H
#define CKPT_TAP_H

#include <errno.h>	/* program_invocation_short_name (_GNU_SOURCE) */
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>

static int tap_n, tap_failed;

/* line-buffered: a sanitizer's report at exit must not swallow the TAP */
__attribute__((constructor)) static void tap_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

#define ok(cond, ...) do {						\
	int _c = !!(cond);						\
	tap_n++;							\
	if (!_c)							\
		tap_failed++;						\
	printf("%s %d - %s: ", _c ? "ok" : "not ok", tap_n,		\
	       program_invocation_short_name);				\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!_c)							\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
} while (0)

#define diag(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

static inline int done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * Reap @n children of a race whose each exits 0 for "I won", 1 for "another
 * was first" (EEXIST) and anything else for a fault: the three counts.
 */
static inline void tap_reap_race(const pid_t *pid, int n, int *wins, int *lost, int *other)
{
	int i, st;

	*wins = *lost = *other = 0;
	for (i = 0; i < n; i++) {
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st))
			(*other)++;
		else if (WEXITSTATUS(st) == 0)
			(*wins)++;
		else if (WEXITSTATUS(st) == 1)
			(*lost)++;
		else
			(*other)++;
	}
}

/* splitmix64: reproducible test data */
static inline unsigned long long tap_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
