// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: AVX2 reduction kernels (F16C for fp16).
 *
 * GCC vector extensions and target attributes instead of <immintrin.h>, so
 * the file builds unchanged in the kernel and in user space; the build
 * flags stay baseline x86-64 and reduce.c only calls in here after a CPU
 * feature check (AVX2 and F16C).  Built with FPU flags: in the kernel
 * every function here runs between collx_fpu_begin() and collx_fpu_end().
 *
 * Each vector lane follows the per-element rules of reduce_elem.h, and
 * tails shorter than a vector run those rules themselves, so the results
 * are bit-identical to the scalar implementation.
 */
#include "reduce_elem.h"

#ifdef COLLX_HAVE_X86_SIMD

/* Every AVX2 function may also use F16C: reduce.c requires both. */
#define COLLX_AVX2	__attribute__((target("avx2,f16c")))

/*
 * Software prefetch this far ahead of both streams.  The hardware
 * prefetchers alone leave DRAM-sized reductions 10-30% below a plain add
 * loop (the heavier lanes keep fewer misses in flight); 2 KiB ahead closes
 * most of the gap on the machines measured.  Prefetches never fault, so
 * running past the end of a buffer is harmless.
 */
#define PFD	2048

typedef s8 __attribute__((vector_size(32))) s8_vec;
typedef u8 __attribute__((vector_size(32))) u8_vec;
typedef s32 __attribute__((vector_size(32))) s32_vec;
typedef u32 __attribute__((vector_size(32))) u32_vec;
typedef s64 __attribute__((vector_size(32))) s64_vec;
typedef u64 __attribute__((vector_size(32))) u64_vec;
typedef float __attribute__((vector_size(32))) f32_vec;
typedef double __attribute__((vector_size(32))) f64_vec;
typedef s16 __attribute__((vector_size(16))) h16_vec;	/* 8 x fp16 */

/* Loads and stores of any alignment: memcpy becomes vmovdqu. */
#define VLD(v, p)	__builtin_memcpy(&(v), (p), sizeof(v))
#define VST(p, v)	__builtin_memcpy((p), &(v), sizeof(v))

/*
 * x86 max/min and unordered compares.  vmaxps/vminps return the second
 * operand when either is NaN or both are zeros; the callers fix those
 * cases, symmetrically.  sparse knows none of these builtins.
 */
#ifndef __CHECKER__
#define X86_MAXPS(a, b)		__builtin_ia32_maxps256(a, b)
#define X86_MINPS(a, b)		__builtin_ia32_minps256(a, b)
#define X86_MAXPD(a, b)		__builtin_ia32_maxpd256(a, b)
#define X86_MINPD(a, b)		__builtin_ia32_minpd256(a, b)
#define X86_UNORDPS(a, b)	__builtin_ia32_cmpps256(a, b, 3)
#define X86_UNORDPD(a, b)	__builtin_ia32_cmppd256(a, b, 3)
#else
#define X86_MAXPS(a, b)		((a) + (b))
#define X86_MINPS(a, b)		((a) + (b))
#define X86_MAXPD(a, b)		((a) + (b))
#define X86_MINPD(a, b)		((a) + (b))
#define X86_UNORDPS(a, b)	((a) + (b))
#define X86_UNORDPD(a, b)	((a) + (b))
#endif

/*
 * Integer max/min: vpmax/vpmin for 8 and 32 bits (the builtins take plain
 * char and int lanes whatever the signedness); 64-bit lanes have no AVX2
 * max/min, so compare and blend.
 */
typedef char __attribute__((vector_size(32))) c8_vec;

#ifndef __CHECKER__
#define X86_PMAXSB(a, b)	__builtin_ia32_pmaxsb256(a, b)
#define X86_PMINSB(a, b)	__builtin_ia32_pminsb256(a, b)
#define X86_PMAXUB(a, b)	__builtin_ia32_pmaxub256(a, b)
#define X86_PMINUB(a, b)	__builtin_ia32_pminub256(a, b)
#define X86_PMAXSD(a, b)	__builtin_ia32_pmaxsd256(a, b)
#define X86_PMINSD(a, b)	__builtin_ia32_pminsd256(a, b)
#define X86_PMAXUD(a, b)	__builtin_ia32_pmaxud256(a, b)
#define X86_PMINUD(a, b)	__builtin_ia32_pminud256(a, b)
#else
#define X86_PMAXSB(a, b)	((a) + (b))
#define X86_PMINSB(a, b)	((a) + (b))
#define X86_PMAXUB(a, b)	((a) + (b))
#define X86_PMINUB(a, b)	((a) + (b))
#define X86_PMAXSD(a, b)	((a) + (b))
#define X86_PMINSD(a, b)	((a) + (b))
#define X86_PMAXUD(a, b)	((a) + (b))
#define X86_PMINUD(a, b)	((a) + (b))
#endif

