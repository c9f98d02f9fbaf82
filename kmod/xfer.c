// SPDX-License-Identifier: GPL-2.0
/*
 * collx: what a connection posts and what its completions mean.
 *
 * Data moves as RDMA WRITE_WITH_IMM into the peer's rx staging slots (or
 * straight into its output through a DEST window); the peer gives slots
 * back with a zero-length SEND_WITH_IMM carrying how many (a credit).
 * Control messages (READY, DEST, ABORT, ASK, TELL) are SENDs of the
 * control buffers.
 *
 * CQ handlers never sleep and never touch the engine's state: they record
 * what happened under @peer->lock and kick the owner.  Everything the
 * network sends is checked before it is believed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ratelimit.h>

#include "collx_loc.h"
#include "wire.h"

/**
 * collx_peer_ctrl_buf() - control buffer @idx
 * @peer: the connection
 * @idx: a receive (below @peer->nrecv) or collx_peer_ctrl_send_buf()
 *
 * Context: any.
 * Return: its kernel address.
 */
void *collx_peer_ctrl_buf(struct collx_peer *peer, u32 idx)
{
	return peer->ctrl + (size_t)idx * COLLX_CTRL_SIZE;
}

/**
 * collx_peer_ctrl_send_buf() - control send buffer @which
 * @peer: the connection
 * @which: COLLX_CTRL_*_BUF, or COLLX_CTRL_SENDS + k for DEST MR k
 *
 * Context: any.
 * Return: the buffer's index in the control area.
 */
u32 collx_peer_ctrl_send_buf(struct collx_peer *peer, u32 which)
{
	return peer->nrecv + which;
}

/**
 * collx_peer_ctrl_send() - prepare a signalled SEND of a control buffer
 * @peer: the connection
 * @idx: the buffer, filled by the caller
 * @len: bytes to send
 * @cqe: its completion entry
 * @sge: out
 * @wr: out
 *
 * Context: any.
 */
void collx_peer_ctrl_send(struct collx_peer *peer, u32 idx, u32 len,
			  struct ib_cqe *cqe, struct ib_sge *sge,
			  struct ib_send_wr *wr)
{
	u64 off = (u64)idx * COLLX_CTRL_SIZE;

	*sge = (struct ib_sge) {
		.addr = peer->ctrl_dma + off,
		.length = len,
		.lkey = peer->pd->local_dma_lkey,
	};
	*wr = (struct ib_send_wr) {
		.opcode = IB_WR_SEND,
		.wr_cqe = cqe,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = sge,
		.num_sge = 1,
	};
	ib_dma_sync_single_for_device(peer->ibdev, sge->addr, COLLX_CTRL_SIZE,
				      DMA_BIDIRECTIONAL);
}

/**
 * collx_peer_post_locked() - post a send, unless the connection is going away
 * @peer: the connection
 * @wr: the work request
 *
 * Context: any, with @peer->lock held (closing and the QP do not change).
 * Return: 0, -ECONNRESET (closing) or ib_post_send()'s error.
 */
int collx_peer_post_locked(struct collx_peer *peer,
			   const struct ib_send_wr *wr)
{
	lockdep_assert_held(&peer->lock);
	if (peer->closing || !peer->qp)
		return -ECONNRESET;
	return ib_post_send(peer->qp, wr, NULL);
}

static int collx_peer_post(struct collx_peer *peer, const struct ib_send_wr *wr)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&peer->lock, flags);
	ret = collx_peer_post_locked(peer, wr);
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/* A work request completed in error: say so unless it was flushed. */
static void collx_peer_wc_error(struct collx_peer *peer, struct ib_wc *wc,
				const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("comm %u: %s rank %u failed: %s\n",
				    peer->params->log_id, what, peer->rank,
				    ib_wc_status_msg(wc->status));
	collx_peer_broken(peer, -ECONNRESET);
}

/**
 * collx_peer_post_recv() - (re)post receive @idx
 * @peer: the connection
 * @idx: the receive, below @peer->nrecv
 *
 * Context: any.
 * Return: 0 or the errno of ib_post_recv().
 */
