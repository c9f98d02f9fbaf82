// SPDX-License-Identifier: GPL-2.0
/*
 * collx: connections with rdma_cm.
 *
 * One listener per network namespace (port listen_port) takes every
 * incoming connection; comms register here (struct collx_cm_entry) so
 * that a request finds its comm by (namespace, lookup id, rank).  Of two
 * ranks, the lower one connects.  A request is accepted only from the
 * address the comm's table gives for the connecting rank, for a rank
 * pair the comm has, and the handshake (peer.c) then proves both ways
 * that each side knows the comm's secret.  Every refusal looks the same,
 * and the connecting side tries again until its deadline, so ranks may
 * make a comm in any order and a guess learns nothing.  Only the deadline
 * turns a refusal or an unreachable peer into an error, which then names
 * the rank.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "collx_loc.h"
#include "wire.h"

/**
 * struct collx_listener - the listener of one network namespace
 * @list: entry in collx_listeners
 * @net: the namespace (a reference held)
 * @cm_id: the listening id
 * @refs: comms (and the module, for the initial namespace) using it
 */
struct collx_listener {
	struct list_head list;
	struct net *net;
	struct rdma_cm_id *cm_id;
	unsigned int refs;
};

static LIST_HEAD(collx_listeners);
/* Listeners whose last use went, for collx_cm_reap() to destroy. */
static LIST_HEAD(collx_listeners_dead);
static void collx_cm_reap(struct work_struct *work);
static DECLARE_WORK(collx_cm_reap_work, collx_cm_reap);
static LIST_HEAD(collx_cm_registry);
/* Protects collx_listeners and collx_cm_registry. */
static DEFINE_MUTEX(collx_cm_lock);

static int collx_cm_handler(struct rdma_cm_id *cm_id,
			    struct rdma_cm_event *ev);

static const struct rdma_conn_param collx_cm_param_base = {
	.responder_resources = 1,
	.initiator_depth = 1,
	.retry_count = COLLX_RETRY_COUNT,
	.rnr_retry_count = COLLX_RNR_RETRY_COUNT,
};

static bool collx_cm_is_listener(struct rdma_cm_id *cm_id)
{
	struct collx_listener *l;
	bool found = false;

	list_for_each_entry(l, &collx_listeners, list)
		if (l->cm_id == cm_id || l == cm_id->context)
			found = true;
	return found;
}

/**
 * collx_cm_register() - make a comm findable by incoming connections
 * @e: its entry; @e->params names the namespace, lookup id and rank
 *
 * Context: process context.
 * Return: 0, or -EEXIST if that rank of that comm is already here.
 */
int collx_cm_register(struct collx_cm_entry *e)
{
	const struct collx_conn_params *p = e->params;
	struct collx_cm_entry *o;
	int ret = 0;

	mutex_lock(&collx_cm_lock);
	list_for_each_entry(o, &collx_cm_registry, list) {
		if (net_eq(o->params->net, p->net) &&
		    o->params->lookup == p->lookup &&
		    o->params->rank == p->rank) {
			ret = -EEXIST;
			break;
		}
	}
	if (!ret)
		list_add_tail(&e->list, &collx_cm_registry);
	mutex_unlock(&collx_cm_lock);
	return ret;
}

/**
 * collx_cm_unregister() - no more incoming connections for a comm
 * @e: its entry (registered or not)
 *
 * Context: process context.
 */
void collx_cm_unregister(struct collx_cm_entry *e)
{
	mutex_lock(&collx_cm_lock);
	list_del_init(&e->list);
	mutex_unlock(&collx_cm_lock);
}

/* The peer for a request, with a reference on its owner; NULL: refuse. */
static struct collx_peer *collx_cm_find(struct net *net,
					const struct collx_wire_req *req,
					const struct sockaddr *src,
					struct collx_cm_entry **entry)
{
	u32 srank = be32_to_cpu(req->src_rank);
	u32 drank = be32_to_cpu(req->dst_rank);
	const struct sockaddr_in *want, *got = (const void *)src;
	struct collx_peer *peer = NULL;
	struct collx_cm_entry *e;

	mutex_lock(&collx_cm_lock);
	list_for_each_entry(e, &collx_cm_registry, list) {
		const struct collx_conn_params *p = e->params;

		if (!net_eq(p->net, net) || p->rank != drank ||
		    p->lookup != be64_to_cpu(req->lookup))
			continue;
		if (be32_to_cpu(req->nranks) != p->nranks || srank >= drank)
			break;
		/* Only from the address the table gives for that rank. */
		want = (const void *)&p->addrs[srank];
		if (src->sa_family != AF_INET ||
		    got->sin_addr.s_addr != want->sin_addr.s_addr)
			break;
		peer = e->accept(e, srank);
		if (peer)
			*entry = e;
		break;
	}
	mutex_unlock(&collx_cm_lock);
	return peer;
}

