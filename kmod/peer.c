// SPDX-License-Identifier: GPL-2.0
/*
 * collx: one RC connection to one rank, its life from set-up to release.
 *
 * A connection is used both ways: each side has an rx staging area the
 * other writes into and a tx area it copies into before writing, its own
 * PD (so an rkey of one connection is worthless on every other), one CQ
 * from the device's pool and a small control area.  The lower rank
 * connects (cm.c); the handshake then proves, both ways, that each side
 * knows the comm's secret before either side's staging accepts a write:
 *
 *   active                                 passive
 *     REQ  {lookup, ranks, nonce_a}  ───►  checks address and lookup
 *     <---  REP {nonce_p, proof_p}        (proof over both nonces)
 *   checks proof_p, registers rx,
 *     READY {rkey, proof_a}          --->  checks proof_a, registers rx
 *     <---  READY {rkey}
 *
 * The peer reports upward only through its ops table (kick, bind,
 * asked); it never sees the comm.  An ABORT from the peer is kept with the
 * peer (collx_peer_blame()), so a failure it causes names whom it named.
 * Posting and completions are in xfer.c, ASK and TELL in ask.c, DEST
 * windows in dest.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "collx_loc.h"
#include "wire.h"

const char *collx_peer_state_name(enum collx_peer_state state)
{
	static const char * const names[] = {
		[COLLX_PEER_IDLE] = "idle",
		[COLLX_PEER_CONNECTING] = "connecting",
		[COLLX_PEER_HANDSHAKE] = "handshake",
		[COLLX_PEER_READY] = "ready",
		[COLLX_PEER_FAILED] = "failed",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

/**
 * collx_peer_set_state() - move a connection to a new state
 * @peer: the connection
 * @state: its new state
 * @err: the error for COLLX_PEER_FAILED (kept if one is already recorded)
 *
 * Context: any; takes @peer->lock; kicks the owner.
 */
void collx_peer_set_state(struct collx_peer *peer, enum collx_peer_state state,
			  int err)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->state != state)
		peer->since = jiffies;
	peer->state = state;
	if (state == COLLX_PEER_READY)
		peer->err = 0;
	else if (err && !peer->err)
		peer->err = err;
	spin_unlock_irqrestore(&peer->lock, flags);
	peer->ops->kick(peer);
}

/**
 * collx_peer_broken() - a connection stopped working
 * @peer: the connection
 * @err: why (negative errno)
 *
 * Marks a ready connection failed unless it is being closed or drained on
 * purpose (then flushed completions are expected).  Before it is ready,
 * the rdma_cm events decide: a refused attempt has its QP moved to error
 * and flushes its receives, which is not a failure but a retry.  The
 * owner decides what a failure means for its collectives: what already
 * arrived is still good.
 *
 * Context: any (CQ and CM handlers).
 */
void collx_peer_broken(struct collx_peer *peer, int err)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&peer->lock, flags);
	changed = !peer->closing && !peer->draining &&
		  peer->state == COLLX_PEER_READY;
	if (changed) {
		peer->state = COLLX_PEER_FAILED;
		peer->since = jiffies;
		if (!peer->err)
			peer->err = err;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (changed)
		peer->ops->kick(peer);
}

/**
 * collx_peer_failed() - the error of a connection that failed
 * @peer: the connection
 *
 * Context: any; takes @peer->lock.
 * Return: its negative errno, or 0 while it has not failed.
 */
int collx_peer_failed(struct collx_peer *peer)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->state == COLLX_PEER_FAILED)
		err = peer->err ? peer->err : -ECONNRESET;
	spin_unlock_irqrestore(&peer->lock, flags);
	return err;
}

/**
 * collx_peer_drained() - a failed connection with nothing more to deliver
 * @peer: the connection
 *
 * Its receive queue has been flushed, or it sent an ABORT (which, on one
 * RC queue pair, completes after every write it made before): every chunk
 * it got through has been seen, and waiting for more from it is now an
 * error.  Not waiting for the flush after an ABORT fails an op that needs
 * a killed rank's data as soon as its ABORT arrives, not when its
 * hang-up does (up to COLLX_ABORT_WAIT_MS later).  A peer failed for what
 * it sent (-EPROTO) is not believed any more either: its connection still
 * works, so no flush would ever come.
 *
 * Context: any; takes @peer->lock.
 * Return: its negative errno, or 0.
 */
