// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab matrix SPEC...: many collectives on one communicator, each
 * checked exactly (user/common/benchcoll.c), with what the kernel reports
 * for it checked too: the algorithm it ran and the memory path.
 *
 *   SPEC = COLL:ALGOS:DTYPES:OPS:COUNTS:ROOTS:PLACES:REGS
 *     COLL    allreduce broadcast reduce allgather reduce_scatter alltoall
 *             barrier sendrecv
 *     ALGOS   auto,ring,tree,rd,pairwise,p2p or "all" (every one that can
 *             run COLL)
 *     DTYPES  int8,...,f8e5m2 or "all"
 *     OPS     sum,prod,max,min,avg, "all", or "-" (COLL does not reduce)
 *     COUNTS  element counts; "r-1" is one fewer than the ranks
 *     ROOTS   first,mid,last (0, nranks / 2, nranks - 1), "all", or "-"
 *     PLACES  oop, ip or both
 *     REGS    reg, unreg or both
 *
 * Every rank runs the same list in the same order.  Float sums are exact
 * whatever order an algorithm adds in: the data are small integers
 * (user/common/benchdata.h).  Exit 1 if any element of any rank is wrong.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "benchcoll.h"
#include "benchdata.h"
#include "lab.h"

#define MAX_ITEMS	32
/*
 * The whole matrix must end within this, whatever the fabric does:
 * COLLX_MATRIX_LIMIT_S seconds (collx_matrix in collx-lab.inc sets it
 * from its timeout, longer on the debug kernel), else 280.
 */
static uint64_t matrix_limit_s = 280;

struct spec {
	const char *text;
	enum bench_kind kind;
	int nalgo, ndt, nop, ncount, nroot;
	enum collx_algo algo[8];
	int dt[COLLX_DTYPE_COUNT];
	int op[COLLX_OP_COUNT];
	size_t count[MAX_ITEMS];
	int root[MAX_ITEMS];
	bool place[2], reg[2];
};

static struct collx_comm *comm;
static int nranks, rep;
static void *rsend, *rrecv, *usend, *urecv;
static size_t bufbytes;
static long long nops, nwrong;
/* An ABI 1.0 module reports neither algorithm nor memory path. */
static bool abi10;

/* Split @s at commas into @out; returns the count, or -1. */
static int split(char *s, char **out, int max)
{
	char *save, *t;
	int n = 0;

	for (t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -1;
		out[n++] = t;
	}
	return n;
}

static int parse_list(char *field, char **items)
{
	int n = split(field, items, MAX_ITEMS);

	if (n <= 0)
		FAIL("matrix: empty field");
	return n;
}

static void parse_spec(const char *text, struct spec *sp)
{
	char buf[512], *f[8], *items[MAX_ITEMS], *save, *t;
	const struct bench_coll *bc;
	enum collx_algo all[8];
	int nf = 0, i, n, nall;

	memset(sp, 0, sizeof(*sp));
	sp->text = text;
	snprintf(buf, sizeof(buf), "%s", text);
	for (t = strtok_r(buf, ":", &save); t && nf < 8; t = strtok_r(NULL, ":", &save))
		f[nf++] = t;
	if (nf != 8)
		FAIL("matrix: '%s' is not COLL:ALGOS:DTYPES:OPS:COUNTS:ROOTS:PLACES:REGS", text);
	bc = bench_coll_find(f[0]);
	if (!bc)
		FAIL("matrix: no collective '%s'", f[0]);
	sp->kind = bc->kind;
	nall = bench_coll_algos(sp->kind, all);
	n = parse_list(f[1], items);
	for (i = 0; i < n; i++) {
		int a;

		if (!strcmp(items[i], "all")) {
			memcpy(sp->algo, all, nall * sizeof(all[0]));
			sp->nalgo = nall;
			break;
		}
		for (a = 0; a < COLLX_ALGO_COUNT && strcasecmp(items[i], collx_algo_name(a)); a++)
			;
		if (a == COLLX_ALGO_COUNT)
			FAIL("matrix: no algorithm '%s'", items[i]);
		sp->algo[sp->nalgo++] = a;
	}
	n = parse_list(f[2], items);
	for (i = 0; i < n; i++) {
		if (!strcmp(items[i], "all")) {
			for (sp->ndt = 0; sp->ndt < COLLX_DTYPE_COUNT; sp->ndt++)
				sp->dt[sp->ndt] = sp->ndt;
			break;
		}
		if ((sp->dt[sp->ndt++] = bench_parse_dtype(items[i])) < 0)
			FAIL("matrix: no dtype '%s'", items[i]);
	}
	n = parse_list(f[3], items);
	for (i = 0; i < n; i++) {
		if (!strcmp(items[i], "-") || !strcmp(items[i], "all")) {
			int k = !bc->has_op ? 1 : COLLX_OP_COUNT;

			for (sp->nop = 0; sp->nop < k; sp->nop++)
				sp->op[sp->nop] = sp->nop;
			break;
		}
		if ((sp->op[sp->nop++] = bench_parse_redop(items[i])) < 0)
			FAIL("matrix: no op '%s'", items[i]);
	}
	n = parse_list(f[4], items);
	for (i = 0; i < n; i++) {
		long c;

		if (!strcmp(items[i], "r-1"))
			c = nranks - 1;
		else if (bench_parse_int(items[i], 0, 1L << 30, &c))
			FAIL("matrix: count '%s'", items[i]);
		sp->count[sp->ncount++] = (size_t)c;
	}
	n = parse_list(f[5], items);
	for (i = 0; i < n && bc->has_root; i++) {
		if (!strcmp(items[i], "all")) {
			for (sp->nroot = 0; sp->nroot < nranks && sp->nroot < MAX_ITEMS; sp->nroot++)
				sp->root[sp->nroot] = sp->nroot;
			break;
		}
		sp->root[sp->nroot++] = !strcmp(items[i], "first") ? 0 :
					!strcmp(items[i], "mid") ? nranks / 2 :
					!strcmp(items[i], "last") ? nranks - 1 : atoi(items[i]);
		if (sp->root[sp->nroot - 1] < 0 || sp->root[sp->nroot - 1] >= nranks)
			FAIL("matrix: root '%s' of %d ranks", items[i], nranks);
	}
	if (!bc->has_root)
		sp->root[sp->nroot++] = 0;
	sp->place[0] = strcmp(f[6], "ip");
	sp->place[1] = strcmp(f[6], "oop") && bc->inplace;
	sp->reg[0] = strcmp(f[7], "reg");
	sp->reg[1] = strcmp(f[7], "unreg");
}

