/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator's command line (included by sim.c):
 *   collx-sim check [-r 8,13,64] [-c conf]     TAP: schedules at those sizes
 *   collx-sim full  [-r ...] [-c conf]          8 .. 16,384 ranks, TAP too
 *   collx-sim table [-r 1024,16384] [-c conf] [-p profile]
 *   collx-sim grid  [-c conf] [-p profile]      CSV of the choice (plot.py)
 */
#include <getopt.h>

static const char *const coll_name[] = {
	"allreduce", "broadcast", "reduce", "allgather", "reduce_scatter",
	"alltoall", "barrier", "send", "recv",
};

static const char *const algo_name[] = {
	"auto", "ring", "tree", "rd", "pairwise", "p2p",
};

static int parse_ranks(const char *s, u32 *out, int max)
{
	int n = 0;
	char *end;

	while (*s && n < max) {
		unsigned long v = strtoul(s, &end, 0);

		if (end == s || v < 2 || v > 16384) {
			fprintf(stderr, "bad rank count in %s (2..16384)\n", s);
			exit(2);
		}
		out[n++] = (u32)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			fprintf(stderr, "bad rank list\n");
			exit(2);
		}
	}
	return n;
}

static int tap_n;
static int tap_failed;

static void tap(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

/* Every (collective, algorithm) of the core, several shapes each. */
static void check_size(u32 n, u64 seed, u64 slot_cap)
{
	static const u32 colls[] = {
		COLLX_COLL_ALLREDUCE, COLLX_COLL_BROADCAST, COLLX_COLL_REDUCE,
		COLLX_COLL_ALLGATHER, COLLX_COLL_REDUCE_SCATTER,
		COLLX_COLL_ALLTOALL, COLLX_COLL_BARRIER,
	};
	struct collx_rd_info ri;

	collx_rd_info(n, 0, &ri);
	for (u32 ci = 0; ci < ARRAY_SIZE(colls); ci++) {
		u32 coll = colls[ci];

		for (u32 algo = COLLX_ALGO_RING; algo <= COLLX_ALGO_PAIRWISE; algo++) {
			bool blockc = coll == COLLX_COLL_ALLGATHER ||
				      coll == COLLX_COLL_REDUCE_SCATTER ||
				      coll == COLLX_COLL_ALLTOALL;
			/* below and above recursive doubling's pof2, ragged */
			u64 counts[2] = { blockc ? 1 : 5,
					  blockc ? 3 : 2 * (u64)ri.pof2 + 3 };
			u32 ncounts = coll == COLLX_COLL_BARRIER ? 1 : 2;

			if (collx_coll_supported(coll, algo))
				continue;
			for (u32 k = 0; k < ncounts; k++)
				for (u32 ip = 0; ip < 2; ip++) {
					struct collx_coll_args a = { 0 };
					struct result res;
					bool reducing = coll == COLLX_COLL_ALLREDUCE ||
							coll == COLLX_COLL_REDUCE ||
							coll == COLLX_COLL_REDUCE_SCATTER;

					if (ip && (coll == COLLX_COLL_ALLTOALL ||
						   coll == COLLX_COLL_BARRIER))
						continue;
					a.coll = coll;
					a.algo = algo;
					a.nranks = n;
					a.count = coll == COLLX_COLL_BARRIER ? 0 : counts[k];
					a.inplace = ip;
					/* avg on the second shape, a root that is not 0 */
					a.redop = reducing && k ? COLLX_OP_AVG : COLLX_OP_SUM;
					a.root = k ? (n / 2 + 1) % n : 0;
					simulate(&a, seed + n * 131 + coll * 17 + algo * 5 + k * 3 + ip,
						 slot_cap, &res);
					tap(!res.why,
					    "%s %s n=%u C=%llu %s%s%s: %llu transfers built "
					    "(<= %llu per rank), %llu run, %s%llu elements checked, "
					    "peers <= %u, %.2f s%s%s",
					    coll_name[coll], algo_name[algo], n,
					    (unsigned long long)a.count,
					    ip ? "in place" : "out of place",
					    a.redop == COLLX_OP_AVG ? " avg" : "",
					    (coll == COLLX_COLL_BROADCAST || coll == COLLX_COLL_REDUCE) ?
						(a.root ? " root n/2+1" : " root 0") : "",
					    (unsigned long long)res.built,
					    (unsigned long long)res.max_xfers,
					    (unsigned long long)res.kept,
					    res.data_skipped ? "data NOT checked (needs more slots than the cap), " : "",
					    (unsigned long long)res.checked, res.max_peers,
					    res.secs, res.why ? ": " : "",
					    res.why ? res.why : "");
					if (res.why)
						printf("# at rank %lld, element/transfer %llu\n",
						       (long long)res.rank,
						       (unsigned long long)res.off);
				}
		}
	}
}

/* ---- the simulator must catch broken schedules ---- */

static u32 mut_case, mut_rank;

static s64 nth_of(struct collx_sched *sch, u8 kind, u32 nth)
{
	for (u32 j = 0; j < sch->n; j++)
		if (sch->x[j].kind == kind && !nth--)
			return j;
	return -1;
}

/*
 * The first transfer of @kind writing element @e (always tracked: the
 * residues hold 0 and the blocks 0, 1 and 2), so that the break lands
 * where the simulator looks.
 */
static s64 writing(struct collx_sched *sch, u8 kind, u64 e)
{
	for (u32 j = 0; j < sch->n; j++)
		if (sch->x[j].kind == kind && sch->x[j].dst_off <= e &&
		    e < sch->x[j].dst_off + sch->x[j].count)
			return j;
	return -1;
}

static void mutate(struct collx_sched *sch, u32 rank)
{
	s64 j;

	if (rank != mut_rank)
		return;
	switch (mut_case) {
	case 0:	/* a contribution lost: reduce becomes a plain receive */
		j = writing(sch, COLLX_XF_RECV_REDUCE, 0);
		if (j >= 0)
			sch->x[j].kind = COLLX_XF_RECV;
		break;
	case 1:	/* a contribution twice: the doubling's receive reduces */
		j = writing(sch, COLLX_XF_RECV, 0);
		if (j >= 0)
			sch->x[j].kind = COLLX_XF_RECV_REDUCE;
		break;
	case 2:	/* a block lands one block off */
		j = writing(sch, COLLX_XF_RECV, 3);	/* block 1 (C = 3) */
		if (j >= 0 && sch->x[j].dst_off >= 3)
			sch->x[j].dst_off -= 3;
		break;
	case 3:	/* a send one element short */
		j = nth_of(sch, COLLX_XF_SEND, 2);
		if (j >= 0)
			sch->x[j].count--;
		break;
	case 4:	/* a token leaves before what it vouches for */
		for (j = 0; j < sch->n; j++)
			if (sch->x[j].kind == COLLX_XF_SEND)
				sch->x[j].ndeps = 0;
		break;
	case 5:	/* avg never scaled */
		j = nth_of(sch, COLLX_XF_SCALE, 0);
		if (j >= 0)
			sch->x[j].kind = COLLX_XF_COPY, sch->x[j].src = sch->x[j].dst,
			sch->x[j].src_off = sch->x[j].dst_off;
		break;
	}
}

static void check_mutants(u64 seed, u64 slot_cap)
{
	static const struct {
		const char *what;
		u32 coll, algo, n;
		u64 count;
		u32 redop, rank;
	} m[] = {
		{ "contribution lost", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING, 1000, 2003, COLLX_OP_SUM, 517 },
		{ "contribution reduced twice", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RD, 1000, 2003, COLLX_OP_SUM, 999 },
		{ "block one block off", COLLX_COLL_ALLGATHER, COLLX_ALGO_RD, 1000, 3, COLLX_OP_SUM, 0 },
		{ "send one element short", COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RING, 1000, 3, COLLX_OP_SUM, 500 },
		{ "token leaves early", COLLX_COLL_BARRIER, COLLX_ALGO_RD, 1000, 0, COLLX_OP_SUM, 7 },
		{ "avg not scaled", COLLX_COLL_ALLREDUCE, COLLX_ALGO_TREE, 1000, 2003, COLLX_OP_AVG, 0 },
	};

	for (u32 i = 0; i < ARRAY_SIZE(m); i++) {
		struct collx_coll_args a = { 0 };
		struct result res;

		a.coll = m[i].coll;
		a.algo = m[i].algo;
		a.nranks = m[i].n;
		a.count = m[i].count;
		a.redop = m[i].redop;
		mut_case = i;
		mut_rank = m[i].rank;
		g_mutate = mutate;
		simulate(&a, seed + i, slot_cap, &res);
		g_mutate = NULL;
		tap(res.why != NULL, "caught: %s (%s %s n=%u, rank %u): %s",
		    m[i].what, coll_name[a.coll], algo_name[a.algo], a.nranks,
		    m[i].rank, res.why ? res.why : "NOT DETECTED");
	}
}

/* ---- the model's tables ---- */

static void fmt_bytes(double b, char *buf, size_t len)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;

	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, b == floor(b) ? "%.0f %s" : "%.1f %s", b, u[i]);
}

