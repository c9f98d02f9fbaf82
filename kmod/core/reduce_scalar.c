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

/*
 * Buffers may have any alignment (a registered user buffer can start
 * anywhere): elements move as bits through memcpy, which the compiler turns
 * into plain loads and stores.
 */
static __always_inline u64 ld_bits(const u8 *p, size_t es)
{
	u8 b;
	u16 h;
	u32 w;
	u64 q;

	switch (es) {
	case 1:
		__builtin_memcpy(&b, p, 1);
		return b;
	case 2:
		__builtin_memcpy(&h, p, 2);
		return h;
	case 4:
		__builtin_memcpy(&w, p, 4);
		return w;
	default:
		__builtin_memcpy(&q, p, 8);
		return q;
	}
}

static __always_inline void st_bits(u8 *p, size_t es, u64 v)
{
	u8 b = (u8)v;
	u16 h = (u16)v;
	u32 w = (u32)v;

	switch (es) {
	case 1:
		__builtin_memcpy(p, &b, 1);
		break;
	case 2:
		__builtin_memcpy(p, &h, 2);
		break;
	case 4:
		__builtin_memcpy(p, &w, 4);
		break;
	default:
		__builtin_memcpy(p, &v, 8);
		break;
	}
}

/*
 * Integers: sum and product wrap (computed unsigned), max and min compare
 * in the element's own signedness, avg truncates toward zero.
 */
static __always_inline s64 sext(u64 v, unsigned int bits)
{
	if (bits == 8)
		return (s8)v;
	if (bits == 32)
		return (s32)v;
	return (s64)v;
}

static __always_inline u64 int_elem(u64 a, u64 b, int op, unsigned int bits,
				    bool sgn)
{
	u64 mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
	bool gt = sgn ? sext(a, bits) > sext(b, bits) : a > b;

	switch (op) {
	case COLLX_OP_SUM:
		return (a + b) & mask;
	case COLLX_OP_PROD:
		return (a * b) & mask;
	case COLLX_OP_MAX:
		return gt ? a : b;
	default:
		return gt ? b : a;
	}
}

static __always_inline u64 int_div(u64 a, u32 n, unsigned int bits, bool sgn)
{
	u64 mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;

	if (sgn)
		return (u64)(sext(a, bits) / (s64)n) & mask;
	return a / n;
}

/*
 * Floats: NaN results are canonical; max/min are IEEE 754-2019
 * maximum/minimum (NaN wins, -0 < +0).  Equal operands of max (min) give
 * the AND (OR) of their bits, which picks +0 (-0) for a pair of zeros.
 */
static __always_inline u64 f32_elem(u64 a, u64 b, int op)
{
	float x = f32_from((u32)a), y = f32_from((u32)b), r;

	switch (op) {
	case COLLX_OP_SUM:
	case COLLX_OP_PROD:
		r = op == COLLX_OP_SUM ? x + y : x * y;
		return r != r ? COLLX_F32_QNAN : f32_bits(r);
	case COLLX_OP_MAX:
		if (x > y)
			return a;
		if (x < y)
			return b;
		return x == y ? a & b : COLLX_F32_QNAN;
	default:
		if (x < y)
			return a;
		if (x > y)
			return b;
		return x == y ? a | b : COLLX_F32_QNAN;
	}
}

static __always_inline u64 f32_div(u64 a, u32 n)
{
	float r = f32_from((u32)a) / (float)n;

	return r != r ? COLLX_F32_QNAN : f32_bits(r);
}

static __always_inline u64 f64_elem(u64 a, u64 b, int op)
{
	double x = f64_from(a), y = f64_from(b), r;

	switch (op) {
	case COLLX_OP_SUM:
	case COLLX_OP_PROD:
		r = op == COLLX_OP_SUM ? x + y : x * y;
		return r != r ? COLLX_F64_QNAN : f64_bits(r);
	case COLLX_OP_MAX:
		if (x > y)
			return a;
		if (x < y)
			return b;
		return x == y ? a & b : COLLX_F64_QNAN;
	default:
		if (x < y)
			return a;
		if (x > y)
			return b;
		return x == y ? a | b : COLLX_F64_QNAN;
	}
}