static size_t spec_bytes(const struct spec *sp)
{
	struct bench_op o = { .kind = sp->kind, .nranks = nranks };
	size_t most = 0, s, r;
	int i;

	for (i = 0; i < sp->ncount; i++) {
		o.count = sp->count[i];
		bench_op_elems(&o, &s, &r);
		s = (s > r ? s : r) * 8;
		most = s > most ? s : most;
	}
	return most;
}

static void alloc_buffers(size_t bytes)
{
	void *h;

	bufbytes = (bytes + 4095) & ~(size_t)4095;
	if (!bufbytes)
		bufbytes = 4096;
	rsend = lab_alloc(bufbytes);
	rrecv = lab_alloc(bufbytes);
	usend = lab_alloc(bufbytes);
	urecv = lab_alloc(bufbytes);
	if (collx_mem_register(comm, rsend, bufbytes, &h) ||
	    collx_mem_register(comm, rrecv, bufbytes, &h))
		FAIL("register: %s", collx_comm_last_error(comm));
}

static void describe(const struct bench_op *o, bool reg, char *out, size_t len)
{
	snprintf(out, len, "%s algo %s %s %s root %d count %zu %s %s",
		 bench_coll_get(o->kind)->name, collx_algo_name(o->algo),
		 collx_dtype_name(o->dtype), collx_redop_name(o->redop), o->root, o->count,
		 o->inplace ? "in-place" : "out-of-place", reg ? "registered" : "bounced");
}

/* What the kernel says it did must be what was asked. */
static int check_record(const struct bench_op *o, bool reg, const struct collx_completion *c,
			char *why, size_t len)
{
	enum collx_algo ok[8];
	int n = bench_coll_algos(o->kind, ok), i;
	bool known = false;

	if (abi10)
		return 0;
	for (i = 1; i < n; i++)
		known |= c->algo == ok[i];
	/* a collective of one rank may become a local copy */
	if (nranks == 1 && c->algo == COLLX_ALGO_P2P)
		known = true;
	if (o->algo != COLLX_ALGO_AUTO && c->algo != o->algo &&
	    !(nranks == 1 && c->algo == COLLX_ALGO_P2P)) {
		snprintf(why, len, "asked for algorithm %s, the kernel ran %s",
			 collx_algo_name(o->algo), collx_algo_name(c->algo));
		return 1;
	}
	if (!known) {
		snprintf(why, len, "the kernel reports algorithm %u (%s)", c->algo,
			 collx_algo_name(c->algo));
		return 1;
	}
	if (!o->count || o->kind == BENCH_BARRIER)
		return 0;
	/* libcollx copies a send to oneself: no module memory path */
	if (nranks == 1 && o->kind == BENCH_SENDRECV)
		return c->mem ? (snprintf(why, len, "a copy to oneself with mem 0x%x", c->mem), 1) : 0;
	if (reg && (c->mem & COLLX_MEM_BOUNCED)) {
		snprintf(why, len, "registered buffers were bounced (mem 0x%x)", c->mem);
		return 1;
	}
	if (!reg && !(c->mem & COLLX_MEM_BOUNCED)) {
		snprintf(why, len, "unregistered buffers not reported bounced (mem 0x%x)", c->mem);
		return 1;
	}
	if (c->mem & COLLX_MEM_DMABUF) {
		snprintf(why, len, "a dma-buf path without a dma-buf (mem 0x%x)", c->mem);
		return 1;
	}
	return 0;
}

