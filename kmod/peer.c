// SPDX-License-Identifier: GPL-2.0
/*
 * collx: one RC connection to a neighbour rank.
 *
 * Each connection has a staging area of collx_nslots slots registered with
 * fast registration (FRWR): on the outgoing side chunks are copied there
 * and RDMA-written, with immediate data, into the neighbour's staging
 * area; on the incoming side the neighbour writes into it.  Flow control
 * is by credits: the receiver returns a slot with a zero-length SEND
 * carrying the slot number once it has consumed the chunk.  Once the RC
 * connection is up, the incoming side registers its area and SENDs a
 * READY message with the address and rkey.
 *
 * Zero copy (direct.c): a write may instead gather from the sender's
 * registered output, and an all-gather write may land straight in the
 * receiver's registered output, which the incoming side registers per op
 * (FRWR, in overlapping windows as large as the device's registrations)
 * and announces with a DEST message per window; the op's end invalidates
 * them.
 *
 * CQ and CM handlers never sleep on the engine: they update counters under
 * @peer->lock and kick the comm's work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

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
 * Wakes COLLX_IOC_COMM_CREATE, which waits for the comm's connections.
 *
 * Context: any; takes @peer->lock.
 */
void collx_peer_set_state(struct collx_peer *peer, enum collx_peer_state state,
			  int err)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	peer->state = state;
	if (state == COLLX_PEER_READY)
		peer->err = 0;
	else if (err && !peer->err)
		peer->err = err;
	spin_unlock_irqrestore(&peer->lock, flags);
	wake_up_all(&peer->comm->connected);
}

/**
 * collx_peer_broken() - a ready connection stopped working
 * @peer: the connection
 * @err: why (negative errno)
 *
 * Marks it failed and lets the engine decide: an op that no longer needs
 * this neighbour (it already holds all its data, or only sends elsewhere)
 * still completes; the comm fails when an op waits for the neighbour, or
 * when nothing is left in flight.  Before the connection is ready the
 * rdma_cm events decide (a refused attempt flushes its QP: not an error).
 *
 * Context: any (CQ and CM handlers).
 */
void collx_peer_broken(struct collx_peer *peer, int err)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&peer->lock, flags);
	ready = !peer->closing && !peer->draining &&
		peer->state == COLLX_PEER_READY;
	if (ready) {
		peer->state = COLLX_PEER_FAILED;
		if (!peer->err)
			peer->err = err;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (!ready)
		return;
	wake_up_all(&peer->comm->connected);
	queue_work(collx_wq, &peer->comm->work);
}

/* Control buffers: one per receive, then READY's, then one DEST per window. */
static size_t collx_peer_ctrl_bytes(const struct collx_peer *peer)
{
	return (size_t)(peer->nrecv + 1 + COLLX_DEST_WINDOWS) * COLLX_CTRL_SIZE;
}

/*
 * A signalled SEND of the first @len bytes of control buffer @idx, which
 * the caller has filled: hands the buffer to the device.
 */
static void collx_peer_ctrl_send(struct collx_peer *peer, u32 idx, u32 len,
				 struct ib_sge *sge, struct ib_send_wr *wr)
{
	u64 off = (u64)idx * COLLX_CTRL_SIZE;

	*sge = (struct ib_sge) {
		.addr = peer->ctrl_dma + off,
		.length = len,
		.lkey = peer->comm->dev->pd->local_dma_lkey,
	};
	*wr = (struct ib_send_wr) {
		.opcode = IB_WR_SEND,
		.wr_cqe = &peer->send_cqe,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = sge,
		.num_sge = 1,
	};
	ib_dma_sync_single_for_device(peer->comm->dev->ibdev, sge->addr,
				      COLLX_CTRL_SIZE, DMA_BIDIRECTIONAL);
}

/* A work request completed in error: say so unless it was flushed. */
static void collx_peer_wc_error(struct collx_peer *peer, struct ib_wc *wc,
				const char *what)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn("comm %u: %s rank %u failed: %s\n", peer->comm->id,
			what, peer->rank, ib_wc_status_msg(wc->status));
	collx_peer_broken(peer, -ECONNRESET);
}

