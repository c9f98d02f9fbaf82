// SPDX-License-Identifier: GPL-2.0
/*
 * collx: communicators.
 *
 * A communicator knows every rank's address and keeps two connections:
 * to its ring successor (made here) and from its predecessor (accepted by
 * cm.c).  It lives in the fd's table and, while it can accept, in the
 * module's registry where incoming connections find it by (key, rank).
 *
 * Failure is a state, not a hang: whatever fails the comm (a timeout, a
 * broken connection, a removed device, destroy) records the errno and the
 * peer to blame, completes every pending op with them, and disconnects so
 * that the neighbours learn at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "collx_loc.h"
#include "core/uapi_check.h"

static LIST_HEAD(collx_comm_registry);
static DEFINE_MUTEX(collx_comm_registry_lock);
static DEFINE_IDA(collx_comm_ida);

static void collx_comm_free(struct kref *ref)
{
	struct collx_comm *comm = container_of(ref, struct collx_comm, ref);

	ida_free(&collx_comm_ida, comm->id);
	kfree(comm->addrs);
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
 * collx_comm_find() - the communicator an incoming connection is for
 * @key: its comm_key
 * @rank: the rank the connection wants
 *
 * Context: process context; takes the registry lock.
 * Return: the communicator with a reference held, or NULL.
 */
struct collx_comm *collx_comm_find(u64 key, u32 rank)
{
	struct collx_comm *comm, *found = NULL;

	mutex_lock(&collx_comm_registry_lock);
	list_for_each_entry(comm, &collx_comm_registry, registry) {
		if (comm->key == key && comm->rank == rank) {
			kref_get(&comm->ref);
			found = comm;
			break;
		}
	}
	mutex_unlock(&collx_comm_registry_lock);
	return found;
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
 * @err: negative errno every pending op completes with
 * @rank: the peer to blame, or COLLX_RANK_NONE
 *
 * The first failure wins.  The engine completes the ops and disconnects.
 *
 * Context: any (CQ and CM handlers, timers).
 */
void collx_comm_fail(struct collx_comm *comm, int err, u32 rank)
{
	unsigned long flags;
	bool first = false;

	spin_lock_irqsave(&comm->elock, flags);
	if (comm->state == COLLX_COMM_CONNECTING ||
	    comm->state == COLLX_COMM_READY) {
		comm->state = COLLX_COMM_ERROR;
		comm->err = err;
		comm->failed_rank = rank;
		first = true;
	}
	spin_unlock_irqrestore(&comm->elock, flags);
	if (!first)
		return;
	wake_up_all(&comm->connected);
	queue_work(collx_wq, &comm->work);
}

/* Make @comm findable by incoming connections; its (key, rank) is unique. */
static int collx_comm_register(struct collx_comm *comm)
{
	struct collx_comm *other;
	int ret = 0;

	mutex_lock(&collx_comm_registry_lock);
	list_for_each_entry(other, &collx_comm_registry, registry) {
		if (other->key == comm->key && other->rank == comm->rank) {
			ret = -EEXIST;
			break;
		}
	}
	if (!ret)
		list_add_tail(&comm->registry, &collx_comm_registry);
	mutex_unlock(&collx_comm_registry_lock);
	return ret;
}

static int collx_comm_copy_addrs(struct collx_comm *comm,
				 const struct collx_comm_create *cmd)
{
	const u8 __user *uaddrs = u64_to_user_ptr(cmd->addrs);
	struct collx_rank_addr ra;
	struct sockaddr_in *sin;
	u32 i;
	int ret;

	if (cmd->addr_size < sizeof(ra))
		return -EINVAL;
	comm->addrs = kcalloc(cmd->nranks, sizeof(*comm->addrs), GFP_KERNEL);
	if (!comm->addrs)
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
		sin = (struct sockaddr_in *)&comm->addrs[i];
		sin->sin_family = AF_INET;
		sin->sin_port = htons(ra.port ? ra.port : collx_listen_port);
		memcpy(&sin->sin_addr.s_addr, ra.addr, 4);
	}
	return 0;
}

