/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: the per-element rules of every reduction, the definition all
 * implementations follow bit for bit.
 *
 * Written without branches (selects and masks only, narrow formats
 * converted with float arithmetic instead of loops or bit scans), so that
 * the compiler vectorises the loops at the bottom for whatever target the
 * including file is built for: reduce_scalar.c (baseline), and the SIMD
 * files for their tails and for the types without hand-written vectors.
 * Float code: only for files built with FPU flags (COLLX_FPU_UNIT), and in
 * the kernel only between collx_fpu_begin() and collx_fpu_end().
 *
 * The float tricks assume round to nearest even without flush-to-zero or
 * denormals-are-zero, which kernel_fpu_begin() and kernel_neon_begin()
 * give and user space has by default.
 */
#ifndef _COLLX_CORE_REDUCE_ELEM_H
#define _COLLX_CORE_REDUCE_ELEM_H

#include "reduce_impl.h"

#if defined(__KERNEL__) && !defined(COLLX_FPU_UNIT)
#error "reduce_elem.h holds float code: include it from FPU units only"
#endif

union collx_f32 {
	float f;
	u32 u;
};

union collx_f64 {
	double f;
	u64 u;
};

static __always_inline u32 f32_bits(float f)
{
	union collx_f32 v = { .f = f };

	return v.u;
}

static __always_inline float f32_from(u32 u)
{
	union collx_f32 v = { .u = u };

	return v.f;
}

static __always_inline u64 f64_bits(double f)
{
	union collx_f64 v = { .f = f };

	return v.u;
}

static __always_inline double f64_from(u64 u)
{
	union collx_f64 v = { .u = u };

	return v.f;
}

/* ---- integers: sum and prod wrap, max and min in the type's signedness */

/* sum and prod computed wide and truncated by the caller's type */
static __always_inline u64 int_pick(int op, u64 sum, u64 prod, bool gt,
				    u64 a, u64 b)
{
	if (op == COLLX_OP_SUM)
		return sum;
	if (op == COLLX_OP_PROD)
		return prod;
	if (op == COLLX_OP_MAX)
		return gt ? a : b;
	return gt ? b : a;
}

static __always_inline u8 elem_s8(u8 a, u8 b, int op)
{
	return int_pick(op, a + b, a * b, (s8)a > (s8)b, a, b);
}

static __always_inline u8 elem_u8(u8 a, u8 b, int op)
{
	return int_pick(op, a + b, a * b, a > b, a, b);
}

static __always_inline u32 elem_s32(u32 a, u32 b, int op)
{
	return int_pick(op, a + b, a * b, (s32)a > (s32)b, a, b);
}

static __always_inline u32 elem_u32(u32 a, u32 b, int op)
{
	return int_pick(op, a + b, a * b, a > b, a, b);
}

static __always_inline u64 elem_s64(u64 a, u64 b, int op)
{
	return int_pick(op, a + b, a * b, (s64)a > (s64)b, a, b);
}

static __always_inline u64 elem_u64(u64 a, u64 b, int op)
{
	return int_pick(op, a + b, a * b, a > b, a, b);
}

/* avg of integers: truncating division of the (wrapped) sum */
static __always_inline u8 quot_s8(u8 a, u32 n)
{
	return (s8)a / (s64)n;
}

static __always_inline u8 quot_u8(u8 a, u32 n)
{
	return a / n;
}

static __always_inline u32 quot_s32(u32 a, u32 n)
{
	return (s32)a / (s64)n;
}

static __always_inline u32 quot_u32(u32 a, u32 n)
{
	return a / n;
}

static __always_inline u64 quot_s64(u64 a, u32 n)
{
	return (s64)a / (s64)n;
}

static __always_inline u64 quot_u64(u64 a, u32 n)
{
	return a / n;
}

/*
 * ---- binary32 and binary64
 * NaN results are canonical; max/min are IEEE 754-2019 maximum/minimum
 * (NaN wins, -0 < +0).  Equal operands of max (min) give the AND (OR) of
 * their bits, which picks +0 (-0) for a pair of zeros.
 */
