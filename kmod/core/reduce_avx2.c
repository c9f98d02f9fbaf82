// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: AVX2 reduction kernels (F16C for fp16).
 *
 * GCC vector extensions and target attributes instead of <immintrin.h>, so
 * the file builds unchanged in the kernel and in user space; the build
 * flags stay baseline x86-64 and reduce.c only calls in here after a CPU
 * feature check.  Built with FPU flags: in the kernel every function here
 * runs between collx_fpu_begin() and collx_fpu_end().
 *
 * Each vector lane follows the per-element rules of reduce_scalar.c, and
 * tails shorter than a vector run the scalar kernel itself, so the results
 * are bit-identical to the scalar implementation.
 */
#include "reduce_impl.h"

#ifdef COLLX_HAVE_X86_SIMD

#define COLLX_AVX2	__attribute__((target("avx2")))
#define COLLX_AVX2_F16C	__attribute__((target("avx2,f16c")))

/* 256-bit lanes, and byte-aligned aliases of them for loads and stores */
typedef s8 __attribute__((vector_size(32))) v32s8;
typedef u8 __attribute__((vector_size(32))) v32u8;
typedef s32 __attribute__((vector_size(32))) v8s32;
typedef u32 __attribute__((vector_size(32))) v8u32;
typedef s64 __attribute__((vector_size(32))) v4s64;
typedef u64 __attribute__((vector_size(32))) v4u64;
typedef float __attribute__((vector_size(32))) v8f32;
typedef double __attribute__((vector_size(32))) v4f64;
typedef s16 __attribute__((vector_size(16))) v8s16;
typedef u16 __attribute__((vector_size(16))) v8u16;

typedef s8 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v32s8_u;
typedef u8 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v32u8_u;
typedef s32 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v8s32_u;
typedef u32 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v8u32_u;
typedef s64 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v4s64_u;
typedef u64 __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v4u64_u;
typedef float __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v8f32_u;
typedef double __attribute__((vector_size(32), __may_alias__))
	__aligned(1) v4f64_u;
typedef s16 __attribute__((vector_size(16), __may_alias__))
	__aligned(1) v8s16_u;
typedef u16 __attribute__((vector_size(16), __may_alias__))
	__aligned(1) v8u16_u;

/*
 * Software prefetch this far ahead of both streams.  The hardware
 * prefetchers alone leave DRAM-sized reductions 10-30% below a plain add
 * loop (the heavier lanes keep fewer misses in flight); 2 KiB ahead closes
 * the gap on the machines measured.  Prefetches never fault, so running
 * past the end of a buffer is harmless.
 */
#define PFD	2048

#define LD(VT, p)	(*(const VT##_u *)(p))
#define ST(VT, p, v)	(*(VT##_u *)(p) = (v))

/*
 * Lane-wise integer op; @op is a constant after inlining.  Sum and product
 * are computed unsigned (wrapping), comparisons in the element's own type.
 */
#define INT_VOP(fn, VT, UVT)						\
static inline void COLLX_AVX2 fn(VT *r, VT a, VT b, int op)		\
{									\
	VT m;								\
									\
	if (op == COLLX_OP_SUM) {					\
		*r = (VT)((UVT)a + (UVT)b);				\
	} else if (op == COLLX_OP_PROD) {				\
		*r = (VT)((UVT)a * (UVT)b);				\
	} else {							\
		if (op == COLLX_OP_MAX)					\
			m = (VT)(a > b);				\
		else							\
			m = (VT)(a < b);				\
		*r = (a & m) | (b & ~m);				\
	}								\
}

INT_VOP(v32s8_op, v32s8, v32u8)
INT_VOP(v32u8_op, v32u8, v32u8)
INT_VOP(v8s32_op, v8s32, v8u32)
INT_VOP(v8u32_op, v8u32, v8u32)
INT_VOP(v4s64_op, v4s64, v4u64)
INT_VOP(v4u64_op, v4u64, v4u64)

/*
 * Float lanes, the rules of reduce_scalar.c: canonical NaN results, and
 * max/min as IEEE 754-2019 maximum/minimum (NaN wins, -0 < +0; equal
 * operands give the AND (max) or OR (min) of their bits).
 */
