// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the reduction kernels: known answers, every fp16/bf16
 * value converted both ways, conversions against the compiler's _Float16
 * (and the CPU's F16C on x86), all 256 values of each FP8 format both
 * ways, every pair of FP8 values through every op, and randomized
 * differential tests of every SIMD implementation the CPU has against
 * scalar against a wider-precision reference (long double; _Float128 for
 * fp64, whose 113-bit significand rules out double rounding).  Builds for
 * x86-64 and, with the cross compiler, for arm64 (run under qemu-user).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "unit.h"
#include "../../kmod/core/reduce.h"
#include "../../kmod/core/reduce_vectors.h"

#define NDT	COLLX_DTYPE_COUNT

static const char *const dt_name[NDT] = {
	"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"fp16", "fp32", "fp64", "bf16", "e4m3", "e5m2",
};

static const char *const op_name[COLLX_OP_COUNT] = {
	"sum", "prod", "max", "min", "avg",
};

/* the SIMD implementations this CPU runs, each held to the scalar bits */
static int simd[COLLX_REDUCE_IMPL_COUNT], nsimd;

static float f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f32b(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static double f64(uint64_t u)
{
	double f;

	memcpy(&f, &u, 8);
	return f;
}

static uint64_t f64b(double f)
{
	uint64_t u;

	memcpy(&u, &f, 8);
	return u;
}

static uint16_t f16b(_Float16 h)
{
	uint16_t u;

	memcpy(&u, &h, 2);
	return u;
}

static _Float16 f16(uint16_t u)
{
	_Float16 h;

	memcpy(&h, &u, 2);
	return h;
}

/* Independent binary32 -> bfloat16, round to nearest even, by distances. */
static uint16_t ref_bf16(float x)
{
	uint32_t u = f32b(x);
	uint16_t lo = u >> 16, hi;
	long double dl, dh;

	if (isnan(x))
		return 0x7fc0;
	if ((u & 0xffff) == 0)
		return lo;
	hi = lo + 1;	/* next bf16 away from zero */
	dl = fabsl((long double)x - (long double)f32((uint32_t)lo << 16));
	if ((hi & 0x7fff) == 0x7f80)	/* rounding past the top: as if 2^128 */
		dh = fabsl(ldexpl(1.0L, 128) - fabsl((long double)x));
	else
		dh = fabsl((long double)f32((uint32_t)hi << 16) - (long double)x);
	if (dl < dh)
		return lo;
	if (dh < dl)
		return hi;
	return (lo & 1) ? hi : lo;
}

/* ---- FP8 from the OCP definition, independent of the code under test ---- */

/* magnitudes of codes 0..0x7f; E5M2's 0x7c is inf, E4M3's 0x7f unused */
static long double fp8_mags[2][128];

static void fp8_init(void)
{
	int e5, c;

	for (e5 = 0; e5 < 2; e5++) {
		int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7;

		for (c = 0; c < 128; c++) {
			int e = c >> mb, m = c & ((1 << mb) - 1);

			fp8_mags[e5][c] = !e ? ldexpl(m, 1 - bias - mb) :
				ldexpl((1 << mb) + m, e - bias - mb);
		}
	}
}

static bool fp8_isnan(uint8_t c, bool e5)
{
	return e5 ? (c & 0x7f) > 0x7c : (c & 0x7f) == 0x7f;
}

static long double fp8_val(uint8_t c, bool e5)
{
	long double v = fp8_mags[e5][c & 0x7f];

	if (fp8_isnan(c, e5))
		return NAN;
	if (e5 && (c & 0x7f) == 0x7c)
		v = INFINITY;
	return c & 0x80 ? -v : v;
}

/*
 * Nearest FP8 to x, ties to the even code: E4M3 saturates at 448 (and
 * infinities to it), E5M2 rounds past its largest finite value as if 2^16
 * (infinity, even) were next.
 */
static uint8_t ref_fp8(long double x, bool e5)
{
	unsigned int top = e5 ? 0x7b : 0x7e, lo = 0, hi = top, mid;
	uint8_t sign = signbit(x) ? 0x80 : 0;
	long double a = fabsl(x), dl, dh;

	if (isnan(x))
		return e5 ? 0x7e : 0x7f;
	if (a >= fp8_mags[e5][top]) {
		if (!e5)
			return sign | top;
		if (isinf(a))
			return sign | 0x7c;
		dl = a - fp8_mags[e5][top];
		dh = 65536.0L - a;
		return sign | (dl < dh ? top : 0x7c);	/* a tie goes to 0x7c */
	}
	while (hi - lo > 1) {	/* mags[lo] <= a < mags[hi] */
		mid = (lo + hi) / 2;
		if (fp8_mags[e5][mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	dl = a - fp8_mags[e5][lo];
	dh = fp8_mags[e5][hi] - a;
	if (dl < dh)
		return sign | lo;
	if (dh < dl)
		return sign | hi;
	return sign | ((lo & 1) ? hi : lo);
}

/* One FP8 op, by the definition: exact in long double, rounded once. */
static uint64_t ref_fp8_elem(uint8_t a, uint8_t b, int op, bool e5)
{
	long double x = fp8_val(a, e5), y = fp8_val(b, e5), r;
	uint8_t qnan = e5 ? 0x7e : 0x7f;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		if (isnan(x) || isnan(y))
			return qnan;
		if (x == y)
			return op == COLLX_OP_MAX ? (a & b) : (a | b);
		return (x > y) == (op == COLLX_OP_MAX) ? a : b;
	}
	r = op == COLLX_OP_SUM ? x + y : x * y;
	return isnan(r) ? qnan : ref_fp8(r, e5);
}

/* ---- element access as bits ---- */

static uint64_t get_bits(const void *buf, size_t esize, size_t i)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)buf + i * esize, esize);
	return v;
}

static void put_bits(void *buf, size_t esize, size_t i, uint64_t v)
{
	memcpy((char *)buf + i * esize, &v, esize);
}

/* ---- reference: one element, from the definitions ---- */

static int fcmp_kind(long double a, long double b)
{
	return a > b ? 1 : a < b ? -1 : 0;
}

static uint64_t ref_f32(uint32_t a, uint32_t b, int op)
{
	float x = f32(a), y = f32(b);
	long double r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		if (isnan(x) || isnan(y))
			return 0x7fc00000;
		if (x == y)
			return op == COLLX_OP_MAX ? (a & b) : (a | b);
		return (fcmp_kind(x, y) > 0) == (op == COLLX_OP_MAX) ? a : b;
	}
	r = op == COLLX_OP_SUM ? (long double)x + y : (long double)x * y;
	if (isnan(r))
		return 0x7fc00000;
	return f32b((float)r);
}