int collx_peer_post_recv(struct collx_peer *peer, u32 idx)
{
	struct collx_recv *rv = &peer->recvs[idx];
	struct ib_sge sge = {
		.addr = peer->ctrl_dma + (u64)idx * COLLX_CTRL_SIZE,
		.length = COLLX_CTRL_SIZE,
		.lkey = peer->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rv->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	rv->cqe.done = collx_peer_recv_done;
	rv->peer = peer;
	rv->idx = idx;
	return ib_post_recv(peer->qp, &wr, NULL);
}

/**
 * collx_peer_post_reg() - register our staging areas
 * @peer: a connected connection, with @peer->mutex held
 *
 * rx gets remote write (the peer has proven the secret by now, or will
 * have before it learns the key); tx local access only.  Later work
 * requests on the QP are ordered after these.
 *
 * Context: any.
 * Return: 0 or the errno of ib_post_send().
 */
int collx_peer_post_reg(struct collx_peer *peer)
{
	struct ib_reg_wr tx = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &peer->send_cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = peer->tx.mr,
		.key = peer->tx.mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_reg_wr rx = {
		.wr = {
			.next = &tx.wr,
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &peer->send_cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = peer->rx.mr,
		.key = peer->rx.mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	return collx_peer_post(peer, &rx.wr);
}

/**
 * collx_peer_send_ready() - tell the peer where to write
 * @peer: the connection, registered, with @peer->mutex held
 * @proof: our proof (active side) or NULL (passive side)
 *
 * Context: any.
 * Return: 0 or the errno of ib_post_send().
 */
int collx_peer_send_ready(struct collx_peer *peer, const u8 *proof)
{
	u32 idx = collx_peer_ctrl_send_buf(peer, COLLX_CTRL_READY_BUF);
	struct collx_wire_ready *msg = collx_peer_ctrl_buf(peer, idx);
	struct ib_send_wr wr;
	struct ib_sge sge;

	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
	msg->type = cpu_to_be32(COLLX_CTRL_READY);
	msg->nslots = cpu_to_be32(collx_slots());
	msg->slot_bytes = cpu_to_be32(collx_slot_bytes());
	msg->rkey = cpu_to_be32(peer->rx.mr->rkey);
	msg->iova = cpu_to_be64(peer->rx.mr->iova);
	if (proof)
		memcpy(msg->proof, proof, sizeof(msg->proof));
	collx_peer_ctrl_send(peer, idx, sizeof(*msg), &peer->send_cqe, &sge,
			     &wr);
	return collx_peer_post(peer, &wr);
}

/**
 * collx_peer_post_abort() - post an ABORT
 * @peer: the connection, with @peer->mutex held
 * @err: our errno
 * @rank: the rank we blame
 * @phase: where
 * @step: and the step
 *
 * Context: process context.
 * Return: 0 (@peer->abort_done completes when it has been acknowledged),
 * or the errno of ib_post_send().
 */
int collx_peer_post_abort(struct collx_peer *peer, int err, u32 rank,
			  u32 phase, u32 step)
{
	u32 idx = collx_peer_ctrl_send_buf(peer, COLLX_CTRL_ABORT_BUF);
	struct collx_wire_abort *msg = collx_peer_ctrl_buf(peer, idx);
	struct ib_send_wr wr;
	struct ib_sge sge;
	unsigned long flags;
	u64 arrived;

	spin_lock_irqsave(&peer->lock, flags);
	arrived = peer->rx_consumed + (u32)(peer->arr_tail - peer->arr_head);
	spin_unlock_irqrestore(&peer->lock, flags);
	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
	msg->type = cpu_to_be32(COLLX_CTRL_ABORT);
	msg->err = cpu_to_be32((u32)err);
	msg->rank = cpu_to_be32(rank);
	msg->phase = cpu_to_be32(phase);
	msg->step = cpu_to_be32(step);
	msg->arrived = cpu_to_be64(arrived);
	collx_peer_ctrl_send(peer, idx, sizeof(*msg), &peer->abort_cqe, &sge,
			     &wr);
	return collx_peer_post(peer, &wr);
}

/**
 * collx_peer_post_credits() - give consumed rx slots back to the peer
 * @peer: the connection
 *
 * One message returns every slot consumed since the last one.
 *
 * Context: any; takes @peer->lock.
 * Return: 0 (also when the send queue is momentarily full: the slots
 * stay owed and go with the next call), -ECONNRESET if the connection is
 * closing, or the errno of ib_post_send().
 */
int collx_peer_post_credits(struct collx_peer *peer)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.wr_cqe = &peer->send_cqe,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->credits_owed) {
		ret = -ECONNRESET;
		wr.ex.imm_data = cpu_to_be32(peer->credits_owed);
		if (!peer->closing && peer->qp)
			ret = ib_post_send(peer->qp, &wr, NULL);
		if (!ret)
			peer->credits_owed = 0;
		else if (ret == -ENOMEM)
			ret = 0;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_peer_take_credit() - claim one of the peer's rx slots
 * @peer: the connection, ready
 * @slot: out: the slot (the same index on both sides)
 *
 * Context: any; takes @peer->lock.
 * Return: true if a credit was available.
 */
bool collx_peer_take_credit(struct collx_peer *peer, u32 *slot)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->credits) {
		peer->credits--;
		*slot = peer->tx_posted % collx_slots();
		ok = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ok;
}

/**
 * collx_peer_has_credit() - could a write go now
 * @peer: the connection
 *
 * Context: any.
 * Return: true if a credit is available.
 */
bool collx_peer_has_credit(struct collx_peer *peer)
{
	return READ_ONCE(peer->credits) != 0;
}

/**
 * collx_peer_post_write() - RDMA-write a chunk, with immediate data
 * @peer: the connection; a credit taken with collx_peer_take_credit()
 * @sge: gather list, @nsge entries (at most @peer->max_sge)
 * @nsge: entries (0 for an empty chunk)
 * @raddr: remote address (its rx slot, or its output)
 * @rkey: its key
 * @imm: immediate data identifying the chunk
 * @cookie: the engine's name for the chunk, returned by
 *	collx_peer_take_write() when the write completed
 *
 * Context: any; takes @peer->lock.
 * Return: 0, -ECONNRESET if the connection is closing, or the errno of
 * ib_post_send().
 */
int collx_peer_post_write(struct collx_peer *peer, struct ib_sge *sge,
			  u32 nsge, u64 raddr, u32 rkey, u32 imm, u64 cookie)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.wr_cqe = &peer->write_cqe,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = nsge ? sge : NULL,
			.num_sge = nsge,
			.ex.imm_data = cpu_to_be32(imm),
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};
	u32 ring = 2 * collx_slots();
	unsigned long flags;
	int ret = -ECONNRESET;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->tx_posted - peer->tx_reaped >= ring) {
		ret = -ENOSPC;	/* cannot happen with credits; never wrap */
	} else if (!peer->closing && peer->qp) {
		peer->tx_cookies[peer->tx_posted % ring] = cookie;
		ret = ib_post_send(peer->qp, &wr.wr, NULL);
		if (!ret)
			peer->tx_posted++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_peer_take_write() - the next completed data write
 * @peer: the connection
 * @cookie: out: the cookie it was posted with
 * @ok: out: false if it completed in error
 *
 * Writes complete in the order they were posted (one RC send queue).
 *
 * Context: any; takes @peer->lock.
 * Return: true if one was taken.
 */
bool collx_peer_take_write(struct collx_peer *peer, u64 *cookie, bool *ok)
{
	u32 ring = 2 * collx_slots();
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->tx_reaped < peer->tx_done + peer->tx_errs) {
		*cookie = peer->tx_cookies[peer->tx_reaped % ring];
		*ok = peer->tx_reaped < peer->tx_done && !peer->tx_errs;
		peer->tx_reaped++;
		got = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return got;
}

/**
 * collx_peer_take_arrival() - the oldest chunk the peer wrote
 * @peer: the connection
 * @arr: out
 * @slot: out: the rx slot it occupies (unless it was written directly)
 *
 * The caller consumes it: the slot is owed back to the peer with the next
 * collx_peer_post_credits().
 *
 * Context: any; takes @peer->lock.
 * Return: true if one was taken.
 */
bool collx_peer_take_arrival(struct collx_peer *peer,
			     struct collx_arrival *arr, u32 *slot)
{
	u32 size = 2 * collx_slots();
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->arr_head != peer->arr_tail) {
		*arr = peer->rx_arrivals[peer->arr_head % size];
		*slot = peer->rx_consumed % collx_slots();
		peer->arr_head++;
		peer->rx_consumed++;
		peer->credits_owed++;
		got = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return got;
}

/**
 * collx_peer_has_arrival() - is a chunk waiting
 * @peer: the connection
 *
 * Context: any.
 * Return: true if collx_peer_take_arrival() would take one.
 */
bool collx_peer_has_arrival(struct collx_peer *peer)
{
	return READ_ONCE(peer->arr_head) != READ_ONCE(peer->arr_tail);
}

static void collx_peer_recv_ready(struct collx_peer *peer,
				  const struct collx_wire_ready *msg, u32 len)
{
	unsigned long flags;

	if (len < sizeof(*msg) || be32_to_cpu(msg->nslots) != collx_slots() ||
	    be32_to_cpu(msg->slot_bytes) != collx_slot_bytes()) {
		pr_warn_ratelimited("comm %u: rank %u sent a READY this module does not understand (slot_kib and nslots must match on every node)\n",
				    peer->params->log_id, peer->rank);
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	spin_lock_irqsave(&peer->lock, flags);
	/*
	 * The answer to our READY may come before the rdma_cm handler that
	 * posted it has moved us on from CONNECTING (it can be preempted
	 * in between), so both handshake states take it.
	 */
	if (peer->remote_ready || (peer->state != COLLX_PEER_CONNECTING &&
				   peer->state != COLLX_PEER_HANDSHAKE)) {
		/* A second READY would reset credits mid-collective. */
		spin_unlock_irqrestore(&peer->lock, flags);
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	peer->remote_iova = be64_to_cpu(msg->iova);
	peer->remote_rkey = be32_to_cpu(msg->rkey);
	peer->credits = collx_slots();
	spin_unlock_irqrestore(&peer->lock, flags);
	/* The passive side checks the proof first (cm.c). */
	collx_cm_peer_ready(peer, msg->proof);
}

/*
 * The errno a peer's ABORT may make our collectives end with: those the
 * uapi documents for a completion that a remote failure explains.  Any
 * other (its own -ENOMEM, a destroy's -ECANCELED, a hostile value) is, to
 * us, a peer that went away.
 */
static int collx_abort_errno(s32 err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -EPROTO:
	case -ENODEV:
	case -EFAULT:
		return err;
	default:
		return -ECONNRESET;
	}
}

static void collx_peer_recv_abort(struct collx_peer *peer,
				  const struct collx_wire_abort *msg, u32 len)
{
	u64 arrived = len < sizeof(*msg) ? 0 : be64_to_cpu(msg->arrived);
	s32 err = collx_abort_errno(len < sizeof(*msg) ? 0 :
				    (s32)be32_to_cpu(msg->err));
	unsigned long flags;
	bool bad;

	spin_lock_irqsave(&peer->lock, flags);
	/* More arrived than we ever wrote: nothing it says is believed. */
	bad = len < sizeof(*msg) || !peer->ever_ready ||
	      arrived > peer->tx_posted;
	if (!bad && !peer->aborted) {
		peer->abort_arrived = arrived;
		peer->aborted = true;
		peer->abort.err = err;
		peer->abort.rank = be32_to_cpu(msg->rank);
		if (peer->abort.rank >= peer->params->nranks)
			peer->abort.rank = peer->rank;
		peer->abort.phase = be32_to_cpu(msg->phase);
		if (peer->abort.phase >= COLLX_PHASE_COUNT)
			peer->abort.phase = COLLX_PHASE_NONE;
		peer->abort.step = be32_to_cpu(msg->step);
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	/* What it sent before the ABORT is still good: only fail the link. */
	collx_peer_broken(peer, bad ? -EPROTO : err);
}

/* A control message arrived. */
static void collx_peer_recv_ctrl(struct collx_peer *peer, u32 idx, u32 len)
{
	u64 off = (u64)idx * COLLX_CTRL_SIZE;
	const __be32 *hdr = collx_peer_ctrl_buf(peer, idx);

	ib_dma_sync_single_for_cpu(peer->ibdev, peer->ctrl_dma + off,
				   COLLX_CTRL_SIZE, DMA_BIDIRECTIONAL);
	if (len < 8 || be32_to_cpu(hdr[0]) != COLLX_WIRE_MAGIC) {
		pr_warn_ratelimited("comm %u: rank %u sent a message this module does not understand (is collx the same version on every node?)\n",
				    peer->params->log_id, peer->rank);
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	switch (be32_to_cpu(hdr[1])) {
	case COLLX_CTRL_READY:
		collx_peer_recv_ready(peer, (const void *)hdr, len);
		break;
	case COLLX_CTRL_DEST:
		collx_dest_recv(peer, (const void *)hdr, len);
		break;
	case COLLX_CTRL_ABORT:
		collx_peer_recv_abort(peer, (const void *)hdr, len);
		break;
	case COLLX_CTRL_ASK:
		collx_ask_recv(peer, (const void *)hdr, len);
		break;
	case COLLX_CTRL_TELL:
		collx_tell_recv(peer, (const void *)hdr, len);
		break;
	default:
		collx_peer_broken(peer, -EPROTO);
	}
}

static void collx_peer_recv_arrival(struct collx_peer *peer, struct ib_wc *wc)
{
	u32 size = 2 * collx_slots();
	unsigned long flags;
	bool bad;

	spin_lock_irqsave(&peer->lock, flags);
	/* More chunks than credits given: the peer is broken or hostile. */
	bad = peer->state != COLLX_PEER_READY ||
	      peer->arr_tail - peer->arr_head + peer->credits_owed >=
	      collx_slots() + 1 || wc->byte_len > collx_slot_bytes();
	if (!bad) {
		peer->rx_arrivals[peer->arr_tail % size].imm =
			be32_to_cpu(wc->ex.imm_data);
		peer->rx_arrivals[peer->arr_tail % size].bytes = wc->byte_len;
		peer->arr_tail++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (bad)
		collx_peer_broken(peer, -EPROTO);
}

static void collx_peer_recv_credit(struct collx_peer *peer, struct ib_wc *wc)
{
	u32 n = be32_to_cpu(wc->ex.imm_data);
	unsigned long flags;
	bool bad;

	spin_lock_irqsave(&peer->lock, flags);
	bad = !n || peer->state != COLLX_PEER_READY ||
	      peer->credits + n > collx_slots();
	if (!bad) {
		peer->credits += n;
		peer->credit_msgs++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (bad)
		collx_peer_broken(peer, -EPROTO);
}

/**
 * collx_peer_recv_done() - a receive completed
 * @cq: the CQ
 * @wc: the completion
 *
 * Context: the CQ's workqueue.
 */
void collx_peer_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_recv *rv = container_of(wc->wr_cqe, struct collx_recv,
					     cqe);
	struct collx_peer *peer = rv->peer;
	unsigned long flags;

	if (wc->status != IB_WC_SUCCESS) {
		spin_lock_irqsave(&peer->lock, flags);
		peer->rq_flushed = true;
		spin_unlock_irqrestore(&peer->lock, flags);
		collx_peer_wc_error(peer, wc, "receive from");
		peer->ops->kick(peer);
		return;
	}

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		collx_peer_recv_arrival(peer, wc);
	else if (wc->opcode == IB_WC_RECV && (wc->wc_flags & IB_WC_WITH_IMM))
		collx_peer_recv_credit(peer, wc);
	else if (wc->opcode == IB_WC_RECV)
		collx_peer_recv_ctrl(peer, rv->idx, wc->byte_len);
	else
		collx_peer_broken(peer, -EPROTO);

	if (collx_peer_post_recv(peer, rv->idx))
		collx_peer_broken(peer, -ECONNRESET);
	peer->ops->kick(peer);
}

static void collx_peer_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       send_cqe);

	if (wc->status != IB_WC_SUCCESS)
		collx_peer_wc_error(peer, wc, "send to");
}

static void collx_peer_abort_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       abort_cqe);

	complete(&peer->abort_done);
}

/*
 * A data write completed; error completions carry no opcode.  One that
 * failed (flushed by the peer's disconnect, usually) is still delivered
 * if the peer's ABORT, received before the disconnect, counted it: its
 * acknowledgment was lost, not the data.
 */
static void collx_peer_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       write_cqe);
	bool delivered = false;
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->tx_errs)
		delivered = wc->status == IB_WC_SUCCESS ||
			    (peer->aborted &&
			     peer->tx_done < peer->abort_arrived);
	if (delivered)
		peer->tx_done++;
	else
		peer->tx_errs++;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (wc->status != IB_WC_SUCCESS && !delivered)
		collx_peer_wc_error(peer, wc, "write to");
	peer->ops->kick(peer);
}

/**
 * collx_peer_qp_event() - an asynchronous event on the QP
 * @event: the event
 * @ctx: the connection
 *
 * Fatal events fail the connection; the rest are logged.
 *
 * Context: any (the device's event context).
 */
void collx_peer_qp_event(struct ib_event *event, void *ctx)
{
	struct collx_peer *peer = ctx;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		pr_warn_ratelimited("comm %u: QP of rank %u: %s\n",
				    peer->params->log_id, peer->rank,
				    ib_event_msg(event->event));
		collx_peer_broken(peer, -ECONNRESET);
	}
}

/**
 * collx_xfer_init() - set up a connection's completion entries
 * @peer: the connection
 *
 * Context: any.
 */
void collx_xfer_init(struct collx_peer *peer)
{
	peer->send_cqe.done = collx_peer_send_done;
	peer->abort_cqe.done = collx_peer_abort_done;
	peer->write_cqe.done = collx_peer_write_done;
	peer->inv_cqe.done = collx_dest_inv_done;
	collx_ask_init(peer);
}
