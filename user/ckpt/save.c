// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Phase 1: the snapshot, then the dump into peers' memory behind it.
 *
 * In the caller (collx_ckpt_save_async), the pause:
 *  0. wait for the previous save's replication, if it still runs;
 *  1. mark the own entry this save overwrites empty (never the protected
 *     or newest globally committed copy: ckpt_victim) and copy the
 *     regions into it (the snapshot, several threads for large shards);
 *     return.  The regions are free from here on.
 * In the area's progress thread, on the checkpoint comm (a communicator of
 * its own, so no training collective queues behind this or is ordered
 * differently against it on two ranks):
 *  2. allgather each rank's descriptor (tag, region sizes, geometry,
 *     epoch, and whether its arguments are good, so a bad one fails every
 *     rank instead of leaving them waiting);
 *  3. mark the replica entries this save overwrites empty;
 *  4. group A: the snapshot sent to the k holders (from the registered
 *     area: zero copy), cut as the regions were, the k sources' shards
 *     received into their replica entries;
 *  5. meanwhile the snapshot is hashed per chunk (after the pause, not in
 *     it: the copy is what training waits for);
 *  6. group B (after A on every connection: a comm runs one group at a
 *     time): the owner's header, hashes included, to each holder;
 *  7. each header checked and committed locally, state last; then an
 *     allgather of every rank's outcome is the acknowledgement;
 *  8. only when every rank succeeded: the global commit mark on each entry
 *     of this save and the area's commit record, written last.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt_int.h"

struct desc {
	uint64_t tag;
	uint64_t bytes;
	uint64_t shard_cap;
	uint64_t epoch;			/* the rank's current epoch, 0: none */
	uint64_t max_epoch;		/* the greatest it has seen */
	uint32_t chunk_bytes, k, stride, nregions;
	int32_t status;
	uint32_t __pad;
	uint64_t sizes[COLLX_CKPT_MAX_REGIONS];
};

struct collx_ckpt_op {
	struct collx_ckpt_area *a;
	uint64_t tag;
	double t0, t_snap;		/* call, end of the snapshot */
	int status;			/* this rank's first error */
	bool weak;			/* status is a consequence (EPIPE), not the cause */
	bool done;			/* the progress thread finished it */
	bool orphan;			/* refused locally: nobody waits, the thread frees it */
	int nregions;
	uint64_t sizes[COLLX_CKPT_MAX_REGIONS];
	int nops;
	struct collx_op **ops;
	int32_t *acks;
	struct desc *all;
	int slot[COLLX_CKPT_MAX_K + 1];
	uint64_t epoch;
	uint64_t end_ns;
	char err[CKPT_ERRLEN];		/* the failure, copied to the area at wait */
	struct collx_ckpt_stats st;
};

static void op_free(struct collx_ckpt_op *op)
{
	free(op->ops);
	free(op->acks);
	free(op->all);
	free(op);
}

