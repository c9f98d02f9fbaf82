// SPDX-License-Identifier: GPL-2.0
/*
 * collx: the engine, an executor of schedules (kmod/core/coll.h).
 *
 * A comm runs one group of ops at a time (one op, or a SUBMIT_GROUP's).
 * When a group starts, the transfers of all its ops are sorted into
 * channels, one per peer: SENDs to the peer in order, RECVs from it in
 * order; the k-th SEND to a peer meets the peer's k-th RECV from us.  Each
 * transfer is cut into slices of one staging slot.  The engine then does
 * whatever is ready, over and over, until nothing is:
 *
 *  - a SEND slice goes once its dependencies are met and the peer has a
 *    free slot (a credit): gathered by the NIC straight from a registered
 *    buffer, or copied into a tx slot, and written with immediate data
 *    naming (group, chunk) into the peer's rx slot, or into the peer's
 *    output when it offered a DEST window for that transfer;
 *  - a RECV slice is consumed in arrival order once its dependencies are
 *    met: reduced or copied from the rx slot (or already in place), and
 *    its slot credited back;
 *  - COPY and SCALE slices run on the CPU.
 *
 * Knowing nothing of algorithms, it keeps the pipeline the schedules ask
 * for: a slice is forwarded as soon as it arrived.  It runs only in the
 * comm's work item, under the comm's engine lock; CQ handlers count and
 * kick it; no user thread or syscall is needed for progress.  It reports
 * failure upward through its return value; comm.c decides.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "collx_loc.h"
#include "core/reduce.h"
#include "trace.h"
#include "wire.h"

#define COLLX_COOKIE(op, x)	((u64)(op) << 32 | (x))

static bool collx_xfer_remote(const struct collx_xfer *x)
{
	return x->kind == COLLX_XF_SEND || x->kind == COLLX_XF_RECV ||
	       x->kind == COLLX_XF_RECV_REDUCE;
}

/**
 * collx_group_alloc() - a group of prepared ops
 * @comm: their comm
 * @ops: the ops, in order
 * @nops: how many, at least 1
 *
 * Context: process context.
 * Return: the group, or NULL.
 */
struct collx_group *collx_group_alloc(struct collx_comm *comm,
				      struct collx_op **ops, u32 nops)
{
	struct collx_group *g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);

	if (!g)
		return NULL;
	INIT_LIST_HEAD(&g->entry);
	g->ops = kvmalloc_array(nops, sizeof(*g->ops), GFP_KERNEL_ACCOUNT);
	g->chan_of = kvcalloc(comm->params.nranks, sizeof(*g->chan_of),
			      GFP_KERNEL_ACCOUNT);
	if (!g->ops || !g->chan_of) {
		collx_group_free(g);
		return NULL;
	}
	memcpy(g->ops, ops, nops * sizeof(*ops));
	g->nops = nops;
	g->left = nops;
	return g;
}

/**
 * collx_group_free() - free a group (not its ops)
 * @g: the group
 *
 * Context: process context.
 */
void collx_group_free(struct collx_group *g)
{
	u32 i;

	for (i = 0; g->chans && i < g->nchans; i++) {
		kvfree(g->chans[i].tx);
		kvfree(g->chans[i].rx);
	}
	kvfree(g->chans);
	kvfree(g->chan_of);
	kvfree(g->ops);
	kfree(g);
}

/*
 * A queued group holds a reference on each of its ops until it is freed:
 * its passes read every op's state, completed ones included, while the
 * process may already have taken (and freed) a completed op's record.
 */
static void collx_group_release(struct collx_group *g)
{
	u32 i;

	for (i = 0; i < g->nops; i++)
		collx_op_put(g->ops[i]);
	collx_group_free(g);
}

/**
 * collx_engine_queue() - queue a group behind the ones already there
 * @comm: the comm, with @comm->lock held
 * @g: the group; its ops are published
 *
 * Context: process context.
 */
void collx_engine_queue(struct collx_comm *comm, struct collx_group *g)
{
	lockdep_assert_held(&comm->lock);
	list_add_tail(&g->entry, &comm->queue);
	comm->npending += g->nops;
	queue_work(collx_wq, &comm->work);
}