static int collx_cm_reject(struct rdma_cm_id *cm_id)
{
	struct collx_wire_rej rej = {
		.magic = cpu_to_be32(COLLX_WIRE_MAGIC),
		.reason = cpu_to_be32(COLLX_REJ_NOT_NOW),
	};

	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: rdma_cm destroys the request's id. */
	return -ECONNREFUSED;
}

/* A lower rank asks to connect: find its comm, check and accept. */
static int collx_cm_request(struct rdma_cm_id *cm_id,
			    struct rdma_cm_event *ev)
{
	const struct collx_wire_req *req = ev->param.conn.private_data;
	struct collx_listener *l = cm_id->context;
	struct rdma_conn_param param = collx_cm_param_base;
	struct collx_wire_rep rep = {
		.magic = cpu_to_be32(COLLX_WIRE_MAGIC),
	};
	struct collx_cm_entry *e = NULL;
	struct collx_peer *peer;
	bool refuse = false;
	int ret;

	if (ev->param.conn.private_data_len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != COLLX_WIRE_MAGIC)
		return collx_cm_reject(cm_id);
	peer = collx_cm_find(l->net, req,
			     (struct sockaddr *)&cm_id->route.addr.dst_addr,
			     &e);
	if (!peer)
		return collx_cm_reject(cm_id);

	mutex_lock(&peer->mutex);
	if (peer->closing) {
		refuse = true;
	} else if (peer->cm_id || peer->state != COLLX_PEER_IDLE) {
		/*
		 * The rank connects again, so it gave up on the attempt we
		 * hold (a reply got lost).  Drop ours unless it is ready;
		 * its next try gets in.
		 */
		if (!peer->ever_ready)
			queue_delayed_work(collx_wq, &peer->retry_work, 0);
		refuse = true;
	}
	if (refuse)
		goto out_unlock;

	cm_id->context = peer;
	ret = collx_peer_setup(peer, cm_id);
	if (ret) {
		pr_warn_ratelimited("comm %u: cannot set up the connection from rank %u: %d\n",
				    peer->params->log_id, peer->rank, ret);
		goto out_clear;
	}
	memcpy(peer->peer_nonce, req->nonce, sizeof(peer->peer_nonce));
	memcpy(rep.nonce, peer->nonce, sizeof(rep.nonce));
	ret = collx_auth_proof(peer->params->shash, true, peer->rank,
			       peer->params->rank, peer->peer_nonce,
			       peer->nonce, rep.proof);
	if (!ret) {
		/* Before the REP: the rank's READY may follow it at once. */
		peer->attempts++;
		collx_peer_set_state(peer, COLLX_PEER_HANDSHAKE, 0);
		param.private_data = &rep;
		param.private_data_len = sizeof(rep);
		ret = rdma_accept(cm_id, &param);
	}
	if (ret) {
		collx_peer_release_rdma(peer);
		collx_peer_set_state(peer, COLLX_PEER_IDLE, 0);
		goto out_clear;
	}
	peer->cm_id = cm_id;
	goto out_unlock;

out_clear:
	peer->cm_id = NULL;
	cm_id->context = NULL;
	refuse = true;
out_unlock:
	mutex_unlock(&peer->mutex);
	e->put(e);
	return refuse ? collx_cm_reject(cm_id) : 0;
}

static void collx_cm_retry_later(struct collx_peer *peer, int err)
{
	if (time_after(jiffies, peer->deadline)) {
		collx_peer_set_state(peer, COLLX_PEER_FAILED, err);
		return;
	}
	/* Remember why, in case the deadline passes before the next try. */
	peer->err = err;
	collx_peer_set_state(peer, COLLX_PEER_CONNECTING, 0);
	/* Sooner than the attempt's watchdog (collx_cm_connect()). */
	mod_delayed_work(collx_wq, &peer->retry_work,
			 msecs_to_jiffies(COLLX_RETRY_MS));
}

/* Active side, connected: check the acceptor's proof, then say READY. */
static void collx_cm_established(struct collx_peer *peer,
				 struct rdma_cm_event *ev)
{
	const struct collx_wire_rep *rep = ev->param.conn.private_data;
	u8 proof[COLLX_WIRE_PROOF];
	unsigned long wait;
	int ret;

