// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* libcollx: names of errors, types, operations, collectives, algorithms,
 * phases and memory paths; the library's version. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collx_int.h"

const char *collx_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ENOENT:
		return "not found (for /dev/collx: is the collx module loaded?)";
	case -EPROTO:
		return "protocol mismatch (ranks submitted different collectives, or a peer of another job, version or module ABI)";
	case -ETIMEDOUT:
		return "timed out (a rank never joined or a peer stopped answering)";
	case -ECONNRESET:
		return "a peer disconnected or its RDMA queue pair failed";
	case -ECANCELED:
		return "cancelled: the communicator was destroyed";
	case -EPIPE:
		return "the communicator is in its error state: destroy it";
	case -EIO:
		return "protocol error between the kernels";
	case -ENODEV:
		return "no RDMA device serves this route, or the device went away";
	case -EOPNOTSUPP:
		return "not supported by this collx module (or the algorithm cannot run this collective)";
	case -EACCES:
		return "a peer failed to prove the communicator's secret";
	case -EAGAIN:
		return "too many collectives in flight on this communicator: wait for some first";
	case -EMFILE:
		return "too many communicators or registrations on one /dev/collx";
	case -EXDEV:
		return "peers are reached through different RDMA devices";
	case -EFAULT:
		return "bad address (or a dma-buf moved or revoked under the collective)";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

static const char *const dtype_names[COLLX_DTYPE_COUNT] = {
	[COLLX_INT8] = "int8",
	[COLLX_UINT8] = "uint8",
	[COLLX_INT32] = "int32",
	[COLLX_UINT32] = "uint32",
	[COLLX_INT64] = "int64",
	[COLLX_UINT64] = "uint64",
	[COLLX_FP16] = "half",
	[COLLX_FP32] = "float",
	[COLLX_FP64] = "double",
	[COLLX_BF16] = "bfloat16",
	[COLLX_FP8_E4M3] = "f8e4m3",
	[COLLX_FP8_E5M2] = "f8e5m2",
};

static const unsigned char dtype_sizes[COLLX_DTYPE_COUNT] = {
	[COLLX_INT8] = 1, [COLLX_UINT8] = 1, [COLLX_INT32] = 4,
	[COLLX_UINT32] = 4, [COLLX_INT64] = 8, [COLLX_UINT64] = 8,
	[COLLX_FP16] = 2, [COLLX_FP32] = 4, [COLLX_FP64] = 8, [COLLX_BF16] = 2,
	[COLLX_FP8_E4M3] = 1, [COLLX_FP8_E5M2] = 1,
};

static const char *const redop_names[COLLX_OP_COUNT] = {
	[COLLX_OP_SUM] = "sum",
	[COLLX_OP_PROD] = "prod",
	[COLLX_OP_MAX] = "max",
	[COLLX_OP_MIN] = "min",
	[COLLX_OP_AVG] = "avg",
};

static const char *const coll_names[COLLX_COLL_COUNT] = {
	[COLLX_COLL_ALLREDUCE] = "allreduce",
	[COLLX_COLL_BROADCAST] = "broadcast",
	[COLLX_COLL_REDUCE] = "reduce",
	[COLLX_COLL_ALLGATHER] = "allgather",
	[COLLX_COLL_REDUCE_SCATTER] = "reduce_scatter",
	[COLLX_COLL_ALLTOALL] = "alltoall",
	[COLLX_COLL_BARRIER] = "barrier",
	[COLLX_COLL_SEND] = "send",
	[COLLX_COLL_RECV] = "recv",
};

static const char *const algo_names[COLLX_ALGO_COUNT] = {
	[COLLX_ALGO_AUTO] = "auto",
	[COLLX_ALGO_RING] = "ring",
	[COLLX_ALGO_TREE] = "tree",
	[COLLX_ALGO_RD] = "rd",
	[COLLX_ALGO_PAIRWISE] = "pairwise",
	[COLLX_ALGO_P2P] = "p2p",
};

static const char *const phase_names[COLLX_PHASE_COUNT] = {
	[COLLX_PHASE_NONE] = "none",
	[COLLX_PHASE_CONNECT] = "connect",
	[COLLX_PHASE_REDUCE_SCATTER] = "reduce-scatter",
	[COLLX_PHASE_ALLGATHER] = "all-gather",
	[COLLX_PHASE_REDUCE] = "reduce",
	[COLLX_PHASE_BROADCAST] = "broadcast",
	[COLLX_PHASE_EXCHANGE] = "exchange",
	[COLLX_PHASE_ALLTOALL] = "alltoall",
	[COLLX_PHASE_P2P] = "p2p",
};

const char *collx_dtype_name(enum collx_dtype dtype)
{
	return (unsigned int)dtype < COLLX_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

size_t collx_dtype_size(enum collx_dtype dtype)
{
	return (unsigned int)dtype < COLLX_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

const char *collx_redop_name(enum collx_redop redop)
{
	return (unsigned int)redop < COLLX_OP_COUNT ? redop_names[redop] : "?";
}

const char *collx_phase_name(enum collx_phase phase)
{
	return (unsigned int)phase < COLLX_PHASE_COUNT ? phase_names[phase] : "?";
}

const char *collx_coll_name(enum collx_coll coll)
{
	return (unsigned int)coll < COLLX_COLL_COUNT ? coll_names[coll] : "?";
}

const char *collx_algo_name(enum collx_algo algo)
{
	return (unsigned int)algo < COLLX_ALGO_COUNT ? algo_names[algo] : "?";
}

void collx_mem_path_str(uint32_t mem, char *out, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} paths[] = {
		{ COLLX_MEM_STAGED, "staged" }, { COLLX_MEM_ZERO_COPY, "zero-copy" },
		{ COLLX_MEM_PLACED, "placed" }, { COLLX_MEM_DMABUF, "dma-buf" },
		{ COLLX_MEM_BOUNCED, "bounced" },
	};
	size_t i, o = 0;

	out[0] = 0;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && o < len; i++)
		if (mem & paths[i].bit)
			o += snprintf(out + o, len - o, "%s%s", o ? "+" : "", paths[i].name);
	if (!o)
		snprintf(out, len, "-");
}

int collx_get_version(int *version)
{
	if (!version)
		return -EINVAL;
	*version = COLLX_LIB_MAJOR * 10000 + COLLX_LIB_MINOR * 100;
	return 0;
}