static void seterr(struct collx_ckpt_op *op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The op's own error text: the progress thread never writes the area's,
 * which the caller may be reading. */
static void seterr(struct collx_ckpt_op *op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(op->err, sizeof(op->err), fmt, ap);
	va_end(ap);
	if (getenv("COLLX_CKPT_DEBUG"))
		fprintf(stderr, "collx-ckpt: %s\n", op->err);
}

static void note(struct collx_ckpt_op *op, int rc, const char *what)
{
	/* a submission refused because the comm already failed (-EPIPE)
	 * says nothing about why: an earlier transfer's own error, reaped
	 * later, replaces it */
	if (rc && (!op->status || (op->weak && rc != -EPIPE))) {
		op->weak = rc == -EPIPE;
		op->status = rc;
		seterr(op, "save tag %llu: %s: %s (%s)", (unsigned long long)op->tag, what,
		       collx_strerror(rc), collx_comm_last_error(op->a->xcomm));
	}
}

/* Step 2: agree on the save and its epoch, or all fail on one rank's bad
 * input. */
static int exchange(struct collx_ckpt_op *op)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	struct desc d = { 0 };
	uint64_t max_epoch = 0;
	bool same_epoch = true;
	uint32_t i, j;
	int rc;

	d.tag = op->tag;
	d.shard_cap = g->shard_cap;
	d.chunk_bytes = g->chunk_bytes;
	d.k = g->k;
	d.stride = g->stride;
	d.epoch = a->epoch;
	d.max_epoch = a->max_epoch;
	d.status = op->status;
	if (!op->status) {
		d.nregions = op->nregions;
		for (i = 0; i < (uint32_t)op->nregions; i++) {
			d.sizes[i] = op->sizes[i];
			d.bytes += op->sizes[i];
		}
	}
	rc = collx_allgather(a->xcomm, &d, op->all, sizeof(d), COLLX_UINT8);
	if (rc) {
		note(op, rc, "exchanging descriptors");
		return rc;
	}
	for (i = 0; i < g->nranks; i++) {
		const struct desc *o = &op->all[i];
		uint64_t sum = 0;

		if (o->status) {
			if (!op->status) {
				op->status = -EREMOTEIO;
				seterr(op, "save tag %llu: rank %u refused it: %s",
				       (unsigned long long)op->tag, i, collx_strerror(o->status));
			}
			return op->status;
		}
		if (o->tag != op->tag || o->shard_cap != g->shard_cap ||
		    o->chunk_bytes != g->chunk_bytes || o->k != g->k || o->stride != g->stride) {
			op->status = -EINVAL;
			seterr(op,
			       "save: rank %u saves tag %llu with shard %llu, chunk %u, k %u, stride %u; this rank tag %llu, %llu, %u, %u, %u",
			       i, (unsigned long long)o->tag, (unsigned long long)o->shard_cap,
			       o->chunk_bytes, o->k, o->stride, (unsigned long long)op->tag,
			       (unsigned long long)g->shard_cap, g->chunk_bytes, g->k, g->stride);
			return op->status;
		}
		for (j = 0; j < o->nregions && j < COLLX_CKPT_MAX_REGIONS; j++)
			sum += o->sizes[j];
		if (o->nregions > COLLX_CKPT_MAX_REGIONS || sum != o->bytes ||
		    o->bytes > g->shard_cap) {
			op->status = -EPROTO;
			seterr(op, "save: rank %u sent a malformed descriptor", i);
			return op->status;
		}
		if (o->epoch != op->all[0].epoch || !o->epoch)
			same_epoch = false;
		if (o->max_epoch > max_epoch)
			max_epoch = o->max_epoch;
	}
	/* the same on every rank: the timeline goes on while every rank is
	 * in it; else (a new process, a restore) a new epoch above every
	 * one any rank has seen */
	op->epoch = same_epoch ? op->all[0].epoch : max_epoch + 1;
	return 0;
}

/* The slot a save of @entry overwrites, honouring collx-ckptd's pin: it
 * waits for the drain up to COLLX_CKPT_PIN_WAIT_MS (default 10000), and
 * never more than half the comm timeout (COLLX_TIMEOUT_MS, else the
 * module's 30 s): the other ranks wait for this one in the descriptor
 * exchange, which must not time out.  Then -EBUSY with the reason in @why. */
static int pick_victim(struct collx_ckpt_area *a, int entry, char *why, size_t whylen)
{
	const char *env = getenv("COLLX_CKPT_PIN_WAIT_MS"), *tenv = getenv("COLLX_TIMEOUT_MS");
	long wait_ms = env && *env ? strtol(env, NULL, 10) : 10000;
	long tmo = tenv && *tenv ? strtol(tenv, NULL, 10) : 0;
	double t0 = ckpt_now();
	uint64_t pe = 0, pt = 0;
	int v;

	if (tmo <= 0)
		tmo = 30000;
	if (wait_ms > tmo / 2)
		wait_ms = tmo / 2;
	if (wait_ms < 0)
		wait_ms = 0;

	for (;;) {
		struct timespec ts = { 0, 2000000 };

		v = ckpt_victim_pinned(&a->f, entry, a->protect_epoch, a->protect_tag, &pe, &pt);
		if (v >= 0)
			return v;
		if ((ckpt_now() - t0) * 1000 >= (double)wait_ms)
			break;
		nanosleep(&ts, NULL);
	}
	snprintf(why, whylen,
		 "both slots of %s are in use: one holds the last committed checkpoint, collx-ckptd is archiving epoch %llu tag %llu from the other (waited %ld ms, COLLX_CKPT_PIN_WAIT_MS)",
		 entry ? "a replica entry" : "the own shard", (unsigned long long)pe,
		 (unsigned long long)pt, wait_ms);
	return -EBUSY;
}

