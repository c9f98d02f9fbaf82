/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Exactly checkable data for collx-bench, the lab programs and the unit
 * tests: element values, their conversions to every dtype, and names.
 *
 * Reductions: every element is a small integer chosen from (rank, index,
 * rep), so every dtype x op result is exact whatever the reduction order
 * and wherever the kernel rounds (sums stay below 256 in magnitude,
 * products below 128, avg inputs are multiples of the rank count for
 * floats), for up to 8 ranks in bfloat16 and int8, more in the wider
 * types.  FP8 holds fewer integers (E4M3 every one to 16, E5M2 to 8), so
 * its sums take -1..1 per rank, its max/min -8..8, and its avg inputs are
 * the same on every rank (a rank-dependent multiple of the rank count
 * would leave partial sums FP8 cannot hold for some rank counts).
 *
 * Data movement (broadcast, allgather, alltoall, send/recv): bench_gen()
 * gives each (source rank, index) a value well spread over the integers
 * the dtype holds exactly.
 */
#ifndef COLLX_BENCHDATA_H
#define COLLX_BENCHDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/collx.h>

uint16_t bench_f32_to_f16(float f);
float bench_f16_to_f32(uint16_t h);
uint16_t bench_f32_to_bf16(float f);
float bench_bf16_to_f32(uint16_t h);
/* OCP 8-bit floats, round to nearest even; E4M3 saturates at 448, E5M2
 * overflows to infinity. */
uint8_t bench_f32_to_e4m3(float f);
float bench_e4m3_to_f32(uint8_t b);
uint8_t bench_f32_to_e5m2(float f);
float bench_e5m2_to_f32(uint8_t b);

bool bench_dtype_is_float(enum collx_dtype dt);

/* Reductions: the value rank @rank contributes at element @i. */
long bench_value(enum collx_dtype dt, enum collx_redop op, int nranks,
		 int rank, size_t i, int rep);
/* The exact reduction of every rank's bench_value() at element @i. */
double bench_expected(enum collx_dtype dt, enum collx_redop op, int nranks,
		      size_t i, int rep);
/* Data movement: the value rank @src holds at element @i. */
long bench_gen(enum collx_dtype dt, int src, size_t i, int rep);

/* Fill @count elements of @buf with this rank's reduction inputs. */
void bench_fill(void *buf, size_t count, enum collx_dtype dt,
		enum collx_redop op, int nranks, int rank, int rep);
/* Elements of @buf that differ from the expected reduction; the first bad
 * index in *@first (if not NULL and any). */
size_t bench_check(const void *buf, size_t count, enum collx_dtype dt,
		   enum collx_redop op, int nranks, int rep, size_t *first);
double bench_load(const void *buf, size_t i, enum collx_dtype dt);
void bench_store(void *buf, size_t i, enum collx_dtype dt, double v);

/* "float", "fp32", "half", "bf16", "int8", "f8e4m3"...; -1 if unknown */
int bench_parse_dtype(const char *s);
/* "sum", "prod", "max", "min", "avg"; -1 if unknown */
int bench_parse_redop(const char *s);
/* "8", "1K", "64M", "1.5G" (powers of 1024): 0, or -1 when malformed */
int bench_parse_size(const char *s, size_t *out);
/* A whole decimal integer in [min, max]: 0, or -1 ("-n abc" is an error) */
int bench_parse_int(const char *s, long min, long max, long *out);

#endif
