// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: arm64 Advanced SIMD (NEON) reduction kernels.
 *
 * GCC vector extensions and a few AArch64 builtins, no <arm_neon.h> (the
 * kernel build has no compiler headers); the types __Float16x4_t and
 * __Float16x8_t are the compiler's own.  Built with FPU flags: in the
 * kernel every function here runs between collx_fpu_begin() and
 * collx_fpu_end(), which puts FPCR in its default state (round to
 * nearest even, no flush-to-zero, no default NaN).
 *
 * Each lane follows the rules of reduce_elem.h and tails run those rules
 * themselves, so the results are bit-identical to the scalar
 * implementation.  FMAX and FMIN are IEEE 754-2019 maximum and minimum
 * (a NaN operand gives NaN, -0 < +0), so only NaN payloads need fixing.
 * The fp8 types have no hand-written vectors: the compiler vectorises
 * reduce_elem.h's loops.
 */
#include "reduce_elem.h"

#ifdef COLLX_HAVE_NEON

/* Four vectors per iteration: two loads per stream in flight each. */
#define NV	4
/* Both streams prefetched this far ahead, as on x86. */
#define PFD	1024

typedef s8 __attribute__((vector_size(16))) s8_q;
typedef u8 __attribute__((vector_size(16))) u8_q;
typedef s32 __attribute__((vector_size(16))) s32_q;
typedef u32 __attribute__((vector_size(16))) u32_q;
typedef s64 __attribute__((vector_size(16))) s64_q;
typedef u64 __attribute__((vector_size(16))) u64_q;
typedef float __attribute__((vector_size(16))) f32_q;
typedef double __attribute__((vector_size(16))) f64_q;

#define VLD(v, p)	__builtin_memcpy(&(v), (p), sizeof(v))
#define VST(p, v)	__builtin_memcpy((p), &(v), sizeof(v))

static __always_inline f32_q zero_f32(void)
{
	f32_q z = { 0 };

	return z;
}

/*
 * fp16 vectors as the fcvt builtins take them: 4 and 8 lanes of the
 * compiler's __fp16 (sparse gets 16-bit integer lanes).
 */
#ifndef __CHECKER__
#define h16_d \
	__typeof__(__builtin_aarch64_float_truncate_lo_v4hf(zero_f32()))
#define h16_q \
	__typeof__(__builtin_aarch64_float_truncate_hi_v8hf(zero_h16d(), \
							    zero_f32()))
#else
typedef s16 __attribute__((vector_size(8))) h16_d;
typedef s16 __attribute__((vector_size(16))) h16_q;
#endif

static __always_inline h16_d zero_h16d(void)
{
	h16_d z = { 0 };

	return z;
}

static __always_inline h16_q zero_h16q(void)
{
	h16_q z = { 0 };

	return z;
}

/*
 * The AArch64 builtins, with type-correct stand-ins for sparse.  The
 * integer max/min builtins take signed lanes whatever the signedness.
 */
#ifndef __CHECKER__
#define A64_FMAX(a, b)		__builtin_aarch64_fmax_nanv4sf(a, b)
#define A64_FMIN(a, b)		__builtin_aarch64_fmin_nanv4sf(a, b)
#define A64_FMAXD(a, b)		__builtin_aarch64_fmax_nanv2df(a, b)
#define A64_FMIND(a, b)		__builtin_aarch64_fmin_nanv2df(a, b)
#define A64_IMINMAX(F, a, b)	__builtin_aarch64_##F(a, b)
/* fcvtl, fcvtl2, fcvtn, fcvtn2: exact widening, narrowing per FPCR */
#define A64_H2F_LO(h)		__builtin_aarch64_float_extend_lo_v4sf(h)
#define A64_H2F_HI(h)		__builtin_aarch64_vec_unpacks_hi_v8hf(h)
#define A64_F2H_LO(f)		__builtin_aarch64_float_truncate_lo_v4hf(f)
#define A64_F2H_HI(lo, f)	__builtin_aarch64_float_truncate_hi_v8hf(lo, f)
#else
#define A64_FMAX(a, b)		((a) + (b))
#define A64_FMIN(a, b)		((a) + (b))
#define A64_FMAXD(a, b)		((a) + (b))
#define A64_FMIND(a, b)		((a) + (b))
#define A64_IMINMAX(F, a, b)	((void)#F, (a) + (b))
#define A64_H2F_LO(h)		((void)(h), zero_f32())
#define A64_H2F_HI(h)		((void)(h), zero_f32())
#define A64_F2H_LO(f)		((void)(f), zero_h16d())
#define A64_F2H_HI(lo, f)	((void)(lo), (void)(f), zero_h16q())
#endif

