// SPDX-License-Identifier: GPL-2.0
/*
 * collx: collectives as seen by the fd: submit, completion records, wait.
 *
 * An op is owned by the fd from submit until its record is consumed, by
 * read() or COLLX_IOC_WAIT, whichever takes it off the done list first.
 * A waiter holds its own reference while it sleeps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "collx_loc.h"
#include "core/reduce.h"
#include "core/uapi_check.h"
#include "trace.h"

/* Largest buffer a collective may use, a bound well below any overflow. */
#define COLLX_MAX_BYTES		BIT_ULL(40)

static void collx_op_free(struct collx_op *op)
{
	kfree(op);
}

static void collx_op_release(struct kref *ref)
{
	collx_op_free(container_of(ref, struct collx_op, ref));
}

static void collx_op_put(struct collx_op *op)
{
	kref_put(&op->ref, collx_op_release);
}

static void collx_op_release_bufs(struct collx_op *op)
{
	collx_dmap_unmap(&op->dmap);
	if (!op->inplace)
		collx_ubuf_unmap(&op->send);
	collx_ubuf_unmap(&op->recv);
}

/**
 * collx_op_release_held() - release what failed ops kept for the NIC
 * @comm: the comm, whose connections are drained and closed
 *
 * Context: process context (teardown).
 */
void collx_op_release_held(struct collx_comm *comm)
{
	struct collx_op *op, *tmp;

	mutex_lock(&comm->lock);
	list_for_each_entry_safe(op, tmp, &comm->held, entry) {
		list_del_init(&op->entry);
		collx_op_release_bufs(op);
		collx_op_put(op);
	}
	mutex_unlock(&comm->lock);
}

/**
 * collx_op_submit() - COLLX_IOC_SUBMIT
 * @cf: the file
 * @cmd: the request; op_id is filled in
 *
 * Context: process context of the submitting task (pins its pages).
 * Return: 0 or a negative errno (see the uapi header).
 */
int collx_op_submit(struct collx_file *cf, struct collx_submit *cmd)
{
	struct collx_comm *comm;
	struct collx_op *op;
	u64 bytes;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (cmd->coll != COLLX_COLL_ALLREDUCE)
		return -EOPNOTSUPP;
	ret = collx_uapi_check_dtype(cmd->dtype);
	if (!ret)
		ret = collx_uapi_check_redop(cmd->redop);
	if (ret)
		return ret;
	if (cmd->root)
		return -EINVAL;
	ret = collx_uapi_buf_bytes(cmd->count, cmd->dtype, 1, COLLX_MAX_BYTES,
				   &bytes);
	if (ret)
		return ret;
	if (!bytes || !cmd->sendbuf || !cmd->recvbuf)
		return -EINVAL;
	ret = collx_uapi_check_range(cmd->sendbuf, bytes, TASK_SIZE);
	if (!ret)
		ret = collx_uapi_check_range(cmd->recvbuf, bytes, TASK_SIZE);
	if (ret)
		return ret;

	comm = collx_comm_get_handle(cf, cmd->comm_id);
	if (!comm)
		return -ENOENT;
	if (READ_ONCE(comm->state) != COLLX_COMM_READY) {
		ret = -EPIPE;
		goto out_put_comm;
	}

	op = kzalloc(sizeof(*op), GFP_KERNEL);
	if (!op) {
		ret = -ENOMEM;
		goto out_put_comm;
	}
	kref_init(&op->ref);
	op->cf = cf;
	op->coll = cmd->coll;
	op->dtype = cmd->dtype;
	op->redop = cmd->redop;
	op->count = cmd->count;
	op->esize = collx_dtype_size(cmd->dtype);
	op->inplace = cmd->sendbuf == cmd->recvbuf;
	INIT_LIST_HEAD(&op->entry);
	INIT_LIST_HEAD(&op->done_entry);

	ret = collx_ubuf_map(cf, &op->recv, cmd->recvbuf, bytes, true);
	if (ret)
		goto out_free;
	if (!op->inplace) {
		ret = collx_ubuf_map(cf, &op->send, cmd->sendbuf, bytes, false);
		if (ret)
			goto out_unmap_recv;
	} else {
		op->send.kva = op->recv.kva;
	}

	mutex_lock(&cf->lock);
	op->id = ++cf->next_op_id;
	ret = xa_insert(&cf->ops, op->id, op, GFP_KERNEL);
	mutex_unlock(&cf->lock);
	if (ret)
		goto out_unmap_send;

	op->cmpl.op_id = op->id;
	op->cmpl.comm_id = comm->handle;
	op->cmpl.bytes = bytes;
	op->cmpl.failed_rank = COLLX_RANK_NONE;
	atomic_inc(&collx_stats.ops);
	trace_op_submit(comm->id, op->id, op->coll, op->dtype, op->redop,
			op->count, comm->rank, comm->nranks);

	mutex_lock(&comm->lock);
	if (READ_ONCE(comm->state) != COLLX_COMM_READY) {
		mutex_unlock(&comm->lock);
		xa_erase(&cf->ops, op->id);
		atomic_dec(&collx_stats.ops);
		ret = -EPIPE;
		goto out_unmap_send;
	}
	op->comm = comm;
	list_add_tail(&op->entry, &comm->ops);
	comm->nops++;
	mutex_unlock(&comm->lock);
	queue_work(collx_wq, &comm->work);

	cmd->op_id = op->id;
	collx_comm_put(comm);
	return 0;

out_unmap_send:
	if (!op->inplace)
		collx_ubuf_unmap(&op->send);
out_unmap_recv:
	collx_ubuf_unmap(&op->recv);
out_free:
	collx_op_free(op);
out_put_comm:
	collx_comm_put(comm);
	return ret;
}

