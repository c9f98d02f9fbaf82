// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Phase 1: the dump into peers' memory.
 *
 *  1. allgather each rank's descriptor (tag, region sizes, geometry, and
 *     whether its arguments are good, so a bad one fails every rank
 *     instead of leaving them waiting);
 *  2. mark the entries this save overwrites empty (the older slot of
 *     each: the newest complete copy is never touched);
 *  3. group A: the shard's regions sent to the k holders, the k sources'
 *     shards received into their replica entries (the kernel writes them
 *     straight into the registered area);
 *  4. meanwhile the shard is copied into the own entry, hashed per chunk;
 *  5. group B (after A on every connection: a comm runs one group at a
 *     time): the owner's header, hashes included, to each holder;
 *  6. each header checked and committed, state last; then an allgather
 *     of every rank's outcome is the acknowledgement.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"

struct desc {
	uint64_t tag;
	uint64_t bytes;
	uint64_t shard_cap;
	uint32_t chunk_bytes, k, stride, nregions;
	int32_t status;
	uint32_t __pad;
	uint64_t sizes[COLLX_CKPT_MAX_REGIONS];
};

enum { ST_XFER, ST_ACK, ST_DONE };

struct collx_ckpt_op {
	struct collx_ckpt_area *a;
	struct collx_comm *comm;
	uint64_t tag;
	double t0;
	int stage;
	int status;			/* this rank's first error */
	bool weak;			/* status is a consequence (EPIPE), not the cause */
	int nops;
	struct collx_op **ops;
	bool *done;
	struct collx_op *ack;
	int32_t mine;
	int32_t *acks;
	struct desc *all;
	int slot[COLLX_CKPT_MAX_K + 1];
	uint64_t end_ns;
	struct collx_ckpt_stats st;
};

static void op_free(struct collx_ckpt_op *op)
{
	if (op->a)
		op->a->busy = false;
	free(op->ops);
	free(op->done);
	free(op->acks);
	free(op->all);
	free(op);
}

static void note(struct collx_ckpt_op *op, int rc, const char *what)
{
	/* a submission refused because the comm already failed (-EPIPE)
	 * says nothing about why: an earlier transfer's own error, reaped
	 * later, replaces it */
	if (rc && (!op->status || (op->weak && rc != -EPIPE))) {
		op->weak = rc == -EPIPE;
		op->status = rc;
		ckpt_seterr(op->a, "save tag %llu: %s: %s (%s)", (unsigned long long)op->tag, what,
			    collx_strerror(rc), collx_comm_last_error(op->comm));
	}
}

/* Step 1: agree on the save, or all fail on one rank's bad input. */
static int exchange(struct collx_ckpt_op *op, struct ckpt_iov *v, const struct collx_ckpt_region *regions,
		    int nregions)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	struct desc d = { 0 };
	uint32_t i, j;
	int rc;

	d.tag = op->tag;
	d.shard_cap = g->shard_cap;
	d.chunk_bytes = g->chunk_bytes;
	d.k = g->k;
	d.stride = g->stride;
	rc = op->tag ? 0 : -EINVAL;
	if (rc)
		ckpt_seterr(a, "save: tag 0 is reserved");
	if (!rc) {
		rc = ckpt_check_regions(a, regions, nregions, v);
		if (rc) {
			char why[CKPT_ERRLEN];

			snprintf(why, sizeof(why), "%s", a->err);
			ckpt_seterr(a, "save tag %llu: %s", (unsigned long long)op->tag, why);
		}
	}
	if (!rc) {
		d.bytes = ckpt_regions_bytes(*v);
		d.nregions = nregions;
		for (i = 0; i < (uint32_t)nregions; i++)
			d.sizes[i] = regions[i].bytes;
	}
	d.status = rc;
	op->status = rc;
	rc = collx_allgather(op->comm, &d, op->all, sizeof(d), COLLX_UINT8);
	if (rc) {
		note(op, rc, "exchanging descriptors");
		return rc;
	}
	for (i = 0; i < g->nranks; i++) {
		const struct desc *o = &op->all[i];

		if (o->status) {
			if (!op->status) {
				op->status = -EREMOTEIO;
				ckpt_seterr(a, "save tag %llu: rank %u refused it: %s",
					    (unsigned long long)op->tag, i, collx_strerror(o->status));
			}
			return op->status;
		}
		if (o->tag != op->tag || o->shard_cap != g->shard_cap ||
		    o->chunk_bytes != g->chunk_bytes || o->k != g->k || o->stride != g->stride) {
			op->status = -EINVAL;
			ckpt_seterr(a,
				    "save: rank %u saves tag %llu with shard %llu, chunk %u, k %u, stride %u; this rank tag %llu, %llu, %u, %u, %u",
				    i, (unsigned long long)o->tag, (unsigned long long)o->shard_cap,
				    o->chunk_bytes, o->k, o->stride, (unsigned long long)op->tag,
				    (unsigned long long)g->shard_cap, g->chunk_bytes, g->k, g->stride);
			return op->status;
		}
		{
			uint64_t sum = 0;

			for (j = 0; j < o->nregions && j < COLLX_CKPT_MAX_REGIONS; j++)
				sum += o->sizes[j];
			if (o->nregions > COLLX_CKPT_MAX_REGIONS || sum != o->bytes ||
			    o->bytes > g->shard_cap) {
				op->status = -EPROTO;
				ckpt_seterr(a, "save: rank %u sent a malformed descriptor", i);
				return op->status;
			}
		}
	}
	return op->status;
}