int collx_peer_drained(struct collx_peer *peer)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->state == COLLX_PEER_FAILED &&
	    (peer->rq_flushed || !peer->qp || peer->aborted ||
	     peer->err == -EPROTO))
		err = peer->err ? peer->err : -ECONNRESET;
	spin_unlock_irqrestore(&peer->lock, flags);
	return err;
}

/**
 * collx_peer_told() - what the peer's ABORT said
 * @peer: the connection
 * @b: out: the errno and the rank it named, if it sent one naming a rank
 *
 * Context: any; takes @peer->lock.
 * Return: true if it did.
 */
bool collx_peer_told(struct collx_peer *peer, struct collx_blame *b)
{
	unsigned long flags;
	bool told;

	spin_lock_irqsave(&peer->lock, flags);
	told = peer->aborted && peer->abort.rank != COLLX_RANK_NONE;
	if (told) {
		b->err = peer->abort.err;
		b->rank = peer->abort.rank;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return told;
}

/**
 * collx_peer_blame() - whom a failed connection's failure names
 * @peer: the connection, failed
 * @b: in: the errno and where the waiting transfer was; out: the errno
 *	and rank of the peer's ABORT when it sent one (it failed because of
 *	someone else), else the peer itself
 *
 * Context: any; takes @peer->lock.
 */
void collx_peer_blame(struct collx_peer *peer, struct collx_blame *b)
{
	if (!collx_peer_told(peer, b))
		b->rank = peer->rank;
}

/**
 * collx_peer_ready() - can data flow on the connection
 * @peer: the connection
 *
 * Context: any.
 * Return: true when it is READY.
 */
bool collx_peer_ready(struct collx_peer *peer)
{
	return READ_ONCE(peer->state) == COLLX_PEER_READY;
}

/**
 * collx_peer_handshake() - one half of the handshake is done
 * @peer: the connection
 * @established: RC connected (and, active side, the acceptor's proof is
 *	checked and our READY posted)
 * @remote_ready: the peer's READY arrived (and, passive side, its proof is
 *	checked and our READY posted)
 *
 * The halves come from different contexts (an rdma_cm event and a receive
 * completion) in either order; the second makes the connection ready.
 *
 * Context: any; takes @peer->lock.
 */
void collx_peer_handshake(struct collx_peer *peer, bool established,
			  bool remote_ready)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&peer->lock, flags);
	peer->established |= established;
	peer->remote_ready |= remote_ready;
	ready = peer->established && peer->remote_ready &&
		(peer->state == COLLX_PEER_CONNECTING ||
		 peer->state == COLLX_PEER_HANDSHAKE);
	if (ready) {
		peer->state = COLLX_PEER_READY;
		peer->ever_ready = true;
		peer->err = 0;	/* forget why earlier attempts failed */
		peer->since = jiffies;
	} else if (peer->state == COLLX_PEER_CONNECTING) {
		peer->state = COLLX_PEER_HANDSHAKE;
		peer->since = jiffies;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	peer->ops->kick(peer);
}

static void collx_peer_uncharge(struct collx_peer *peer)
{
	if (!peer->charged)
		return;
	collx_memlock_uncharge(peer->params->memlock_mm, peer->charged);
	peer->charged = 0;
}

/**
 * collx_peer_init() - prepare an unconnected connection
 * @peer: the connection, zeroed
 * @ops: upward calls
 * @owner: the owner's cookie
 * @params: the owner's connection parameters
 * @rank: the remote rank
 *
 * Context: process context.
 */
void collx_peer_init(struct collx_peer *peer, const struct collx_peer_ops *ops,
		     void *owner, const struct collx_conn_params *params,
		     u32 rank)
{
	peer->ops = ops;
	peer->owner = owner;
	peer->params = params;
	peer->rank = rank;
	peer->active = params->rank < rank;
	peer->state = COLLX_PEER_IDLE;
	peer->since = jiffies;
	spin_lock_init(&peer->lock);
	mutex_init(&peer->mutex);
	init_completion(&peer->abort_done);
	collx_xfer_init(peer);
	INIT_DELAYED_WORK(&peer->retry_work, collx_cm_retry_work);
}

