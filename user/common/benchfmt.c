// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The nccl-tests table; see benchfmt.h. */
#include <stdio.h>
#include <string.h>

#include "benchfmt.h"

void bench_float_str(double v, int width, char *out)
{
	if (snprintf(out, width + 1, "%*.2f", width, v) <= width)
		return;
	if (snprintf(out, width + 1, "%*.1f", width, v) <= width)
		return;
	if (snprintf(out, width + 1, "%*.0f", width, v) <= width)
		return;
	snprintf(out, width + 1, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

void bench_print_header(FILE *f, bool cputime, bool cpu)
{
	const char *t = cputime ? "cputime" : "time";
	char l1[64] = "", l2[64] = "", l3[64] = "";

	/* collx's CPU columns line up with bench_fmt_cpu() after each half */
	if (cpu) {
		snprintf(l1, sizeof(l1), "%15s %15s", "oop cpu", "in-place cpu");
		snprintf(l2, sizeof(l2), "%7s %7s %7s %7s", "caller", "node", "caller", "node");
		snprintf(l3, sizeof(l3), "%7s %7s %7s %7s", "(%)", "(%)", "(%)", "(%)");
	}
	fprintf(f, "#\n");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          %s\n",
		"", "", "", "", "", l1);
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n",
		"size", "count", "type", "redop", "root", t, "algbw", "busbw", "#wrong",
		t, "algbw", "busbw", "#wrong", l2);
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s\n",
		"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "",
		"(us)", "(GB/s)", "(GB/s)", "", l3);
}

int bench_fmt_lead(char *out, size_t len, size_t bytes, size_t count,
		   const char *type, const char *op, int root)
{
	return snprintf(out, len, "%12zu  %12zu  %8s  %6s  %6d", bytes, count, type, op, root);
}

int bench_fmt_half(char *out, size_t len, double time_us, double algbw,
		   double busbw, long long wrong)
{
	char t[8], a[7], b[7];

	bench_float_str(time_us, 7, t);
	bench_float_str(algbw, 6, a);
	bench_float_str(busbw, 6, b);
	if (wrong < 0)
		return snprintf(out, len, "  %7s  %6s  %6s    N/A", t, a, b);
	return snprintf(out, len, "  %7s  %6s  %6s  %6g", t, a, b, (double)wrong);
}

int bench_fmt_null_half(char *out, size_t len)
{
	return snprintf(out, len, "%32s", "");
}

int bench_fmt_cpu(char *out, size_t len, double caller_pct, double node_pct)
{
	char c[8], n[8];

	bench_float_str(caller_pct, 7, c);
	bench_float_str(node_pct, 7, n);
	return snprintf(out, len, " %7s %7s", c, n);
}

void bench_print_footer(FILE *f, long long errors, double avg_busbw, double min_bw,
			const char *program)
{
	fprintf(f, "# %-20s : %lld %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
	fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", avg_busbw,
		min_bw < 0 ? "" : avg_busbw < min_bw * 0.9 ? "FAILED" : "OK");
	fprintf(f, "#\n");
	fprintf(f, "# Collective test concluded: %s\n", program);
}