static uint64_t ref_f64(uint64_t a, uint64_t b, int op)
{
	double x = f64(a), y = f64(b);
	_Float128 r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN) {
		if (isnan(x) || isnan(y))
			return 0x7ff8000000000000ULL;
		if (x == y)
			return op == COLLX_OP_MAX ? (a & b) : (a | b);
		return (x > y) == (op == COLLX_OP_MAX) ? a : b;
	}
	r = op == COLLX_OP_SUM ? (_Float128)x + y : (_Float128)x * y;
	if (r != r)
		return 0x7ff8000000000000ULL;
	return f64b((double)r);
}

/* fp16 and bf16: correctly rounded in the narrow format. */
static uint64_t ref_half(uint16_t a, uint16_t b, int op, bool bf)
{
	float x = bf ? f32((uint32_t)a << 16) : (float)f16(a);
	float y = bf ? f32((uint32_t)b << 16) : (float)f16(b);
	uint64_t r32 = ref_f32(f32b(x), f32b(y), op);
	long double r;

	if (op == COLLX_OP_MAX || op == COLLX_OP_MIN || isnan(f32(r32)))
		return bf ? ref_bf16(f32(r32)) : f16b((_Float16)f32(r32));
	r = op == COLLX_OP_SUM ? (long double)x + y : (long double)x * y;
	/* fp16: long double -> _Float16 directly; bf16 via binary32 */
	return bf ? ref_bf16((float)r) : f16b((_Float16)r);
}

static uint64_t sext(uint64_t v, int bits)
{
	return (uint64_t)((int64_t)(v << (64 - bits)) >> (64 - bits));
}

