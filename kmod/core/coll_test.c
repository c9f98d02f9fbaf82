// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite collx_coll: the collective schedules of coll.c run in the
 * simulator of coll_sim.h (every collective and algorithm, 1..16 ranks,
 * every root, in and out of place, counts 0, 1, n - 1, a prime and more
 * than n slices, sum and avg, slice sizes and credits in turn), the
 * static checks of single ranks up to 1024 ranks, the API's errors, and
 * broken schedules the simulator must catch.  Fixed seed.
 */
#include <kunit/test.h>
#include <linux/vmalloc.h>

#include "coll_sim.h"

#define COLLX_COLL_TEST_ARENA	(16 << 20)
#define COLLX_COLL_TEST_SEED	0x9e3779b97f4a7c15ULL

struct collx_coll_combo {
	const char *name;
	u32 coll;
	u32 algo;
};

static const struct collx_coll_combo collx_coll_combos[] = {
	{ "allreduce_ring", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING },
	{ "allreduce_tree", COLLX_COLL_ALLREDUCE, COLLX_ALGO_TREE },
	{ "allreduce_rd", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RD },
	{ "broadcast_ring", COLLX_COLL_BROADCAST, COLLX_ALGO_RING },
	{ "broadcast_tree", COLLX_COLL_BROADCAST, COLLX_ALGO_TREE },
	{ "reduce_ring", COLLX_COLL_REDUCE, COLLX_ALGO_RING },
	{ "reduce_tree", COLLX_COLL_REDUCE, COLLX_ALGO_TREE },
	{ "allgather_ring", COLLX_COLL_ALLGATHER, COLLX_ALGO_RING },
	{ "allgather_rd", COLLX_COLL_ALLGATHER, COLLX_ALGO_RD },
	{ "reduce_scatter_ring", COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RING },
	{ "reduce_scatter_rd", COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RD },
	{ "alltoall_ring", COLLX_COLL_ALLTOALL, COLLX_ALGO_RING },
	{ "alltoall_pairwise", COLLX_COLL_ALLTOALL, COLLX_ALGO_PAIRWISE },
	{ "barrier_ring", COLLX_COLL_BARRIER, COLLX_ALGO_RING },
	{ "barrier_rd", COLLX_COLL_BARRIER, COLLX_ALGO_RD },
	{ "send_recv_p2p", COLLX_COLL_SEND, COLLX_ALGO_P2P },
};