/* Sort the group's transfers into channels, one per peer. */
static int collx_group_channels(struct collx_comm *comm, struct collx_group *g)
{
	u32 i, j, n = 0;

	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		for (j = 0; j < op->sched.n; j++) {
			const struct collx_xfer *x = &op->sched.x[j];

			if (!collx_xfer_remote(x))
				continue;
			if (x->peer >= comm->params.nranks ||
			    x->peer == comm->params.rank)
				return -EINVAL;
			if (!g->chan_of[x->peer])
				g->chan_of[x->peer] = ++n;
		}
	}
	g->chans = kvcalloc(max(n, 1U), sizeof(*g->chans), GFP_KERNEL);
	if (!g->chans)
		return -ENOMEM;
	g->nchans = n;
	/* Count, allocate, fill. */
	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		for (j = 0; j < op->sched.n; j++) {
			const struct collx_xfer *x = &op->sched.x[j];
			struct collx_chan *c;

			if (!collx_xfer_remote(x))
				continue;
			c = &g->chans[g->chan_of[x->peer] - 1];
			c->rank = x->peer;
			if (x->kind == COLLX_XF_SEND)
				c->ntx++;
			else
				c->nrx++;
		}
	}
	for (i = 0; i < n; i++) {
		struct collx_chan *c = &g->chans[i];

		c->tx = kvcalloc(max(c->ntx, 1U), sizeof(*c->tx), GFP_KERNEL);
		c->rx = kvcalloc(max(c->nrx, 1U), sizeof(*c->rx), GFP_KERNEL);
		if (!c->tx || !c->rx)
			return -ENOMEM;
		c->peer = READ_ONCE(comm->peers[c->rank]);
		if (!c->peer)
			return -ENOMEM;
		c->ntx = 0;
		c->nrx = 0;
	}
	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		for (j = 0; j < op->sched.n; j++) {
			const struct collx_xfer *x = &op->sched.x[j];
			struct collx_chan *c;

			if (!collx_xfer_remote(x))
				continue;
			c = &g->chans[g->chan_of[x->peer] - 1];
			if (x->kind == COLLX_XF_SEND) {
				op->xs[j].ordinal = c->ntx;
				c->tx[c->ntx++] = COLLX_COOKIE(i, j);
			} else {
				op->xs[j].ordinal = c->nrx;
				c->rx[c->nrx++] = COLLX_COOKIE(i, j);
			}
		}
	}
	for (i = 0; i < n; i++) {
		struct collx_chan *c = &g->chans[i];

		if (c->ntx)
			c->tx_seq = c->peer->tx_seq++;
		if (c->nrx)
			c->rx_seq = c->peer->rx_seq++;
		c->credit_mark = READ_ONCE(c->peer->credit_msgs);
	}
	return 0;
}

/* Map the registered buffers of an op for the NIC: zero copy. */
static void collx_op_map_direct(struct collx_comm *comm, struct collx_op *op)
{
	struct collx_dev *dev = READ_ONCE(comm->dev);
	u32 i;

	if (!dev)
		return;
	for (i = COLLX_BUF_IN; i <= COLLX_BUF_OUT; i++)
		if (op->buf[i].mr)
			collx_dmap_map(&op->buf[i], dev->ibdev);
}

static int collx_group_start(struct collx_comm *comm, struct collx_group *g)
{
	u32 i;
	int ret;

	g->seq = comm->groups++;
	g->started = true;
	ret = collx_group_channels(comm, g);
	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		op->started = true;
		op->cmpl.start_ns = ktime_get_ns();
		if (!ret)
			collx_op_map_direct(comm, op);
		trace_op_start(comm->id, op->id, op->cmpl.bytes);
	}
	comm->progress_jiffies = jiffies;
	return ret;
}

/* Has slice @slice of transfer @xi met its dependencies? */
static bool collx_slice_ready(const struct collx_op *op, u32 xi, u32 slice)
{
	const struct collx_xfer *x = &op->sched.x[xi];
	u32 k;

	for (k = 0; k < x->ndeps; k++) {
		const struct collx_xstate *d = &op->xs[x->deps[k]];

		if (x->dep_sliced & BIT(k)) {
			if (d->done <= slice)
				return false;
		} else if (d->done < d->nslices) {
			return false;
		}
	}
	return true;
}

/* Elements of slice @i of transfer @x: its offset into the transfer. */
static u64 collx_slice_len(const struct collx_op *op,
			   const struct collx_xfer *x, u32 i, u64 *first)
{
	*first = (u64)i * op->slice;
	if (*first >= x->count)
		return 0;
	return min(op->slice, x->count - *first);
}

static void collx_xfer_done(struct collx_op *op, u32 xi)
{
	struct collx_xstate *xs = &op->xs[xi];

	if (++xs->done == xs->nslices)
		op->left--;
}

static void *collx_buf_at(struct collx_op *op, u32 buf, u64 elem)
{
	return op->buf[buf].kva + elem * op->esize;
}

/* Run the ready slices of local transfers. */
static bool collx_run_local(struct collx_comm *comm, struct collx_op *op,
			    int *budget)
{
	bool progress = false;
	u64 first, n;
	void *dst;
	u32 i;

	for (i = 0; i < op->sched.n && *budget > 0; i++) {
		const struct collx_xfer *x = &op->sched.x[i];
		struct collx_xstate *xs = &op->xs[i];

		if (x->kind != COLLX_XF_COPY && x->kind != COLLX_XF_SCALE)
			continue;
		while (xs->done < xs->nslices && *budget > 0 &&
		       collx_slice_ready(op, i, xs->done)) {
			n = collx_slice_len(op, x, xs->done, &first);
			dst = collx_buf_at(op, x->dst, x->dst_off + first);
			if (x->kind == COLLX_XF_COPY && n)
				memcpy(dst, collx_buf_at(op, x->src,
							 x->src_off + first),
				       n * op->esize);
			else if (n)
				collx_reduce_scale_avg(dst, n, op->dtype,
						       comm->params.nranks);
			collx_xfer_done(op, i);
			progress = true;
			(*budget)--;
		}
	}
	return progress;
}