static int collx_peer_post_recv(struct collx_peer *peer, u32 idx)
{
	struct ib_sge sge = {
		.addr = peer->ctrl_dma + (u64)idx * COLLX_CTRL_SIZE,
		.length = COLLX_CTRL_SIZE,
		.lkey = peer->comm->dev->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &peer->recvs[idx].cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(peer->qp, &wr, NULL);
}

static void collx_peer_recv_ready(struct collx_peer *peer,
				  const struct collx_wire_ready *msg, u32 len)
{
	unsigned long flags;

	if (len < sizeof(*msg) || be32_to_cpu(msg->nslots) != collx_nslots ||
	    be32_to_cpu(msg->slot_bytes) != collx_slot_kib * 1024) {
		pr_warn("comm %u: rank %u sent a READY this module does not understand (slot_kib and nslots must match on every node)\n",
			peer->comm->id, peer->rank);
		collx_peer_set_state(peer, COLLX_PEER_FAILED, -EPROTO);
		return;
	}
	spin_lock_irqsave(&peer->lock, flags);
	peer->remote_iova = be64_to_cpu(msg->iova);
	peer->remote_rkey = be32_to_cpu(msg->rkey);
	peer->credits = collx_nslots;
	spin_unlock_irqrestore(&peer->lock, flags);
	collx_peer_handshake(peer, false, true);
}

static void collx_peer_recv_dest(struct collx_peer *peer,
				 const struct collx_wire_dest *msg, u32 len)
{
	struct collx_dest_win *win;
	struct collx_dest *dest;
	unsigned long flags;
	u32 k;
	u64 seq;

	k = len < sizeof(*msg) ? COLLX_DEST_WINDOWS : be32_to_cpu(msg->window);
	if (k >= COLLX_DEST_WINDOWS || !msg->stride) {
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	seq = be64_to_cpu(msg->seq);
	spin_lock_irqsave(&peer->lock, flags);
	dest = &peer->dest[seq & 1];
	if (dest->seq != seq || !dest->stride) {
		/* The first window of a new op: forget the op before last. */
		memset(dest, 0, sizeof(*dest));
		dest->seq = seq;
	}
	dest->stride = be64_to_cpu(msg->stride);
	win = &dest->win[k];
	win->start = be64_to_cpu(msg->start);
	win->len = be64_to_cpu(msg->len);
	win->iova = be64_to_cpu(msg->iova);
	win->rkey = be32_to_cpu(msg->rkey);
	spin_unlock_irqrestore(&peer->lock, flags);
}

/* A control message (READY or DEST) arrived on the outgoing connection. */
static void collx_peer_recv_ctrl(struct collx_peer *peer, u32 idx, u32 len)
{
	struct ib_device *ibdev = peer->comm->dev->ibdev;
	u64 off = (u64)idx * COLLX_CTRL_SIZE;
	const __be32 *hdr = peer->ctrl + off;

	ib_dma_sync_single_for_cpu(ibdev, peer->ctrl_dma + off, COLLX_CTRL_SIZE,
				   DMA_BIDIRECTIONAL);
	if (len < 8 || be32_to_cpu(hdr[0]) != COLLX_WIRE_MAGIC) {
		pr_warn("comm %u: rank %u sent a message this module does not understand (is collx the same version on every node?)\n",
			peer->comm->id, peer->rank);
		collx_peer_broken(peer, -EPROTO);
		collx_peer_set_state(peer, COLLX_PEER_FAILED, -EPROTO);
		return;
	}
	switch (be32_to_cpu(hdr[1])) {
	case COLLX_CTRL_READY:
		collx_peer_recv_ready(peer, peer->ctrl + off, len);
		break;
	case COLLX_CTRL_DEST:
		collx_peer_recv_dest(peer, peer->ctrl + off, len);
		break;
	default:
		collx_peer_broken(peer, -EPROTO);
	}
}

/**
 * collx_peer_handshake() - one half of the outgoing handshake is done
 * @peer: the outgoing connection
 * @established: our side is connected and its staging area registered
 * @remote_ready: the neighbour's READY arrived
 *
 * The two halves come from different contexts (the rdma_cm event and a
 * receive completion) in either order; the second makes the connection
 * ready.
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
		peer->err = 0;	/* forget why earlier attempts failed */
	} else if (peer->state == COLLX_PEER_CONNECTING) {
		peer->state = COLLX_PEER_HANDSHAKE;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	wake_up_all(&peer->comm->connected);
	if (ready)
		queue_work(collx_wq, &peer->comm->work);
}

static void collx_peer_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_recv *rv = container_of(wc->wr_cqe, struct collx_recv,
					     cqe);
	struct collx_peer *peer = rv->peer;
	unsigned long flags;
	bool kick = false;

	if (wc->status != IB_WC_SUCCESS) {
		spin_lock_irqsave(&peer->lock, flags);
		peer->rq_flushed = true;
		spin_unlock_irqrestore(&peer->lock, flags);
		collx_peer_wc_error(peer, wc, "receive from");
		queue_work(collx_wq, &peer->comm->work);
		return;
	}

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM && !peer->outgoing) {
		/* A chunk landed in our staging area. */
		u32 size = 2 * collx_nslots;

		spin_lock_irqsave(&peer->lock, flags);
		if (peer->arr_tail - peer->arr_head >= size) {
			spin_unlock_irqrestore(&peer->lock, flags);
			collx_peer_broken(peer, -EPROTO);
			return;
		}
		peer->arrivals[peer->arr_tail % size].imm =
			be32_to_cpu(wc->ex.imm_data);
		peer->arrivals[peer->arr_tail % size].bytes = wc->byte_len;
		peer->arr_tail++;
		spin_unlock_irqrestore(&peer->lock, flags);
		kick = true;
	} else if (wc->opcode == IB_WC_RECV && peer->outgoing &&
		   (wc->wc_flags & IB_WC_WITH_IMM)) {
		/* A credit: the neighbour consumed a slot. */
		spin_lock_irqsave(&peer->lock, flags);
		peer->credits++;
		spin_unlock_irqrestore(&peer->lock, flags);
		kick = true;
	} else if (wc->opcode == IB_WC_RECV && peer->outgoing) {
		collx_peer_recv_ctrl(peer, rv->idx, wc->byte_len);
	} else {
		collx_peer_broken(peer, -EPROTO);
		return;
	}

	if (collx_peer_post_recv(peer, rv->idx))
		collx_peer_broken(peer, -ECONNRESET);
	else if (kick)
		queue_work(collx_wq, &peer->comm->work);
}