static bool collx_peer_settled(struct collx_peer *peer)
{
	enum collx_peer_state state = READ_ONCE(peer->state);

	return state == COLLX_PEER_READY || state == COLLX_PEER_FAILED;
}

/* Failed for a reason of its own (refused, unreachable), not a reset. */
static bool collx_peer_refused(struct collx_peer *peer)
{
	return READ_ONCE(peer->state) == COLLX_PEER_FAILED &&
	       READ_ONCE(peer->err) != -ECONNRESET;
}

static bool collx_comm_connect_done(struct collx_comm *comm)
{
	if (READ_ONCE(comm->state) != COLLX_COMM_CONNECTING)
		return true;
	if (collx_peer_refused(&comm->next) || collx_peer_refused(&comm->prev))
		return true;
	return collx_peer_settled(&comm->next) &&
	       collx_peer_settled(&comm->prev);
}

/*
 * Wait for both connections.  On failure set the errno and the rank to
 * blame.  A neighbour that never connected is the answer to "who is
 * missing", so it is named before one whose connection was reset (which
 * may only have given up on the missing rank itself).
 */
static int collx_comm_wait_connected(struct collx_comm *comm, u32 *rank)
{
	long left = msecs_to_jiffies(comm->timeout_ms);
	struct collx_peer *peers[] = { &comm->next, &comm->prev };
	unsigned int i;

	left = wait_event_interruptible_timeout(comm->connected,
						collx_comm_connect_done(comm),
						left);
	if (left < 0) {
		*rank = COLLX_RANK_NONE;
		return -EINTR;
	}
	if (comm->state == COLLX_COMM_ERROR) {
		*rank = comm->failed_rank;
		return comm->err;
	}
	for (i = 0; i < ARRAY_SIZE(peers); i++) {
		if (collx_peer_refused(peers[i])) {
			*rank = peers[i]->rank;
			return peers[i]->err;
		}
	}
	for (i = 0; i < ARRAY_SIZE(peers); i++) {
		if (!collx_peer_settled(peers[i])) {
			*rank = peers[i]->rank;
			return peers[i]->err == -EHOSTUNREACH ? -EHOSTUNREACH :
								 -ETIMEDOUT;
		}
	}
	for (i = 0; i < ARRAY_SIZE(peers); i++) {
		if (READ_ONCE(peers[i]->state) == COLLX_PEER_FAILED) {
			*rank = peers[i]->rank;
			return -ECONNRESET;
		}
	}
	return 0;
}

/**
 * collx_comm_create() - COLLX_IOC_COMM_CREATE
 * @cf: the file
 * @cmd: the request; comm_id and failed_rank are filled in
 *
 * Context: process context; sleeps until connected, failed, timed out or
 * interrupted.
 * Return: 0 or a negative errno (see the uapi header).
 */
