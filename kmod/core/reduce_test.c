// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite collx_reduce: known answers for every dtype and op on every
 * implementation the CPU has, each SIMD implementation against scalar on
 * random data and on every pair of FP8 values, FPU section boundaries,
 * every fp16/bf16 value through binary32 and back, all 256 values of each
 * FP8 format against the exact table.  No float code here: values are
 * bit patterns.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "reduce.h"
#include "reduce_vectors.h"

/* Elements per known-answer buffer: vector loops plus a scalar tail. */
#define COLLX_TEST_N	37

static u64 get_bits(const void *buf, size_t esize, size_t i)
{
	u64 v = 0;

	memcpy(&v, (const u8 *)buf + i * esize, esize);	/* little endian */
	return v;
}

static void put_bits(void *buf, size_t esize, size_t i, u64 v)
{
	memcpy((u8 *)buf + i * esize, &v, esize);
}

static void collx_vec_desc(const struct collx_reduce_vec *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(collx_vec, collx_reduce_vectors, collx_vec_desc);

static void collx_reduce_known_answer(struct kunit *test)
{
	const struct collx_reduce_vec *v = test->param_value;
	size_t es = collx_dtype_size(v->dtype), i;
	enum collx_reduce_impl impl;
	u8 *d, *s;
	int ret;

	d = kunit_kzalloc(test, COLLX_TEST_N * es, GFP_KERNEL);
	s = kunit_kzalloc(test, COLLX_TEST_N * es, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, d);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);

	for (impl = COLLX_REDUCE_SCALAR; impl < COLLX_REDUCE_IMPL_COUNT;
	     impl++) {
		if (!collx_reduce_impl_available(impl))
			continue;
		for (i = 0; i < COLLX_TEST_N; i++) {
			put_bits(d, es, i, v->a);
			put_bits(s, es, i, v->b);
		}
		if (v->op == COLLX_OP_AVG)
			ret = collx_reduce_scale_avg_with(impl, d, COLLX_TEST_N,
							  v->dtype, (u32)v->b);
		else
			ret = collx_reduce_with(impl, d, s, COLLX_TEST_N,
						v->dtype, v->op);
		KUNIT_ASSERT_EQ(test, ret, 0);
		for (i = 0; i < COLLX_TEST_N; i++)
			KUNIT_EXPECT_EQ_MSG(test, get_bits(d, es, i), v->expect,
					    "%s element %zu",
					    collx_reduce_impl_name(impl), i);
	}
}

/* Every dtype x op, for the differential test. */
struct collx_dt_op {
	enum collx_dtype dtype;
	enum collx_redop op;
};

static const struct collx_dt_op collx_dt_ops[] = {
	{ COLLX_INT8, COLLX_OP_SUM }, { COLLX_INT8, COLLX_OP_PROD },
	{ COLLX_INT8, COLLX_OP_MAX }, { COLLX_INT8, COLLX_OP_MIN },
	{ COLLX_INT8, COLLX_OP_AVG },
	{ COLLX_UINT8, COLLX_OP_SUM }, { COLLX_UINT8, COLLX_OP_PROD },
	{ COLLX_UINT8, COLLX_OP_MAX }, { COLLX_UINT8, COLLX_OP_MIN },
	{ COLLX_UINT8, COLLX_OP_AVG },
	{ COLLX_INT32, COLLX_OP_SUM }, { COLLX_INT32, COLLX_OP_PROD },
	{ COLLX_INT32, COLLX_OP_MAX }, { COLLX_INT32, COLLX_OP_MIN },
	{ COLLX_INT32, COLLX_OP_AVG },
	{ COLLX_UINT32, COLLX_OP_SUM }, { COLLX_UINT32, COLLX_OP_PROD },
	{ COLLX_UINT32, COLLX_OP_MAX }, { COLLX_UINT32, COLLX_OP_MIN },
	{ COLLX_UINT32, COLLX_OP_AVG },
	{ COLLX_INT64, COLLX_OP_SUM }, { COLLX_INT64, COLLX_OP_PROD },
	{ COLLX_INT64, COLLX_OP_MAX }, { COLLX_INT64, COLLX_OP_MIN },
	{ COLLX_INT64, COLLX_OP_AVG },
	{ COLLX_UINT64, COLLX_OP_SUM }, { COLLX_UINT64, COLLX_OP_PROD },
	{ COLLX_UINT64, COLLX_OP_MAX }, { COLLX_UINT64, COLLX_OP_MIN },
	{ COLLX_UINT64, COLLX_OP_AVG },
	{ COLLX_FP16, COLLX_OP_SUM }, { COLLX_FP16, COLLX_OP_PROD },
	{ COLLX_FP16, COLLX_OP_MAX }, { COLLX_FP16, COLLX_OP_MIN },
	{ COLLX_FP16, COLLX_OP_AVG },
	{ COLLX_FP32, COLLX_OP_SUM }, { COLLX_FP32, COLLX_OP_PROD },
	{ COLLX_FP32, COLLX_OP_MAX }, { COLLX_FP32, COLLX_OP_MIN },
	{ COLLX_FP32, COLLX_OP_AVG },
	{ COLLX_FP64, COLLX_OP_SUM }, { COLLX_FP64, COLLX_OP_PROD },
	{ COLLX_FP64, COLLX_OP_MAX }, { COLLX_FP64, COLLX_OP_MIN },
	{ COLLX_FP64, COLLX_OP_AVG },
	{ COLLX_BF16, COLLX_OP_SUM }, { COLLX_BF16, COLLX_OP_PROD },
	{ COLLX_BF16, COLLX_OP_MAX }, { COLLX_BF16, COLLX_OP_MIN },
	{ COLLX_BF16, COLLX_OP_AVG },
	{ COLLX_FP8_E4M3, COLLX_OP_SUM }, { COLLX_FP8_E4M3, COLLX_OP_PROD },
	{ COLLX_FP8_E4M3, COLLX_OP_MAX }, { COLLX_FP8_E4M3, COLLX_OP_MIN },
	{ COLLX_FP8_E4M3, COLLX_OP_AVG },
	{ COLLX_FP8_E5M2, COLLX_OP_SUM }, { COLLX_FP8_E5M2, COLLX_OP_PROD },
	{ COLLX_FP8_E5M2, COLLX_OP_MAX }, { COLLX_FP8_E5M2, COLLX_OP_MIN },
	{ COLLX_FP8_E5M2, COLLX_OP_AVG },
};