static void collx_peer_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       send_cqe);

	if (wc->status != IB_WC_SUCCESS)
		collx_peer_wc_error(peer, wc, "send to");
}

/* A data write completed; error completions carry no opcode. */
static void collx_peer_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       write_cqe);
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	if (wc->status == IB_WC_SUCCESS)
		peer->write_done++;
	else
		peer->write_errs++;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (wc->status != IB_WC_SUCCESS)
		collx_peer_wc_error(peer, wc, "write to");
	queue_work(collx_wq, &peer->comm->work);
}

/* The output registration was invalidated (or flushed with its QP). */
static void collx_peer_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       inv_cqe);
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->inv_pending && !--peer->inv_pending)
		peer->dest_state = COLLX_DEST_FREE;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (wc->status != IB_WC_SUCCESS)
		collx_peer_wc_error(peer, wc, "invalidation towards");
	queue_work(collx_wq, &peer->comm->work);
}

static void collx_staging_free(struct ib_device *ibdev,
			       struct collx_staging *st)
{
	unsigned int i;

	if (st->mr)
		ib_dereg_mr(st->mr);
	if (st->sgt.nents)
		ib_dma_unmap_sgtable_attrs(ibdev, &st->sgt, DMA_BIDIRECTIONAL,
					   0);
	sg_free_table(&st->sgt);
	if (st->kva)
		vunmap(st->kva);
	for (i = 0; st->pages && i < st->npages; i++)
		if (st->pages[i])
			__free_page(st->pages[i]);
	kvfree(st->pages);
	memset(st, 0, sizeof(*st));
}

