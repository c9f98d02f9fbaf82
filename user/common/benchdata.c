// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Exactly checkable data; see benchdata.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "benchdata.h"

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float f32_from(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Round to nearest even, with subnormals, infinities and NaN. */
uint16_t bench_f32_to_f16(float f)
{
	uint32_t x = f32_bits(f), sign = (x >> 16) & 0x8000, mant;
	int exp = (int)((x >> 23) & 0xff) - 127 + 15;
	uint32_t r;

	if (((x >> 23) & 0xff) == 0xff)
		return sign | 0x7c00 | ((x & 0x7fffff) ? 0x200 : 0);
	mant = x & 0x7fffff;
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) {
		int shift;

		if (exp < -10)
			return sign;
		mant |= 0x800000;
		shift = 14 - exp;
		r = mant >> shift;
		if ((mant & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
		    ((mant & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
			r++;
		return sign | r;
	}
	r = ((uint32_t)exp << 10) | (mant >> 13);
	if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (r & 1)))
		r++;
	return sign | r;
}

float bench_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
		 mant = h & 0x3ff;

	if (exp == 0x1f)
		return f32_from(sign | 0x7f800000 | (mant << 13));
	if (exp == 0) {
		float v = (float)mant / 1024.0f / 16384.0f;

		return sign ? -v : v;
	}
	return f32_from(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t bench_f32_to_bf16(float f)
{
	uint32_t x = f32_bits(f);

	if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff))
		return (x >> 16) | 0x40;
	x += 0x7fff + ((x >> 16) & 1);
	return x >> 16;
}

float bench_bf16_to_f32(uint16_t h)
{
	return f32_from((uint32_t)h << 16);
}

/*
 * An OCP 8-bit float with @mbits mantissa bits and exponent @bias: round
 * to nearest even; beyond the largest finite value E4M3 saturates (it has
 * no infinity) and E5M2 becomes infinite.
 */
static uint8_t f32_to_f8(float f, int mbits, int bias, uint8_t maxfin, uint8_t overflow)
{
	uint8_t sign = signbit(f) ? 0x80 : 0;
	int emin = 1 - bias, e, code;
	double a = fabs((double)f), q;

	if (isnan(f))
		return sign | (mbits == 3 ? 0x7f : 0x7e);
	if (isinf(f))
		return sign | overflow;
	if (a == 0)
		return sign;
	frexp(a, &e);
	e -= 1;				/* a = 1.m x 2^e */
	if (e < emin) {
		/* Subnormal: steps of 2^(emin - mbits); code 1 << mbits is
		 * the smallest normal, which the bit pattern gets right. */
		q = nearbyint(ldexp(a, mbits - emin));
		return sign | (uint8_t)q;
	}
	q = nearbyint((ldexp(a, -e) - 1) * (1 << mbits));
	if (q == (1 << mbits)) {
		q = 0;
		e++;
	}
	code = ((e + bias) << mbits) | (int)q;
	if (code > maxfin)
		return sign | overflow;
	return sign | (uint8_t)code;
}

static float f8_to_f32(uint8_t b, int mbits, int bias, bool has_inf)
{
	int e = (b & 0x7f) >> mbits, m = b & ((1 << mbits) - 1), emax = 0x7f >> mbits;
	double v;

	if (has_inf && e == emax)
		v = m ? NAN : INFINITY;
	else if (!has_inf && e == emax && m == (1 << mbits) - 1)
		v = NAN;
	else if (e == 0)
		v = ldexp(m, 1 - bias - mbits);
	else
		v = ldexp(1.0 + (double)m / (1 << mbits), e - bias);
	return (float)((b & 0x80) ? -v : v);
}

uint8_t bench_f32_to_e4m3(float f)
{
	return f32_to_f8(f, 3, 7, 0x7e, 0x7e);
}

float bench_e4m3_to_f32(uint8_t b)
{
	return f8_to_f32(b, 3, 7, false);
}

uint8_t bench_f32_to_e5m2(float f)
{
	return f32_to_f8(f, 2, 15, 0x7b, 0x7c);
}

float bench_e5m2_to_f32(uint8_t b)
{
	return f8_to_f32(b, 2, 15, true);
}

static bool is_signed(enum collx_dtype dt)
{
	return dt != COLLX_UINT8 && dt != COLLX_UINT32 && dt != COLLX_UINT64;
}

static bool is_fp8(enum collx_dtype dt)
{
	return dt == COLLX_FP8_E4M3 || dt == COLLX_FP8_E5M2;
}

bool bench_dtype_is_float(enum collx_dtype dt)
{
	return dt == COLLX_FP16 || dt == COLLX_BF16 || dt == COLLX_FP32 ||
	       dt == COLLX_FP64 || is_fp8(dt);
}

long bench_value(enum collx_dtype dt, enum collx_redop op, int nranks,
		 int rank, size_t i, int rep)
{
	size_t ii = i % 1000003;	/* keep products below overflow */
	long v;

	switch (op) {
	case COLLX_OP_SUM:
		if (is_fp8(dt))
			return (long)((ii * 7 + rank * 3 + rep) % 3) - 1;
		v = (long)((ii * 7 + rank * 3 + rep) % 10);
		return is_signed(dt) ? v - 4 : v;
	case COLLX_OP_PROD:
		v = (rank < 6 && (ii + rank + rep) % 3 == 0) ? 2 : 1;
		if (is_signed(dt) && (ii * 5 + rank + rep) % 7 == 0)
			v = -v;
		return v;
	case COLLX_OP_MAX:
	case COLLX_OP_MIN:
		if (is_fp8(dt))
			return (long)((ii * 13 + rank * 7 + rep * 3) % 17) - 8;
		v = (long)((ii * 13 + rank * 7 + rep * 3) % 101);
		return is_signed(dt) ? v - 50 : v;
	case COLLX_OP_AVG:
		if (is_fp8(dt))
			return (long)((ii + rep) % 3);
		v = (long)((ii + 2 * rank + rep) % 4);
		return bench_dtype_is_float(dt) ? v * nranks : v;
	default:
		return 0;
	}
}

double bench_expected(enum collx_dtype dt, enum collx_redop op, int nranks,
		      size_t i, int rep)
{
	long long acc = bench_value(dt, op, nranks, 0, i, rep), v;
	int r;

	for (r = 1; r < nranks; r++) {
		v = bench_value(dt, op, nranks, r, i, rep);
		switch (op) {
		case COLLX_OP_SUM:
		case COLLX_OP_AVG:
			acc += v;
			break;
		case COLLX_OP_PROD:
			acc *= v;
			break;
		case COLLX_OP_MAX:
			acc = v > acc ? v : acc;
			break;
		case COLLX_OP_MIN:
			acc = v < acc ? v : acc;
			break;
		default:
			break;
		}
	}
	if (op == COLLX_OP_AVG)
		acc /= nranks;	/* exact for floats, truncates for integers */
	return (double)acc;
}

/* The integers each dtype holds exactly, well within its range. */
static long gen_range(enum collx_dtype dt)
{
	switch (dt) {
	case COLLX_INT8: return 251;
	case COLLX_UINT8: return 251;
	case COLLX_FP16: return 2039;
	case COLLX_BF16: return 251;
	case COLLX_FP8_E4M3: return 33;		/* -16..16 */
	case COLLX_FP8_E5M2: return 17;		/* -8..8 */
	case COLLX_FP32: return 16777213;
	default: return 1000003;
	}
}

long bench_gen(enum collx_dtype dt, int src, size_t i, int rep)
{
	long k = gen_range(dt);
	uint64_t h = (uint64_t)i * 2654435761u + (uint64_t)src * 40503u + (uint64_t)rep * 97u;
	long v = (long)(h % (uint64_t)k);

	return is_signed(dt) ? v - k / 2 : v;
}

void bench_store(void *buf, size_t i, enum collx_dtype dt, double v)
{
	switch (dt) {
	case COLLX_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
	case COLLX_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
	case COLLX_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case COLLX_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
	case COLLX_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case COLLX_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
	case COLLX_FP16: ((uint16_t *)buf)[i] = bench_f32_to_f16((float)v); break;
	case COLLX_BF16: ((uint16_t *)buf)[i] = bench_f32_to_bf16((float)v); break;
	case COLLX_FP32: ((float *)buf)[i] = (float)v; break;
	case COLLX_FP64: ((double *)buf)[i] = v; break;
	case COLLX_FP8_E4M3: ((uint8_t *)buf)[i] = bench_f32_to_e4m3((float)v); break;
	case COLLX_FP8_E5M2: ((uint8_t *)buf)[i] = bench_f32_to_e5m2((float)v); break;
	default: break;
	}
}

double bench_load(const void *buf, size_t i, enum collx_dtype dt)
{
	switch (dt) {
	case COLLX_INT8: return ((const int8_t *)buf)[i];
	case COLLX_UINT8: return ((const uint8_t *)buf)[i];
	case COLLX_INT32: return ((const int32_t *)buf)[i];
	case COLLX_UINT32: return ((const uint32_t *)buf)[i];
	case COLLX_INT64: return (double)((const int64_t *)buf)[i];
	case COLLX_UINT64: return (double)((const uint64_t *)buf)[i];
	case COLLX_FP16: return bench_f16_to_f32(((const uint16_t *)buf)[i]);
	case COLLX_BF16: return bench_bf16_to_f32(((const uint16_t *)buf)[i]);
	case COLLX_FP32: return ((const float *)buf)[i];
	case COLLX_FP64: return ((const double *)buf)[i];
	case COLLX_FP8_E4M3: return bench_e4m3_to_f32(((const uint8_t *)buf)[i]);
	case COLLX_FP8_E5M2: return bench_e5m2_to_f32(((const uint8_t *)buf)[i]);
	default: return 0;
	}
}

void bench_fill(void *buf, size_t count, enum collx_dtype dt,
		enum collx_redop op, int nranks, int rank, int rep)
{
	size_t i;

	for (i = 0; i < count; i++)
		bench_store(buf, i, dt, (double)bench_value(dt, op, nranks, rank, i, rep));
}

size_t bench_check(const void *buf, size_t count, enum collx_dtype dt,
		   enum collx_redop op, int nranks, int rep, size_t *first)
{
	size_t i, wrong = 0;

	for (i = 0; i < count; i++) {
		/* Unsigned types hold the (never negative) result as is. */
		if (bench_load(buf, i, dt) != bench_expected(dt, op, nranks, i, rep)) {
			if (!wrong && first)
				*first = i;
			wrong++;
		}
	}
	return wrong;
}

static const struct {
	const char *name;
	int dt;
} dtype_alias[] = {
	{ "int8", COLLX_INT8 }, { "char", COLLX_INT8 }, { "i8", COLLX_INT8 },
	{ "uint8", COLLX_UINT8 }, { "u8", COLLX_UINT8 },
	{ "int32", COLLX_INT32 }, { "int", COLLX_INT32 }, { "i32", COLLX_INT32 },
	{ "uint32", COLLX_UINT32 }, { "u32", COLLX_UINT32 },
	{ "int64", COLLX_INT64 }, { "i64", COLLX_INT64 },
	{ "uint64", COLLX_UINT64 }, { "u64", COLLX_UINT64 },
	{ "half", COLLX_FP16 }, { "fp16", COLLX_FP16 }, { "f16", COLLX_FP16 },
	{ "float", COLLX_FP32 }, { "fp32", COLLX_FP32 }, { "f32", COLLX_FP32 },
	{ "double", COLLX_FP64 }, { "fp64", COLLX_FP64 }, { "f64", COLLX_FP64 },
	{ "bfloat16", COLLX_BF16 }, { "bf16", COLLX_BF16 },
	{ "f8e4m3", COLLX_FP8_E4M3 }, { "fp8_e4m3", COLLX_FP8_E4M3 }, { "e4m3", COLLX_FP8_E4M3 },
	{ "f8e5m2", COLLX_FP8_E5M2 }, { "fp8_e5m2", COLLX_FP8_E5M2 }, { "e5m2", COLLX_FP8_E5M2 },
};

int bench_parse_dtype(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(dtype_alias) / sizeof(dtype_alias[0]); i++)
		if (!strcasecmp(s, dtype_alias[i].name))
			return dtype_alias[i].dt;
	return -1;
}

int bench_parse_redop(const char *s)
{
	static const char *const n[] = { "sum", "prod", "max", "min", "avg" };
	int i;

	for (i = 0; i < 5; i++)
		if (!strcasecmp(s, n[i]))
			return i;
	return -1;
}

int bench_parse_size(const char *s, size_t *out)
{
	char *end;
	double v, mult = 1;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	switch (*end) {
	case 'G': case 'g': mult = 1024.0 * 1024 * 1024; end++; break;
	case 'M': case 'm': mult = 1024.0 * 1024; end++; break;
	case 'K': case 'k': mult = 1024; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v * mult > 1e18)
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

int bench_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1])))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
