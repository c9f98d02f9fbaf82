// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: reduction entry points.  Picks an implementation, checks the
 * arguments and cuts the work into bounded FPU sections.  No float code
 * here: this file builds with the kernel's normal (no-FPU) flags.
 */
#include "reduce_impl.h"

static const u8 collx_dtype_sizes[COLLX_DTYPE_COUNT] = {
	[COLLX_INT8] = 1,
	[COLLX_UINT8] = 1,
	[COLLX_INT32] = 4,
	[COLLX_UINT32] = 4,
	[COLLX_INT64] = 8,
	[COLLX_UINT64] = 8,
	[COLLX_FP16] = 2,
	[COLLX_FP32] = 4,
	[COLLX_FP64] = 8,
	[COLLX_BF16] = 2,
	[COLLX_FP8_E4M3] = 1,
	[COLLX_FP8_E5M2] = 1,
};

size_t collx_dtype_size(enum collx_dtype dtype)
{
	if ((unsigned int)dtype >= COLLX_DTYPE_COUNT)
		return 0;
	return collx_dtype_sizes[dtype];
}

/* The table of @impl if this CPU (and kernel) can run it, else NULL. */
static const struct collx_reduce_ops *
collx_reduce_table(enum collx_reduce_impl impl)
{
	switch (impl) {
	case COLLX_REDUCE_SCALAR:
		return &collx_reduce_scalar_ops;
#ifdef COLLX_HAVE_X86_SIMD
	/* Every AVX2 CPU has F16C, but check: the fp16 kernels use it. */
	case COLLX_REDUCE_AVX2:
		return collx_cpu_has_avx2() && collx_cpu_has_f16c() ?
			&collx_reduce_avx2_ops : NULL;
	case COLLX_REDUCE_AVX512:
		return collx_cpu_has_avx512() ? &collx_reduce_avx512_ops : NULL;
	case COLLX_REDUCE_AVX512_BF16:
		return collx_cpu_has_avx512() && collx_cpu_has_avx512_bf16() ?
			&collx_reduce_avx512_bf16_ops : NULL;
#endif
#ifdef COLLX_HAVE_NEON
	case COLLX_REDUCE_NEON:
		return collx_cpu_has_neon() ? &collx_reduce_neon_ops : NULL;
#endif
	default:
		return NULL;
	}
}

/* AUTO: the first of these the CPU has; scalar always is. */
static const enum collx_reduce_impl collx_reduce_order[] = {
	COLLX_REDUCE_NEON, COLLX_REDUCE_AVX512_BF16, COLLX_REDUCE_AVX512,
	COLLX_REDUCE_AVX2, COLLX_REDUCE_SCALAR,
};

static const struct collx_reduce_ops *
collx_reduce_pick(enum collx_reduce_impl impl)
{
	const struct collx_reduce_ops *ops = NULL;
	size_t i;

	if (impl != COLLX_REDUCE_AUTO)
		return collx_reduce_table(impl);
	for (i = 0; !ops && i < ARRAY_SIZE(collx_reduce_order); i++)
		ops = collx_reduce_table(collx_reduce_order[i]);
	return ops;
}

bool collx_reduce_impl_available(enum collx_reduce_impl impl)
{
	return collx_reduce_pick(impl);
}

const char *collx_reduce_impl_name(enum collx_reduce_impl impl)
{
	const struct collx_reduce_ops *ops = collx_reduce_pick(impl);

	return ops ? ops->name : "invalid";
}

/* Elements per FPU section: COLLX_REDUCE_FPU_BYTES of dst. */
static size_t collx_fpu_elems(size_t esize)
{
	return COLLX_REDUCE_FPU_BYTES / esize;
}

static int collx_reduce_check(enum collx_reduce_impl impl,
			      const struct collx_reduce_ops **ops,
			      size_t count, enum collx_dtype dtype,
			      size_t *esize)
{
	size_t bytes;

	*esize = collx_dtype_size(dtype);
	if (!*esize || check_mul_overflow(count, *esize, &bytes))
		return -EINVAL;
	*ops = collx_reduce_pick(impl);
	if (!*ops)
		return (unsigned int)impl < COLLX_REDUCE_IMPL_COUNT ?
			-EOPNOTSUPP : -EINVAL;
	if (count && !collx_fpu_usable())
		return -EBUSY;
	return 0;
}

int collx_reduce_with(enum collx_reduce_impl impl, void *dst, const void *src,
		      size_t count, enum collx_dtype dtype,
		      enum collx_redop op)
{
	const struct collx_reduce_ops *ops;
	collx_reduce_fn_t fn;
	size_t esize, step, n;
	int ret;

	if ((unsigned int)op >= COLLX_OP_COUNT)
		return -EINVAL;
	ret = collx_reduce_check(impl, &ops, count, dtype, &esize);
	if (ret)
		return ret;
	if (op == COLLX_OP_AVG)
		op = COLLX_OP_SUM;
	fn = ops->reduce[dtype][op];
	step = collx_fpu_elems(esize);

	while (count) {
		n = count < step ? count : step;
		collx_fpu_begin();
		fn(dst, src, n);
		collx_fpu_end();
		dst = (u8 *)dst + n * esize;
		src = (const u8 *)src + n * esize;
		count -= n;
	}
	return 0;
}

int collx_reduce(void *dst, const void *src, size_t count,
		 enum collx_dtype dtype, enum collx_redop op)
{
	return collx_reduce_with(COLLX_REDUCE_AUTO, dst, src, count, dtype, op);
}

int collx_reduce_scale_avg_with(enum collx_reduce_impl impl, void *buf,
				size_t count, enum collx_dtype dtype,
				u32 nranks)
{
	const struct collx_reduce_ops *ops;
	collx_scale_fn_t fn;
	size_t esize, step, n;
	int ret;

	if (!nranks)
		return -EINVAL;
	ret = collx_reduce_check(impl, &ops, count, dtype, &esize);
	if (ret)
		return ret;
	fn = ops->scale[dtype];
	step = collx_fpu_elems(esize);

	while (count) {
		n = count < step ? count : step;
		collx_fpu_begin();
		fn(buf, n, nranks);
		collx_fpu_end();
		buf = (u8 *)buf + n * esize;
		count -= n;
	}
	return 0;
}

int collx_reduce_scale_avg(void *buf, size_t count, enum collx_dtype dtype,
			   u32 nranks)
{
	return collx_reduce_scale_avg_with(COLLX_REDUCE_AUTO, buf, count, dtype,
					   nranks);
}

u32 collx_fp16_to_f32_bits(u16 h)
{
	return __collx_fp16_to_f32_bits(h);
}

u16 collx_f32_bits_to_fp16(u32 f)
{
	return __collx_f32_bits_to_fp16(f);
}

u32 collx_bf16_to_f32_bits(u16 b)
{
	return __collx_bf16_to_f32_bits(b);
}

u16 collx_f32_bits_to_bf16(u32 f)
{
	return __collx_f32_bits_to_bf16(f);
}

u32 collx_e4m3_to_f32_bits(u8 x)
{
	return __collx_e4m3_to_f32_bits(x);
}

u8 collx_f32_bits_to_e4m3(u32 f)
{
	return __collx_f32_bits_to_e4m3(f);
}

u32 collx_e5m2_to_f32_bits(u8 x)
{
	return __collx_e5m2_to_f32_bits(x);
}

u8 collx_f32_bits_to_e5m2(u32 f)
{
	return __collx_f32_bits_to_e5m2(f);
}