static inline void COLLX_AVX2 v8f32_op(v8f32 *res, v8f32 a, v8f32 b,
					int op)
{
	v8s32 ai = (v8s32)a, bi = (v8s32)b, gt, lt, eq, r, nan;
	v8f32 f;

	switch (op) {
	case COLLX_OP_SUM:
	case COLLX_OP_PROD:
		f = op == COLLX_OP_SUM ? a + b : a * b;
		nan = (v8s32)(f != f);
		*res = (v8f32)(((v8s32)f & ~nan) | (nan & (s32)COLLX_F32_QNAN));
		break;
	default:
		gt = (v8s32)(a > b);
		lt = (v8s32)(a < b);
		eq = (v8s32)(a == b);
		if (op == COLLX_OP_MAX)
			r = (gt & ai) | (lt & bi) | (eq & ai & bi);
		else
			r = (lt & ai) | (gt & bi) | (eq & (ai | bi));
		*res = (v8f32)(r | (~(gt | lt | eq) & (s32)COLLX_F32_QNAN));
		break;
	}
}

static inline void COLLX_AVX2 v4f64_op(v4f64 *res, v4f64 a, v4f64 b,
					int op)
{
	v4s64 ai = (v4s64)a, bi = (v4s64)b, gt, lt, eq, r, nan;
	v4f64 f;

	switch (op) {
	case COLLX_OP_SUM:
	case COLLX_OP_PROD:
		f = op == COLLX_OP_SUM ? a + b : a * b;
		nan = (v4s64)(f != f);
		*res = (v4f64)(((v4s64)f & ~nan) | (nan & (s64)COLLX_F64_QNAN));
		break;
	default:
		gt = (v4s64)(a > b);
		lt = (v4s64)(a < b);
		eq = (v4s64)(a == b);
		if (op == COLLX_OP_MAX)
			r = (gt & ai) | (lt & bi) | (eq & ai & bi);
		else
			r = (lt & ai) | (gt & bi) | (eq & (ai | bi));
		*res = (v4f64)(r | (~(gt | lt | eq) & (s64)COLLX_F64_QNAN));
		break;
	}
}

static inline COLLX_AVX2 v8f32 v8f32_div(v8f32 a, float n)
{
	v8f32 f = a / n;
	v8s32 nan = (v8s32)(f != f);

	return (v8f32)(((v8s32)f & ~nan) | (nan & (s32)COLLX_F32_QNAN));
}

static inline COLLX_AVX2 v4f64 v4f64_div(v4f64 a, double n)
{
	v4f64 f = a / n;
	v4s64 nan = (v4s64)(f != f);

	return (v4f64)(((v4s64)f & ~nan) | (nan & (s64)COLLX_F64_QNAN));
}

/*
 * dst = dst (op) src over n elements of T, two vectors per iteration, the
 * tail by the scalar kernel.  d and s are byte pointers: any alignment.
 */
#define AVX2_KERNEL(fn, T, VT, dt, op)					\
static void COLLX_AVX2 fn(void *dst, const void *src, size_t n)		\
{									\
	const size_t w = sizeof(VT) / sizeof(T);			\
	u8 *d = dst;							\
	const u8 *s = src;						\
	size_t i = 0;							\
	VT a0, a1;							\
									\
	for (; i + 2 * w <= n; i += 2 * w) {				\
		__builtin_prefetch(d + i * sizeof(T) + PFD, 1);		\
		__builtin_prefetch(s + i * sizeof(T) + PFD, 0);		\
		a0 = LD(VT, d + i * sizeof(T));				\
		a1 = LD(VT, d + (i + w) * sizeof(T));			\
		VT##_op(&a0, a0, LD(VT, s + i * sizeof(T)), op);	\
		VT##_op(&a1, a1, LD(VT, s + (i + w) * sizeof(T)), op);	\
		ST(VT, d + i * sizeof(T), a0);				\
		ST(VT, d + (i + w) * sizeof(T), a1);			\
	}								\
	if (i + w <= n) {						\
		a0 = LD(VT, d + i * sizeof(T));				\
		VT##_op(&a0, a0, LD(VT, s + i * sizeof(T)), op);	\
		ST(VT, d + i * sizeof(T), a0);				\
		i += w;							\
	}								\
	if (i < n)							\
		collx_reduce_scalar_ops.reduce[dt][op](d + i * sizeof(T), \
						       s + i * sizeof(T), \
						       n - i);		\
}