static void collx_blame(struct collx_blame *b, int err, u32 rank,
			const struct collx_xfer *x)
{
	b->err = err;
	b->rank = rank;
	b->phase = x ? x->phase : COLLX_PHASE_NONE;
	b->step = x ? x->step : 0;
}

/*
 * Has the peer shown no sign of life in this group: no chunk from it
 * consumed or waiting, no credit back, no ABORT?  A stuck rank is silent
 * to all; one that told us why it failed is not.
 */
static bool collx_chan_silent(const struct collx_chan *c)
{
	return !c->rx_unit && !collx_peer_has_arrival(c->peer) &&
	       READ_ONCE(c->peer->credit_msgs) == c->credit_mark &&
	       !READ_ONCE(c->peer->aborted);
}

/*
 * An op of @g whose transfers are all done but which still waits for a
 * window it offered @c's peer to close: the LOCAL_INV completes on the
 * send queue behind what was posted before it (credit returns), so on a
 * dead link it waits for acknowledgements that never come.
 */
static struct collx_op *collx_chan_closing(struct collx_group *g,
					   const struct collx_chan *c, u32 *xi)
{
	u32 i, k;

	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		if (op->left || op->done)
			continue;
		for (k = 0; k < op->sched.n; k++) {
			if (op->xs[k].dmr && op->sched.x[k].peer == c->rank) {
				*xi = k;
				return op;
			}
		}
	}
	return NULL;
}

/*
 * Whom the running group waits for, ignoring @skip's channel: a peer that
 * gives no credit back while a slice is ready for it (it is not
 * consuming) first; then one whose data is missing; then one not
 * connected; then one whose acknowledgements are missing: of our data
 * writes, or those that an op's window invalidation waits behind
 * (collx_chan_closing()).  A peer silent in this group
 * (collx_chan_silent()) goes before any that is not: the others may only
 * wait for it in turn.  Returns the kind (0..3) or -1.
 */
static int collx_group_waits_for(struct collx_group *g, u32 skip,
				 struct collx_blame *b)
{
	int best = -1, best_score = INT_MAX;
	u32 i;

	for (i = 0; g->chans && i < g->nchans; i++) {
		struct collx_chan *c = &g->chans[i];
		struct collx_op *op = NULL;
		bool ready = collx_peer_ready(c->peer);
		int kind = -1, score;
		u32 xi = 0;

		if (c->rank == skip)
			continue;
		if (c->tx_cur < c->ntx) {
			op = g->ops[c->tx[c->tx_cur] >> 32];
			xi = (u32)c->tx[c->tx_cur];
			if (collx_slice_ready(op, xi, op->xs[xi].posted))
				kind = !ready ? 2 :
				       !collx_peer_has_credit(c->peer) ? 0 : -1;
		}
		if (kind < 0 && c->rx_cur < c->nrx) {
			op = g->ops[c->rx[c->rx_cur] >> 32];
			xi = (u32)c->rx[c->rx_cur];
			if (collx_slice_ready(op, xi, op->xs[xi].done) &&
			    !collx_peer_has_arrival(c->peer))
				kind = ready || c->peer->ever_ready ? 1 : 2;
		}
		if (kind < 0 && c->ntx &&
		    c->peer->tx_posted != c->peer->tx_reaped) {
			kind = 3;
			op = g->ops[c->tx[c->ntx - 1] >> 32];
			xi = (u32)c->tx[c->ntx - 1];
		}
		if (kind < 0) {
			op = collx_chan_closing(g, c, &xi);
			if (op)
				kind = 3;
		}
		if (kind < 0)
			continue;
		score = kind + (collx_chan_silent(c) ? 0 : 4);
		if (score < best_score) {
			best_score = score;
			best = kind;
			collx_blame(b, b->err, c->rank, &op->sched.x[xi]);
		}
	}
	return best;
}

/*
 * A failure that a peer's state explains: name whom the peer names.  A
 * peer whose ABORT names itself went away (its destroy, its own local
 * error): that is first-hand, and final.  If it failed without saying
 * why, another peer's ABORT may have (a rank that went away says so to
 * all its peers; the failure reaches us first through a neighbour's
 * hang-up).  And when this rank itself has waited long (half its
 * timeout) on a peer that has been silent all group, that direct
 * observation names the stuck rank better than hearsay does.  Silence
 * means nothing sooner: behind a rank that was just killed, every rank
 * downstream hears nothing, and the lab once saw survivors of a kill
 * name each other that way.
 */
