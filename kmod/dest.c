// SPDX-License-Identifier: GPL-2.0
/*
 * collx: DEST windows, through which a peer writes straight into our
 * output (zero copy on the receiving side).
 *
 * When a receive transfer of the running group may be written (the
 * engine decides: its destination lies in a registration and nothing
 * still reads it), we register exactly its bytes for remote write with a
 * free FRWR MR of the connection (fresh key each time) and SEND a DEST
 * naming the group, the transfer and the window, chained behind the
 * registration so the key is valid before the peer can see it.  The peer
 * writes the transfer's chunks there when it has the DEST in time, else
 * through staging slots.  Once the transfer is complete we invalidate the
 * MR (LOCAL_INV) and the op completes only after that succeeded: no peer
 * can write into a buffer outside the transfer it was offered, or after
 * its collective completed.  A failed invalidation keeps the op's buffers
 * held and fails the comm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "collx_loc.h"
#include "wire.h"

/**
 * collx_dest_setup() - allocate the connection's DEST MRs
 * @peer: the connection, its PD made
 *
 * Without them (the device refuses), every chunk lands in staging.
 *
 * Context: process context.
 */
void collx_dest_setup(struct collx_peer *peer)
{
	u32 i;

	peer->dmr_pages = min_t(u32,
				peer->ibdev->attrs.max_fast_reg_page_list_len,
				COLLX_DEST_MAX_PAGES);
	for (i = 0; i < COLLX_DEST_MRS; i++) {
		struct ib_mr *mr = ib_alloc_mr(peer->pd, IB_MR_TYPE_MEM_REG,
					       peer->dmr_pages);

		if (IS_ERR(mr))
			break;
		peer->dmrs[peer->ndmrs].mr = mr;
		peer->dmrs[peer->ndmrs].state = COLLX_DEST_FREE;
		peer->ndmrs++;
	}
}

/**
 * collx_dest_release() - deregister the DEST MRs
 * @peer: the connection, its QP drained
 *
 * Context: process context.
 */
void collx_dest_release(struct collx_peer *peer)
{
	while (peer->ndmrs) {
		struct collx_dest_mr *d = &peer->dmrs[--peer->ndmrs];

		ib_dereg_mr(d->mr);
		memset(d, 0, sizeof(*d));
	}
}

/**
 * collx_dest_offer() - let the peer write one receive transfer directly
 * @peer: the connection, ready
 * @dm: the destination buffer, DMA-mapped on @peer's device
 * @off: the transfer's first byte in the buffer
 * @bytes: its length, non-zero
 * @seq: our receive sequence of the group on this connection
 * @ordinal: the transfer's index among the group's receives from @peer
 * @cookie: the engine's name for the transfer
 *
 * Context: process context (the engine).
 * Return: index+1 of the DEST MR used (pass it to collx_dest_retire()),
 * 0 if none is free or the window does not fit one MR (the transfer then
 * uses staging), or a negative errno if posting failed.
 */