static __always_inline s8_vec COLLX_AVX2 s8_minmax(s8_vec a, s8_vec b,
						   int op)
{
	c8_vec x = (c8_vec)a, y = (c8_vec)b;

	if (op == COLLX_OP_MAX)
		return (s8_vec)X86_PMAXSB(x, y);
	return (s8_vec)X86_PMINSB(x, y);
}

static __always_inline u8_vec COLLX_AVX2 u8_minmax(u8_vec a, u8_vec b,
						   int op)
{
	c8_vec x = (c8_vec)a, y = (c8_vec)b;

	if (op == COLLX_OP_MAX)
		return (u8_vec)X86_PMAXUB(x, y);
	return (u8_vec)X86_PMINUB(x, y);
}

static __always_inline s32_vec COLLX_AVX2 s32_minmax(s32_vec a, s32_vec b,
						     int op)
{
	if (op == COLLX_OP_MAX)
		return X86_PMAXSD(a, b);
	return X86_PMINSD(a, b);
}

static __always_inline u32_vec COLLX_AVX2 u32_minmax(u32_vec a, u32_vec b,
						     int op)
{
	s32_vec x = (s32_vec)a, y = (s32_vec)b;

	if (op == COLLX_OP_MAX)
		return (u32_vec)X86_PMAXUD(x, y);
	return (u32_vec)X86_PMINUD(x, y);
}

static __always_inline s64_vec COLLX_AVX2 s64_minmax(s64_vec a, s64_vec b,
						     int op)
{
	s64_vec m;

	if (op == COLLX_OP_MAX)
		m = (s64_vec)(a > b);
	else
		m = (s64_vec)(a < b);
	return (a & m) | (b & ~m);
}

static __always_inline u64_vec COLLX_AVX2 u64_minmax(u64_vec a, u64_vec b,
						     int op)
{
	u64_vec m;

	if (op == COLLX_OP_MAX)
		m = (u64_vec)(a > b);
	else
		m = (u64_vec)(a < b);
	return (a & m) | (b & ~m);
}

/*
 * One 32-byte vector of integers: dst = dst (op) src.  @op is a constant
 * after inlining.  Sum and product are computed unsigned (wrapping),
 * comparisons in the element's own type.
 */
