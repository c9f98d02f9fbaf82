// SPDX-License-Identifier: GPL-2.0
/*
 * Completion records: each one is checked against the collective it ends
 * (documented status, its comm, bytes, times, the fields 1.1 added) and,
 * when it succeeded, the output against the input byte for byte, the
 * input and the canaries around both untouched.  Every op gets exactly
 * one record; a record for an op never queued is a finding too (after the
 * end of the run, for records that could still have met their submit).
 *
 * A record may be read (by another thread) before the SUBMIT that queued
 * its op has returned to the model: it waits in its fd's limbo until the
 * op is recorded.  On an fd of this process alone a record leaves limbo
 * only by meeting its op (or at the end of the run), however many wait.
 * On an fd shared with other processes most records are theirs and never
 * meet an op of ours: its limbo keeps the newest SHARED_LIMBO, the oldest
 * going first (ours meet their op within the call that submitted it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "plan.h"

#define SHARED_LIMBO	1024
#define MEM_KNOWN	(COLLX_MEM_STAGED | COLLX_MEM_ZERO_COPY | \
			 COLLX_MEM_PLACED | COLLX_MEM_DMABUF | COLLX_MEM_BOUNCED)

/* A record whose op the fuzzer did not know (yet) when it arrived. */
struct limbo {
	struct collx_completion c;
	uint64_t seq;		/* arrival order */
	char via[8];
};

/* Each fd's, under fz_lock. */
static struct limbo_fd {
	struct limbo *e;
	unsigned int n, cap;
} limbo[FZ_MAX_FDS];
static uint64_t limbo_seq;
static uint64_t early;		/* records that met their op in limbo */
static unsigned int limbo_max;	/* most in one limbo of an fd of ours */
static uint64_t foreign;	/* records of another process's ops */

/* Keep @c until its op is recorded. */
static void limbo_add(int fdi, const struct collx_completion *c,
		      const char *via)
{
	struct limbo_fd *l = &limbo[fdi];
	struct limbo *e;
	unsigned int i, old = 0;

	if (fz_fds[fdi].shared && l->n >= SHARED_LIMBO) {
		for (i = 1; i < l->n; i++)
			if (l->e[i].seq < l->e[old].seq)
				old = i;
		l->e[old] = l->e[--l->n];
		foreign++;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->e = realloc(l->e, l->cap * sizeof(*l->e));
		if (!l->e)
			abort();
	}
	e = &l->e[l->n++];
	e->c = *c;
	e->seq = ++limbo_seq;
	snprintf(e->via, sizeof(e->via), "%s", via);
	if (!fz_fds[fdi].shared && l->n > limbo_max)
		limbo_max = l->n;
}

static bool margin_ok(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != FZ_MARGIN_BYTE)
			return false;
	return true;
}

/* The buffers of a successful local-copy collective. */
static void check_data(struct fz_thread *t, const struct fz_op *op)
{
	uint64_t sbytes = op->in_place && op->out_bytes > op->in_bytes ?
			  op->out_bytes : op->in_bytes;
	int64_t bad = -1;

	if (op->out_bytes && op->recv) {
		if (op->in_place || !op->ro_src)
			bad = fz_check_fill(op->recv, op->out_bytes, op->pat);
		else if (memcmp(op->recv, op->ro_src, op->out_bytes))
			bad = 0;
		if (bad >= 0)
			fz_finding(t, F_DATA, "op %llu (%s, %llu bytes%s, submitted at call #%llu): output differs from the input at byte %lld",
				   (unsigned long long)op->id,
				   fz_coll_name(op->coll),
				   (unsigned long long)op->out_bytes,
				   op->in_place ? ", in place" : "",
				   (unsigned long long)op->callno,
				   (long long)bad);
	}
	if (!op->in_place && op->send_buf && op->in_bytes &&
	    (bad = fz_check_fill(op->send_buf, op->in_bytes, op->pat)) >= 0)
		fz_finding(t, F_DATA, "op %llu (%s): its input changed at byte %lld",
			   (unsigned long long)op->id, fz_coll_name(op->coll),
			   (long long)bad);
	if (op->send_buf &&
	    (!margin_ok(op->send_slot, op->send_buf - op->send_slot) ||
	     !margin_ok(op->send_buf + sbytes, FZ_MARGIN)))
		fz_finding(t, F_DATA, "op %llu (%s): bytes around its input changed",
			   (unsigned long long)op->id, fz_coll_name(op->coll));
	if (op->recv_buf &&
	    (!margin_ok(op->recv_slot, op->recv_buf - op->recv_slot) ||
	     !margin_ok(op->recv_buf + op->out_bytes, FZ_MARGIN)))
		fz_finding(t, F_DATA, "op %llu (%s): bytes around its output changed",
			   (unsigned long long)op->id, fz_coll_name(op->coll));
}