/**
 * collx_op_complete() - end an op and queue its record
 * @op: the op, first on its comm's list, with the comm's lock held
 * @status: 0 or a negative errno
 * @rank: the peer to blame, or COLLX_RANK_NONE
 * @phase: enum collx_phase at the end
 * @step: step within @phase
 *
 * Releases the op's buffers (dirtying the output's bounced pages) before
 * the record becomes visible, so a process that sees the record may reuse
 * or free its buffers.  A failed op whose output the NIC may still be
 * reading or writing (zero copy) keeps it, and its registration busy,
 * until the comm's connections are drained: collx_op_release_held().
 *
 * Context: process context.
 */
void collx_op_complete(struct collx_op *op, int status, u32 rank, u32 phase,
		       u32 step)
{
	struct collx_file *cf = op->cf;
	struct collx_comm *comm = op->comm;

	list_del_init(&op->entry);
	if (status && op->dmap.ibdev) {
		kref_get(&op->ref);
		list_add_tail(&op->entry, &comm->held);
	} else {
		collx_op_release_bufs(op);
	}

	op->cmpl.status = status;
	op->cmpl.failed_rank = rank;
	op->cmpl.phase = phase;
	op->cmpl.step = step;
	op->cmpl.end_ns = ktime_get_ns();
	if (!op->cmpl.start_ns)
		op->cmpl.start_ns = op->cmpl.end_ns;
	trace_op_done(comm->id, op->id, status, rank, phase, step,
		      op->cmpl.bytes, op->cmpl.end_ns - op->cmpl.start_ns);
	op->comm = NULL;
	atomic_dec(&collx_stats.ops);
	atomic64_inc(status ? &collx_stats.ops_failed : &collx_stats.ops_done);

	spin_lock_irq(&cf->done_lock);
	list_add_tail(&op->done_entry, &cf->done);
	WRITE_ONCE(op->done, true);
	spin_unlock_irq(&cf->done_lock);
	wake_up_all(&cf->wq);
}

/* Take an op's record off the done list; false if someone else did. */
static bool collx_op_take(struct collx_file *cf, struct collx_op *op)
{
	bool mine;

	spin_lock_irq(&cf->done_lock);
	mine = !list_empty(&op->done_entry);
	list_del_init(&op->done_entry);
	spin_unlock_irq(&cf->done_lock);
	if (mine)
		xa_erase(&cf->ops, op->id);
	return mine;
}

