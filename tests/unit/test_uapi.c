// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the ioctl argument checks: the table KUnit runs too.
 */
#include "unit.h"
#include "../../kmod/core/uapi_vectors.h"

void test_uapi(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(collx_uapi_vectors); i++) {
		const struct collx_uapi_vec *v = &collx_uapi_vectors[i];
		u64 out = ~0ULL;
		int ret = v->fn(v, &out);

		if (!unit_ok(ret == v->expect && (ret || v->fn != collx_uv_bytes ||
						  out == v->out),
			     "uapi.%s", v->name))
			unit_diag("returned %d (want %d), out %llu", ret, v->expect,
				  (unsigned long long)out);
	}
}