/* With fz_lock held: the record of op @oi. */
static void verify(struct fz_thread *t, int oi, const struct collx_completion *c,
		   const char *via)
{
	struct fz_op *op = &fz_ops[oi];
	const struct fz_comm *cm = op->ci >= 0 ? &fz_comms[op->ci] : NULL;
	struct fz_fd *f = &fz_fds[op->fdi];
	bool same = cm && cm->gen == op->cgen;
	/* On a shared fd another process may destroy it (ECANCELED). */
	bool dead = !same || !cm->used || cm->dying || f->shared;
	bool must_ok = op->expect_ok && same && !cm->tainted;
	uint64_t now = fz_now_ns();
	char b1[16];

	if (!fz_status_documented(c->status))
		fz_finding(t, F_RECORD, "op %llu (%s) via %s: status %d is not a documented one",
			   (unsigned long long)op->id, fz_coll_name(op->coll),
			   via, c->status);
	if (c->comm_id != op->comm_id)
		fz_finding(t, F_RECORD, "op %llu: comm_id %u, submitted on %u",
			   (unsigned long long)op->id, c->comm_id, op->comm_id);
	if (c->failed_rank != COLLX_RANK_NONE && c->failed_rank >= op->nranks)
		fz_finding(t, F_RECORD, "op %llu: failed_rank %u of %u ranks",
			   (unsigned long long)op->id, c->failed_rank, op->nranks);
	if (c->phase >= COLLX_PHASE_COUNT || c->algo >= COLLX_ALGO_COUNT ||
	    (c->mem & ~MEM_KNOWN) || c->__reserved2)
		fz_finding(t, F_RECORD, "op %llu: phase %u algo %u mem %#x reserved2 %u out of range",
			   (unsigned long long)op->id, c->phase, c->algo, c->mem,
			   c->__reserved2);
	if (!c->status && c->bytes != op->out_bytes)
		fz_finding(t, F_RECORD, "op %llu (%s): bytes %llu, its output has %llu",
			   (unsigned long long)op->id, fz_coll_name(op->coll),
			   (unsigned long long)c->bytes,
			   (unsigned long long)op->out_bytes);
	if (c->end_ns < c->start_ns || c->end_ns > now ||
	    c->end_ns < op->t_submit)
		fz_finding(t, F_RECORD, "op %llu: start_ns %llu end_ns %llu, submitted at %llu, now %llu",
			   (unsigned long long)op->id,
			   (unsigned long long)c->start_ns,
			   (unsigned long long)c->end_ns,
			   (unsigned long long)op->t_submit,
			   (unsigned long long)now);
	if (must_ok && c->status && !(dead && c->status == -ECANCELED))
		fz_finding(t, F_RECORD, "op %llu (%s on a 1-rank comm, submitted at call #%llu) ended with %s: a local copy must succeed",
			   (unsigned long long)op->id, fz_coll_name(op->coll),
			   (unsigned long long)op->callno,
			   fz_errname(-c->status, b1, sizeof(b1)));
	if (!c->status && op->checkable && op->nranks == 1)
		check_data(t, op);
	f->done_ids[f->done_n++ % FZ_ARRAY_SIZE(f->done_ids)] = op->id;
	fz_op_remove(oi);
}