static void collx_coll_combo_desc(const struct collx_coll_combo *c,
				  char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(collx_coll_combo, collx_coll_combos, collx_coll_combo_desc);

static void collx_coll_mut_desc(const struct collx_csim_mut *m, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", m->name);
}

KUNIT_ARRAY_PARAM(collx_coll_mut, collx_csim_muts, collx_coll_mut_desc);

/* 0 stands for count + 1: one slice holds the whole transfer */
static const u64 collx_coll_slices[] = { 1, 2, 3, 7, 0 };
static const u32 collx_coll_credits[] = { 1, 4 };

static u64 collx_coll_count(u32 coll, u32 n, u32 kind, u64 slice)
{
	bool blocked = coll == COLLX_COLL_ALLGATHER ||
		       coll == COLLX_COLL_REDUCE_SCATTER ||
		       coll == COLLX_COLL_ALLTOALL;
	const u64 c[] = {
		0, 1, n - 1, 37, blocked ? 2 * slice + 3 : n * slice + 3,
	};

	return coll == COLLX_COLL_BARRIER ? 0 : c[kind];
}

struct collx_coll_run {
	struct kunit *test;
	void *arena;
	u64 seed;
	u32 turn;
	u32 runs;
	u32 failed;
};

static void collx_coll_one(struct collx_coll_run *run,
			   struct collx_csim_cfg *cfg, u32 kind)
{
	u32 si = run->turn % ARRAY_SIZE(collx_coll_slices);
	u32 ki = run->turn / ARRAY_SIZE(collx_coll_slices) %
		 ARRAY_SIZE(collx_coll_credits);
	struct collx_csim_res res;
	u64 slice = collx_coll_slices[si] ? collx_coll_slices[si] : 7;

	run->turn++;
	cfg->a.count = collx_coll_count(cfg->a.coll, cfg->a.nranks, kind,
					slice);
	cfg->slice = collx_coll_slices[si] ? slice : cfg->a.count + 1;
	cfg->credits = collx_coll_credits[ki];
	cfg->seed = run->seed;
	/* an LCG step: a new seed per run, the same every boot */
	run->seed = run->seed * 6364136223846793005ULL + 1;
	run->runs++;
	if (!collx_csim_run(cfg, run->arena, COLLX_COLL_TEST_ARENA, &res))
		return;
	if (!run->failed++)
		KUNIT_FAIL(run->test,
			   "nranks %u root %u sender %u count %llu inplace %d redop %u slice %llu credits %u: %s (rank %d xfer %d elem %llu)",
			   cfg->a.nranks, cfg->a.root, cfg->sender,
			   cfg->a.count, cfg->a.inplace, cfg->a.redop,
			   cfg->slice, cfg->credits, res.why, res.rank,
			   res.xfer, res.elem);
}

/* Every root, sender, in-place form, count and redop at @n ranks. */
static void collx_coll_sweep(struct collx_coll_run *run,
			     const struct collx_coll_combo *c, u32 n)
{
	bool send = c->coll == COLLX_COLL_SEND;
	u32 nroot = send || c->coll == COLLX_COLL_BROADCAST ||
		    c->coll == COLLX_COLL_REDUCE ? n : 1;
	u32 nsend = send ? n : 1;
	u32 nip = c->coll <= COLLX_COLL_REDUCE_SCATTER ? 2 : 1;
	u32 nkind = c->coll == COLLX_COLL_BARRIER ? 1 : 5;
	u32 nop = c->coll == COLLX_COLL_ALLREDUCE ||
		  c->coll == COLLX_COLL_REDUCE ||
		  c->coll == COLLX_COLL_REDUCE_SCATTER ? 2 : 1;
	u32 i, x, kind, total = nroot * nsend * nip * nkind * nop;
	struct collx_csim_cfg cfg;

	for (i = 0; i < total; i++) {
		memset(&cfg, 0, sizeof(cfg));
		x = i;
		cfg.a.redop = x % nop ? COLLX_OP_AVG : COLLX_OP_SUM;
		x /= nop;
		kind = x % nkind;
		x /= nkind;
		cfg.a.inplace = x % nip;
		x /= nip;
		cfg.sender = x % nsend;
		cfg.a.root = x / nsend;
		if (send && cfg.sender == cfg.a.root)
			continue;
		cfg.a.coll = c->coll;
		cfg.a.algo = c->algo;
		cfg.a.nranks = n;
		collx_coll_one(run, &cfg, kind);
	}
}

static void collx_coll_sim(struct kunit *test)
{
	const struct collx_coll_combo *c = test->param_value;
	struct collx_coll_run run = {
		.test = test, .seed = COLLX_COLL_TEST_SEED,
	};
	u32 n;

	run.arena = vmalloc(COLLX_COLL_TEST_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, run.arena);
	for (n = c->coll == COLLX_COLL_SEND ? 2 : 1; n <= 16; n++)
		collx_coll_sweep(&run, c, n);
	vfree(run.arena);
	KUNIT_EXPECT_EQ(test, run.failed, 0);
	kunit_info(test, "%u simulations\n", run.runs);
}

/* One rank: p2p runs every collective (a copy and a scale at most). */
static void collx_coll_one_rank(struct kunit *test)
{
	struct collx_coll_run run = {
		.test = test, .seed = COLLX_COLL_TEST_SEED,
	};
	struct collx_csim_cfg cfg;
	u32 c, ip, kind;

	run.arena = vmalloc(COLLX_COLL_TEST_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, run.arena);
	for (c = 0; c < COLLX_COLL_SEND; c++)
		for (ip = 0; ip < (c <= COLLX_COLL_REDUCE_SCATTER ? 2 : 1);
		     ip++)
			for (kind = 0; kind < (c == COLLX_COLL_BARRIER ? 1 : 5);
			     kind++) {
				memset(&cfg, 0, sizeof(cfg));
				cfg.a.coll = c;
				cfg.a.algo = COLLX_ALGO_P2P;
				cfg.a.nranks = 1;
				cfg.a.inplace = ip;
				cfg.a.redop = COLLX_OP_AVG;
				collx_coll_one(&run, &cfg, kind);
			}
	vfree(run.arena);
	KUNIT_EXPECT_EQ(test, run.failed, 0);
}

/* Beyond what can be simulated: single ranks' schedules, 17..1024 ranks. */
static void collx_coll_large(struct kunit *test)
{
	const struct collx_coll_combo *c = test->param_value;
	static const u32 ns[] = { 17, 64, 100, 255, 256, 1023, 1024 };
	struct collx_csim_cfg cfg;
	struct collx_csim_res res;
	u32 i, k, ranks[4];
	void *arena;

	arena = vmalloc(COLLX_COLL_TEST_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, arena);
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		ranks[0] = 0;
		ranks[1] = 1;
		ranks[2] = ns[i] / 2;
		ranks[3] = ns[i] - 1;
		for (k = 0; k < ARRAY_SIZE(ranks); k++) {
			memset(&cfg, 0, sizeof(cfg));
			cfg.a.coll = c->coll;
			cfg.a.algo = c->algo;
			cfg.a.nranks = ns[i];
			cfg.a.root = ns[i] / 3;
			cfg.a.redop = COLLX_OP_AVG;
			cfg.a.inplace = k & 1 &&
					c->coll <= COLLX_COLL_REDUCE_SCATTER;
			cfg.sender = ranks[k] == cfg.a.root ? 0 : ranks[k];
			cfg.slice = 3;
			cfg.a.count = collx_coll_count(c->coll, ns[i], 4, 3);
			collx_csim_check_rank(&cfg, ranks[k], arena,
					      COLLX_COLL_TEST_ARENA, &res);
			KUNIT_EXPECT_NULL_MSG(test, res.why,
					      "nranks %u rank %u: %s (xfer %d elem %llu)",
					      ns[i], ranks[k], res.why,
					      res.xfer, res.elem);
		}
	}
	vfree(arena);
}