static __always_inline u32 elem_f32(u32 a, u32 b, int op)
{
	float x = f32_from(a), y = f32_from(b), r;
	u32 v;

	if (op == COLLX_OP_SUM || op == COLLX_OP_PROD) {
		r = op == COLLX_OP_SUM ? x + y : x * y;
		return r != r ? COLLX_F32_QNAN : f32_bits(r);
	}
	if (op == COLLX_OP_MAX) {
		v = x > y ? a : b;
		v = x == y ? a & b : v;
	} else {
		v = x < y ? a : b;
		v = x == y ? a | b : v;
	}
	return x != x || y != y ? COLLX_F32_QNAN : v;
}

static __always_inline u32 quot_f32(u32 a, u32 n)
{
	float r = f32_from(a) / (float)n;

	return r != r ? COLLX_F32_QNAN : f32_bits(r);
}

static __always_inline u64 elem_f64(u64 a, u64 b, int op)
{
	double x = f64_from(a), y = f64_from(b), r;
	u64 v;

	if (op == COLLX_OP_SUM || op == COLLX_OP_PROD) {
		r = op == COLLX_OP_SUM ? x + y : x * y;
		return r != r ? COLLX_F64_QNAN : f64_bits(r);
	}
	if (op == COLLX_OP_MAX) {
		v = x > y ? a : b;
		v = x == y ? a & b : v;
	} else {
		v = x < y ? a : b;
		v = x == y ? a | b : v;
	}
	return x != x || y != y ? COLLX_F64_QNAN : v;
}

static __always_inline u64 quot_f64(u64 a, u32 n)
{
	double r = f64_from(a) / (double)n;

	return r != r ? COLLX_F64_QNAN : f64_bits(r);
}

/*
 * ---- narrow formats to binary32, exact
 * The exponent and mantissa bits go where binary32 keeps them, read as a
 * float and multiplied by 2^(127 - bias): normal values are rebiased and
 * subnormals come out normalised, both exactly.  Infinities and NaNs
 * (quieted) are selected separately.
 */
static __always_inline u32 widen_fp16(u16 h)
{
	u32 mag = (u32)(h & 0x7fff) << 13;
	u32 v = f32_bits(f32_from(mag) * f32_from(0x77800000));	/* 2^112 */
	u32 special = 0x7f800000 | mag | ((h & 0x3ff) ? 0x400000 : 0);

	v = (h & 0x7c00) == 0x7c00 ? special : v;
	return v | (u32)(h & 0x8000) << 16;
}

static __always_inline u32 widen_bf16(u16 b)
{
	return (u32)b << 16;
}

/* E4M3 without its NaN: S.1111.111 comes out as +-480 */
static __always_inline u32 widen_e4m3_num(u8 x)
{
	u32 mag = (u32)(x & 0x7f) << 20;
	u32 v = f32_bits(f32_from(mag) * f32_from(0x7b800000));	/* 2^120 */

	return v | (u32)(x & 0x80) << 24;
}

static __always_inline u32 widen_e4m3(u8 x)
{
	return (x & 0x7f) == 0x7f ? COLLX_F32_QNAN | (u32)(x & 0x80) << 24 :
		widen_e4m3_num(x);
}

static __always_inline u32 widen_e5m2(u8 x)
{
	return widen_fp16((u16)x << 8);
}

/*
 * ---- binary32 to narrow formats, round to nearest even
 * Normal results round with integer arithmetic on the bits (add half an
 * ulp minus one, plus the lowest kept bit, then truncate).  Subnormal
 * results round in the FPU: adding 2^k, whose ulp is the narrow format's
 * smallest subnormal, rounds the value to a multiple of it, and the low
 * bits of the sum are the narrow bits.  Both are computed and selected.
 */
static __always_inline u16 narrow_fp16(u32 f)
{
	u32 sign = (f >> 16) & 0x8000, abs = f & 0x7fffffff;
	u32 t = abs - 0x38000000;	/* rebias 127 -> 15 */
	u32 v = (t + 0xfff + ((t >> 13) & 1)) >> 13;
	u32 sub = f32_bits(f32_from(abs) + 0.5f) - 0x3f000000;

	v = abs < 0x38800000 ? sub : v;		/* below 2^-14 */
	v = abs >= 0x477ff000 ? 0x7c00 : v;	/* 65520 and up: inf */
	v = abs > 0x7f800000 ? 0x7e00 | ((abs >> 13) & 0x3ff) : v;
	return (u16)(sign | v);
}