/*
 * ---- integers: one 16-byte vector, dst = dst (op) src.  T names the
 * function, B the vector type the max (MX) and min (MN) builtins take
 * (whose names they are), U the unsigned type sum and product wrap in.
 */
#define INT_VOP(T, B, U, MX, MN)					\
static __always_inline void T##_vop(u8 *d, const u8 *s, int op)	\
{									\
	B##_q a, b;							\
									\
	VLD(a, d);							\
	VLD(b, s);							\
	if (op == COLLX_OP_SUM)						\
		a = (B##_q)((U##_q)a + (U##_q)b);			\
	else if (op == COLLX_OP_PROD)					\
		a = (B##_q)((U##_q)a * (U##_q)b);			\
	else if (op == COLLX_OP_MAX)					\
		a = A64_IMINMAX(MX, a, b);				\
	else								\
		a = A64_IMINMAX(MN, a, b);				\
	VST(d, a);							\
}

INT_VOP(s8, s8, u8, smaxv16qi, sminv16qi)
INT_VOP(u8, s8, u8, umaxv16qi, uminv16qi)
INT_VOP(s32, s32, u32, smaxv4si, sminv4si)
INT_VOP(u32, s32, u32, umaxv4si, uminv4si)

/* 64-bit lanes have no max/min instruction: compare and select */
#define INT64_VOP(T)							\
static __always_inline void T##_vop(u8 *d, const u8 *s, int op)	\
{									\
	T##_q a, b, m;							\
									\
	VLD(a, d);							\
	VLD(b, s);							\
	if (op == COLLX_OP_SUM) {					\
		a = (T##_q)((u64_q)a + (u64_q)b);			\
	} else if (op == COLLX_OP_PROD) {				\
		a = (T##_q)((u64_q)a * (u64_q)b);			\
	} else {							\
		m = (T##_q)(op == COLLX_OP_MAX ? a > b : a < b);	\
		a = (a & m) | (b & ~m);					\
	}								\
	VST(d, a);							\
}

INT64_VOP(s64)
INT64_VOP(u64)

/*
 * ---- floats, raw: results keep the NaNs the hardware made.  The caller
 * ORs an "is NaN" mask of the results together and, if any came out,
 * canonicalises the part it just wrote (fixup()): the canonical NaN
 * depends on the result alone, so the bits equal canonicalising lane by
 * lane.
 */
static __always_inline f32_q op32(f32_q a, f32_q b, int op)
{
	if (op == COLLX_OP_SUM)
		return a + b;
	if (op == COLLX_OP_PROD)
		return a * b;
	if (op == COLLX_OP_MAX)
		return A64_FMAX(a, b);
	return A64_FMIN(a, b);
}

static __always_inline f64_q op64(f64_q a, f64_q b, int op)
{
	if (op == COLLX_OP_SUM)
		return a + b;
	if (op == COLLX_OP_PROD)
		return a * b;
	if (op == COLLX_OP_MAX)
		return A64_FMAXD(a, b);
	return A64_FMIND(a, b);
}

static __always_inline u32_q nan32(f32_q r)
{
	return (u32_q)(r != r);
}

static __always_inline u32_q fp32_vop(u8 *d, const u8 *s, int op)
{
	f32_q a, b;

	VLD(a, d);
	VLD(b, s);
	a = op32(a, b, op);
	VST(d, a);
	return nan32(a);
}

static __always_inline u32_q fp64_vop(u8 *d, const u8 *s, int op)
{
	f64_q a, b;

	VLD(a, d);
	VLD(b, s);
	a = op64(a, b, op);
	VST(d, a);
	return (u32_q)(a != a);
}

/* 16 bytes of fp16: fcvtl/fcvtl2 exactly, fcvtn/fcvtn2 to nearest even */
static __always_inline u32_q fp16_vop(u8 *d, const u8 *s, int op)
{
	h16_q x, y;
	h16_d xl, yl;
	f32_q lo, hi;

	VLD(x, d);
	VLD(y, s);
	VLD(xl, d);	/* the low halves again, for fcvtl */
	VLD(yl, s);
	lo = op32(A64_H2F_LO(xl), A64_H2F_LO(yl), op);
	hi = op32(A64_H2F_HI(x), A64_H2F_HI(y), op);
	x = A64_F2H_HI(A64_F2H_LO(lo), hi);
	VST(d, x);
	return nan32(lo) | nan32(hi);
}

/*
 * bfloat16, as on x86: 8 elements loaded as 4 32-bit lanes give the even
 * elements by a shift and the odd ones by a mask.  Max and min select an
 * operand, so their results are exact in the top halves; sum and product
 * make NaNs canonical before the integer rounding (which could carry out
 * of an arbitrary NaN), as narrow_bf16() does.
 */
static __always_inline u32_q bf16_round(f32_q v)
{
	u32_q b = (u32_q)v, nan = nan32(v);

	b = (b & ~nan) | (nan & COLLX_F32_QNAN);
	return b + 0x7fff + ((b >> 16) & 1);
}

static __always_inline u32_q bf16_vop(u8 *d, const u8 *s, int op)
{
	u32_q x, y, r;
	f32_q e, o;

	VLD(x, d);
	VLD(y, s);
	e = op32((f32_q)(x << 16), (f32_q)(y << 16), op);
	o = op32((f32_q)(x & 0xffff0000), (f32_q)(y & 0xffff0000), op);
	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		r = ((u32_q)e >> 16) | ((u32_q)o & 0xffff0000);
		VST(d, r);
		return nan32(e) | nan32(o);
	}
	r = (bf16_round(e) >> 16) | (bf16_round(o) & 0xffff0000);
	VST(d, r);
	return (u32_q){ 0 };
}

/* Replace every NaN in n elements at d by the canonical NaN. */
static __always_inline void fixup(enum collx_dtype dt, u8 *d, size_t n)
{
	size_t i;
	u16 h;
	u32 w;
	u64 q;

	for (i = 0; i < n; i++) {
		switch (dt) {
		case COLLX_FP32:
			__builtin_memcpy(&w, d + 4 * i, 4);
			if ((w & 0x7fffffff) > 0x7f800000) {
				w = COLLX_F32_QNAN;
				__builtin_memcpy(d + 4 * i, &w, 4);
			}
			break;
		case COLLX_FP64:
			__builtin_memcpy(&q, d + 8 * i, 8);
			if ((q & ~(1ULL << 63)) > 0x7ff0000000000000ULL) {
				q = COLLX_F64_QNAN;
				__builtin_memcpy(d + 8 * i, &q, 8);
			}
			break;
		case COLLX_FP16:
			__builtin_memcpy(&h, d + 2 * i, 2);
			if ((h & 0x7fff) > 0x7c00) {
				h = 0x7e00;
				__builtin_memcpy(d + 2 * i, &h, 2);
			}
			break;
		default:	/* bf16 */
			__builtin_memcpy(&h, d + 2 * i, 2);
			if ((h & 0x7fff) > 0x7f80) {
				h = 0x7fc0;
				__builtin_memcpy(d + 2 * i, &h, 2);
			}
			break;
		}
	}
}

/* One 16-byte vop; returns NaN lanes to canonicalise afterwards. */
static __always_inline u32_q vop(enum collx_dtype dt, u8 *d, const u8 *s,
				 int op)
{
	switch (dt) {
	case COLLX_INT8:
		s8_vop(d, s, op);
		break;
	case COLLX_UINT8:
		u8_vop(d, s, op);
		break;
	case COLLX_INT32:
		s32_vop(d, s, op);
		break;
	case COLLX_UINT32:
		u32_vop(d, s, op);
		break;
	case COLLX_INT64:
		s64_vop(d, s, op);
		break;
	case COLLX_UINT64:
		u64_vop(d, s, op);
		break;
	case COLLX_FP16:
		return fp16_vop(d, s, op);
	case COLLX_FP32:
		return fp32_vop(d, s, op);
	case COLLX_FP64:
		return fp64_vop(d, s, op);
	default:	/* bf16 */
		return bf16_vop(d, s, op);
	}
	return (u32_q){ 0 };
}

/*
 * dst = dst (op) src over n elements: NV vops per iteration, prefetching
 * ahead, then one at a time, then reduce_elem.h for the tail.
 */
static __always_inline void neon_loop(enum collx_dtype dt, int op, u8 *d,
				      const u8 *s, size_t n)
{
	size_t es = elem_size(dt), nb = n * es, i = 0;
	u32_q nan = { 0 };
	int k;

	if (dt == COLLX_FP8_E4M3 || dt == COLLX_FP8_E5M2) {
		elem_loop(dt, op, d, s, n);
		return;
	}
	for (; i + NV * 16 <= nb; i += NV * 16) {
		__builtin_prefetch(d + i + PFD, 1);
		__builtin_prefetch(s + i + PFD, 0);
		for (k = 0; k < NV; k++)
			nan |= vop(dt, d + i + 16 * k, s + i + 16 * k, op);
	}
	for (; i + 16 <= nb; i += 16)
		nan |= vop(dt, d + i, s + i, op);
	if (unlikely(nan[0] | nan[1] | nan[2] | nan[3]))
		fixup(dt, d, i / es);
	elem_loop(dt, op, d + i, s + i, (nb - i) / es);
}

/* avg scaling: floats divide in lanes; integers and fp8 per element. */
static __always_inline void sop(enum collx_dtype dt, u8 *d, u32 nranks)
{
	f32_q a, lo, hi;
	f64_q b;
	u32_q x, m;
	h16_q h;
	h16_d hl;

	switch (dt) {
	case COLLX_FP16:
		VLD(h, d);
		VLD(hl, d);
		lo = A64_H2F_LO(hl) / (float)nranks;
		hi = A64_H2F_HI(h) / (float)nranks;
		m = nan32(lo);
		lo = (f32_q)(((u32_q)lo & ~m) | (m & COLLX_F32_QNAN));
		m = nan32(hi);
		hi = (f32_q)(((u32_q)hi & ~m) | (m & COLLX_F32_QNAN));
		h = A64_F2H_HI(A64_F2H_LO(lo), hi);
		VST(d, h);
		break;
	case COLLX_FP32:
		VLD(a, d);
		a = a / (float)nranks;
		m = nan32(a);
		a = (f32_q)(((u32_q)a & ~m) | (m & COLLX_F32_QNAN));
		VST(d, a);
		break;
	case COLLX_FP64:
		VLD(b, d);
		b = b / (double)nranks;
		VST(d, b);
		break;
	default:	/* bf16 */
		VLD(x, d);
		lo = (f32_q)(x << 16) / (float)nranks;
		hi = (f32_q)(x & 0xffff0000) / (float)nranks;
		x = (bf16_round(lo) >> 16) | (bf16_round(hi) & 0xffff0000);
		VST(d, x);
		break;
	}
}

static __always_inline void neon_scale(enum collx_dtype dt, u8 *d, size_t n,
				       u32 nranks)
{
	size_t es = elem_size(dt), nb = n * es, i = 0;

	if (dt != COLLX_FP16 && dt != COLLX_FP32 && dt != COLLX_FP64 &&
	    dt != COLLX_BF16) {
		elem_scale(dt, d, n, nranks);
		return;
	}
	for (; i + 16 <= nb; i += 16)
		sop(dt, d + i, nranks);
	/* fp64 quotients are canonicalised here, for the whole part */
	if (dt == COLLX_FP64)
		fixup(dt, d, i / es);
	elem_scale(dt, d + i, (nb - i) / es, nranks);
}

#define NEON_SCALE(dt, d, n, nranks)	neon_scale(dt, d, n, nranks)

COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT8, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT8, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT8, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT8, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT8, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT8, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT8, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT8, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT32, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT32, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT32, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT32, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT32, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT32, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT32, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT32, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT64, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT64, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT64, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, INT64, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT64, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT64, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT64, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, UINT64, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP16, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP16, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP16, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP16, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP32, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP32, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP32, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP32, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP64, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP64, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP64, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP64, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, BF16, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, BF16, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, BF16, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, BF16, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E4M3, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E4M3, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E4M3, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E4M3, MIN)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E5M2, SUM)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E5M2, PROD)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E5M2, MAX)
COLLX_FN(neon, COLLX_NO_ATTR, neon_loop, FP8_E5M2, MIN)

COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, INT8)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, UINT8)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, INT32)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, UINT32)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, INT64)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, UINT64)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, FP16)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, FP32)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, FP64)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, BF16)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, FP8_E4M3)
COLLX_SCALE_FN(neon, COLLX_NO_ATTR, NEON_SCALE, FP8_E5M2)

const struct collx_reduce_ops collx_reduce_neon_ops = {
	.name = "neon",
	.reduce = {
		[COLLX_INT8] = COLLX_OPS4(neon, INT8),
		[COLLX_UINT8] = COLLX_OPS4(neon, UINT8),
		[COLLX_INT32] = COLLX_OPS4(neon, INT32),
		[COLLX_UINT32] = COLLX_OPS4(neon, UINT32),
		[COLLX_INT64] = COLLX_OPS4(neon, INT64),
		[COLLX_UINT64] = COLLX_OPS4(neon, UINT64),
		[COLLX_FP16] = COLLX_OPS4(neon, FP16),
		[COLLX_FP32] = COLLX_OPS4(neon, FP32),
		[COLLX_FP64] = COLLX_OPS4(neon, FP64),
		[COLLX_BF16] = COLLX_OPS4(neon, BF16),
		[COLLX_FP8_E4M3] = COLLX_OPS4(neon, FP8_E4M3),
		[COLLX_FP8_E5M2] = COLLX_OPS4(neon, FP8_E5M2),
	},
	.scale = {
		[COLLX_INT8] = neon_INT8_scale,
		[COLLX_UINT8] = neon_UINT8_scale,
		[COLLX_INT32] = neon_INT32_scale,
		[COLLX_UINT32] = neon_UINT32_scale,
		[COLLX_INT64] = neon_INT64_scale,
		[COLLX_UINT64] = neon_UINT64_scale,
		[COLLX_FP16] = neon_FP16_scale,
		[COLLX_FP32] = neon_FP32_scale,
		[COLLX_FP64] = neon_FP64_scale,
		[COLLX_BF16] = neon_BF16_scale,
		[COLLX_FP8_E4M3] = neon_FP8_E4M3_scale,
		[COLLX_FP8_E5M2] = neon_FP8_E5M2_scale,
	},
};

#endif /* COLLX_HAVE_NEON */
