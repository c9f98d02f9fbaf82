// SPDX-License-Identifier: GPL-2.0
/*
 * collx: communicators.
 *
 * A communicator knows every rank's address and keeps one connection per
 * peer it has needed: at create, the peers of its common schedules (ring
 * neighbours, recursive-doubling partners, tree parents and children for
 * root 0); any other when a collective first names it.  It lives in the
 * fd's table and, while it lives, in cm.c's registry, where incoming
 * connections find it.
 *
 * The engine reports; the comm decides.  Failure is a state, not a hang:
 * whatever fails the comm (a timeout, a broken connection, a removed
 * device, destroy) records the errno and whom to blame, completes every
 * op with them, tells every peer why (ABORT) and disconnects, so that
 * every survivor names the rank that caused it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "collx_loc.h"
#include "core/sched.h"
#include "core/uapi_check.h"

static DEFINE_IDA(collx_comm_ida);

static void collx_comm_free(struct kref *ref)
{
	struct collx_comm *comm = container_of(ref, struct collx_comm, ref);
	u32 i;

	for (i = 0; comm->peers && i < comm->params.nranks; i++)
		kfree(comm->peers[i]);
	kvfree(comm->peers);
	collx_auth_free(comm->params.shash);
	memzero_explicit(comm->params.secret, sizeof(comm->params.secret));
	if (comm->params.net) {
		if (comm->listening)
			collx_cm_listen_put(comm->params.net);
		put_net(comm->params.net);
	}
	if (comm->params.memlock_mm)
		mmdrop(comm->params.memlock_mm);
	kfree(comm->params.addrs);
	ida_free(&collx_comm_ida, comm->id);
	kfree(comm);
	atomic_dec(&collx_stats.comms);
}

/**
 * collx_comm_put() - drop a reference to a communicator
 * @comm: the communicator
 *
 * Context: process context.
 */
void collx_comm_put(struct collx_comm *comm)
{
	kref_put(&comm->ref, collx_comm_free);
}

/**
 * collx_comm_get_handle() - look up a communicator of a file
 * @cf: the file
 * @handle: its comm_id
 *
 * Context: any.
 * Return: the communicator with a reference held, or NULL.
 */
struct collx_comm *collx_comm_get_handle(struct collx_file *cf, u32 handle)
{
	struct collx_comm *comm;

	xa_lock(&cf->comms);
	comm = xa_load(&cf->comms, handle);
	if (comm)
		kref_get(&comm->ref);
	xa_unlock(&cf->comms);
	return comm;
}

/**
 * collx_comm_fail() - put a communicator in its error state
 * @comm: the communicator
 * @b: the errno, whom to blame, phase and step
 *
 * The first failure wins.  The work item then completes the ops and tells
 * the peers.
 *
 * Context: any.
 */
void collx_comm_fail(struct collx_comm *comm, const struct collx_blame *b)
{
	unsigned long flags;
	bool first = false;

	spin_lock_irqsave(&comm->elock, flags);
	if (comm->state == COLLX_COMM_CONNECTING ||
	    comm->state == COLLX_COMM_READY) {
		comm->state = COLLX_COMM_ERROR;
		comm->err = b->err;
		comm->failed_rank = b->rank;
		comm->failed_phase = b->phase;
		comm->failed_step = b->step;
		first = true;
	}
	spin_unlock_irqrestore(&comm->elock, flags);
	if (!first)
		return;
	wake_up_all(&comm->connected);
	queue_work(collx_wq, &comm->work);
}

static void collx_comm_failure(struct collx_comm *comm, struct collx_blame *b)
{
	spin_lock_irq(&comm->elock);
	b->err = comm->err;
	b->rank = comm->failed_rank;
	b->phase = comm->failed_phase;
	b->step = comm->failed_step;
	spin_unlock_irq(&comm->elock);
}

/*
 * A peer's ABORT that names this rank is hearsay about ourselves: when the
 * running group waits on a peer, that direct observation says more (in a
 * deadlock every rank waits for another).  With @comm->lock held.
 */
static void collx_comm_reblame(struct collx_comm *comm, struct collx_blame *b)
{
	struct collx_blame own = { .rank = COLLX_RANK_NONE };

	if (b->rank != comm->params.rank ||
	    !collx_engine_waits_for(comm, &own) ||
	    own.rank == COLLX_RANK_NONE || own.rank == comm->params.rank)
		return;
	b->rank = own.rank;
	b->phase = own.phase;
	b->step = own.step;
	spin_lock_irq(&comm->elock);
	comm->failed_rank = b->rank;
	comm->failed_phase = b->phase;
	comm->failed_step = b->step;
	spin_unlock_irq(&comm->elock);
}

/* ---- the peer's upward calls --------------------------------------- */

static void collx_comm_kick(struct collx_peer *peer)
{
	struct collx_comm *comm = peer->owner;

	wake_up_all(&comm->connected);
	queue_work(collx_wq, &comm->work);
}

