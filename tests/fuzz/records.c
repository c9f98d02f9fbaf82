// SPDX-License-Identifier: GPL-2.0
/*
 * Completion records: each one is checked against the collective it ends
 * (documented status, its comm, bytes, times, the fields 1.1 added) and,
 * when it succeeded, the output against the input byte for byte, the
 * input and the canaries around both untouched.  Every op gets exactly
 * one record; a record for an op never queued is a finding too (after the
 * end of the run, for records that could still have met their submit).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "plan.h"

#define MAX_LIMBO	4096
#define MEM_KNOWN	(COLLX_MEM_STAGED | COLLX_MEM_ZERO_COPY | \
			 COLLX_MEM_PLACED | COLLX_MEM_DMABUF | COLLX_MEM_BOUNCED)

/* Records whose op the fuzzer did not know (yet) when they arrived. */
static struct limbo {
	int fdi;
	struct collx_completion c;
	char via[8];
} limbo[MAX_LIMBO];
static unsigned int nlimbo;
static uint64_t foreign;	/* records of another process's ops */

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
	bool same = cm && cm->gen == op->cgen;
	bool dead = !same || !cm->used || cm->dying;
	bool must_ok = op->expect_ok && same && !cm->tainted;
	uint64_t now = fz_now_ns();
	struct fz_fd *f = &fz_fds[op->fdi];
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
	} else if (nlimbo < MAX_LIMBO) {
		limbo[nlimbo].fdi = fdi;
		limbo[nlimbo].c = *c;
		snprintf(limbo[nlimbo].via, sizeof(limbo[nlimbo].via), "%s", via);
		nlimbo++;
	} else {
		foreign++;
	}
	pthread_mutex_unlock(&fz_lock);
}

void fz_limbo_match(struct fz_thread *t, int fdi, uint64_t id)
{
	unsigned int i;
	int oi;

	for (i = 0; i < nlimbo; i++) {
		if (limbo[i].fdi != fdi || limbo[i].c.op_id != id)
			continue;
		oi = fz_op_find(fdi, id);
		if (oi >= 0)
			verify(t, oi, &limbo[i].c, limbo[i].via);
		limbo[i] = limbo[--nlimbo];
		return;
	}
}

void fz_limbo_forget(int fdi)
{
	unsigned int i = 0;

	while (i < nlimbo) {
		if (limbo[i].fdi == fdi)
			limbo[i] = limbo[--nlimbo];
		else
			i++;
	}
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
	int oi;

	pthread_mutex_lock(&fz_lock);
	for (i = 0; i < nlimbo; i++) {
		struct fz_fd *f = &fz_fds[limbo[i].fdi];

		if (f->shared) {
			foreign++;
		} else if (f->maybe_queued) {
			f->maybe_queued--;
		} else {
			fz_finding(t, F_LOST, "a record (via %s) on fd%d for op %llu, which was never queued (status %d, %llu bytes)",
				   limbo[i].via, limbo[i].fdi,
				   (unsigned long long)limbo[i].c.op_id,
				   limbo[i].c.status,
				   (unsigned long long)limbo[i].c.bytes);
		}
	}
	nlimbo = 0;
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
	pthread_mutex_unlock(&fz_lock);
}
