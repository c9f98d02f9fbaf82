// SPDX-License-Identifier: GPL-2.0
/*
 * Counting and telling: calls and results per entry point, findings as
 * they happen (the first ones in full, with the call that made them),
 * and the summary at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

#define MAX_ERR		256	/* results[e][MAX_ERR]: errnos beyond */

static uint64_t calls[FZ_NR_ENTRIES];
static uint64_t results[FZ_NR_ENTRIES][MAX_ERR + 1];
static uint64_t findings[F_NR_CLASSES];
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t printed;

static const char *const class_names[F_NR_CLASSES] = {
	[F_ERRNO] = "errno",
	[F_ORACLE] = "oracle",
	[F_RECORD] = "record",
	[F_DATA] = "data",
	[F_LOST] = "lost",
	[F_IDS] = "ids",
	[F_HANG] = "hang",
	[F_COUNTERS] = "counters",
	[F_CHILD] = "child",
	[F_LATE] = "late",
};

void fz_result(enum fz_entry e, int err)
{
	__atomic_fetch_add(&calls[e], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&results[e][err >= 0 && err < MAX_ERR ? err : MAX_ERR],
			   1, __ATOMIC_RELAXED);
}

uint64_t fz_total_calls(void)
{
	uint64_t n = 0;
	int e;

	for (e = 0; e < FZ_NR_ENTRIES; e++)
		n += __atomic_load_n(&calls[e], __ATOMIC_RELAXED);
	return n;
}

uint64_t fz_total_findings(void)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < F_NR_CLASSES; c++)
		n += __atomic_load_n(&findings[c], __ATOMIC_RELAXED);
	return n;
}

void fz_finding(struct fz_thread *t, enum fz_class cl, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	__atomic_add_fetch(&findings[cl], 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&print_lock);
	if (printed++ < fz_opt.print) {
		if (t)
			printf("FINDING %s: call #%llu (thread %u, seed %llu): %s\n",
			       class_names[cl], (unsigned long long)t->cur_no,
			       t->idx, (unsigned long long)fz_opt.seed, msg);
		else
			printf("FINDING %s: %s\n", class_names[cl], msg);
		fflush(stdout);
	} else if (printed == fz_opt.print + 1) {
		printf("(further findings are only counted)\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&print_lock);
}

/* Failed creates of more than one rank, and the most one overran by. */
static uint64_t creates_failed;
static int64_t create_worst_ms = INT64_MIN;
static uint32_t create_worst_timeout;

void fz_create_failed(struct fz_thread *t, uint32_t timeout_ms,
		      uint64_t took_ns)
{
	int64_t late = (int64_t)(took_ns / 1000000) - (int64_t)timeout_ms;
	int64_t bound = (int64_t)COLLX_CREATE_SLACK_MS * fz_slowdown();

	pthread_mutex_lock(&print_lock);
	creates_failed++;
	if (late > create_worst_ms) {
		create_worst_ms = late;
		create_worst_timeout = timeout_ms;
	}
	pthread_mutex_unlock(&print_lock);
	if (late > bound)
		fz_finding(t, F_LATE, "COMM_CREATE failed %lld ms after its timeout_ms %u (bound %lld ms)",
			   (long long)late, timeout_ms, (long long)bound);
}

void fz_report(double secs, const char *stop)
{
	uint64_t total = fz_total_calls(), all[MAX_ERR + 1] = { 0 };
	char name[16], line[1024];
	size_t used;
	int e, k, c;

	printf("summary: %llu calls in %.1f s (%.0f calls/s), ended by %s\n",
	       (unsigned long long)total, secs, secs > 0 ? total / secs : 0.0,
	       stop);
	if (creates_failed)
		printf("COMM_CREATE of more than one rank: %llu failed, the latest %lld ms after its timeout_ms %u\n",
		       (unsigned long long)creates_failed,
		       (long long)create_worst_ms, create_worst_timeout);
	printf("calls per entry point, and their results:\n");
	for (e = 0; e < FZ_NR_ENTRIES; e++) {
		used = snprintf(line, sizeof(line), "  %-13s %8llu ",
				fz_entry_name(e),
				(unsigned long long)calls[e]);
		for (k = 0; k <= MAX_ERR; k++) {
			if (!results[e][k])
				continue;
			all[k] += results[e][k];
			if (used < sizeof(line))
				used += snprintf(line + used, sizeof(line) - used,
						 " %s %llu",
						 k == MAX_ERR ? "other" :
						 fz_errname(k, name, sizeof(name)),
						 (unsigned long long)results[e][k]);
		}
		printf("%s\n", line);
	}
	used = snprintf(line, sizeof(line), "results per errno:");
	for (k = 0; k <= MAX_ERR; k++)
		if (all[k] && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 " %s %llu",
					 k == MAX_ERR ? "other" :
					 fz_errname(k, name, sizeof(name)),
					 (unsigned long long)all[k]);
	printf("%s\n", line);
	used = snprintf(line, sizeof(line), "findings: %llu",
			(unsigned long long)fz_total_findings());
	for (c = 0, k = 0; c < F_NR_CLASSES; c++)
		if (findings[c] && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used,
					 "%s%s %llu", k++ ? ", " : " (",
					 class_names[c],
					 (unsigned long long)findings[c]);
	printf("%s%s\n", line, k ? ")" : "");
}