static int collx_comm_bind(struct collx_peer *peer, struct ib_device *ibdev)
{
	struct collx_comm *comm = peer->owner;
	struct collx_dev *dev = NULL;
	int ret;

	mutex_lock(&comm->peers_lock);
	ret = collx_device_bind(&comm->dev_user, comm->dev, ibdev, &dev);
	if (!ret && dev)
		WRITE_ONCE(comm->dev, dev);
	mutex_unlock(&comm->peers_lock);
	return ret;
}

/* The peer's ASK: collx_comm_work() answers it, with the engine's view. */
static void collx_comm_asked(struct collx_peer *peer)
{
	struct collx_comm *comm = peer->owner;

	WRITE_ONCE(comm->asked, true);
	queue_work(collx_wq, &comm->work);
}

static const struct collx_peer_ops collx_comm_peer_ops = {
	.kick = collx_comm_kick,
	.bind = collx_comm_bind,
	.asked = collx_comm_asked,
};

/**
 * collx_comm_peer() - the connection to @rank, made if need be
 * @comm: the communicator
 * @rank: the peer, not this rank
 * @want: start connecting it (the timeout runs from now)
 *
 * Context: process context.
 * Return: the connection (it lives as long as the comm), or NULL if it
 * cannot be made now (no memory, or the comm is being torn down).
 */
struct collx_peer *collx_comm_peer(struct collx_comm *comm, u32 rank,
				   bool want)
{
	struct collx_peer *peer;

	mutex_lock(&comm->peers_lock);
	peer = comm->peers[rank];
	if (!peer && !comm->closing) {
		peer = kzalloc(sizeof(*peer), GFP_KERNEL);
		if (peer) {
			collx_peer_init(peer, &collx_comm_peer_ops, comm,
					&comm->params, rank);
			/* Published whole: the engine reads it unlocked. */
			smp_store_release(&comm->peers[rank], peer);
		}
	}
	if (peer && comm->closing)
		peer = NULL;
	mutex_unlock(&comm->peers_lock);
	if (peer && want)
		collx_cm_want(peer);
	return peer;
}

/**
 * collx_comm_want_peers() - make sure an op's peers are there
 * @comm: the communicator
 * @op: a prepared op
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int collx_comm_want_peers(struct collx_comm *comm, struct collx_op *op)
{
	u32 i;

	for (i = 0; i < op->sched.n; i++) {
		const struct collx_xfer *x = &op->sched.x[i];

		if (x->kind != COLLX_XF_SEND && x->kind != COLLX_XF_RECV &&
		    x->kind != COLLX_XF_RECV_REDUCE)
			continue;
		if (x->peer >= comm->params.nranks ||
		    x->peer == comm->params.rank)
			return -EINVAL;
		if (!collx_comm_peer(comm, x->peer, true))
			return -ENOMEM;
	}
	return 0;
}

/* ---- cm.c's view: incoming connections ------------------------------ */

static struct collx_peer *collx_comm_accept(struct collx_cm_entry *e, u32 rank)
{
	struct collx_comm *comm = container_of(e, struct collx_comm, cm);
	struct collx_peer *peer;

	if (READ_ONCE(comm->state) > COLLX_COMM_READY)
		return NULL;
	peer = collx_comm_peer(comm, rank, false);
	if (peer)
		kref_get(&comm->ref);
	return peer;
}

static void collx_comm_entry_put(struct collx_cm_entry *e)
{
	collx_comm_put(container_of(e, struct collx_comm, cm));
}

/* ---- device.c's view ---------------------------------------------------- */

static void collx_comm_dev_removed(struct collx_dev_user *user)
{
	struct collx_comm *comm = container_of(user, struct collx_comm,
					       dev_user);

	collx_comm_teardown(comm, -ENODEV);
}

static void collx_comm_dev_get(struct collx_dev_user *user)
{
	kref_get(&container_of(user, struct collx_comm, dev_user)->ref);
}

static void collx_comm_dev_put(struct collx_dev_user *user)
{
	collx_comm_put(container_of(user, struct collx_comm, dev_user));
}

/* ---- progress and failure ---------------------------------------------- */

/*
 * A failed peer with nothing in flight fails the comm, naming whom it
 * names; in the connect phase only if it never was connected.
 */
static int collx_comm_check_peers(struct collx_comm *comm,
				  struct collx_blame *b)
{
	u32 i;
	int err;

	for (i = 0; i < comm->params.nranks; i++) {
		struct collx_peer *peer = READ_ONCE(comm->peers[i]);

		if (!peer)
			continue;
		err = collx_peer_failed(peer);
		if (!err || (!peer->ever_ready && !peer->active))
			continue;	/* a refused attempt: may come back */
		b->err = err;
		b->phase = peer->ever_ready ? COLLX_PHASE_NONE :
			   COLLX_PHASE_CONNECT;
		b->step = 0;
		collx_peer_blame(peer, b);
		return err;
	}
	return 0;
}

