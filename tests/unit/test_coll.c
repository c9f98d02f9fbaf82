// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the collective schedules (kmod/core/coll*.c): every
 * collective x algorithm x 1..64 ranks x in/out of place x counts x roots
 * x sum/avg run in the simulator of kmod/core/coll_sim.h, each with a
 * slice size and credit count taken in turn from {1, 2, 3, 7, count + 1}
 * x {1, 4} (every pair of them for 2..8 ranks); the static checks of one
 * rank's schedule up to 1024 ranks; the API (supported, choice,
 * -EINVAL/-EOPNOTSUPP/-ENOSPC); and broken schedules the simulator must
 * catch.  COLLX_SEED changes the random choices; COLLX_SIM_MAX_RANKS=N
 * (2..64) stops the full simulations at N ranks (arm64 under qemu-user:
 * 17..64 ranks cost over 90 % of the time there and exercise the same
 * integer code as on the host, where they always run).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"
#include "../../kmod/core/coll_sim.h"

#define ARENA_BYTES	(192u << 20)

static void *arena;

static const char *const coll_names[COLLX_COLL_COUNT] = {
	"allreduce", "broadcast", "reduce", "allgather", "reduce_scatter",
	"alltoall", "barrier", "send", "recv",
};

static const char *const algo_names[COLLX_ALGO_COUNT] = {
	"auto", "ring", "tree", "rd", "pairwise", "p2p",
};

struct combo {
	u32 coll;
	u32 algo;
};

/* every collective with every algorithm that runs it at any rank count */
static const struct combo combos[] = {
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING },
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_TREE },
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_RD },
	{ COLLX_COLL_BROADCAST, COLLX_ALGO_RING },
	{ COLLX_COLL_BROADCAST, COLLX_ALGO_TREE },
	{ COLLX_COLL_REDUCE, COLLX_ALGO_RING },
	{ COLLX_COLL_REDUCE, COLLX_ALGO_TREE },
	{ COLLX_COLL_ALLGATHER, COLLX_ALGO_RING },
	{ COLLX_COLL_ALLGATHER, COLLX_ALGO_RD },
	{ COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RING },
	{ COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RD },
	{ COLLX_COLL_ALLTOALL, COLLX_ALGO_RING },
	{ COLLX_COLL_ALLTOALL, COLLX_ALGO_PAIRWISE },
	{ COLLX_COLL_BARRIER, COLLX_ALGO_RING },
	{ COLLX_COLL_BARRIER, COLLX_ALGO_RD },
	{ COLLX_COLL_SEND, COLLX_ALGO_P2P },
};

/* 0 stands for count + 1: one slice holds the whole transfer */
static const u64 slice_sizes[] = { 1, 2, 3, 7, 0 };
static const u32 credit_counts[] = { 1, 4 };
#define NCOUNTS	5

static bool reducing(u32 coll)
{
	return coll == COLLX_COLL_ALLREDUCE || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_REDUCE_SCATTER;
}

static bool has_inplace(u32 coll)
{
	return coll <= COLLX_COLL_REDUCE_SCATTER;
}

static bool rooted(u32 coll)
{
	return coll == COLLX_COLL_BROADCAST || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_SEND;
}

/*
 * Counts {0, 1, n - 1, a prime, more than n slices}: per rank for the
 * collectives whose buffers hold n blocks of count (so n * count > n * S
 * from 2 * S + 3 on), of the whole vector for the others.
 */
static u64 count_of(u32 coll, u32 n, u32 kind, u64 slice)
{
	bool blocked = coll == COLLX_COLL_ALLGATHER ||
		       coll == COLLX_COLL_REDUCE_SCATTER ||
		       coll == COLLX_COLL_ALLTOALL;
	const u64 c[NCOUNTS] = {
		0, 1, n - 1, 37, blocked ? 2 * slice + 3 : n * slice + 3,
	};

	return coll == COLLX_COLL_BARRIER ? 0 : c[kind];
}