/**
 * collx_peer_setup() - create the PD, QP and buffers of a connection
 * @peer: the connection, with @peer->mutex held
 * @cm_id: its rdma_cm id, resolved to a device
 *
 * Charges both staging areas to the comm's RLIMIT_MEMLOCK, takes a CQ
 * from the device's pool, creates the RC QP, the control buffers and the
 * DEST MRs, and posts the receives.  On failure everything made is
 * released again.
 *
 * Context: process context (an rdma_cm handler).
 * Return: 0 or a negative errno (-ENOMEM over RLIMIT_MEMLOCK).
 */
int collx_peer_setup(struct collx_peer *peer, struct rdma_cm_id *cm_id)
{
	struct ib_device *ibdev = cm_id->device;
	struct ib_qp_init_attr qp_attr = {};
	unsigned long npages;
	u32 nsend, nslots = collx_slots(), i;
	int ret;

	ret = peer->ops->bind(peer, ibdev);
	if (ret)
		return ret;
	npages = 2 * DIV_ROUND_UP(collx_staging_bytes(), PAGE_SIZE);
	ret = collx_memlock_charge(peer->params->memlock_mm, npages,
				   peer->params->memlock_limit);
	if (ret)
		return ret;
	peer->charged = npages;

	peer->cm_id = cm_id;
	peer->ibdev = ibdev;
	peer->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(peer->pd)) {
		ret = PTR_ERR(peer->pd);
		peer->pd = NULL;
		goto out_release;
	}

	/*
	 * Receives: one per chunk the peer may have in flight (its credits),
	 * one per credit message we may get back, DESTs, READY, ABORT, ASK
	 * and TELL.
	 */
	peer->nrecv = 2 * nslots + COLLX_DEST_MRS + 6;
	/*
	 * Sends: writes, credit messages, DEST REG+SEND+INV, READY, ABORT,
	 * ASK, TELL.
	 */
	nsend = 2 * nslots + 3 * COLLX_DEST_MRS + 10;
	peer->cq_size = peer->nrecv + nsend + 2;
	peer->cq = ib_cq_pool_get(ibdev, peer->cq_size, -1, IB_POLL_WORKQUEUE);
	if (IS_ERR(peer->cq)) {
		ret = PTR_ERR(peer->cq);
		peer->cq = NULL;
		goto out_release;
	}

	qp_attr.event_handler = collx_peer_qp_event;
	qp_attr.qp_context = peer;
	qp_attr.send_cq = peer->cq;
	qp_attr.recv_cq = peer->cq;
	qp_attr.cap.max_send_wr = nsend;
	qp_attr.cap.max_recv_wr = peer->nrecv + 1;
	peer->max_sge = min_t(u32, ibdev->attrs.max_send_sge, COLLX_MAX_SGE);
	qp_attr.cap.max_send_sge = peer->max_sge;
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(cm_id, peer->pd, &qp_attr);
	if (ret)
		goto out_release;
	peer->qp = cm_id->qp;
	atomic_inc(&collx_stats.qps);

	ret = collx_staging_alloc(ibdev, peer->pd, &peer->rx, 1);
	if (!ret)
		ret = collx_staging_alloc(ibdev, peer->pd, &peer->tx, 2);
	if (ret)
		goto out_release;
	collx_dest_setup(peer);

	peer->ctrl_bytes = (size_t)(peer->nrecv + COLLX_CTRL_SENDS +
				    COLLX_DEST_MRS) * COLLX_CTRL_SIZE;
	peer->ctrl = kzalloc(peer->ctrl_bytes, GFP_KERNEL);
	peer->recvs = kcalloc(peer->nrecv, sizeof(*peer->recvs), GFP_KERNEL);
	peer->rx_arrivals = kcalloc(2 * nslots, sizeof(*peer->rx_arrivals),
				    GFP_KERNEL);
	peer->tx_cookies = kcalloc(2 * nslots, sizeof(*peer->tx_cookies),
				   GFP_KERNEL);
	if (!peer->ctrl || !peer->recvs || !peer->rx_arrivals ||
	    !peer->tx_cookies) {
		ret = -ENOMEM;
		goto out_release;
	}
	peer->ctrl_dma = ib_dma_map_single(ibdev, peer->ctrl, peer->ctrl_bytes,
					   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, peer->ctrl_dma)) {
		peer->ctrl_dma = 0;
		ret = -ENOMEM;
		goto out_release;
	}
	peer->ctrl_mapped = true;

	for (i = 0; i < peer->nrecv; i++) {
		ret = collx_peer_post_recv(peer, i);
		if (ret)
			goto out_release;
	}
	get_random_bytes(peer->nonce, sizeof(peer->nonce));
	return 0;