static void add_op(struct collx_ckpt_op *op, int rc, struct collx_op *o, const char *what)
{
	if (o)
		op->ops[op->nops++] = o;
	note(op, rc, what);
}

/* Steps 3-6: submit; hashing runs while group A moves. */
static void submit(struct collx_ckpt_op *op)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	struct collx_comm *comm = a->xcomm;
	struct ckpt_shard_hdr *own = ckpt_hdr(&a->f, op->slot[0], 0);
	const uint8_t *snap = ckpt_data(&a->f, op->slot[0], 0);
	uint32_t j, i, nr = g->nranks;
	int rc;

	/* op->slot[j]: chosen before the exchange (replicate) */
	for (j = 1; j <= g->k; j++)
		ckpt_hdr_invalidate(ckpt_hdr(&a->f, op->slot[j], j));
	collx_group_start();
	for (j = 1; j <= g->k; j++) {
		uint32_t h = ckpt_holder(nr, g->stride, g->rank, j);
		uint64_t off = 0;

		/* cut as the regions were: each send meets one recv */
		for (i = 0; i < (uint32_t)op->nregions; i++) {
			struct collx_op *o = NULL;

			if (!op->sizes[i])
				continue;
			rc = collx_send_async(comm, snap + off, op->sizes[i], COLLX_UINT8, h, &o);
			add_op(op, rc, o, "send");
			off += op->sizes[i];
			op->st.bytes_sent += op->sizes[i];
		}
	}
	for (j = 1; j <= g->k; j++) {
		uint32_t s = ckpt_source(nr, g->stride, g->rank, j);
		const struct desc *d = &op->all[s];
		uint8_t *dst = ckpt_data(&a->f, op->slot[j], j);
		uint64_t off = 0;

		for (i = 0; i < d->nregions; i++) {
			struct collx_op *o = NULL;

			if (!d->sizes[i])
				continue;
			rc = collx_recv_async(comm, dst + off, d->sizes[i], COLLX_UINT8, s, &o);
			add_op(op, rc, o, "recv");
			off += d->sizes[i];
		}
		op->st.bytes_received += d->bytes;
	}
	rc = collx_group_end();
	note(op, rc, "submitting the replicas");
	/* step 5, while the replicas move (the sends only read the data) */
	ckpt_hdr_hash_data(own, g, snap, op->epoch);
	collx_group_start();
	for (j = 1; j <= g->k; j++) {
		struct collx_op *o = NULL;

		rc = collx_send_async(comm, own, g->hdr_block, COLLX_UINT8,
				      ckpt_holder(nr, g->stride, g->rank, j), &o);
		add_op(op, rc, o, "send header");
	}
	for (j = 1; j <= g->k; j++) {
		struct collx_op *o = NULL;

		rc = collx_recv_async(comm, ckpt_hdr(&a->f, op->slot[j], j), g->hdr_block, COLLX_UINT8,
				      ckpt_source(nr, g->stride, g->rank, j), &o);
		add_op(op, rc, o, "recv header");
	}
	rc = collx_group_end();
	note(op, rc, "submitting the headers");
}

/* Step 7, first half: every header checked, then committed (state last). */
static void commit_local(struct collx_ckpt_op *op)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	uint64_t seq = a->next_seq;
	uint32_t j;

	for (j = 1; j <= g->k && !op->status; j++) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(&a->f, op->slot[j], j);
		uint32_t s = ckpt_source(g->nranks, g->stride, g->rank, j);

		if (ckpt_hdr_check(&a->f, h) || h->src_rank != s || h->tag != op->tag ||
		    h->epoch != op->epoch || h->bytes != op->all[s].bytes) {
			op->status = -EPROTO;
			seterr(op, "save tag %llu: the header rank %u sent for its replica is not valid",
			       (unsigned long long)op->tag, s);
		}
	}
	if (op->status)
		return;
	for (j = 0; j <= g->k; j++)
		ckpt_hdr_commit(ckpt_hdr(&a->f, op->slot[j], j), seq);
	a->next_seq = seq + 1;
}