static long collx_op_sleep(struct collx_file *cf, struct collx_op *op,
			   long left)
{
	return wait_event_interruptible_timeout(cf->wq, READ_ONCE(op->done),
						left);
}

/**
 * collx_op_wait() - COLLX_IOC_WAIT
 * @cf: the file
 * @cmd: the request; completion is filled in
 *
 * Context: process context; sleeps up to timeout_ms.
 * Return: 0, -EAGAIN (still running), -ENOENT, -EINTR, -EINVAL.
 */
int collx_op_wait(struct collx_file *cf, struct collx_wait *cmd)
{
	struct collx_op *op;
	long left;
	int ret = 0;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	xa_lock(&cf->ops);
	op = xa_load(&cf->ops, cmd->op_id);
	if (op)
		kref_get(&op->ref);
	xa_unlock(&cf->ops);
	if (!op)
		return -ENOENT;

	if (cmd->timeout_ms == COLLX_WAIT_FOREVER)
		left = MAX_SCHEDULE_TIMEOUT;
	else
		left = msecs_to_jiffies(cmd->timeout_ms);
	if (!READ_ONCE(op->done)) {
		if (!left)
			ret = -EAGAIN;
		else
			left = collx_op_sleep(cf, op, left);
		if (!ret && left < 0)
			ret = -EINTR;
		else if (!ret && !READ_ONCE(op->done))
			ret = -EAGAIN;
	}
	if (!ret) {
		if (collx_op_take(cf, op)) {
			cmd->completion = op->cmpl;
			collx_op_put(op);	/* the fd's reference */
		} else {
			ret = -ENOENT;
		}
	}
	collx_op_put(op);
	return ret;
}

/**
 * collx_op_ready() - is a completion record waiting to be read?
 * @cf: the file
 *
 * Context: any.
 * Return: true if read() would not block.
 */
bool collx_op_ready(struct collx_file *cf)
{
	bool ready;

	spin_lock_irq(&cf->done_lock);
	ready = !list_empty(&cf->done);
	spin_unlock_irq(&cf->done_lock);
	return ready;
}

/**
 * collx_op_read() - read() of completion records
 * @cf: the file
 * @buf: user buffer
 * @len: its size; whole records only
 * @nonblock: O_NONBLOCK
 *
 * Context: process context.
 * Return: bytes read, or -EINVAL (buffer smaller than a record), -EAGAIN,
 * -EINTR (ERESTARTSYS), -EFAULT.
 */
ssize_t collx_op_read(struct collx_file *cf, char __user *buf, size_t len,
		      bool nonblock)
{
	const size_t rec = sizeof(struct collx_completion);
	struct collx_op *op;
	size_t done = 0;
	int ret;

	if (len < rec)
		return -EINVAL;
	while (done + rec <= len) {
		spin_lock_irq(&cf->done_lock);
		op = list_first_entry_or_null(&cf->done, struct collx_op,
					      done_entry);
		if (op)
			list_del_init(&op->done_entry);
		spin_unlock_irq(&cf->done_lock);
		if (!op) {
			if (done)
				break;
			if (nonblock)
				return -EAGAIN;
			ret = wait_event_interruptible(cf->wq,
						       collx_op_ready(cf));
			if (ret)
				return ret;
			continue;
		}
		if (copy_to_user(buf + done, &op->cmpl, rec)) {
			/* Put it back: a record is never lost. */
			spin_lock_irq(&cf->done_lock);
			list_add(&op->done_entry, &cf->done);
			spin_unlock_irq(&cf->done_lock);
			return done ? done : -EFAULT;
		}
		xa_erase(&cf->ops, op->id);
		collx_op_put(op);
		done += rec;
	}
	return done;
}

/**
 * collx_op_release_all() - free the records of a closing file
 * @cf: the file; its comms are gone, so every op is complete
 *
 * Context: process context (release).
 */
void collx_op_release_all(struct collx_file *cf)
{
	struct collx_op *op;
	unsigned long id;

	xa_for_each(&cf->ops, id, op) {
		WARN_ON(!op->done);
		xa_erase(&cf->ops, id);
		collx_op_put(op);
	}
}