static void collx_dt_op_desc(const struct collx_dt_op *c, char *desc)
{
	static const char *const dt[COLLX_DTYPE_COUNT] = {
		"int8", "uint8", "int32", "uint32", "int64", "uint64",
		"fp16", "fp32", "fp64", "bf16", "e4m3", "e5m2",
	};
	static const char *const op[] = { "sum", "prod", "max", "min", "avg" };

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s_%s", dt[c->dtype], op[c->op]);
}

KUNIT_ARRAY_PARAM(collx_dt_op, collx_dt_ops, collx_dt_op_desc);

static u64 xorshift(u64 *state)
{
	u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* Random bits, a third of the time one of @sp. */
static u64 test_value(u64 *rng, const u64 *sp, size_t nsp)
{
	u64 r = xorshift(rng);

	return r % 3 ? r : sp[r % nsp];
}

/* The whole op: reduce, then for avg the final scaling. */
static int reduce_avg(enum collx_reduce_impl impl, void *d, const void *s,
		      size_t n, const struct collx_dt_op *c, u32 nranks)
{
	int ret = collx_reduce_with(impl, d, s, n, c->dtype, c->op);

	if (ret || c->op != COLLX_OP_AVG)
		return ret;
	return collx_reduce_scale_avg_with(impl, d, n, c->dtype, nranks);
}

/* The SIMD implementations, each held to the scalar bits. */
static const enum collx_reduce_impl collx_simd_impls[] = {
	COLLX_REDUCE_AVX2, COLLX_REDUCE_AVX512, COLLX_REDUCE_AVX512_BF16,
	COLLX_REDUCE_NEON,
};

/*
 * Random bits, a third of them specials (NaN, inf, zeros, subnormals and
 * their neighbours): every SIMD implementation the CPU has must give the
 * scalar result bit for bit, on lengths and offsets that exercise every
 * loop and tail.
 */
static void collx_reduce_simd_matches_scalar(struct kunit *test)
{
	static const u64 specials[] = {
		0, ~0ULL, 0x8000000000000000ULL, 0x7ff0000000000000ULL,
		0x7ff8000000000001ULL, 0x7f800000, 0xff800001, 0x7fc00000,
		0x7c00, 0xfc01, 0x7f80, 0xff81, 0x8000, 0x80000000, 1, 0x3ff,
		0x7f, 0xff, 0x7e, 0x7d, 0x80, 0x08,
	};
	const struct collx_dt_op *c = test->param_value;
	size_t es = collx_dtype_size(c->dtype), n, i, off, k;
	size_t nsp = ARRAY_SIZE(specials);
	u64 rng = 0x2545f4914f6cdd1dULL + c->dtype * 31 + c->op;
	enum collx_reduce_impl impl;
	u8 *a, *s, *x, *y;
	unsigned int ran = 0;
	u32 nranks;
	int t;

	a = kunit_kmalloc(test, 4096 * es + 8, GFP_KERNEL);
	s = kunit_kmalloc(test, 4096 * es + 8, GFP_KERNEL);
	x = kunit_kmalloc(test, 4096 * es + 8, GFP_KERNEL);
	y = kunit_kmalloc(test, 4096 * es + 8, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, a && s && x && y);

	for (k = 0; k < ARRAY_SIZE(collx_simd_impls); k++) {
		impl = collx_simd_impls[k];
		if (!collx_reduce_impl_available(impl))
			continue;
		ran++;
		for (t = 0; t < 24; t++) {
			n = t < 20 ? xorshift(&rng) % 200 : 4096;
			off = xorshift(&rng) % 8;
			nranks = 1 + xorshift(&rng) % 7;
			for (i = 0; i < n; i++) {
				put_bits(a, es, i,
					 test_value(&rng, specials, nsp));
				put_bits(s + off, es, i,
					 test_value(&rng, specials, nsp));
			}
			memcpy(x + off, a, n * es);
			memcpy(y + off, a, n * es);
			KUNIT_ASSERT_EQ(test,
					reduce_avg(COLLX_REDUCE_SCALAR, x + off,
						   s + off, n, c, nranks), 0);
			KUNIT_ASSERT_EQ(test, reduce_avg(impl, y + off,
							 s + off, n, c,
							 nranks), 0);
			KUNIT_EXPECT_EQ_MSG(test,
					    memcmp(x + off, y + off, n * es), 0,
					    "%s trial %d, %zu elements",
					    collx_reduce_impl_name(impl), t,
					    n);
		}
	}
	if (!ran)
		kunit_skip(test, "no SIMD implementation on this CPU");
}

static void fp8_pairs_one(struct kunit *test, enum collx_reduce_impl impl,
			  const u8 *a, const u8 *b, const u8 *want, u8 *y,
			  enum collx_dtype dt, int op)
{
	if (!collx_reduce_impl_available(impl))
		return;
	memcpy(y, a, 65536);
	KUNIT_ASSERT_EQ(test, collx_reduce_with(impl, y, b, 65536, dt, op), 0);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(want, y, 65536), 0,
			    "%s dtype %d op %d", collx_reduce_impl_name(impl),
			    dt, op);
}