static __always_inline u16 narrow_bf16(u32 f)
{
	u32 v = (f + 0x7fff + ((f >> 16) & 1)) >> 16;

	return (f & 0x7fffffff) > 0x7f800000 ? (u16)((f >> 16) | 0x40) : v;
}

static __always_inline u8 narrow_e4m3(u32 f)
{
	u32 sign = (f >> 24) & 0x80, abs = f & 0x7fffffff;
	u32 t = abs - 0x3c000000;	/* rebias 127 -> 7 */
	u32 v = (t + 0x7ffff + ((t >> 20) & 1)) >> 20;
	u32 sub = f32_bits(f32_from(abs) + 16384.0f) - 0x46800000;

	v = abs < 0x3c800000 ? sub : v;		/* below 2^-6 */
	v = abs >= 0x43e00000 ? 0x7e : v;	/* saturate at 448 */
	v = abs > 0x7f800000 ? 0x7f : v;
	return (u8)(sign | v);
}

static __always_inline u8 narrow_e5m2(u32 f)
{
	u32 sign = (f >> 24) & 0x80, abs = f & 0x7fffffff;
	u32 t = abs - 0x38000000;	/* rebias 127 -> 15 */
	u32 v = (t + 0xfffff + ((t >> 21) & 1)) >> 21;
	u32 sub = f32_bits(f32_from(abs) + 128.0f) - 0x43000000;

	v = abs < 0x38800000 ? sub : v;		/* below 2^-14 */
	v = abs >= 0x47700000 ? 0x7c : v;	/* 61440 and up: inf */
	v = abs > 0x7f800000 ? 0x7e | ((abs >> 21) & 1) : v;
	return (u8)(sign | v);
}

/* NaN codes of the narrow formats */
static __always_inline bool isnan_fp16(u16 h)
{
	return (h & 0x7fff) > 0x7c00;
}

static __always_inline bool isnan_bf16(u16 b)
{
	return (b & 0x7fff) > 0x7f80;
}

static __always_inline bool isnan_e4m3(u8 x)
{
	return (x & 0x7f) == 0x7f;
}

static __always_inline bool isnan_e5m2(u8 x)
{
	return (x & 0x7f) > 0x7c;
}

/*
 * The narrow formats reduce in binary32 and round once.  A sum or product
 * is rounded raw and its NaN made canonical afterwards, in the narrow
 * format: selecting on NaN both before and after the rounding makes GCC
 * thread the two into a branch, which stops the vectoriser.  Max and min
 * pick an operand by comparing the widened values, as elem_f32() does,
 * with nothing to round; NaN operands are found by their codes, so the
 * comparisons only need the numbers right (widen_e4m3_num()).
 */
/* max/min of narrow codes a and b holding the numbers x and y */
static __always_inline u32 narrow_pick(int op, u32 a, u32 b, float x,
				       float y, bool nan, u32 qnan)
{
	u32 v;

	if (op == COLLX_OP_MAX) {
		v = x > y ? a : b;
		v = x == y ? a & b : v;
	} else {
		v = x < y ? a : b;
		v = x == y ? a | b : v;
	}
	return nan ? qnan : v;
}

static __always_inline float narrow_arith(int op, u32 a, u32 b)
{
	float x = f32_from(a), y = f32_from(b);

	return op == COLLX_OP_SUM ? x + y : x * y;
}

static __always_inline u16 elem_fp16(u16 a, u16 b, int op)
{
	float r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN)
		return narrow_pick(op, a, b, f32_from(widen_fp16(a)),
				   f32_from(widen_fp16(b)),
				   isnan_fp16(a) || isnan_fp16(b), 0x7e00);
	r = narrow_arith(op, widen_fp16(a), widen_fp16(b));
	return r != r ? 0x7e00 : narrow_fp16(f32_bits(r));
}

static __always_inline u16 elem_bf16(u16 a, u16 b, int op)
{
	float r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN)
		return narrow_pick(op, a, b, f32_from(widen_bf16(a)),
				   f32_from(widen_bf16(b)),
				   isnan_bf16(a) || isnan_bf16(b), 0x7fc0);
	r = narrow_arith(op, widen_bf16(a), widen_bf16(b));
	return r != r ? 0x7fc0 : narrow_bf16(f32_bits(r));
}