/* Tell every peer why we failed, then hang up; bounded by one wait. */
static void collx_comm_abort_peers(struct collx_comm *comm,
				   const struct collx_blame *b)
{
	unsigned long deadline;
	u32 i, rank = b->rank;
	bool *wait;

	int err = b->err;

	deadline = jiffies + msecs_to_jiffies(COLLX_ABORT_WAIT_MS);
	wait = kcalloc(comm->params.nranks, sizeof(*wait), GFP_KERNEL);
	/* Nobody to blame (destroy, a local error): the peers blame us. */
	if (rank == COLLX_RANK_NONE)
		rank = comm->params.rank;
	/* Our destroy is, to a peer, a rank that went away. */
	if (err == -ECANCELED)
		err = -ECONNRESET;
	for (i = 0; i < comm->params.nranks; i++) {
		struct collx_peer *peer = READ_ONCE(comm->peers[i]);

		if (peer && wait)
			wait[i] = collx_peer_abort(peer, err, rank, b->phase,
						   b->step);
	}
	for (i = 0; i < comm->params.nranks; i++) {
		struct collx_peer *peer = READ_ONCE(comm->peers[i]);

		if (peer)
			collx_peer_hangup(peer, wait && wait[i], deadline);
	}
	kfree(wait);
}

/* Tell every peer that asked whom our running group waits for (ask.c). */
static void collx_comm_answer(struct collx_comm *comm)
{
	struct collx_blame b = { .rank = COLLX_RANK_NONE };
	struct collx_tell t = {};
	u32 i;

	lockdep_assert_held(&comm->lock);
	WRITE_ONCE(comm->asked, false);
	t.kind = collx_engine_wait_kind(comm, &b);
	if (b.rank == COLLX_RANK_NONE)
		t.kind = -1;
	t.rank = t.kind < 0 ? COLLX_RANK_NONE : b.rank;
	t.phase = t.kind < 0 ? COLLX_PHASE_NONE : b.phase;
	t.step = t.kind < 0 ? 0 : b.step;
	if (comm->run)
		t.idle_ms = jiffies_to_msecs(jiffies - comm->progress_jiffies);
	for (i = 0; i < comm->params.nranks; i++) {
		struct collx_peer *peer = READ_ONCE(comm->peers[i]);

		if (peer && collx_peer_take_asked(peer))
			collx_peer_tell(peer, &t);
	}
}

/**
 * collx_comm_work() - run the engine; handle a failure
 * @work: the comm's work
 *
 * Context: collx_wq.
 */
void collx_comm_work(struct work_struct *work)
{
	struct collx_comm *comm = container_of(work, struct collx_comm, work);
	struct collx_blame b = {};
	bool abort = false;
	u32 timeout = comm->params.timeout_ms;
	int ret;
	u32 i;

	mutex_lock(&comm->lock);
	if (READ_ONCE(comm->state) == COLLX_COMM_READY) {
		ret = collx_engine_progress(comm, &b);
		if (ret > 0)
			queue_work(collx_wq, &comm->work);	/* yield */
		else if (ret < 0)
			collx_comm_fail(comm, &b);
		else if (!comm->run && list_empty(&comm->queue) &&
			 collx_comm_check_peers(comm, &b))
			collx_comm_fail(comm, &b);
		if (!comm->run && list_empty(&comm->queue))
			cancel_delayed_work(&comm->timeout_work);
		else if (!delayed_work_pending(&comm->timeout_work))
			mod_delayed_work(collx_wq, &comm->timeout_work,
					 msecs_to_jiffies(timeout));
		/* The answer to our question came: decide now. */
		if (comm->ask_rank != COLLX_RANK_NONE &&
		    READ_ONCE(comm->peers[comm->ask_rank]->told))
			mod_delayed_work(collx_wq, &comm->timeout_work, 0);
	}
	if (READ_ONCE(comm->asked))
		collx_comm_answer(comm);
	if (READ_ONCE(comm->state) == COLLX_COMM_ERROR && !comm->aborted) {
		collx_comm_failure(comm, &b);
		collx_comm_reblame(comm, &b);
		collx_engine_fail_all(comm, &b);
		comm->aborted = true;
		abort = true;
	}
	mutex_unlock(&comm->lock);

	if (abort) {
		/* A destroy is not a failure worth a line in the log. */
		if (b.err != -ECANCELED)
			pr_info("comm %u: rank %u failed: error %d, rank %d, phase %u step %u\n",
				comm->id, comm->params.rank, b.err,
				(int)b.rank, b.phase, b.step);
		collx_comm_abort_peers(comm, &b);
		/* The NIC lets go of failed ops' buffers now. */
		for (i = 0; i < comm->params.nranks; i++) {
			struct collx_peer *peer = READ_ONCE(comm->peers[i]);

			if (peer)
				collx_peer_drain(peer);
		}
		collx_op_release_held(comm);
	}
}