static void fmt_time(double t, char *buf, size_t len)
{
	if (t < 1e-3)
		snprintf(buf, len, "%.0f µs", t * 1e6);
	else if (t < 1)
		snprintf(buf, len, "%.1f ms", t * 1e3);
	else
		snprintf(buf, len, "%.2f s", t);
}

/*
 * Connections and scratch per rank of @algo running @coll for @bytes on
 * @n ranks, the most over the schedules of every rank when they are
 * small (tree, rd), else of sampled ranks (0, 1, n/2, n - 1, the fold
 * and power-of-two boundaries: ring and pairwise are the same at all).
 */
static void algo_cost(u32 coll, u32 algo, double bytes, u32 n, u32 *peers,
		      u64 *tmp_bytes)
{
	struct collx_rd_info ri;
	u32 cand[8], nc = 0, *mark = xcalloc(n, 4);
	struct collx_sched sch = { 0 };
	u64 count;

	collx_rd_info(n, 0, &ri);
	cand[nc++] = 0;
	cand[nc++] = 1;
	cand[nc++] = n / 2;
	cand[nc++] = n - 1;
	cand[nc++] = ri.pof2 - 1;
	if (ri.rem) {
		cand[nc++] = 2 * ri.rem - 1;
		cand[nc++] = ri.pof2;
	}
	count = (u64)(bytes / 4);	/* fp32 */
	if (coll == COLLX_COLL_ALLGATHER || coll == COLLX_COLL_REDUCE_SCATTER ||
	    coll == COLLX_COLL_ALLTOALL)
		count /= n;
	if (!count)
		count = 1;
	*peers = 0;
	*tmp_bytes = 0;
	{
		/* every rank where that is cheap (tree, rd: a few dozen each) */
		struct collx_coll_args a = { 0 };

		a.coll = coll;
		a.algo = algo;
		a.nranks = n;
		a.count = count;
		if ((u64)collx_coll_max_xfers(&a) * n <= (4u << 20))
			nc = n;
	}
	for (u32 i = 0; i < nc; i++) {
		struct collx_coll_args a = { 0 };
		u32 p = 0, rk = nc == n ? i : cand[i];

		a.coll = coll;
		a.algo = algo;
		a.nranks = n;
		a.rank = rk;
		a.count = count;
		a.redop = COLLX_OP_SUM;
		sch.max = collx_coll_max_xfers(&a);
		if (!sch.max)
			continue;
		sch.x = xrealloc(sch.x, sch.max * sizeof(*sch.x));
		if (collx_coll_build(&a, &sch))
			continue;
		for (u32 j = 0; j < sch.n; j++)
			if (sch.x[j].kind <= COLLX_XF_RECV_REDUCE &&
			    mark[sch.x[j].peer] != rk + 1) {
				mark[sch.x[j].peer] = rk + 1;
				p++;
			}
		if (p > *peers)
			*peers = p;
		if (sch.tmp_count * 4 > *tmp_bytes)
			*tmp_bytes = sch.tmp_count * 4;
	}
	free(sch.x);
	free(mark);
}