static void dump_sched(const struct collx_csim_cfg *cfg, u32 rank)
{
	struct collx_coll_args a = cfg->a;
	struct collx_xfer x[64 * 8 + 16];
	struct collx_sched s = { .x = x, .max = ARRAY_SIZE(x) };
	u32 j, k;

	a.rank = rank;
	if (a.coll == COLLX_COLL_SEND && rank == a.root) {
		a.coll = COLLX_COLL_RECV;
		a.root = cfg->sender;
	}
	if (collx_coll_build(&a, &s))
		return;
	unit_diag("rank %u: %u transfers, tmp %llu", rank, s.n,
		  (unsigned long long)s.tmp_count);
	for (j = 0; j < s.n && j < 40; j++) {
		char deps[64] = "";
		size_t at = 0;

		for (k = 0; k < x[j].ndeps; k++)
			at += snprintf(deps + at, sizeof(deps) - at, " %s%u",
				       x[j].dep_sliced & BIT(k) ? "s" : "",
				       x[j].deps[k]);
		unit_diag("  %2u kind %u peer %u src %u@%llu dst %u@%llu count %llu phase %u step %u deps%s",
			  j, x[j].kind, x[j].peer, x[j].src,
			  (unsigned long long)x[j].src_off, x[j].dst,
			  (unsigned long long)x[j].dst_off,
			  (unsigned long long)x[j].count, x[j].phase,
			  x[j].step, deps);
	}
}

static void report(const struct collx_csim_cfg *cfg,
		   const struct collx_csim_res *res)
{
	unit_diag("%s/%s nranks %u root %u sender %u count %llu %s %s slice %llu credits %u seed 0x%llx: %s (rank %d xfer %d elem %llu)",
		  coll_names[cfg->a.coll], algo_names[cfg->a.algo],
		  cfg->a.nranks, cfg->a.root, cfg->sender,
		  (unsigned long long)cfg->a.count,
		  cfg->a.inplace ? "in-place" : "out-of-place",
		  cfg->a.redop == COLLX_OP_AVG ? "avg" : "sum",
		  (unsigned long long)cfg->slice, cfg->credits,
		  (unsigned long long)cfg->seed, res->why, res->rank,
		  res->xfer, (unsigned long long)res->elem);
	if (res->rank >= 0)
		dump_sched(cfg, (u32)res->rank);
}

struct tally {
	unsigned int runs;
	unsigned int bad;
	bool shown;
};

static unsigned int rot;

/* Run one collective with the next slice size and credit count in turn. */
static void sim_one(struct collx_csim_cfg *cfg, u32 kind, int sidx, int kidx,
		    struct tally *t)
{
	struct collx_csim_res res;
	u64 slice;

	if (sidx < 0) {
		sidx = rot % ARRAY_SIZE(slice_sizes);
		kidx = rot / ARRAY_SIZE(slice_sizes) % ARRAY_SIZE(credit_counts);
		rot++;
	}
	slice = slice_sizes[sidx] ? slice_sizes[sidx] : 7;
	cfg->a.count = count_of(cfg->a.coll, cfg->a.nranks, kind, slice);
	cfg->slice = slice_sizes[sidx] ? slice_sizes[sidx] : cfg->a.count + 1;
	cfg->credits = credit_counts[kidx];
	cfg->seed = unit_rand();
	t->runs++;
	if (!collx_csim_run(cfg, arena, ARENA_BYTES, &res))
		return;
	t->bad++;
	if (!t->shown) {
		t->shown = true;
		report(cfg, &res);
	}
}

/*
 * Beyond 16 ranks a run costs about n^2 (n ranks moving n slices each):
 * there every SAMPLE-th combination of (root, in place, count, redop)
 * runs, which one rotating with n, so that each still runs at 16 of the
 * 48 rank counts 17..64.  Up to 16 ranks every combination runs.
 */
#define SAMPLE		3
#define SAMPLE_FROM	17

/*
 * Every in-place form, count, root (all of them up to 16 ranks, else the
 * first, second, middle and last) and redop of one collective and
 * algorithm at @n ranks.  @sidx < 0: slice sizes and credits in turn.
 */
