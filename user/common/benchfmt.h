/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The nccl-tests table, column for column as its util.cu prints it
 * (nccl-tests 2.19): header, row lead, one half per placement, footer.
 */
#ifndef COLLX_BENCHFMT_H
#define COLLX_BENCHFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* @cputime: the time columns say "cputime" (-C 1); @cpu: collx's caller
 * and node CPU columns follow each half (--cpu). */
void bench_print_header(FILE *f, bool cputime, bool cpu);
/* "size count type redop root" */
int bench_fmt_lead(char *out, size_t len, size_t bytes, size_t count,
		   const char *type, const char *op, int root);
/* One half: time in us, bandwidths, wrong (< 0: not checked, "N/A"). */
int bench_fmt_half(char *out, size_t len, double time_us, double algbw,
		   double busbw, long long wrong);
/* The half of a placement that does not run (in-place alltoall). */
int bench_fmt_null_half(char *out, size_t len);
/* collx's CPU columns: caller CPU and node busy, % of wall time. */
int bench_fmt_cpu(char *out, size_t len, double caller_pct, double node_pct);
/* As getFloatStr(): the most decimals that fit in @width. */
void bench_float_str(double v, int width, char *out);
void bench_print_footer(FILE *f, long long errors, double avg_busbw,
			double min_bw, const char *program);

#endif
