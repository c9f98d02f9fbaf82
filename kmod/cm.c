// SPDX-License-Identifier: GPL-2.0
/*
 * collx: connections with rdma_cm.
 *
 * One listener per module (INADDR_ANY, port listen_port) takes every
 * incoming connection; the request's private data names the communicator
 * (comm_key) and the ranks.  A request for a communicator that does not
 * exist here yet is refused with NOT_READY and the connecting side tries
 * again until its deadline, so ranks may create a communicator in any
 * order.  Only the deadline turns a refusal or an unreachable peer into an
 * error, which then names the rank.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/jiffies.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "collx_loc.h"
#include "wire.h"

/* rdma_cm's own per-step timeout for address and route resolution. */
#define COLLX_RESOLVE_MS	2000
/* Pause before trying a refused or failed connection again. */
#define COLLX_RETRY_MS		100

static struct rdma_cm_id *collx_listener;

static int collx_cm_reject(struct rdma_cm_id *cm_id, u32 reason)
{
	struct collx_wire_rej rej = {
		.magic = cpu_to_be32(COLLX_WIRE_MAGIC),
		.reason = cpu_to_be32(reason),
	};

	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: rdma_cm destroys the request's id. */
	return -ECONNREFUSED;
}

/* A neighbour asks to connect: find its communicator and accept. */
static int collx_cm_request(struct rdma_cm_id *cm_id,
			    struct rdma_cm_event *ev)
{
	const struct collx_wire_req *req = ev->param.conn.private_data;
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct collx_comm *comm;
	struct collx_peer *peer;
	u32 reason = 0;
	int ret;

	if (ev->param.conn.private_data_len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != COLLX_WIRE_MAGIC)
		return collx_cm_reject(cm_id, COLLX_REJ_MISMATCH);

	comm = collx_comm_find(be64_to_cpu(req->comm_key),
			       be32_to_cpu(req->dst_rank));
	if (!comm)
		return collx_cm_reject(cm_id, COLLX_REJ_NOT_READY);
	peer = &comm->prev;
	if (be32_to_cpu(req->nranks) != comm->nranks ||
	    be32_to_cpu(req->src_rank) != peer->rank) {
		pr_warn("comm %u: refused rank %u of %u (want rank %u of %u)\n",
			comm->id, be32_to_cpu(req->src_rank),
			be32_to_cpu(req->nranks), peer->rank, comm->nranks);
		collx_comm_put(comm);
		return collx_cm_reject(cm_id, COLLX_REJ_MISMATCH);
	}

	mutex_lock(&peer->mutex);
	if (peer->closing) {
		reason = COLLX_REJ_BUSY;
		goto out_unlock;
	}
	if (peer->cm_id || peer->state != COLLX_PEER_IDLE) {
		/*
		 * The predecessor connects again, so it gave up on the
		 * connection we hold (its reply or ours got lost).  While the
		 * comm is still connecting, drop ours and let its retry in.
		 */
		if (READ_ONCE(comm->state) == COLLX_COMM_CONNECTING) {
			queue_delayed_work(collx_wq, &peer->retry_work, 0);
			reason = COLLX_REJ_NOT_READY;
		} else {
			reason = COLLX_REJ_BUSY;
		}
		pr_info_ratelimited("comm %u: rank %u connects again (ours: %s)%s\n",
				    comm->id, peer->rank,
				    collx_peer_state_name(peer->state),
				    reason == COLLX_REJ_BUSY ? ", refused" :
							       "");
		goto out_unlock;
	}
	cm_id->context = peer;
	ret = collx_peer_setup(peer, cm_id);
	if (ret) {
		pr_warn("comm %u: cannot set up the connection from rank %u: %d\n",
			comm->id, peer->rank, ret);
		cm_id->context = NULL;
		reason = COLLX_REJ_NO_RESOURCES;
		goto out_unlock;
	}
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		collx_peer_release_rdma(peer, false);
		cm_id->context = NULL;
		reason = COLLX_REJ_NO_RESOURCES;
		goto out_unlock;
	}
	peer->cm_id = cm_id;
	peer->state = COLLX_PEER_HANDSHAKE;
out_unlock:
	mutex_unlock(&peer->mutex);
	collx_comm_put(comm);
	return reason ? collx_cm_reject(cm_id, reason) : 0;
}

