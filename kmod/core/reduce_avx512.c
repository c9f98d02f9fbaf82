// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: AVX-512 reduction kernels (F, BW, DQ, VL), and the bf16
 * sum and product with AVX512_BF16's rounding instruction.
 *
 * As in reduce_avx2.c: GCC vector extensions and target attributes, no
 * <immintrin.h>, baseline build flags; reduce.c only calls in here after
 * the CPU feature checks.  Built with FPU flags: in the kernel every
 * function here runs between collx_fpu_begin() and collx_fpu_end().
 *
 * Each lane follows the rules of reduce_elem.h, and tails shorter than a
 * vector run those rules themselves, so the results are bit-identical to
 * the scalar implementation.
 */
#include "reduce_elem.h"

#ifdef COLLX_HAVE_X86_SIMD

#define COLLX_AVX512	\
	__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define COLLX_AVX512BF16_TGT	\
	__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16")))

typedef char __attribute__((vector_size(64))) c8_zmm;
typedef u8 __attribute__((vector_size(64))) u8_zmm;
typedef short __attribute__((vector_size(64))) s16_zmm;
typedef int __attribute__((vector_size(64))) s32_zmm;
typedef u32 __attribute__((vector_size(64))) u32_zmm;
typedef long long __attribute__((vector_size(64))) s64_zmm;
typedef u64 __attribute__((vector_size(64))) u64_zmm;
typedef float __attribute__((vector_size(64))) f32_zmm;
typedef double __attribute__((vector_size(64))) f64_zmm;
typedef short __attribute__((vector_size(32))) h16_ymm;	/* 16 x fp16 */
typedef s8 __attribute__((vector_size(64))) s8_zmm;
typedef u16 __attribute__((vector_size(64))) u16_zmm;
typedef char __attribute__((vector_size(32))) c8_ymm;
typedef u8 __attribute__((vector_size(32))) u8_ymm;

#define VLD(v, p)	__builtin_memcpy(&(v), (p), sizeof(v))
#define VST(p, v)	__builtin_memcpy((p), &(v), sizeof(v))

#define CMP_UNORD_Q	3
#define CUR_DIRECTION	4	/* _MM_FROUND_CUR_DIRECTION */
#define ROUND_TOWARD_ZERO	3	/* vcvtps2ph imm: _MM_FROUND_TO_ZERO */
/*
 * vrangeps/pd: max (imm[1:0] = 01) or min (00), the sign from the compare
 * result (imm[3:2] = 01), which orders -0 below +0.
 */
#define RANGE_MAX	5
#define RANGE_MIN	4
/* vfpclassps: QNaN (0x01), SNaN (0x80) or denormal (0x20) */
#define CLASS_NAN_DENORM	0xa1

/*
 * The x86 builtins, with type-correct stand-ins for sparse, which knows
 * none of them.  vrange orders -0 below +0 but, like maxNum, returns the
 * number when the other operand is a quiet NaN: the callers put the NaNs
 * back.
 */
/* zero vectors for the builtins' pass-through operands */
static __always_inline f32_zmm COLLX_AVX512 zero_ps(void)
{
	f32_zmm z = { 0 };

	return z;
}

static __always_inline f64_zmm COLLX_AVX512 zero_pd(void)
{
	f64_zmm z = { 0 };

	return z;
}

static __always_inline h16_ymm COLLX_AVX512 zero_ph(void)
{
	h16_ymm z = { 0 };

	return z;
}

static __always_inline s16_zmm COLLX_AVX512 zero_w(void)
{
	s16_zmm z = { 0 };

	return z;
}

static __always_inline c8_ymm COLLX_AVX512 zero_b32(void)
{
	c8_ymm z = { 0 };

	return z;
}

#ifndef __CHECKER__
#define X86_RANGEPS(a, b, m)	__builtin_ia32_rangeps512_mask(a, b, m, \
				zero_ps(), (u16)-1, CUR_DIRECTION)
#define X86_RANGEPD(a, b, m)	__builtin_ia32_rangepd512_mask(a, b, m, \
				zero_pd(), (u8)-1, CUR_DIRECTION)
#define X86_UNORDPS(a, b)	__builtin_ia32_cmpps512_mask(a, b, \
				CMP_UNORD_Q, (u16)-1, CUR_DIRECTION)
#define X86_UNORDPD(a, b)	__builtin_ia32_cmppd512_mask(a, b, \
				CMP_UNORD_Q, (u8)-1, CUR_DIRECTION)
