// SPDX-License-Identifier: GPL-2.0
/*
 * collx: what an open /dev/collx holds, and how completions reach it.
 *
 * An op's record is queued on its fd's done list when the op ends and is
 * consumed once, by read() or COLLX_IOC_WAIT, whichever takes it off the
 * list first; consuming it removes the op from the fd's table.  A waiter
 * holds a reference of its own while it sleeps.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "collx_loc.h"

/**
 * collx_file_alloc() - per-open state
 *
 * Context: process context.
 * Return: the state, or NULL.
 */
struct collx_file *collx_file_alloc(void)
{
	struct collx_file *cf = kzalloc(sizeof(*cf), GFP_KERNEL_ACCOUNT);

	if (!cf)
		return NULL;
	xa_init_flags(&cf->comms, XA_FLAGS_ALLOC1);
	xa_init_flags(&cf->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&cf->ops, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&cf->done);
	spin_lock_init(&cf->done_lock);
	init_waitqueue_head(&cf->wq);
	return cf;
}

/**
 * collx_file_free() - release a closing file
 * @cf: the file
 *
 * Comms first: their ops complete and drop their buffers and
 * registrations; then the unread records, then the registrations.
 *
 * Context: process context (release).
 */
void collx_file_free(struct collx_file *cf)
{
	collx_comm_release_all(cf);
	collx_op_release_all(cf);
	collx_mr_release_all(cf);
	WARN_ON(atomic_read(&cf->ncomms) || atomic_read(&cf->nmrs) ||
		atomic_read(&cf->nops));
	xa_destroy(&cf->comms);
	xa_destroy(&cf->mrs);
	xa_destroy(&cf->ops);
	kfree(cf);
}

/**
 * collx_file_post() - queue a completed op's record
 * @cf: the op's file
 * @op: the op, its record final
 *
 * Context: any; takes @cf->done_lock.
 */
void collx_file_post(struct collx_file *cf, struct collx_op *op)
{
	unsigned long flags;

	spin_lock_irqsave(&cf->done_lock, flags);
	list_add_tail(&op->done_entry, &cf->done);
	WRITE_ONCE(op->done, true);
	spin_unlock_irqrestore(&cf->done_lock, flags);
	wake_up_all(&cf->wq);
}

/* Take an op's record off the done list; false if someone else did. */
static bool collx_file_take(struct collx_file *cf, struct collx_op *op)
{
	bool mine;

	spin_lock_irq(&cf->done_lock);
	mine = !list_empty(&op->done_entry);
	list_del_init(&op->done_entry);
	spin_unlock_irq(&cf->done_lock);
	return mine;
}

/* The record is consumed: the op leaves the table. */
static void collx_file_consumed(struct collx_file *cf, struct collx_op *op)
{
	struct collx_op *t = collx_obj_remove(&cf->ops, &cf->nops, op->id);

	WARN_ON(t != op);
	if (t)
		collx_op_put(t);
}

static long collx_file_sleep(struct collx_file *cf, struct collx_op *op,
			     long left)
{
	return wait_event_interruptible_timeout(cf->wq, READ_ONCE(op->done),
						left);
}

/**
 * collx_file_wait() - COLLX_IOC_WAIT
 * @cf: the file
 * @cmd: the request, its flags and __reserved checked by the caller (which
 *	also made sure the completion can be written back before the record
 *	is consumed); completion is filled in
 *
 * Context: process context; sleeps up to timeout_ms.
 * Return: 0, -EAGAIN (still running), -ENOENT, -ERESTARTSYS.
 */
int collx_file_wait(struct collx_file *cf, struct collx_wait *cmd)
{
	struct collx_op *op;
	long left;
	int ret = 0;

	if (cmd->op_id > U32_MAX)
		return -ENOENT;
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
			left = collx_file_sleep(cf, op, left);
		if (!ret && left < 0)
			ret = left;
		else if (!ret && !READ_ONCE(op->done))
			ret = -EAGAIN;
	}
	if (!ret) {
		if (collx_file_take(cf, op)) {
			cmd->completion = op->cmpl;
			collx_file_consumed(cf, op);
		} else {
			ret = -ENOENT;
		}
	}
	collx_op_put(op);
	return ret;
}

/**
 * collx_file_ready() - is a completion record waiting to be read?
 * @cf: the file
 *
 * Context: any.
 * Return: true if read() would not block.
 */
bool collx_file_ready(struct collx_file *cf)
{
	bool ready;

	spin_lock_irq(&cf->done_lock);
	ready = !list_empty(&cf->done);
	spin_unlock_irq(&cf->done_lock);
	return ready;
}

/**
 * collx_file_read() - read() of completion records
 * @cf: the file
 * @buf: user buffer
 * @len: its size; whole records only
 * @nonblock: O_NONBLOCK
 *
 * A record that cannot be copied out goes back to the head of the list:
 * none is ever lost.
 *
 * Context: process context.
 * Return: bytes read, or -EINVAL (buffer smaller than a record), -EAGAIN,
 * -ERESTARTSYS, -EFAULT.
 */
ssize_t collx_file_read(struct collx_file *cf, char __user *buf, size_t len,
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
		if (op) {
			list_del_init(&op->done_entry);
			kref_get(&op->ref);
		}
		spin_unlock_irq(&cf->done_lock);
		if (!op) {
			if (done)
				break;
			if (nonblock)
				return -EAGAIN;
			ret = wait_event_interruptible(cf->wq,
						       collx_file_ready(cf));
			if (ret)
				return ret;
			continue;
		}
		if (copy_to_user(buf + done, &op->cmpl, rec)) {
			spin_lock_irq(&cf->done_lock);
			list_add(&op->done_entry, &cf->done);
			spin_unlock_irq(&cf->done_lock);
			collx_op_put(op);
			return done ? done : -EFAULT;
		}
		collx_file_consumed(cf, op);
		collx_op_put(op);
		done += rec;
	}
	return done;
}

/**
 * collx_op_release_all() - free the unread records of a closing file
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
		collx_file_take(cf, op);
		op = collx_obj_remove(&cf->ops, &cf->nops, id);
		if (op)
			collx_op_put(op);
	}
}
