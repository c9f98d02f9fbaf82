// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Caller and node CPU time; see cpustat.h. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cpustat.h"

int bench_proc_stat_line(const char *line, unsigned long long *busy,
			 unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	int n, i;

	if (strncmp(line, "cpu ", 4))
		return -1;
	n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	if (n < 4)
		return -1;
	/* guest and guest_nice are already in user and nice */
	*total = 0;
	for (i = 0; i < n && i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - (n > 4 ? v[4] : 0);	/* idle, iowait */
	return 0;
}

void bench_cpu_sample(struct bench_cpu *s)
{
	struct timespec ts;
	struct rusage ru;
	char line[512];
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->wall_s = ts.tv_sec + ts.tv_nsec / 1e9;
	s->self_s = 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		s->self_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	s->busy = s->total = 0;
	f = fopen("/proc/stat", "r");
	if (f) {
		if (fgets(line, sizeof(line), f))
			bench_proc_stat_line(line, &s->busy, &s->total);
		fclose(f);
	}
}

void bench_cpu_delta(const struct bench_cpu *a, const struct bench_cpu *b,
		     double *caller_pct, double *node_pct)
{
	double wall = b->wall_s - a->wall_s;
	unsigned long long total = b->total - a->total;

	*caller_pct = wall > 0 ? 100.0 * (b->self_s - a->self_s) / wall : 0;
	*node_pct = total ? 100.0 * (double)(b->busy - a->busy) / (double)total : 0;
}