	if (ev->param.conn.private_data_len < sizeof(*rep) ||
	    be32_to_cpu(rep->magic) != COLLX_WIRE_MAGIC ||
	    !collx_auth_check(peer->params->shash, true, peer->params->rank,
			      peer->rank, peer->nonce, rep->nonce,
			      rep->proof)) {
		pr_warn_ratelimited("comm %u: rank %u did not prove the comm's secret\n",
				    peer->params->log_id, peer->rank);
		rdma_disconnect(peer->cm_id);
		collx_peer_set_state(peer, COLLX_PEER_FAILED, -EACCES);
		return;
	}
	memcpy(peer->peer_nonce, rep->nonce, sizeof(peer->peer_nonce));
	ret = collx_auth_proof(peer->params->shash, false, peer->params->rank,
			       peer->rank, peer->nonce, peer->peer_nonce,
			       proof);
	if (!ret)
		ret = collx_peer_post_reg(peer);
	if (!ret)
		ret = collx_peer_send_ready(peer, proof);
	memzero_explicit(proof, sizeof(proof));
	if (ret) {
		collx_peer_set_state(peer, COLLX_PEER_FAILED, -ECONNRESET);
		return;
	}
	/*
	 * The attempt's watchdog: nothing retries a lost READY (rdma_cm
	 * retries a lost REQ or REP itself, so the watchdog starts here).
	 */
	wait = msecs_to_jiffies(COLLX_HANDSHAKE_MS <<
				min_t(u32, peer->stalls,
				      COLLX_HANDSHAKE_DOUBLINGS));
	peer->attempt_end = jiffies + wait;
	mod_delayed_work(collx_wq, &peer->retry_work, wait);
	/* The acceptor's READY may already be in: either completes it. */
	collx_peer_handshake(peer, true, false);
}

/**
 * collx_cm_peer_ready() - the peer's READY arrived
 * @peer: the connection
 * @proof: the proof it carries (the connecting side's; zero otherwise)
 *
 * The accepting side checks the connecting side's proof and only then
 * grants remote write on its staging and answers with its own READY; a
 * connection that fails the check is dropped (the connecting side sees a
 * disconnect, like every other refusal).
 *
 * Context: the CQ's workqueue.
 */
void collx_cm_peer_ready(struct collx_peer *peer, const u8 *proof)
{
	if (peer->active) {
		collx_peer_handshake(peer, false, true);
		return;
	}
	if (!collx_auth_check(peer->params->shash, false, peer->rank,
			      peer->params->rank, peer->peer_nonce, peer->nonce,
			      proof)) {
		pr_warn_ratelimited("comm %u: a connection claiming rank %u did not prove the comm's secret; dropped\n",
				    peer->params->log_id, peer->rank);
		/* Now, not when the attempt's watchdog would. */
		mod_delayed_work(collx_wq, &peer->retry_work, 0);
		return;
	}
	if (collx_peer_post_reg(peer) || collx_peer_send_ready(peer, NULL)) {
		collx_peer_broken(peer, -ECONNRESET);
		return;
	}
	collx_peer_handshake(peer, false, true);
}

/* Events on a connection we make, with @peer->mutex held. */
static int collx_cm_active_event(struct collx_peer *peer,
				 struct rdma_cm_id *cm_id,
				 struct rdma_cm_event *ev)
{
	const struct collx_conn_params *p = peer->params;
	struct collx_wire_req req = {
		.magic = cpu_to_be32(COLLX_WIRE_MAGIC),
		.nranks = cpu_to_be32(p->nranks),
		.src_rank = cpu_to_be32(p->rank),
		.dst_rank = cpu_to_be32(peer->rank),
		.lookup = cpu_to_be64(p->lookup),
	};
	struct rdma_conn_param param = collx_cm_param_base;
	int ret;