#define X86_CLASSPS(a, c)	__builtin_ia32_fpclassps512_mask(a, c, (u16)-1)
/* lanes of @k take @a, the others keep @w */
#define X86_MOVPS(w, k, a)	__builtin_ia32_movaps512_mask(a, w, k)
#define X86_MOVPD(w, k, a)	__builtin_ia32_movapd512_mask(a, w, k)
#define X86_PH2PS(h)		__builtin_ia32_vcvtph2ps512_mask(h, \
				zero_ps(), (u16)-1, CUR_DIRECTION)
#define X86_PS2PH(f)		__builtin_ia32_vcvtps2ph512_mask(f, 0, \
				zero_ph(), (u16)-1)
#define X86_PS2PH_RZ(f)		__builtin_ia32_vcvtps2ph512_mask(f, \
				ROUND_TOWARD_ZERO, zero_ph(), (u16)-1)
#define CMP_NEQ_UQ	4
#define X86_NEQPS(a, b)		__builtin_ia32_cmpps512_mask(a, b, \
				CMP_NEQ_UQ, (u16)-1, CUR_DIRECTION)
/* lanes of @k take @a, the others keep @w (16 x 16 bits) */
#define X86_MOVW_YMM(w, k, a)	__builtin_ia32_movdquhi256_mask(a, w, k)
/* 32 bytes sign-extended to words; 32 words truncated to bytes */
#define X86_SXBW(x)		__builtin_ia32_pmovsxbw512_mask(x, \
				zero_w(), (u32)-1)
#define X86_WB(w)		__builtin_ia32_pmovwb512_mask(w, \
				zero_b32(), (u32)-1)
#define X86_PMINUW(a, b)	__builtin_ia32_pminuw512_mask(a, b, \
				zero_w(), (u32)-1)
/* the low and high 16 words of 32, and two 16 put together */
#define X86_LO16(w)	__builtin_shufflevector(w, w, 0, 1, 2, 3, 4, 5, \
			6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define X86_HI16(w)	__builtin_shufflevector(w, w, 16, 17, 18, 19, 20, \
			21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)
#define X86_CAT16(a, b)	__builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, \
			6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, \
			20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)
#define X86_PERMW(i, a)		__builtin_ia32_permvarhi512_mask(a, i, \
				zero_w(), (u32)-1)
#define X86_CVTNE2PS2BF16(a, b)	__builtin_ia32_cvtne2ps2bf16_v32hi(a, b)
/* integer max or min F (pmaxsb512, ...); z, a zero, is the pass-through */
#define X86_PMINMAX(F, a, b, z)	__builtin_ia32_##F##_mask(a, b, z, -1)
#else
#define X86_RANGEPS(a, b, m)	((void)(m), (a) + (b))
#define X86_RANGEPD(a, b, m)	((void)(m), (a) + (b))
#define X86_UNORDPS(a, b)	((void)((a) + (b)), (u16)0)
#define X86_UNORDPD(a, b)	((void)((a) + (b)), (u8)0)
#define X86_CLASSPS(a, c)	((void)(a), (u16)(c))
#define X86_MOVPS(w, k, a)	((void)(k), (w) + (a))
#define X86_MOVPD(w, k, a)	((void)(k), (w) + (a))
#define X86_PH2PS(h)		((void)(h), zero_ps())
#define X86_PS2PH(f)		((void)(f), zero_ph())
#define X86_PS2PH_RZ(f)		((void)(f), zero_ph())
#define X86_NEQPS(a, b)		((void)((a) + (b)), (u16)0)
#define X86_MOVW_YMM(w, k, a)	((void)(k), (w) + (a))
#define X86_SXBW(x)		((void)(x), zero_w())
#define X86_WB(w)		((void)(w), zero_b32())
#define X86_PMINUW(a, b)	((a) + (b))
#define X86_LO16(w)		((void)(w), zero_ph())
#define X86_HI16(w)		((void)(w), zero_ph())
#define X86_CAT16(a, b)		((void)((a) + (b)), zero_w())
#define X86_PERMW(i, a)		((i) + (a))
#define X86_CVTNE2PS2BF16(a, b)	((void)((a) + (b)), zero_w())
#define X86_PMINMAX(F, a, b, z)	((void)#F, (a) + (b) + (z))
#endif

static __always_inline f32_zmm COLLX_AVX512 qnan32(void)
{
	u32_zmm q = { 0 };

	return (f32_zmm)(q + COLLX_F32_QNAN);
}

static __always_inline f64_zmm COLLX_AVX512 qnan64(void)
{
	u64_zmm q = { 0 };

	return (f64_zmm)(q + COLLX_F64_QNAN);
}

/*
 * ---- integers: one 64-byte vector, dst = dst (op) src.  T names the
 * function, B the vector type the max (MX) and min (MN) builtins take, U
 * the unsigned type sum and product wrap in.
 */