void fz_record(struct fz_thread *t, int fdi, const struct collx_completion *c,
	       const char *via)
{
	int oi;

	pthread_mutex_lock(&fz_lock);
	oi = fz_op_find(fdi, c->op_id);
	if (oi >= 0) {
		verify(t, oi, c, via);
	} else if (fz_id_seen(fdi, c->op_id) && !fz_fds[fdi].shared) {
		fz_finding(t, F_LOST, "a second record of op %llu on fd%d (via %s)",
			   (unsigned long long)c->op_id, fdi, via);
	} else {
		limbo_add(fdi, c, via);
	}
	pthread_mutex_unlock(&fz_lock);
}

void fz_limbo_match(struct fz_thread *t, int fdi, uint64_t id)
{
	struct limbo_fd *l = &limbo[fdi];
	struct limbo e;
	unsigned int i;
	int oi;

	for (i = 0; i < l->n; i++) {
		if (l->e[i].c.op_id != id)
			continue;
		e = l->e[i];
		l->e[i] = l->e[--l->n];
		early++;
		oi = fz_op_find(fdi, id);
		if (oi >= 0)
			verify(t, oi, &e.c, e.via);
		return;
	}
}

void fz_limbo_forget(int fdi)
{
	free(limbo[fdi].e);
	memset(&limbo[fdi], 0, sizeof(limbo[fdi]));
}

/*
 * What the kernel says of an op the model still waits for: a WAIT that
 * does not sleep.  ENOENT: the kernel has no such op (its record was
 * consumed, or never kept); EAGAIN: still running; 0: the record was
 * there all along (the fuzzer missed it).
 */
static void ask_kernel(const struct fz_op *op, char *out, size_t len)
{
	struct collx_wait w = {
		.size = sizeof(w),
		.op_id = op->id,
	};
	char b1[16];

	if (!fz_fds[op->fdi].used) {
		snprintf(out, len, "its fd is closed");
		return;
	}
	if (ioctl(fz_fds[op->fdi].fd, COLLX_IOC_WAIT, &w))
		snprintf(out, len, "WAIT now -> %s",
			 fz_errname(errno, b1, sizeof(b1)));
	else
		snprintf(out, len, "WAIT now -> its record, status %d",
			 w.completion.status);
}

void fz_records_final(struct fz_thread *t)
{
	unsigned int i;
	int oi, fdi;

	pthread_mutex_lock(&fz_lock);
	for (fdi = 0; fdi < FZ_MAX_FDS; fdi++) {
		struct fz_fd *f = &fz_fds[fdi];
		const struct limbo *e = limbo[fdi].e;

		for (i = 0; i < limbo[fdi].n; i++) {
			if (f->shared) {
				foreign++;
			} else if (f->maybe_queued) {
				f->maybe_queued--;
			} else {
				fz_finding(t, F_LOST, "a record (via %s) on fd%d for op %llu, which was never queued (status %d, %llu bytes)",
					   e[i].via, fdi,
					   (unsigned long long)e[i].c.op_id,
					   e[i].c.status,
					   (unsigned long long)e[i].c.bytes);
			}
		}
		limbo[fdi].n = 0;
	}
	for (oi = 0; oi < FZ_MAX_OPS; oi++) {
		const struct fz_op *op = &fz_ops[oi];
		const struct fz_comm *cm = op->ci >= 0 ? &fz_comms[op->ci] : NULL;
		char asked[96];

		if (!op->used || fz_fds[op->fdi].shared)
			continue;
		ask_kernel(op, asked, sizeof(asked));
		fz_finding(t, F_LOST, "op %llu (%s on fd%d comm %u, %s, submitted at call #%llu) never got its record%s; %s",
			   (unsigned long long)op->id, fz_coll_name(op->coll),
			   op->fdi, op->comm_id,
			   !cm || cm->gen != op->cgen || !cm->used ? "comm gone" :
			   cm->dying ? "comm dying" : "comm live",
			   (unsigned long long)op->callno,
			   op->wait_efault ?
			   " (a WAIT for it returned EFAULT: the record went with it)" : "",
			   asked);
	}
	if (foreign)
		printf("records of other processes' ops on shared fds: %llu\n",
		       (unsigned long long)foreign);
	if (early)
		printf("records read before their submit returned: %llu (at most %u waiting on one fd of this process alone)\n",
		       (unsigned long long)early, limbo_max);
	pthread_mutex_unlock(&fz_lock);
}