static void collx_blame_peer(struct collx_comm *comm, struct collx_group *g,
			     struct collx_blame *b, int err,
			     struct collx_chan *c, const struct collx_xfer *x)
{
	struct collx_blame own = { .err = err };
	u32 i;

	collx_blame(b, err, c->rank, x);
	if (collx_peer_told(c->peer, b) && b->rank == c->rank)
		return;
	for (i = 0; b->rank == c->rank && i < comm->params.nranks; i++) {
		struct collx_peer *p = READ_ONCE(comm->peers[i]);

		if (p && p != c->peer && collx_peer_told(p, b))
			break;
	}
	if (time_after_eq(jiffies, comm->progress_jiffies +
			  msecs_to_jiffies(comm->params.timeout_ms / 2)) &&
	    collx_group_waits_for(g, c->rank, &own) >= 0 &&
	    own.rank != b->rank &&
	    collx_chan_silent(&g->chans[g->chan_of[own.rank] - 1])) {
		own.err = b->err;
		*b = own;
	}
}

/* Take completed writes; a failed one fails the group. */
static int collx_reap_writes(struct collx_comm *comm, struct collx_group *g,
			     struct collx_chan *c, bool *progress,
			     struct collx_blame *b)
{
	struct collx_op *op;
	u64 cookie;
	bool ok;
	u32 x;

	while (collx_peer_take_write(c->peer, &cookie, &ok)) {
		op = g->ops[cookie >> 32];
		x = (u32)cookie;
		if (!ok) {
			collx_blame_peer(comm, g, b,
					 collx_peer_failed(c->peer) ? :
					 -ECONNRESET, c, &op->sched.x[x]);
			return b->err;
		}
		collx_xfer_done(op, x);
		*progress = true;
	}
	return 0;
}

/* Offer the peer a DEST window for RECV transfer @xi, once it is ready. */
static int collx_maybe_offer(struct collx_op *op, u32 xi, struct collx_chan *c,
			     u64 cookie)
{
	const struct collx_xfer *x = &op->sched.x[xi];
	struct collx_xstate *xs = &op->xs[xi];
	struct collx_buf *dst = &op->buf[x->dst];
	int ret;

	if (xs->dmr || xs->offered || x->kind != COLLX_XF_RECV || !x->count ||
	    !dst->dmap.ibdev || !collx_slice_ready(op, xi, xs->nslices - 1))
		return 0;
	xs->offered = true;
	ret = collx_dest_offer(c->peer, &dst->dmap, x->dst_off * op->esize,
			       x->count * op->esize, c->rx_seq, xs->ordinal,
			       cookie);
	if (ret < 0)
		return ret;
	xs->dmr = ret;
	return 0;
}

/*
 * Offer windows for the receives after the current one too: the peer may
 * start sending a later transfer (an all-gather step's, when our output
 * is free from the start) before we have consumed the current one, and a
 * window offered only then comes too late for it.
 */
static int collx_offer_ahead(struct collx_group *g, struct collx_chan *c,
			     struct collx_blame *b)
{
	u32 i, end = min_t(u32, c->nrx, c->rx_cur + 1 + COLLX_DEST_AHEAD);
	int ret;

	if (!collx_peer_ready(c->peer))
		return 0;
	for (i = c->rx_cur + 1; i < end; i++) {
		struct collx_op *op = g->ops[c->rx[i] >> 32];
		u32 xi = (u32)c->rx[i];

		ret = collx_maybe_offer(op, xi, c, c->rx[i]);
		if (ret) {
			collx_blame(b, ret, c->rank, &op->sched.x[xi]);
			return ret;
		}
	}
	return 0;
}

/* Consume what arrived from one peer, in order. */
static int collx_recv_chan(struct collx_comm *comm, struct collx_group *g,
			   struct collx_chan *c, bool *progress, int *budget,
			   struct collx_blame *b)
{
	struct collx_peer *peer = c->peer;
	struct collx_arrival arr;
	u64 first, n, bytes;
	void *src, *dst;
	u32 slot, want;
	int ret;

