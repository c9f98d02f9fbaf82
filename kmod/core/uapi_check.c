// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: ioctl argument checks as pure functions.
 */
#include "uapi_check.h"
#include "reduce.h"

int collx_uapi_check_size(u32 usize, size_t min_size)
{
	return usize < min_size ? -EINVAL : 0;
}

static bool collx_all_zero(const void *p, size_t len)
{
	const u8 *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

int collx_uapi_check_tail(const void *buf, size_t usize, size_t ksize)
{
	if (usize <= ksize)
		return 0;
	return collx_all_zero((const u8 *)buf + ksize, usize - ksize) ?
		0 : -E2BIG;
}

int collx_uapi_check_zero(const void *p, size_t len)
{
	return collx_all_zero(p, len) ? 0 : -EINVAL;
}

int collx_uapi_check_flags(u64 flags, u64 supported)
{
	return flags & ~supported ? -EOPNOTSUPP : 0;
}

int collx_uapi_check_dtype(u32 dtype)
{
	return dtype < COLLX_DTYPE_COUNT ? 0 : -EOPNOTSUPP;
}

int collx_uapi_check_redop(u32 op)
{
	return op < COLLX_OP_COUNT ? 0 : -EOPNOTSUPP;
}

int collx_uapi_buf_bytes(u64 count, u32 dtype, u64 mult, u64 max_bytes,
			 u64 *bytes)
{
	u64 per_rank, total, esize;

	if (collx_uapi_check_dtype(dtype))
		return -EOPNOTSUPP;
	esize = collx_dtype_size(dtype);
	if (!mult || check_mul_overflow(count, esize, &per_rank) ||
	    check_mul_overflow(per_rank, mult, &total) || total > max_bytes)
		return -EINVAL;
	*bytes = total;
	return 0;
}

int collx_uapi_check_range(u64 addr, u64 len, u64 limit)
{
	u64 end;

	if (!len || check_add_overflow(addr, len, &end) || end > limit)
		return -EINVAL;
	return 0;
}

int collx_uapi_check_ranks(u32 rank, u32 nranks, u32 max_ranks)
{
	if (!nranks || nranks > max_ranks || rank >= nranks)
		return -EINVAL;
	return 0;
}