static const u32 table_colls[] = {
	COLLX_COLL_ALLREDUCE, COLLX_COLL_BROADCAST, COLLX_COLL_REDUCE,
	COLLX_COLL_ALLGATHER, COLLX_COLL_REDUCE_SCATTER, COLLX_COLL_ALLTOALL,
};

/* The model's pick, today's fixed pick kept on a tie (within 0.5 %). */
static u32 pick(const struct model_consts *c, u32 coll, double bytes, u32 n,
		double *t)
{
	u32 today = collx_algo_choose(coll, (u64)bytes, n);
	u32 best = model_choose(c, coll, bytes, n, t);
	double tt = model_time(c, coll, today, bytes, n);

	if (best != today && tt >= 0 && tt <= *t * 1.005) {
		*t = tt;
		return today;
	}
	return best;
}

static void print_table(const struct model_consts *c, u32 n)
{
	static const double sizes[] = { 8, 4096, 65536, 1 << 20, 16 << 20, 1 << 30 };
	char b1[32], b2[32];

	printf("\n### %u ranks (profile %s: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, slot %.0f B)\n\n",
	       n, c->name, c->alpha, c->beta, c->gamma, c->slot);
	printf("| collective | algorithm | QPs (connections) per rank | pinned per rank | scratch at 1 MiB |");
	for (u32 i = 0; i < ARRAY_SIZE(sizes); i++) {
		fmt_bytes(sizes[i], b1, sizeof(b1));
		printf(" %s |", b1);
	}
	printf("\n|---|---|---|---|---|");
	for (u32 i = 0; i < ARRAY_SIZE(sizes); i++)
		printf("---|");
	printf("\n");
	for (u32 ci = 0; ci < ARRAY_SIZE(table_colls); ci++) {
		u32 coll = table_colls[ci];

		for (u32 algo = COLLX_ALGO_RING; algo <= COLLX_ALGO_PAIRWISE; algo++) {
			u32 peers;
			u64 tmp;

			if (collx_coll_supported(coll, algo))
				continue;
			algo_cost(coll, algo, 1 << 20, n, &peers, &tmp);
			fmt_bytes(peers * (c->staging + c->qp_bytes), b1, sizeof(b1));
			fmt_bytes((double)tmp, b2, sizeof(b2));
			printf("| %s | %s | %u | %s | %s |", coll_name[coll],
			       algo_name[algo], peers, b1, b2);
			for (u32 i = 0; i < ARRAY_SIZE(sizes); i++) {
				double t = model_time(c, coll, algo, sizes[i], n), bt;
				u32 m = pick(c, coll, sizes[i], n, &bt);
				u32 today = collx_algo_choose(coll, (u64)sizes[i], n);

				fmt_time(t, b1, sizeof(b1));
				printf(" %s%s%s%s |", m == algo ? "**" : "", b1,
				       m == algo ? "**" : "", today == algo ? " (today)" : "");
			}
			printf("\n");
		}
	}
}