static __always_inline u64 f64_div(u64 a, u32 n)
{
	double r = f64_from(a) / (double)n;

	return r != r ? COLLX_F64_QNAN : f64_bits(r);
}

/* 16-bit floats: widen to binary32, operate, round to nearest even. */
static __always_inline u64 half_widen(u64 h, bool bf)
{
	return bf ? __collx_bf16_to_f32_bits((u16)h) :
		    __collx_fp16_to_f32_bits((u16)h);
}

static __always_inline u64 half_narrow(u64 f, bool bf)
{
	return bf ? __collx_f32_bits_to_bf16((u32)f) :
		    __collx_f32_bits_to_fp16((u32)f);
}

static __always_inline u64 elem(enum collx_dtype dt, u64 a, u64 b, int op)
{
	bool bf;

	switch (dt) {
	case COLLX_INT8:
		return int_elem(a, b, op, 8, true);
	case COLLX_UINT8:
		return int_elem(a, b, op, 8, false);
	case COLLX_INT32:
		return int_elem(a, b, op, 32, true);
	case COLLX_UINT32:
		return int_elem(a, b, op, 32, false);
	case COLLX_INT64:
		return int_elem(a, b, op, 64, true);
	case COLLX_UINT64:
		return int_elem(a, b, op, 64, false);
	case COLLX_FP32:
		return f32_elem(a, b, op);
	case COLLX_FP64:
		return f64_elem(a, b, op);
	default:
		bf = dt == COLLX_BF16;
		return half_narrow(f32_elem(half_widen(a, bf),
					    half_widen(b, bf), op), bf);
	}
}

/* avg: floats a / (float)n in binary32 (fp64: binary64), ints truncate */
static __always_inline u64 elem_div(enum collx_dtype dt, u64 a, u32 n)
{
	switch (dt) {
	case COLLX_INT8:
		return int_div(a, n, 8, true);
	case COLLX_UINT8:
		return int_div(a, n, 8, false);
	case COLLX_INT32:
		return int_div(a, n, 32, true);
	case COLLX_UINT32:
		return int_div(a, n, 32, false);
	case COLLX_INT64:
		return int_div(a, n, 64, true);
	case COLLX_UINT64:
		return int_div(a, n, 64, false);
	case COLLX_FP32:
		return f32_div(a, n);
	case COLLX_FP64:
		return f64_div(a, n);
	default:
		return half_narrow(f32_div(half_widen(a, dt == COLLX_BF16), n),
				   dt == COLLX_BF16);
	}
}

