// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of collx_fuzz's model (state.c, records.c, gen_comm.c), with
 * no module: a fake COMM_CREATE/COMM_DESTROY hands out handles and global
 * ids as the kernel does (lowest free), and each test plays, in one
 * thread, an interleaving of two threads that the fuzzer meets in the lab
 * (issue 10's "lost" and "ids" findings).  A model that reports a
 * finding here reports one on a correct kernel.  Flat TAP; exit 1 if any
 * test fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

struct fz_opts fz_opt = { .threads = 2, .nfds = 3 };
uint32_t fz_abi_minor = 1;
static unsigned int nfind[F_NR_CLASSES];
static unsigned int ntests, nfail;

uint64_t fz_now_ns(void)
{
	return 1000000000ULL;
}

void fz_finding(struct fz_thread *t, enum fz_class cl, const char *fmt, ...)
{
	va_list ap;

	(void)t;
	nfind[cl]++;
	printf("# finding %d: ", cl);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The fake kernel's creates fail at once: none is late. */
void fz_create_failed(struct fz_thread *t, uint32_t timeout_ms,
		      uint64_t took_ns)
{
	(void)t;
	(void)timeout_ms;
	(void)took_ns;
}

void fz_call_init(struct fz_call *c, enum fz_entry e, int fdi)
{
	memset(c, 0, sizeof(*c));
	c->e = e;
	c->fdi = fdi;
	c->fd = fdi >= 0 ? fz_fds[fdi].fd : -1;
	c->fd_gen = fdi >= 0 ? fz_fds[fdi].gen : 0;
	c->expect = -1;
	c->alt = -1;
}

/* The fake kernel: comms by (fd, handle), global ids module-wide. */
#define KMAX 64
static bool kcomm[FZ_MAX_FDS][KMAX + 1];
static uint32_t kgid[FZ_MAX_FDS][KMAX + 1];
static bool kgid_used[KMAX * 4];

static int kdestroy(int fdi, uint32_t h)
{
	if (h > KMAX || !kcomm[fdi][h])
		return ENOENT;
	kcomm[fdi][h] = false;
	kgid_used[kgid[fdi][h]] = false;
	return 0;
}

int fz_ioctl(struct fz_thread *t, struct fz_call *c)
{
	uint32_t h, g;

	(void)t;
	c->out_ok = c->delivered = true;
	if (c->e == FZ_COMM_DESTROY)
		return c->err = kdestroy(c->fdi, c->st.destroy.comm_id);
	if (c->e != FZ_COMM_CREATE)
		return c->err = ENOTTY;
	for (h = 1; h <= KMAX && kcomm[c->fdi][h]; h++)
		;
	for (g = 1; kgid_used[g]; g++)	/* 0 reads as "none" */
		;
	kcomm[c->fdi][h] = true;
	kgid[c->fdi][h] = g;
	kgid_used[g] = true;
	c->st.create.comm_id = h;
	c->st.create.global_id = g;
	c->st.create.failed_rank = COLLX_RANK_NONE;
	return c->err = 0;
}

static void ok(bool pass, const char *desc)
{
	ntests++;
	nfail += !pass;
	printf("%sok %u - %s\n", pass ? "" : "not ", ntests, desc);
}

static unsigned int live_comms(int fdi, uint32_t id)
{
	unsigned int i, n = 0;

	for (i = 0; i < FZ_MAX_COMMS; i++)
		n += fz_comms[i].used && !fz_comms[i].dying &&
		     fz_comms[i].fdi == fdi && fz_comms[i].id == id;
	return n;
}

static void record(int fdi, uint64_t id)
{
	struct collx_completion c = {
		.op_id = id, .start_ns = 1, .end_ns = 1,
		.failed_rank = COLLX_RANK_NONE,
	};

	fz_record(NULL, fdi, &c, "read");
}

static void queued(struct fz_thread *t, int fdi, uint64_t id)
{
	struct fz_plan p = { .ci = -1, .valid = true };

	fz_plan_queued(t, &p, fdi, id, 0);
}

/*
 * Thousands of other processes' records on the shared fd, read by the
 * parent and never met by an op of its own; meanwhile every record of
 * this process's ops on fd0 is read by the other thread before the
 * SUBMIT that queued it returned.  Each must meet its op.
 */
static void test_limbo(struct fz_thread *t)
{
	unsigned int i, before = nfind[F_LOST];

	for (i = 0; i < 6000; i++)
		record(2, 1000000 + i);
	for (i = 1; i <= 5000; i++)
		record(0, i);
	for (i = 1; i <= 5000; i++)
		queued(t, 0, i);
	ok(!fz_fds[0].live_ops,
	   "limbo: 5000 records read before their submit returned, after 6000 foreign ones on the shared fd, all meet their op");
	/* One that never meets its op: a finding at the end, as before. */
	record(1, 77);
	queued(t, 0, 5001);
	fz_records_final(t);
	ok(nfind[F_LOST] - before == 2,
	   "limbo: a record never queued and an op never recorded are still findings");
}

/*
 * A create returns handle 1; a destroy by number of 1 looks for it in
 * the model (not there yet) and destroys it; the create records it; a
 * second create gets handle 1 and the same global id back before the
 * destroy's result reached the model.
 */
static void test_bynum_hit(struct fz_thread *t, int fdi)
{
	unsigned int before = nfind[F_IDS];
	int ci, err;

	ci = fz_comm_doom_id(fdi, 1);
	ok(ci < 0, "bynum: the destroy finds no comm 1 in the model");
	fz_create_1rank(t, fdi, UINT32_MAX, &err);
	kdestroy(fdi, 1);
	fz_create_1rank(t, fdi, UINT32_MAX, &err);
	ok(nfind[F_IDS] == before,
	   "bynum: a create of the destroyed comm's handle and global id is no id reuse");
	fz_comm_doomed(fdi, 1, ci, 0);
	ok(!live_comms(fdi, 1),
	   "bynum: after it, no comm 1 the destroy may have hit is live");
	kdestroy(fdi, 1);
}

/* The same, but the destroy came first and found nothing (ENOENT). */
static void test_bynum_miss(struct fz_thread *t, int fdi)
{
	int ci, err, c1;

	ci = fz_comm_doom_id(fdi, 1);
	c1 = fz_create_1rank(t, fdi, UINT32_MAX, &err);
	ok(c1 >= 0 && fz_comms[c1].dying,
	   "bynum: a comm recorded while a destroy of its handle is in flight is dying");
	fz_comm_doomed(fdi, 1, ci, ENOENT);
	ok(c1 >= 0 && live_comms(fdi, 1) == 1,
	   "bynum: a destroy by number that failed leaves it live");
	fz_destroy(t, fdi, c1);
}

/* A closing fd's comms free their global ids before it is forgotten. */
static void test_closing(struct fz_thread *t)
{
	unsigned int before = nfind[F_IDS];
	int ci, err;

	ci = fz_create_1rank(t, 3, UINT32_MAX, &err);
	fz_fd_closing(3);
	kdestroy(3, fz_comms[ci].id);
	fz_create_1rank(t, 0, UINT32_MAX, &err);
	ok(nfind[F_IDS] == before,
	   "close: a closing fd's global id handed out again is no id reuse");
	fz_fd_forget(3);
}

/*
 * A local op on a comm of the shared fd, which the other process's
 * destroy by number cancels: not a finding there; on a private fd, where
 * only this process destroys, still one.
 */
static void test_shared_cancel(struct fz_thread *t)
{
	struct collx_completion c = {
		.start_ns = 1, .end_ns = 1, .status = -ECANCELED,
		.failed_rank = COLLX_RANK_NONE,
	};
	unsigned int before = nfind[F_RECORD];
	int fdi, ci, err;

	for (fdi = 2; fdi >= 0; fdi -= 2) {
		struct fz_plan p = { .valid = true, .expect_ok = true,
				     .nranks = 1 };

		ci = fz_create_1rank(t, fdi, UINT32_MAX, &err);
		p.ci = ci;
		p.cgen = fz_comms[ci].gen;
		p.comm_id = fz_comms[ci].id;
		fz_plan_queued(t, &p, fdi, 90000 + fdi, 0);
		c.op_id = 90000 + fdi;
		c.comm_id = p.comm_id;
		fz_record(NULL, fdi, &c, "read");
		ok(nfind[F_RECORD] - before == (fdi == 2 ? 0 : 1),
		   fdi == 2 ? "shared fd: a local op cancelled by another process's destroy is no finding" :
			      "private fd: a local op cancelled with its comm live is a finding");
		fz_destroy(t, fdi, ci);
	}
}

int main(void)
{
	struct fz_thread t = { 0 };
	int i;

	for (i = 0; i < 4; i++)
		fz_fd_add(100 + i, i == 2, i == 3, false);
	test_limbo(&t);
	test_bynum_hit(&t, 3);
	test_bynum_miss(&t, 3);
	test_closing(&t);
	test_shared_cancel(&t);
	printf("1..%u\n", ntests);
	return nfail ? 1 : 0;
}
