// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: the scalar implementation, the per-element rules of
 * reduce_elem.h in plain loops.  Built with FPU flags and the vectoriser
 * on (objs.mk), so a CPU without a hand-written path still gets the
 * compiler's SIMD code for its baseline instruction set.  In the kernel
 * every function here runs between collx_fpu_begin() and collx_fpu_end()
 * (reduce.c makes sure of it).
 */
#include "reduce_elem.h"

#define SCALAR_LOOP(dt, op, d, s, n)	elem_loop(dt, op, d, s, n)
#define SCALAR_SCALE(dt, d, n, nranks)	elem_scale(dt, d, n, nranks)
#define SCALAR_FN4(DT)	COLLX_FN4(scalar, , SCALAR_LOOP, DT)
#define SCALAR_SCALE_FN(DT) COLLX_SCALE_FN(scalar, , SCALAR_SCALE, DT)

SCALAR_FN4(INT8)
SCALAR_FN4(UINT8)
SCALAR_FN4(INT32)
SCALAR_FN4(UINT32)
SCALAR_FN4(INT64)
SCALAR_FN4(UINT64)
SCALAR_FN4(FP16)
SCALAR_FN4(FP32)
SCALAR_FN4(FP64)
SCALAR_FN4(BF16)
SCALAR_FN4(FP8_E4M3)
SCALAR_FN4(FP8_E5M2)

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
SCALAR_SCALE_FN(FP8_E4M3)
SCALAR_SCALE_FN(FP8_E5M2)

const struct collx_reduce_ops collx_reduce_scalar_ops = {
	.name = "scalar",
	.reduce = {
		COLLX_OPS4(scalar, INT8),
		COLLX_OPS4(scalar, UINT8),
		COLLX_OPS4(scalar, INT32),
		COLLX_OPS4(scalar, UINT32),
		COLLX_OPS4(scalar, INT64),
		COLLX_OPS4(scalar, UINT64),
		COLLX_OPS4(scalar, FP16),
		COLLX_OPS4(scalar, FP32),
		COLLX_OPS4(scalar, FP64),
		COLLX_OPS4(scalar, BF16),
		COLLX_OPS4(scalar, FP8_E4M3),
		COLLX_OPS4(scalar, FP8_E5M2),
	},
	.scale = {
		COLLX_SCALE(scalar, INT8),
		COLLX_SCALE(scalar, UINT8),
		COLLX_SCALE(scalar, INT32),
		COLLX_SCALE(scalar, UINT32),
		COLLX_SCALE(scalar, INT64),
		COLLX_SCALE(scalar, UINT64),
		COLLX_SCALE(scalar, FP16),
		COLLX_SCALE(scalar, FP32),
		COLLX_SCALE(scalar, FP64),
		COLLX_SCALE(scalar, BF16),
		COLLX_SCALE(scalar, FP8_E4M3),
		COLLX_SCALE(scalar, FP8_E5M2),
	},
};