static __always_inline size_t elem_size(enum collx_dtype dt)
{
	switch (dt) {
	case COLLX_INT8:
	case COLLX_UINT8:
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

static __always_inline void scalar_loop(enum collx_dtype dt, int op, u8 *d,
					const u8 *s, size_t n)
{
	size_t es = elem_size(dt), i;

	for (i = 0; i < n; i++, d += es, s += es)
		st_bits(d, es, elem(dt, ld_bits(d, es), ld_bits(s, es), op));
}

static __always_inline void scalar_scale(enum collx_dtype dt, u8 *d, size_t n,
					 u32 nranks)
{
	size_t es = elem_size(dt), i;

	for (i = 0; i < n; i++, d += es)
		st_bits(d, es, elem_div(dt, ld_bits(d, es), nranks));
}

/* One function per dtype and op: the loops above with constants. */
#define SCALAR_FN(DT, OP)						\
static void scalar_##DT##_##OP(void *d, const void *s, size_t n)	\
{									\
	scalar_loop(COLLX_##DT, COLLX_OP_##OP, d, s, n);		\
}

#define SCALAR_SCALE_FN(DT)						\
static void scalar_##DT##_scale(void *d, size_t n, u32 nranks)		\
{									\
	scalar_scale(COLLX_##DT, d, n, nranks);				\
}

SCALAR_FN(INT8, SUM)
SCALAR_FN(INT8, PROD)
SCALAR_FN(INT8, MAX)
SCALAR_FN(INT8, MIN)
SCALAR_FN(UINT8, SUM)
SCALAR_FN(UINT8, PROD)
SCALAR_FN(UINT8, MAX)
SCALAR_FN(UINT8, MIN)
SCALAR_FN(INT32, SUM)
SCALAR_FN(INT32, PROD)
SCALAR_FN(INT32, MAX)
SCALAR_FN(INT32, MIN)
SCALAR_FN(UINT32, SUM)
SCALAR_FN(UINT32, PROD)
SCALAR_FN(UINT32, MAX)
SCALAR_FN(UINT32, MIN)
SCALAR_FN(INT64, SUM)
SCALAR_FN(INT64, PROD)
SCALAR_FN(INT64, MAX)
SCALAR_FN(INT64, MIN)
SCALAR_FN(UINT64, SUM)
SCALAR_FN(UINT64, PROD)
SCALAR_FN(UINT64, MAX)
SCALAR_FN(UINT64, MIN)
SCALAR_FN(FP16, SUM)
SCALAR_FN(FP16, PROD)
SCALAR_FN(FP16, MAX)
SCALAR_FN(FP16, MIN)
SCALAR_FN(FP32, SUM)
SCALAR_FN(FP32, PROD)
SCALAR_FN(FP32, MAX)
SCALAR_FN(FP32, MIN)
SCALAR_FN(FP64, SUM)
SCALAR_FN(FP64, PROD)
SCALAR_FN(FP64, MAX)
SCALAR_FN(FP64, MIN)
SCALAR_FN(BF16, SUM)
SCALAR_FN(BF16, PROD)
SCALAR_FN(BF16, MAX)
SCALAR_FN(BF16, MIN)

SCALAR_SCALE_FN(INT8)
SCALAR_SCALE_FN(UINT8)
SCALAR_SCALE_FN(INT32)
SCALAR_SCALE_FN(UINT32)
SCALAR_SCALE_FN(INT64)
SCALAR_SCALE_FN(UINT64)
SCALAR_SCALE_FN(FP16)
SCALAR_SCALE_FN(FP32)
SCALAR_SCALE_FN(FP64)
SCALAR_SCALE_FN(BF16)

#define OPS4(DT)							\
	{ scalar_##DT##_SUM, scalar_##DT##_PROD, scalar_##DT##_MAX,	\
	  scalar_##DT##_MIN }

#define SCALE(DT)	scalar_##DT##_scale

const struct collx_reduce_ops collx_reduce_scalar_ops = {
	.name = "scalar",
	.reduce = {
		[COLLX_INT8] = OPS4(INT8),
		[COLLX_UINT8] = OPS4(UINT8),
		[COLLX_INT32] = OPS4(INT32),
		[COLLX_UINT32] = OPS4(UINT32),
		[COLLX_INT64] = OPS4(INT64),
		[COLLX_UINT64] = OPS4(UINT64),
		[COLLX_FP16] = OPS4(FP16),
		[COLLX_FP32] = OPS4(FP32),
		[COLLX_FP64] = OPS4(FP64),
		[COLLX_BF16] = OPS4(BF16),
	},
	.scale = {
		[COLLX_INT8] = SCALE(INT8),
		[COLLX_UINT8] = SCALE(UINT8),
		[COLLX_INT32] = SCALE(INT32),
		[COLLX_UINT32] = SCALE(UINT32),
		[COLLX_INT64] = SCALE(INT64),
		[COLLX_UINT64] = SCALE(UINT64),
		[COLLX_FP16] = SCALE(FP16),
		[COLLX_FP32] = SCALE(FP32),
		[COLLX_FP64] = SCALE(FP64),
		[COLLX_BF16] = SCALE(BF16),
	},
};