/* How long an asked peer has to answer (collx_comm_ask()), in jiffies. */
static unsigned long collx_comm_ask_grace(const struct collx_comm *comm)
{
	return msecs_to_jiffies(min_t(u32, COLLX_ASK_GRACE_MS,
				      comm->params.timeout_ms / 4));
}

/* What debugfs shows, into the kernel log: a timeout's evidence. */
static void collx_comm_log_state(struct collx_comm *comm)
{
	char line[COLLX_LINE_MAX];
	u32 i;

	lockdep_assert_held(&comm->lock);
	for (i = 0; i < comm->params.nranks; i++) {
		if (comm->peers[i]) {
			collx_peer_format(comm->peers[i], line, sizeof(line));
			pr_warn("comm %u: %s\n", comm->id, line);
		}
	}
	collx_engine_log_state(comm);
}

/*
 * The timeout expired, waiting for @b's rank: ask that peer whom it waits
 * for, and give it a grace to answer (ask.c).  With @comm->lock held.
 */
static bool collx_comm_ask(struct collx_comm *comm,
			   const struct collx_blame *b, int kind, u32 idle)
{
	struct collx_peer *peer;

	if (kind < 0 || b->rank >= comm->params.nranks ||
	    b->rank == comm->params.rank)
		return false;
	peer = comm->peers[b->rank];
	if (!peer || !collx_peer_ask(peer, idle))
		return false;
	comm->ask_rank = b->rank;
	comm->ask_stall = comm->progress_jiffies;
	comm->ask_jiffies = jiffies;
	mod_delayed_work(collx_wq, &comm->timeout_work,
			 collx_comm_ask_grace(comm));
	return true;
}

/*
 * Whom a timeout names: the peer we wait for, or, if that peer answered
 * that it waits for a third rank, that rank (behind a dead rank, its live
 * neighbours are as stuck as we are).  Logs why.  With @comm->lock held.
 */
static void collx_comm_timeout_blame(struct collx_comm *comm,
				     struct collx_blame *b, int kind,
				     u32 idle, bool told,
				     const struct collx_tell *t)
{
	u32 asked = comm->ask_rank, me = comm->params.rank;
	const char *why = collx_wait_kind_name(kind);

	if (!why)
		why = "nothing";
	comm->ask_rank = COLLX_RANK_NONE;
	if (told && t->rank != COLLX_RANK_NONE && t->rank != me &&
	    t->rank != asked) {
		pr_warn("comm %u: no progress for %u ms; waiting for rank %u (%s), which waits for rank %u (%s) for %u ms\n",
			comm->id, idle, asked, why, t->rank,
			collx_wait_kind_name(t->kind), t->idle_ms);
		b->rank = t->rank;
		b->phase = t->phase;
		b->step = t->step;
	} else if (told) {
		pr_warn("comm %u: no progress for %u ms; waiting for rank %u (%s), which waits for %s; it has %llu of our writes and wrote %llu to us\n",
			comm->id, idle, asked, why,
			t->rank == me ? "us" : "nothing", t->arrived,
			t->written);
	} else if (asked != COLLX_RANK_NONE) {
		pr_warn("comm %u: no progress for %u ms; waiting for rank %d (%s), which did not answer\n",
			comm->id, idle, (int)b->rank, why);
	} else {
		pr_warn("comm %u: no progress for %u ms; waiting for rank %d (%s)\n",
			comm->id, idle, (int)b->rank, why);
	}
}

/**
 * collx_comm_timeout_work() - fail the running group if it stopped
 * @work: the comm's timeout_work
 *
 * Names the peer the group waits for (collx_engine_waits_for()), or whom
 * that peer says it waits for (collx_comm_ask()).
 *
 * Context: collx_wq.
 */
void collx_comm_timeout_work(struct work_struct *work)
{
	struct collx_comm *comm = container_of(to_delayed_work(work),
					       struct collx_comm, timeout_work);
	unsigned long limit = msecs_to_jiffies(comm->params.timeout_ms);
	struct collx_blame b = {
		.err = -ETIMEDOUT,
		.rank = COLLX_RANK_NONE,
	};
	struct collx_tell t = {};
	unsigned long end;
	bool told = false;
	int kind;
	u32 idle;

	mutex_lock(&comm->lock);
	if (!comm->run || READ_ONCE(comm->state) != COLLX_COMM_READY) {
		mutex_unlock(&comm->lock);
		return;
	}
	if (time_before(jiffies, comm->progress_jiffies + limit)) {
		mod_delayed_work(collx_wq, &comm->timeout_work,
				 comm->progress_jiffies + limit - jiffies);
		mutex_unlock(&comm->lock);
		return;
	}
	kind = collx_engine_wait_kind(comm, &b);
	b.err = -ETIMEDOUT;
	idle = jiffies_to_msecs(jiffies - comm->progress_jiffies);
	/* A question asked before the last progress was about another stall. */
	if (comm->ask_rank != COLLX_RANK_NONE &&
	    comm->ask_stall != comm->progress_jiffies)
		comm->ask_rank = COLLX_RANK_NONE;
	if (comm->ask_rank == COLLX_RANK_NONE) {
		if (collx_comm_ask(comm, &b, kind, idle)) {
			mutex_unlock(&comm->lock);
			return;
		}
	} else {
		told = collx_peer_take_tell(comm->peers[comm->ask_rank], &t);
		end = comm->ask_jiffies + collx_comm_ask_grace(comm);
		if (!told && time_before(jiffies, end)) {
			mod_delayed_work(collx_wq, &comm->timeout_work,
					 end - jiffies);
			mutex_unlock(&comm->lock);
			return;
		}
	}
	collx_comm_timeout_blame(comm, &b, kind, idle, told, &t);
	collx_comm_log_state(comm);
	mutex_unlock(&comm->lock);
	collx_comm_fail(comm, &b);
}