static int collx_staging_alloc(struct ib_device *ibdev, struct ib_pd *pd,
			       struct collx_staging *st)
{
	unsigned int i;
	int ret, n;

	st->bytes = (size_t)collx_slot_kib * 1024 * collx_nslots;
	st->npages = DIV_ROUND_UP(st->bytes, PAGE_SIZE);
	if (st->npages > ibdev->attrs.max_fast_reg_page_list_len)
		return -EINVAL;
	st->pages = kvcalloc(st->npages, sizeof(*st->pages), GFP_KERNEL);
	if (!st->pages)
		return -ENOMEM;
	for (i = 0; i < st->npages; i++) {
		st->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!st->pages[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	st->kva = vmap(st->pages, st->npages, VM_MAP, PAGE_KERNEL);
	if (!st->kva) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = sg_alloc_table_from_pages(&st->sgt, st->pages, st->npages, 0,
					st->bytes, GFP_KERNEL);
	if (ret)
		goto out_free;
	ret = ib_dma_map_sgtable_attrs(ibdev, &st->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		st->sgt.nents = 0;
		goto out_free;
	}
	st->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, st->npages);
	if (IS_ERR(st->mr)) {
		ret = PTR_ERR(st->mr);
		st->mr = NULL;
		goto out_free;
	}
	n = ib_map_mr_sg(st->mr, st->sgt.sgl, st->sgt.nents, NULL, PAGE_SIZE);
	if (n != st->sgt.nents) {
		ret = n < 0 ? n : -EINVAL;
		goto out_free;
	}
	return 0;

out_free:
	collx_staging_free(ibdev, st);
	return ret;
}

/**
 * collx_peer_init() - prepare an unconnected connection
 * @peer: the connection
 * @comm: its communicator
 * @rank: the remote rank
 * @outgoing: true for the connection this rank makes (to @rank = next)
 *
 * Context: process context.
 */
void collx_peer_init(struct collx_peer *peer, struct collx_comm *comm,
		     u32 rank, bool outgoing)
{
	peer->comm = comm;
	peer->rank = rank;
	peer->outgoing = outgoing;
	peer->state = COLLX_PEER_IDLE;
	spin_lock_init(&peer->lock);
	mutex_init(&peer->mutex);
	peer->send_cqe.done = collx_peer_send_done;
	peer->write_cqe.done = collx_peer_write_done;
	peer->inv_cqe.done = collx_peer_inv_done;
	INIT_DELAYED_WORK(&peer->retry_work, collx_cm_retry_work);
}

/**
 * collx_peer_setup() - create the QP and buffers of a connection
 * @peer: the connection, with @peer->mutex held
 * @cm_id: its rdma_cm id, resolved to a device
 *
 * Binds the comm to @cm_id's device, takes a CQ from its pool, creates
 * the RC QP, the staging area and the control buffers, and posts the
 * receives.  On failure everything made is released again.
 *
 * Context: process context (an rdma_cm handler).
 * Return: 0 or a negative errno.
 */
int collx_peer_setup(struct collx_peer *peer, struct rdma_cm_id *cm_id)
{
	struct collx_comm *comm = peer->comm;
	struct ib_qp_init_attr qp_attr = {};
	struct ib_device *ibdev = cm_id->device;
	size_t ctrl_bytes;
	u32 i, nsend;
	int ret;

	ret = collx_device_bind(comm, ibdev);
	if (ret)
		return ret;

	peer->cm_id = cm_id;
	/* Credits and control messages in flight, DESTs and their WRs. */
	peer->nrecv = 2 * collx_nslots + 2 + COLLX_DEST_WINDOWS;
	nsend = 2 * collx_nslots + 8 + 3 * COLLX_DEST_WINDOWS;
	peer->cq_size = peer->nrecv + nsend + 2;
	peer->cq = ib_cq_pool_get(ibdev, peer->cq_size, -1, IB_POLL_WORKQUEUE);
	if (IS_ERR(peer->cq)) {
		ret = PTR_ERR(peer->cq);
		peer->cq = NULL;
		goto out_release;
	}

	qp_attr.event_handler = NULL;
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
	ret = rdma_create_qp(cm_id, comm->dev->pd, &qp_attr);
	if (ret)
		goto out_release;
	peer->qp = cm_id->qp;

	ret = collx_staging_alloc(ibdev, comm->dev->pd, &peer->staging);
	if (ret)
		goto out_release;
	if (!peer->outgoing) {
		/* Without them, all-gather chunks land in staging slots. */
		peer->dest_pages = ibdev->attrs.max_fast_reg_page_list_len;
		peer->dest_pages = min(peer->dest_pages, COLLX_DEST_MAX_PAGES);
		for (i = 0; i < COLLX_DEST_WINDOWS; i++) {
			struct ib_mr *mr = ib_alloc_mr(comm->dev->pd,
						       IB_MR_TYPE_MEM_REG,
						       peer->dest_pages);

			if (IS_ERR(mr))
				break;
			peer->dest_mrs[peer->ndest_mrs++] = mr;
		}
	}

	ctrl_bytes = collx_peer_ctrl_bytes(peer);
	peer->ctrl = kzalloc(ctrl_bytes, GFP_KERNEL);
	peer->recvs = kcalloc(peer->nrecv, sizeof(*peer->recvs), GFP_KERNEL);
	peer->arrivals = kcalloc(2 * collx_nslots, sizeof(*peer->arrivals),
				 GFP_KERNEL);
	if (!peer->ctrl || !peer->recvs || !peer->arrivals) {
		ret = -ENOMEM;
		goto out_release;
	}
	peer->ctrl_dma = ib_dma_map_single(ibdev, peer->ctrl, ctrl_bytes,
					   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ibdev, peer->ctrl_dma)) {
		peer->ctrl_dma = 0;
		ret = -ENOMEM;
		goto out_release;
	}
	peer->ctrl_mapped = true;