int collx_dest_offer(struct collx_peer *peer, const struct collx_dmap *dm,
		     u64 off, u64 bytes, u64 seq, u32 ordinal, u64 cookie)
{
	struct collx_wire_dest *msg;
	struct collx_dest_mr *d = NULL;
	struct scatterlist *sg;
	unsigned int sg_off, nents, i;
	struct ib_send_wr send;
	struct ib_sge sge;
	struct ib_reg_wr reg = {
		.wr = {
			.next = &send,
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &peer->send_cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	unsigned long flags;
	u32 k, idx;
	int n, ret;

	if (!peer->ndmrs || !bytes || off + bytes > dm->bytes)
		return 0;
	/* A window maps dmr_pages pages from the page of its first byte. */
	if (DIV_ROUND_UP((off & ~PAGE_MASK) + bytes, PAGE_SIZE) + 1 >
	    peer->dmr_pages)
		return 0;
	spin_lock_irqsave(&peer->lock, flags);
	for (k = 0; k < peer->ndmrs; k++) {
		if (peer->dmrs[k].state == COLLX_DEST_FREE) {
			d = &peer->dmrs[k];
			d->state = COLLX_DEST_POSTED;
			d->cookie = cookie;
			d->failed = false;
			break;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!d)
		return 0;

	/* The segment holding @off, and the offset into it. */
	i = collx_dmap_find(dm, off);
	sg = dm->sgt.sgl;
	for (n = 0; n < i; n++)
		sg = sg_next(sg);
	sg_off = off - dm->segs[i].off;
	nents = dm->nsegs - i;

	ib_update_fast_reg_key(d->mr, ib_inc_rkey(d->mr->rkey));
	n = ib_map_mr_sg(d->mr, sg, nents, &sg_off, PAGE_SIZE);
	/*
	 * n counts whole sg entries: 0 with a length means the window ended
	 * inside the first one (physically contiguous memory, huge pages).
	 */
	if (n < 0 || d->mr->length < bytes) {
		ret = 0;
		goto out_free;
	}
	d->mr->length = bytes;	/* exactly the transfer, not a byte more */
	d->mr->iova = collx_iova(d->mr->iova, 16 + k);
	reg.mr = d->mr;
	reg.key = d->mr->rkey;

	idx = collx_peer_ctrl_send_buf(peer, COLLX_CTRL_SENDS + k);
	msg = peer->ctrl + (size_t)idx * COLLX_CTRL_SIZE;
	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
	msg->type = cpu_to_be32(COLLX_CTRL_DEST);
	msg->seq = cpu_to_be64(seq);
	msg->ordinal = cpu_to_be32(ordinal);
	msg->window = cpu_to_be32(k);
	msg->rkey = cpu_to_be32(d->mr->rkey);
	msg->iova = cpu_to_be64(d->mr->iova);
	msg->bytes = cpu_to_be64(bytes);
	collx_peer_ctrl_send(peer, idx, sizeof(*msg), &peer->send_cqe, &sge,
			     &send);

	ret = -ECONNRESET;
	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->closing && peer->qp)
		ret = ib_post_send(peer->qp, &reg.wr, NULL);
	spin_unlock_irqrestore(&peer->lock, flags);
	if (ret) {
		/*
		 * Part of the chain may have been posted: keep the MR out of
		 * use; the comm fails and the drain at teardown ends it.
		 */
		d->failed = true;
		return ret;
	}
	return k + 1;

out_free:
	spin_lock_irqsave(&peer->lock, flags);
	d->state = COLLX_DEST_FREE;
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_dest_retire() - end the peer's access to an offered transfer
 * @peer: the connection
 * @dmr: what collx_dest_offer() returned
 * @cookie: the cookie it was offered with
 *
 * Posts the invalidation the first time and says whether it completed.
 * Called again when the engine is kicked by the completion.  Once the
 * invalidation completed the MR may serve another transfer: the cookie
 * tells the two apart.
 *
 * Context: process context (the engine).
 * Return: 1 when the window is gone, 0 while it is being invalidated, or
 * a negative errno if it could not be invalidated (the buffer must stay
 * held until the QP is drained).
 */
int collx_dest_retire(struct collx_peer *peer, u32 dmr, u64 cookie)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &peer->inv_cqe,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct collx_dest_mr *d;
	unsigned long flags;
	int ret = 0;

	if (!dmr || dmr > peer->ndmrs)
		return 1;
	d = &peer->dmrs[dmr - 1];
	spin_lock_irqsave(&peer->lock, flags);
	if (d->cookie != cookie) {
		ret = 1;
	} else if (d->failed) {
		ret = -EIO;
	} else if (d->state == COLLX_DEST_FREE) {
		ret = 1;
	} else if (d->state == COLLX_DEST_POSTED) {
		ret = -ECONNRESET;
		wr.ex.invalidate_rkey = d->mr->rkey;
		if (!peer->closing && peer->qp &&
		    peer->inv_posted - peer->inv_done < COLLX_DEST_MRS)
			ret = ib_post_send(peer->qp, &wr, NULL);
		if (ret) {
			d->failed = true;
		} else {
			peer->inv_order[peer->inv_posted % COLLX_DEST_MRS] =
				dmr - 1;
			peer->inv_posted++;
			d->state = COLLX_DEST_INVALIDATING;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_dest_inv_done() - an invalidation completed
 * @cq: the CQ
 * @wc: the completion
 *
 * A flushed one closes the window too: the QP is in error, and only this
 * QP (the MR's PD has no other) could write through it.  Whether what the
 * peer wrote there arrived, the engine has counted already.
 *
 * Context: the CQ's workqueue.
 */
void collx_dest_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       inv_cqe);
	struct collx_dest_mr *d = NULL;
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	/* One send queue completes in order: the oldest posted is done. */
	if (peer->inv_done < peer->inv_posted) {
		u32 k = peer->inv_order[peer->inv_done % COLLX_DEST_MRS];

		d = &peer->dmrs[k];
		peer->inv_done++;
		if (wc->status == IB_WC_SUCCESS ||
		    wc->status == IB_WC_WR_FLUSH_ERR)
			d->state = COLLX_DEST_FREE;
		else
			d->failed = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (wc->status != IB_WC_SUCCESS)
		collx_peer_broken(peer, -ECONNRESET);
	peer->ops->kick(peer);
}

/**
 * collx_dest_recv() - the peer offered a window of its output
 * @peer: the connection
 * @msg: the DEST message
 * @len: its length
 *
 * Context: the CQ's workqueue.
 */
void collx_dest_recv(struct collx_peer *peer, const struct collx_wire_dest *msg,
		     u32 len)
{
	struct collx_remote_dest *rd;
	unsigned long flags;
	u32 k;

	k = len < sizeof(*msg) ? COLLX_DEST_MRS : be32_to_cpu(msg->window);
	if (k >= COLLX_DEST_MRS || !msg->bytes || !collx_peer_ready(peer)) {
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	/*
	 * The peer reuses its MR k only after invalidating the window it
	 * offered before, which it does once we sent all of that one: so
	 * entry k is always the live offer of MR k.
	 */
	rd = &peer->rdest[k];
	spin_lock_irqsave(&peer->lock, flags);
	rd->seq = be64_to_cpu(msg->seq);
	rd->ordinal = be32_to_cpu(msg->ordinal);
	rd->iova = be64_to_cpu(msg->iova);
	rd->rkey = be32_to_cpu(msg->rkey);
	rd->bytes = be64_to_cpu(msg->bytes);
	rd->valid = true;
	spin_unlock_irqrestore(&peer->lock, flags);
}

/**
 * collx_dest_lookup() - may this chunk go straight into the peer's output
 * @peer: the connection
 * @seq: our send sequence of the group on this connection
 * @ordinal: the transfer's index among the group's sends to @peer
 * @off: the chunk's first byte within the transfer
 * @bytes: its length
 * @raddr: out: where to write it
 * @rkey: out: with which key
 *
 * Context: any; takes @peer->lock.
 * Return: true if the peer offered a window covering the chunk.
 */
bool collx_dest_lookup(struct collx_peer *peer, u64 seq, u32 ordinal, u64 off,
		       u32 bytes, u64 *raddr, u32 *rkey)
{
	unsigned long flags;
	bool ok = false;
	u32 k;

	spin_lock_irqsave(&peer->lock, flags);
	for (k = 0; k < COLLX_DEST_MRS; k++) {
		const struct collx_remote_dest *rd = &peer->rdest[k];

		if (rd->valid && rd->seq == seq && rd->ordinal == ordinal &&
		    off + bytes <= rd->bytes) {
			*raddr = rd->iova + off;
			*rkey = rd->rkey;
			ok = true;
			break;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ok;
}