static void sim_sweep(u32 coll, u32 algo, u32 n, int sidx, int kidx,
		      struct tally *t)
{
	u32 roots[64], nroots = 0, r, ip, kind, op, s, combo = 0;
	u32 nkinds = coll == COLLX_COLL_BARRIER ? 1 : NCOUNTS;
	bool sample = n >= SAMPLE_FROM && coll != COLLX_COLL_BARRIER;
	struct collx_csim_cfg cfg;

	if (!rooted(coll) || n <= 16) {
		for (r = 0; r < (rooted(coll) ? n : 1); r++)
			roots[nroots++] = r;
	} else {
		roots[nroots++] = 0;
		roots[nroots++] = 1;
		roots[nroots++] = n / 2;
		roots[nroots++] = n - 1;
	}
	for (r = 0; r < nroots; r++)
		/* send: every sender up to 16 ranks, else the next rank */
		for (s = 0; s < (coll == COLLX_COLL_SEND ? n : 1); s++) {
			if (coll == COLLX_COLL_SEND &&
			    (s == roots[r] || (n > 16 && s != (roots[r] + 1) % n)))
				continue;
			for (ip = 0; ip <= (u32)has_inplace(coll); ip++)
				for (kind = 0; kind < nkinds; kind++)
					for (op = 0; op <= (u32)reducing(coll); op++) {
						if (sample && (combo++ + n) % SAMPLE)
							continue;
						memset(&cfg, 0, sizeof(cfg));
						cfg.a.coll = coll;
						cfg.a.algo = algo;
						cfg.a.nranks = n;
						cfg.a.root = roots[r];
						cfg.a.inplace = ip;
						cfg.a.redop = op ? COLLX_OP_AVG : COLLX_OP_SUM;
						cfg.sender = s;
						sim_one(&cfg, kind, sidx, kidx, t);
					}
		}
}

static u32 sim_max_ranks = 64;

static void test_sim_all(void)
{
	struct tally t;
	size_t i;
	u32 n, c;

	for (i = 0; i < ARRAY_SIZE(combos); i++)
		for (n = 1; n <= sim_max_ranks; n++) {
			if (combos[i].coll == COLLX_COLL_SEND && n == 1)
				continue;
			memset(&t, 0, sizeof(t));
			sim_sweep(combos[i].coll, combos[i].algo, n, -1, 0, &t);
			unit_ok(!t.bad, "coll.sim.%s.%s.nranks_%u (%u runs, %u failed)",
				coll_names[combos[i].coll],
				algo_names[combos[i].algo], n, t.runs, t.bad);
		}
	/* one rank: p2p runs every collective as a local copy */
	for (c = 0; c < COLLX_COLL_SEND; c++) {
		memset(&t, 0, sizeof(t));
		sim_sweep(c, COLLX_ALGO_P2P, 1, -1, 0, &t);
		unit_ok(!t.bad, "coll.sim.%s.p2p.nranks_1 (%u runs)",
			coll_names[c], t.runs);
	}
}

/* Every slice size with every credit count, for small rank counts. */
static void test_sim_slices(void)
{
	static const u32 ns[] = { 2, 3, 4, 5, 6, 7, 8 };
	struct tally t;
	size_t i, k;
	int si, ki;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		memset(&t, 0, sizeof(t));
		for (k = 0; k < ARRAY_SIZE(ns); k++)
			for (si = 0; si < (int)ARRAY_SIZE(slice_sizes); si++)
				for (ki = 0; ki < (int)ARRAY_SIZE(credit_counts);
				     ki++)
					sim_sweep(combos[i].coll,
						  combos[i].algo, ns[k], si,
						  ki, &t);
		unit_ok(!t.bad, "coll.sim_every_slice_and_credit.%s.%s (%u runs)",
			coll_names[combos[i].coll], algo_names[combos[i].algo],
			t.runs);
	}
}

