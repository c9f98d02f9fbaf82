/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: table of argument checks and the errno each must give,
 * shared by the KUnit suite (uapi_test.c) and the host tests.
 */
#ifndef _COLLX_CORE_UAPI_VECTORS_H
#define _COLLX_CORE_UAPI_VECTORS_H

#include "uapi_check.h"

/**
 * struct collx_uapi_vec - one check and its expected result
 * @name: case name
 * @fn: runs the check on @a .. @d and @buf
 * @a: first argument
 * @b: second argument
 * @c: third argument
 * @d: fourth argument
 * @buf: bytes for the checks that take a buffer
 * @expect: expected return value
 * @out: expected byte count for collx_uapi_buf_bytes() on success
 */
struct collx_uapi_vec {
	const char *name;
	int (*fn)(const struct collx_uapi_vec *v, u64 *out);
	u64 a, b, c, d;
	const u8 *buf;
	int expect;
	u64 out;
};

static inline int collx_uv_size(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_size((u32)v->a, (size_t)v->b);
}

static inline int collx_uv_tail(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_tail(v->buf, (size_t)v->a, (size_t)v->b);
}

static inline int collx_uv_zero(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_zero(v->buf, (size_t)v->a);
}

static inline int collx_uv_flags(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_flags(v->a, v->b);
}

static inline int collx_uv_dtype(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_dtype((u32)v->a);
}

static inline int collx_uv_redop(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_redop((u32)v->a);
}

static inline int collx_uv_bytes(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_buf_bytes(v->a, (u32)v->b, v->c, v->d, out);
}

static inline int collx_uv_range(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_range(v->a, v->b, v->c);
}

static inline int collx_uv_ranks(const struct collx_uapi_vec *v, u64 *out)
{
	return collx_uapi_check_ranks((u32)v->a, (u32)v->b, (u32)v->c);
}

static const u8 collx_uv_zeros[16];
static const u8 collx_uv_last_set[16] = { [15] = 1 };
static const u8 collx_uv_first_set[16] = { [0] = 0x80 };

#define UV(n, f, a, b, c, d, buf, e, o)	\
	{ n, collx_uv_##f, a, b, c, d, buf, e, o }
#define U64MAX	0xffffffffffffffffULL
#define TASK_LIM	0x00007ffffffff000ULL

static const struct collx_uapi_vec collx_uapi_vectors[] = {
	UV("size_exact", size, 24, 24, 0, 0, NULL, 0, 0),
	UV("size_larger", size, 4096, 24, 0, 0, NULL, 0, 0),
	UV("size_one_short", size, 23, 24, 0, 0, NULL, -EINVAL, 0),
	UV("size_zero", size, 0, 4, 0, 0, NULL, -EINVAL, 0),
	UV("tail_older_user", tail, 8, 16, 0, 0, collx_uv_last_set, 0, 0),
	UV("tail_same_size", tail, 16, 16, 0, 0, collx_uv_last_set, 0, 0),
	UV("tail_newer_zero", tail, 16, 8, 0, 0, collx_uv_zeros, 0, 0),
	UV("tail_newer_nonzero_last", tail, 16, 8, 0, 0, collx_uv_last_set,
	   -E2BIG, 0),
	UV("tail_newer_nonzero_below_ksize", tail, 16, 8, 0, 0,
	   collx_uv_first_set, 0, 0),
	UV("zero_ok", zero, 16, 0, 0, 0, collx_uv_zeros, 0, 0),
	UV("zero_last_byte", zero, 16, 0, 0, 0, collx_uv_last_set, -EINVAL, 0),
	UV("zero_empty", zero, 0, 0, 0, 0, collx_uv_last_set, 0, 0),
	UV("flags_zero", flags, 0, 0, 0, 0, NULL, 0, 0),
	UV("flags_known", flags, 0x5, 0x7, 0, 0, NULL, 0, 0),
	UV("flags_unknown_bit", flags, 0x8, 0x7, 0, 0, NULL, -EOPNOTSUPP, 0),
	UV("flags_top_bit", flags, 1ULL << 63, 0x7, 0, 0, NULL, -EOPNOTSUPP, 0),
	UV("dtype_int8", dtype, COLLX_INT8, 0, 0, 0, NULL, 0, 0),
	UV("dtype_bf16", dtype, COLLX_BF16, 0, 0, 0, NULL, 0, 0),
	UV("dtype_count", dtype, COLLX_DTYPE_COUNT, 0, 0, 0, NULL, -EOPNOTSUPP,
	   0),
	UV("dtype_huge", dtype, 0xffffffff, 0, 0, 0, NULL, -EOPNOTSUPP, 0),
	UV("redop_avg", redop, COLLX_OP_AVG, 0, 0, 0, NULL, 0, 0),
	UV("redop_count", redop, COLLX_OP_COUNT, 0, 0, 0, NULL, -EOPNOTSUPP, 0),
	UV("bytes_fp32", bytes, 1000, COLLX_FP32, 1, U64MAX, NULL, 0, 4000),
	UV("bytes_zero_count", bytes, 0, COLLX_FP64, 1, U64MAX, NULL, 0, 0),
	UV("bytes_allgather", bytes, 1000, COLLX_BF16, 8, U64MAX, NULL, 0,
	   16000),
	UV("bytes_at_limit", bytes, 256, COLLX_INT32, 1, 1024, NULL, 0, 1024),
	UV("bytes_over_limit", bytes, 257, COLLX_INT32, 1, 1024, NULL, -EINVAL,
	   0),
	UV("bytes_count_overflow", bytes, 1ULL << 62, COLLX_FP64, 1, U64MAX,
	   NULL,
	   -EINVAL, 0),
	UV("bytes_mult_overflow", bytes, 1ULL << 40, COLLX_FP32, 1ULL << 30,
	   U64MAX,
	   NULL, -EINVAL, 0),
	UV("bytes_mult_zero", bytes, 10, COLLX_FP32, 0, U64MAX, NULL, -EINVAL,
	   0),
	UV("bytes_bad_dtype", bytes, 10, 99, 1, U64MAX, NULL, -EOPNOTSUPP, 0),
	UV("range_ok", range, 0x10000, 4096, TASK_LIM, 0, NULL, 0, 0),
	UV("range_ends_at_limit", range, TASK_LIM - 4096, 4096, TASK_LIM, 0,
	   NULL, 0, 0),
	UV("range_past_limit", range, TASK_LIM - 4096, 4097, TASK_LIM, 0, NULL,
	   -EINVAL, 0),
	UV("range_wraps", range, U64MAX - 10, 100, U64MAX, 0, NULL, -EINVAL, 0),
	UV("range_empty", range, 0x10000, 0, TASK_LIM, 0, NULL, -EINVAL, 0),
	UV("ranks_ok", ranks, 3, 4, 64, 0, NULL, 0, 0),
	UV("ranks_single", ranks, 0, 1, 64, 0, NULL, 0, 0),
	UV("ranks_rank_eq_n", ranks, 4, 4, 64, 0, NULL, -EINVAL, 0),
	UV("ranks_zero", ranks, 0, 0, 64, 0, NULL, -EINVAL, 0),
	UV("ranks_over_max", ranks, 0, 65, 64, 0, NULL, -EINVAL, 0),
};

#undef UV
#undef U64MAX
#undef TASK_LIM

#endif /* _COLLX_CORE_UAPI_VECTORS_H */
