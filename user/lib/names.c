// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* libcollx: names of errors, types, operations and phases. */
#include <errno.h>
#include <string.h>

#include "collx.h"

const char *collx_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ENOENT:
		return "not found (for /dev/collx: is the collx module loaded?)";
	case -EPROTO:
		return "protocol mismatch (module ABI, or a peer of another job or version)";
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
};

static const unsigned char dtype_sizes[COLLX_DTYPE_COUNT] = {
	[COLLX_INT8] = 1, [COLLX_UINT8] = 1, [COLLX_INT32] = 4,
	[COLLX_UINT32] = 4, [COLLX_INT64] = 8, [COLLX_UINT64] = 8,
	[COLLX_FP16] = 2, [COLLX_FP32] = 4, [COLLX_FP64] = 8, [COLLX_BF16] = 2,
};

static const char *const redop_names[COLLX_OP_COUNT] = {
	[COLLX_OP_SUM] = "sum",
	[COLLX_OP_PROD] = "prod",
	[COLLX_OP_MAX] = "max",
	[COLLX_OP_MIN] = "min",
	[COLLX_OP_AVG] = "avg",
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
	switch (phase) {
	case COLLX_PHASE_NONE:
		return "none";
	case COLLX_PHASE_CONNECT:
		return "connect";
	case COLLX_PHASE_REDUCE_SCATTER:
		return "reduce-scatter";
	case COLLX_PHASE_ALLGATHER:
		return "all-gather";
	}
	return "?";
}