	ret = collx_offer_ahead(g, c, b);
	if (ret)
		return ret;
	while (c->rx_cur < c->nrx && *budget > 0) {
		u64 cookie = c->rx[c->rx_cur];
		struct collx_op *op = g->ops[cookie >> 32];
		u32 xi = (u32)cookie;
		const struct collx_xfer *x = &op->sched.x[xi];
		struct collx_xstate *xs = &op->xs[xi];
		bool direct;

		if (xs->done == xs->nslices) {
			c->rx_cur++;
			continue;
		}
		if (collx_peer_ready(peer)) {
			ret = collx_maybe_offer(op, xi, c, cookie);
			if (ret) {
				collx_blame(b, ret, c->rank, x);
				break;
			}
		}
		if (!collx_slice_ready(op, xi, xs->done))
			break;
		/* What arrived before a peer failed is still good. */
		if (!collx_peer_take_arrival(peer, &arr, &slot)) {
			ret = collx_peer_drained(peer);
			if (ret)
				collx_blame_peer(comm, g, b, ret, c, x);
			break;
		}
		n = collx_slice_len(op, x, xs->done, &first);
		bytes = n * op->esize;
		want = collx_wire_imm(c->rx_seq, op->sig, c->rx_unit);
		direct = arr.imm & COLLX_WIRE_IMM_DIRECT;
		if ((arr.imm & ~COLLX_WIRE_IMM_DIRECT) != want ||
		    arr.bytes != bytes || (direct && !xs->dmr)) {
			pr_warn_ratelimited("comm %u: op %u: rank %u sent chunk %#x of %u bytes, expected %#x of %llu (ranks disagree on the collectives?)\n",
					    comm->id, op->id, c->rank, arr.imm,
					    arr.bytes, want, bytes);
			collx_blame(b, -EPROTO, c->rank, x);
			ret = -EPROTO;
			break;
		}
		dst = collx_buf_at(op, x->dst, x->dst_off + first);
		if (direct) {
			collx_dmap_sync_for_cpu(&op->buf[x->dst].dmap,
						(x->dst_off + first) *
						op->esize, bytes);
			op->mem |= COLLX_MEM_PLACED;
		} else if (bytes) {
			src = collx_staging_slot(&peer->rx, slot);
			collx_staging_sync(peer->ibdev, &peer->rx, slot, bytes,
					   false);
			if (x->kind == COLLX_XF_RECV_REDUCE)
				ret = collx_reduce(dst, src, n, op->dtype,
						   op->redop);
			else
				memcpy(dst, src, bytes);
			op->mem |= COLLX_MEM_STAGED;
			if (ret) {
				collx_blame(b, ret, COLLX_RANK_NONE, x);
				break;
			}
		}
		trace_chunk_done(comm->id, op->id, c->rank, x->phase, x->step,
				 xs->done, bytes);
		c->rx_unit++;
		collx_xfer_done(op, xi);
		if (xs->done == xs->nslices) {
			c->rx_cur++;
			/* No more writes into it: invalidate its window now. */
			if (xs->dmr) {
				ret = collx_dest_retire(peer, xs->dmr, cookie);
				if (ret < 0) {
					collx_blame(b, ret, c->rank, x);
					break;
				}
				ret = 0;
			}
		}
		*progress = true;
		(*budget)--;
		cond_resched();
	}
	/* A peer that is gone needs no credit back. */
	if (collx_peer_post_credits(peer) && !ret && !collx_peer_failed(peer)) {
		collx_blame(b, -ECONNRESET, c->rank, NULL);
		ret = -ECONNRESET;
	}
	return ret;
}

/* Post one slice of SEND transfer @xi to @c's peer. */
static int collx_send_slice(struct collx_comm *comm, struct collx_op *op,
			    u32 opi, u32 xi, struct collx_chan *c, u32 slot)
{
	const struct collx_xfer *x = &op->sched.x[xi];
	struct collx_xstate *xs = &op->xs[xi];
	struct collx_peer *peer = c->peer;
	struct collx_buf *src = &op->buf[x->src];
	struct ib_sge sge[COLLX_MAX_SGE];
	u64 first, n, bytes, off, raddr;
	u32 nsge = 0, rkey, imm;
	bool zero_copy = false;
	void *kva;
	int ret;

	n = collx_slice_len(op, x, xs->posted, &first);
	bytes = n * op->esize;
	off = (x->src_off + first) * op->esize;
	imm = collx_wire_imm(c->tx_seq, op->sig, c->tx_unit);
	raddr = peer->remote_iova + (u64)slot * collx_slot_bytes();
	rkey = peer->remote_rkey;
	if (bytes && src->dmap.ibdev) {
		nsge = collx_dmap_sges(&src->dmap, off, bytes,
				       peer->pd->local_dma_lkey, sge,
				       peer->max_sge);
		zero_copy = nsge;
	}
	if (bytes && !zero_copy) {
		kva = collx_staging_slot(&peer->tx, slot);
		memcpy(kva, src->kva + off, bytes);
		collx_staging_sync(peer->ibdev, &peer->tx, slot, bytes, true);
		sge[0].addr = peer->tx.mr->iova +
			      (u64)slot * collx_slot_bytes();
		sge[0].length = bytes;
		sge[0].lkey = peer->tx.mr->lkey;
		nsge = 1;
	}
	if (bytes && collx_dest_lookup(peer, c->tx_seq, xs->ordinal,
				       first * op->esize, bytes, &raddr, &rkey))
		imm |= COLLX_WIRE_IMM_DIRECT;
	ret = collx_peer_post_write(peer, sge, nsge, raddr, rkey, imm,
				    COLLX_COOKIE(opi, xi));
	if (ret)
		return ret;
	atomic64_add(bytes, &collx_stats.bytes_written);
	if (zero_copy)
		atomic64_add(bytes, &collx_stats.bytes_zero_copy);
	else if (bytes)
		op->mem |= COLLX_MEM_STAGED;
	if (imm & COLLX_WIRE_IMM_DIRECT)
		atomic64_add(bytes, &collx_stats.bytes_placed);
	trace_chunk_post(comm->id, op->id, c->rank, x->phase, x->step,
			 xs->posted, bytes);
	xs->posted++;
	c->tx_unit++;
	return 0;
}

