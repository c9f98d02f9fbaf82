/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: reduction kernels, dst = dst (op) src, for every collx dtype.
 *
 * Shared by the module, KUnit and the host tests; see Documentation/reduce.md
 * for the exact semantics (NaN, signed zeros, integer wrap, avg).
 */
#ifndef _COLLX_CORE_REDUCE_H
#define _COLLX_CORE_REDUCE_H

#include "core_shim.h"

/**
 * enum collx_reduce_impl - which implementation of the kernels to run
 * @COLLX_REDUCE_AUTO: the fastest one this CPU supports
 * @COLLX_REDUCE_SCALAR: portable C, written so that compilers vectorise it
 * @COLLX_REDUCE_AVX2: x86-64 AVX2 (and F16C for fp16)
 * @COLLX_REDUCE_AVX512: x86-64 AVX-512 F, BW, DQ and VL
 * @COLLX_REDUCE_AVX512_BF16: %COLLX_REDUCE_AVX512 with AVX512_BF16's
 *	fp32 to bf16 rounding instruction for bf16
 * @COLLX_REDUCE_NEON: arm64 Advanced SIMD
 * @COLLX_REDUCE_IMPL_COUNT: number of values; not an implementation
 *
 * Every implementation gives bit-identical results; the choice only changes
 * speed.  The tail of a buffer that does not fill a vector runs the scalar
 * rules.  Tests and benchmarks name one explicitly.
 */
enum collx_reduce_impl {
	COLLX_REDUCE_AUTO,
	COLLX_REDUCE_SCALAR,
	COLLX_REDUCE_AVX2,
	COLLX_REDUCE_AVX512,
	COLLX_REDUCE_AVX512_BF16,
	COLLX_REDUCE_NEON,
	COLLX_REDUCE_IMPL_COUNT,
};

/*
 * Bytes of dst handled per FPU section in the kernel.  Reducing 16 KiB takes
 * a few microseconds at memory speed, so preemption is never held off for
 * long; a caller that reduces many megabytes in one go may cond_resched()
 * between its own calls, the core never sleeps.
 */
#define COLLX_REDUCE_FPU_BYTES	16384

/**
 * collx_dtype_size() - size in bytes of one element
 * @dtype: element type
 *
 * Context: any.
 * Return: 1, 2, 4 or 8; 0 for a value that is not a &enum collx_dtype.
 */
size_t collx_dtype_size(enum collx_dtype dtype);

/**
 * collx_reduce_impl_available() - whether this CPU can run @impl
 * @impl: implementation
 *
 * Context: any.
 * Return: true for %COLLX_REDUCE_AUTO and %COLLX_REDUCE_SCALAR always, for
 * a SIMD implementation when the CPU (and, in the kernel, the OS) has the
 * instructions it uses.
 */
bool collx_reduce_impl_available(enum collx_reduce_impl impl);

/**
 * collx_reduce_impl_name() - printable name of an implementation
 * @impl: implementation; %COLLX_REDUCE_AUTO names the one it resolves to
 *
 * Context: any.
 * Return: a static string ("scalar", "avx2", "avx512", "avx512bf16",
 * "neon"; "invalid" for one this CPU cannot run or an unknown value).
 */
const char *collx_reduce_impl_name(enum collx_reduce_impl impl);

/**
 * collx_reduce_with() - dst[i] = dst[i] (op) src[i], chosen implementation
 * @impl: implementation
 * @dst: in/out buffer of @count elements; any alignment
 * @src: input buffer of @count elements; may equal @dst, must not otherwise
 *	overlap it
 * @count: number of elements; 0 is valid and does nothing
 * @dtype: element type
 * @op: operation; %COLLX_OP_AVG reduces as %COLLX_OP_SUM, the caller scales
 *	the final sum with collx_reduce_scale_avg()
 *
 * Integers wrap on overflow (two's complement).  Float NaN results are the
 * canonical quiet NaN, min/max propagate NaN and order -0 below +0
 * (IEEE 754-2019 minimum/maximum), so every op is bitwise commutative.
 *
 * Context: process context, or softirq when collx_fpu_usable(); not hardirq
 * or NMI.  In the kernel, float and SIMD code runs in sections of
 * %COLLX_REDUCE_FPU_BYTES of @dst between kernel_fpu_begin() and
 * kernel_fpu_end(); preemption is enabled in between.  Does not sleep.
 * Return: 0; -EINVAL for an unknown @dtype or @op or a @count whose byte
 * size overflows; -EOPNOTSUPP if @impl is not available on this CPU;
 * -EBUSY if the FPU cannot be used in this context.
 */
int collx_reduce_with(enum collx_reduce_impl impl, void *dst, const void *src,
		      size_t count, enum collx_dtype dtype,
		      enum collx_redop op);

/**
 * collx_reduce() - dst[i] = dst[i] (op) src[i] with the fastest implementation
 * @dst: in/out buffer
 * @src: input buffer
 * @count: number of elements
 * @dtype: element type
 * @op: operation (%COLLX_OP_AVG reduces as %COLLX_OP_SUM)
 *
 * Same as collx_reduce_with(%COLLX_REDUCE_AUTO, ...).
 *
 * Context: see collx_reduce_with().
 * Return: see collx_reduce_with().
 */
