// SPDX-License-Identifier: GPL-2.0
/*
 * Field values biased to the edges: 0, 1, -1, powers of two and their
 * neighbours, every COLLX_MAX_* and enum count plus and minus one, and
 * the lengths where byte counts overflow (2^40, 2^63, 2^64 / esize).
 */
#include "fuzz.h"

static const uint32_t edges32[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256,
	4095, 4096, 4097, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff,
	0x80000000, 0xfffffffe, 0xffffffff,
	COLLX_MAX_RANKS - 1, COLLX_MAX_RANKS, COLLX_MAX_RANKS + 1,
	COLLX_MAX_COMMS_PER_FD - 1, COLLX_MAX_COMMS_PER_FD,
	COLLX_MAX_COMMS_PER_FD + 1,
	COLLX_MAX_MRS_PER_FD - 1, COLLX_MAX_MRS_PER_FD,
	COLLX_MAX_MRS_PER_FD + 1,
	COLLX_MAX_OPS_PER_FD - 1, COLLX_MAX_OPS_PER_FD,
	COLLX_MAX_OPS_PER_FD + 1,
	COLLX_MAX_GROUP - 1, COLLX_MAX_GROUP, COLLX_MAX_GROUP + 1,
	COLLX_MAX_TIMEOUT_MS - 1, COLLX_MAX_TIMEOUT_MS,
	COLLX_MAX_TIMEOUT_MS + 1,
	COLLX_MAX_ADDR_SIZE - 1, COLLX_MAX_ADDR_SIZE, COLLX_MAX_ADDR_SIZE + 1,
	COLLX_DTYPE_COUNT - 1, COLLX_DTYPE_COUNT, COLLX_DTYPE_COUNT + 1,
	COLLX_OP_COUNT - 1, COLLX_OP_COUNT, COLLX_OP_COUNT + 1,
	COLLX_COLL_COUNT - 1, COLLX_COLL_COUNT, COLLX_COLL_COUNT + 1,
	COLLX_ALGO_COUNT - 1, COLLX_ALGO_COUNT, COLLX_ALGO_COUNT + 1,
	COLLX_SUBMIT_ALGO_MASK, COLLX_SUBMIT_ALGO_MASK + 1,
	COLLX_RANK_NONE, COLLX_WAIT_FOREVER - 1,
};

static const uint64_t edges64[] = {
	0x100000000ULL - 1, 0x100000000ULL, 0x100000000ULL + 1,
	COLLX_MAX_BYTES - 1, COLLX_MAX_BYTES, COLLX_MAX_BYTES + 1,
	COLLX_MAX_BYTES / 2 + 1, COLLX_MAX_BYTES / 4 + 1,
	COLLX_MAX_BYTES / 8 + 1, COLLX_MAX_BYTES / 8,
	1ULL << 47, (1ULL << 47) - 4096, 1ULL << 48, 1ULL << 62,
	(1ULL << 62) + 1, 1ULL << 63, (1ULL << 63) - 1, (1ULL << 63) + 1,
	~0ULL / 2 + 1, ~0ULL / 4 + 1, ~0ULL / 8 + 1, ~0ULL - 1, ~0ULL,
};

uint32_t fz_u32(struct fz_rng *r)
{
	switch (fz_below(r, 8)) {
	case 0:
		return (uint32_t)fz_next(r);
	case 1:
		return 1U << fz_below(r, 32);
	case 2:
		return (uint32_t)fz_below(r, 16);
	default:
		return edges32[fz_below(r, FZ_ARRAY_SIZE(edges32))];
	}
}

uint64_t fz_u64(struct fz_rng *r)
{
	switch (fz_below(r, 8)) {
	case 0:
		return fz_next(r);
	case 1:
		return 1ULL << fz_below(r, 64);
	case 2:
	case 3:
		return edges64[fz_below(r, FZ_ARRAY_SIZE(edges64))];
	default:
		return fz_u32(r);
	}
}

/*
 * A count of elements for a buffer that fits @max_bytes: mostly small,
 * sometimes 0, sometimes as large as allowed.
 */
uint64_t fz_count_small(struct fz_rng *r, size_t esize, uint64_t max_bytes)
{
	uint64_t max = esize ? max_bytes / esize : 0;

	if (!max)
		return 0;
	switch (fz_below(r, 64)) {
	case 0:
	case 1:
	case 2:
	case 3:
		return 0;
	case 4:
	case 5:
	case 6:
	case 7:
		return 1;
	case 8:
		return max;
	case 9:
	case 10:
		return 1 + fz_below(r, max);
	case 11:
	case 12:
	case 13:
	case 14:
		return 1 + fz_below(r, max < 16384 ? max : 16384);
	default:
		return 1 + fz_below(r, max < 300 ? max : 300);
	}
}

uint32_t fz_key(struct fz_rng *r)
{
	return (uint32_t)fz_next(r) | 1;
}