/* Send to one peer what is ready and what it has room for. */
static int collx_send_chan(struct collx_comm *comm, struct collx_group *g,
			   struct collx_chan *c, bool *progress, int *budget,
			   struct collx_blame *b)
{
	int ret;

	while (c->tx_cur < c->ntx && *budget > 0) {
		u32 opi = c->tx[c->tx_cur] >> 32, xi = (u32)c->tx[c->tx_cur];
		struct collx_op *op = g->ops[opi];
		struct collx_xstate *xs = &op->xs[xi];
		u32 slot;

		if (xs->posted == xs->nslices) {
			c->tx_cur++;
			continue;
		}
		if (!collx_slice_ready(op, xi, xs->posted))
			return 0;
		if (!collx_peer_ready(c->peer)) {
			ret = collx_peer_failed(c->peer);
			if (ret)
				collx_blame_peer(comm, g, b, ret, c,
						 &op->sched.x[xi]);
			return ret;
		}
		if (!collx_peer_take_credit(c->peer, &slot))
			return 0;
		ret = collx_send_slice(comm, op, opi, xi, c, slot);
		if (ret) {
			ret = collx_peer_failed(c->peer) ? : -ECONNRESET;
			collx_blame_peer(comm, g, b, ret, c,
					 &op->sched.x[xi]);
			return ret;
		}
		*progress = true;
		(*budget)--;
	}
	return 0;
}

/*
 * An op whose transfers are all complete ends once every DEST window
 * offered for it is invalidated: 1 done, 0 not yet, <0 failed.
 */
static int collx_op_finish(struct collx_group *g, u32 opi,
			   struct collx_blame *b)
{
	struct collx_op *op = g->ops[opi];
	int ret, all = 1;
	u32 i;

	for (i = 0; i < op->sched.n; i++) {
		const struct collx_xfer *x = &op->sched.x[i];
		struct collx_xstate *xs = &op->xs[i];
		struct collx_chan *c;

		if (!xs->dmr)
			continue;
		c = &g->chans[g->chan_of[x->peer] - 1];
		ret = collx_dest_retire(c->peer, xs->dmr,
					COLLX_COOKIE(opi, i));
		if (ret < 0) {
			collx_blame(b, ret, x->peer, x);
			return ret;
		}
		if (ret == 1)
			xs->dmr = 0;
		else
			all = 0;
	}
	return all;
}

/* Does anything of @op still need its buffers mapped for the NIC? */
static bool collx_op_nic_busy(const struct collx_op *op)
{
	u32 i;

	for (i = 0; i < op->sched.n; i++)
		if (op->xs[i].dmr)
			return true;
	for (i = COLLX_BUF_IN; i <= COLLX_BUF_OUT; i++)
		if (op->buf[i].dmap.ibdev)
			return true;
	return false;
}

/* The exporter moved or revoked a dma-buf the op uses. */
static bool collx_op_revoked(const struct collx_op *op)
{
	u32 i;

	for (i = COLLX_BUF_IN; i <= COLLX_BUF_OUT; i++)
		if (op->buf[i].mr && READ_ONCE(op->buf[i].mr->revoked))
			return true;
	return false;
}

/* One pass over the running group; true if anything moved. */
static int collx_group_step(struct collx_comm *comm, struct collx_group *g,
			    bool *progress, int *budget, struct collx_blame *b)
{
	u32 i;
	int ret;

	for (i = 0; i < g->nops; i++) {
		if (!g->ops[i]->done && collx_op_revoked(g->ops[i])) {
			collx_blame(b, -EFAULT, COLLX_RANK_NONE, NULL);
			return -EFAULT;
		}
	}
	for (i = 0; i < g->nchans; i++) {
		ret = collx_reap_writes(comm, g, &g->chans[i], progress, b);
		if (ret)
			return ret;
	}
	for (i = 0; i < g->nops; i++)
		*progress |= collx_run_local(comm, g->ops[i], budget);
	for (i = 0; i < g->nchans; i++) {
		ret = collx_recv_chan(comm, g, &g->chans[i], progress, budget,
				      b);
		if (ret)
			return ret;
		ret = collx_send_chan(comm, g, &g->chans[i], progress, budget,
				      b);
		if (ret)
			return ret;
	}
	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		if (op->left || op->done)
			continue;
		ret = collx_op_finish(g, i, b);
		if (ret < 0)
			return ret;
		if (ret == 1) {
			collx_op_complete(op, 0, COLLX_RANK_NONE,
					  COLLX_PHASE_NONE, 0, false);
			comm->npending--;
			g->left--;
			*progress = true;
		}
	}
	return 0;
}