int collx_reduce(void *dst, const void *src, size_t count,
		 enum collx_dtype dtype, enum collx_redop op);

/**
 * collx_reduce_scale_avg_with() - buf[i] = buf[i] / nranks, the end of an avg
 * @impl: implementation
 * @buf: in/out buffer of @count elements holding a sum over @nranks ranks
 * @count: number of elements
 * @dtype: element type
 * @nranks: number of ranks that contributed, at least 1
 *
 * Floats divide (correctly rounded; fp16, bf16 and fp8 through fp32).  Integers
 * divide truncating toward zero, as NCCL's ncclAvg does, applied to the
 * (possibly wrapped) sum.
 *
 * Context: see collx_reduce_with().
 * Return: 0; -EINVAL for an unknown @dtype, @nranks == 0 or a @count whose
 * byte size overflows; -EOPNOTSUPP or -EBUSY as collx_reduce_with().
 */
int collx_reduce_scale_avg_with(enum collx_reduce_impl impl, void *buf,
				size_t count, enum collx_dtype dtype,
				u32 nranks);

/**
 * collx_reduce_scale_avg() - collx_reduce_scale_avg_with() on the fastest
 *	implementation
 * @buf: in/out buffer
 * @count: number of elements
 * @dtype: element type
 * @nranks: number of ranks, at least 1
 *
 * Context: see collx_reduce_with().
 * Return: see collx_reduce_scale_avg_with().
 */
int collx_reduce_scale_avg(void *buf, size_t count, enum collx_dtype dtype,
			   u32 nranks);

/*
 * Conversions between the narrow float formats and binary32 bit patterns.
 * Integer-only code, usable anywhere (no FPU section needed), and the
 * reference the kernels are tested against.  To binary32 is exact
 * (signalling NaNs come back quiet for fp16 and fp8, as F16C does for
 * fp16); from binary32 rounds to nearest, ties to even, makes subnormals
 * and keeps the NaN payload bits that fit (quieted).  Overflow: fp16,
 * bf16 and E5M2 give infinity; E4M3, which has none, saturates to +-448
 * (OCP 8-bit floating point, saturating mode; infinities saturate too).
 */

/**
 * collx_fp16_to_f32_bits() - binary16 to binary32 bits
 * @h: binary16 bits
 *
 * Context: any.
 * Return: binary32 bits of the same value.
 */
u32 collx_fp16_to_f32_bits(u16 h);

/**
 * collx_f32_bits_to_fp16() - binary32 bits to binary16, round to nearest even
 * @f: binary32 bits
 *
 * Context: any.
 * Return: binary16 bits.
 */
u16 collx_f32_bits_to_fp16(u32 f);

/**
 * collx_bf16_to_f32_bits() - bfloat16 to binary32 bits
 * @b: bfloat16 bits
 *
 * Context: any.
 * Return: binary32 bits of the same value (@b shifted left by 16).
 */
u32 collx_bf16_to_f32_bits(u16 b);

/**
 * collx_f32_bits_to_bf16() - binary32 bits to bfloat16, round to nearest even
 * @f: binary32 bits
 *
 * Context: any.
 * Return: bfloat16 bits.
 */
u16 collx_f32_bits_to_bf16(u32 f);

/**
 * collx_e4m3_to_f32_bits() - OCP FP8 E4M3 to binary32 bits
 * @x: E4M3 bits (S.EEEE.MMM, bias 7; S.1111.111 is NaN)
 *
 * Context: any.
 * Return: binary32 bits of the same value; NaN gives a quiet NaN of the
 * same sign.
 */
u32 collx_e4m3_to_f32_bits(u8 x);

/**
 * collx_f32_bits_to_e4m3() - binary32 bits to E4M3, round to nearest even
 * @f: binary32 bits
 *
 * Values whose rounded magnitude exceeds 448, and infinities, saturate to
 * +-448.
 *
 * Context: any.
 * Return: E4M3 bits; a NaN gives S.1111.111.
 */
u8 collx_f32_bits_to_e4m3(u32 f);

/**
 * collx_e5m2_to_f32_bits() - OCP FP8 E5M2 to binary32 bits
 * @x: E5M2 bits (S.EEEEE.MM, bias 15, the top byte of a binary16)
 *
 * Context: any.
 * Return: binary32 bits of the same value (NaNs quiet).
 */
u32 collx_e5m2_to_f32_bits(u8 x);

/**
 * collx_f32_bits_to_e5m2() - binary32 bits to E5M2, round to nearest even
 * @f: binary32 bits
 *
 * Context: any.
 * Return: E5M2 bits; magnitudes from 61440 (the midpoint above 57344) up
 * round to infinity.
 */
u8 collx_f32_bits_to_e5m2(u32 f);

#endif /* _COLLX_CORE_REDUCE_H */