#define INT_VOP(S, U)							\
static __always_inline void COLLX_AVX2 S##_vop(u8 *d, const u8 *s,	\
					       int op)			\
{									\
	S##_vec a, b;							\
									\
	VLD(a, d);							\
	VLD(b, s);							\
	if (op == COLLX_OP_SUM)						\
		a = (S##_vec)((U##_vec)a + (U##_vec)b);			\
	else if (op == COLLX_OP_PROD)					\
		a = (S##_vec)((U##_vec)a * (U##_vec)b);			\
	else								\
		a = S##_minmax(a, b, op);				\
	VST(d, a);							\
}

INT_VOP(s8, u8)
INT_VOP(u8, u8)
INT_VOP(s32, u32)
INT_VOP(u32, u32)
INT_VOP(s64, u64)
INT_VOP(u64, u64)

/*
 * Float lanes, the rules of reduce_elem.h: canonical NaN results, and
 * max/min as IEEE 754-2019 maximum/minimum (NaN wins, -0 < +0; equal
 * operands give the AND (max) or OR (min) of their bits).
 */
static __always_inline f32_vec COLLX_AVX2 f32_canon(f32_vec f, s32_vec nan)
{
	return (f32_vec)(((s32_vec)f & ~nan) | (nan & (s32)COLLX_F32_QNAN));
}

static __always_inline f32_vec COLLX_AVX2 f32_lanes(f32_vec a, f32_vec b,
						    int op)
{
	s32_vec ai = (s32_vec)a, bi = (s32_vec)b, r;
	s32_vec nan = (s32_vec)X86_UNORDPS(a, b);

	if (op == COLLX_OP_SUM)
		return f32_canon(a + b, (s32_vec)(a + b != a + b));
	if (op == COLLX_OP_PROD)
		return f32_canon(a * b, (s32_vec)(a * b != a * b));
	/*
	 * Equal operands (+0 and -0 too) give the AND of their bits for max,
	 * the OR for min, whichever one vmaxps/vminps returned.
	 */
	if (op == COLLX_OP_MAX)
		r = (s32_vec)X86_MAXPS(a, b) &
		    ((ai & bi) | (s32_vec)(a != b));
	else
		r = (s32_vec)X86_MINPS(a, b) |
		    ((ai | bi) & (s32_vec)(a == b));
	return f32_canon((f32_vec)r, nan);
}

static __always_inline f64_vec COLLX_AVX2 f64_canon(f64_vec f, s64_vec nan)
{
	return (f64_vec)(((s64_vec)f & ~nan) | (nan & (s64)COLLX_F64_QNAN));
}

static __always_inline f64_vec COLLX_AVX2 f64_lanes(f64_vec a, f64_vec b,
						    int op)
{
	s64_vec ai = (s64_vec)a, bi = (s64_vec)b, r;
	s64_vec nan = (s64_vec)X86_UNORDPD(a, b);

	if (op == COLLX_OP_SUM)
		return f64_canon(a + b, (s64_vec)(a + b != a + b));
	if (op == COLLX_OP_PROD)
		return f64_canon(a * b, (s64_vec)(a * b != a * b));
	if (op == COLLX_OP_MAX)
		r = (s64_vec)X86_MAXPD(a, b) &
		    ((ai & bi) | (s64_vec)(a != b));
	else
		r = (s64_vec)X86_MINPD(a, b) |
		    ((ai | bi) & (s64_vec)(a == b));
	return f64_canon((f64_vec)r, nan);
}

static __always_inline f32_vec COLLX_AVX2 f32_div_lanes(f32_vec a, u32 n)
{
	f32_vec f = a / (float)n;

	return f32_canon(f, (s32_vec)(f != f));
}

static __always_inline f64_vec COLLX_AVX2 f64_div_lanes(f64_vec a, u32 n)
{
	f64_vec f = a / (double)n;

	return f64_canon(f, (s64_vec)(f != f));
}

/* fp16: 8 lanes widened with F16C and rounded back to nearest even. */
static __always_inline f32_vec COLLX_AVX2 fp16_in(const u8 *p)
{
	h16_vec h;

	VLD(h, p);
#ifndef __CHECKER__	/* sparse does not know the F16C builtins */
	return __builtin_ia32_vcvtph2ps256(h);
#else
	f32_vec f = { 0 };

	return f;
#endif
}

static __always_inline void COLLX_AVX2 fp16_out(u8 *p, f32_vec v)
{
#ifndef __CHECKER__
	h16_vec h = __builtin_ia32_vcvtps2ph256(v, 0);
#else
	h16_vec h = { 0 };
#endif
	VST(p, h);
}

/*
 * bfloat16 is the top half of a binary32, so it needs no conversion
 * instruction: 16 elements loaded as 8 32-bit lanes hold the even elements
 * in their low halves and the odd ones in their high halves.  Shifting left
 * by 16, or masking, gives two binary32 vectors; rounding to nearest even
 * and shifting back interleaves them again in place.  Only canonical NaNs
 * reach the rounding, and they round to themselves.
 */
static __always_inline u32_vec COLLX_AVX2 bf16_round(f32_vec v)
{
	u32_vec b = (u32_vec)v;

	return b + 0x7fff + ((b >> 16) & 1);
}

static __always_inline void COLLX_AVX2 fp32_vop(u8 *d, const u8 *s, int op)
{
	f32_vec a, b;

	VLD(a, d);
	VLD(b, s);
	a = f32_lanes(a, b, op);
	VST(d, a);
}

static __always_inline void COLLX_AVX2 fp64_vop(u8 *d, const u8 *s, int op)
{
	f64_vec a, b;

	VLD(a, d);
	VLD(b, s);
	a = f64_lanes(a, b, op);
	VST(d, a);
}

static __always_inline void COLLX_AVX2 fp16_vop(u8 *d, const u8 *s, int op)
{
	fp16_out(d, f32_lanes(fp16_in(d), fp16_in(s), op));
}

static __always_inline void COLLX_AVX2 bf16_vop(u8 *d, const u8 *s, int op)
{
	u32_vec x, y, r;
	f32_vec e, o;

	VLD(x, d);
	VLD(y, s);
	e = f32_lanes((f32_vec)(x << 16), (f32_vec)(y << 16), op);
	o = f32_lanes((f32_vec)(x & 0xffff0000), (f32_vec)(y & 0xffff0000),
		      op);
	r = (bf16_round(e) >> 16) | (bf16_round(o) & 0xffff0000);
	VST(d, r);
}

/* Bytes of dst one vop handles: a 32-byte vector, 16 bytes for fp16. */
static __always_inline size_t vop_bytes(enum collx_dtype dt)
{
	return dt == COLLX_FP16 ? 16 : 32;
}

static __always_inline void COLLX_AVX2 vop(enum collx_dtype dt, u8 *d,
					   const u8 *s, int op)
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
		fp16_vop(d, s, op);
		break;
	case COLLX_FP32:
		fp32_vop(d, s, op);
		break;
	case COLLX_FP64:
		fp64_vop(d, s, op);
		break;
	default:
		bf16_vop(d, s, op);
		break;
	}
}

