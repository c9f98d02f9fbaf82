// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite collx_sched: ring, double binary tree (and its roots) and
 * recursive doubling simulated for every rank count 1..64 (each
 * contribution reduced exactly once, every rank ends with everything), and
 * chunking of any count.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "sched_sim.h"

static const u32 collx_nranks[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
	33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
	49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64,
};

static void collx_nranks_desc(const u32 *n, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "nranks_%u", *n);
}

KUNIT_ARRAY_PARAM(collx_nranks, collx_nranks, collx_nranks_desc);

static void collx_sched_ring(struct kunit *test)
{
	u32 n = *(const u32 *)test->param_value;
	u64 *st = kunit_kcalloc(test, n * n, sizeof(u64), GFP_KERNEL);
	u64 *old = kunit_kcalloc(test, n * n, sizeof(u64), GFP_KERNEL);

	KUNIT_ASSERT_TRUE(test, st && old);
	KUNIT_EXPECT_NULL(test,
			  collx_sim_ring(COLLX_RING_ALLREDUCE, n, st, old));
	KUNIT_EXPECT_NULL(test, collx_sim_ring(COLLX_RING_REDUCE_SCATTER, n,
					       st, old));
	KUNIT_EXPECT_NULL(test,
			  collx_sim_ring(COLLX_RING_ALLGATHER, n, st, old));
	KUNIT_EXPECT_EQ(test, collx_ring_nsteps(COLLX_RING_ALLREDUCE, n),
			2 * (n - 1));
}

static void collx_sched_dtree(struct kunit *test)
{
	u32 n = *(const u32 *)test->param_value, r, both = 0;
	struct collx_tree_node *t0, *t1;
	u64 *mask;
	u32 *depth;

	t0 = kunit_kcalloc(test, n, sizeof(*t0), GFP_KERNEL);
	t1 = kunit_kcalloc(test, n, sizeof(*t1), GFP_KERNEL);
	mask = kunit_kcalloc(test, n, sizeof(*mask), GFP_KERNEL);
	depth = kunit_kcalloc(test, n, sizeof(*depth), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, t0 && t1 && mask && depth);
	KUNIT_EXPECT_NULL(test, collx_sim_tree(n, 0, t0, mask, depth));
	KUNIT_EXPECT_NULL(test, collx_sim_tree(n, 1, t1, mask, depth));
	/* the point of two trees: (almost) no rank is inner in both */
	for (r = 0; r < n; r++)
		both += t0[r].nchildren && t1[r].nchildren;
	KUNIT_EXPECT_LE(test, both, 1);
}

static void collx_sched_rd(struct kunit *test)
{
	u32 n = *(const u32 *)test->param_value;
	u64 *st = kunit_kcalloc(test, n, sizeof(u64), GFP_KERNEL);
	u64 *old = kunit_kcalloc(test, n, sizeof(u64), GFP_KERNEL);

	KUNIT_ASSERT_TRUE(test, st && old);
	KUNIT_EXPECT_NULL(test, collx_sim_rd(n, st, old));
}

static void collx_sched_split(struct kunit *test)
{
	u32 n = *(const u32 *)test->param_value;
	static const u64 counts[] = {
		0, 1, 2, 63, 64, 65, 1000, 4095, 1 << 20, (1ULL << 40) + 7,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		KUNIT_EXPECT_NULL(test, collx_sim_split(counts[i], n));
		KUNIT_EXPECT_NULL(test,
				  collx_sim_slices(counts[i] % 100000, n));
	}
}

static void collx_sched_bad_args(struct kunit *test)
{
	struct collx_ring_step st;
	struct collx_tree_node tn;
	struct collx_range rg;
	struct collx_rd_info ri;

	KUNIT_EXPECT_EQ(test, collx_split(10, 0, 0, &rg), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_slice(10, 0, 0, &rg), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			collx_ring_step(COLLX_RING_ALLREDUCE, 4, 4, 0, &st),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			collx_ring_step(COLLX_RING_ALLREDUCE, 4, 0, 6, &st),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, collx_btree(4, 4, &tn), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_dtree(4, 0, 2, &tn), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_dtree_root(4, 2), 0);
	KUNIT_EXPECT_EQ(test, collx_dtree_root(0, 1), 0);
	KUNIT_EXPECT_EQ(test, collx_rd_info(0, 0, &ri), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_rd_peer(8, 0, 3), -1);
	KUNIT_EXPECT_EQ(test, collx_ring_nsteps(COLLX_RING_ALLREDUCE,
						COLLX_SCHED_MAX_RANKS + 1), 0);
}

static struct kunit_case collx_sched_cases[] = {
	KUNIT_CASE_PARAM(collx_sched_ring, collx_nranks_gen_params),
	KUNIT_CASE_PARAM(collx_sched_dtree, collx_nranks_gen_params),
	KUNIT_CASE_PARAM(collx_sched_rd, collx_nranks_gen_params),
	KUNIT_CASE_PARAM(collx_sched_split, collx_nranks_gen_params),
	KUNIT_CASE(collx_sched_bad_args),
	{}
};

static struct kunit_suite collx_sched_suite = {
	.name = "collx_sched",
	.test_cases = collx_sched_cases,
};

kunit_test_suite(collx_sched_suite);
