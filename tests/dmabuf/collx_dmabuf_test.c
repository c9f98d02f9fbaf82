// SPDX-License-Identifier: GPL-2.0
/*
 * collx_dmabuf_test: collectives from and into dma-bufs, for the lab cases
 * tests/lab/cases/5*.  Rank and rendezvous come from the environment as
 * for any libcollx program; collx_test_exporter.ko must be loaded for the
 * kinds it exports.
 *
 *   collx_dmabuf_test feature       exit 0 when collx advertises
 *                                   COLLX_FEATURE_DMABUF, 77 when not
 *   collx_dmabuf_test colls KIND[,KIND...]
 *                                   registration errors, then allreduce,
 *                                   broadcast, allgather, reduce-scatter
 *                                   (and an allreduce at a foreign address)
 *                                   with inputs and outputs in KIND memory
 *   collx_dmabuf_test move          a move between collectives, then one
 *                                   during a collective
 *   collx_dmabuf_test revoke        the same with a revoke
 *   collx_dmabuf_test close KIND    the dma-buf fds closed while a
 *                                   collective runs
 *
 * KIND: dynamic, static, refuse, pinonly (collx_test_exporter), udmabuf,
 * heap (see exporter.h).  Every result is checked exactly; every
 * collective must report COLLX_MEM_DMABUF and not COLLX_MEM_BOUNCED; no
 * exporter buffer may see a write after it was moved or revoked, and
 * collx must hold nothing of a buffer once its registrations are gone,
 * and (collx_test_exporter) must bracket its CPU access to the buffers
 * with dma_buf_begin/end_cpu_access().
 * Exit: 0 as expected, 1 wrong, 77 KIND's exporter is not on this kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "collx.h"
#include "benchdata.h"
#include "exporter.h"

#define PAGE		4096UL
#define TEXP_STATS	"/sys/kernel/debug/collx_test_exporter/stats"
#define COUNT		(16384 + 5)	/* elements per rank: several chunks */
#define BIG_COUNT	(1024 * 1024)	/* fp32: 4 MiB, long enough to race */

static int rank = -1, nranks;

#define FAIL(...) do {							\
	fprintf(stderr, "collx_dmabuf_test: rank %d: ", rank);		\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)

/* One dma-buf and, while registered, where collectives find it. */
struct dbuf {
	const char *kind;
	int fd;
	size_t len;
	size_t off;		/* registered from here */
	void *addr;		/* what collectives use */
	void *handle;
};

static size_t round_page(size_t n)
{
	return (n + PAGE - 1) & ~(PAGE - 1);
}

static void dbuf_new(struct dbuf *b, const char *kind, size_t len)
{
	b->kind = kind;
	b->len = round_page(len);
	b->fd = dmabuf_new(kind, b->len);
	if (b->fd == -ENOENT && !dmabuf_kind_is_texp(kind)) {
		printf("SKIP: no %s exporter on this kernel\n", kind);
		exit(77);
	}
	if (b->fd < 0)
		FAIL("%s dma-buf of %zu bytes: %s", kind, b->len,
		     strerror(-b->fd));
	b->handle = NULL;
	b->addr = NULL;
}

static void dbuf_reg(struct collx_comm *comm, struct dbuf *b, size_t off)
{
	int err = collx_mem_register_dmabuf(comm, b->fd, off, b->len - off,
					    &b->addr, &b->handle);

	if (err)
		FAIL("register %s dma-buf at offset %zu: %s: %s", b->kind, off,
		     collx_strerror(err), collx_comm_last_error(comm));
	b->off = off;
}

/* 0 or -EBUSY: the uapi keeps a registration a collective failed on. */
static void dbuf_dereg(struct collx_comm *comm, struct dbuf *b, bool may_be_busy)
{
	int err;

	if (!b->handle)
		return;
	err = collx_mem_deregister(comm, b->handle);
	if (err && !(may_be_busy && err == -EBUSY))
		FAIL("deregister %s dma-buf: %s", b->kind, collx_strerror(err));
	b->handle = NULL;
}