/*
 * Sum and product of fp32, fp64 and fp16 skip the per-vector NaN
 * canonicalization: they store the raw result and collect an "unordered"
 * mask, one compare per two vectors; if any NaN came out, a second pass
 * over what was just written (in L1: at most one FPU section) replaces
 * every NaN by the canonical one.  Canonicalization depends on the result
 * alone, so the bits are the same as canonicalizing lane by lane.
 */
static __always_inline bool raw_arith(enum collx_dtype dt, int op)
{
	return (op == COLLX_OP_SUM || op == COLLX_OP_PROD) &&
	       (dt == COLLX_FP32 || dt == COLLX_FP64 || dt == COLLX_FP16);
}

static __always_inline f32_vec COLLX_AVX2 raw32(f32_vec a, f32_vec b, int op)
{
	return op == COLLX_OP_SUM ? a + b : a * b;
}

static __always_inline f64_vec COLLX_AVX2 raw64(f64_vec a, f64_vec b, int op)
{
	return op == COLLX_OP_SUM ? a + b : a * b;
}

/* Two vops' worth at d and s: raw results stored, their NaN lanes returned */
static __always_inline u64_vec COLLX_AVX2 raw_pair(enum collx_dtype dt,
						   u8 *d, const u8 *s, int op)
{
	f32_vec a0, a1, b0, b1;
	f64_vec c0, c1, e0, e1;

	switch (dt) {
	case COLLX_FP32:
		VLD(a0, d);
		VLD(b0, s);
		VLD(a1, d + 32);
		VLD(b1, s + 32);
		a0 = raw32(a0, b0, op);
		a1 = raw32(a1, b1, op);
		VST(d, a0);
		VST(d + 32, a1);
		return (u64_vec)X86_UNORDPS(a0, a1);
	case COLLX_FP64:
		VLD(c0, d);
		VLD(e0, s);
		VLD(c1, d + 32);
		VLD(e1, s + 32);
		c0 = raw64(c0, e0, op);
		c1 = raw64(c1, e1, op);
		VST(d, c0);
		VST(d + 32, c1);
		return (u64_vec)X86_UNORDPD(c0, c1);
	default:
		a0 = raw32(fp16_in(d), fp16_in(s), op);
		a1 = raw32(fp16_in(d + 16), fp16_in(s + 16), op);
		fp16_out(d, a0);
		fp16_out(d + 16, a1);
		return (u64_vec)X86_UNORDPS(a0, a1);
	}
}

/* Replace every NaN in n elements at d by the canonical NaN. */
static __always_inline void canon_fixup(enum collx_dtype dt, u8 *d, size_t n)
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
		default:
			__builtin_memcpy(&h, d + 2 * i, 2);
			if ((h & 0x7fff) > 0x7c00) {
				h = 0x7e00;
				__builtin_memcpy(d + 2 * i, &h, 2);
			}
			break;
		}
	}
}