/* Broken schedules: the simulator must say what is wrong with each. */
static void test_sim_catches(void)
{
	struct collx_csim_cfg cfg;
	struct collx_csim_res res;
	size_t i;
	int dyn;

	for (i = 0; i < ARRAY_SIZE(collx_csim_muts); i++) {
		const struct collx_csim_mut *m = &collx_csim_muts[i];

		collx_csim_mut_cfg(m, &cfg, 2, 1, unit_rand());
		collx_csim_run(&cfg, arena, ARENA_BYTES, &res);
		if (!unit_ok(res.why && strstr(res.why, m->why),
			     "coll.sim_catches.%s", m->name))
			unit_diag("expected \"%s\", got \"%s\"", m->why,
				  res.why ? res.why : "(nothing)");
		/* the same schedule unbroken passes */
		cfg.mutate = NULL;
		collx_csim_run(&cfg, arena, ARENA_BYTES, &res);
		if (!unit_ok(!res.why, "coll.sim_passes_unbroken.%s", m->name))
			report(&cfg, &res);
	}
	/* hazards are caught by the run alone, not only statically */
	for (dyn = 0; dyn < 3; dyn++) {
		const struct collx_csim_mut *m = &collx_csim_muts[dyn];
		unsigned int caught = 0, tries;

		for (tries = 0; tries < 20; tries++) {
			collx_csim_mut_cfg(m, &cfg, 1 + tries % 3, 4,
					   unit_rand());
			cfg.dynamic_only = true;
			caught += !!collx_csim_run(&cfg, arena, ARENA_BYTES,
						   &res);
		}
		unit_ok(caught, "coll.sim_run_catches.%s (%u of 20 seeds)",
			m->name, caught);
	}
}

/* Beyond 64 ranks: one rank's schedule at a time, static checks only. */
static void test_large(void)
{
	static const u32 ns[] = { 65, 100, 127, 128, 129, 255, 256, 511, 512,
				  1000, 1023, 1024 };
	struct collx_csim_cfg cfg;
	struct collx_csim_res res;
	unsigned int runs, bad;
	size_t i, k;
	u32 n, r, ranks[5], kind, ip;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		runs = 0;
		bad = 0;
		for (k = 0; k < ARRAY_SIZE(ns); k++) {
			n = ns[k];
			ranks[0] = 0;
			ranks[1] = 1;
			ranks[2] = n / 2;
			ranks[3] = n - 1;
			ranks[4] = unit_rand() % n;
			for (r = 0; r < 5; r++)
				for (kind = 1; kind < NCOUNTS; kind += 3)
					for (ip = 0; ip <= (u32)has_inplace(combos[i].coll); ip++) {
						memset(&cfg, 0, sizeof(cfg));
						cfg.a.coll = combos[i].coll;
						cfg.a.algo = combos[i].algo;
						cfg.a.nranks = n;
						cfg.a.inplace = ip;
						cfg.a.redop = COLLX_OP_AVG;
						cfg.a.root = rooted(cfg.a.coll) ?
							unit_rand() % n : 0;
						cfg.sender = (cfg.a.root + 1) % n;
						if (cfg.a.coll == COLLX_COLL_SEND)
							cfg.sender = ranks[r] == cfg.a.root ?
								(cfg.a.root + 1) % n : ranks[r];
						cfg.slice = 1 + unit_rand() % 7;
						cfg.a.count = count_of(cfg.a.coll, n, kind,
								       cfg.slice);
						runs++;
						if (!collx_csim_check_rank(&cfg, ranks[r], arena,
									   ARENA_BYTES, &res))
							continue;
						if (!bad++)
							report(&cfg, &res);
					}
		}
		unit_ok(!bad, "coll.large_ranks.%s.%s (65..1024 ranks, %u schedules)",
			coll_names[combos[i].coll], algo_names[combos[i].algo],
			runs);
	}
}