/* Steps 2-8, in the progress thread. */
static void replicate(struct collx_ckpt_op *op)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	int32_t mine;
	uint32_t j;
	int i, rc;

	/* the replica slots, before the exchange: a pinned one (collx-ckptd
	 * drains it) refuses the save on every rank, as bad input does */
	for (j = 1; j <= g->k && !op->status; j++) {
		char why[CKPT_ERRLEN];

		rc = pick_victim(a, j, why, sizeof(why));
		if (rc < 0) {
			op->status = rc;
			seterr(op, "save tag %llu: %s", (unsigned long long)op->tag, why);
		} else {
			op->slot[j] = rc;
		}
	}
	if (exchange(op))
		return;
	submit(op);
	for (i = 0; i < op->nops; i++) {
		struct collx_completion c = { 0 };

		/* blocks: this thread has nothing else to do */
		rc = collx_wait(op->ops[i], &c);
		note(op, rc, "transfer");
		op->st.mem |= c.mem;
		if (c.end_ns > op->end_ns)
			op->end_ns = c.end_ns;
	}
	if (!op->status)
		commit_local(op);
	mine = op->status;
	rc = collx_allgather(a->xcomm, &mine, op->acks, sizeof(int32_t), COLLX_UINT8);
	if (rc) {
		note(op, rc, "acknowledgement");
		return;
	}
	if (op->status)
		return;
	for (i = 0; i < (int)g->nranks; i++)
		if (op->acks[i]) {
			op->status = -EREMOTEIO;
			seterr(op, "save tag %llu: rank %d failed: %s", (unsigned long long)op->tag, i,
			       collx_strerror(op->acks[i]));
			return;
		}
	/* step 8: every rank has its shard and replicas: committed globally */
	for (j = 0; j <= g->k; j++)
		ckpt_hdr_gcommit(ckpt_hdr(&a->f, op->slot[j], j));
	ckpt_area_record_commit(&a->f, op->epoch, op->tag, a->next_seq - 1);
	a->epoch = op->epoch;
	if (op->epoch > a->max_epoch)
		a->max_epoch = op->epoch;
	a->protect_epoch = op->epoch;
	a->protect_tag = op->tag;
	ckpt_area_record_protect(&a->f, op->epoch, op->tag);
}

void *ckpt_progress_main(void *arg)
{
	struct collx_ckpt_area *a = arg;
	struct collx_ckpt_op *op;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->stop && (!a->job || a->job->done))
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop)
			break;
		op = a->job;
		pthread_mutex_unlock(&a->lock);
		replicate(op);
		op->st.replicate_seconds = ckpt_now() - op->t_snap;
		op->st.seconds = ckpt_now() - op->t0;
		op->st.epoch = op->epoch;
		if (!op->status) {
			ckpt_metrics_commit(op->epoch, op->tag);
			ckpt_metrics_observe(NULL, "rank", a->f.g.rank, CKPT_PHASE_REPLICATE,
					     op->st.replicate_seconds,
					     op->st.bytes_local * a->f.g.k, op->tag, NULL);
			ckpt_metrics_observe(NULL, "rank", a->f.g.rank, CKPT_PHASE_DUMP,
					     op->st.seconds, op->st.bytes_local * (a->f.g.k + 1),
					     op->tag, NULL);
		}
		pthread_mutex_lock(&a->lock);
		op->done = true;
		a->job = NULL;
		a->busy = false;
		if (op->orphan)
			op_free(op);
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

double ckpt_wait_idle(struct collx_ckpt_area *a)
{
	double t0 = ckpt_now();

	pthread_mutex_lock(&a->lock);
	while (a->job)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
	return ckpt_now() - t0;
}