/*
 * fp8, as reduce_avx512.c does it (the reasons are there): widen through
 * binary16 with F16C (E4M3 scaled by 2^-8), reduce in binary32, round to
 * binary16 toward zero with the inexact bit ORed in (round to odd), then
 * to nearest even at the fp8 code's lowest bit.  Max and min compare the
 * codes as integer keys.  16 elements a vop, 32 for max and min.
 */
typedef s16 __attribute__((vector_size(32))) s16_vec;	/* 16 x 16 bits */
typedef u16 __attribute__((vector_size(32))) u16_vec;
typedef char __attribute__((vector_size(16))) c8_xmm;

/* zero vectors for sparse's stand-ins below */
static __always_inline s16_vec COLLX_AVX2 zero_s16_vec(void)
{
	s16_vec z = { 0 };

	return z;
}

static __always_inline s32_vec COLLX_AVX2 zero_s32_vec(void)
{
	s32_vec z = { 0 };

	return z;
}

static __always_inline f32_vec COLLX_AVX2 zero_f32_vec(void)
{
	f32_vec z = { 0 };

	return z;
}

static __always_inline h16_vec COLLX_AVX2 zero_h16_vec(void)
{
	h16_vec z = { 0 };

	return z;
}

static __always_inline c8_xmm COLLX_AVX2 zero_c8_xmm(void)
{
	c8_xmm z = { 0 };

	return z;
}

#ifndef __CHECKER__
#define X86_SXBW(x)	__builtin_ia32_pmovsxbw256(x)
#define X86_PH2PS(h)	__builtin_ia32_vcvtph2ps256(h)
#define X86_PS2PH_RZ(f)	__builtin_ia32_vcvtps2ph256(f, 3) /* toward zero */
#define X86_NEQPS(a, b)	((s32_vec)__builtin_ia32_cmpps256(a, b, 4))
#define X86_PMINUW(a, b)	__builtin_ia32_pminuw256(a, b)
/* lane-wise: 32-bit masks to 16 bits, words to bytes (truncating) */
#define X86_CVT(v, T)	__builtin_convertvector(v, T)
#define X86_LO8(w)	__builtin_shufflevector(w, w, 0, 1, 2, 3, 4, 5, 6, 7)
#define X86_HI8(w)	__builtin_shufflevector(w, w, 8, 9, 10, 11, 12, 13, \
			14, 15)
#define X86_CAT8(a, b)	__builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, \
			6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#else
#define X86_SXBW(x)	((void)(x), zero_s16_vec())
#define X86_PH2PS(h)	((void)(h), zero_f32_vec())
#define X86_PS2PH_RZ(f)	((void)(f), zero_h16_vec())
#define X86_NEQPS(a, b)	((void)((a) + (b)), zero_s32_vec())
#define X86_PMINUW(a, b)	((a) + (b))
#define X86_CVT(v, T)	((void)(v), zero_##T())
#define X86_LO8(w)	((void)(w), zero_h16_vec())
#define X86_HI8(w)	((void)(w), zero_h16_vec())
#define X86_CAT8(a, b)	((void)((a) + (b)), zero_s16_vec())
#endif

static __always_inline void COLLX_AVX2 fp8_in(const u8 *p, bool e4m3,
					      f32_vec *lo, f32_vec *hi)
{
	s16_vec w;	/* each code sign-extended to 16 bits */
	c8_xmm x;

	VLD(x, p);
	w = X86_SXBW(x);
	w = e4m3 ? (w << 7) & (s16)0xbf80 : w << 8;
	*lo = X86_PH2PS(X86_LO8(w));
	*hi = X86_PH2PS(X86_HI8(w));
}

static __always_inline h16_vec COLLX_AVX2 fp8_round_odd(f32_vec r)
{
	h16_vec h = X86_PS2PH_RZ(r);

	return h | (X86_CVT(X86_NEQPS(X86_PH2PS(h), r), h16_vec) & 1);
}