static void test_supported(void)
{
	/* columns: enum collx_coll order; rows: enum collx_algo */
	static const char *const want[COLLX_ALGO_COUNT] = {
		[COLLX_ALGO_RING] = "yyyyyyynn",
		[COLLX_ALGO_TREE] = "yyynnnnnn",
		[COLLX_ALGO_RD] = "ynnyynynn",
		[COLLX_ALGO_PAIRWISE] = "nnnnnynnn",
		[COLLX_ALGO_P2P] = "yyyyyyyyy",
	};
	unsigned int bad = 0;
	u32 c, a;

	for (a = COLLX_ALGO_RING; a < COLLX_ALGO_COUNT; a++)
		for (c = 0; c < COLLX_COLL_COUNT; c++)
			bad += collx_coll_supported(c, a) !=
			       (want[a][c] == 'y' ? 0 : -EOPNOTSUPP);
	unit_ok(!bad, "coll.supported_table (%u wrong)", bad);
	unit_ok(collx_coll_supported(COLLX_COLL_COUNT, COLLX_ALGO_RING) ==
		-EINVAL &&
		collx_coll_supported(COLLX_COLL_ALLREDUCE, COLLX_ALGO_AUTO) ==
		-EINVAL &&
		collx_coll_supported(COLLX_COLL_ALLREDUCE, COLLX_ALGO_COUNT) ==
		-EINVAL, "coll.supported_einval");
}

static int build(const struct collx_coll_args *a, u32 room)
{
	static struct collx_xfer x[8 * 1024 + 16];
	struct collx_sched s = { .x = x, .max = room };

	return collx_coll_build(a, &s);
}

static struct collx_coll_args args(u32 coll, u32 algo, u32 n, u32 rank,
				   u32 root, u64 count, bool ip, u32 redop)
{
	struct collx_coll_args a = {
		.coll = coll, .algo = algo, .nranks = n, .rank = rank,
		.root = root, .count = count, .inplace = ip, .redop = redop,
	};

	return a;
}

#define AR	COLLX_COLL_ALLREDUCE
#define RING	COLLX_ALGO_RING

