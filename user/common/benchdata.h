/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * collx-bench helpers, shared with the lab test programs and the unit
 * tests: exactly checkable data, type/op names, sizes, the nccl-tests
 * table format.
 *
 * Data: every element is a small integer chosen from (rank, index, rep),
 * so every dtype x op result is exact whatever the reduction order (sums
 * stay below 256 in magnitude, products below 128, avg inputs are
 * multiples of the rank count for floats), for up to 8 ranks in bfloat16
 * and int8, more in the wider types.
 */
#ifndef COLLX_BENCHDATA_H
#define COLLX_BENCHDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/collx.h>

uint16_t bench_f32_to_f16(float f);
float bench_f16_to_f32(uint16_t h);
uint16_t bench_f32_to_bf16(float f);
float bench_bf16_to_f32(uint16_t h);

/* The value rank @rank contributes at element @i. */
long bench_value(enum collx_dtype dt, enum collx_redop op, int nranks,
		 int rank, size_t i, int rep);
/* The exact result at element @i. */
double bench_expected(enum collx_dtype dt, enum collx_redop op, int nranks,
		      size_t i, int rep);
/* Fill @count elements of @buf with this rank's values. */
void bench_fill(void *buf, size_t count, enum collx_dtype dt,
		enum collx_redop op, int nranks, int rank, int rep);
/* Elements of @buf that differ from the expected result; the first bad
 * index in *@first (if not NULL and any). */
size_t bench_check(const void *buf, size_t count, enum collx_dtype dt,
		   enum collx_redop op, int nranks, int rep, size_t *first);
double bench_load(const void *buf, size_t i, enum collx_dtype dt);
void bench_store(void *buf, size_t i, enum collx_dtype dt, double v);

/* "float", "fp32", "f32", "half", "bf16", "int8"...; -1 if unknown */
int bench_parse_dtype(const char *s);
/* "sum", "prod", "max", "min", "avg"; -1 if unknown */
int bench_parse_redop(const char *s);
/* "8", "1K", "64M", "1G" (powers of 1024); 0 on error */
size_t bench_parse_size(const char *s);

/* nccl-tests table. */
void bench_print_header(FILE *f);
/* One half of a row: time in us (< 0: not measured), wrong (< 0: N/A). */
int bench_fmt_half(char *out, size_t len, double time_us, double algbw,
		   double busbw, long long wrong);
int bench_fmt_lead(char *out, size_t len, size_t bytes, size_t count,
		   const char *type, const char *op, int root);
/* allreduce: algbw = bytes / t (GB/s, 1e9), busbw = algbw * 2(n-1)/n */
void bench_bw(size_t bytes, double sec, int nranks, double *algbw,
	      double *busbw);

#endif