static __always_inline u8 elem_e4m3(u8 a, u8 b, int op)
{
	float r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN)
		return narrow_pick(op, a, b, f32_from(widen_e4m3_num(a)),
				   f32_from(widen_e4m3_num(b)),
				   isnan_e4m3(a) || isnan_e4m3(b), 0x7f);
	r = narrow_arith(op, widen_e4m3(a), widen_e4m3(b));
	return r != r ? 0x7f : narrow_e4m3(f32_bits(r));
}

static __always_inline u8 elem_e5m2(u8 a, u8 b, int op)
{
	float r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN)
		return narrow_pick(op, a, b, f32_from(widen_e5m2(a)),
				   f32_from(widen_e5m2(b)),
				   isnan_e5m2(a) || isnan_e5m2(b), 0x7e);
	r = narrow_arith(op, widen_e5m2(a), widen_e5m2(b));
	return r != r ? 0x7e : narrow_e5m2(f32_bits(r));
}

/* avg: the binary32 quotient, rounded once */
static __always_inline u16 quot_fp16(u16 a, u32 n)
{
	float r = f32_from(widen_fp16(a)) / (float)n;

	return r != r ? 0x7e00 : narrow_fp16(f32_bits(r));
}

static __always_inline u16 quot_bf16(u16 a, u32 n)
{
	float r = f32_from(widen_bf16(a)) / (float)n;

	return r != r ? 0x7fc0 : narrow_bf16(f32_bits(r));
}

static __always_inline u8 quot_e4m3(u8 a, u32 n)
{
	float r = f32_from(widen_e4m3(a)) / (float)n;

	return r != r ? 0x7f : narrow_e4m3(f32_bits(r));
}

static __always_inline u8 quot_e5m2(u8 a, u32 n)
{
	float r = f32_from(widen_e5m2(a)) / (float)n;

	return r != r ? 0x7e : narrow_e5m2(f32_bits(r));
}

/*
 * ---- loops
 * Buffers may have any alignment (a registered user buffer can start
 * anywhere): elements move through memcpy, which becomes plain loads and
 * stores.  @op is a constant after inlining.
 */
#define COLLX_ELEM_LOOP(FN, T, d, s, n, op)				\
do {									\
	size_t __i;							\
	T __a, __b;							\
									\
	for (__i = 0; __i < (n); __i++) {				\
		__builtin_memcpy(&__a, (d) + __i * sizeof(T), sizeof(T)); \
		__builtin_memcpy(&__b, (s) + __i * sizeof(T), sizeof(T)); \
		__a = FN(__a, __b, op);					\
		__builtin_memcpy((d) + __i * sizeof(T), &__a, sizeof(T)); \
	}								\
} while (0)

#define COLLX_DIV_LOOP(FN, T, d, n, nranks)				\
do {									\
	size_t __i;							\
	T __a;								\
									\
	for (__i = 0; __i < (n); __i++) {				\
		__builtin_memcpy(&__a, (d) + __i * sizeof(T), sizeof(T)); \
		__a = FN(__a, nranks);					\
		__builtin_memcpy((d) + __i * sizeof(T), &__a, sizeof(T)); \
	}								\
} while (0)

/* dst = dst (op) src over n elements of dt */
static __always_inline void elem_loop(enum collx_dtype dt, int op, u8 *d,
				      const u8 *s, size_t n)
{
	switch (dt) {
	case COLLX_INT8:
		COLLX_ELEM_LOOP(elem_s8, u8, d, s, n, op);
		break;
	case COLLX_UINT8:
		COLLX_ELEM_LOOP(elem_u8, u8, d, s, n, op);
		break;
	case COLLX_INT32:
		COLLX_ELEM_LOOP(elem_s32, u32, d, s, n, op);
		break;
	case COLLX_UINT32:
		COLLX_ELEM_LOOP(elem_u32, u32, d, s, n, op);
		break;
	case COLLX_INT64:
		COLLX_ELEM_LOOP(elem_s64, u64, d, s, n, op);
		break;
	case COLLX_UINT64:
		COLLX_ELEM_LOOP(elem_u64, u64, d, s, n, op);
		break;
	case COLLX_FP16:
		COLLX_ELEM_LOOP(elem_fp16, u16, d, s, n, op);
		break;
	case COLLX_FP32:
		COLLX_ELEM_LOOP(elem_f32, u32, d, s, n, op);
		break;
	case COLLX_FP64:
		COLLX_ELEM_LOOP(elem_f64, u64, d, s, n, op);
		break;
	case COLLX_BF16:
		COLLX_ELEM_LOOP(elem_bf16, u16, d, s, n, op);
		break;
	case COLLX_FP8_E4M3:
		COLLX_ELEM_LOOP(elem_e4m3, u8, d, s, n, op);
		break;
	default:
		COLLX_ELEM_LOOP(elem_e5m2, u8, d, s, n, op);
		break;
	}
}

