// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite collx_uapi: every ioctl argument check against the errno
 * include/uapi/linux/collx.h documents, from the table the host tests
 * share.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "uapi_vectors.h"

static void collx_uapi_desc(const struct collx_uapi_vec *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(collx_uapi, collx_uapi_vectors, collx_uapi_desc);

static void collx_uapi_check(struct kunit *test)
{
	const struct collx_uapi_vec *v = test->param_value;
	u64 out = ~0ULL;

	KUNIT_EXPECT_EQ(test, v->fn(v, &out), v->expect);
	if (!v->expect && v->fn == collx_uv_bytes)
		KUNIT_EXPECT_EQ(test, out, v->out);
}

static struct kunit_case collx_uapi_cases[] = {
	KUNIT_CASE_PARAM(collx_uapi_check, collx_uapi_gen_params),
	{}
};

static struct kunit_suite collx_uapi_suite = {
	.name = "collx_uapi",
	.test_cases = collx_uapi_cases,
};

kunit_test_suite(collx_uapi_suite);