#define INT_VOP(T, B, U, MX, MN)					\
static __always_inline void COLLX_AVX512 T##_vop(u8 *d, const u8 *s,	\
						 int op)		\
{									\
	B##_zmm a, b, z = { 0 };					\
									\
	VLD(a, d);							\
	VLD(b, s);							\
	if (op == COLLX_OP_SUM)						\
		a = (B##_zmm)((U##_zmm)a + (U##_zmm)b);			\
	else if (op == COLLX_OP_PROD)					\
		a = (B##_zmm)((U##_zmm)a * (U##_zmm)b);			\
	else if (op == COLLX_OP_MAX)					\
		a = X86_PMINMAX(MX, a, b, z);			\
	else								\
		a = X86_PMINMAX(MN, a, b, z);				\
	VST(d, a);							\
}

INT_VOP(s8, c8, u8, pmaxsb512, pminsb512)
INT_VOP(u8, c8, u8, pmaxub512, pminub512)
INT_VOP(s32, s32, u32, pmaxsd512, pminsd512)
INT_VOP(u32, s32, u32, pmaxud512, pminud512)
INT_VOP(s64, s64, u64, pmaxsq512, pminsq512)
INT_VOP(u64, s64, u64, pmaxuq512, pminuq512)

/*
 * ---- floats.  Sum and product are raw: NaNs left as the hardware made
 * them.  The caller collects an "unordered" mask of the results and, if
 * any NaN came out, canonicalises the part it just wrote (fixup() below):
 * the canonical NaN depends on the result alone, so the bits equal
 * canonicalising lane by lane.  Max and min put the canonical NaN in
 * wherever an operand was one, so their results need no fixup.
 */
static __always_inline bool raw_op(int op)
{
	return op == COLLX_OP_SUM || op == COLLX_OP_PROD;
}

static __always_inline f32_zmm COLLX_AVX512 op32(f32_zmm a, f32_zmm b,
						 int op)
{
	if (op == COLLX_OP_SUM)
		return a + b;
	if (op == COLLX_OP_PROD)
		return a * b;
	return X86_MOVPS(op == COLLX_OP_MAX ? X86_RANGEPS(a, b, RANGE_MAX) :
			 X86_RANGEPS(a, b, RANGE_MIN),
			 X86_UNORDPS(a, b), qnan32());
}

static __always_inline f64_zmm COLLX_AVX512 op64(f64_zmm a, f64_zmm b,
						 int op)
{
	if (op == COLLX_OP_SUM)
		return a + b;
	if (op == COLLX_OP_PROD)
		return a * b;
	return X86_MOVPD(op == COLLX_OP_MAX ? X86_RANGEPD(a, b, RANGE_MAX) :
			 X86_RANGEPD(a, b, RANGE_MIN),
			 X86_UNORDPD(a, b), qnan64());
}

/* 64 bytes of fp32 at d and s; returns the NaN lanes of the result */
static __always_inline u32 COLLX_AVX512 fp32_vop(u8 *d, const u8 *s, int op)
{
	f32_zmm a, b;

	VLD(a, d);
	VLD(b, s);
	a = op32(a, b, op);
	VST(d, a);
	return raw_op(op) ? X86_UNORDPS(a, a) : 0;
}

static __always_inline u32 COLLX_AVX512 fp64_vop(u8 *d, const u8 *s, int op)
{
	f64_zmm a, b;

	VLD(a, d);
	VLD(b, s);
	a = op64(a, b, op);
	VST(d, a);
	return raw_op(op) ? X86_UNORDPD(a, a) : 0;
}

/* 32 bytes of fp16: widened exactly, rounded back to nearest even */
static __always_inline f32_zmm COLLX_AVX512 fp16_in(const u8 *p)
{
	h16_ymm h;

	VLD(h, p);
	return X86_PH2PS(h);
}

static __always_inline u32 COLLX_AVX512 fp16_vop(u8 *d, const u8 *s, int op)
{
	f32_zmm r = op32(fp16_in(d), fp16_in(s), op);
	h16_ymm h = X86_PS2PH(r);

	VST(d, h);
	return raw_op(op) ? X86_UNORDPS(r, r) : 0;
}

/*
 * bfloat16, as in reduce_avx2.c: 32 elements loaded as 16 32-bit lanes
 * give the even elements by a shift and the odd ones by a mask.  Max and
 * min select one operand (or the canonical NaN), so their result is exact
 * in the top halves.
 */
static __always_inline u32 COLLX_AVX512 bf16_minmax_vop(u8 *d, const u8 *s,
							int op)
{
	u32_zmm x, y, r;
	f32_zmm e, o;

	VLD(x, d);
	VLD(y, s);
	e = op32((f32_zmm)(x << 16), (f32_zmm)(y << 16), op);
	o = op32((f32_zmm)(x & 0xffff0000), (f32_zmm)(y & 0xffff0000), op);
	r = ((u32_zmm)e >> 16) | ((u32_zmm)o & 0xffff0000);
	VST(d, r);
	return 0;
}

/*
 * Sum and product round: NaNs are made canonical first (the integer
 * rounding of an arbitrary NaN could carry out of it), then each lane
 * rounds to nearest even with integer arithmetic, as narrow_bf16().
 */
static __always_inline u32_zmm COLLX_AVX512 bf16_round(f32_zmm v)
{
	u32_zmm b = (u32_zmm)X86_MOVPS(v, X86_UNORDPS(v, v), qnan32());

	return b + 0x7fff + ((b >> 16) & 1);
}

static __always_inline void COLLX_AVX512 bf16_arith_exact(u8 *d, u32_zmm x,
							  u32_zmm y, int op)
{
	f32_zmm e, o;
	u32_zmm r;

	e = op32((f32_zmm)(x << 16), (f32_zmm)(y << 16), op);
	o = op32((f32_zmm)(x & 0xffff0000), (f32_zmm)(y & 0xffff0000), op);
	r = (bf16_round(e) >> 16) | (bf16_round(o) & 0xffff0000);
	VST(d, r);
}

static __always_inline u32 COLLX_AVX512 bf16_arith_vop(u8 *d, const u8 *s,
						       int op)
{
	u32_zmm x, y;

	VLD(x, d);
	VLD(y, s);
	bf16_arith_exact(d, x, y, op);
	return 0;
}

/*
 * AVX512_BF16's vcvtne2ps2bf16 rounds to nearest even in one instruction
 * but flushes binary32 denormals to zero and keeps NaN payloads: a vector
 * whose results hold either takes the exact path above instead (rare:
 * it needs operands near 2^-126, or a NaN).  The instruction packs the
 * even elements' results below the odd ones'; vpermw interleaves them.
 */
static __always_inline void COLLX_AVX512BF16_TGT
bf16_native_vop(u8 *d, const u8 *s, int op)
{
	static const u16 interleave[32] = {
		0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
		8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31,
	};
	u32_zmm x, y;
	s16_zmm r, idx;
	f32_zmm e, o;

	VLD(idx, interleave);
	VLD(x, d);
	VLD(y, s);
	e = op32((f32_zmm)(x << 16), (f32_zmm)(y << 16), op);
	o = op32((f32_zmm)(x & 0xffff0000), (f32_zmm)(y & 0xffff0000), op);
	if (unlikely(X86_CLASSPS(e, CLASS_NAN_DENORM) |
		     X86_CLASSPS(o, CLASS_NAN_DENORM))) {
		bf16_arith_exact(d, x, y, op);
		return;
	}
	r = X86_PERMW(idx, X86_CVTNE2PS2BF16(o, e));
	VST(d, r);
}

/*
 * ---- fp8.  Both formats widen through binary16, which vcvtph2ps
 * converts exactly: an E5M2 code is the top byte of the binary16 of the
 * same value, and an E4M3 code's exponent and mantissa moved to where
 * binary16 keeps them read as 2^-8 times its value, normal and subnormal
 * alike.  E4M3 is reduced in that scaled domain, where every value and
 * result stays a normal binary32, so the power of two changes no
 * rounding: the binary32 result is the scalar one times 2^-8.
 *
 * Narrowing rounds the binary32 result to binary16 toward zero and sets
 * the lowest bit when that was inexact (round to odd), then rounds the
 * binary16 bits to nearest even at the fp8 code's lowest bit.  With 7
 * (E4M3) or 8 (E5M2) bits to spare, rounding to odd first and to
 * nearest even after is one correct rounding to nearest even, subnormals
 * included (the two formats' subnormal grids align as their normal ones
 * do).  E4M3 saturates at 448 (0x7e), E5M2 overflows to infinity as
 * narrow_e5m2() does; NaNs are put in from the operands' codes (E4M3,
 * whose numbers cannot make one) or the binary16 result (E5M2).
 */
/* 32 fp8 codes to the binary16 bits described above */
static __always_inline s16_zmm COLLX_AVX512 fp8_to_h16(const u8 *p,
						       bool e4m3)
{
	s16_zmm w;	/* each code sign-extended to 16 bits */
	c8_ymm x;

	VLD(x, p);
	w = X86_SXBW(x);
	return e4m3 ? (w << 7) & (s16)0xbf80 : w << 8;
}

static __always_inline void COLLX_AVX512 fp8_in(const u8 *p, bool e4m3,
						f32_zmm *lo, f32_zmm *hi)
{
	s16_zmm w = fp8_to_h16(p, e4m3);

	*lo = X86_PH2PS(X86_LO16(w));
	*hi = X86_PH2PS(X86_HI16(w));
}

/* binary32 to binary16, rounded to odd */
static __always_inline h16_ymm COLLX_AVX512 fp8_round_odd(f32_zmm r)
{
	h16_ymm h = X86_PS2PH_RZ(r);

	return X86_MOVW_YMM(h, X86_NEQPS(X86_PH2PS(h), r), h | 1);
}

/*
 * 32 binary32 results to fp8 codes, round to nearest even.  A sum or a
 * product of two fp8 values that binary16 cannot hold has bits far below
 * the fp8 code's half ulp, never exactly on it, so truncating it cannot
 * make a tie and it needs no sticky bit (@odd false); a quotient can.
 */
static __always_inline c8_ymm COLLX_AVX512 fp8_out(f32_zmm lo, f32_zmm hi,
						   bool e4m3, bool odd)
{
	s16_zmm w = odd ? X86_CAT16(fp8_round_odd(lo), fp8_round_odd(hi)) :
			  X86_CAT16(X86_PS2PH_RZ(lo), X86_PS2PH_RZ(hi));
	s16_zmm mag = w & 0x7fff, v, m;

	if (e4m3) {
		v = (mag + 0x3f + ((mag >> 7) & 1)) >> 7;
		v = X86_PMINUW(v, zero_w() + 0x7e) | ((w >> 8) & 0x80);
	} else {
		v = (s16_zmm)(((u16_zmm)w + 0x7f + (((u16_zmm)w >> 8) & 1))
			      >> 8);
		m = (s16_zmm)(mag > 0x7c00);
		v = (v & ~m) | (m & 0x7e);
	}
	return X86_WB(v);
}

/* E4M3's NaN codes among 32 operands of each side */
static __always_inline c8_ymm COLLX_AVX512 e4m3_nans(const u8 *d,
						     const u8 *s)
{
	u8_ymm a, b;

	VLD(a, d);
	VLD(b, s);
	return (c8_ymm)((a & 0x7f) == 0x7f) | (c8_ymm)((b & 0x7f) == 0x7f);
}

/* 32 elements, sum or product */
static __always_inline void COLLX_AVX512 fp8_arith_vop(u8 *d, const u8 *s,
						       int op, bool e4m3)
{
	f32_zmm a0, a1, b0, b1;
	c8_ymm r, nan = { 0 };

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
 * 64 elements, max or min: fp8 codes are sign and magnitude, ordered as
 * their values when read as two's complement keys with the magnitude
 * bits of negative codes flipped (-0 below +0, infinities at the ends).
 * The key of the winner is its code flipped back.
 */
static __always_inline s8_zmm COLLX_AVX512 fp8_key(s8_zmm x)
{
	s8_zmm z = { 0 };

	return x ^ ((s8_zmm)(x < z) & 0x7f);
}

static __always_inline void COLLX_AVX512 fp8_minmax_vop(u8 *d, const u8 *s,
							int op, bool e4m3)
{
	s8_zmm a, b, ka, kb, m, nan, qnan = { 0 };

	qnan += (s8)(e4m3 ? 0x7f : 0x7e);
	VLD(a, d);
	VLD(b, s);
	ka = fp8_key(a);
	kb = fp8_key(b);
	m = (s8_zmm)(op == COLLX_OP_MAX ? ka > kb : ka < kb);
	ka = fp8_key((ka & m) | (kb & ~m));
	if (e4m3)
		nan = (s8_zmm)((a & 0x7f) == 0x7f) |
		      (s8_zmm)((b & 0x7f) == 0x7f);
	else
		nan = (s8_zmm)((u8_zmm)(a & 0x7f) > 0x7c) |
		      (s8_zmm)((u8_zmm)(b & 0x7f) > 0x7c);
	ka = (ka & ~nan) | (nan & qnan);
	VST(d, ka);
}

/*
 * ---- fp16 max and min, 32 elements at a time, on the codes as fp8's
 * are: the key of a code flips the magnitude bits of negative ones (an
 * involution), keys order as the values (-0 below +0), and a NaN operand
 * gives the canonical NaN.  The same bits as comparing the widened values
 * (elem_fp16()) without converting: 1.25-1.6 x faster in cache on Zen 4
 * than vcvtph2ps and vrangeps.  bf16 needs no conversion to compare
 * (bf16_minmax_vop()), and this measured slower for it.
 */
static __always_inline s16_zmm COLLX_AVX512 h16_key(s16_zmm x)
{
	return x ^ ((x >> 15) & 0x7fff);
}

static __always_inline void COLLX_AVX512 fp16_minmax_vop(u8 *d, const u8 *s,
							 int op)
{
	s16_zmm a, b, ka, kb, m, nan;

	VLD(a, d);
	VLD(b, s);
	ka = h16_key(a);
	kb = h16_key(b);
	m = (s16_zmm)(op == COLLX_OP_MAX ? ka > kb : ka < kb);
	ka = h16_key((ka & m) | (kb & ~m));
	nan = (s16_zmm)((a & 0x7fff) > 0x7c00) |
	      (s16_zmm)((b & 0x7fff) > 0x7c00);
	ka = (ka & ~nan) | (nan & 0x7e00);
	VST(d, ka);
}

static __always_inline void COLLX_AVX512 fp16_minmax_loop(int op, u8 *d,
							  const u8 *s,
							  size_t n)
{
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		fp16_minmax_vop(d + 2 * i, s + 2 * i, op);
	elem_loop(COLLX_FP16, op, d + 2 * i, s + 2 * i, n - i);
}

/* avg's quotient of 32 elements */
static __always_inline void COLLX_AVX512 fp8_sop(u8 *d, u32 nranks,
						 bool e4m3)
{
	c8_ymm r, nan = { 0 };
	f32_zmm a0, a1;

	if (e4m3)
		nan = e4m3_nans(d, d);
	fp8_in(d, e4m3, &a0, &a1);
	r = fp8_out(a0 / (float)nranks, a1 / (float)nranks, e4m3, true);
	r = (r & ~nan) | (nan & 0x7f);
	VST(d, r);
}

static __always_inline void COLLX_AVX512 fp8_loop(enum collx_dtype dt,
						  int op, u8 *d, const u8 *s,
						  size_t n)
{
	bool e4m3 = dt == COLLX_FP8_E4M3;
	size_t i = 0;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		for (; i + 64 <= n; i += 64)
			fp8_minmax_vop(d + i, s + i, op, e4m3);
	} else {
		for (; i + 64 <= n; i += 64) {
			fp8_arith_vop(d + i, s + i, op, e4m3);
			fp8_arith_vop(d + i + 32, s + i + 32, op, e4m3);
		}
		if (i + 32 <= n) {
			fp8_arith_vop(d + i, s + i, op, e4m3);
			i += 32;
		}
	}
	elem_loop(dt, op, d + i, s + i, n - i);
}

static __always_inline void COLLX_AVX512 fp8_scale(enum collx_dtype dt,
						   u8 *d, size_t n, u32 nranks)
{
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		fp8_sop(d + i, nranks, dt == COLLX_FP8_E4M3);
	elem_scale(dt, d + i, n - i, nranks);
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

/* Bytes of dst one vop handles: a 64-byte vector, 32 bytes for fp16. */
static __always_inline size_t vop_bytes(enum collx_dtype dt)
{
	return dt == COLLX_FP16 ? 32 : 64;
}

/* One vop; returns NaN lanes to canonicalise afterwards (0 if none). */
static __always_inline u32 COLLX_AVX512 vop(enum collx_dtype dt, u8 *d,
					    const u8 *s, int op)
{
	switch (dt) {
	case COLLX_INT8:
		s8_vop(d, s, op);
		return 0;
	case COLLX_UINT8:
		u8_vop(d, s, op);
		return 0;
	case COLLX_INT32:
		s32_vop(d, s, op);
		return 0;
	case COLLX_UINT32:
		u32_vop(d, s, op);
		return 0;
	case COLLX_INT64:
		s64_vop(d, s, op);
		return 0;
	case COLLX_UINT64:
		u64_vop(d, s, op);
		return 0;
	case COLLX_FP16:
		return fp16_vop(d, s, op);
	case COLLX_FP32:
		return fp32_vop(d, s, op);
	case COLLX_FP64:
		return fp64_vop(d, s, op);
	default:	/* bf16 */
		if (op == COLLX_OP_MAX || op == COLLX_OP_MIN)
			return bf16_minmax_vop(d, s, op);
		return bf16_arith_vop(d, s, op);
	}
}

/*
 * dst = dst (op) src over n elements: two vops per iteration, then one
 * more if it fits, then reduce_elem.h for the tail.  No software prefetch:
 * with AVX-512's wider loads the hardware prefetchers keep up, and
 * prefetching as reduce_avx2.c does measured 10-30% slower beyond the
 * caches on the build machine (Zen 4).
 */
static __always_inline void COLLX_AVX512 avx512_loop(enum collx_dtype dt,
						     int op, u8 *d,
						     const u8 *s, size_t n)
{
	size_t es = elem_size(dt), vb = vop_bytes(dt), nb = n * es, i = 0;
	u32 nan = 0;

	if (dt == COLLX_FP8_E4M3 || dt == COLLX_FP8_E5M2) {
		fp8_loop(dt, op, d, s, n);
		return;
	}
	if (dt == COLLX_FP16 && (op == COLLX_OP_MAX || op == COLLX_OP_MIN)) {
		fp16_minmax_loop(op, d, s, n);
		return;
	}
	for (; i + 2 * vb <= nb; i += 2 * vb) {
		nan |= vop(dt, d + i, s + i, op);
		nan |= vop(dt, d + i + vb, s + i + vb, op);
	}
	if (i + vb <= nb) {
		nan |= vop(dt, d + i, s + i, op);
		i += vb;
	}
	if (unlikely(nan))
		fixup(dt, d, i / es);
	elem_loop(dt, op, d + i, s + i, (nb - i) / es);
}

/* The same for bf16 sum and product with AVX512_BF16. */
static __always_inline void COLLX_AVX512BF16_TGT
avx512bf_loop(enum collx_dtype dt, int op, u8 *d, const u8 *s, size_t n)
{
	size_t nb = n * elem_size(dt), i = 0;

	for (; i + 128 <= nb; i += 128) {
		bf16_native_vop(d + i, s + i, op);
		bf16_native_vop(d + i + 64, s + i + 64, op);
	}
	if (i + 64 <= nb) {
		bf16_native_vop(d + i, s + i, op);
		i += 64;
	}
	elem_loop(dt, op, d + i, s + i, (nb - i) / 2);
}

/* avg scaling: floats divide in lanes (fp8 above); integers per element */
static __always_inline void COLLX_AVX512 sop(enum collx_dtype dt, u8 *d,
					     u32 nranks)
{
	f32_zmm a, e, o;
	f64_zmm b;
	u32_zmm x;
	h16_ymm h;

	switch (dt) {
	case COLLX_FP16:
		a = fp16_in(d) / (float)nranks;
		h = X86_PS2PH(X86_MOVPS(a, X86_UNORDPS(a, a), qnan32()));
		VST(d, h);
		break;
	case COLLX_FP32:
		VLD(a, d);
		a = a / (float)nranks;
		a = X86_MOVPS(a, X86_UNORDPS(a, a), qnan32());
		VST(d, a);
		break;
	case COLLX_FP64:
		VLD(b, d);
		b = b / (double)nranks;
		VST(d, b);
		break;
	default:	/* bf16 */
		VLD(x, d);
		e = (f32_zmm)(x << 16) / (float)nranks;
		o = (f32_zmm)(x & 0xffff0000) / (float)nranks;
		x = (bf16_round(e) >> 16) | (bf16_round(o) & 0xffff0000);
		VST(d, x);
		break;
	}
}

static __always_inline void COLLX_AVX512 avx512_scale(enum collx_dtype dt,
						      u8 *d, size_t n,
						      u32 nranks)
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
	/* fp64 quotients are canonicalised here, for the whole part */
	if (dt == COLLX_FP64)
		fixup(dt, d, i / es);
	elem_scale(dt, d + i, (nb - i) / es, nranks);
}

#define AVX512_LOOP(dt, op, d, s, n)	avx512_loop(dt, op, d, s, n)
#define AVX512BF_LOOP(dt, op, d, s, n)	avx512bf_loop(dt, op, d, s, n)
#define AVX512_SCALE(dt, d, n, nranks)	avx512_scale(dt, d, n, nranks)

COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT8, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT8, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT8, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT8, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT8, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT8, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT8, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT8, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT32, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT32, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT32, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT32, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT32, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT32, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT32, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT32, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT64, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT64, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT64, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, INT64, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT64, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT64, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT64, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, UINT64, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP16, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP16, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP16, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP16, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP32, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP32, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP32, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP32, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP64, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP64, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP64, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP64, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, BF16, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, BF16, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, BF16, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, BF16, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E4M3, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E4M3, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E4M3, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E4M3, MIN)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E5M2, SUM)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E5M2, PROD)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E5M2, MAX)
COLLX_FN(avx512, COLLX_AVX512, AVX512_LOOP, FP8_E5M2, MIN)
/* with AVX512_BF16: bf16 sum and product; max and min need no rounding */
COLLX_FN(avx512bf, COLLX_AVX512BF16_TGT, AVX512BF_LOOP, BF16, SUM)
COLLX_FN(avx512bf, COLLX_AVX512BF16_TGT, AVX512BF_LOOP, BF16, PROD)

COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, INT8)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, UINT8)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, INT32)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, UINT32)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, INT64)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, UINT64)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, FP16)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, FP32)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, FP64)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, BF16)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, FP8_E4M3)
COLLX_SCALE_FN(avx512, COLLX_AVX512, AVX512_SCALE, FP8_E5M2)

const struct collx_reduce_ops collx_reduce_avx512_ops = {
	.name = "avx512",
	.reduce = {
		[COLLX_INT8] = COLLX_OPS4(avx512, INT8),
		[COLLX_UINT8] = COLLX_OPS4(avx512, UINT8),
		[COLLX_INT32] = COLLX_OPS4(avx512, INT32),
		[COLLX_UINT32] = COLLX_OPS4(avx512, UINT32),
		[COLLX_INT64] = COLLX_OPS4(avx512, INT64),
		[COLLX_UINT64] = COLLX_OPS4(avx512, UINT64),
		[COLLX_FP16] = COLLX_OPS4(avx512, FP16),
		[COLLX_FP32] = COLLX_OPS4(avx512, FP32),
		[COLLX_FP64] = COLLX_OPS4(avx512, FP64),
		[COLLX_BF16] = COLLX_OPS4(avx512, BF16),
		[COLLX_FP8_E4M3] = COLLX_OPS4(avx512, FP8_E4M3),
		[COLLX_FP8_E5M2] = COLLX_OPS4(avx512, FP8_E5M2),
	},
	.scale = {
		[COLLX_INT8] = avx512_INT8_scale,
		[COLLX_UINT8] = avx512_UINT8_scale,
		[COLLX_INT32] = avx512_INT32_scale,
		[COLLX_UINT32] = avx512_UINT32_scale,
		[COLLX_INT64] = avx512_INT64_scale,
		[COLLX_UINT64] = avx512_UINT64_scale,
		[COLLX_FP16] = avx512_FP16_scale,
		[COLLX_FP32] = avx512_FP32_scale,
		[COLLX_FP64] = avx512_FP64_scale,
		[COLLX_BF16] = avx512_BF16_scale,
		[COLLX_FP8_E4M3] = avx512_FP8_E4M3_scale,
		[COLLX_FP8_E5M2] = avx512_FP8_E5M2_scale,
	},
};