/* ---- create -------------------------------------------------------- */

static int collx_comm_copy_addrs(struct collx_comm *comm,
				 const struct collx_comm_create *cmd)
{
	const u8 __user *uaddrs = u64_to_user_ptr(cmd->addrs);
	struct collx_rank_addr ra;
	struct sockaddr_in *sin;
	u32 i;
	int ret;

	if (cmd->addr_size < sizeof(ra) || cmd->addr_size > COLLX_MAX_ADDR_SIZE)
		return -EINVAL;
	comm->params.addrs = kcalloc(cmd->nranks, sizeof(*comm->params.addrs),
				     GFP_KERNEL_ACCOUNT);
	if (!comm->params.addrs)
		return -ENOMEM;
	for (i = 0; i < cmd->nranks; i++) {
		ret = copy_struct_from_user(&ra, sizeof(ra),
					    uaddrs + (size_t)i * cmd->addr_size,
					    cmd->addr_size);
		if (ret)
			return ret;
		if (ra.__reserved)
			return -EINVAL;
		if (ra.family == AF_INET6)
			return -EOPNOTSUPP;
		if (ra.family != AF_INET ||
		    collx_uapi_check_zero(ra.addr + 4, sizeof(ra.addr) - 4))
			return -EINVAL;
		sin = (struct sockaddr_in *)&comm->params.addrs[i];
		sin->sin_family = AF_INET;
		sin->sin_port = htons(ra.port ? ra.port : collx_listen_port);
		memcpy(&sin->sin_addr.s_addr, ra.addr, 4);
	}
	return 0;
}

/* Mark @r wanted in @set, unless it is -1 or this rank. */
static void collx_comm_add(unsigned long *set, u32 self, s32 r)
{
	if (r >= 0 && (u32)r != self)
		__set_bit(r, set);
}

/* The peers of the schedules most collectives use: connected at create. */
static void collx_comm_default_peers(u32 n, u32 r, unsigned long *set)
{
	struct collx_tree_node t;
	struct collx_rd_info rd;
	u32 k, i;

	collx_comm_add(set, r, collx_ring_next(n, r));
	collx_comm_add(set, r, collx_ring_prev(n, r));
	if (!collx_rd_info(n, r, &rd)) {
		collx_comm_add(set, r, rd.fold_peer);
		for (k = 0; k < rd.nsteps; k++)
			collx_comm_add(set, r, collx_rd_peer(n, r, k));
	}
	for (k = 0; k < 2; k++) {
		if (collx_dtree(n, r, k, &t))
			continue;
		collx_comm_add(set, r, t.parent);
		for (i = 0; i < t.nchildren; i++)
			collx_comm_add(set, r, t.child[i]);
	}
}

static bool collx_comm_connect_done(struct collx_comm *comm,
				    const unsigned long *set)
{
	u32 r;

	if (READ_ONCE(comm->state) != COLLX_COMM_CONNECTING)
		return true;
	for_each_set_bit(r, set, comm->params.nranks) {
		struct collx_peer *peer = comm->peers[r];
		enum collx_peer_state st = READ_ONCE(peer->state);

		if (st == COLLX_PEER_FAILED &&
		    (peer->active || peer->ever_ready))
			return true;
		if (st != COLLX_PEER_READY)
			return false;
	}
	return true;
}

/* A failed connect's evidence: each connection that did not come up. */
static void collx_comm_log_unready(struct collx_comm *comm,
				   const unsigned long *set)
{
	char line[COLLX_LINE_MAX];
	u32 r;

	for_each_set_bit(r, set, comm->params.nranks) {
		struct collx_peer *peer = READ_ONCE(comm->peers[r]);

		/* None if making it failed (collx_comm_connect()'s ENOMEM) */
		if (!peer || collx_peer_ready(peer))
			continue;
		collx_peer_format(peer, line, sizeof(line));
		pr_info("comm %u: %s\n", comm->id, line);
	}
}