/* @odd: round to odd first, for quotients only (see reduce_avx512.c) */
static __always_inline c8_xmm COLLX_AVX2 fp8_out(f32_vec lo, f32_vec hi,
						 bool e4m3, bool odd)
{
	s16_vec w = odd ? X86_CAT8(fp8_round_odd(lo), fp8_round_odd(hi)) :
			  X86_CAT8(X86_PS2PH_RZ(lo), X86_PS2PH_RZ(hi));
	s16_vec mag = w & 0x7fff, v, m, lim = { 0 };
	u16_vec u;

	if (e4m3) {
		v = (mag + 0x3f + ((mag >> 7) & 1)) >> 7;
		v = X86_PMINUW(v, lim + 0x7e) | ((w >> 8) & 0x80);
	} else {
		u = (u16_vec)w;
		v = (s16_vec)((u + 0x7f + ((u >> 8) & 1)) >> 8);
		m = (s16_vec)(mag > 0x7c00);
		v = (v & ~m) | (m & 0x7e);
	}
	return X86_CVT(v, c8_xmm);
}

static __always_inline c8_xmm COLLX_AVX2 e4m3_nans(const u8 *d, const u8 *s)
{
	c8_xmm a, b;

	VLD(a, d);
	VLD(b, s);
	return (c8_xmm)((a & 0x7f) == 0x7f) | (c8_xmm)((b & 0x7f) == 0x7f);
}

static __always_inline void COLLX_AVX2 fp8_arith_vop(u8 *d, const u8 *s,
						     int op, bool e4m3)
{
	f32_vec a0, a1, b0, b1;
	c8_xmm r, nan = { 0 };

	if (e4m3)
		nan = e4m3_nans(d, s);
	fp8_in(d, e4m3, &a0, &a1);
	fp8_in(s, e4m3, &b0, &b1);
	if (op == COLLX_OP_SUM) {
		a0 += b0;
		a1 += b1;
	} else {	/* an E4M3 product has 2^-16: scale it back to 2^-8 */
		a0 = e4m3 ? a0 * b0 * 256.0f : a0 * b0;
		a1 = e4m3 ? a1 * b1 * 256.0f : a1 * b1;
	}
	r = fp8_out(a0, a1, e4m3, false);
	r = (r & ~nan) | (nan & 0x7f);
	VST(d, r);
}

/*
 * fp16 and bf16 max and min on the codes, as reduce_avx512.c's fp16: 1.6
 * (fp16) and 1.8 (bf16) x faster in cache on Zen 4 than converting, or
 * splitting bf16, and comparing with vmaxps and its NaN and zero fixes.
 */
static __always_inline s16_vec COLLX_AVX2 h16_key(s16_vec x)
{
	return x ^ ((x >> 15) & 0x7fff);
}

static __always_inline void COLLX_AVX2 h16_minmax_vop(u8 *d, const u8 *s,
						      int op, s16 inf, s16 qnan)
{
	s16_vec a, b, ka, kb, m, nan;

	VLD(a, d);
	VLD(b, s);
	ka = h16_key(a);
	kb = h16_key(b);
	m = (s16_vec)(op == COLLX_OP_MAX ? ka > kb : ka < kb);
	ka = h16_key((ka & m) | (kb & ~m));
	nan = (s16_vec)((a & 0x7fff) > inf) | (s16_vec)((b & 0x7fff) > inf);
	ka = (ka & ~nan) | (nan & qnan);
	VST(d, ka);
}

static __always_inline void COLLX_AVX2 h16_minmax_loop(enum collx_dtype dt,
						       int op, u8 *d,
						       const u8 *s, size_t n)
{
	s16 inf = dt == COLLX_FP16 ? 0x7c00 : 0x7f80;
	s16 qnan = dt == COLLX_FP16 ? 0x7e00 : 0x7fc0;
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		h16_minmax_vop(d + 2 * i, s + 2 * i, op, inf, qnan);
	elem_loop(dt, op, d + 2 * i, s + 2 * i, n - i);
}

static __always_inline s8_vec COLLX_AVX2 fp8_key(s8_vec x)
{
	s8_vec z = { 0 };

	return x ^ ((s8_vec)(x < z) & 0x7f);
}

static __always_inline void COLLX_AVX2 fp8_minmax_vop(u8 *d, const u8 *s,
						      int op, bool e4m3)
{
	s8_vec a, b, ka, kb, m, nan, qnan = { 0 };

	qnan += (s8)(e4m3 ? 0x7f : 0x7e);
	VLD(a, d);
	VLD(b, s);
	ka = fp8_key(a);
	kb = fp8_key(b);
	m = (s8_vec)(op == COLLX_OP_MAX ? ka > kb : ka < kb);
	ka = fp8_key((ka & m) | (kb & ~m));
	if (e4m3)
		nan = (s8_vec)((a & 0x7f) == 0x7f) |
		      (s8_vec)((b & 0x7f) == 0x7f);
	else
		nan = (s8_vec)((u8_vec)(a & 0x7f) > 0x7c) |
		      (s8_vec)((u8_vec)(b & 0x7f) > 0x7c);
	ka = (ka & ~nan) | (nan & qnan);
	VST(d, ka);
}