static void collx_cm_retry_later(struct collx_peer *peer, int err)
{
	struct collx_comm *comm = peer->comm;

	if (time_after(jiffies, comm->connect_deadline) ||
	    comm->state != COLLX_COMM_CONNECTING) {
		collx_peer_set_state(peer, COLLX_PEER_FAILED, err);
		return;
	}
	/* Remember why, in case the deadline passes before the next try. */
	peer->err = err;
	peer->state = COLLX_PEER_CONNECTING;
	queue_delayed_work(collx_wq, &peer->retry_work,
			   msecs_to_jiffies(COLLX_RETRY_MS));
}

/* Events on our outgoing connection, with @peer->mutex held. */
static int collx_cm_outgoing_event(struct collx_peer *peer,
				   struct rdma_cm_id *cm_id,
				   struct rdma_cm_event *ev)
{
	struct collx_comm *comm = peer->comm;
	struct collx_wire_req req = {
		.magic = cpu_to_be32(COLLX_WIRE_MAGIC),
		.nranks = cpu_to_be32(comm->nranks),
		.src_rank = cpu_to_be32(comm->rank),
		.dst_rank = cpu_to_be32(peer->rank),
		.comm_key = cpu_to_be64(comm->key),
	};
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	const struct collx_wire_rej *rej;
	u8 rej_len = 0;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, COLLX_RESOLVE_MS);
		if (ret)
			collx_cm_retry_later(peer, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = collx_peer_setup(peer, cm_id);
		if (ret) {
			/* Keep the id: collx_peer_release() destroys it. */
			peer->cm_id = cm_id;
			collx_peer_set_state(peer, COLLX_PEER_FAILED, ret);
			return 0;
		}
		ret = rdma_connect_locked(cm_id, &param);
		if (ret) {
			collx_peer_release_rdma(peer, false);
			peer->cm_id = cm_id;
			collx_cm_retry_later(peer, ret);
		}
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		/*
		 * The neighbour's READY may arrive before this event is
		 * handled; whichever of the two comes second makes the
		 * connection ready (no write may precede our registration).
		 */
		if (collx_peer_post_reg(peer))
			collx_peer_set_state(peer, COLLX_PEER_FAILED,
					     -ECONNRESET);
		else
			collx_peer_handshake(peer, true, false);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		rej = rdma_consumer_reject_data(cm_id, ev, &rej_len);
		if (rej && rej_len >= sizeof(*rej) &&
		    be32_to_cpu(rej->magic) == COLLX_WIRE_MAGIC &&
		    be32_to_cpu(rej->reason) == COLLX_REJ_MISMATCH) {
			collx_peer_set_state(peer, COLLX_PEER_FAILED,
					     -ECONNREFUSED);
			return 0;
		}
		/* Not there yet (or no collx at all yet): try again. */
		collx_cm_retry_later(peer, -ETIMEDOUT);
		return 0;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		collx_cm_retry_later(peer, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (peer->state == COLLX_PEER_READY)
			collx_peer_broken(peer, -ECONNRESET);
		else
			collx_cm_retry_later(peer, -ETIMEDOUT);
		return 0;
	default:
		return -EAGAIN;
	}
}

/* Events on the incoming connection, with @peer->mutex held. */
static int collx_cm_incoming_event(struct collx_peer *peer,
				   struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (collx_peer_post_reg(peer) || collx_peer_send_ready(peer)) {
			collx_peer_set_state(peer, COLLX_PEER_FAILED,
					     -ECONNRESET);
			return 0;
		}
		collx_peer_set_state(peer, COLLX_PEER_READY, 0);
		return 0;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (peer->state == COLLX_PEER_READY)
			collx_peer_broken(peer, -ECONNRESET);
		else
			collx_peer_set_state(peer, COLLX_PEER_FAILED,
					     -ECONNRESET);
		return 0;
	default:
		return -EAGAIN;
	}
}