int collx_ckpt_save_async(struct collx_comm *comm, struct collx_ckpt_area *a,
			  const struct collx_ckpt_region *regions, int nregions,
			  uint64_t tag, struct collx_ckpt_op **opp)
{
	struct collx_ckpt_op *op;
	const struct ckpt_geom *g;
	struct ckpt_iov v = { 0 };
	double queued;
	int i, rc = 0;

	if (!comm || !a || !opp || a->comm != comm) {
		if (a)
			ckpt_seterr(a, "save: bad arguments (communicator, area or op)");
		return -EINVAL;
	}
	*opp = NULL;
	if (!a->thread_up) {
		ckpt_seterr(a, "save: the area has no progress thread (destroyed)");
		return -EINVAL;
	}
	g = &a->f.g;
	/* step 0: one save replicates at a time; the next waits (simple,
	 * and its snapshot may reuse no slot the running one writes) */
	queued = ckpt_wait_idle(a);
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->ops = calloc(4 * (g->k + 1) * (COLLX_CKPT_MAX_REGIONS + 1), sizeof(*op->ops));
	op->acks = calloc(g->nranks, sizeof(*op->acks));
	op->all = calloc(g->nranks, sizeof(*op->all));
	if (!op->ops || !op->acks || !op->all) {
		op_free(op);
		return -ENOMEM;
	}
	op->a = a;
	op->tag = tag;
	op->t0 = ckpt_now() - queued;
	op->st.tag = tag;
	op->st.queued_seconds = queued;
	a->err[0] = 0;
	if (!tag) {
		rc = -EINVAL;
		ckpt_seterr(a, "save: tag 0 is reserved");
	} else {
		rc = ckpt_check_regions(a, regions, nregions, &v);
		if (rc) {
			char why[CKPT_ERRLEN];

			snprintf(why, sizeof(why), "%s", a->err);
			ckpt_seterr(a, "save tag %llu: %s", (unsigned long long)tag, why);
		}
	}
	if (!rc) {
		/* step 1: the snapshot */
		op->nregions = nregions;
		for (i = 0; i < nregions; i++)
			op->sizes[i] = regions[i].bytes;
		char why[CKPT_ERRLEN];

		rc = pick_victim(a, 0, why, sizeof(why));
		if (rc < 0) {
			ckpt_seterr(a, "save tag %llu: %s", (unsigned long long)tag, why);
		} else {
			op->slot[0] = rc;
			rc = 0;
			ckpt_hdr_invalidate(ckpt_hdr(&a->f, op->slot[0], 0));
			ckpt_hdr_begin(ckpt_hdr(&a->f, op->slot[0], 0), g, v, tag);
			ckpt_snapshot_copy(v, ckpt_data(&a->f, op->slot[0], 0), a->copy_threads);
			op->st.bytes_local = ckpt_regions_bytes(v);
		}
	}
	op->status = rc;
	op->t_snap = ckpt_now();
	op->st.pause_seconds = op->t_snap - op->t0 - queued;
	if (!rc)
		ckpt_metrics_observe(NULL, "rank", g->rank, CKPT_PHASE_PAUSE, op->st.pause_seconds,
				     op->st.bytes_local, tag, NULL);
	/* even a refused save goes to the thread: its descriptor tells the
	 * other ranks, whose saves then fail instead of waiting */
	pthread_mutex_lock(&a->lock);
	op->orphan = rc != 0;
	a->job = op;
	a->busy = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (rc)
		return rc;
	*opp = op;
	return 0;
}

static int finish(struct collx_ckpt_op *op, struct collx_ckpt_stats *st)
{
	struct collx_ckpt_area *a = op->a;
	int rc = op->status;

	if (rc)
		ckpt_seterr(a, "%s", op->err);
	if (st)
		*st = op->st;
	op_free(op);
	return rc;
}

int collx_ckpt_wait(struct collx_ckpt_op *op, struct collx_ckpt_stats *st)
{
	struct collx_ckpt_area *a;

	if (!op)
		return -EINVAL;
	a = op->a;
	pthread_mutex_lock(&a->lock);
	while (!op->done)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
	return finish(op, st);
}

int collx_ckpt_test(struct collx_ckpt_op *op, int *done, struct collx_ckpt_stats *st)
{
	struct collx_ckpt_area *a;
	bool d;

	if (!op || !done)
		return -EINVAL;
	a = op->a;
	pthread_mutex_lock(&a->lock);
	d = op->done;
	pthread_mutex_unlock(&a->lock);
	*done = d;
	return d ? finish(op, st) : 0;
}

int collx_ckpt_save(struct collx_comm *comm, struct collx_ckpt_area *a,
		    const struct collx_ckpt_region *regions, int nregions, uint64_t tag)
{
	struct collx_ckpt_op *op;
	int rc = collx_ckpt_save_async(comm, a, regions, nregions, tag, &op);

	if (rc) {
		/* the refused save's exchange still runs: wait for it, so a
		 * later load or save finds the area idle and in step */
		if (a && a->comm == comm && comm)
			ckpt_wait_idle(a);
		return rc;
	}
	return collx_ckpt_wait(op, NULL);
}