static __always_inline void COLLX_AVX2 fp8_sop(u8 *d, u32 nranks, bool e4m3)
{
	c8_xmm r, nan = { 0 };
	f32_vec a0, a1;

	if (e4m3)
		nan = e4m3_nans(d, d);
	fp8_in(d, e4m3, &a0, &a1);
	r = fp8_out(a0 / (float)nranks, a1 / (float)nranks, e4m3, true);
	r = (r & ~nan) | (nan & 0x7f);
	VST(d, r);
}

static __always_inline void COLLX_AVX2 fp8_loop(enum collx_dtype dt, int op,
						u8 *d, const u8 *s, size_t n)
{
	bool e4m3 = dt == COLLX_FP8_E4M3;
	size_t i = 0;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		for (; i + 32 <= n; i += 32)
			fp8_minmax_vop(d + i, s + i, op, e4m3);
	} else {
		for (; i + 16 <= n; i += 16)
			fp8_arith_vop(d + i, s + i, op, e4m3);
	}
	elem_loop(dt, op, d + i, s + i, n - i);
}

static __always_inline void COLLX_AVX2 fp8_scale(enum collx_dtype dt, u8 *d,
						 size_t n, u32 nranks)
{
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		fp8_sop(d + i, nranks, dt == COLLX_FP8_E4M3);
	elem_scale(dt, d + i, n - i, nranks);
}

/*
 * dst = dst (op) src over n elements: two vops per iteration, prefetching
 * ahead, then one more vop if it fits, then the scalar kernel for the tail.
 * d and s are byte pointers: any alignment.
 */
static __always_inline void COLLX_AVX2 avx2_loop(enum collx_dtype dt, int op,
						 u8 *d, const u8 *s, size_t n)
{
	size_t es = elem_size(dt), vb = vop_bytes(dt), nb = n * es, i = 0;
	u64_vec nan = { 0 };
	u64 lanes[4];

	if (dt == COLLX_FP8_E4M3 || dt == COLLX_FP8_E5M2) {
		fp8_loop(dt, op, d, s, n);
		return;
	}
	if ((dt == COLLX_FP16 || dt == COLLX_BF16) &&
	    (op == COLLX_OP_MAX || op == COLLX_OP_MIN)) {
		h16_minmax_loop(dt, op, d, s, n);
		return;
	}
	if (raw_arith(dt, op)) {
		for (; i + 2 * vb <= nb; i += 2 * vb) {
			__builtin_prefetch(d + i + PFD, 1);
			__builtin_prefetch(s + i + PFD, 0);
			nan |= raw_pair(dt, d + i, s + i, op);
		}
		VST(lanes, nan);
		if (lanes[0] | lanes[1] | lanes[2] | lanes[3])
			canon_fixup(dt, d, i / es);
	}
	for (; i + 2 * vb <= nb; i += 2 * vb) {
		__builtin_prefetch(d + i + PFD, 1);
		__builtin_prefetch(s + i + PFD, 0);
		vop(dt, d + i, s + i, op);
		vop(dt, d + i + vb, s + i + vb, op);
	}
	if (i + vb <= nb) {
		vop(dt, d + i, s + i, op);
		i += vb;
	}
	elem_loop(dt, op, d + i, s + i, (nb - i) / es);
}

/* avg scaling: floats divide in lanes (fp8 above); integers per element */
static __always_inline void COLLX_AVX2 sop(enum collx_dtype dt, u8 *d,
					   u32 nranks)
{
	f32_vec a;
	f64_vec b;
	u32_vec x;

	switch (dt) {
	case COLLX_FP16:
		fp16_out(d, f32_div_lanes(fp16_in(d), nranks));
		break;
	case COLLX_FP32:
		VLD(a, d);
		a = f32_div_lanes(a, nranks);
		VST(d, a);
		break;
	case COLLX_FP64:
		VLD(b, d);
		b = f64_div_lanes(b, nranks);
		VST(d, b);
		break;
	default:
		VLD(x, d);
		a = f32_div_lanes((f32_vec)(x << 16), nranks);
		x = (bf16_round(f32_div_lanes((f32_vec)(x & 0xffff0000),
					      nranks)) & 0xffff0000) |
		    (bf16_round(a) >> 16);
		VST(d, x);
		break;
	}
}