static int add_op(struct collx_ckpt_op *op, struct collx_op *o)
{
	op->ops[op->nops++] = o;
	return 0;
}

int collx_ckpt_save_async(struct collx_comm *comm, struct collx_ckpt_area *a,
			  const struct collx_ckpt_region *regions, int nregions,
			  uint64_t tag, struct collx_ckpt_op **opp)
{
	struct collx_ckpt_op *op;
	const struct ckpt_geom *g;
	struct ckpt_iov v = { 0 };
	uint32_t j, i, nr;
	int rc, maxops;

	if (!comm || !a || !opp || a->comm != comm) {
		if (a)
			ckpt_seterr(a, "save: bad arguments (communicator, area or op)");
		return -EINVAL;
	}
	*opp = NULL;
	if (a->busy) {
		ckpt_seterr(a, "save: another save on this area is in flight");
		return -EBUSY;
	}
	g = &a->f.g;
	nr = g->nranks;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	maxops = 4 * (g->k + 1) * (COLLX_CKPT_MAX_REGIONS + 1);
	op->ops = calloc(maxops, sizeof(*op->ops));
	op->done = calloc(maxops, sizeof(*op->done));
	op->acks = calloc(nr, sizeof(*op->acks));
	op->all = calloc(nr, sizeof(*op->all));
	if (!op->ops || !op->done || !op->acks || !op->all) {
		op_free(op);
		return -ENOMEM;
	}
	op->a = a;
	op->comm = comm;
	op->tag = tag;
	op->t0 = ckpt_now();
	a->busy = true;
	a->err[0] = 0;
	rc = exchange(op, &v, regions, nregions);
	if (rc) {
		op_free(op);
		return rc;
	}
	/* step 2 */
	for (j = 0; j <= g->k; j++) {
		op->slot[j] = ckpt_victim(&a->f, j);
		ckpt_hdr_invalidate(ckpt_hdr(&a->f, op->slot[j], j));
	}
	/* step 3: group A */
	collx_group_start();
	for (j = 1; j <= g->k; j++) {
		uint32_t h = ckpt_holder(nr, g->stride, g->rank, j);

		for (i = 0; i < (uint32_t)nregions; i++) {
			struct collx_op *o = NULL;

			if (!regions[i].bytes)
				continue;
			rc = collx_send_async(comm, regions[i].buf, regions[i].bytes, COLLX_UINT8, h, &o);
			if (o)
				add_op(op, o);
			note(op, rc, "send");
			op->st.bytes_sent += regions[i].bytes;
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
			if (o)
				add_op(op, o);
			note(op, rc, "recv");
			off += d->sizes[i];
		}
		op->st.bytes_received += d->bytes;
	}
	rc = collx_group_end();
	note(op, rc, "submitting the replicas");
	/* step 4, while the replicas move */
	ckpt_copy_and_hash(ckpt_hdr(&a->f, op->slot[0], 0), g, v,
			   ckpt_data(&a->f, op->slot[0], 0), tag);
	op->st.bytes_local = ckpt_regions_bytes(v);
	/* step 5: group B */
	collx_group_start();
	for (j = 1; j <= g->k; j++) {
		struct collx_op *o = NULL;

		rc = collx_send_async(comm, ckpt_hdr(&a->f, op->slot[0], 0), g->hdr_block, COLLX_UINT8,
				      ckpt_holder(nr, g->stride, g->rank, j), &o);
		if (o)
			add_op(op, o);
		note(op, rc, "send header");
	}
	for (j = 1; j <= g->k; j++) {
		struct collx_op *o = NULL;

		rc = collx_recv_async(comm, ckpt_hdr(&a->f, op->slot[j], j), g->hdr_block, COLLX_UINT8,
				      ckpt_source(nr, g->stride, g->rank, j), &o);
		if (o)
			add_op(op, o);
		note(op, rc, "recv header");
	}
	rc = collx_group_end();
	note(op, rc, "submitting the headers");
	op->st.tag = tag;
	op->stage = ST_XFER;
	*opp = op;
	return 0;
}