static void test_errors(void)
{
	const struct {
		const char *what;
		struct collx_coll_args a;
		int err;
	} cases[] = {
		{ "nranks 0", args(AR, RING, 0, 0, 0, 10, 0, 0), -EINVAL },
		{ "nranks past the limit",
		  args(AR, RING, COLLX_MAX_RANKS + 1, 0, 0, 10, 0, 0), -EINVAL },
		{ "rank past nranks", args(AR, RING, 4, 4, 0, 10, 0, 0), -EINVAL },
		{ "coll out of range",
		  args(COLLX_COLL_COUNT, RING, 4, 0, 0, 10, 0, 0), -EINVAL },
		{ "algo auto", args(AR, COLLX_ALGO_AUTO, 4, 0, 0, 10, 0, 0),
		  -EINVAL },
		{ "algo out of range",
		  args(AR, COLLX_ALGO_COUNT, 4, 0, 0, 10, 0, 0), -EINVAL },
		{ "redop out of range",
		  args(AR, RING, 4, 0, 0, 10, 0, COLLX_OP_COUNT), -EINVAL },
		{ "broadcast root past nranks",
		  args(COLLX_COLL_BROADCAST, RING, 4, 0, 4, 10, 0, 0), -EINVAL },
		{ "send to itself",
		  args(COLLX_COLL_SEND, COLLX_ALGO_P2P, 4, 1, 1, 10, 0, 0),
		  -EINVAL },
		{ "recv past nranks",
		  args(COLLX_COLL_RECV, COLLX_ALGO_P2P, 4, 1, 9, 10, 0, 0),
		  -EINVAL },
		{ "alltoall in place",
		  args(COLLX_COLL_ALLTOALL, RING, 4, 0, 0, 10, 1, 0), -EINVAL },
		{ "barrier with a count",
		  args(COLLX_COLL_BARRIER, RING, 4, 0, 0, 1, 0, 0), -EINVAL },
		{ "allgather count overflows",
		  args(COLLX_COLL_ALLGATHER, RING, 4, 0, 0, ~0ULL / 2, 0, 0),
		  -EINVAL },
		{ "tree barrier",
		  args(COLLX_COLL_BARRIER, COLLX_ALGO_TREE, 4, 0, 0, 0, 0, 0),
		  -EOPNOTSUPP },
		{ "tree allgather",
		  args(COLLX_COLL_ALLGATHER, COLLX_ALGO_TREE, 4, 0, 0, 9, 0, 0),
		  -EOPNOTSUPP },
		{ "rd broadcast",
		  args(COLLX_COLL_BROADCAST, COLLX_ALGO_RD, 4, 0, 0, 9, 0, 0),
		  -EOPNOTSUPP },
		{ "pairwise allreduce",
		  args(AR, COLLX_ALGO_PAIRWISE, 4, 0, 0, 9, 0, 0), -EOPNOTSUPP },
		{ "ring send", args(COLLX_COLL_SEND, RING, 4, 0, 2, 9, 0, 0),
		  -EOPNOTSUPP },
		{ "p2p allreduce of 4 ranks",
		  args(AR, COLLX_ALGO_P2P, 4, 0, 0, 9, 0, 0), -EOPNOTSUPP },
		{ "tree alltoall of 1 rank",
		  args(COLLX_COLL_ALLTOALL, COLLX_ALGO_TREE, 1, 0, 0, 9, 0, 0),
		  -EOPNOTSUPP },
	};
	struct collx_coll_args a;
	unsigned int bad = 0, i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		a = cases[i].a;
		if (build(&a, 8 * 1024) != cases[i].err ||
		    collx_coll_max_xfers(&a)) {
			bad++;
			unit_diag("%s: build %d, max_xfers %u", cases[i].what,
				  build(&a, 8 * 1024),
				  collx_coll_max_xfers(&a));
		}
	}
	unit_ok(!bad, "coll.errors (%u cases, %u wrong)",
		(unsigned int)ARRAY_SIZE(cases), bad);
	a = args(AR, RING, 4, 1, 0, 100, 0, 0);
	unit_ok(!build(&a, collx_coll_max_xfers(&a)) &&
		build(&a, 0) == -ENOSPC && build(&a, 5) == -ENOSPC,
		"coll.enospc");
	a = args(AR, COLLX_ALGO_P2P, 1, 0, 0, 100, 0, COLLX_OP_AVG);
	unit_ok(!build(&a, 2) && build(&a, 1) == -ENOSPC,
		"coll.p2p_runs_any_collective_of_one_rank");
}

static void test_choose(void)
{
	static const u32 nr[] = { 2, 3, 4, 8, 64, 1024 };
	unsigned int bad = 0, i;
	struct collx_coll_args a;
	u64 bytes;
	u32 c, algo;

	for (c = 0; c < COLLX_COLL_COUNT; c++)
		bad += collx_algo_choose(c, 1 << 20, 1) != COLLX_ALGO_P2P;
	unit_ok(!bad, "coll.choose_one_rank_p2p");
	unit_ok(collx_algo_choose(COLLX_COLL_SEND, 1 << 30, 8) == COLLX_ALGO_P2P &&
		collx_algo_choose(COLLX_COLL_RECV, 0, 8) == COLLX_ALGO_P2P &&
		collx_algo_choose(COLLX_COLL_ALLTOALL, 1 << 30, 8) ==
		COLLX_ALGO_PAIRWISE &&
		collx_algo_choose(COLLX_COLL_BARRIER, 0, 8) == COLLX_ALGO_RD,
		"coll.choose_fixed");
	/* small rd, medium tree, large ring; the tree's range grows with n */
	unit_ok(collx_algo_choose(COLLX_COLL_ALLREDUCE, 4096, 8) == COLLX_ALGO_RD &&
		collx_algo_choose(COLLX_COLL_ALLREDUCE, 65536, 8) == COLLX_ALGO_TREE &&
		collx_algo_choose(COLLX_COLL_ALLREDUCE, 1 << 20, 8) == COLLX_ALGO_RING &&
		collx_algo_choose(COLLX_COLL_ALLREDUCE, 1 << 20, 64) == COLLX_ALGO_TREE &&
		collx_algo_choose(COLLX_COLL_BROADCAST, 100000, 8) == COLLX_ALGO_TREE &&
		collx_algo_choose(COLLX_COLL_BROADCAST, 1 << 20, 8) == COLLX_ALGO_RING &&
		collx_algo_choose(COLLX_COLL_REDUCE_SCATTER, 1000, 8) == COLLX_ALGO_RD &&
		collx_algo_choose(COLLX_COLL_ALLGATHER, 1 << 20, 8) == COLLX_ALGO_RING,
		"coll.choose_by_size");
	/* whatever it picks runs the collective */
	bad = 0;
	for (c = 0; c < COLLX_COLL_COUNT; c++)
		for (i = 0; i < ARRAY_SIZE(nr); i++)
			for (bytes = 0; bytes < (1ULL << 36); bytes = bytes * 2 + 1) {
				algo = collx_algo_choose(c, bytes, nr[i]);
				memset(&a, 0, sizeof(a));
				a.coll = c;
				a.algo = algo;
				a.nranks = nr[i];
				a.root = 1;
				a.count = c == COLLX_COLL_BARRIER ? 0 : 1000;
				bad += algo == COLLX_ALGO_AUTO ||
				       collx_coll_supported(c, algo) ||
				       build(&a, collx_coll_max_xfers(&a));
			}
	unit_ok(!bad, "coll.choose_runs (%u failed)", bad);
}