static void print_disagree(const struct model_consts *c, const u32 *ranks, int nr)
{
	printf("\n### Where the model and today's thresholds disagree (profile %s)\n\n", c->name);
	for (u32 ci = 0; ci < ARRAY_SIZE(table_colls); ci++) {
		u32 coll = table_colls[ci];

		for (int k = 0; k < nr; k++) {
			u32 n = ranks[k], prev_m = 99, prev_t = 99;
			double lo = 0;
			char b1[32], b2[32];

			for (double b = 8; b <= (double)(1ULL << 30) * 1.01; b *= 2) {
				double t;
				u32 m = pick(c, coll, b, n, &t);
				u32 today = collx_algo_choose(coll, (u64)b, n);

				if (m != prev_m || today != prev_t) {
					if (prev_m != 99 && prev_m != prev_t) {
						fmt_bytes(lo, b1, sizeof(b1));
						fmt_bytes(b / 2, b2, sizeof(b2));
						printf("- %s, %u ranks, %s .. %s: model %s, today %s\n",
						       coll_name[coll], n, b1, b2,
						       algo_name[prev_m], algo_name[prev_t]);
					}
					lo = b;
					prev_m = m;
					prev_t = today;
				}
			}
			if (prev_m != prev_t) {
				fmt_bytes(lo, b1, sizeof(b1));
				printf("- %s, %u ranks, %s .. 1 GiB: model %s, today %s\n",
				       coll_name[coll], n, b1, algo_name[prev_m],
				       algo_name[prev_t]);
			}
		}
	}
}

static void print_grid(const struct model_consts *c)
{
	printf("collective,ranks,bytes,model,today,model_time_s,today_time_s\n");
	for (u32 ci = 0; ci < ARRAY_SIZE(table_colls); ci++)
		for (u32 n = 8; n <= 16384; n *= 2)
			for (double b = 8; b <= (double)(1ULL << 30) * 1.01; b *= 2) {
				double t;
				u32 coll = table_colls[ci];
				u32 m = pick(c, coll, b, n, &t);
				u32 today = collx_algo_choose(coll, (u64)b, n);

				printf("%s,%u,%.0f,%s,%s,%.6g,%.6g\n", coll_name[coll], n, b,
				       algo_name[m], algo_name[today], t,
				       model_time(c, coll, today, b, n));
			}
}

/* Sanity of the model itself, in the TAP run. */
static void check_model(const struct model_consts *c)
{
	bool ok = true;
	char why[160] = "";

	for (u32 ci = 0; ci < ARRAY_SIZE(table_colls) && ok; ci++)
		for (u32 n = 8; n <= 16384 && ok; n *= 2)
			for (double b = 8; b <= (double)(1ULL << 30) && ok; b *= 4)
				for (u32 algo = COLLX_ALGO_RING; algo <= COLLX_ALGO_PAIRWISE; algo++) {
					double t = model_time(c, table_colls[ci], algo, b, n);
					double t2 = model_time(c, table_colls[ci], algo, b * 4, n);

					if (collx_coll_supported(table_colls[ci], algo))
						continue;
					if (!(t > 0) || !(t2 >= t) || !isfinite(t)) {
						snprintf(why, sizeof(why), "%s %s n=%u %.0f B: %g then %g",
							 coll_name[table_colls[ci]], algo_name[algo],
							 n, b, t, t2);
						ok = false;
						break;
					}
				}
	tap(ok, "model (%s): every algorithm's time positive, finite, growing with bytes%s%s",
	    c->name, ok ? "" : ": ", why);
}

