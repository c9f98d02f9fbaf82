/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: what the reduction implementations share.  Internal to
 * kmod/core; users include reduce.h.
 */
#ifndef _COLLX_CORE_REDUCE_IMPL_H
#define _COLLX_CORE_REDUCE_IMPL_H

#include "reduce.h"

/* Ops with a kernel of their own; avg reduces as sum. */
#define COLLX_NR_KERNEL_OPS	4

typedef void (*collx_reduce_fn_t)(void *dst, const void *src, size_t n);
typedef void (*collx_scale_fn_t)(void *buf, size_t n, u32 nranks);

/**
 * struct collx_reduce_ops - one implementation's kernels
 * @name: printable name
 * @reduce: dst = dst (op) src, indexed by dtype and op (sum, prod, max, min)
 * @scale: buf = buf / nranks, indexed by dtype
 *
 * Every function here may use float or SIMD registers: in the kernel it is
 * only called between collx_fpu_begin() and collx_fpu_end().
 */
struct collx_reduce_ops {
	const char *name;
	collx_reduce_fn_t reduce[COLLX_DTYPE_COUNT][COLLX_NR_KERNEL_OPS];
	collx_scale_fn_t scale[COLLX_DTYPE_COUNT];
};

extern const struct collx_reduce_ops collx_reduce_scalar_ops;
#ifdef COLLX_HAVE_X86_SIMD
extern const struct collx_reduce_ops collx_reduce_avx2_ops;
extern const struct collx_reduce_ops collx_reduce_avx512_ops;
extern const struct collx_reduce_ops collx_reduce_avx512_bf16_ops;
#endif
#ifdef COLLX_HAVE_NEON
extern const struct collx_reduce_ops collx_reduce_neon_ops;
#endif

/* Canonical quiet NaNs: every float NaN result is one of these. */
#define COLLX_F32_QNAN	0x7fc00000U
#define COLLX_F64_QNAN	0x7ff8000000000000ULL

/*
 * The integer-only reference conversions behind collx_fp16_to_f32_bits()
 * and friends (reduce.h says what they do).  The kernels use the
 * branch-free forms of reduce_elem.h instead; the tests hold the two
 * equal.
 */

/* round(m / 2^shift) to nearest, ties to even; 1 <= shift <= 31 */
static inline u32 __collx_rne_shift(u32 m, u32 shift)
{
	u32 q = m >> shift, rem = m & ((1U << shift) - 1);
	u32 half = 1U << (shift - 1);

	return q + (rem > half || (rem == half && (q & 1)));
}

/* a subnormal of a narrow format: man * 2^(lo - 127), normalised */
static inline u32 __collx_widen_subnormal(u32 man, u32 lo)
{
	u32 p = 31 - __builtin_clz(man);

	return ((p + lo) << 23) | ((man << (23 - p)) & 0x7fffff);
}

static inline u32 __collx_fp16_to_f32_bits(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16;
	u32 exp = (h >> 10) & 0x1f;
	u32 man = h & 0x3ff;

	if (exp == 0x1f)	/* inf, or NaN made quiet as F16C does */
		return sign | 0x7f800000 | (man << 13) | (man ? 0x400000 : 0);
	if (exp)
		return sign | ((exp + 112) << 23) | (man << 13);
	if (!man)
		return sign;
	return sign | __collx_widen_subnormal(man, 103); /* man * 2^-24 */
}

static inline u16 __collx_f32_bits_to_fp16(u32 f)
{
	u32 sign = (f >> 16) & 0x8000;
	u32 abs = f & 0x7fffffff;

	if (abs > 0x7f800000)	/* NaN: quiet, keep the top payload bits */
		return sign | 0x7e00 | ((abs >> 13) & 0x3ff);
	if (abs >= 0x477ff000)	/* >= 65520 rounds to infinity */
		return sign | 0x7c00;
	if (abs >= 0x38800000) {	/* normal: rebias, round on bit 13 */
		abs -= 0x38000000;
		return sign | ((abs + 0xfff + ((abs >> 13) & 1)) >> 13);
	}
	if (abs <= 0x33000000)	/* <= 2^-25: ties to even give zero */
		return sign;
	/* subnormal result: round(value / 2^-24), shift 14 ... 24 */
	return sign | __collx_rne_shift((abs & 0x7fffff) | 0x800000,
					126 - (abs >> 23));
}

static inline u32 __collx_bf16_to_f32_bits(u16 b)
{
	return (u32)b << 16;
}

static inline u16 __collx_f32_bits_to_bf16(u32 f)
{
	if ((f & 0x7fffffff) > 0x7f800000)
		return (f >> 16) | 0x40;
	return (f + 0x7fff + ((f >> 16) & 1)) >> 16;
}

static inline u32 __collx_e4m3_to_f32_bits(u8 x)
{
	u32 sign = (u32)(x & 0x80) << 24;
	u32 exp = (x >> 3) & 0xf;
	u32 man = x & 7;

	if ((x & 0x7f) == 0x7f)
		return sign | 0x7fc00000;
	if (exp)
		return sign | ((exp + 120) << 23) | (man << 20);
	if (!man)
		return sign;
	return sign | __collx_widen_subnormal(man, 118); /* man * 2^-9 */
}

static inline u8 __collx_f32_bits_to_e4m3(u32 f)
{
	u32 sign = (f >> 24) & 0x80;
	u32 abs = f & 0x7fffffff;

	if (abs > 0x7f800000)
		return sign | 0x7f;
	/* 448 and above, the tie at 464 (even: 448) and inf included */
	if (abs >= 0x43e00000)
		return sign | 0x7e;
	if (abs >= 0x3c800000) {	/* normal (>= 2^-6): round on bit 20 */
		abs -= 0x3c000000;
		return sign | ((abs + 0x7ffff + ((abs >> 20) & 1)) >> 20);
	}
	if (abs <= 0x3a800000)	/* <= 2^-10: ties to even give zero */
		return sign;
	/* subnormal result: round(value / 2^-9), shift 21 ... 24 */
	return sign | __collx_rne_shift((abs & 0x7fffff) | 0x800000,
					141 - (abs >> 23));
}

static inline u32 __collx_e5m2_to_f32_bits(u8 x)
{
	return __collx_fp16_to_f32_bits((u16)x << 8);
}

static inline u8 __collx_f32_bits_to_e5m2(u32 f)
{
	u32 sign = (f >> 24) & 0x80;
	u32 abs = f & 0x7fffffff;

	if (abs > 0x7f800000)
		return sign | 0x7e | ((abs >> 21) & 1);
	if (abs >= 0x47700000)	/* >= 61440 rounds to infinity */
		return sign | 0x7c;
	if (abs >= 0x38800000) {	/* normal (>= 2^-14): round on bit 21 */
		abs -= 0x38000000;
		return sign | ((abs + 0xfffff + ((abs >> 21) & 1)) >> 21);
	}
	if (abs <= 0x37000000)	/* <= 2^-17: ties to even give zero */
		return sign;
	/* subnormal result: round(value / 2^-16), shift 22 ... 24 */
	return sign | __collx_rne_shift((abs & 0x7fffff) | 0x800000,
					134 - (abs >> 23));
}

#endif /* _COLLX_CORE_REDUCE_IMPL_H */