/*
 * Connect the default peers and wait for them until @deadline, which the
 * create set when it began: what came before (the listener, starting each
 * peer) is spent from the same timeout.  On failure say why and whom to
 * blame: a peer that never connected is the answer to "who is missing",
 * so it is named before one whose connection was reset.
 */
static int collx_comm_connect(struct collx_comm *comm, unsigned long *set,
			      unsigned long deadline, struct collx_blame *b)
{
	struct collx_peer *peer;
	long left;
	u32 r;

	b->phase = COLLX_PHASE_CONNECT;
	for_each_set_bit(r, set, comm->params.nranks) {
		if (!collx_comm_peer(comm, r, true)) {
			b->err = -ENOMEM;
			return b->err;
		}
	}
	/* At least a tick: the peers that are up already still count. */
	left = max_t(long, 1, (long)(deadline - jiffies));
	left = wait_event_interruptible_timeout(comm->connected,
						collx_comm_connect_done(comm,
									set),
						left);
	if (left < 0) {
		b->err = left;
		return b->err;
	}
	if (READ_ONCE(comm->state) == COLLX_COMM_ERROR) {
		collx_comm_failure(comm, b);
		return b->err;
	}
	for_each_set_bit(r, set, comm->params.nranks) {
		peer = comm->peers[r];
		if (READ_ONCE(peer->state) != COLLX_PEER_READY &&
		    READ_ONCE(peer->state) != COLLX_PEER_FAILED) {
			b->rank = r;
			b->err = READ_ONCE(peer->err) == -EHOSTUNREACH ?
				 -EHOSTUNREACH : -ETIMEDOUT;
			return b->err;
		}
	}
	for_each_set_bit(r, set, comm->params.nranks) {
		peer = comm->peers[r];
		if (READ_ONCE(peer->state) == COLLX_PEER_FAILED &&
		    READ_ONCE(peer->err) != -ECONNRESET) {
			b->err = READ_ONCE(peer->err);
			collx_peer_blame(peer, b);
			return b->err;
		}
	}
	for_each_set_bit(r, set, comm->params.nranks) {
		peer = comm->peers[r];
		if (READ_ONCE(peer->state) == COLLX_PEER_FAILED) {
			b->err = -ECONNRESET;
			collx_peer_blame(peer, b);
			return b->err;
		}
	}
	return 0;
}

static int collx_comm_init(struct collx_comm *comm,
			   const struct collx_comm_create *cmd)
{
	struct collx_conn_params *p = &comm->params;
	int ret;

	kref_init(&comm->ref);
	spin_lock_init(&comm->elock);
	init_waitqueue_head(&comm->connected);
	mutex_init(&comm->lock);
	mutex_init(&comm->teardown_lock);
	mutex_init(&comm->peers_lock);
	INIT_LIST_HEAD(&comm->queue);
	INIT_LIST_HEAD(&comm->held);
	INIT_LIST_HEAD(&comm->dev_user.entry);
	INIT_LIST_HEAD(&comm->cm.list);
	INIT_WORK(&comm->work, collx_comm_work);
	INIT_DELAYED_WORK(&comm->timeout_work, collx_comm_timeout_work);
	comm->ask_rank = COLLX_RANK_NONE;
	comm->state = COLLX_COMM_CONNECTING;
	comm->failed_rank = COLLX_RANK_NONE;
	comm->dev_user.removed = collx_comm_dev_removed;
	comm->dev_user.get = collx_comm_dev_get;
	comm->dev_user.put = collx_comm_dev_put;
	comm->cm.params = p;
	comm->cm.accept = collx_comm_accept;
	comm->cm.put = collx_comm_entry_put;

	p->log_id = comm->id;
	p->rank = cmd->rank;
	p->nranks = cmd->nranks;
	p->tos = cmd->tos;
	p->timeout_ms = cmd->timeout_ms ? cmd->timeout_ms :
			min(READ_ONCE(collx_comm_timeout_ms),
			    COLLX_MAX_TIMEOUT_MS);
	p->net = get_net(current->nsproxy->net_ns);
	p->memlock_mm = current->mm;
	mmgrab(p->memlock_mm);
	p->memlock_limit = collx_memlock_limit();
	memcpy(p->secret, cmd->secret, sizeof(p->secret));
	p->shash = collx_auth_alloc(p->secret);
	if (IS_ERR(p->shash)) {
		ret = PTR_ERR(p->shash);
		p->shash = NULL;
		return ret;
	}
	ret = collx_auth_lookup(p->shash, cmd->comm_key, cmd->nranks,
				&p->lookup);
	if (ret)
		return ret;
	comm->peers = kvcalloc(cmd->nranks, sizeof(*comm->peers),
			       GFP_KERNEL_ACCOUNT);
	if (!comm->peers)
		return -ENOMEM;
	return collx_comm_copy_addrs(comm, cmd);
}