/* The simulator catches each broken schedule, and passes it unbroken. */
static void collx_coll_catches(struct kunit *test)
{
	const struct collx_csim_mut *m = test->param_value;
	struct collx_csim_cfg cfg;
	struct collx_csim_res res;
	void *arena;

	arena = vmalloc(COLLX_COLL_TEST_ARENA);
	KUNIT_ASSERT_NOT_NULL(test, arena);
	collx_csim_mut_cfg(m, &cfg, 2, 1, COLLX_COLL_TEST_SEED);
	collx_csim_run(&cfg, arena, COLLX_COLL_TEST_ARENA, &res);
	KUNIT_EXPECT_TRUE_MSG(test, res.why && strstr(res.why, m->why),
			      "expected \"%s\", got \"%s\"", m->why,
			      res.why ? res.why : "(nothing)");
	cfg.mutate = NULL;
	collx_csim_run(&cfg, arena, COLLX_COLL_TEST_ARENA, &res);
	KUNIT_EXPECT_NULL(test, res.why);
	vfree(arena);
}

static int collx_coll_build_room(const struct collx_coll_args *a, u32 room)
{
	static struct collx_xfer x[64];
	struct collx_sched s = { .x = x, .max = min_t(u32, room, 64) };

	return collx_coll_build(a, &s);
}

static void collx_coll_api(struct kunit *test)
{
	struct collx_coll_args a = {
		.coll = COLLX_COLL_ALLREDUCE, .algo = COLLX_ALGO_RING,
		.nranks = 4, .rank = 1, .count = 100,
	};
	u32 c;

	KUNIT_EXPECT_EQ(test, collx_coll_supported(COLLX_COLL_BARRIER,
						   COLLX_ALGO_RING), 0);
	KUNIT_EXPECT_EQ(test, collx_coll_supported(COLLX_COLL_BARRIER,
						   COLLX_ALGO_TREE),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, collx_coll_supported(COLLX_COLL_SEND,
						   COLLX_ALGO_RING),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, collx_coll_supported(COLLX_COLL_ALLTOALL,
						   COLLX_ALGO_RD),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, collx_coll_supported(COLLX_COLL_ALLREDUCE,
						   COLLX_ALGO_AUTO), -EINVAL);
	KUNIT_EXPECT_EQ(test, collx_coll_build_room(&a, 64), 0);
	KUNIT_EXPECT_EQ(test, collx_coll_build_room(&a, 3), -ENOSPC);
	a.algo = COLLX_ALGO_P2P;
	KUNIT_EXPECT_EQ(test, collx_coll_build_room(&a, 64), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, collx_coll_max_xfers(&a), 0);
	a.algo = COLLX_ALGO_RING;
	a.rank = 4;
	KUNIT_EXPECT_EQ(test, collx_coll_build_room(&a, 64), -EINVAL);
	for (c = 0; c < COLLX_COLL_COUNT; c++)
		KUNIT_EXPECT_EQ(test, collx_algo_choose(c, 1 << 20, 1),
				COLLX_ALGO_P2P);
	KUNIT_EXPECT_EQ(test,
			collx_algo_choose(COLLX_COLL_ALLREDUCE, 1024, 8),
			COLLX_ALGO_RD);
	KUNIT_EXPECT_EQ(test, collx_algo_choose(COLLX_COLL_ALLREDUCE,
						1 << 30, 8), COLLX_ALGO_RING);
	KUNIT_EXPECT_EQ(test, collx_algo_choose(COLLX_COLL_ALLTOALL, 1, 8),
			COLLX_ALGO_PAIRWISE);
}

static struct kunit_case collx_coll_cases[] = {
	KUNIT_CASE(collx_coll_api),
	KUNIT_CASE(collx_coll_one_rank),
	KUNIT_CASE_PARAM(collx_coll_sim, collx_coll_combo_gen_params),
	KUNIT_CASE_PARAM(collx_coll_large, collx_coll_combo_gen_params),
	KUNIT_CASE_PARAM(collx_coll_catches, collx_coll_mut_gen_params),
	{}
};

static struct kunit_suite collx_coll_suite = {
	.name = "collx_coll",
	.test_cases = collx_coll_cases,
};

kunit_test_suite(collx_coll_suite);
