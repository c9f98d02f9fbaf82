// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Placement: the j-th replica of rank r goes to rank r + j * stride (mod
 * nranks).  With a node's ranks adjacent and stride = ranks per node, the
 * k holders are on k other nodes, so losing one node never takes a shard
 * together with all its replicas.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ckpt_int.h"

static int parse_pos(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > COLLX_MAX_RANKS)
		return -EINVAL;
	*out = v;
	return 0;
}

int ckpt_env_stride(long *stride, char *err, size_t errlen)
{
	static const char *const vars[] = {
		"COLLX_CKPT_STRIDE", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
		"MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
	};
	unsigned int i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *s = getenv(vars[i]);

		if (!s || !*s)
			continue;
		if (parse_pos(s, stride)) {
			snprintf(err, errlen, "%s=%s: not a rank count 1..%d", vars[i], s,
				 COLLX_MAX_RANKS);
			return -EINVAL;
		}
		return 0;
	}
	*stride = 1;
	return 0;
}

int ckpt_place_check(uint32_t nranks, uint32_t stride, uint32_t k, char *err, size_t errlen)
{
	if (!nranks || !stride || stride > nranks) {
		snprintf(err, errlen, "placement: stride %u for %u ranks", stride, nranks);
		return -EINVAL;
	}
	if (k > COLLX_CKPT_MAX_K) {
		snprintf(err, errlen, "placement: k = %u replicas, at most %d", k, COLLX_CKPT_MAX_K);
		return -EINVAL;
	}
	if (nranks % stride) {
		snprintf(err, errlen,
			 "placement: %u ranks are not whole nodes of %u (stride = ranks per node)",
			 nranks, stride);
		return -EINVAL;
	}
	if (k >= nranks / stride) {
		snprintf(err, errlen,
			 "placement: k = %u replicas need %u nodes besides the owner's; there are %u nodes of %u ranks",
			 k, k, nranks / stride, stride);
		return -EINVAL;
	}
	return 0;
}

uint32_t ckpt_holder(uint32_t nranks, uint32_t stride, uint32_t r, uint32_t j)
{
	return (uint32_t)(((uint64_t)r + (uint64_t)j * stride) % nranks);
}

uint32_t ckpt_source(uint32_t nranks, uint32_t stride, uint32_t r, uint32_t j)
{
	uint64_t back = ((uint64_t)j * stride) % nranks;

	return (uint32_t)(((uint64_t)r + nranks - back) % nranks);
}