/**
 * collx_comm_create() - COLLX_IOC_COMM_CREATE
 * @cf: the file
 * @cmd: the request; comm_id, global_id and failed_rank are filled in
 *
 * Context: process context; sleeps until connected, failed, timed out or
 * interrupted.
 * Return: 0 or a negative errno (see the uapi header).
 */
int collx_comm_create(struct collx_file *cf, struct collx_comm_create *cmd)
{
	struct collx_blame b = { .rank = COLLX_RANK_NONE };
	unsigned long *set = NULL, deadline;
	struct collx_comm *comm;
	u32 handle;
	int ret;

	cmd->failed_rank = COLLX_RANK_NONE;
	if (cmd->flags)
		return -EOPNOTSUPP;
	ret = collx_uapi_check_ranks(cmd->rank, cmd->nranks, COLLX_MAX_RANKS);
	if (ret)
		return ret;
	if (!cmd->comm_key || !cmd->addrs || cmd->tos > 255 ||
	    cmd->timeout_ms > COLLX_MAX_TIMEOUT_MS)
		return -EINVAL;

	comm = kzalloc(sizeof(*comm), GFP_KERNEL_ACCOUNT);
	if (!comm)
		return -ENOMEM;
	ret = ida_alloc(&collx_comm_ida, GFP_KERNEL);
	if (ret < 0) {
		kfree(comm);
		return ret;
	}
	comm->id = ret;
	comm->cf = cf;
	atomic_inc(&collx_stats.comms);
	ret = collx_comm_init(comm, cmd);
	if (ret)
		goto out_put;
	/* The uapi's slack covers the hang-up's wait for an ABORT's ack. */
	BUILD_BUG_ON(COLLX_ABORT_WAIT_MS + 500 > COLLX_CREATE_SLACK_MS);
	deadline = jiffies + msecs_to_jiffies(comm->params.timeout_ms);

	ret = collx_obj_reserve(&cf->comms, &cf->ncomms, COLLX_MAX_COMMS_PER_FD,
				&handle, NULL, -EMFILE);
	if (ret)
		goto out_put;
	comm->handle = handle;

	if (cmd->nranks > 1) {
		ret = collx_cm_listen_get(comm->params.net);
		if (ret)
			goto out_abort;
		comm->listening = true;
		ret = collx_cm_register(&comm->cm);
		if (ret)
			goto out_abort;
	}
	comm->debugfs = collx_debugfs_comm_add(comm->id, comm, collx_comm_show);

	if (cmd->nranks > 1) {
		set = bitmap_zalloc(cmd->nranks, GFP_KERNEL);
		ret = -ENOMEM;
		if (!set)
			goto out_teardown;
		collx_comm_default_peers(cmd->nranks, cmd->rank, set);
		ret = collx_comm_connect(comm, set, deadline, &b);
		if (ret) {
			pr_info("comm %u: rank %u of %u could not connect: %d, rank %d\n",
				comm->id, cmd->rank, cmd->nranks, ret,
				(int)b.rank);
			collx_comm_log_unready(comm, set);
			goto out_teardown;
		}
	}

	spin_lock_irq(&comm->elock);
	if (comm->state == COLLX_COMM_CONNECTING)
		comm->state = COLLX_COMM_READY;
	else
		ret = comm->err;
	b.rank = comm->failed_rank;
	spin_unlock_irq(&comm->elock);
	if (ret)
		goto out_teardown;
	bitmap_free(set);

	cmd->comm_id = handle;
	cmd->global_id = comm->id;
	kref_get(&comm->ref);	/* the table's */
	collx_obj_finalize(&cf->comms, handle, comm);
	/* Anything that arrived while connecting. */
	queue_work(collx_wq, &comm->work);
	collx_comm_put(comm);
	return 0;

out_teardown:
	bitmap_free(set);
	cmd->failed_rank = b.rank;
	collx_comm_teardown(comm, ret);
out_abort:
	collx_obj_abort(&cf->comms, &cf->ncomms, handle);
out_put:
	collx_comm_put(comm);
	return ret;
}

/**
 * collx_comm_query() - COLLX_IOC_COMM_QUERY
 * @cf: the file
 * @cmd: the request; the out fields are filled in
 *
 * Context: process context.
 * Return: 0, -ENOENT or -EINVAL.
 */
int collx_comm_query(struct collx_file *cf, struct collx_comm_query *cmd)
{
	struct collx_comm *comm;
	struct collx_blame b;

	if (cmd->flags)
		return -EINVAL;
	comm = collx_comm_get_handle(cf, cmd->comm_id);
	if (!comm)
		return -ENOENT;
	collx_comm_failure(comm, &b);
	cmd->state = READ_ONCE(comm->state) == COLLX_COMM_READY ?
		     COLLX_COMM_STATE_READY : COLLX_COMM_STATE_ERROR;
	cmd->error = cmd->state == COLLX_COMM_STATE_READY ? 0 : b.err;
	cmd->failed_rank = cmd->error ? b.rank : COLLX_RANK_NONE;
	cmd->phase = cmd->error ? b.phase : COLLX_PHASE_NONE;
	cmd->step = cmd->error ? b.step : 0;
	cmd->global_id = comm->id;
	cmd->ops_queued = READ_ONCE(comm->npending);
	collx_comm_put(comm);
	return 0;
}