/* No write into pages the exporter took back; optionally: collx let go. */
static void dbuf_expect_clean(struct dbuf *b, bool released)
{
	struct collx_texp_stats st;
	int err, n;

	if (!dmabuf_kind_is_texp(b->kind))
		return;
	for (n = 0; n < 100; n++) {
		err = texp_stats(b->fd, &st);
		if (err)
			FAIL("stats of a %s dma-buf: %s", b->kind, strerror(-err));
		if (!released || (!st.attachments && !st.mappings &&
				  !st.vmaps && !st.pins))
			break;
		usleep(50000);
	}
	if (st.late_write_pages)
		FAIL("%u pages of a %s dma-buf were written after generation %u was taken back (first at byte %llu)",
		     st.late_write_pages, b->kind, st.late_write_gen,
		     (unsigned long long)st.late_write_offset);
	if (released && (st.attachments || st.mappings || st.vmaps || st.pins))
		FAIL("collx still holds a %s dma-buf it has no registration of: %u attachments, %u mappings, %u vmaps, %u pins",
		     b->kind, st.attachments, st.mappings, st.vmaps, st.pins);
}

static void dbuf_close(struct dbuf *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

static struct collx_comm *init_or_die(void)
{
	struct collx_comm *comm;
	int err = collx_comm_init_all(&comm);

	if (err)
		FAIL("init: %s: %s", collx_strerror(err),
		     collx_comm_last_error(NULL));
	rank = collx_comm_rank(comm);
	nranks = collx_comm_size(comm);
	return comm;
}

/* ---- one collective, filled and checked exactly -------------------------- */

struct coll {
	const char *name;
	enum collx_coll coll;
	enum collx_dtype dt;
	enum collx_redop op;
	bool inplace;
};

/* Data movement: a value fp32 and int32 both hold exactly, by position. */
static double gen(int src, size_t i, int rep)
{
	return (double)((src * 1000003L + (long)i * 7 + rep) % (1L << 22));
}

static void coll_fill(const struct coll *c, void *s, void *r, size_t count,
		      int rep)
{
	size_t esz = collx_dtype_size(c->dt), i, ns = count;

	if (c->coll == COLLX_COLL_REDUCE_SCATTER)
		ns = count * nranks;
	memset(r, 0xa5, esz * (c->coll == COLLX_COLL_ALLGATHER ?
			       count * nranks : count));
	for (i = 0; i < ns; i++) {
		switch (c->coll) {
		case COLLX_COLL_BROADCAST:
		case COLLX_COLL_ALLGATHER:
			bench_store(s, i, c->dt, gen(rank, i, rep));
			break;
		default:
			bench_store(s, i, c->dt,
				    bench_value(c->dt, c->op, nranks, rank, i,
						rep));
		}
	}
}

static size_t coll_check(const struct coll *c, const void *r, size_t count,
			 int root, int rep, size_t *first, double *want)
{
	size_t nr = c->coll == COLLX_COLL_ALLGATHER ? count * nranks : count;
	size_t i, wrong = 0;
	double w, got;

	for (i = 0; i < nr; i++) {
		switch (c->coll) {
		case COLLX_COLL_BROADCAST:
			w = gen(root, i, rep);
			break;
		case COLLX_COLL_ALLGATHER:
			w = gen(i / count, i % count, rep);
			break;
		case COLLX_COLL_REDUCE_SCATTER:
			w = bench_expected(c->dt, c->op, nranks,
					   rank * count + i, rep);
			break;
		default:
			w = bench_expected(c->dt, c->op, nranks, i, rep);
		}
		got = bench_load(r, i, c->dt);
		if (got != w && !wrong++) {
			*first = i;
			*want = w;
		}
	}
	return wrong;
}

/* Start @c on @s/@r (@cs/@cr: where the CPU reaches them). */
static struct collx_op *coll_start(struct collx_comm *comm,
				   const struct coll *c, void *s, void *r,
				   void *cs, void *cr, size_t count, int rep)
{
	struct collx_args a = {
		.coll = c->coll, .dtype = c->dt, .redop = c->op,
		.root = c->coll == COLLX_COLL_BROADCAST ? nranks - 1 : 0,
		.count = count, .sendbuf = s, .recvbuf = c->inplace ? s : r,
	};
	struct collx_op *op;
	int err;

	coll_fill(c, cs, c->inplace ? cs : cr, count, rep);
	err = collx_submit(comm, &a, &op);
	if (err)
		FAIL("%s: submit: %s: %s", c->name, collx_strerror(err),
		     collx_comm_last_error(comm));
	return op;
}

/* Its outcome must be @want_err; with 0 the data is checked too. */
static void coll_finish(struct collx_comm *comm, const struct coll *c,
			struct collx_op *op, void *cr, size_t count, int rep)
{
	struct collx_completion cpl = { 0 };
	size_t wrong, first = 0;
	double want = 0;
	int err;

	err = collx_wait(op, &cpl);
	if (err)
		FAIL("%s: %s (phase %s): %s", c->name, collx_strerror(err),
		     collx_phase_name(cpl.phase), collx_comm_last_error(comm));
	if (!(cpl.mem & COLLX_MEM_DMABUF) || (cpl.mem & COLLX_MEM_BOUNCED))
		FAIL("%s: memory path %#x: not the dma-buf registration",
		     c->name, cpl.mem);
	wrong = coll_check(c, cr, count, nranks - 1, rep, &first, &want);
	if (wrong)
		FAIL("%s: %zu of %zu elements wrong, first at %zu: %g, want %g",
		     c->name, wrong, count, first, bench_load(cr, first, c->dt),
		     want);
}

static void coll_run(struct collx_comm *comm, const struct coll *c,
		     struct dbuf *src, struct dbuf *dst, size_t count, int rep)
{
	struct collx_op *op;

	dmabuf_sync(src->fd, 1);
	dmabuf_sync(dst->fd, 1);
	op = coll_start(comm, c, src->addr, dst->addr, src->addr, dst->addr,
			count, rep);
	coll_finish(comm, c, op, c->inplace ? src->addr : dst->addr, count,
		    rep);
	dmabuf_sync(src->fd, 0);
	dmabuf_sync(dst->fd, 0);
}

/*
 * dma_buf_begin_cpu_access() calls the test exporter has seen on this node,
 * ours (DMA_BUF_IOCTL_SYNC) included; -1 without its debugfs file.
 */
static long long texp_cpu_begins(void)
{
	FILE *f = fopen(TEXP_STATS, "r");
	long long n = -1;
	char line[128];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu_begins %lld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static const struct coll allreduce = {
	"allreduce", COLLX_COLL_ALLREDUCE, COLLX_FP32, COLLX_OP_SUM, false,
};

static const struct coll colls[] = {
	{ "allreduce", COLLX_COLL_ALLREDUCE, COLLX_FP32, COLLX_OP_SUM, false },
	{ "allreduce-inplace", COLLX_COLL_ALLREDUCE, COLLX_INT32, COLLX_OP_MAX,
	  true },
	{ "broadcast", COLLX_COLL_BROADCAST, COLLX_FP32, COLLX_OP_SUM, false },
	{ "allgather", COLLX_COLL_ALLGATHER, COLLX_INT32, COLLX_OP_SUM, false },
	{ "reduce-scatter", COLLX_COLL_REDUCE_SCATTER, COLLX_FP32, COLLX_OP_SUM,
	  false },
};

/* ---- colls ------------------------------------------------------------------ */

/* What COLLX_IOC_MR_REG must refuse (the _at form reaches the kernel). */
static void reg_errors(struct collx_comm *comm, struct dbuf *b)
{
	void *fake = (void *)0x7e5700000000UL, *h;
	int pfd[2], closed, err;

	closed = dup(0);
	close(closed);
	err = collx_mem_register_dmabuf_at(comm, closed, 0, PAGE, fake, &h);
	if (err != -EBADF)
		FAIL("register a closed fd: %s, want EBADF", collx_strerror(err));
	if (pipe(pfd))
		FAIL("pipe: %s", strerror(errno));
	err = collx_mem_register_dmabuf_at(comm, pfd[0], 0, PAGE, fake, &h);
	if (err != -EINVAL)
		FAIL("register a pipe: %s, want EINVAL", collx_strerror(err));
	close(pfd[0]);
	close(pfd[1]);
	err = collx_mem_register_dmabuf_at(comm, b->fd, PAGE, b->len, fake, &h);
	if (err != -EINVAL)
		FAIL("register past the end of a dma-buf: %s, want EINVAL",
		     collx_strerror(err));
	err = collx_mem_register_dmabuf_at(comm, b->fd, b->len, 1, fake, &h);
	if (err != -EINVAL)
		FAIL("register at its end: %s, want EINVAL", collx_strerror(err));
	printf("rank %d: registration errors: EBADF, EINVAL as documented\n",
	       rank);
}

/*
 * The address collectives use is any value (a GPU pointer in real life):
 * the memory is only reached through the dma-buf.  Once inside the user
 * address space, once beyond it (where no host buffer may lie).
 */
static void allreduce_at(struct collx_comm *comm, struct dbuf *src,
			 struct dbuf *dst, unsigned long at)
{
	void *fake_s = (void *)at, *fake_r = (void *)(at + 0x100000000UL);
	void *hs, *hr, *cs, *cr;
	struct collx_op *op;
	int err;

	cs = dmabuf_mmap(src->fd, src->len, 0);
	cr = dmabuf_mmap(dst->fd, dst->len, 0);
	if (!cs || !cr)
		FAIL("mmap: %s", strerror(errno));
	err = collx_mem_register_dmabuf_at(comm, src->fd, 0, src->len, fake_s,
					   &hs);
	if (!err)
		err = collx_mem_register_dmabuf_at(comm, dst->fd, 0, dst->len,
						   fake_r, &hr);
	if (err)
		FAIL("register at foreign address %p: %s: %s", fake_s,
		     collx_strerror(err), collx_comm_last_error(comm));
	op = coll_start(comm, &allreduce, fake_s, fake_r, cs, cr, COUNT, 9);
	coll_finish(comm, &allreduce, op, cr, COUNT, 9);
	if (collx_mem_deregister(comm, hs) || collx_mem_deregister(comm, hr))
		FAIL("deregister");
	munmap(cs, src->len);
	munmap(cr, dst->len);
}

static int cmd_colls(char *kinds)
{
	size_t need = (size_t)COUNT * 8 * 8 + PAGE;	/* 8 ranks of int64 */
	struct collx_comm *comm = init_or_die();
	size_t i, ncolls = sizeof(colls) / sizeof(colls[0]);
	long long begins;
	struct dbuf src, dst;
	char *kind, *save;
	int rep = 0;

	if ((size_t)nranks * COUNT * 8 + PAGE > need)
		FAIL("%d ranks: too many for these buffers", nranks);
	for (kind = strtok_r(kinds, ",", &save); kind;
	     kind = strtok_r(NULL, ",", &save)) {
		dbuf_new(&src, kind, need);
		dbuf_new(&dst, kind, need);
		if (!rep)
			reg_errors(comm, &src);
		/* the input one page into its dma-buf: offsets count */
		dbuf_reg(comm, &src, PAGE);
		dbuf_reg(comm, &dst, 0);
		begins = texp_cpu_begins();
		for (i = 0; i < ncolls; i++)
			coll_run(comm, &colls[i], &src, &dst, COUNT, rep++);
		/*
		 * Every op brackets its CPU access (one or two buffers), on
		 * top of coll_run()'s own two syncs.
		 */
		begins = begins < 0 ? -1 : texp_cpu_begins() - begins;
		if (dmabuf_kind_is_texp(kind) && begins >= 0 &&
		    begins < (long long)(3 * ncolls))
			FAIL("%s: %lld dma_buf_begin_cpu_access() calls in %zu collectives, %zu of them ours: collx made none",
			     kind, begins, ncolls, 2 * ncolls);
		dbuf_dereg(comm, &src, false);
		dbuf_dereg(comm, &dst, false);
		allreduce_at(comm, &src, &dst, 0x7e5800000000UL);
		allreduce_at(comm, &src, &dst, 0xfffe580000000000UL);
		dbuf_expect_clean(&src, true);
		dbuf_expect_clean(&dst, true);
		dbuf_close(&src);
		dbuf_close(&dst);
		printf("rank %d: %s: allreduce, broadcast, allgather, reduce-scatter exact, from and into dma-bufs\n",
		       rank, kind);
	}
	collx_comm_destroy(comm);
	return 0;
}

/* ---- move and revoke ---------------------------------------------------------- */

static void take_back(struct dbuf *b, bool revoke)
{
	struct collx_texp_move mv;
	int err;

	err = revoke ? texp_revoke(b->fd, &mv) : texp_move(b->fd, 0, 0, &mv);
	if (err)
		FAIL("%s: %s", revoke ? "revoke" : "move", strerror(-err));
	/* collx attaches dynamically where the exporter allows it */
	if (!mv.notified || mv.unnotified)
		FAIL("%s: %u attachments told, %u could not be (static): collx would never learn",
		     revoke ? "revoke" : "move", mv.notified, mv.unnotified);
}

/* An allreduce of @src into @dst, submitted and waited for: its errno. */
static int allreduce_err(struct collx_comm *comm, struct dbuf *src,
			 struct dbuf *dst, size_t count)
{
	struct collx_args a = {
		.coll = COLLX_COLL_ALLREDUCE, .dtype = COLLX_FP32,
		.redop = COLLX_OP_SUM, .count = count, .sendbuf = src->addr,
		.recvbuf = dst->addr,
	};
	struct collx_op *op;
	int err;

	err = collx_submit(comm, &a, &op);
	if (!err)
		err = collx_wait(op, NULL);
	return err;
}

/* An allreduce that must fail with EFAULT (its buffer was taken back). */
static void expect_efault(struct collx_comm *comm, struct dbuf *src,
			  struct dbuf *dst, size_t count, const char *when)
{
	int err = allreduce_err(comm, src, dst, count);

	if (err != -EFAULT)
		FAIL("allreduce %s: %s, want EFAULT", when, collx_strerror(err));
}

/*
 * The same after a collective that may have failed mid-flight, here or on
 * a peer: EFAULT while the communicator lives, else EPIPE (its error
 * state).  Returns which.
 */
static int expect_efault_or_failed(struct collx_comm *comm, struct dbuf *src,
				   struct dbuf *dst, size_t count, const char *when)
{
	int err = allreduce_err(comm, src, dst, count);

	if (err != -EFAULT && err != -EPIPE)
		FAIL("allreduce %s: %s, want EFAULT or EPIPE", when, collx_strerror(err));
	return err;
}

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Every rank takes its own buffers back while its allreduce runs: the op
 * either finished its windows first (then it is exact) or fails with
 * EFAULT; it never completes with wrong data.  A collective that fails
 * mid-flight fails its communicator on every rank (its peers were
 * mid-protocol, Documentation/engine.md): the next submit says EPIPE (or
 * EFAULT, checked first, on a rank whose own op finished), and every rank
 * makes a new communicator for the rest.  Returns the communicator to
 * go on with.
 */
static struct collx_comm *race(struct collx_comm *comm, bool revoke)
{
	struct collx_completion cpl = { 0 };
	size_t wrong, first = 0, len = (size_t)BIG_COUNT * 4;
	struct dbuf src, dst;
	struct collx_op *op;
	struct timespec t0;
	int err, done = 0;
	double want = 0;

	dbuf_new(&src, "dynamic", len);
	dbuf_new(&dst, "dynamic", len);
	dbuf_reg(comm, &src, 0);
	dbuf_reg(comm, &dst, 0);
	coll_run(comm, &allreduce, &src, &dst, BIG_COUNT, 20);

	{
		struct collx_args a = {
			.coll = COLLX_COLL_ALLREDUCE, .dtype = COLLX_FP32,
			.redop = COLLX_OP_SUM, .count = BIG_COUNT,
			.sendbuf = src.addr, .recvbuf = dst.addr,
		};

		coll_fill(&allreduce, src.addr, dst.addr, BIG_COUNT, 21);
		/* A faster peer's take-back may have failed the comm already. */
		err = collx_submit(comm, &a, &op);
		if (err && err != -EPIPE)
			FAIL("allreduce: submit: %s: %s", collx_strerror(err),
			     collx_comm_last_error(comm));
		done = !!err;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep(20000);
	if (!done)
		err = collx_test(op, &done, &cpl);
	if (!revoke)
		take_back(&src, false);
	take_back(&dst, revoke);
	if (!done)
		err = collx_wait(op, &cpl);
	printf("rank %d: %s %s the allreduce; it ended after %.0f ms: %s\n",
	       rank, revoke ? "revoked" : "moved",
	       done ? "after" : "during", elapsed_ms(&t0),
	       err ? collx_strerror(err) : "ok");
	/* EFAULT here; a peer's failure (its ABORT: ECONNRESET, or EPIPE
	 * before we submitted) otherwise; never wrong data. */
	if (err && err != -EFAULT && err != -ECONNRESET && err != -EPIPE)
		FAIL("allreduce with its buffers taken back: %s (phase %s), want success, EFAULT, ECONNRESET or EPIPE: %s",
		     collx_strerror(err), collx_phase_name(cpl.phase),
		     collx_comm_last_error(comm));
	if (!err) {
		/* moved: the new pages hold what was written before */
		wrong = revoke ? 0 : coll_check(&allreduce, dst.addr, BIG_COUNT,
						0, 21, &first, &want);
		if (wrong)
			FAIL("allreduce completed with %zu wrong elements, first at %zu: %g, want %g",
			     wrong, first, bench_load(dst.addr, first, COLLX_FP32),
			     want);
	}
	dbuf_expect_clean(&src, false);
	dbuf_expect_clean(&dst, false);
	err = expect_efault_or_failed(comm, &src, &dst, BIG_COUNT, "on buffers taken back");
	dbuf_dereg(comm, &src, true);
	dbuf_dereg(comm, &dst, true);
	/* Whichever it was here, a peer's may differ: all start afresh. */
	collx_comm_destroy(comm);
	comm = init_or_die();
	printf("rank %d: after the allreduce its communicator %s; a new one\n", rank,
	       err == -EPIPE ? "had failed" : "lived");

	if (!revoke) {
		/* registered again, the moved buffers work */
		dbuf_reg(comm, &src, 0);
		dbuf_reg(comm, &dst, 0);
		coll_run(comm, &allreduce, &src, &dst, BIG_COUNT, 22);
		dbuf_dereg(comm, &src, false);
		dbuf_dereg(comm, &dst, false);
	}
	dbuf_expect_clean(&src, false);
	dbuf_expect_clean(&dst, false);
	dbuf_close(&src);
	dbuf_close(&dst);
	return comm;
}

static int cmd_take_back(bool revoke)
{
	struct collx_comm *comm = init_or_die();
	struct dbuf src, dst, fresh;
	void *h, *fake = (void *)0x7e5a00000000UL;
	int err;

	/* between collectives: the next one fails, deterministically */
	dbuf_new(&src, "dynamic", (size_t)COUNT * 4);
	dbuf_new(&dst, "dynamic", (size_t)COUNT * 4);
	dbuf_reg(comm, &src, 0);
	dbuf_reg(comm, &dst, 0);
	coll_run(comm, &allreduce, &src, &dst, COUNT, 1);
	take_back(&dst, revoke);
	err = collx_barrier(comm);	/* every rank's buffer is gone */
	if (err)
		FAIL("barrier: %s", collx_strerror(err));
	expect_efault(comm, &src, &dst, COUNT, "after its output was taken back");
	expect_efault(comm, &src, &dst, COUNT, "again");
	if (revoke) {
		err = collx_mem_register_dmabuf_at(comm, dst.fd, 0, dst.len,
						   fake, &h);
		if (!err)
			FAIL("registering a revoked dma-buf succeeded");
		printf("rank %d: registering a revoked dma-buf: %s\n", rank,
		       collx_strerror(err));
		dbuf_new(&fresh, "dynamic", (size_t)COUNT * 4);
	} else {
		fresh = dst;
	}
	/* a new registration works, on the same communicator */
	dbuf_reg(comm, &fresh, 0);
	coll_run(comm, &allreduce, &src, &fresh, COUNT, 2);
	dbuf_dereg(comm, &fresh, false);
	dbuf_dereg(comm, &src, false);
	dbuf_dereg(comm, &dst, true);
	printf("rank %d: %s between collectives: EFAULT until registered again\n",
	       rank, revoke ? "revoke" : "move");

	comm = race(comm, revoke);

	collx_comm_destroy(comm);
	dbuf_expect_clean(&src, true);
	dbuf_expect_clean(&dst, true);
	if (revoke) {
		dbuf_expect_clean(&fresh, true);
		dbuf_close(&fresh);
	}
	dbuf_close(&src);
	dbuf_close(&dst);
	return 0;
}

/* ---- close --------------------------------------------------------------------- */

/* The registration holds the dma-buf: closing its fd mid-collective is fine. */
static int cmd_close(const char *kind)
{
	struct collx_comm *comm = init_or_die();
	size_t len = (size_t)BIG_COUNT * 4;
	long long before = 0, now = 0;
	struct dbuf src, dst;
	struct collx_op *op;
	int n, texp = dmabuf_kind_is_texp(kind);

	if (texp && texp_counter("buffers", &before))
		FAIL("no %s", TEXP_COUNTERS);
	dbuf_new(&src, kind, len);
	dbuf_new(&dst, kind, len);
	dbuf_reg(comm, &src, 0);
	dbuf_reg(comm, &dst, 0);
	op = coll_start(comm, &allreduce, src.addr, dst.addr, src.addr,
			dst.addr, BIG_COUNT, 30);
	dbuf_close(&src);
	dbuf_close(&dst);
	coll_finish(comm, &allreduce, op, dst.addr, BIG_COUNT, 30);
	op = coll_start(comm, &allreduce, src.addr, dst.addr, src.addr,
			dst.addr, BIG_COUNT, 31);
	coll_finish(comm, &allreduce, op, dst.addr, BIG_COUNT, 31);
	dbuf_dereg(comm, &src, false);
	dbuf_dereg(comm, &dst, false);
	/* the registrations were the last holders: both buffers are freed */
	for (n = 0; texp && n < 100; n++) {
		if (texp_counter("buffers", &now))
			FAIL("no %s", TEXP_COUNTERS);
		if (now == before)
			break;
		usleep(50000);
	}
	if (now != before)
		FAIL("%lld exporter buffers alive after deregistering, %lld before",
		     now, before);
	printf("rank %d: %s: fds closed mid-collective: exact, and freed at deregistration\n",
	       rank, kind);
	collx_comm_destroy(comm);
	return 0;
}

static int cmd_feature(void)
{
	struct collx_dev *dev;
	int err = collx_dev_open(&dev);
	unsigned long long f;

	if (err)
		FAIL("open the collx device: %s", collx_strerror(err));
	f = collx_dev_version(dev)->features;
	collx_dev_close(dev);
	if (!(f & COLLX_FEATURE_DMABUF)) {
		printf("SKIP: collx does not advertise COLLX_FEATURE_DMABUF (features %#llx)\n",
		       f);
		return 77;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: collx_dmabuf_test feature | colls KIND[,KIND...] | move | revoke | close KIND\n"
		"  KIND: %s\n", dmabuf_kinds);
	exit(2);
}

/* Before the rendezvous: a rank that skips must not leave the others waiting. */
static void need_kinds(const char *kinds)
{
	char *copy = strdup(kinds), *kind, *save;
	int fd;

	for (kind = strtok_r(copy, ",", &save); kind;
	     kind = strtok_r(NULL, ",", &save)) {
		fd = dmabuf_new(kind, PAGE);
		if (fd == -ENOENT && !dmabuf_kind_is_texp(kind)) {
			printf("SKIP: no %s exporter on this kernel\n", kind);
			exit(77);
		}
		if (fd < 0)
			FAIL("%s dma-buf: %s", kind, strerror(-fd));
		close(fd);
	}
	free(copy);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3)
		need_kinds(argv[2]);
	else if (argc == 2 && strcmp(argv[1], "feature"))
		need_kinds("dynamic");
	if (argc == 2 && !strcmp(argv[1], "feature"))
		return cmd_feature();
	if (argc == 3 && !strcmp(argv[1], "colls"))
		return cmd_colls(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "move"))
		return cmd_take_back(false);
	if (argc == 2 && !strcmp(argv[1], "revoke"))
		return cmd_take_back(true);
	if (argc == 3 && !strcmp(argv[1], "close"))
		return cmd_close(argv[2]);
	usage();
	return 2;
}