static __always_inline void COLLX_AVX2 avx2_scale(enum collx_dtype dt, u8 *d,
						  size_t n, u32 nranks)
{
	size_t es = elem_size(dt), vb = vop_bytes(dt), nb = n * es, i = 0;

	if (dt == COLLX_FP8_E4M3 || dt == COLLX_FP8_E5M2) {
		fp8_scale(dt, d, n, nranks);
		return;
	}
	if (dt != COLLX_FP16 && dt != COLLX_FP32 && dt != COLLX_FP64 &&
	    dt != COLLX_BF16) {
		elem_scale(dt, d, n, nranks);
		return;
	}
	for (; i + vb <= nb; i += vb)
		sop(dt, d + i, nranks);
	elem_scale(dt, d + i, (nb - i) / es, nranks);
}

#define AVX2_SCALE(dt, d, n, nranks)	avx2_scale(dt, d, n, nranks)

COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT8, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT8, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT8, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT8, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT8, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT8, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT8, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT8, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT32, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT32, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT32, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT32, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT32, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT32, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT32, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT32, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT64, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT64, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT64, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, INT64, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT64, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT64, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT64, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, UINT64, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP16, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP16, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP16, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP16, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP32, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP32, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP32, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP32, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP64, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP64, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP64, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP64, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, BF16, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, BF16, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, BF16, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, BF16, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E4M3, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E4M3, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E4M3, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E4M3, MIN)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E5M2, SUM)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E5M2, PROD)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E5M2, MAX)
COLLX_FN(avx2, COLLX_AVX2, avx2_loop, FP8_E5M2, MIN)

COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, INT8)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, UINT8)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, INT32)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, UINT32)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, INT64)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, UINT64)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, FP16)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, FP32)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, FP64)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, BF16)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, FP8_E4M3)
COLLX_SCALE_FN(avx2, COLLX_AVX2, AVX2_SCALE, FP8_E5M2)

const struct collx_reduce_ops collx_reduce_avx2_ops = {
	.name = "avx2",
	.reduce = {
		[COLLX_INT8] = COLLX_OPS4(avx2, INT8),
		[COLLX_UINT8] = COLLX_OPS4(avx2, UINT8),
		[COLLX_INT32] = COLLX_OPS4(avx2, INT32),
		[COLLX_UINT32] = COLLX_OPS4(avx2, UINT32),
		[COLLX_INT64] = COLLX_OPS4(avx2, INT64),
		[COLLX_UINT64] = COLLX_OPS4(avx2, UINT64),
		[COLLX_FP16] = COLLX_OPS4(avx2, FP16),
		[COLLX_FP32] = COLLX_OPS4(avx2, FP32),
		[COLLX_FP64] = COLLX_OPS4(avx2, FP64),
		[COLLX_BF16] = COLLX_OPS4(avx2, BF16),
		[COLLX_FP8_E4M3] = COLLX_OPS4(avx2, FP8_E4M3),
		[COLLX_FP8_E5M2] = COLLX_OPS4(avx2, FP8_E5M2),
	},
	.scale = {
		[COLLX_INT8] = avx2_INT8_scale,
		[COLLX_UINT8] = avx2_UINT8_scale,
		[COLLX_INT32] = avx2_INT32_scale,
		[COLLX_UINT32] = avx2_UINT32_scale,
		[COLLX_INT64] = avx2_INT64_scale,
		[COLLX_UINT64] = avx2_UINT64_scale,
		[COLLX_FP16] = avx2_FP16_scale,
		[COLLX_FP32] = avx2_FP32_scale,
		[COLLX_FP64] = avx2_FP64_scale,
		[COLLX_BF16] = avx2_BF16_scale,
		[COLLX_FP8_E4M3] = avx2_FP8_E4M3_scale,
		[COLLX_FP8_E5M2] = avx2_FP8_E5M2_scale,
	},
};

#endif /* COLLX_HAVE_X86_SIMD */