out_release:
	collx_peer_release_rdma(peer);
	return ret;
}

/* Forget everything of one connection attempt but the peer's identity. */
static void collx_peer_reset(struct collx_peer *peer)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	peer->established = false;
	peer->remote_ready = false;
	peer->rq_flushed = false;
	peer->credits = 0;
	peer->credits_owed = 0;
	peer->remote_iova = 0;
	peer->remote_rkey = 0;
	peer->arr_head = 0;
	peer->arr_tail = 0;
	peer->rx_consumed = 0;
	peer->tx_posted = 0;
	peer->tx_done = 0;
	peer->tx_errs = 0;
	peer->tx_reaped = 0;
	peer->tx_seq = 0;
	peer->rx_seq = 0;
	peer->inv_posted = 0;
	peer->inv_done = 0;
	peer->aborted = false;
	peer->abort_arrived = 0;
	memset(peer->rdest, 0, sizeof(peer->rdest));
	spin_unlock_irqrestore(&peer->lock, flags);
}

/**
 * collx_peer_release_rdma() - free a connection's QP, PD, CQ and buffers
 * @peer: the connection, with @peer->mutex held; its rdma_cm id stays
 *
 * The QP is drained first (nvme-rdma's order: disconnected, then
 * ib_drain_qp(), then destroyed), so no completion handler runs
 * afterwards and no FRWR registration is left bound: the DEST MRs and
 * staging MRs are deregistered before the QP and PD go.
 *
 * Context: process context.
 */
void collx_peer_release_rdma(struct collx_peer *peer)
{
	struct ib_device *ibdev = peer->ibdev;
	unsigned long flags;

	if (peer->qp && !peer->drained) {
		spin_lock_irqsave(&peer->lock, flags);
		peer->draining = true;
		spin_unlock_irqrestore(&peer->lock, flags);
		ib_drain_qp(peer->qp);
	}
	peer->drained = false;
	collx_dest_release(peer);
	if (ibdev) {
		collx_staging_free(ibdev, &peer->rx);
		collx_staging_free(ibdev, &peer->tx);
	}
	if (peer->qp) {
		rdma_destroy_qp(peer->cm_id);
		atomic_dec(&collx_stats.qps);
		spin_lock_irqsave(&peer->lock, flags);
		peer->qp = NULL;
		peer->draining = false;
		spin_unlock_irqrestore(&peer->lock, flags);
	}
	if (peer->cq) {
		ib_cq_pool_put(peer->cq, peer->cq_size);
		peer->cq = NULL;
	}
	if (peer->ctrl_mapped)
		ib_dma_unmap_single(ibdev, peer->ctrl_dma, peer->ctrl_bytes,
				    DMA_BIDIRECTIONAL);
	peer->ctrl_mapped = false;
	if (peer->pd) {
		ib_dealloc_pd(peer->pd);
		peer->pd = NULL;
	}
	kfree(peer->ctrl);
	peer->ctrl = NULL;
	kfree(peer->recvs);
	peer->recvs = NULL;
	kfree(peer->rx_arrivals);
	peer->rx_arrivals = NULL;
	kfree(peer->tx_cookies);
	peer->tx_cookies = NULL;
	peer->ibdev = NULL;
	collx_peer_uncharge(peer);
	collx_peer_reset(peer);
}

/**
 * collx_peer_abort() - tell the peer why our side failed
 * @peer: the connection
 * @err: our errno
 * @rank: the rank we blame
 * @phase: where
 * @step: and the step
 *
 * Posts an ABORT; collx_peer_hangup() then waits, briefly, until the
 * peer's NIC acknowledged it, so it is in the peer's receive queue before
 * the disconnect flushes that queue, and disconnects.
 *
 * Context: process context; takes @peer->mutex.
 * Return: true if an ABORT was posted.
 */
bool collx_peer_abort(struct collx_peer *peer, int err, u32 rank, u32 phase,
		      u32 step)
{
	bool wait = false;

	mutex_lock(&peer->mutex);
	if (!peer->closing && peer->qp &&
	    READ_ONCE(peer->state) == COLLX_PEER_READY) {
		reinit_completion(&peer->abort_done);
		wait = !collx_peer_post_abort(peer, err, rank, phase, step);
	}
	mutex_unlock(&peer->mutex);
	return wait;
}