	BUILD_BUG_ON(sizeof(req) > 56);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, COLLX_RESOLVE_MS);
		if (ret)
			collx_cm_retry_later(peer, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = collx_peer_setup(peer, cm_id);
		if (ret) {
			/* Keep the id: collx_peer_release() ends it. */
			peer->cm_id = cm_id;
			collx_peer_set_state(peer, COLLX_PEER_FAILED, ret);
			return 0;
		}
		memcpy(req.nonce, peer->nonce, sizeof(req.nonce));
		param.private_data = &req;
		param.private_data_len = sizeof(req);
		ret = rdma_connect_locked(cm_id, &param);
		if (ret) {
			collx_peer_release_rdma(peer);
			peer->cm_id = cm_id;
			collx_cm_retry_later(peer, ret);
		}
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		collx_cm_established(peer, ev);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		/* Not there yet, or not us: the same to us.  Try again. */
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

/* Events on a connection we accepted, with @peer->mutex held. */
static int collx_cm_passive_event(struct collx_peer *peer,
				  struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		collx_peer_handshake(peer, true, false);
		return 0;
	case RDMA_CM_EVENT_REJECTED:	/* the rank gave up on this attempt */
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (peer->state == COLLX_PEER_READY)
			collx_peer_broken(peer, -ECONNRESET);
		else
			queue_delayed_work(collx_wq, &peer->retry_work, 0);
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
		return 0;	/* a refused request */
	mutex_lock(&collx_cm_lock);
	ret = collx_cm_is_listener(cm_id);
	mutex_unlock(&collx_cm_lock);
	if (ret)
		return 0;	/* the listener itself (device removal...) */

	mutex_lock(&peer->mutex);
	if (peer->closing || peer->cm_id != cm_id) {
		mutex_unlock(&peer->mutex);
		return 0;
	}
	if (peer->active)
		ret = collx_cm_active_event(peer, cm_id, ev);
	else
		ret = collx_cm_passive_event(peer, ev);
	mutex_unlock(&peer->mutex);
	if (ret != -EAGAIN)
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * Answer, and move our QP to error: what is still posted
		 * gets flushed after what already arrived, which tells the
		 * engine when it has seen all the peer sent.
		 */
		rdma_disconnect(cm_id);
		if (READ_ONCE(peer->ever_ready)) {
			collx_peer_broken(peer, -ECONNRESET);
		} else if (peer->active) {
			/* Refused after the handshake began: try again. */
			mutex_lock(&peer->mutex);
			if (!peer->closing && peer->cm_id == cm_id)
				collx_cm_retry_later(peer, -ETIMEDOUT);
			mutex_unlock(&peer->mutex);
		} else {
			queue_delayed_work(collx_wq, &peer->retry_work, 0);
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* device.c tears the comm down; fail the connection now. */
		collx_peer_broken(peer, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * collx_cm_connect() - start (or restart) a connection we make
 * @peer: an active connection, with @peer->mutex held and no id
 *
 * Resolution and the handshake continue in collx_cm_handler().  The
 * connection leaves from this rank's own address in the table, in the
 * comm's network namespace, with the comm's type of service.
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int collx_cm_connect(struct collx_peer *peer)
{
	const struct collx_conn_params *p = peer->params;
	struct sockaddr_in src;
	struct rdma_cm_id *cm_id;
	int ret;

	cm_id = rdma_create_id(p->net, collx_cm_handler, peer, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	if (p->tos)
		rdma_set_service_type(cm_id, p->tos);
	memcpy(&src, &p->addrs[p->rank], sizeof(src));
	src.sin_port = 0;
	peer->cm_id = cm_id;
	peer->attempts++;
	peer->attempt_end = 0;	/* no watchdog until it is established */
	collx_peer_set_state(peer, COLLX_PEER_CONNECTING, 0);
	ret = rdma_resolve_addr(cm_id, (struct sockaddr *)&src,
				(struct sockaddr *)&p->addrs[peer->rank],
				COLLX_RESOLVE_MS);
	if (ret) {
		peer->cm_id = NULL;
		rdma_destroy_id(cm_id);
		return ret;
	}
	return 0;
}

/**
 * collx_cm_want() - the owner needs this connection: make it happen
 * @peer: the connection
 *
 * An idle active connection starts connecting; a passive one waits for
 * the request, both until the comm's timeout from now.
 *
 * Context: process context; takes @peer->mutex.
 */
void collx_cm_want(struct collx_peer *peer)
{
	int ret;

	mutex_lock(&peer->mutex);
	if (peer->closing || peer->state != COLLX_PEER_IDLE || peer->cm_id ||
	    peer->deadline) {
		mutex_unlock(&peer->mutex);
		return;
	}
	peer->deadline = jiffies + msecs_to_jiffies(peer->params->timeout_ms);
	if (peer->active) {
		ret = collx_cm_connect(peer);
		if (ret)
			collx_cm_retry_later(peer, ret == -EADDRNOTAVAIL ?
					     -EHOSTUNREACH : ret);
	}
	mutex_unlock(&peer->mutex);
}

/**
 * collx_cm_retry_work() - try a connection we make again; drop a stale one
 * @work: the peer's retry_work
 *
 * On a connection we make it runs COLLX_RETRY_MS after a failed attempt,
 * or COLLX_HANDSHAKE_MS (doubled per drop) after one was established and
 * is still not ready: either way that attempt goes, and a new one starts
 * unless the deadline has passed.  On an accepted connection it only
 * drops the attempt it holds (stale, or failed its proof), so the rank's
 * next request can be accepted.
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
	if (peer->closing || peer->ever_ready ||
	    (peer->state == COLLX_PEER_FAILED && peer->active)) {
		mutex_unlock(&peer->mutex);
		return;
	}
	old = peer->cm_id;
	if (old && peer->active && peer->attempt_end &&
	    !time_before(jiffies, peer->attempt_end)) {
		/* The watchdog: the next attempt gets longer. */
		peer->stalls++;
		pr_info_ratelimited("comm %u: the connection to rank %u was not ready after %u ms (%s); trying again\n",
				    peer->params->log_id, peer->rank,
				    COLLX_HANDSHAKE_MS <<
				    min_t(u32, peer->stalls - 1,
					  COLLX_HANDSHAKE_DOUBLINGS),
				    collx_peer_state_name(peer->state));
	}
	if (old && peer->qp)
		rdma_disconnect(old);
	collx_peer_release_rdma(peer);
	peer->cm_id = NULL;
	if (!peer->active) {
		peer->err = 0;
		collx_peer_set_state(peer, COLLX_PEER_IDLE, 0);
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
	if (peer->closing) {
		/* Released meanwhile. */
	} else if (time_after(jiffies, peer->deadline)) {
		collx_peer_set_state(peer, COLLX_PEER_FAILED, -ETIMEDOUT);
	} else {
		ret = collx_cm_connect(peer);
		if (ret)
			collx_cm_retry_later(peer, ret);
	}
	mutex_unlock(&peer->mutex);
}

/**
 * collx_cm_listen_get() - the listener of a namespace, made if need be
 * @net: the namespace
 *
 * Context: process context.
 * Return: 0 or a negative errno (e.g. -EADDRINUSE for a taken port).
 */
int collx_cm_listen_get(struct net *net)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(collx_listen_port),
	};
	struct collx_listener *l;
	struct rdma_cm_id *cm_id;
	int ret;

	/* A listener on its way out still holds the port. */
	collx_cm_listen_flush();
	mutex_lock(&collx_cm_lock);
	list_for_each_entry(l, &collx_listeners, list) {
		if (net_eq(l->net, net)) {
			l->refs++;
			mutex_unlock(&collx_cm_lock);
			return 0;
		}
	}
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l) {
		mutex_unlock(&collx_cm_lock);
		return -ENOMEM;
	}
	cm_id = rdma_create_id(net, collx_cm_handler, l, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto out_free;
	}
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(cm_id, 128);
	if (ret) {
		pr_err("cannot listen on rdma_cm port %u: %d\n",
		       collx_listen_port, ret);
		rdma_destroy_id(cm_id);
		goto out_free;
	}
	l->net = get_net(net);
	l->cm_id = cm_id;
	l->refs = 1;
	list_add_tail(&l->list, &collx_listeners);
	mutex_unlock(&collx_cm_lock);
	if (net_eq(net, &init_net))
		pr_info("listening on rdma_cm port %u\n", collx_listen_port);
	return 0;

out_free:
	mutex_unlock(&collx_cm_lock);
	kfree(l);
	return ret;
}

/**
 * collx_cm_listen_put() - drop a use of a namespace's listener
 * @net: the namespace
 *
 * The last use hands the listener to collx_wq to destroy: the last use
 * of a comm can go in the listener's own handler (collx_cm_request()),
 * and destroying an id there would wait for that very handler.
 *
 * Context: process context, including an rdma_cm handler.
 */
void collx_cm_listen_put(struct net *net)
{
	struct collx_listener *l;

	mutex_lock(&collx_cm_lock);
	list_for_each_entry(l, &collx_listeners, list) {
		if (net_eq(l->net, net)) {
			if (!--l->refs) {
				list_move_tail(&l->list, &collx_listeners_dead);
				queue_work(collx_wq, &collx_cm_reap_work);
			}
			break;
		}
	}
	mutex_unlock(&collx_cm_lock);
}

static void collx_cm_reap(struct work_struct *work)
{
	struct collx_listener *l, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&collx_cm_lock);
	list_splice_init(&collx_listeners_dead, &dead);
	mutex_unlock(&collx_cm_lock);
	/* Outside the lock: destroying waits for a running handler. */
	list_for_each_entry_safe(l, tmp, &dead, list) {
		rdma_destroy_id(l->cm_id);
		put_net(l->net);
		kfree(l);
	}
}

/**
 * collx_cm_listen_flush() - wait until the listeners that lost their last
 * use are destroyed
 *
 * Context: process context, not an rdma_cm handler, no collx lock held.
 */
void collx_cm_listen_flush(void)
{
	flush_work(&collx_cm_reap_work);
}
