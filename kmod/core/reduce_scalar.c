// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: scalar reduction kernels, one element at a time.
 *
 * Built with FPU flags: in the kernel every function here runs between
 * collx_fpu_begin() and collx_fpu_end() (reduce.c makes sure of it).
 * The AVX2 kernels run this code for their tails, so the per-element rules
 * below are the definition both implementations follow bit for bit.
 */
#include "reduce_impl.h"

union collx_f32 {
	float f;
	u32 u;
};

union collx_f64 {
	double f;
	u64 u;
};

static inline u32 f32_bits(float f)
{
	union collx_f32 v = { .f = f };

	return v.u;
}

static inline float f32_from(u32 u)
{
	union collx_f32 v = { .u = u };

	return v.f;
}

static inline u64 f64_bits(double f)
{
	union collx_f64 v = { .f = f };

	return v.u;
}

static inline double f64_from(u64 u)
{
	union collx_f64 v = { .u = u };

	return v.f;
}

/*
 * Float rules: NaN results are canonical; max/min are IEEE 754-2019
 * maximum/minimum (NaN wins, -0 < +0).  Equal operands of max (min) give
 * the AND (OR) of their bits, which picks +0 (-0) for a pair of zeros.
 */
static inline float f32_canon(float r)
{
	return r != r ? f32_from(COLLX_F32_QNAN) : r;
}

static inline float f32_sum(float a, float b)
{
	return f32_canon(a + b);
}

static inline float f32_prod(float a, float b)
{
	return f32_canon(a * b);
}

static inline float f32_max(float a, float b)
{
	if (a > b)
		return a;
	if (a < b)
		return b;
	if (a == b)
		return f32_from(f32_bits(a) & f32_bits(b));
	return f32_from(COLLX_F32_QNAN);
}

static inline float f32_min(float a, float b)
{
	if (a < b)
		return a;
	if (a > b)
		return b;
	if (a == b)
		return f32_from(f32_bits(a) | f32_bits(b));
	return f32_from(COLLX_F32_QNAN);
}

static inline float f32_div(float a, u32 n)
{
	return f32_canon(a / (float)n);
}

static inline double f64_canon(double r)
{
	return r != r ? f64_from(COLLX_F64_QNAN) : r;
}

static inline double f64_sum(double a, double b)
{
	return f64_canon(a + b);
}

static inline double f64_prod(double a, double b)
{
	return f64_canon(a * b);
}

static inline double f64_max(double a, double b)
{
	if (a > b)
		return a;
	if (a < b)
		return b;
	if (a == b)
		return f64_from(f64_bits(a) & f64_bits(b));
	return f64_from(COLLX_F64_QNAN);
}

static inline double f64_min(double a, double b)
{
	if (a < b)
		return a;
	if (a > b)
		return b;
	if (a == b)
		return f64_from(f64_bits(a) | f64_bits(b));
	return f64_from(COLLX_F64_QNAN);
}

static inline double f64_div(double a, u32 n)
{
	return f64_canon(a / (double)n);
}

/*
 * Buffers may have any alignment (a registered user buffer can start
 * anywhere): elements are accessed through byte-aligned types.
 */
typedef s8 __aligned(1) s8_ua;
typedef u8 __aligned(1) u8_ua;
typedef s32 __aligned(1) s32_ua;
typedef u32 __aligned(1) u32_ua;
typedef s64 __aligned(1) s64_ua;
typedef u64 __aligned(1) u64_ua;
typedef u16 __aligned(1) u16_ua;
typedef float __aligned(1) float_ua;
typedef double __aligned(1) double_ua;

/*
 * Integers: sum and product wrap (computed unsigned; u8 * u8 promotes to int
 * and cannot overflow it), avg truncates toward zero.
 */
#define INT_KERNELS(name, T, UT)					\
static void name##_sum(void *dst, const void *src, size_t n)		\
{									\
	T##_ua *d = dst;						\
	const T##_ua *s = src;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = (T)(UT)((UT)d[i] + (UT)s[i]);			\
}									\
static void name##_prod(void *dst, const void *src, size_t n)		\
{									\
	T##_ua *d = dst;						\
	const T##_ua *s = src;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = (T)(UT)((UT)d[i] * (UT)s[i]);			\
}									\
static void name##_max(void *dst, const void *src, size_t n)		\
{									\
	T##_ua *d = dst;						\
	const T##_ua *s = src;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = d[i] > s[i] ? d[i] : s[i];			\
}									\
static void name##_min(void *dst, const void *src, size_t n)		\
{									\
	T##_ua *d = dst;						\
	const T##_ua *s = src;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = d[i] < s[i] ? d[i] : s[i];			\
}