/**
 * collx_engine_progress() - run a comm's collectives as far as they go
 * @comm: the comm, with @comm->lock held and in its READY state
 * @b: out: on failure, the errno, the rank to blame, phase and step
 *
 * Context: the comm's work item.
 * Return: 0 when nothing more can move now, 1 if it stopped to yield the
 * CPU (call again), or a negative errno: the comm must fail.
 */
int collx_engine_progress(struct collx_comm *comm, struct collx_blame *b)
{
	int budget = COLLX_ENGINE_BUDGET, ret;
	struct collx_group *g;
	bool progress;

	lockdep_assert_held(&comm->lock);
	for (;;) {
		g = comm->run;
		if (!g) {
			g = list_first_entry_or_null(&comm->queue,
						     struct collx_group, entry);
			if (!g)
				return 0;
			list_del_init(&g->entry);
			comm->run = g;
			ret = collx_group_start(comm, g);
			if (ret) {
				collx_blame(b, ret, COLLX_RANK_NONE, NULL);
				return ret;
			}
		}
		progress = false;
		ret = collx_group_step(comm, g, &progress, &budget, b);
		if (ret)
			return ret;
		if (progress)
			comm->progress_jiffies = jiffies;
		if (!g->left) {
			comm->run = NULL;
			collx_group_release(g);
			continue;
		}
		if (budget <= 0)
			return 1;
		if (!progress)
			return 0;
	}
}

static void collx_fail_group(struct collx_comm *comm, struct collx_group *g,
			     const struct collx_blame *b)
{
	u32 i;

	for (i = 0; i < g->nops; i++) {
		struct collx_op *op = g->ops[i];

		if (op->done)
			continue;	/* already complete */
		trace_comm_error(comm->id, op->id, b->rank, b->phase, b->err);
		collx_op_complete(op, b->err, b->rank, b->phase, b->step,
				  collx_op_nic_busy(op));
		comm->npending--;
	}
}

/**
 * collx_engine_fail_all() - complete every op of a failed comm
 * @comm: the comm, with @comm->lock held
 * @b: the failure every op reports
 *
 * Ops whose buffers the NIC may still touch keep them until the comm's
 * connections are drained (collx_op_release_held()).
 *
 * Context: process context.
 */
void collx_engine_fail_all(struct collx_comm *comm, const struct collx_blame *b)
{
	struct collx_group *g, *tmp;

	lockdep_assert_held(&comm->lock);
	if (comm->run) {
		collx_fail_group(comm, comm->run, b);
		collx_group_release(comm->run);
		comm->run = NULL;
	}
	list_for_each_entry_safe(g, tmp, &comm->queue, entry) {
		list_del(&g->entry);
		collx_fail_group(comm, g, b);
		collx_group_release(g);
	}
}

/**
 * collx_wait_kind_name() - what a wait kind means
 * @kind: 0..3, or -1
 *
 * Context: any.
 * Return: "credits", "data", "connection", "acks", or NULL for -1.
 */
const char *collx_wait_kind_name(int kind)
{
	static const char * const why[] = {
		"credits", "data", "connection", "acks"
	};

	return kind >= 0 && kind < ARRAY_SIZE(why) ? why[kind] : NULL;
}

/**
 * collx_engine_wait_kind() - whom the running group waits for, and why
 * @comm: the comm, with @comm->lock held
 * @b: out: the rank, and the phase and step of the transfer waiting
 *
 * Context: process context.
 * Return: the kind of wait (collx_wait_kind_name()), or -1 if nothing
 * waits on a peer.
 */
int collx_engine_wait_kind(struct collx_comm *comm, struct collx_blame *b)
{
	lockdep_assert_held(&comm->lock);
	if (!comm->run)
		return -1;
	return collx_group_waits_for(comm->run, COLLX_RANK_NONE, b);
}

/**
 * collx_engine_waits_for() - whom the running group waits for
 * @comm: the comm, with @comm->lock held
 * @b: out: the rank, and the phase and step of the transfer waiting
 *
 * Context: process context.
 * Return: "credits", "data", "connection", "acks", or NULL if nothing
 * waits on a peer.
 */
const char *collx_engine_waits_for(struct collx_comm *comm,
				   struct collx_blame *b)
{
	return collx_wait_kind_name(collx_engine_wait_kind(comm, b));
}