const struct collx_reduce_ops collx_reduce_avx512_bf16_ops = {
	.name = "avx512bf16",
	.reduce = {
		[COLLX_INT8] = COLLX_OPS4(avx512, INT8),
		[COLLX_UINT8] = COLLX_OPS4(avx512, UINT8),
		[COLLX_INT32] = COLLX_OPS4(avx512, INT32),
		[COLLX_UINT32] = COLLX_OPS4(avx512, UINT32),
		[COLLX_INT64] = COLLX_OPS4(avx512, INT64),
		[COLLX_UINT64] = COLLX_OPS4(avx512, UINT64),
		[COLLX_FP16] = COLLX_OPS4(avx512, FP16),
		[COLLX_FP32] = COLLX_OPS4(avx512, FP32),
		[COLLX_FP64] = COLLX_OPS4(avx512, FP64),
		[COLLX_BF16] = { avx512bf_BF16_SUM, avx512bf_BF16_PROD,
				 avx512_BF16_MAX, avx512_BF16_MIN },
		[COLLX_FP8_E4M3] = COLLX_OPS4(avx512, FP8_E4M3),
		[COLLX_FP8_E5M2] = COLLX_OPS4(avx512, FP8_E5M2),
	},
	.scale = {
		[COLLX_INT8] = avx512_INT8_scale,
		[COLLX_UINT8] = avx512_UINT8_scale,
		[COLLX_INT32] = avx512_INT32_scale,
		[COLLX_UINT32] = avx512_UINT32_scale,
		[COLLX_INT64] = avx512_INT64_scale,
		[COLLX_UINT64] = avx512_UINT64_scale,
		[COLLX_FP16] = avx512_FP16_scale,
		[COLLX_FP32] = avx512_FP32_scale,
		[COLLX_FP64] = avx512_FP64_scale,
		[COLLX_BF16] = avx512_BF16_scale,
		[COLLX_FP8_E4M3] = avx512_FP8_E4M3_scale,
		[COLLX_FP8_E5M2] = avx512_FP8_E5M2_scale,
	},
};

#endif /* COLLX_HAVE_X86_SIMD */