/* Every pair of FP8 values, every op: each SIMD one gives scalar's bits. */
static void collx_reduce_fp8_pairs(struct kunit *test)
{
	enum collx_dtype dts[] = { COLLX_FP8_E4M3, COLLX_FP8_E5M2 };
	u8 *a, *b, *x, *y;
	size_t i, k, d;
	int op, ret;

	a = kunit_kmalloc(test, 65536, GFP_KERNEL);
	b = kunit_kmalloc(test, 65536, GFP_KERNEL);
	x = kunit_kmalloc(test, 65536, GFP_KERNEL);
	y = kunit_kmalloc(test, 65536, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, a && b && x && y);
	for (i = 0; i < 65536; i++) {
		a[i] = i & 0xff;
		b[i] = i >> 8;
	}
	for (d = 0; d < ARRAY_SIZE(dts); d++) {
		for (op = COLLX_OP_SUM; op <= COLLX_OP_MIN; op++) {
			memcpy(x, a, 65536);
			ret = collx_reduce_with(COLLX_REDUCE_SCALAR, x, b,
						65536, dts[d], op);
			KUNIT_ASSERT_EQ(test, ret, 0);
			for (k = 0; k < ARRAY_SIZE(collx_simd_impls); k++)
				fp8_pairs_one(test, collx_simd_impls[k], a, b,
					      x, y, dts[d], op);
		}
	}
}

/*
 * All 256 values of each FP8 format: widening gives the exact table,
 * narrowing the table entry gives the value back (NaNs quieted).
 */
static void collx_reduce_fp8_all_values(struct kunit *test)
{
	unsigned int c, bad_e4 = 0, bad_e5 = 0;
	u8 e5;

	for (c = 0; c < 256; c++) {
		bad_e4 += collx_e4m3_to_f32_bits(c) != collx_e4m3_f32_table[c];
		bad_e4 += collx_f32_bits_to_e4m3(collx_e4m3_f32_table[c]) != c;
		e5 = (c & 0x7f) > 0x7c ? c | 2 : c;	/* quieted NaN */
		bad_e5 += collx_e5m2_to_f32_bits(c) != collx_e5m2_f32_table[c];
		bad_e5 += collx_f32_bits_to_e5m2(collx_e5m2_f32_table[c]) != e5;
	}
	KUNIT_EXPECT_EQ(test, bad_e4, 0);
	KUNIT_EXPECT_EQ(test, bad_e5, 0);
	/* saturation, the tie at 464, overflow to inf, and NaN */
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e4m3(0x7f800000), 0x7e);
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e4m3(0xc3e80000), 0xfe);
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e4m3(0x7fc00000), 0x7f);
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e5m2(0x47700000), 0x7c);
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e5m2(0x476fffff), 0x7b);
	KUNIT_EXPECT_EQ(test, collx_f32_bits_to_e5m2(0x37800000), 0x01);
}