static uint64_t ref_int(uint64_t a, uint64_t b, int op, int bits, bool sgn)
{
	uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
	int64_t sa = (int64_t)sext(a, bits), sb = (int64_t)sext(b, bits);
	bool gt = sgn ? sa > sb : a > b;

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

static uint64_t ref_elem(int dt, int op, uint64_t a, uint64_t b)
{
	if (op == COLLX_OP_AVG)
		op = COLLX_OP_SUM;
	switch (dt) {
	case COLLX_INT8: return ref_int(a, b, op, 8, true);
	case COLLX_UINT8: return ref_int(a, b, op, 8, false);
	case COLLX_INT32: return ref_int(a, b, op, 32, true);
	case COLLX_UINT32: return ref_int(a, b, op, 32, false);
	case COLLX_INT64: return ref_int(a, b, op, 64, true);
	case COLLX_UINT64: return ref_int(a, b, op, 64, false);
	case COLLX_FP16: return ref_half(a, b, op, false);
	case COLLX_BF16: return ref_half(a, b, op, true);
	case COLLX_FP32: return ref_f32(a, b, op);
	case COLLX_FP64: return ref_f64(a, b, op);
	case COLLX_FP8_E4M3: return ref_fp8_elem(a, b, op, false);
	default: return ref_fp8_elem(a, b, op, true);
	}
}

/* avg: integer truncating division; floats a / (float)n (fp64: (double)n) */
static uint64_t ref_scale(int dt, uint64_t a, uint32_t n)
{
	long double q;
	float x;

	switch (dt) {
	case COLLX_INT8: return (uint8_t)((int64_t)(int8_t)a / n);
	case COLLX_UINT8: return (uint8_t)(a / n);
	case COLLX_INT32: return (uint32_t)((int64_t)(int32_t)a / (int64_t)n);
	case COLLX_UINT32: return (uint32_t)(a / n);
	case COLLX_INT64: return (uint64_t)((int64_t)a / (int64_t)n);
	case COLLX_UINT64: return a / n;
	case COLLX_FP64: {
		_Float128 r = (_Float128)f64(a) / (double)n;

		return r != r ? 0x7ff8000000000000ULL : f64b((double)r);
	}
	case COLLX_FP8_E4M3:
	case COLLX_FP8_E5M2: {
		bool e5 = dt == COLLX_FP8_E5M2;

		q = fp8_val(a, e5) / (float)n;
		return isnan(q) ? (e5 ? 0x7e : 0x7f) : ref_fp8((float)q, e5);
	}
	default:
		break;
	}
	x = dt == COLLX_FP32 ? f32(a) : dt == COLLX_BF16 ?
		f32((uint32_t)a << 16) : (float)f16(a);
	q = (long double)x / (float)n;
	if (isnan(q))
		return dt == COLLX_FP32 ? 0x7fc00000 : dt == COLLX_BF16 ?
			0x7fc0 : 0x7e00;
	x = (float)q;	/* the defined fp32 quotient */
	if (dt == COLLX_FP32)
		return f32b(x);
	return dt == COLLX_BF16 ? ref_bf16(x) : f16b((_Float16)x);
}

/* ---- random values with a bias toward the interesting ones ---- */

static uint64_t rand_val(int dt)
{
	static const uint64_t sp32[] = {
		0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
		0xffc12345, 1, 0x807fffff, 0x00800000, 0x7f7fffff, 0x3f800000,
		0xbf800000, 0x33800000,
	};
	static const uint64_t sp64[] = {
		0, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
		0x7ff8000000000000, 0x7ff0000000000001, 1, 0x800fffffffffffff,
		0x7fefffffffffffff, 0x3ff0000000000000,
	};
	static const uint64_t sp16[] = {
		0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfd55, 1, 0x83ff,
		0x0400, 0x7bff, 0x3c00, 0xbc00,
	};
	static const uint64_t spb[] = {
		0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffa5, 1, 0x807f,
		0x0080, 0x7f7f, 0x3f80, 0xbf80,
	};
	static const uint64_t sp8[] = {
		0, 0x80, 0x7f, 0xff, 0x7e, 0xfe, 0x7c, 0xfc, 0x7b, 1, 0x81,
		0x07, 0x08, 0x38,
	};
	uint64_t r = unit_rand();
	bool special = (r & 7) == 0;

	r = unit_rand();
	switch (dt) {
	case COLLX_FP32:
		if (special)
			return sp32[r % ARRAY_SIZE(sp32)];
		/* mostly moderate exponents so sums round, not just absorb */
		return (r & 3) ? ((r >> 8) & 0x807fffff) | (0x3c000000 + ((r & 0x3f) << 23)) :
			(uint32_t)r;
	case COLLX_FP64:
		if (special)
			return sp64[r % ARRAY_SIZE(sp64)];
		return (r & 3) ? ((r >> 8) & 0x800fffffffffffffULL) |
			((0x3c0ULL + ((r >> 2) & 0x7f)) << 52) : r;
	case COLLX_FP16:
		return special ? sp16[r % ARRAY_SIZE(sp16)] : (uint16_t)r;
	case COLLX_BF16:
		return special ? spb[r % ARRAY_SIZE(spb)] : (uint16_t)r;
	case COLLX_FP8_E4M3:
	case COLLX_FP8_E5M2:
		return special ? sp8[r % ARRAY_SIZE(sp8)] : (uint8_t)r;
	default:
		return r;	/* truncated to the element size by put_bits */
	}
}

/* ---- known answers ---- */

static void test_vectors(void)
{
	/* 37 elements: two vector loops and a scalar tail for every type */
	enum { N = 37 };
	uint64_t d[N], s[N];
	size_t v, i;
	int impl;

	for (v = 0; v < ARRAY_SIZE(collx_reduce_vectors); v++) {
		const struct collx_reduce_vec *c = &collx_reduce_vectors[v];
		size_t es = collx_dtype_size(c->dtype);

		for (impl = COLLX_REDUCE_SCALAR; impl < COLLX_REDUCE_IMPL_COUNT; impl++) {
			bool ok = true;
			int ret;

			if (!collx_reduce_impl_available(impl))
				continue;
			for (i = 0; i < N; i++) {
				put_bits(d, es, i, c->a);
				put_bits(s, es, i, c->b);
			}
			if (c->op == COLLX_OP_AVG)
				ret = collx_reduce_scale_avg_with(impl, d, N, c->dtype, c->b);
			else
				ret = collx_reduce_with(impl, d, s, N, c->dtype, c->op);
			for (i = 0; i < N; i++)
				ok &= get_bits(d, es, i) == c->expect;
			/* the independent reference agrees with the table */
			if (c->op == COLLX_OP_AVG)
				ok &= ref_scale(c->dtype, c->a, c->b) == c->expect;
			else
				ok &= ref_elem(c->dtype, c->op, c->a, c->b) == c->expect;
			if (!unit_ok(!ret && ok, "reduce.vector.%s.%s", c->name,
				     collx_reduce_impl_name(impl)))
				unit_diag("got 0x%llx want 0x%llx (ret %d)",
					  (unsigned long long)get_bits(d, es, 0),
					  (unsigned long long)c->expect, ret);
		}
	}
}

/* ---- conversions ---- */

/* The CPU's own fp16 conversions: F16C on x86, FCVT on arm64. */
#ifdef __x86_64__
#define HAVE_HW_FP16()	__builtin_cpu_supports("f16c")

__attribute__((target("f16c")))
static uint32_t hw_h2f(uint16_t h)
{
	return f32b(_cvtsh_ss(h));
}

__attribute__((target("f16c")))
static uint16_t hw_f2h(uint32_t f)
{
	return _cvtss_sh(f32(f), 0);
}
#else
#define HAVE_HW_FP16()	true

static uint32_t hw_h2f(uint16_t h)
{
	return f32b((float)f16(h));
}

static uint16_t hw_f2h(uint32_t f)
{
	/* FCVT keeps NaN payloads as F16C does; _Float16 compiles to it */
	return f16b((_Float16)f32(f));
}
#endif

static void test_fp16_exhaustive(void)
{
	bool hw = HAVE_HW_FP16();
	unsigned int bad_ref = 0, bad_rt = 0, bad_hw = 0;
	uint32_t h, f;

	for (h = 0; h < 65536; h++) {
		_Float16 x = f16(h);

		f = collx_fp16_to_f32_bits(h);
		if (isnan(x)) {
			if (!isnan(f32(f)) || (f & 0x80000000) != ((h & 0x8000) << 16) ||
			    ((f >> 13) & 0x3ff) != ((h & 0x3ff) | 0x200))
				bad_ref++;
			if (collx_f32_bits_to_fp16(f) != (h | 0x200))
				bad_rt++;
		} else {
			if (f != f32b((float)x))
				bad_ref++;
			if (collx_f32_bits_to_fp16(f) != h)
				bad_rt++;
		}
		if (hw && (hw_h2f(h) != f || hw_f2h(f) != collx_f32_bits_to_fp16(f)))
			bad_hw++;
	}
	unit_ok(!bad_ref, "fp16.all_65536_to_f32_exact (%u wrong)", bad_ref);
	unit_ok(!bad_rt, "fp16.all_65536_round_trip (%u wrong)", bad_rt);
	if (hw)
		unit_ok(!bad_hw, "fp16.all_65536_match_cpu_conversion (%u differ)", bad_hw);
}

static void test_bf16_exhaustive(void)
{
	unsigned int bad_ref = 0, bad_rt = 0;
	uint32_t b, f;

	for (b = 0; b < 65536; b++) {
		f = collx_bf16_to_f32_bits(b);
		if (f != b << 16)
			bad_ref++;
		if (collx_f32_bits_to_bf16(f) != (isnan(f32(f)) ? (b | 0x40) : b))
			bad_rt++;
	}
	unit_ok(!bad_ref, "bf16.all_65536_to_f32_exact (%u wrong)", bad_ref);
	unit_ok(!bad_rt, "bf16.all_65536_round_trip (%u wrong)", bad_rt);
}

/*
 * Binary32 -> 16-bit rounding around every 16-bit value: the midpoint to
 * its neighbour and one binary32 ulp either side, both signs; plus random
 * binary32 values.  Checked against _Float16 (libgcc, correctly rounded),
 * F16C, and the distance-based bf16 reference.
 */
static void test_narrowing(void)
{
	bool hw = HAVE_HW_FP16();
	unsigned int bad16 = 0, badhw = 0, badbf = 0, n16 = 0, nbf = 0;
	uint32_t m, f, mid, lo, hi;
	int k, d;

	for (m = 0; m < 0x7c00; m++) {	/* fp16 magnitudes below inf */
		lo = collx_fp16_to_f32_bits(m);
		hi = collx_fp16_to_f32_bits(m + 1);
		mid = f32b((f32(lo) + f32(hi)) / 2);	/* exact */
		for (k = 0; k < 2; k++) {
			for (d = -1; d <= 1; d++) {
				f = (mid + d) | (k ? 0x80000000 : 0);
				n16++;
				if (collx_f32_bits_to_fp16(f) != f16b((_Float16)f32(f)))
					bad16++;
				if (hw && hw_f2h(f) != collx_f32_bits_to_fp16(f))
					badhw++;
			}
		}
	}
	for (m = 0; m < 0x7f80; m++) {	/* bf16 magnitudes below inf */
		mid = (m << 16) | 0x8000;
		for (k = 0; k < 2; k++) {
			for (d = -1; d <= 1; d++) {
				f = (mid + d) | (k ? 0x80000000 : 0);
				nbf++;
				if (collx_f32_bits_to_bf16(f) != ref_bf16(f32(f)))
					badbf++;
			}
		}
	}
	for (k = 0; k < 1000000; k++) {
		f = (uint32_t)unit_rand();
		n16++;
		nbf++;
		if (!isnan(f32(f)) &&
		    collx_f32_bits_to_fp16(f) != f16b((_Float16)f32(f)))
			bad16++;
		if (hw && hw_f2h(f) != collx_f32_bits_to_fp16(f))
			badhw++;
		if (!isnan(f32(f)) && collx_f32_bits_to_bf16(f) != ref_bf16(f32(f)))
			badbf++;
	}
	unit_ok(!bad16, "fp16.narrowing_rne_vs_Float16 (%u of %u wrong)", bad16, n16);
	if (hw)
		unit_ok(!badhw, "fp16.narrowing_matches_cpu incl. NaN payloads (%u differ)",
			badhw);
	unit_ok(!badbf, "bf16.narrowing_rne_vs_reference (%u of %u wrong)", badbf, nbf);
}

/*
 * FP8, all 256 values each way: the exact table of reduce_vectors.h
 * against the definition computed here, the widening against the table,
 * every value narrowed back to itself (NaNs quieted); then narrowing around
 * every midpoint between neighbours (ties, one binary32 ulp either side,
 * both signs), past the largest value (saturation, infinity), at binary32
 * subnormals and on a million random binary32 values.
 */
static void test_fp8_conversions(bool e5)
{
	const uint32_t *table = e5 ? collx_e5m2_f32_table : collx_e4m3_f32_table;
	const char *nm = e5 ? "e5m2" : "e4m3";
	u32 (*widen)(u8) = e5 ? collx_e5m2_to_f32_bits : collx_e4m3_to_f32_bits;
	u8 (*narrow)(u32) = e5 ? collx_f32_bits_to_e5m2 : collx_f32_bits_to_e4m3;
	static const uint32_t edges[] = {
		0x43e00000, 0x43e80000, 0x43e80001, 0x43e7ffff, 0x43f00000,
		0x47600000, 0x47700000, 0x476fffff, 0x47700001, 0x47800000,
		0x7f7fffff, 0x7f800000, 0x00000001, 0x007fffff, 0x00800000,
		0x3a800000, 0x3a800001, 0x37000000, 0x37000001, 0,
	};
	unsigned int bad_tab = 0, bad_wid = 0, bad_rt = 0, bad_mid = 0, n = 0;
	unsigned int c, top = e5 ? 0x7b : 0x7e, k, i;
	uint32_t f, mid;
	int d;

	for (c = 0; c < 256; c++) {
		long double v = fp8_val(c, e5);
		uint32_t t = table[c];
		uint8_t back = fp8_isnan(c, e5) ? (e5 ? c | 2 : c) : c;

		if (isnan(v))
			bad_tab += !isnan(f32(t)) || !(t & 0x400000) ||
				   (t >> 31) != (c >> 7);
		else
			bad_tab += (long double)f32(t) != v ||
				   (t >> 31) != (c >> 7);
		bad_wid += widen(c) != t;
		bad_rt += narrow(t) != back;
	}
	for (c = 0; c < top + (e5 ? 1 : 0); c++) {
		mid = f32b((f32(table[c]) + f32(table[c + 1])) / 2);	/* exact */
		if (e5 && c == top)
			mid = 0x47700000;	/* 61440, towards inf */
		for (k = 0; k < 2; k++) {
			for (d = -1; d <= 1; d++) {
				f = (mid + d) | (k ? 0x80000000 : 0);
				n++;
				bad_mid += narrow(f) != ref_fp8(f32(f), e5);
			}
		}
	}
	for (i = 0; i < ARRAY_SIZE(edges); i++) {
		for (k = 0; k < 2; k++) {
			f = edges[i] | (k ? 0x80000000 : 0);
			n++;
			bad_mid += narrow(f) != ref_fp8(f32(f), e5);
		}
	}
	for (i = 0; i < 1000000; i++) {
		f = (uint32_t)unit_rand();
		n++;
		if (isnan(f32(f)))
			bad_mid += narrow(f) != ((f >> 24 & 0x80) |
				(e5 ? 0x7e | (f >> 21 & 1) : 0x7f));
		else
			bad_mid += narrow(f) != ref_fp8(f32(f), e5);
	}
	unit_ok(!bad_tab, "%s.table_is_the_ocp_definition (%u wrong)", nm, bad_tab);
	unit_ok(!bad_wid, "%s.all_256_to_f32_exact (%u wrong)", nm, bad_wid);
	unit_ok(!bad_rt, "%s.all_256_round_trip (%u wrong)", nm, bad_rt);
	unit_ok(!bad_mid, "%s.narrowing_rne_%s (%u of %u wrong)", nm,
		e5 ? "overflow_to_inf" : "saturating", bad_mid, n);
}

/*
 * Every pair of FP8 values through every op on every implementation,
 * against ref_fp8_elem(); avg as the sum of the pair scaled by 3.
 */
static void test_fp8_pairs(int dt)
{
	static uint8_t a[65536], b[65536], d[65536], want[65536];
	int op, k, impl;
	size_t i;

	for (i = 0; i < 65536; i++) {
		a[i] = i & 0xff;
		b[i] = i >> 8;
	}
	for (op = 0; op < COLLX_OP_COUNT; op++) {
		for (i = 0; i < 65536; i++) {
			want[i] = ref_elem(dt, op, a[i], b[i]);
			if (op == COLLX_OP_AVG)
				want[i] = ref_scale(dt, want[i], 3);
		}
		for (k = -1; k < nsimd; k++) {
			unsigned int bad = 0, first = 0;
			int ret;

			impl = k < 0 ? COLLX_REDUCE_SCALAR : simd[k];
			memcpy(d, a, sizeof(d));
			ret = collx_reduce_with(impl, d, b, 65536, dt, op);
			if (!ret && op == COLLX_OP_AVG)
				ret = collx_reduce_scale_avg_with(impl, d, 65536, dt, 3);
			for (i = 65536; i-- > 0;) {
				if (d[i] != want[i]) {
					bad++;
					first = i;
				}
			}
			if (!unit_ok(!ret && !bad, "reduce.pairs.%s.%s.%s (%u of 65536 wrong)",
				     dt_name[dt], op_name[op], collx_reduce_impl_name(impl), bad))
				unit_diag("a=0x%02x b=0x%02x got 0x%02x want 0x%02x", a[first],
					  b[first], d[first], want[first]);
		}
	}
}

/*
 * avg's scaling of every FP8 value by every rank count 1..1024, on every
 * implementation, against the reference: quotients have long binary
 * expansions, the case where a SIMD narrowing must round exactly once
 * (sums and products of two fp8 values never need that).
 */
static void test_fp8_scale_all(int dt)
{
	static uint8_t x[256 * 1024], d[256 * 1024], want[256 * 1024];
	unsigned int n, bad, first;
	int k, impl, ret;
	size_t i, len = 0;

	for (n = 1; n <= 1024; n++)
		for (i = 0; i < 256; i++) {
			x[len] = (uint8_t)i;
			want[len++] = ref_scale(dt, (uint8_t)i, n);
		}
	for (k = -1; k < nsimd; k++) {
		impl = k < 0 ? COLLX_REDUCE_SCALAR : simd[k];
		memcpy(d, x, len);
		ret = 0;
		for (n = 1; n <= 1024 && !ret; n++)	/* 256 values at a time */
			ret = collx_reduce_scale_avg_with(impl, d + 256 * (n - 1), 256, dt, n);
		bad = first = 0;
		for (i = len; i-- > 0;) {
			if (d[i] != want[i]) {
				bad++;
				first = i;
			}
		}
		if (!unit_ok(!ret && !bad, "reduce.scale_all.%s.%s: every value / 1..1024 (%u wrong)",
			     dt_name[dt], collx_reduce_impl_name(impl), bad))
			unit_diag("0x%02x / %u: got 0x%02x want 0x%02x", x[first], first / 256 + 1,
				  d[first], want[first]);
	}
}

/* ---- differential: every SIMD implementation vs scalar vs reference ---- */

static void test_random(int dt, int op)
{
	size_t es = collx_dtype_size(dt);
	unsigned int bad_ref = 0, bad_simd[COLLX_REDUCE_IMPL_COUNT] = { 0 };
	unsigned int bad_ret = 0, trials = 0;
	size_t maxn = 70000;
	char *a = malloc(maxn * es + 64), *b = malloc(maxn * es + 64);
	char *x = malloc(maxn * es + 64), *y = malloc(maxn * es + 64);
	int t, k;

	for (t = 0; t < 40; t++) {
		/* short odd lengths and misalignments, and some long runs */
		size_t n = t < 36 ? unit_rand() % 300 : 20000 + unit_rand() % 50000;
		size_t off = unit_rand() % 8;
		uint32_t nranks = 1 + unit_rand() % 9;
		char *d1 = x + off, *d2 = y + off, *s = b + off;
		size_t i;

		for (i = 0; i < n; i++) {
			put_bits(a, es, i, rand_val(dt));
			put_bits(s, es, i, rand_val(dt));
		}
		memcpy(d1, a, n * es);
		memcpy(d2, a, n * es);
		if (op == COLLX_OP_AVG) {
			/* sum, then scale: the whole avg */
			bad_ret += !!collx_reduce_with(COLLX_REDUCE_SCALAR, d1, s, n, dt, op);
			bad_ret += !!collx_reduce_scale_avg_with(COLLX_REDUCE_SCALAR, d1, n, dt,
								 nranks);
		} else {
			bad_ret += !!collx_reduce_with(COLLX_REDUCE_SCALAR, d1, s, n, dt, op);
		}
		for (i = 0; i < n; i++) {
			uint64_t want = ref_elem(dt, op, get_bits(a, es, i),
						 get_bits(s, es, i));

			if (op == COLLX_OP_AVG)
				want = ref_scale(dt, want, nranks);
			if (get_bits(d1, es, i) != want) {
				if (bad_ref++ < 3)
					unit_diag("%s.%s [%zu] a=0x%llx b=0x%llx got 0x%llx want 0x%llx",
						  dt_name[dt], op_name[op], i,
						  (unsigned long long)get_bits(a, es, i),
						  (unsigned long long)get_bits(s, es, i),
						  (unsigned long long)get_bits(d1, es, i),
						  (unsigned long long)want);
			}
		}
		for (k = 0; k < nsimd; k++) {
			memcpy(d2, a, n * es);
			bad_ret += !!collx_reduce_with(simd[k], d2, s, n, dt, op);
			if (op == COLLX_OP_AVG)
				bad_ret += !!collx_reduce_scale_avg_with(simd[k], d2, n, dt,
									 nranks);
			if (memcmp(d1, d2, n * es))
				bad_simd[k]++;
		}
		trials++;
	}
	unit_ok(!bad_ref && !bad_ret, "reduce.random.%s.%s.scalar_vs_reference (%u wrong)",
		dt_name[dt], op_name[op], bad_ref);
	for (k = 0; k < nsimd; k++)
		unit_ok(!bad_simd[k], "reduce.random.%s.%s.%s_bit_identical (%u of %u runs differ)",
			dt_name[dt], op_name[op], collx_reduce_impl_name(simd[k]),
			bad_simd[k], trials);
	free(a);
	free(b);
	free(x);
	free(y);
}

/* src == dst is allowed: x = x (op) x */
static void test_inplace(void)
{
	float buf[100];
	size_t i;
	bool ok = true;

	for (i = 0; i < 100; i++)
		buf[i] = (float)i;
	ok &= !collx_reduce(buf, buf, 100, COLLX_FP32, COLLX_OP_SUM);
	for (i = 0; i < 100; i++)
		ok &= buf[i] == 2.0f * i;
	unit_ok(ok, "reduce.api.src_equals_dst");
}

static const char *const impl_name[COLLX_REDUCE_IMPL_COUNT] = {
	[COLLX_REDUCE_SCALAR] = "scalar", [COLLX_REDUCE_AVX2] = "avx2",
	[COLLX_REDUCE_AVX512] = "avx512", [COLLX_REDUCE_AVX512_BF16] = "avx512bf16",
	[COLLX_REDUCE_NEON] = "neon",
};

/* What the CPU offers, asked here rather than by the code under test. */
static bool cpu_has[COLLX_REDUCE_IMPL_COUNT];

static void probe_cpu(void)
{
	int k;

	cpu_has[COLLX_REDUCE_SCALAR] = true;
#ifdef __x86_64__
	cpu_has[COLLX_REDUCE_AVX2] = __builtin_cpu_supports("avx2") &&
				     __builtin_cpu_supports("f16c");
	cpu_has[COLLX_REDUCE_AVX512] = __builtin_cpu_supports("avx512f") &&
				       __builtin_cpu_supports("avx512bw") &&
				       __builtin_cpu_supports("avx512dq") &&
				       __builtin_cpu_supports("avx512vl");
	cpu_has[COLLX_REDUCE_AVX512_BF16] = cpu_has[COLLX_REDUCE_AVX512] &&
					    __builtin_cpu_supports("avx512bf16");
#endif
#ifdef __aarch64__
	cpu_has[COLLX_REDUCE_NEON] = true;
#endif
	for (k = COLLX_REDUCE_SCALAR + 1; k < COLLX_REDUCE_IMPL_COUNT; k++)
		if (cpu_has[k])
			simd[nsimd++] = k;
}

static void test_api(void)
{
	uint32_t buf[4] = { 0 };
	int k;

	unit_ok(collx_reduce(buf, buf, 4, COLLX_DTYPE_COUNT, COLLX_OP_SUM) == -EINVAL,
		"reduce.api.bad_dtype_einval");
	unit_ok(collx_reduce(buf, buf, 4, COLLX_INT32, COLLX_OP_COUNT) == -EINVAL,
		"reduce.api.bad_op_einval");
	unit_ok(collx_reduce(buf, buf, SIZE_MAX / 2, COLLX_FP64, COLLX_OP_SUM) == -EINVAL,
		"reduce.api.count_overflow_einval");
	unit_ok(collx_reduce(NULL, NULL, 0, COLLX_FP32, COLLX_OP_SUM) == 0,
		"reduce.api.count_zero_ok");
	unit_ok(collx_reduce_scale_avg(buf, 4, COLLX_INT32, 0) == -EINVAL,
		"reduce.api.avg_zero_ranks_einval");
	unit_ok(collx_reduce_with(COLLX_REDUCE_IMPL_COUNT, buf, buf, 4, COLLX_INT32,
				  COLLX_OP_SUM) == -EINVAL,
		"reduce.api.bad_impl_einval");
	for (k = COLLX_REDUCE_SCALAR; k < COLLX_REDUCE_IMPL_COUNT; k++)
		unit_ok(cpu_has[k] == collx_reduce_impl_available(k),
			"reduce.api.%s_available_matches_cpu (%s)", impl_name[k],
			cpu_has[k] ? "yes" : "no");
	for (k = COLLX_REDUCE_IMPL_COUNT - 1; !cpu_has[k]; k--)
		;	/* the last one the CPU has is the fastest */
	unit_ok(!strcmp(collx_reduce_impl_name(COLLX_REDUCE_AUTO), impl_name[k]),
		"reduce.api.auto_picks_fastest (%s)",
		collx_reduce_impl_name(COLLX_REDUCE_AUTO));
	unit_ok(!strcmp(collx_reduce_impl_name(COLLX_REDUCE_IMPL_COUNT), "invalid"),
		"reduce.api.name_of_bad_impl");
	unit_ok(collx_dtype_size(COLLX_BF16) == 2 && collx_dtype_size(COLLX_INT64) == 8 &&
		collx_dtype_size(COLLX_FP8_E4M3) == 1 && collx_dtype_size(COLLX_FP8_E5M2) == 1 &&
		collx_dtype_size(COLLX_DTYPE_COUNT) == 0, "reduce.api.dtype_size");
	test_inplace();
}

void test_reduce(void)
{
	int dt, op;

	probe_cpu();
	fp8_init();
	test_api();
	test_vectors();
	test_fp16_exhaustive();
	test_bf16_exhaustive();
	test_narrowing();
	test_fp8_conversions(false);
	test_fp8_conversions(true);
	test_fp8_pairs(COLLX_FP8_E4M3);
	test_fp8_pairs(COLLX_FP8_E5M2);
	test_fp8_scale_all(COLLX_FP8_E4M3);
	test_fp8_scale_all(COLLX_FP8_E5M2);
	for (dt = 0; dt < NDT; dt++)
		for (op = 0; op < COLLX_OP_COUNT; op++)
			test_random(dt, op);
}