/**
 * collx_peer_hangup() - disconnect, after an ABORT reached the peer or
 *	@deadline passed
 * @peer: the connection
 * @wait: collx_peer_abort() posted an ABORT
 * @deadline: jiffies after which we stop waiting for it
 *
 * Context: process context; takes @peer->mutex.
 */
void collx_peer_hangup(struct collx_peer *peer, bool wait,
		       unsigned long deadline)
{
	if (wait && time_before(jiffies, deadline))
		wait_for_completion_timeout(&peer->abort_done,
					    deadline - jiffies);
	mutex_lock(&peer->mutex);
	if (peer->cm_id && peer->qp && !peer->closing)
		rdma_disconnect(peer->cm_id);
	mutex_unlock(&peer->mutex);
}

/**
 * collx_peer_drain() - stop the NIC for good on a failed connection
 * @peer: the connection; its comm failed and hung up
 *
 * Moves the QP to error and waits until every posted work request has
 * flushed: afterwards the NIC touches none of the buffers it was given,
 * so a failed op's buffers can be released before the comm is destroyed.
 *
 * Context: process context; takes @peer->mutex.
 */
void collx_peer_drain(struct collx_peer *peer)
{
	unsigned long flags;

	mutex_lock(&peer->mutex);
	if (peer->qp && !peer->drained && !peer->closing) {
		spin_lock_irqsave(&peer->lock, flags);
		peer->draining = true;
		spin_unlock_irqrestore(&peer->lock, flags);
		ib_drain_qp(peer->qp);
		peer->drained = true;
	}
	mutex_unlock(&peer->mutex);
}

/**
 * collx_peer_release() - close a connection for good
 * @peer: the connection
 *
 * After this no handler touches @peer: CM handlers see @peer->closing,
 * completion handlers have been drained, and the id is destroyed (which
 * waits for a handler still running).
 *
 * Context: process context; not from an rdma_cm handler.
 */
void collx_peer_release(struct collx_peer *peer)
{
	struct rdma_cm_id *cm_id;
	unsigned long flags;

	cancel_delayed_work_sync(&peer->retry_work);
	mutex_lock(&peer->mutex);
	spin_lock_irqsave(&peer->lock, flags);
	peer->closing = true;
	spin_unlock_irqrestore(&peer->lock, flags);
	cm_id = peer->cm_id;
	if (cm_id && peer->qp)
		rdma_disconnect(cm_id);
	collx_peer_release_rdma(peer);
	peer->cm_id = NULL;
	mutex_unlock(&peer->mutex);
	/* Outside the mutex: destroying waits for a handler that wants it. */
	if (cm_id)
		rdma_destroy_id(cm_id);
	cancel_delayed_work_sync(&peer->retry_work);
}

/**
 * collx_peer_format() - one line about a connection
 * @peer: the connection
 * @buf: where
 * @len: its size
 *
 * For debugfs, and for the kernel log when a comm times out: what the
 * connection sent, received and still owes, enough to tell a lost arrival
 * from a silent peer.
 *
 * Context: any; takes @peer->lock.
 */
void collx_peer_format(struct collx_peer *peer, char *buf, size_t len)
{
	char err[20] = "";
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->err)
		snprintf(err, sizeof(err), " (error %d)", peer->err);
	snprintf(buf, len,
		 "peer rank %u: %s%s, %s, attempts %u, credits %u/%u (returns %llu), writes posted %llu done %llu failed %llu, chunks arrived %llu consumed %llu, invalidations %llu/%llu%s%s",
		 peer->rank, collx_peer_state_name(peer->state), err,
		 peer->active ? "we connect" : "it connects",
		 peer->attempts, peer->credits, collx_slots(),
		 peer->credit_msgs, peer->tx_posted, peer->tx_done,
		 peer->tx_errs,
		 peer->rx_consumed + (peer->arr_tail - peer->arr_head),
		 peer->rx_consumed, peer->inv_done, peer->inv_posted,
		 peer->aborted ? ", aborted" : "",
		 peer->rq_flushed ? ", receives flushed" : "");
	spin_unlock_irqrestore(&peer->lock, flags);
}