	for (i = 0; i < peer->nrecv; i++) {
		peer->recvs[i].cqe.done = collx_peer_recv_done;
		peer->recvs[i].peer = peer;
		peer->recvs[i].idx = i;
		ret = collx_peer_post_recv(peer, i);
		if (ret)
			goto out_release;
	}
	return 0;

out_release:
	collx_peer_release_rdma(peer, false);
	return ret;
}

/**
 * collx_peer_post_reg() - post the fast registration of the staging area
 * @peer: a connected connection, with @peer->mutex held
 *
 * The incoming side grants the neighbour remote write; the outgoing side
 * needs local access only.  Later work requests on the QP are ordered
 * after it.
 *
 * Context: any.
 * Return: 0 or the errno of ib_post_send().
 */
int collx_peer_post_reg(struct collx_peer *peer)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &peer->send_cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = peer->staging.mr,
		.key = peer->staging.mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE |
			  (peer->outgoing ? 0 : IB_ACCESS_REMOTE_WRITE),
	};

	return ib_post_send(peer->qp, &wr.wr, NULL);
}

/**
 * collx_peer_send_ready() - tell the neighbour where to write
 * @peer: the incoming connection, registered, with @peer->mutex held
 *
 * Context: any.
 * Return: 0 or the errno of ib_post_send().
 */
int collx_peer_send_ready(struct collx_peer *peer)
{
	struct collx_wire_ready *msg = peer->ctrl +
				       peer->nrecv * COLLX_CTRL_SIZE;
	struct ib_send_wr wr;
	struct ib_sge sge;

	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
	msg->type = cpu_to_be32(COLLX_CTRL_READY);
	msg->nslots = cpu_to_be32(collx_nslots);
	msg->slot_bytes = cpu_to_be32(collx_slot_kib * 1024);
	msg->rkey = cpu_to_be32(peer->staging.mr->rkey);
	msg->iova = cpu_to_be64(peer->staging.mr->iova);
	collx_peer_ctrl_send(peer, peer->nrecv, sizeof(*msg), &sge, &wr);
	return ib_post_send(peer->qp, &wr, NULL);
}