/* The figures of the report: most transfers of a rank per schedule. */
static void diag_sizes(void)
{
	static const u32 ns[] = { 2, 4, 64, 1024 };
	static struct collx_xfer x[8 * 1024 + 16];
	struct collx_sched s = { .x = x, .max = ARRAY_SIZE(x) };
	struct collx_coll_args a;
	char line[256];
	size_t i, k, at;
	u32 r, most;

	unit_diag("transfers per rank (most over ranks; count 1 MiB elements) for nranks 2 4 64 1024:");
	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		at = snprintf(line, sizeof(line), "%s/%s:",
			      coll_names[combos[i].coll],
			      algo_names[combos[i].algo]);
		for (k = 0; k < ARRAY_SIZE(ns); k++) {
			most = 0;
			for (r = 0; r < ns[k]; r++) {
				memset(&a, 0, sizeof(a));
				a.coll = combos[i].coll;
				a.algo = combos[i].algo;
				a.nranks = ns[k];
				a.rank = r;
				a.root = r ? 0 : 1;
				a.redop = COLLX_OP_AVG;
				a.count = a.coll == COLLX_COLL_BARRIER ? 0 : 1 << 20;
				if (!collx_coll_build(&a, &s) && s.n > most)
					most = s.n;
			}
			at += snprintf(line + at, sizeof(line) - at, " %u (max %u)",
				       most, collx_coll_max_xfers(&a));
		}
		unit_diag("  %s", line);
	}
}

static void timed(void (*fn)(void), const char *what)
{
	clock_t t0 = clock();

	fn();
	unit_diag("coll: %s took %.1f s", what,
		  (double)(clock() - t0) / CLOCKS_PER_SEC);
}

void test_coll(void)
{
	const char *max = getenv("COLLX_SIM_MAX_RANKS");
	char what[64];

	if (max && *max) {
		unsigned long m = strtoul(max, NULL, 10);

		if (!unit_ok(m >= 2 && m <= 64, "coll.sim_max_ranks %s in 2..64",
			     max))
			return;
		sim_max_ranks = m;
	}
	arena = malloc(ARENA_BYTES);
	if (!unit_ok(arena != NULL, "coll.arena"))
		return;
	test_supported();
	test_errors();
	timed(test_choose, "choice");
	timed(test_sim_catches, "broken schedules");
	snprintf(what, sizeof(what), "simulations of 1..%u ranks",
		 sim_max_ranks);
	timed(test_sim_all, what);
	timed(test_sim_slices, "every slice size and credit count");
	timed(test_large, "65..1024 ranks");
	diag_sizes();
	free(arena);
}