AVX2_KERNEL(s8_sum, s8, v32s8, COLLX_INT8, COLLX_OP_SUM)
AVX2_KERNEL(s8_prod, s8, v32s8, COLLX_INT8, COLLX_OP_PROD)
AVX2_KERNEL(s8_max, s8, v32s8, COLLX_INT8, COLLX_OP_MAX)
AVX2_KERNEL(s8_min, s8, v32s8, COLLX_INT8, COLLX_OP_MIN)
AVX2_KERNEL(u8_sum, u8, v32u8, COLLX_UINT8, COLLX_OP_SUM)
AVX2_KERNEL(u8_prod, u8, v32u8, COLLX_UINT8, COLLX_OP_PROD)
AVX2_KERNEL(u8_max, u8, v32u8, COLLX_UINT8, COLLX_OP_MAX)
AVX2_KERNEL(u8_min, u8, v32u8, COLLX_UINT8, COLLX_OP_MIN)
AVX2_KERNEL(s32_sum, s32, v8s32, COLLX_INT32, COLLX_OP_SUM)
AVX2_KERNEL(s32_prod, s32, v8s32, COLLX_INT32, COLLX_OP_PROD)
AVX2_KERNEL(s32_max, s32, v8s32, COLLX_INT32, COLLX_OP_MAX)
AVX2_KERNEL(s32_min, s32, v8s32, COLLX_INT32, COLLX_OP_MIN)
AVX2_KERNEL(u32_sum, u32, v8u32, COLLX_UINT32, COLLX_OP_SUM)
AVX2_KERNEL(u32_prod, u32, v8u32, COLLX_UINT32, COLLX_OP_PROD)
AVX2_KERNEL(u32_max, u32, v8u32, COLLX_UINT32, COLLX_OP_MAX)
AVX2_KERNEL(u32_min, u32, v8u32, COLLX_UINT32, COLLX_OP_MIN)
AVX2_KERNEL(s64_sum, s64, v4s64, COLLX_INT64, COLLX_OP_SUM)
AVX2_KERNEL(s64_prod, s64, v4s64, COLLX_INT64, COLLX_OP_PROD)
AVX2_KERNEL(s64_max, s64, v4s64, COLLX_INT64, COLLX_OP_MAX)
AVX2_KERNEL(s64_min, s64, v4s64, COLLX_INT64, COLLX_OP_MIN)
AVX2_KERNEL(u64_sum, u64, v4u64, COLLX_UINT64, COLLX_OP_SUM)
AVX2_KERNEL(u64_prod, u64, v4u64, COLLX_UINT64, COLLX_OP_PROD)
AVX2_KERNEL(u64_max, u64, v4u64, COLLX_UINT64, COLLX_OP_MAX)
AVX2_KERNEL(u64_min, u64, v4u64, COLLX_UINT64, COLLX_OP_MIN)
AVX2_KERNEL(f32_sum, float, v8f32, COLLX_FP32, COLLX_OP_SUM)
AVX2_KERNEL(f32_prod, float, v8f32, COLLX_FP32, COLLX_OP_PROD)
AVX2_KERNEL(f32_max, float, v8f32, COLLX_FP32, COLLX_OP_MAX)
AVX2_KERNEL(f32_min, float, v8f32, COLLX_FP32, COLLX_OP_MIN)
AVX2_KERNEL(f64_sum, double, v4f64, COLLX_FP64, COLLX_OP_SUM)
AVX2_KERNEL(f64_prod, double, v4f64, COLLX_FP64, COLLX_OP_PROD)
AVX2_KERNEL(f64_max, double, v4f64, COLLX_FP64, COLLX_OP_MAX)
AVX2_KERNEL(f64_min, double, v4f64, COLLX_FP64, COLLX_OP_MIN)