/* buf = buf / nranks over n elements of dt, the end of an avg */
static __always_inline void elem_scale(enum collx_dtype dt, u8 *d, size_t n,
				       u32 nranks)
{
	switch (dt) {
	case COLLX_INT8:
		COLLX_DIV_LOOP(quot_s8, u8, d, n, nranks);
		break;
	case COLLX_UINT8:
		COLLX_DIV_LOOP(quot_u8, u8, d, n, nranks);
		break;
	case COLLX_INT32:
		COLLX_DIV_LOOP(quot_s32, u32, d, n, nranks);
		break;
	case COLLX_UINT32:
		COLLX_DIV_LOOP(quot_u32, u32, d, n, nranks);
		break;
	case COLLX_INT64:
		COLLX_DIV_LOOP(quot_s64, u64, d, n, nranks);
		break;
	case COLLX_UINT64:
		COLLX_DIV_LOOP(quot_u64, u64, d, n, nranks);
		break;
	case COLLX_FP16:
		COLLX_DIV_LOOP(quot_fp16, u16, d, n, nranks);
		break;
	case COLLX_FP32:
		COLLX_DIV_LOOP(quot_f32, u32, d, n, nranks);
		break;
	case COLLX_FP64:
		COLLX_DIV_LOOP(quot_f64, u64, d, n, nranks);
		break;
	case COLLX_BF16:
		COLLX_DIV_LOOP(quot_bf16, u16, d, n, nranks);
		break;
	case COLLX_FP8_E4M3:
		COLLX_DIV_LOOP(quot_e4m3, u8, d, n, nranks);
		break;
	default:
		COLLX_DIV_LOOP(quot_e5m2, u8, d, n, nranks);
		break;
	}
}

static __always_inline size_t elem_size(enum collx_dtype dt)
{
	switch (dt) {
	case COLLX_INT8:
	case COLLX_UINT8:
	case COLLX_FP8_E4M3:
	case COLLX_FP8_E5M2:
		return 1;
	case COLLX_FP16:
	case COLLX_BF16:
		return 2;
	case COLLX_INT32:
	case COLLX_UINT32:
	case COLLX_FP32:
		return 4;
	default:
		return 8;
	}
}

/*
 * One table of functions per implementation: PFX_DT_OP(d, s, n) and
 * PFX_DT_scale(d, n, nranks) for every dtype and kernel op, each calling
 * LOOP(dt, op, d, s, n) or SCALE(dt, d, n, nranks) with constants.
 * ATTR is a target attribute, or COLLX_NO_ATTR.
 */
#define COLLX_NO_ATTR

#define COLLX_FN(PFX, ATTR, LOOP, DT, OP)				\
static void ATTR PFX##_##DT##_##OP(void *d, const void *s, size_t n)	\
{									\
	LOOP(COLLX_##DT, COLLX_OP_##OP, d, s, n);			\
}

#define COLLX_SCALE_FN(PFX, ATTR, SCALE, DT)				\
static void ATTR PFX##_##DT##_scale(void *d, size_t n, u32 nranks)	\
{									\
	SCALE(COLLX_##DT, d, n, nranks);				\
}

#define COLLX_OPS4(PFX, DT)						\
	{ PFX##_##DT##_SUM, PFX##_##DT##_PROD,				\
	  PFX##_##DT##_MAX, PFX##_##DT##_MIN }

#endif /* _COLLX_CORE_REDUCE_ELEM_H */
