// SPDX-License-Identifier: GPL-2.0
/*
 * collx: asking a peer whom it waits for (ASK and TELL).
 *
 * A rank whose group stopped for its whole timeout knows only the peer it
 * waits for itself.  Behind a dead rank that is a live neighbour, as stuck
 * as we are, and with equal timeouts every rank times out at the same
 * moment, before the neighbours' ABORTs naming the dead rank arrive.  So,
 * before failing, the rank ASKs that peer; the peer's comm answers with a
 * TELL of whom its own running group waits for (or nothing), and the
 * timeout then names that rank.  A dead or cut peer does not answer, and
 * is named itself once the grace (COLLX_ASK_GRACE_MS) runs out.
 *
 * One question per connection is in flight at a time, one answer too:
 * each uses its own control buffer, free again when its SEND completes.
 * A TELL that answers no question of ours is ignored.  CQ handlers only
 * record, under @peer->lock, and report upward (ops->asked, ops->kick).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "collx_loc.h"
#include "wire.h"

/* Post a SEND of control buffer @idx; @peer->lock held. */
static int collx_ask_post(struct collx_peer *peer, u32 idx, u32 len,
			  struct ib_cqe *cqe)
{
	struct ib_send_wr wr;
	struct ib_sge sge;

	collx_peer_ctrl_send(peer, idx, len, cqe, &sge, &wr);
	return collx_peer_post_locked(peer, &wr);
}

/**
 * collx_peer_ask() - ask the peer whom its running group waits for
 * @peer: the connection
 * @idle_ms: how long our group has made no progress
 *
 * The answer, if one comes, is taken with collx_peer_take_tell().
 *
 * Context: any; takes @peer->lock.
 * Return: true if the question was posted; false if the connection is not
 * ready or our previous question's SEND has not completed.
 */
bool collx_peer_ask(struct collx_peer *peer, u32 idle_ms)
{
	u32 idx = collx_peer_ctrl_send_buf(peer, COLLX_CTRL_ASK_BUF);
	struct collx_wire_ask *msg = collx_peer_ctrl_buf(peer, idx);
	unsigned long flags;
	bool ok = false;

	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	spin_lock_irqsave(&peer->lock, flags);
	if (peer->state == COLLX_PEER_READY && !peer->ask_busy) {
		memset(msg, 0, sizeof(*msg));
		msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
		msg->type = cpu_to_be32(COLLX_CTRL_ASK);
		msg->idle_ms = cpu_to_be32(idle_ms);
		ok = !collx_ask_post(peer, idx, sizeof(*msg), &peer->ask_cqe);
		/* (The answer's handler takes the lock: it cannot be first.) */
		peer->ask_busy = ok;
		peer->awaiting = ok;
		peer->told = false;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ok;
}

/**
 * collx_peer_take_tell() - the answer to our question, if it came
 * @peer: the connection
 * @t: out
 *
 * Context: any; takes @peer->lock.
 * Return: true once per answer.
 */
bool collx_peer_take_tell(struct collx_peer *peer, struct collx_tell *t)
{
	unsigned long flags;
	bool got;

	spin_lock_irqsave(&peer->lock, flags);
	got = peer->told;
	if (got)
		*t = peer->tell;
	peer->told = false;
	spin_unlock_irqrestore(&peer->lock, flags);
	return got;
}

/**
 * collx_peer_take_asked() - did the peer ask a question we did not answer
 * @peer: the connection
 *
 * Context: any; takes @peer->lock.
 * Return: true once per question.
 */
bool collx_peer_take_asked(struct collx_peer *peer)
{
	unsigned long flags;
	bool asked;

	spin_lock_irqsave(&peer->lock, flags);
	asked = peer->asked;
	peer->asked = false;
	spin_unlock_irqrestore(&peer->lock, flags);
	return asked;
}

/**
 * collx_peer_tell() - answer the peer's question
 * @peer: the connection
 * @t: whom our running group waits for (@written and @arrived are filled
 *	in here, from the connection's counters)
 *
 * Context: any; takes @peer->lock.
 * Return: 0; -EBUSY if our previous answer's SEND has not completed (the
 * question goes unanswered: the asker names us), -ECONNRESET if the
 * connection is not ready, or the errno of ib_post_send().
 */
int collx_peer_tell(struct collx_peer *peer, const struct collx_tell *t)
{
	u32 idx = collx_peer_ctrl_send_buf(peer, COLLX_CTRL_TELL_BUF);
	struct collx_wire_tell *msg = collx_peer_ctrl_buf(peer, idx);
	unsigned long flags;
	int ret = -ECONNRESET;
	u64 arrived;

	BUILD_BUG_ON(sizeof(*msg) > COLLX_CTRL_SIZE);
	spin_lock_irqsave(&peer->lock, flags);
	if (peer->tell_busy) {
		ret = -EBUSY;
	} else if (peer->state == COLLX_PEER_READY) {
		memset(msg, 0, sizeof(*msg));
		msg->magic = cpu_to_be32(COLLX_WIRE_MAGIC);
		msg->type = cpu_to_be32(COLLX_CTRL_TELL);
		msg->rank = cpu_to_be32(t->rank);
		msg->kind = cpu_to_be32(t->kind < 0 ? COLLX_WIRE_WAITS_NOTHING :
					(u32)t->kind);
		msg->phase = cpu_to_be32(t->phase);
		msg->step = cpu_to_be32(t->step);
		msg->idle_ms = cpu_to_be32(t->idle_ms);
		msg->written = cpu_to_be64(peer->tx_done);
		arrived = peer->rx_consumed +
			  (u32)(peer->arr_tail - peer->arr_head);
		msg->arrived = cpu_to_be64(arrived);
		ret = collx_ask_post(peer, idx, sizeof(*msg), &peer->tell_cqe);
		peer->tell_busy = !ret;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return ret;
}

/**
 * collx_ask_recv() - the peer asks whom we wait for
 * @peer: the connection
 * @msg: its ASK
 * @len: bytes received
 *
 * Context: the CQ's workqueue.
 */
void collx_ask_recv(struct collx_peer *peer, const struct collx_wire_ask *msg,
		    u32 len)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&peer->lock, flags);
	ok = len >= sizeof(*msg) && peer->state == COLLX_PEER_READY;
	if (ok)
		peer->asked = true;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (len < sizeof(*msg))
		collx_peer_broken(peer, -EPROTO);
	else if (ok)
		peer->ops->asked(peer);
}