/* Several FPU sections in one call: every element still reduced once. */
static void collx_reduce_fpu_sections(struct kunit *test)
{
	size_t n = 3 * COLLX_REDUCE_FPU_BYTES / 4 + 5, i;
	u32 *d, *s;
	bool ok = true;

	d = kunit_kmalloc_array(test, n, 4, GFP_KERNEL);
	s = kunit_kmalloc_array(test, n, 4, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, d && s);
	for (i = 0; i < n; i++) {
		d[i] = 0x3f800000;	/* 1.0f */
		s[i] = 0x40000000;	/* 2.0f */
	}
	KUNIT_ASSERT_EQ(test, collx_reduce(d, s, n, COLLX_FP32, COLLX_OP_SUM),
			0);
	KUNIT_ASSERT_EQ(test, collx_reduce_scale_avg(d, n, COLLX_FP32, 2), 0);
	for (i = 0; i < n; i++)
		ok &= d[i] == 0x3fc00000;	/* 1.5f */
	KUNIT_EXPECT_TRUE(test, ok);
}

static void collx_reduce_fp16_bf16_round_trip(struct kunit *test)
{
	unsigned int bad16 = 0, badbf = 0;
	u32 h, f;

	for (h = 0; h < 0x10000; h++) {
		bool nan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
		bool nanbf = (h & 0x7f80) == 0x7f80 && (h & 0x7f);

		f = collx_fp16_to_f32_bits(h);
		bad16 += collx_f32_bits_to_fp16(f) != (nan16 ? (h | 0x200) : h);
		f = collx_bf16_to_f32_bits(h);
		badbf += f != h << 16;
		badbf += collx_f32_bits_to_bf16(f) != (nanbf ? (h | 0x40) : h);
	}
	KUNIT_EXPECT_EQ(test, bad16, 0);
	KUNIT_EXPECT_EQ(test, badbf, 0);
	/* a few exact widenings: 1.0, -2.0, smallest subnormal, inf */
	KUNIT_EXPECT_EQ(test, collx_fp16_to_f32_bits(0x3c00), 0x3f800000);
	KUNIT_EXPECT_EQ(test, collx_fp16_to_f32_bits(0xc000), 0xc0000000);
	KUNIT_EXPECT_EQ(test, collx_fp16_to_f32_bits(0x0001), 0x33800000);
	KUNIT_EXPECT_EQ(test, collx_fp16_to_f32_bits(0x7c00), 0x7f800000);
}

static void collx_reduce_bad_args(struct kunit *test)
{
	u32 buf[4] = { };

	KUNIT_EXPECT_EQ(test, collx_reduce(buf, buf, 4, COLLX_DTYPE_COUNT,
					   COLLX_OP_SUM), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_reduce(buf, buf, 4, COLLX_INT32,
					   COLLX_OP_COUNT), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_reduce(buf, buf, SIZE_MAX / 4, COLLX_FP64,
					   COLLX_OP_SUM), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_reduce(NULL, NULL, 0, COLLX_FP32,
					   COLLX_OP_SUM), 0);
	KUNIT_EXPECT_EQ(test, collx_reduce_scale_avg(buf, 4, COLLX_INT32, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			collx_reduce_with(COLLX_REDUCE_IMPL_COUNT, buf, buf, 4,
					  COLLX_INT32, COLLX_OP_SUM),
			-EINVAL);
	KUNIT_EXPECT_TRUE(test,
			  collx_reduce_impl_available(COLLX_REDUCE_SCALAR));
	kunit_info(test, "auto implementation: %s\n",
		   collx_reduce_impl_name(COLLX_REDUCE_AUTO));
}

static struct kunit_case collx_reduce_cases[] = {
	KUNIT_CASE_PARAM(collx_reduce_known_answer, collx_vec_gen_params),
	KUNIT_CASE_PARAM(collx_reduce_simd_matches_scalar,
			 collx_dt_op_gen_params),
	KUNIT_CASE(collx_reduce_fp8_pairs),
	KUNIT_CASE(collx_reduce_fp8_all_values),
	KUNIT_CASE(collx_reduce_fpu_sections),
	KUNIT_CASE(collx_reduce_fp16_bf16_round_trip),
	KUNIT_CASE(collx_reduce_bad_args),
	{}
};

static struct kunit_suite collx_reduce_suite = {
	.name = "collx_reduce",
	.test_cases = collx_reduce_cases,
};

kunit_test_suite(collx_reduce_suite);

MODULE_DESCRIPTION("KUnit tests for the collx core");
MODULE_LICENSE("GPL");