static const char *collx_phase_str(u32 phase)
{
	static const char * const names[] = {
		[COLLX_PHASE_NONE] = "none",
		[COLLX_PHASE_CONNECT] = "connect",
		[COLLX_PHASE_REDUCE_SCATTER] = "reduce-scatter",
		[COLLX_PHASE_ALLGATHER] = "all-gather",
		[COLLX_PHASE_REDUCE] = "reduce",
		[COLLX_PHASE_BROADCAST] = "broadcast",
		[COLLX_PHASE_EXCHANGE] = "exchange",
		[COLLX_PHASE_ALLTOALL] = "alltoall",
		[COLLX_PHASE_P2P] = "p2p",
	};

	return phase < ARRAY_SIZE(names) ? names[phase] : "?";
}

static const char * const collx_coll_names[] = {
	[COLLX_COLL_ALLREDUCE] = "allreduce",
	[COLLX_COLL_BROADCAST] = "broadcast",
	[COLLX_COLL_REDUCE] = "reduce",
	[COLLX_COLL_ALLGATHER] = "allgather",
	[COLLX_COLL_REDUCE_SCATTER] = "reduce_scatter",
	[COLLX_COLL_ALLTOALL] = "alltoall",
	[COLLX_COLL_BARRIER] = "barrier",
	[COLLX_COLL_SEND] = "send",
	[COLLX_COLL_RECV] = "recv",
};

static const char * const collx_algo_names[] = {
	[COLLX_ALGO_AUTO] = "auto",
	[COLLX_ALGO_RING] = "ring",
	[COLLX_ALGO_TREE] = "tree",
	[COLLX_ALGO_RD] = "rd",
	[COLLX_ALGO_PAIRWISE] = "pairwise",
	[COLLX_ALGO_P2P] = "p2p",
};

/* One line about an op that started: how far its transfers got. */
static void collx_op_format(const struct collx_op *op, char *buf, size_t len)
{
	u32 i, sent = 0, recvd = 0, nsend = 0, nrecv = 0, closing = 0;

	for (i = 0; i < op->sched.n; i++) {
		closing += !!op->xs[i].dmr;
		if (op->sched.x[i].kind == COLLX_XF_SEND) {
			nsend += op->xs[i].nslices;
			sent += op->xs[i].posted;
		} else if (collx_xfer_remote(&op->sched.x[i])) {
			nrecv += op->xs[i].nslices;
			recvd += op->xs[i].done;
		}
	}
	snprintf(buf, len,
		 "op %u %s algo %s dtype %u redop %u count %llu memory %s%s%s%s: slices sent %u/%u received %u/%u, transfers left %u/%u, windows open %u",
		 op->id, collx_coll_names[op->coll],
		 collx_algo_names[op->algo], op->dtype, op->redop, op->count,
		 op->mem & COLLX_MEM_DMABUF ? "dma-buf " : "",
		 op->mem & COLLX_MEM_ZERO_COPY ? "zero-copy" : "",
		 op->mem & COLLX_MEM_PLACED ? "+placed" : "",
		 op->mem & COLLX_MEM_ZERO_COPY ? "" : "staged",
		 sent, nsend, recvd, nrecv, op->left, op->sched.n, closing);
}

/**
 * collx_engine_describe() - the engine's part of a comm's debugfs view
 * @comm: the comm, with @comm->lock held
 * @m: where to print
 *
 * For the running group: how far each op got and which peer it waits for,
 * the answer to "which rank is stuck".
 *
 * Context: process context.
 */
void collx_engine_describe(struct collx_comm *comm, struct seq_file *m)
{
	struct collx_blame b = {};
	char line[COLLX_LINE_MAX];
	const char *why;
	u32 i;

	lockdep_assert_held(&comm->lock);
	seq_printf(m, "groups started %llu, ops pending %u\n", comm->groups,
		   comm->npending);
	if (!comm->run)
		return;
	for (i = 0; i < comm->run->nops; i++) {
		if (comm->run->ops[i]->started && !comm->run->ops[i]->done) {
			collx_op_format(comm->run->ops[i], line, sizeof(line));
			seq_printf(m, "%s\n", line);
		}
	}
	why = collx_engine_waits_for(comm, &b);
	if (why)
		seq_printf(m, "waiting for rank %u (%s) in %s step %u since %u ms\n",
			   b.rank, why, collx_phase_str(b.phase), b.step,
			   jiffies_to_msecs(jiffies - comm->progress_jiffies));
}

/**
 * collx_engine_log_state() - the running group's ops, into the kernel log
 * @comm: the comm, with @comm->lock held
 *
 * For a timeout: what debugfs would have shown when it fired, kept for
 * whoever reads the log after the process is gone.
 *
 * Context: process context.
 */
void collx_engine_log_state(struct collx_comm *comm)
{
	char line[COLLX_LINE_MAX];
	u32 i;

	lockdep_assert_held(&comm->lock);
	for (i = 0; comm->run && i < comm->run->nops; i++) {
		if (comm->run->ops[i]->started && !comm->run->ops[i]->done) {
			collx_op_format(comm->run->ops[i], line, sizeof(line));
			pr_warn("comm %u: %s\n", comm->id, line);
		}
	}
}