static int collx_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct collx_peer *peer = cm_id->context;
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return collx_cm_request(cm_id, ev);
	if (!peer)
		return 0;	/* the listener, or a refused request */

	mutex_lock(&peer->mutex);
	if (peer->closing || peer->cm_id != cm_id) {
		mutex_unlock(&peer->mutex);
		return 0;
	}
	if (peer->outgoing)
		ret = collx_cm_outgoing_event(peer, cm_id, ev);
	else
		ret = collx_cm_incoming_event(peer, ev);
	mutex_unlock(&peer->mutex);
	if (ret != -EAGAIN)
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * Answer, and move our QP to error: what is still posted
		 * gets flushed after what already arrived, which tells the
		 * engine when it has seen all the neighbour sent.
		 */
		rdma_disconnect(cm_id);
		if (READ_ONCE(peer->state) == COLLX_PEER_READY)
			collx_peer_broken(peer, -ECONNRESET);
		else
			collx_peer_set_state(peer, COLLX_PEER_FAILED,
					     -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* collx_ib_remove() tears the comm down; fail it now. */
		collx_comm_fail(peer->comm, -ENODEV, peer->rank);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * collx_cm_connect() - start (or restart) the outgoing connection
 * @peer: the comm's next connection, with @peer->mutex held and no id
 *
 * Resolution and the handshake continue in collx_cm_handler().
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int collx_cm_connect(struct collx_peer *peer)
{
	struct collx_comm *comm = peer->comm;
	struct rdma_cm_id *cm_id;
	int ret;

	cm_id = rdma_create_id(&init_net, collx_cm_handler, peer, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	peer->cm_id = cm_id;
	peer->state = COLLX_PEER_CONNECTING;
	peer->attempts++;
	ret = rdma_resolve_addr(cm_id, NULL,
				(struct sockaddr *)&comm->addrs[peer->rank],
				COLLX_RESOLVE_MS);
	if (ret) {
		peer->cm_id = NULL;
		rdma_destroy_id(cm_id);
	}
	return ret;
}

/**
 * collx_cm_retry_work() - try the outgoing connection again
 * @work: the peer's retry_work
 *
 * On the incoming connection it only drops a stale accepted attempt, so
 * that the predecessor's next request can be accepted.
 *
 * Context: collx_wq.
 */
void collx_cm_retry_work(struct work_struct *work)
{
	struct collx_peer *peer = container_of(to_delayed_work(work),
					       struct collx_peer, retry_work);
	struct rdma_cm_id *old;
	int ret;

	mutex_lock(&peer->mutex);
	if (peer->closing) {
		mutex_unlock(&peer->mutex);
		return;
	}
	old = peer->cm_id;
	collx_peer_release_rdma(peer, false);
	if (!peer->outgoing) {
		/* A stale accepted connection: make room for the new one. */
		peer->state = COLLX_PEER_IDLE;
		peer->err = 0;
		mutex_unlock(&peer->mutex);
		if (old)
			rdma_destroy_id(old);
		return;
	}
	mutex_unlock(&peer->mutex);
	/* Outside the mutex: destroying waits for the id's handler. */
	if (old)
		rdma_destroy_id(old);

	mutex_lock(&peer->mutex);
	if (!peer->closing) {
		ret = collx_cm_connect(peer);
		if (ret)
			collx_cm_retry_later(peer, ret);
	}
	mutex_unlock(&peer->mutex);
}

/**
 * collx_cm_listen() - start the module's listener
 *
 * Context: module init.
 * Return: 0 or a negative errno (e.g. -EADDRINUSE for a taken port).
 */
int collx_cm_listen(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(collx_listen_port),
	};
	struct rdma_cm_id *cm_id;
	int ret;

	cm_id = rdma_create_id(&init_net, collx_cm_handler, NULL, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&sin);
	if (ret) {
		pr_err("cannot bind rdma_cm port %u: %d\n", collx_listen_port,
		       ret);
		goto out_destroy;
	}
	ret = rdma_listen(cm_id, 128);
	if (ret) {
		pr_err("cannot listen on rdma_cm port %u: %d\n",
		       collx_listen_port, ret);
		goto out_destroy;
	}
	collx_listener = cm_id;
	pr_info("listening on rdma_cm port %u\n", collx_listen_port);
	return 0;

out_destroy:
	rdma_destroy_id(cm_id);
	return ret;
}

/**
 * collx_cm_stop() - stop the listener
 *
 * Context: module exit.
 */
void collx_cm_stop(void)
{
	if (collx_listener)
		rdma_destroy_id(collx_listener);
	collx_listener = NULL;
}