/**
 * collx_peer_post_credit() - give a consumed staging slot back
 * @peer: the incoming connection
 * @slot: the slot
 *
 * Context: any; takes @peer->lock.
 * Return: 0, -ECONNRESET if the connection is closing, or the errno of
 * ib_post_send().
 */
int collx_peer_post_credit(struct collx_peer *peer, u32 slot)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.wr_cqe = &peer->send_cqe,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(slot),
	};
	unsigned long flags;
	int ret = -ECONNRESET;

	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->closing && peer->qp)
		ret = ib_post_send(peer->qp, &wr, NULL);
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_peer_slot() - where a chunk goes through a staging slot
 * @peer: the outgoing connection, ready
 * @slot: staging slot, the same on both sides
 * @bytes: chunk length
 * @kva: out: where to copy the chunk
 * @sge: out: the staged chunk as the NIC gathers it
 * @raddr: out: the neighbour's slot
 * @rkey: out: and its key
 *
 * Context: any; takes @peer->lock.
 */
void collx_peer_slot(struct collx_peer *peer, u32 slot, u32 bytes, void **kva,
		     struct ib_sge *sge, u64 *raddr, u32 *rkey)
{
	u64 off = (u64)slot * collx_slot_kib * 1024;
	unsigned long flags;

	*kva = peer->staging.kva + off;
	sge->addr = peer->staging.mr->iova + off;
	sge->length = bytes;
	sge->lkey = peer->staging.mr->lkey;
	spin_lock_irqsave(&peer->lock, flags);
	*raddr = peer->remote_iova + off;
	*rkey = peer->remote_rkey;
	spin_unlock_irqrestore(&peer->lock, flags);
}

/**
 * collx_peer_dest() - where the neighbour lets us write part of its output
 * @peer: the outgoing connection
 * @seq: the op's sequence number
 * @off: first byte in the output
 * @len: bytes
 * @raddr: out: the remote address
 * @rkey: out: and its key
 *
 * Context: any; takes @peer->lock.
 * Return: true if a DEST for this op covers the range.
 */