/* Step 6: every header checked, then committed (state last). */
static void commit(struct collx_ckpt_op *op)
{
	struct collx_ckpt_area *a = op->a;
	const struct ckpt_geom *g = &a->f.g;
	uint64_t seq = a->next_seq;
	uint32_t j;

	for (j = 1; j <= g->k && !op->status; j++) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(&a->f, op->slot[j], j);
		uint32_t s = ckpt_source(g->nranks, g->stride, g->rank, j);

		if (ckpt_hdr_check(&a->f, h) || h->src_rank != s || h->tag != op->tag ||
		    h->bytes != op->all[s].bytes) {
			op->status = -EPROTO;
			ckpt_seterr(a, "save tag %llu: the header rank %u sent for its replica is not valid",
				    (unsigned long long)op->tag, s);
		}
	}
	if (op->status)
		return;
	for (j = 0; j <= g->k; j++)
		ckpt_hdr_commit(ckpt_hdr(&a->f, op->slot[j], j), seq);
	a->next_seq = seq + 1;
}

/* Drive @op; @block: wait, else return -EAGAIN while it runs. */
static int advance(struct collx_ckpt_op *op, bool block)
{
	struct collx_completion c;
	int i, rc, done;

	if (op->stage == ST_XFER) {
		for (i = 0; i < op->nops; i++) {
			if (op->done[i])
				continue;
			memset(&c, 0, sizeof(c));
			if (block) {
				rc = collx_wait(op->ops[i], &c);
				done = 1;
			} else {
				rc = collx_test(op->ops[i], &done, &c);
			}
			if (!done)
				return -EAGAIN;
			op->done[i] = true;
			note(op, rc, "transfer");
			op->st.mem |= c.mem;
			if (c.end_ns > op->end_ns)
				op->end_ns = c.end_ns;
		}
		if (!op->status)
			commit(op);
		op->mine = op->status;
		rc = collx_allgather_async(op->comm, &op->mine, op->acks, sizeof(int32_t),
					   COLLX_UINT8, &op->ack);
		if (rc) {
			note(op, rc, "acknowledgement");
			op->stage = ST_DONE;
			return 0;
		}
		op->stage = ST_ACK;
	}
	if (op->stage == ST_ACK) {
		memset(&c, 0, sizeof(c));
		if (block) {
			rc = collx_wait(op->ack, &c);
			done = 1;
		} else {
			rc = collx_test(op->ack, &done, &c);
		}
		if (!done)
			return -EAGAIN;
		note(op, rc, "acknowledgement");
		if (c.end_ns > op->end_ns)
			op->end_ns = c.end_ns;
		if (!rc)
			op->status = ckpt_combine(op->a, op->acks, op->a->f.g.nranks, op->status,
						  "save");
		op->stage = ST_DONE;
	}
	return 0;
}

static int finish(struct collx_ckpt_op *op, struct collx_ckpt_stats *st)
{
	struct collx_ckpt_area *a = op->a;
	int rc = op->status;
	double end = op->end_ns ? op->end_ns / 1e9 : ckpt_now();

	op->st.seconds = end - op->t0;
	if (!rc)
		ckpt_metrics_observe(NULL, "rank", a->f.g.rank, CKPT_PHASE_DUMP, op->st.seconds,
				     op->st.bytes_local * (a->f.g.k + 1), op->tag, NULL);
	if (st)
		*st = op->st;
	op_free(op);
	return rc;
}

int collx_ckpt_wait(struct collx_ckpt_op *op, struct collx_ckpt_stats *st)
{
	if (!op)
		return -EINVAL;
	advance(op, true);
	return finish(op, st);
}

int collx_ckpt_test(struct collx_ckpt_op *op, int *done, struct collx_ckpt_stats *st)
{
	if (!op || !done)
		return -EINVAL;
	if (advance(op, false) == -EAGAIN) {
		*done = 0;
		return 0;
	}
	*done = 1;
	return finish(op, st);
}

int collx_ckpt_save(struct collx_comm *comm, struct collx_ckpt_area *a,
		    const struct collx_ckpt_region *regions, int nregions, uint64_t tag)
{
	struct collx_ckpt_op *op;
	int rc = collx_ckpt_save_async(comm, a, regions, nregions, tag, &op);

	return rc ? rc : collx_ckpt_wait(op, NULL);
}
