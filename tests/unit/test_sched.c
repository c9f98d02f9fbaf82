// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the schedules: the simulators of kmod/core/sched_sim.h
 * for every rank count 1..64, and chunking of many counts.
 */
#include <stdlib.h>

#include "unit.h"
#include "../../kmod/core/sched_sim.h"

static void check(const char *why, const char *what, unsigned int n)
{
	if (!unit_ok(!why, "sched.%s.nranks_%u", what, n))
		unit_diag("%s", why);
}

void test_sched(void)
{
	static u64 st[64 * 64], old[64 * 64];
	static struct collx_tree_node nodes[64], n1[64];
	static u32 depth[64];
	unsigned int n, both, r, bad;
	const char *why;
	u64 count;
	int t;

	for (n = 1; n <= 64; n++) {
		check(collx_sim_ring(COLLX_RING_ALLREDUCE, n, st, old), "ring_allreduce", n);
		check(collx_sim_ring(COLLX_RING_REDUCE_SCATTER, n, st, old),
		      "ring_reduce_scatter", n);
		check(collx_sim_ring(COLLX_RING_ALLGATHER, n, st, old), "ring_allgather", n);
		check(collx_sim_tree(n, 0, nodes, st, depth), "dtree0", n);
		check(collx_sim_tree(n, 1, n1, st, depth), "dtree1", n);
		check(collx_sim_rd(n, st, old), "recursive_doubling", n);
		/* double tree: how many ranks are inner nodes of both trees */
		for (both = 0, r = 0; r < n; r++)
			both += nodes[r].nchildren && n1[r].nchildren;
		if (!unit_ok(n < 3 || both <= 1, "sched.dtree_inner_in_one_tree.nranks_%u", n))
			unit_diag("%u ranks inner in both trees", both);
	}

	bad = 0;
	why = NULL;
	for (t = 0; t < 20000 && !why; t++) {
		count = t < 10000 ? (u64)t : unit_rand() >> (unit_rand() % 64);
		why = collx_sim_split(count, 1 + unit_rand() % 200);
		if (!why)
			why = collx_sim_slices(count % 1000000,
					       1 + (unit_rand() >> (unit_rand() % 64)) % 5000);
		bad += !!why;
	}
	if (!unit_ok(!why, "sched.split_and_slices_tile_any_count (20000 counts)"))
		unit_diag("%s", why);
	unit_ok(collx_slice_elems(1 << 20, 4) == 262144 && collx_slice_elems(1, 8) == 1 &&
		collx_slice_elems(100, 0) == 0, "sched.slice_elems");
	unit_ok(collx_nslices(0, 10) == 0 && collx_nslices(10, 0) == 0 &&
		collx_nslices(10, 3) == 4 && collx_nslices(~0ULL, 1) == ~0ULL,
		"sched.nslices_edges");
	unit_ok(collx_split(5, 0, 0, (struct collx_range[1]){}) == -EINVAL,
		"sched.split_zero_parts_einval");
	unit_ok(collx_dtree_root(8, 1) == 7 && collx_dtree_root(7, 1) == 1 &&
		collx_dtree_root(1, 1) == 0 && collx_dtree_root(9, 0) == 0 &&
		collx_dtree_root(9, 2) == 0 && collx_dtree_root(0, 1) == 0,
		"sched.dtree_root");
	unit_ok(collx_ring_nsteps(COLLX_RING_ALLREDUCE, 0) == 0 &&
		collx_ring_nsteps(COLLX_RING_ALLREDUCE, 1) == 0 &&
		collx_ring_nsteps(COLLX_RING_ALLREDUCE, 8) == 14,
		"sched.ring_nsteps");
	/* far beyond what the simulators cover: no overflow, sane answers */
	{
		struct collx_ring_step s;
		struct collx_tree_node tn;

		unit_ok(!collx_ring_step(COLLX_RING_ALLREDUCE, COLLX_SCHED_MAX_RANKS, 1000,
					 2 * COLLX_SCHED_MAX_RANKS - 3, &s) && s.send_chunk == 1002 &&
			collx_ring_nsteps(COLLX_RING_ALLREDUCE, COLLX_SCHED_MAX_RANKS + 1) == 0 &&
			!collx_btree(1000000, 999999, &tn) && tn.parent >= 0 &&
			collx_rd_peer(1000000, 999999, 18) >= 0,
			"sched.large_rank_counts");
	}
	(void)bad;
}
