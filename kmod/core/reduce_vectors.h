/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: known-answer vectors for the reduction kernels, shared by
 * the KUnit suite (reduce_test.c) and the host tests (tests/unit).
 * Values are bit patterns, so the table needs no float support.
 */
#ifndef _COLLX_CORE_REDUCE_VECTORS_H
#define _COLLX_CORE_REDUCE_VECTORS_H

#include "reduce.h"

/**
 * struct collx_reduce_vec - one known answer
 * @name: case name (KUnit parameter description)
 * @dtype: element type
 * @op: operation; %COLLX_OP_AVG means collx_reduce_scale_avg() of @a by
 *	@b ranks
 * @a: dst element bits before
 * @b: src element bits, or the rank count for %COLLX_OP_AVG
 * @expect: dst element bits after
 */
struct collx_reduce_vec {
	const char *name;
	enum collx_dtype dtype;
	enum collx_redop op;
	u64 a;
	u64 b;
	u64 expect;
};

#define RV(n, t, o, x, y, e)	{ n, COLLX_##t, COLLX_OP_##o, x, y, e }

static const struct collx_reduce_vec collx_reduce_vectors[] = {
	/* binary32 */
	RV("f32_sum_1_2", FP32, SUM, 0x3f800000, 0x40000000, 0x40400000),
	RV("f32_sum_inf_minus_inf", FP32, SUM, 0x7f800000, 0xff800000,
	   0x7fc00000),
	RV("f32_sum_nan_payload", FP32, SUM, 0xffc12345, 0x3f800000,
	   0x7fc00000),
	RV("f32_sum_snan", FP32, SUM, 0x3f800000, 0x7f800001, 0x7fc00000),
	RV("f32_sum_neg0_neg0", FP32, SUM, 0x80000000, 0x80000000, 0x80000000),
	RV("f32_sum_pos0_neg0", FP32, SUM, 0x00000000, 0x80000000, 0x00000000),
	RV("f32_sum_subnormals", FP32, SUM, 0x00000001, 0x00000001, 0x00000002),
	RV("f32_sum_sub_to_normal", FP32, SUM, 0x007fffff, 0x00000001,
	   0x00800000),
	RV("f32_sum_overflow", FP32, SUM, 0x7f7fffff, 0x7f7fffff, 0x7f800000),
	RV("f32_sum_tie_even_down", FP32, SUM, 0x3f800000, 0x33800000,
	   0x3f800000),
	RV("f32_sum_above_tie", FP32, SUM, 0x3f800000, 0x33800001, 0x3f800001),
	RV("f32_sum_tie_even_up", FP32, SUM, 0x3f800001, 0x33800000,
	   0x3f800002),
	RV("f32_prod_inf_zero", FP32, PROD, 0x7f800000, 0x00000000, 0x7fc00000),
	RV("f32_prod_neg0", FP32, PROD, 0x80000000, 0x3f800000, 0x80000000),
	RV("f32_prod_underflow_tie", FP32, PROD, 0x00000001, 0x3f000000,
	   0x00000000),
	RV("f32_prod_sub_tie_even", FP32, PROD, 0x00000003, 0x3f000000,
	   0x00000002),
	RV("f32_prod_2_3", FP32, PROD, 0x40000000, 0x40400000, 0x40c00000),
	RV("f32_max_nan_first", FP32, MAX, 0x7fc00001, 0x3f800000, 0x7fc00000),
	RV("f32_max_nan_second", FP32, MAX, 0x3f800000, 0xff800001, 0x7fc00000),
	RV("f32_max_pos0_neg0", FP32, MAX, 0x00000000, 0x80000000, 0x00000000),
	RV("f32_max_neg0_pos0", FP32, MAX, 0x80000000, 0x00000000, 0x00000000),
	RV("f32_min_pos0_neg0", FP32, MIN, 0x00000000, 0x80000000, 0x80000000),
	RV("f32_min_neg0_pos0", FP32, MIN, 0x80000000, 0x00000000, 0x80000000),
	RV("f32_max_neginf", FP32, MAX, 0xff800000, 0x3f800000, 0x3f800000),
	RV("f32_min_neginf", FP32, MIN, 0xff800000, 0x3f800000, 0xff800000),
	RV("f32_max_subnormal", FP32, MAX, 0x00000001, 0x80000000, 0x00000001),
	RV("f32_min_nan", FP32, MIN, 0x3f800000, 0x7f800001, 0x7fc00000),
	RV("f32_avg_3_by_2", FP32, AVG, 0x40400000, 2, 0x3fc00000),
	RV("f32_avg_1_by_3", FP32, AVG, 0x3f800000, 3, 0x3eaaaaab),
	RV("f32_avg_nan", FP32, AVG, 0xffc00001, 4, 0x7fc00000),
	RV("f32_avg_inf", FP32, AVG, 0xff800000, 2, 0xff800000),
	RV("f32_avg_neg0", FP32, AVG, 0x80000000, 2, 0x80000000),
	RV("f32_avg_subnormal", FP32, AVG, 0x00000003, 2, 0x00000002),
	/* binary64 */
	RV("f64_sum_1_2", FP64, SUM, 0x3ff0000000000000, 0x4000000000000000,
	   0x4008000000000000),
	RV("f64_sum_inf_minus_inf", FP64, SUM, 0x7ff0000000000000,
	   0xfff0000000000000, 0x7ff8000000000000),
	RV("f64_sum_neg0", FP64, SUM, 0x8000000000000000, 0x8000000000000000,
	   0x8000000000000000),
	RV("f64_sum_subnormals", FP64, SUM, 1, 1, 2),
	RV("f64_sum_tie_even", FP64, SUM, 0x3ff0000000000000,
	   0x3ca0000000000000,
	   0x3ff0000000000000),
	RV("f64_prod_overflow", FP64, PROD, 0x7fefffffffffffff,
	   0x4000000000000000,
	   0x7ff0000000000000),
	RV("f64_prod_snan", FP64, PROD, 0x7ff0000000000001, 0x3ff0000000000000,
	   0x7ff8000000000000),
	RV("f64_max_pos0_neg0", FP64, MAX, 0x8000000000000000, 0, 0),
	RV("f64_min_pos0_neg0", FP64, MIN, 0, 0x8000000000000000,
	   0x8000000000000000),
	RV("f64_min_nan", FP64, MIN, 0xfff8000000000001, 0x3ff0000000000000,
	   0x7ff8000000000000),
	RV("f64_max_2_1", FP64, MAX, 0x4000000000000000, 0x3ff0000000000000,
	   0x4000000000000000),
	RV("f64_avg_1_by_3", FP64, AVG, 0x3ff0000000000000, 3,
	   0x3fd5555555555555),
	/* binary16 */
	RV("fp16_sum_1_2", FP16, SUM, 0x3c00, 0x4000, 0x4200),
	RV("fp16_sum_overflow", FP16, SUM, 0x7bff, 0x7bff, 0x7c00),
	RV("fp16_sum_tie_to_inf", FP16, SUM, 0x7bff, 0x4c00, 0x7c00),
	RV("fp16_sum_below_tie", FP16, SUM, 0x7bff, 0x4800, 0x7bff),
	RV("fp16_sum_subnormals", FP16, SUM, 0x0001, 0x0001, 0x0002),
	RV("fp16_sum_sub_to_normal", FP16, SUM, 0x03ff, 0x0001, 0x0400),
	RV("fp16_sum_tie_even", FP16, SUM, 0x3c00, 0x1000, 0x3c00),
	RV("fp16_sum_above_tie", FP16, SUM, 0x3c00, 0x1001, 0x3c01),
	RV("fp16_sum_snan", FP16, SUM, 0x7c01, 0x3c00, 0x7e00),
	RV("fp16_sum_inf_minus_inf", FP16, SUM, 0x7c00, 0xfc00, 0x7e00),
	RV("fp16_sum_neg0", FP16, SUM, 0x8000, 0x8000, 0x8000),
	RV("fp16_prod_underflow_tie", FP16, PROD, 0x0001, 0x3800, 0x0000),
	RV("fp16_prod_sub_tie_even", FP16, PROD, 0x0003, 0x3800, 0x0002),
	RV("fp16_prod_neg", FP16, PROD, 0xc000, 0x4200, 0xc600),
	RV("fp16_max_pos0_neg0", FP16, MAX, 0x0000, 0x8000, 0x0000),
	RV("fp16_min_pos0_neg0", FP16, MIN, 0x0000, 0x8000, 0x8000),
	RV("fp16_max_nan", FP16, MAX, 0xfe01, 0x3c00, 0x7e00),
	RV("fp16_min_inf", FP16, MIN, 0x7c00, 0xfbff, 0xfbff),
	RV("fp16_avg_3_by_2", FP16, AVG, 0x4200, 2, 0x3e00),
	RV("fp16_avg_1_by_3", FP16, AVG, 0x3c00, 3, 0x3555),
	/* bfloat16 */
	RV("bf16_sum_1_2", BF16, SUM, 0x3f80, 0x4000, 0x4040),
	RV("bf16_sum_tie_even_down", BF16, SUM, 0x3f80, 0x3b80, 0x3f80),
	RV("bf16_sum_tie_even_up", BF16, SUM, 0x3f81, 0x3b80, 0x3f82),
	RV("bf16_sum_overflow", BF16, SUM, 0x7f7f, 0x7f7f, 0x7f80),
	RV("bf16_sum_subnormals", BF16, SUM, 0x0001, 0x0001, 0x0002),
	RV("bf16_sum_nan", BF16, SUM, 0xff81, 0x3f80, 0x7fc0),
	RV("bf16_max_pos0_neg0", BF16, MAX, 0x8000, 0x0000, 0x0000),
	RV("bf16_min_pos0_neg0", BF16, MIN, 0x8000, 0x0000, 0x8000),
	RV("bf16_min_nan", BF16, MIN, 0x3f80, 0x7fc1, 0x7fc0),
	RV("bf16_prod_inf_zero", BF16, PROD, 0xff80, 0x0000, 0x7fc0),
	RV("bf16_avg_1_by_3", BF16, AVG, 0x3f80, 3, 0x3eab),
	/* integers: wrap, signed compare, truncating avg */
	RV("s8_sum_wrap", INT8, SUM, 0x7f, 0x01, 0x80),
	RV("s8_prod_wrap", INT8, PROD, 0x80, 0xff, 0x80),
	RV("s8_max_signed", INT8, MAX, 0xff, 0x01, 0x01),
	RV("s8_min_signed", INT8, MIN, 0x80, 0x7f, 0x80),
	RV("s8_avg_trunc", INT8, AVG, 0x80, 3, 0xd6),
	RV("u8_sum_wrap", UINT8, SUM, 0xff, 0x01, 0x00),
	RV("u8_prod_wrap", UINT8, PROD, 0x10, 0x10, 0x00),
	RV("u8_max_unsigned", UINT8, MAX, 0xff, 0x00, 0xff),
	RV("u8_min_unsigned", UINT8, MIN, 0x80, 0x7f, 0x7f),
	RV("u8_avg_trunc", UINT8, AVG, 0xff, 4, 0x3f),
	RV("s32_sum_wrap", INT32, SUM, 0x7fffffff, 1, 0x80000000),
	RV("s32_prod_wrap", INT32, PROD, 0x10000, 0x10000, 0),
	RV("s32_max_signed", INT32, MAX, 0xffffffff, 0, 0),
	RV("s32_min_signed", INT32, MIN, 0xffffffff, 0, 0xffffffff),
	RV("s32_avg_trunc_neg", INT32, AVG, 0xfffffff9, 2, 0xfffffffd),
	RV("s32_avg_trunc_pos", INT32, AVG, 7, 2, 3),
	RV("s32_avg_min", INT32, AVG, 0x80000000, 1, 0x80000000),
	RV("s32_avg_huge_n", INT32, AVG, 0x80000000, 0xffffffff, 0),
	RV("u32_max_unsigned", UINT32, MAX, 0xffffffff, 0, 0xffffffff),
	RV("u32_sum_wrap", UINT32, SUM, 0xffffffff, 2, 1),
	RV("u32_avg_trunc", UINT32, AVG, 0xffffffff, 2, 0x7fffffff),
	RV("s64_sum_wrap", INT64, SUM, 0x7fffffffffffffff, 1,
	   0x8000000000000000),
	RV("s64_max_signed", INT64, MAX, 0xfffffffffffffffb, 3, 3),
	RV("s64_min_signed", INT64, MIN, 0x8000000000000000, 0,
	   0x8000000000000000),
	RV("s64_prod_wrap", INT64, PROD, 0x100000000, 0x100000000, 0),
	RV("s64_avg_min", INT64, AVG, 0x8000000000000000, 2,
	   0xc000000000000000),
	RV("u64_max_unsigned", UINT64, MAX, 0xffffffffffffffff, 1,
	   0xffffffffffffffff),
	RV("u64_min_unsigned", UINT64, MIN, 0x8000000000000000, 1, 1),
	RV("u64_prod_wrap", UINT64, PROD, 3, 0x5555555555555556, 2),
	RV("u64_avg_trunc", UINT64, AVG, 0xffffffffffffffff, 3,
	   0x5555555555555555),
};

#undef RV

#endif /* _COLLX_CORE_REDUCE_VECTORS_H */