bool collx_peer_dest(struct collx_peer *peer, u64 seq, u64 off, u32 len,
		     u64 *raddr, u32 *rkey)
{
	const struct collx_dest *dest = &peer->dest[seq & 1];
	const struct collx_dest_win *win;
	unsigned long flags;
	bool ok = false;
	u64 k;

	spin_lock_irqsave(&peer->lock, flags);
	if (dest->seq == seq && dest->stride) {
		k = div64_u64(off, dest->stride);
		win = k < COLLX_DEST_WINDOWS ? &dest->win[k] : NULL;
		if (win && win->len && off >= win->start &&
		    off + len <= win->start + win->len) {
			*raddr = win->iova + (off - win->start);
			*rkey = win->rkey;
			ok = true;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ok;
}

/**
 * collx_peer_post_write() - RDMA-write a chunk, with immediate data
 * @peer: the outgoing connection
 * @sge: gather list, @nsge entries (at most @peer->max_sge)
 * @nsge: entries
 * @raddr: remote address (a staging slot or the neighbour's output)
 * @rkey: its key
 * @imm: immediate data identifying the chunk
 *
 * Context: any; takes @peer->lock.
 * Return: 0, -ECONNRESET if the connection is closing, or the errno of
 * ib_post_send().
 */
int collx_peer_post_write(struct collx_peer *peer, struct ib_sge *sge,
			  u32 nsge, u64 raddr, u32 rkey, u32 imm)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.wr_cqe = &peer->write_cqe,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = sge,
			.num_sge = nsge,
			.ex.imm_data = cpu_to_be32(imm),
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};
	unsigned long flags;
	int ret = -ECONNRESET;

	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->closing && peer->qp) {
		ret = ib_post_send(peer->qp, &wr.wr, NULL);
		if (!ret)
			peer->posted++;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/*
 * Register window @k (from @sg_off into @sg, as much as its MR maps) and
 * SEND its DEST behind the registration.
 */
static int collx_peer_post_window(struct collx_peer *peer, u64 seq, u32 k,
				  u64 stride, struct scatterlist *sg,
				  unsigned int nents, unsigned int sg_off)
{
	u32 idx = peer->nrecv + 1 + k;
	struct collx_wire_dest *msg = peer->ctrl + (u64)idx * COLLX_CTRL_SIZE;
	struct ib_mr *mr = peer->dest_mrs[k];
	struct ib_send_wr send;
	struct ib_sge sge;
	struct ib_reg_wr reg = {
		.wr = {
			.next = &send,
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &peer->send_cqe,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	unsigned long flags;
	int n, ret;

	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	/*
	 * n counts whole sg entries: 0 with a length means the window ended
	 * inside the first one (physically contiguous memory, huge pages).
	 */
	n = ib_map_mr_sg(mr, sg, nents, &sg_off, PAGE_SIZE);
	if (n < 0 || !mr->length)
		return n < 0 ? n : -EINVAL;
	reg.key = mr->rkey;

	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
	msg->type = cpu_to_be32(COLLX_CTRL_DEST);
	msg->seq = cpu_to_be64(seq);
	msg->rkey = cpu_to_be32(mr->rkey);
	msg->window = cpu_to_be32(k);
	msg->start = cpu_to_be64(k * stride);
	msg->len = cpu_to_be64(mr->length);
	msg->iova = cpu_to_be64(mr->iova);
	msg->stride = cpu_to_be64(stride);
	collx_peer_ctrl_send(peer, idx, sizeof(*msg), &sge, &send);

	ret = -ECONNRESET;
	spin_lock_irqsave(&peer->lock, flags);
	if (!peer->closing && peer->qp) {
		ret = ib_post_send(peer->qp, &reg.wr, NULL);
		if (!ret) {
			peer->dest_state = COLLX_DEST_POSTED;
			peer->dest_posted = k + 1;
		}
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_peer_post_dest() - let the neighbour write an op's output directly
 * @peer: the incoming connection
 * @dm: the op's output, DMA-mapped
 * @seq: the op's sequence number
 *
 * Registers @dm with the connection's FRWR MRs (remote write), in windows
 * that start every @stride bytes and overlap by more than a staging slot,
 * so that every chunk lies wholly in one; each window's DEST is SENT
 * behind its registration, so the neighbour cannot see a key before it is
 * valid.
 *
 * Context: process context (the engine).
 * Return: windows registered (the op's end must invalidate them), or
 * -ENOSPC if the output needs more windows than there are MRs or the
 * previous op's are not yet invalidated (the op then uses staging),
 * -ECONNRESET, or the errno of ib_post_send().
 */
int collx_peer_post_dest(struct collx_peer *peer, struct collx_dmap *dm,
			 u64 seq)
{
	u32 slot_pages = DIV_ROUND_UP(collx_slot_kib * 1024, PAGE_SIZE);
	struct scatterlist *sg;
	unsigned int i = 0;
	u64 stride, start;
	u32 k, nwin;
	int ret;

	if (!peer->ndest_mrs || peer->dest_pages < slot_pages + 3 ||
	    READ_ONCE(peer->dest_state) != COLLX_DEST_FREE)
		return -ENOSPC;
	/*
	 * A window maps dest_pages pages from the page of its first byte and
	 * its length stops short of the last one: it covers at least
	 * dest_pages - 2 whole pages, which is a stride and a slot.
	 */
	stride = (u64)(peer->dest_pages - 2 - slot_pages) * PAGE_SIZE;
	nwin = div64_u64(dm->bytes + stride - 1, stride);
	if (nwin > peer->ndest_mrs)
		return -ENOSPC;

	sg = dm->sgt.sgl;
	for (k = 0; k < nwin; k++) {
		start = k * stride;
		while (i + 1 < dm->nsegs && dm->segs[i + 1].off <= start) {
			sg = sg_next(sg);
			i++;
		}
		ret = collx_peer_post_window(peer, seq, k, stride, sg,
					     dm->nsegs - i,
					     start - dm->segs[i].off);
		if (ret)
			return k ? k : ret;
	}
	return nwin;
}

/**
 * collx_peer_dest_done() - end the neighbour's access to an op's output
 * @peer: the incoming connection
 *
 * Posts the invalidation of every window registered for the op the first
 * time, and says whether they have completed.  Called again when the
 * engine is kicked by the last completion.
 *
 * Context: process context (the engine).
 * Return: 1 when the registrations are gone, 0 while they are being
 * invalidated, or a negative errno if no invalidation could be posted.
 */
int collx_peer_dest_done(struct collx_peer *peer)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &peer->inv_cqe,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned long flags;
	int ret = 0;
	u32 k;

	spin_lock_irqsave(&peer->lock, flags);
	switch (peer->dest_state) {
	case COLLX_DEST_FREE:
		ret = 1;
		break;
	case COLLX_DEST_POSTED:
		ret = -ECONNRESET;
		for (k = 0; k < peer->dest_posted && !peer->closing &&
		     peer->qp; k++) {
			wr.ex.invalidate_rkey = peer->dest_mrs[k]->rkey;
			ret = ib_post_send(peer->qp, &wr, NULL);
			if (ret)
				break;
			peer->inv_pending++;
		}
		if (peer->inv_pending) {
			peer->dest_state = COLLX_DEST_INVALIDATING;
			ret = 0;
		}
		break;
	default:
		break;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_peer_release_rdma() - free a connection's QP, CQ, buffers and id
 * @peer: the connection, with @peer->mutex held unless @destroy_id
 * @destroy_id: also destroy the rdma_cm id (not from its own handler)
 *
 * Drains the QP first, so no completion handler runs afterwards.
 *
 * Context: process context.
 */
void collx_peer_release_rdma(struct collx_peer *peer, bool destroy_id)
{
	struct ib_device *ibdev = peer->cm_id ? peer->cm_id->device : NULL;
	unsigned long flags;

	if (peer->qp) {
		spin_lock_irqsave(&peer->lock, flags);
		peer->draining = true;
		spin_unlock_irqrestore(&peer->lock, flags);
		ib_drain_qp(peer->qp);
		rdma_destroy_qp(peer->cm_id);
		spin_lock_irqsave(&peer->lock, flags);
		peer->qp = NULL;
		peer->draining = false;
		spin_unlock_irqrestore(&peer->lock, flags);
	}
	if (peer->cq) {
		ib_cq_pool_put(peer->cq, peer->cq_size);
		peer->cq = NULL;
	}
	while (peer->ndest_mrs)
		ib_dereg_mr(peer->dest_mrs[--peer->ndest_mrs]);
	peer->dest_state = COLLX_DEST_FREE;
	peer->dest_posted = 0;
	peer->inv_pending = 0;
	memset(peer->dest, 0, sizeof(peer->dest));
	if (ibdev) {
		collx_staging_free(ibdev, &peer->staging);
		if (peer->ctrl_mapped)
			ib_dma_unmap_single(ibdev, peer->ctrl_dma,
					    collx_peer_ctrl_bytes(peer),
					    DMA_BIDIRECTIONAL);
	}
	peer->ctrl_mapped = false;
	peer->established = false;
	peer->remote_ready = false;
	peer->rq_flushed = false;
	kfree(peer->ctrl);
	peer->ctrl = NULL;
	kfree(peer->recvs);
	peer->recvs = NULL;
	kfree(peer->arrivals);
	peer->arrivals = NULL;
	if (destroy_id && peer->cm_id)
		rdma_destroy_id(peer->cm_id);
	peer->cm_id = NULL;
}

/**
 * collx_peer_disconnect() - tell the neighbour this connection is over
 * @peer: the connection
 *
 * Its QP moves to error, so the neighbour learns at once instead of at its
 * own timeout.
 *
 * Context: process context; takes @peer->mutex.
 */
void collx_peer_disconnect(struct collx_peer *peer)
{
	mutex_lock(&peer->mutex);
	if (peer->cm_id && peer->qp)
		rdma_disconnect(peer->cm_id);
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
	collx_peer_release_rdma(peer, false);
	mutex_unlock(&peer->mutex);
	/* Outside the mutex: destroying waits for a handler that wants it. */
	if (cm_id)
		rdma_destroy_id(cm_id);
	cancel_delayed_work_sync(&peer->retry_work);
}