INT_KERNELS(s8, s8, u8)
INT_KERNELS(u8, u8, u8)
INT_KERNELS(s32, s32, u32)
INT_KERNELS(u32, u32, u32)
INT_KERNELS(s64, s64, u64)
INT_KERNELS(u64, u64, u64)

#define INT_SCALE(name, T, WT)						\
static void name##_scale(void *buf, size_t n, u32 nranks)		\
{									\
	T##_ua *d = buf;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = (T)((WT)d[i] / (WT)nranks);			\
}

INT_SCALE(s8, s8, s64)
INT_SCALE(u8, u8, u32)
INT_SCALE(s32, s32, s64)
INT_SCALE(u32, u32, u32)
INT_SCALE(s64, s64, s64)
INT_SCALE(u64, u64, u64)

#define FLOAT_KERNEL(name, T, fn)					\
static void name(void *dst, const void *src, size_t n)			\
{									\
	T##_ua *d = dst;						\
	const T##_ua *s = src;						\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		d[i] = fn(d[i], s[i]);					\
}

FLOAT_KERNEL(f32k_sum, float, f32_sum)
FLOAT_KERNEL(f32k_prod, float, f32_prod)
FLOAT_KERNEL(f32k_max, float, f32_max)
FLOAT_KERNEL(f32k_min, float, f32_min)
FLOAT_KERNEL(f64k_sum, double, f64_sum)
FLOAT_KERNEL(f64k_prod, double, f64_prod)
FLOAT_KERNEL(f64k_max, double, f64_max)
FLOAT_KERNEL(f64k_min, double, f64_min)

static void f32_scale(void *buf, size_t n, u32 nranks)
{
	float_ua *d = buf;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = f32_div(d[i], nranks);
}

static void f64_scale(void *buf, size_t n, u32 nranks)
{
	double_ua *d = buf;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = f64_div(d[i], nranks);
}

/* 16-bit floats: widen to binary32, operate, round to nearest even. */
#define HALF_KERNEL(name, fmt, fn)					\
static void name(void *dst, const void *src, size_t n)			\
{									\
	u16_ua *d = dst;						\
	const u16_ua *s = src;						\
	size_t i;							\
	float r;							\
									\
	for (i = 0; i < n; i++) {					\
		r = fn(f32_from(__collx_##fmt##_to_f32_bits(d[i])),	\
		       f32_from(__collx_##fmt##_to_f32_bits(s[i])));	\
		d[i] = __collx_f32_bits_to_##fmt(f32_bits(r));		\
	}								\
}

#define HALF_SCALE(name, fmt)						\
static void name(void *buf, size_t n, u32 nranks)			\
{									\
	u16_ua *d = buf;						\
	size_t i;							\
	float r;							\
									\
	for (i = 0; i < n; i++) {					\
		r = f32_from(__collx_##fmt##_to_f32_bits(d[i]));	\
		r = f32_div(r, nranks);					\
		d[i] = __collx_f32_bits_to_##fmt(f32_bits(r));		\
	}								\
}

HALF_SCALE(fp16_scale, fp16)
HALF_SCALE(bf16_scale, bf16)
HALF_KERNEL(fp16_sum, fp16, f32_sum)
HALF_KERNEL(fp16_prod, fp16, f32_prod)
HALF_KERNEL(fp16_max, fp16, f32_max)
HALF_KERNEL(fp16_min, fp16, f32_min)
HALF_KERNEL(bf16_sum, bf16, f32_sum)
HALF_KERNEL(bf16_prod, bf16, f32_prod)
HALF_KERNEL(bf16_max, bf16, f32_max)
HALF_KERNEL(bf16_min, bf16, f32_min)

#define OPS4(p)	{ p##_sum, p##_prod, p##_max, p##_min }

const struct collx_reduce_ops collx_reduce_scalar_ops = {
	.name = "scalar",
	.reduce = {
		[COLLX_INT8] = OPS4(s8),
		[COLLX_UINT8] = OPS4(u8),
		[COLLX_INT32] = OPS4(s32),
		[COLLX_UINT32] = OPS4(u32),
		[COLLX_INT64] = OPS4(s64),
		[COLLX_UINT64] = OPS4(u64),
		[COLLX_FP16] = OPS4(fp16),
		[COLLX_FP32] = OPS4(f32k),
		[COLLX_FP64] = OPS4(f64k),
		[COLLX_BF16] = OPS4(bf16),
	},
	.scale = {
		[COLLX_INT8] = s8_scale,
		[COLLX_UINT8] = u8_scale,
		[COLLX_INT32] = s32_scale,
		[COLLX_UINT32] = u32_scale,
		[COLLX_INT64] = s64_scale,
		[COLLX_UINT64] = u64_scale,
		[COLLX_FP16] = fp16_scale,
		[COLLX_FP32] = f32_scale,
		[COLLX_FP64] = f64_scale,
		[COLLX_BF16] = bf16_scale,
	},
};