/**
 * collx_tell_recv() - the peer answers our question
 * @peer: the connection
 * @msg: its TELL
 * @len: bytes received
 *
 * Context: the CQ's workqueue.
 */
void collx_tell_recv(struct collx_peer *peer,
		     const struct collx_wire_tell *msg, u32 len)
{
	u32 rank, kind, phase;
	unsigned long flags;
	bool bad;

	if (len < sizeof(*msg)) {
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	rank = be32_to_cpu(msg->rank);
	kind = be32_to_cpu(msg->kind);
	phase = be32_to_cpu(msg->phase);
	bad = (rank >= peer->params->nranks && rank != COLLX_RANK_NONE) ||
	      (kind > 3 && kind != COLLX_WIRE_WAITS_NOTHING) ||
	      (kind <= 3 && rank == COLLX_RANK_NONE);
	if (bad) {
		pr_warn_ratelimited("comm %u: rank %u sent a TELL naming rank %u, kind %u\n",
				    peer->params->log_id, peer->rank, rank,
				    kind);
		collx_peer_broken(peer, -EPROTO);
		return;
	}
	spin_lock_irqsave(&peer->lock, flags);
	if (peer->awaiting) {
		peer->awaiting = false;
		peer->told = true;
		peer->tell = (struct collx_tell) {
			.rank = kind <= 3 ? rank : COLLX_RANK_NONE,
			.kind = kind <= 3 ? (int)kind : -1,
			.phase = phase < COLLX_PHASE_COUNT ? phase :
				 COLLX_PHASE_NONE,
			.step = be32_to_cpu(msg->step),
			.idle_ms = be32_to_cpu(msg->idle_ms),
			.written = be64_to_cpu(msg->written),
			.arrived = be64_to_cpu(msg->arrived),
		};
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	peer->ops->kick(peer);
}

/* Our ASK's or TELL's SEND completed: its buffer (@busy) is free again. */
static void collx_ctrl_sent(struct collx_peer *peer, bool *busy,
			    struct ib_wc *wc)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	*busy = false;
	spin_unlock_irqrestore(&peer->lock, flags);
	if (wc->status != IB_WC_SUCCESS)
		collx_peer_broken(peer, -ECONNRESET);
}

static void collx_ask_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       ask_cqe);

	collx_ctrl_sent(peer, &peer->ask_busy, wc);
}

static void collx_tell_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct collx_peer *peer = container_of(wc->wr_cqe, struct collx_peer,
					       tell_cqe);

	collx_ctrl_sent(peer, &peer->tell_busy, wc);
}

/**
 * collx_ask_init() - set up a connection's ASK and TELL completions
 * @peer: the connection
 *
 * Context: any.
 */
void collx_ask_init(struct collx_peer *peer)
{
	peer->ask_cqe.done = collx_ask_sent;
	peer->tell_cqe.done = collx_tell_sent;
}