/*
 * coef: for each line "collective algorithm ranks bytes" on stdin, the
 * model's time as a x alpha + b x beta + g x gamma: prints "a b g" (the
 * model is linear in its three constants; slot comes from the profile).
 * calibrate.py fits alpha and beta to measured times with it.
 */
static int print_coef(const struct model_consts *c)
{
	char cn[64], an[64];
	double bytes;
	unsigned n;

	while (scanf("%63s %63s %u %lf", cn, an, &n, &bytes) == 4) {
		struct model_consts u = *c;
		u32 coll = 99, algo = 99;
		double t0, ta, tb, tg;

		for (u32 i = 0; i < ARRAY_SIZE(coll_name); i++)
			if (!strcmp(cn, coll_name[i]))
				coll = i;
		for (u32 i = 0; i < ARRAY_SIZE(algo_name); i++)
			if (!strcmp(an, algo_name[i]))
				algo = i;
		if (coll == 99 || algo == 99 || n < 2) {
			printf("nan nan nan\n");
			continue;
		}
		u.alpha = u.beta = u.gamma = 0;
		t0 = model_time(&u, coll, algo, bytes, n);
		u.alpha = 1;
		ta = model_time(&u, coll, algo, bytes, n) - t0;
		u.alpha = 0;
		u.beta = 1;
		tb = model_time(&u, coll, algo, bytes, n) - t0;
		u.beta = 0;
		u.gamma = 1;
		tg = model_time(&u, coll, algo, bytes, n) - t0;
		if (t0 < 0)
			printf("nan nan nan\n");
		else
			printf("%.17g %.17g %.17g\n", ta, tb, tg);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: collx-sim check|full|table|grid|coef [-r ranks,...] [-c conf] [-p profile]\n"
		"       [-s seed] [-m max tracked slots]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const u32 full_ranks[] = {
		8, 12, 16, 32, 64, 100, 128, 256, 512, 1000, 1024, 2048, 4096,
		6000, 8192, 16383, 16384,
	};
	u32 ranks[64];
	int nr = 0, opt;
	const char *conf = NULL, *prof = NULL, *mode;
	u64 seed = 0x5eed, slot_cap = 1ULL << 26;
	struct model_file mf;
	const struct model_consts *c = NULL;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "r:c:p:s:m:")) != -1) {
		switch (opt) {
		case 'r':
			nr = parse_ranks(optarg, ranks, 64);
			break;
		case 'c':
			conf = optarg;
			break;
		case 'p':
			prof = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			slot_cap = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (conf) {
		if (model_load(conf, &mf))
			return 2;
		c = model_profile(&mf, prof);
		if (!c) {
			fprintf(stderr, "%s: no profile %s\n", conf, prof);
			return 2;
		}
	}
	if (!strcmp(mode, "check") || !strcmp(mode, "full")) {
		if (!nr) {
			if (!strcmp(mode, "check")) {
				ranks[nr++] = 8;
				ranks[nr++] = 13;
				ranks[nr++] = 64;
			} else {
				for (u32 i = 0; i < ARRAY_SIZE(full_ranks); i++)
					ranks[nr++] = full_ranks[i];
			}
		}
		if (c)
			check_model(c);
		check_mutants(seed, slot_cap);
		for (int i = 0; i < nr; i++)
			check_size(ranks[i], seed, slot_cap);
		printf("1..%d\n", tap_n);
		return tap_failed ? 1 : 0;
	}
	if (!c) {
		fprintf(stderr, "%s needs -c conf\n", mode);
		return 2;
	}
	if (!strcmp(mode, "table")) {
		if (!nr) {
			ranks[nr++] = 1024;
			ranks[nr++] = 16384;
		}
		for (int i = 0; i < nr; i++)
			print_table(c, ranks[i]);
		print_disagree(c, ranks, nr);
		return 0;
	}
	if (!strcmp(mode, "coef"))
		return print_coef(c);
	if (!strcmp(mode, "grid")) {
		print_grid(c);
		return 0;
	}
	usage();
	return 2;
}