int collx_comm_create(struct collx_file *cf, struct collx_comm_create *cmd)
{
	struct collx_comm *comm;
	u32 rank = COLLX_RANK_NONE;
	int ret;

	cmd->failed_rank = COLLX_RANK_NONE;
	if (cmd->flags)
		return -EINVAL;
	ret = collx_uapi_check_ranks(cmd->rank, cmd->nranks, COLLX_MAX_RANKS);
	if (ret)
		return ret;
	if (!cmd->comm_key || !cmd->addrs)
		return -EINVAL;

	comm = kzalloc(sizeof(*comm), GFP_KERNEL);
	if (!comm)
		return -ENOMEM;
	ret = ida_alloc(&collx_comm_ida, GFP_KERNEL);
	if (ret < 0) {
		kfree(comm);
		return ret;
	}
	comm->id = ret;
	atomic_inc(&collx_stats.comms);
	kref_init(&comm->ref);
	comm->cf = cf;
	comm->key = cmd->comm_key;
	comm->rank = cmd->rank;
	comm->nranks = cmd->nranks;
	comm->timeout_ms = cmd->timeout_ms ? cmd->timeout_ms :
			   READ_ONCE(collx_comm_timeout_ms);
	comm->state = COLLX_COMM_CONNECTING;
	comm->failed_rank = COLLX_RANK_NONE;
	init_waitqueue_head(&comm->connected);
	spin_lock_init(&comm->elock);
	mutex_init(&comm->lock);
	mutex_init(&comm->teardown_lock);
	INIT_LIST_HEAD(&comm->ops);
	INIT_LIST_HEAD(&comm->held);
	INIT_LIST_HEAD(&comm->dev_entry);
	INIT_LIST_HEAD(&comm->registry);
	INIT_WORK(&comm->work, collx_engine_work);
	INIT_DELAYED_WORK(&comm->timeout_work, collx_engine_timeout);
	collx_peer_init(&comm->next, comm, (cmd->rank + 1) % cmd->nranks, true);
	collx_peer_init(&comm->prev, comm,
			(cmd->rank + cmd->nranks - 1) % cmd->nranks, false);

	ret = collx_comm_copy_addrs(comm, cmd);
	if (ret)
		goto out_put;

	ret = xa_alloc(&cf->comms, &comm->handle, comm, xa_limit_31b,
		       GFP_KERNEL);
	if (ret)
		goto out_put;

	ret = collx_comm_register(comm);
	if (ret)
		goto out_erase;
	collx_debugfs_comm_add(comm);

	if (comm->nranks > 1) {
		comm->connect_deadline = jiffies +
					 msecs_to_jiffies(comm->timeout_ms);
		mutex_lock(&comm->next.mutex);
		ret = collx_cm_connect(&comm->next);
		mutex_unlock(&comm->next.mutex);
		if (!ret)
			ret = collx_comm_wait_connected(comm, &rank);
		else
			rank = comm->next.rank;
		if (ret) {
			pr_info("comm %u: rank %u of %u could not connect: %d, rank %d (next %u %s after %u attempts, prev %u %s)\n",
				comm->id, comm->rank, comm->nranks, ret,
				(int)rank, comm->next.rank,
				collx_peer_state_name(comm->next.state),
				comm->next.attempts, comm->prev.rank,
				collx_peer_state_name(comm->prev.state));
			goto out_teardown;
		}
	}

	spin_lock_irq(&comm->elock);
	if (comm->state == COLLX_COMM_CONNECTING)
		comm->state = COLLX_COMM_READY;
	else
		ret = comm->err;
	spin_unlock_irq(&comm->elock);
	if (ret) {
		rank = comm->failed_rank;
		goto out_teardown;
	}
	cmd->comm_id = comm->handle;
	pr_debug("comm %u: rank %u of %u ready\n", comm->id, comm->rank,
		 comm->nranks);
	return 0;

out_teardown:
	cmd->failed_rank = rank;
	collx_comm_teardown(comm, ret);
out_erase:
	xa_erase(&cf->comms, comm->handle);
out_put:
	collx_comm_put(comm);
	return ret;
}

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
	mutex_lock(&comm->teardown_lock);
	if (comm->state == COLLX_COMM_DEAD) {
		mutex_unlock(&comm->teardown_lock);
		return;
	}

	mutex_lock(&collx_comm_registry_lock);
	list_del_init(&comm->registry);
	mutex_unlock(&collx_comm_registry_lock);

	collx_comm_fail(comm, err, COLLX_RANK_NONE);
	mutex_lock(&comm->lock);
	collx_engine_fail_ops(comm, comm->err, comm->failed_rank);
	mutex_unlock(&comm->lock);

	collx_peer_release(&comm->next);
	collx_peer_release(&comm->prev);
	collx_op_release_held(comm);
	cancel_delayed_work_sync(&comm->timeout_work);
	cancel_work_sync(&comm->work);
	collx_device_unbind(comm);
	collx_debugfs_comm_remove(comm);

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
	struct collx_comm *comm = xa_erase(&cf->comms, handle);

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