/* 16-bit floats: 8 lanes widened to binary32 and rounded back (RNE). */
static inline COLLX_AVX2_F16C v8f32 fp16_in(const u8 *p)
{
#ifndef __CHECKER__	/* sparse does not know the F16C builtins */
	return __builtin_ia32_vcvtph2ps256(LD(v8s16, p));
#else
	return LD(v8f32, p);
#endif
}

static inline COLLX_AVX2_F16C void fp16_out(u8 *p, v8f32 v)
{
#ifndef __CHECKER__
	ST(v8s16, p, __builtin_ia32_vcvtps2ph256(v, 0));
#else
	ST(v8f32, p, v);
#endif
}

#define HALF_KERNEL(fn, attr, pfx, dt, op)				\
static void attr fn(void *dst, const void *src, size_t n)		\
{									\
	u8 *d = dst;							\
	const u8 *s = src;						\
	size_t i = 0;							\
	v8f32 a0, a1;							\
									\
	for (; i + 16 <= n; i += 16) {					\
		__builtin_prefetch(d + 2 * i + PFD, 1);			\
		__builtin_prefetch(s + 2 * i + PFD, 0);			\
		a0 = pfx##_in(d + 2 * i);				\
		a1 = pfx##_in(d + 2 * i + 16);				\
		v8f32_op(&a0, a0, pfx##_in(s + 2 * i), op);		\
		v8f32_op(&a1, a1, pfx##_in(s + 2 * i + 16), op);	\
		pfx##_out(d + 2 * i, a0);				\
		pfx##_out(d + 2 * i + 16, a1);				\
	}								\
	if (i + 8 <= n) {						\
		v8f32_op(&a0, pfx##_in(d + 2 * i), pfx##_in(s + 2 * i), op); \
		pfx##_out(d + 2 * i, a0);				\
		i += 8;							\
	}								\
	if (i < n)							\
		collx_reduce_scalar_ops.reduce[dt][op](d + 2 * i,	\
						       s + 2 * i, n - i); \
}

HALF_KERNEL(fp16_sum, COLLX_AVX2_F16C, fp16, COLLX_FP16, COLLX_OP_SUM)
HALF_KERNEL(fp16_prod, COLLX_AVX2_F16C, fp16, COLLX_FP16, COLLX_OP_PROD)
HALF_KERNEL(fp16_max, COLLX_AVX2_F16C, fp16, COLLX_FP16, COLLX_OP_MAX)
HALF_KERNEL(fp16_min, COLLX_AVX2_F16C, fp16, COLLX_FP16, COLLX_OP_MIN)

/*
 * bfloat16 is the top half of a binary32, so no conversion instruction is
 * needed: 16 elements loaded as 8 32-bit lanes hold the even elements in
 * their low halves and the odd ones in their high halves.  Shifting left by
 * 16, or masking, gives two binary32 vectors; rounding to nearest even and
 * shifting back interleaves them again in place.
 */
static inline void COLLX_AVX2 bf16_split(const u8 *p, v8f32 *even,
					   v8f32 *odd)
{
	v8u32 x = LD(v8u32, p);

	*even = (v8f32)(x << 16);
	*odd = (v8f32)(x & 0xffff0000);
}

/* round binary32 bits to the upper 16, nearest even (no NaN but canonical) */
static inline v8u32 COLLX_AVX2 bf16_round(v8f32 v)
{
	v8u32 b = (v8u32)v;

	return b + 0x7fff + ((b >> 16) & 1);
}

static inline void COLLX_AVX2 bf16_join(u8 *p, v8f32 even, v8f32 odd)
{
	ST(v8u32, p, (bf16_round(even) >> 16) |
		     (bf16_round(odd) & 0xffff0000));
}

#define BF16_KERNEL(fn, op)						\
static void COLLX_AVX2 fn(void *dst, const void *src, size_t n)	\
{									\
	u8 *d = dst;							\
	const u8 *s = src;						\
	v8f32 de, dodd, se, sodd;					\
	size_t i = 0;							\
									\
	for (; i + 16 <= n; i += 16) {					\
		__builtin_prefetch(d + 2 * i + PFD, 1);			\
		__builtin_prefetch(s + 2 * i + PFD, 0);			\
		bf16_split(d + 2 * i, &de, &dodd);			\
		bf16_split(s + 2 * i, &se, &sodd);			\
		v8f32_op(&de, de, se, op);				\
		v8f32_op(&dodd, dodd, sodd, op);			\
		bf16_join(d + 2 * i, de, dodd);				\
	}								\
	if (i < n)							\
		collx_reduce_scalar_ops.reduce[COLLX_BF16][op](d + 2 * i, \
							       s + 2 * i, \
							       n - i);	\
}

BF16_KERNEL(bf16_sum, COLLX_OP_SUM)
BF16_KERNEL(bf16_prod, COLLX_OP_PROD)
BF16_KERNEL(bf16_max, COLLX_OP_MAX)
BF16_KERNEL(bf16_min, COLLX_OP_MIN)

/* avg scaling: floats divide in lanes; integers use the scalar code. */
static void COLLX_AVX2 f32_scale(void *buf, size_t n, u32 nranks)
{
	u8 *d = buf;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		ST(v8f32, d + 4 * i,
		   v8f32_div(LD(v8f32, d + 4 * i), (float)nranks));
	if (i < n)
		collx_reduce_scalar_ops.scale[COLLX_FP32](d + 4 * i, n - i,
							  nranks);
}

static void COLLX_AVX2 f64_scale(void *buf, size_t n, u32 nranks)
{
	u8 *d = buf;
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		ST(v4f64, d + 8 * i,
		   v4f64_div(LD(v4f64, d + 8 * i), (double)nranks));
	if (i < n)
		collx_reduce_scalar_ops.scale[COLLX_FP64](d + 8 * i, n - i,
							  nranks);
}

#define HALF_SCALE(fn, attr, pfx, dt)					\
static void attr fn(void *buf, size_t n, u32 nranks)			\
{									\
	u8 *d = buf;							\
	size_t i = 0;							\
									\
	for (; i + 8 <= n; i += 8)					\
		pfx##_out(d + 2 * i,					\
			  v8f32_div(pfx##_in(d + 2 * i), (float)nranks)); \
	if (i < n)							\
		collx_reduce_scalar_ops.scale[dt](d + 2 * i, n - i, nranks); \
}

HALF_SCALE(fp16_scale, COLLX_AVX2_F16C, fp16, COLLX_FP16)

static void COLLX_AVX2 bf16_scale(void *buf, size_t n, u32 nranks)
{
	u8 *d = buf;
	v8f32 de, dodd;
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		bf16_split(d + 2 * i, &de, &dodd);
		bf16_join(d + 2 * i, v8f32_div(de, (float)nranks),
			  v8f32_div(dodd, (float)nranks));
	}
	if (i < n)
		collx_reduce_scalar_ops.scale[COLLX_BF16](d + 2 * i, n - i,
							  nranks);
}

#define OPS4(p)	{ p##_sum, p##_prod, p##_max, p##_min }

const struct collx_reduce_ops collx_reduce_avx2_ops = {
	.name = "avx2",
	.reduce = {
		[COLLX_INT8] = OPS4(s8),
		[COLLX_UINT8] = OPS4(u8),
		[COLLX_INT32] = OPS4(s32),
		[COLLX_UINT32] = OPS4(u32),
		[COLLX_INT64] = OPS4(s64),
		[COLLX_UINT64] = OPS4(u64),
		[COLLX_FP16] = OPS4(fp16),
		[COLLX_FP32] = OPS4(f32),
		[COLLX_FP64] = OPS4(f64),
		[COLLX_BF16] = OPS4(bf16),
	},
	/* integer avg: no lane division in AVX2; reduce.c uses scalar */
	.scale = {
		[COLLX_FP16] = fp16_scale,
		[COLLX_FP32] = f32_scale,
		[COLLX_FP64] = f64_scale,
		[COLLX_BF16] = bf16_scale,
	},
};

#endif /* COLLX_HAVE_X86_SIMD */