/* ---- teardown ------------------------------------------------------ */

/**
 * collx_comm_teardown() - fail a communicator and release its RDMA side
 * @comm: the communicator
 * @err: errno for ops still pending (-ECANCELED on destroy, -ENODEV on
 *	device removal), unless the comm already failed with its own
 *
 * Idempotent: the second caller finds the comm dead.
 *
 * Context: process context; not from an rdma_cm handler.
 */
void collx_comm_teardown(struct collx_comm *comm, int err)
{
	struct collx_blame b = { .err = err, .rank = COLLX_RANK_NONE };
	u32 i;

	mutex_lock(&comm->teardown_lock);
	if (READ_ONCE(comm->state) == COLLX_COMM_DEAD) {
		mutex_unlock(&comm->teardown_lock);
		return;
	}
	collx_cm_unregister(&comm->cm);
	collx_comm_fail(comm, &b);
	/* Runs the failure path (ops completed, ABORTs, hang-ups) now. */
	flush_work(&comm->work);
	collx_comm_work(&comm->work);

	mutex_lock(&comm->peers_lock);
	comm->closing = true;
	mutex_unlock(&comm->peers_lock);
	for (i = 0; i < comm->params.nranks; i++)
		if (comm->peers[i])
			collx_peer_release(comm->peers[i]);
	/* The QPs are drained: what failed ops kept for the NIC can go. */
	collx_op_release_held(comm);
	cancel_delayed_work_sync(&comm->timeout_work);
	cancel_work_sync(&comm->work);
	collx_device_unbind(&comm->dev_user);
	mutex_lock(&comm->lock);
	WRITE_ONCE(comm->dev, NULL);
	mutex_unlock(&comm->lock);
	collx_debugfs_comm_remove(comm->debugfs);
	comm->debugfs = NULL;

	spin_lock_irq(&comm->elock);
	comm->state = COLLX_COMM_DEAD;
	spin_unlock_irq(&comm->elock);
	mutex_unlock(&comm->teardown_lock);
}

/**
 * collx_comm_destroy() - COLLX_IOC_COMM_DESTROY
 * @cf: the file
 * @handle: comm_id
 *
 * Context: process context.
 * Return: 0 or -ENOENT.
 */
int collx_comm_destroy(struct collx_file *cf, u32 handle)
{
	struct collx_comm *comm = collx_obj_remove(&cf->comms, &cf->ncomms,
						   handle);

	if (!comm)
		return -ENOENT;
	collx_comm_teardown(comm, -ECANCELED);
	collx_comm_put(comm);
	return 0;
}

/**
 * collx_comm_release_all() - destroy every communicator of a closing file
 * @cf: the file
 *
 * Context: process context (release).
 */
void collx_comm_release_all(struct collx_file *cf)
{
	struct collx_comm *comm;
	unsigned long handle;

	xa_for_each(&cf->comms, handle, comm)
		collx_comm_destroy(cf, handle);
}

/* ---- debugfs ------------------------------------------------------- */

static const char *collx_comm_state_name(enum collx_comm_state state)
{
	static const char * const names[] = {
		[COLLX_COMM_CONNECTING] = "connecting",
		[COLLX_COMM_READY] = "ready",
		[COLLX_COMM_ERROR] = "error",
		[COLLX_COMM_DEAD] = "dead",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

/**
 * collx_comm_show() - /sys/kernel/debug/collx/<comm>/state
 * @m: the seq_file
 * @data: the comm
 *
 * Never shows the comm's key or secret.
 *
 * Context: process context; takes @comm->lock.
 * Return: 0.
 */
int collx_comm_show(struct seq_file *m, void *data)
{
	struct collx_comm *comm = data;
	char line[COLLX_LINE_MAX];
	u32 i;

	mutex_lock(&comm->lock);
	seq_printf(m, "comm %u rank %u/%u state %s timeout %u ms device %s tos %u\n",
		   comm->id, comm->params.rank, comm->params.nranks,
		   collx_comm_state_name(READ_ONCE(comm->state)),
		   comm->params.timeout_ms, collx_device_name(comm->dev),
		   comm->params.tos);
	if (READ_ONCE(comm->state) == COLLX_COMM_ERROR)
		seq_printf(m, "error %d, rank %d, phase %u step %u\n",
			   comm->err, (int)comm->failed_rank,
			   comm->failed_phase, comm->failed_step);
	for (i = 0; i < comm->params.nranks; i++) {
		if (comm->peers[i]) {
			collx_peer_format(comm->peers[i], line, sizeof(line));
			seq_printf(m, "%s\n", line);
		}
	}
	collx_engine_describe(comm, m);
	mutex_unlock(&comm->lock);
	return 0;
}
