/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Where the CPU time of a collective goes: the caller's own (getrusage:
 * what the process spent submitting and waiting) against the node's busy
 * time (/proc/stat: the kernel's work too), over the same wall time.
 */
#ifndef COLLX_CPUSTAT_H
#define COLLX_CPUSTAT_H

struct bench_cpu {
	double wall_s;
	double self_s;			/* user + system of this process */
	unsigned long long busy, total;	/* jiffies of all CPUs */
};

void bench_cpu_sample(struct bench_cpu *s);
/* Caller CPU and node busy, in % of the wall time between @a and @b. */
void bench_cpu_delta(const struct bench_cpu *a, const struct bench_cpu *b,
		     double *caller_pct, double *node_pct);
/* The "cpu ..." line of /proc/stat: busy and total jiffies; -1 if not it. */
int bench_proc_stat_line(const char *line, unsigned long long *busy,
			 unsigned long long *total);

#endif