static void sync_all(void)
{
	int32_t v = 0;

	if (collx_allreduce(comm, &v, &v, 1, COLLX_INT32, COLLX_OP_SUM))
		FAIL("sync: %s", collx_comm_last_error(comm));
}

static void run_one(struct bench_op *o, bool reg)
{
	void *s = reg ? rsend : usend, *r = reg ? rrecv : urecv;
	struct collx_completion c[2];
	struct collx_op *ops[2];
	uint64_t t0 = 0;
	char d[200], why[160];
	size_t wrong;
	int n, i, err;

	o->rep = ++rep;
	bench_op_fill(o, s, r);
	if (o->kind == BENCH_BARRIER && nranks > 1) {
		/* the barrier must wait for rank 0, which comes late */
		sync_all();
		if (lab_rank == 0)
			usleep(300000);
		t0 = lab_now_ns();
	}
	err = bench_op_start(comm, o, s, r, ops, &n);
	for (i = 0; i < n; i++) {
		int e = collx_wait(ops[i], &c[i]);

		err = err ? err : e;
	}
	describe(o, reg, d, sizeof(d));
	if (err)
		FAIL("matrix: %s: %s: %s", d, collx_strerror(err), collx_comm_last_error(comm));
	nops++;
	wrong = bench_op_check(o, s, r, why, sizeof(why));
	for (i = 0; !wrong && i < n; i++)
		wrong = check_record(o, reg, &c[i], why, sizeof(why));
	if (!wrong && t0 && lab_rank != 0 && lab_now_ns() - t0 < 200000000ull) {
		snprintf(why, sizeof(why), "ended after %.0f ms, before rank 0 (300 ms late) submitted",
			 (lab_now_ns() - t0) / 1e6);
		wrong = 1;
	}
	if (wrong) {
		fprintf(stderr, "matrix: rank %d: WRONG %s: %zu, %s\n", lab_rank, d, wrong, why);
		nwrong += (long long)wrong;
	}
}

static void run_spec(const struct spec *sp, uint64_t start)
{
	long long before = nops;
	int a, d, p, ro, ci, pl, rg;

	for (a = 0; a < sp->nalgo; a++)
		for (d = 0; d < sp->ndt; d++)
			for (p = 0; p < sp->nop; p++)
				for (ro = 0; ro < sp->nroot; ro++)
					for (ci = 0; ci < sp->ncount; ci++)
						for (pl = 0; pl < 2; pl++)
							for (rg = 0; rg < 2; rg++) {
								struct bench_op o = {
									.kind = sp->kind, .algo = sp->algo[a],
									.dtype = sp->dt[d], .redop = sp->op[p],
									.root = sp->root[ro], .count = sp->count[ci],
									.inplace = pl, .nranks = nranks,
									.rank = lab_rank,
								};

								if (!sp->place[pl] || !sp->reg[rg])
									continue;
								if (lab_now_ns() - start > matrix_limit_s * 1000000000ULL)
									FAIL("matrix: over %llu s", (unsigned long long)matrix_limit_s);
								run_one(&o, rg);
							}
	if (lab_rank == 0)
		printf("matrix: %s: %lld collectives\n", sp->text, nops - before);
}

int lab_matrix(int argc, char **argv)
{
	struct spec *specs = calloc(argc ? argc : 1, sizeof(*specs));
	const char *limit = getenv("COLLX_MATRIX_LIMIT_S");
	uint64_t start = lab_now_ns();
	struct collx_dev *dev;
	size_t most = 0;
	double total;
	int i;

	if (!argc || !specs)
		FAIL("usage: matrix SPEC...");
	if (limit && *limit) {
		char *end;

		matrix_limit_s = strtoull(limit, &end, 10);
		if (*end || !matrix_limit_s || matrix_limit_s > 86400)
			FAIL("COLLX_MATRIX_LIMIT_S=%s: seconds, 1..86400", limit);
	}
	comm = lab_init();
	nranks = collx_comm_size(comm);
	if (!collx_dev_open(&dev)) {
		abi10 = collx_dev_version(dev)->abi_minor < 1;
		collx_dev_close(dev);
	}
	if (abi10 && lab_rank == 0)
		printf("matrix: the module speaks ABI 1.0: algorithms and memory paths not reported, not checked\n");
	for (i = 0; i < argc; i++) {
		parse_spec(argv[i], &specs[i]);
		most = spec_bytes(&specs[i]) > most ? spec_bytes(&specs[i]) : most;
	}
	alloc_buffers(most);
	for (i = 0; i < argc; i++)
		run_spec(&specs[i], start);
	/* every rank's verdict, summed */
	total = (double)nwrong;
	if (collx_allreduce(comm, &total, &total, 1, COLLX_FP64, COLLX_OP_SUM))
		FAIL("sum of the results: %s", collx_comm_last_error(comm));
	printf("matrix: rank %d of %d: %lld collectives in %.1f s, %lld wrong here, %.0f on all ranks\n",
	       lab_rank, nranks, nops, (lab_now_ns() - start) / 1e9, nwrong, total);
	collx_comm_destroy(comm);
	free(specs);
	return total ? 1 : 0;
}
