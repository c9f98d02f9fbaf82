// SPDX-License-Identifier: GPL-2.0
/*
 * collx: collectives as the fd sees them: submit (alone or in a group),
 * completion, release.
 *
 * Submission does every fallible step first (checks, the algorithm, the
 * schedule, pinning and charging the buffers, an id reserved in the fd's
 * table) and only then, under the comm's engine lock, publishes the ops
 * and queues their group, so no one can see or complete an op that is
 * not whole, and a failed submission leaves nothing behind.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "collx_loc.h"
#include "core/coll.h"
#include "core/reduce.h"
#include "core/sched.h"
#include "core/uapi_check.h"
#include "trace.h"

static void collx_op_free(struct kref *ref)
{
	struct collx_op *op = container_of(ref, struct collx_op, ref);
	int i;

	for (i = 0; i < ARRAY_SIZE(op->buf); i++)
		collx_buf_unmap(&op->buf[i]);
	kvfree(op->sched.x);
	kvfree(op->xs);
	kfree(op);
}

/**
 * collx_op_put() - drop a reference to an op
 * @op: the op
 *
 * Context: process context.
 */
void collx_op_put(struct collx_op *op)
{
	kref_put(&op->ref, collx_op_free);
}

/**
 * collx_op_release_bufs() - unpin and unmap an op's buffers
 * @op: the op; the NIC no longer touches them
 *
 * Context: process context.
 */
void collx_op_release_bufs(struct collx_op *op)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(op->buf); i++)
		collx_buf_unmap(&op->buf[i]);
}

/* Do [a, a + alen) and [b, b + blen) overlap? */
static bool collx_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/**
 * struct collx_op_shape - what a collective's buffers hold on this rank
 * @in: elements of the input read, 0 if none
 * @out: elements of the output written, 0 if none
 * @inplace: the collective is in place
 * @in_addr: the input's address
 * @out_addr: the output's address
 */
struct collx_op_shape {
	u64 in;
	u64 out;
	bool inplace;
	u64 in_addr;
	u64 out_addr;
};

/* Check a submit against its collective's rules; what it reads and writes. */
static int collx_op_shape(const struct collx_submit *cmd, u32 rank, u32 nranks,
			  struct collx_op_shape *sh)
{
	u64 c = cmd->count, esize = collx_dtype_size(cmd->dtype), nc;
	bool rooted = false;

	memset(sh, 0, sizeof(*sh));
	sh->in_addr = cmd->sendbuf;
	sh->out_addr = cmd->recvbuf;
	if (check_mul_overflow(c, (u64)nranks, &nc))
		return -EINVAL;
	switch (cmd->coll) {
	case COLLX_COLL_ALLREDUCE:
		sh->in = c;
		sh->out = c;
		sh->inplace = cmd->sendbuf == cmd->recvbuf;
		break;
	case COLLX_COLL_BROADCAST:
		rooted = true;
		sh->out = c;
		if (rank == cmd->root) {
			sh->in = c;
			sh->inplace = cmd->sendbuf == cmd->recvbuf;
		}
		break;
	case COLLX_COLL_REDUCE:
		rooted = true;
		sh->in = c;
		if (rank == cmd->root) {
			sh->out = c;
			sh->inplace = cmd->sendbuf == cmd->recvbuf;
		}
		break;
	case COLLX_COLL_ALLGATHER:
		sh->in = c;
		sh->out = nc;
		sh->inplace = cmd->sendbuf == cmd->recvbuf + rank * c * esize;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		sh->in = nc;
		sh->out = c;
		sh->inplace = cmd->recvbuf == cmd->sendbuf + rank * c * esize;
		break;
	case COLLX_COLL_ALLTOALL:
		sh->in = nc;
		sh->out = nc;
		break;
	case COLLX_COLL_BARRIER:
		if (c || cmd->sendbuf || cmd->recvbuf)
			return -EINVAL;
		break;
	case COLLX_COLL_SEND:
		rooted = true;
		sh->in = c;
		if (cmd->root == rank)
			return -EINVAL;
		break;
	case COLLX_COLL_RECV:
		rooted = true;
		sh->out = c;
		if (cmd->root == rank)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (rooted ? cmd->root >= nranks : cmd->root)
		return -EINVAL;
	if ((sh->in && !cmd->sendbuf) || (sh->out && !cmd->recvbuf))
		return -EINVAL;
	if (sh->inplace) {
		/*
		 * The input is the part of the output the collective names;
		 * an in-place reduce-scatter's output is part of its input.
		 */
		if (cmd->coll != COLLX_COLL_REDUCE_SCATTER)
			sh->in = 0;
		return 0;
	}
	/* Out of place: the two must not overlap at all. */
	if (collx_overlap(cmd->sendbuf, sh->in * esize, cmd->recvbuf,
			  sh->out * esize))
		return -EINVAL;
	return 0;
}

/* Map buffer @id of @op: [@addr, + @elems elements), or leave it empty. */
static int collx_op_map(struct collx_file *cf, struct collx_op *op, u32 id,
			u64 addr, u64 elems, bool write)
{
	u64 bytes;
	int ret;

	if (!elems)
		return 0;
	ret = collx_uapi_buf_bytes(elems, op->dtype, 1, COLLX_MAX_BYTES,
				   &bytes);
	/*
	 * Only that it does not wrap here: a dma-buf registration may sit at
	 * any address (a GPU's device pointer), host memory must lie below
	 * TASK_SIZE (collx_buf_map()).
	 */
	if (!ret)
		ret = collx_uapi_check_range(addr, bytes, U64_MAX);
	if (ret)
		return ret;
	ret = collx_buf_map(cf, &op->buf[id], addr, bytes, write);
	if (ret)
		return ret;
	op->buf[id].op = op;
	if (op->buf[id].mr) {
		op->mem |= COLLX_MEM_ZERO_COPY;
		if (op->buf[id].mr->dmabuf) {
			op->mem |= COLLX_MEM_DMABUF;
			collx_dmabuf_use(&op->buf[id], true);
		}
	} else {
		op->mem |= COLLX_MEM_BOUNCED;
	}
	return 0;
}

/* Every transfer lies inside the buffers it names. */
static int collx_op_check_sched(const struct collx_op *op)
{
	u64 lim[4] = { 0 }, end;
	u32 i, k;

	for (i = 1; i < ARRAY_SIZE(lim); i++)
		lim[i] = op->buf[i].bytes / op->esize;
	for (i = 0; i < op->sched.n; i++) {
		const struct collx_xfer *x = &op->sched.x[i];

		if (x->src >= ARRAY_SIZE(lim) || x->dst >= ARRAY_SIZE(lim) ||
		    x->ndeps > COLLX_XF_MAX_DEPS)
			return -EINVAL;
		if (x->src && (check_add_overflow(x->src_off, x->count, &end) ||
			       end > lim[x->src]))
			return -EINVAL;
		if (x->dst && (check_add_overflow(x->dst_off, x->count, &end) ||
			       end > lim[x->dst]))
			return -EINVAL;
		for (k = 0; k < x->ndeps; k++)
			if (x->deps[k] >= i)
				return -EINVAL;
	}
	return 0;
}

/*
 * A forced algorithm must be able to run the collective whatever the rank
 * count (collx_coll_supported() lets COLLX_ALGO_P2P run anything, as one
 * rank's local copy; forced, it runs only send and recv): the answer to a
 * submit does not depend on the communicator it names.
 */
static int collx_op_check_algo(u32 coll, u32 algo)
{
	if (algo >= COLLX_ALGO_COUNT)
		return -EOPNOTSUPP;
	if (algo == COLLX_ALGO_AUTO)
		return 0;
	if (algo == COLLX_ALGO_P2P && coll != COLLX_COLL_SEND &&
	    coll != COLLX_COLL_RECV)
		return -EOPNOTSUPP;
	return collx_coll_supported(coll, algo);
}

/*
 * Build one op from a submit: every check, the schedule and the buffers.
 * Nothing is visible to anyone yet.
 */
static int collx_op_prepare(struct collx_file *cf, struct collx_comm *comm,
			    const struct collx_submit *cmd,
			    struct collx_op **opp)
{
	struct collx_coll_args a = {};
	struct collx_op_shape sh;
	struct collx_op *op;
	u64 bytes;
	u32 algo, i;
	int ret;

	if (cmd->flags & ~COLLX_SUBMIT_ALGO_MASK)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	ret = collx_uapi_check_dtype(cmd->dtype);
	if (!ret)
		ret = collx_uapi_check_redop(cmd->redop);
	if (!ret && cmd->coll >= COLLX_COLL_COUNT)
		ret = -EOPNOTSUPP;
	if (ret)
		return ret;
	algo = cmd->flags & COLLX_SUBMIT_ALGO_MASK;
	ret = collx_op_check_algo(cmd->coll, algo);
	if (ret)
		return ret;
	if (cmd->count > COLLX_MAX_BYTES)
		return -EINVAL;
	ret = collx_op_shape(cmd, comm->params.rank, comm->params.nranks, &sh);
	if (ret)
		return ret;
	ret = collx_uapi_buf_bytes(max(sh.in, sh.out), cmd->dtype, 1,
				   COLLX_MAX_BYTES, &bytes);
	if (ret)
		return ret;
	/* One rank runs every collective as a local copy (COLLX_ALGO_P2P). */
	if (algo == COLLX_ALGO_AUTO || comm->params.nranks == 1)
		algo = collx_algo_choose(cmd->coll, bytes, comm->params.nranks);
	ret = collx_coll_supported(cmd->coll, algo);
	if (ret)
		return ret;

	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op)
		return -ENOMEM;
	kref_init(&op->ref);
	INIT_LIST_HEAD(&op->entry);
	INIT_LIST_HEAD(&op->done_entry);
	op->cf = cf;
	op->comm = comm;
	op->coll = cmd->coll;
	op->dtype = cmd->dtype;
	op->redop = cmd->redop;
	op->root = cmd->root;
	op->algo = algo;
	op->count = cmd->count;
	op->esize = collx_dtype_size(cmd->dtype);

	a.coll = cmd->coll;
	a.algo = algo;
	a.nranks = comm->params.nranks;
	a.rank = comm->params.rank;
	a.root = cmd->root;
	/*
	 * The average of one rank is its input: build a plain copy, bit for
	 * bit (dividing by 1 would still canonicalise NaNs, and the header
	 * promises a local copy).
	 */
	a.redop = comm->params.nranks == 1 && cmd->redop == COLLX_OP_AVG ?
		  COLLX_OP_SUM : cmd->redop;
	a.count = cmd->count;
	a.inplace = sh.inplace;
	op->sched.max = collx_coll_max_xfers(&a);
	ret = -EINVAL;
	if (!op->sched.max)
		goto out_put;
	ret = -ENOMEM;
	op->sched.x = kvmalloc_array(op->sched.max, sizeof(*op->sched.x),
				     GFP_KERNEL_ACCOUNT);
	if (!op->sched.x)
		goto out_put;
	ret = collx_coll_build(&a, &op->sched);
	if (ret)
		goto out_put;
	op->xs = kvcalloc(max(op->sched.n, 1U), sizeof(*op->xs),
			  GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!op->xs)
		goto out_put;

	ret = collx_op_map(cf, op, COLLX_BUF_IN, sh.in_addr, sh.in, false);
	if (!ret)
		ret = collx_op_map(cf, op, COLLX_BUF_OUT, sh.out_addr, sh.out,
				   true);
	if (!ret && op->sched.tmp_count) {
		ret = collx_uapi_buf_bytes(op->sched.tmp_count, op->dtype, 1,
					   COLLX_MAX_BYTES, &bytes);
		if (!ret)
			ret = collx_buf_alloc(&op->buf[COLLX_BUF_TMP], bytes);
	}
	if (!ret)
		ret = collx_op_check_sched(op);
	if (ret)
		goto out_put;

	op->slice = collx_slice_elems(collx_slot_bytes(), op->esize);
	/*
	 * Only what both ends of a transfer agree on: not the root, and a
	 * send is the other side's recv.
	 */
	op->sig = jhash_3words((op->coll == COLLX_COLL_RECV ? COLLX_COLL_SEND :
				op->coll) | op->dtype << 8 | op->algo << 16,
			       op->redop,
			       (u32)op->count ^ (u32)(op->count >> 32),
			       0x636f6c6c);
	for (i = 0; i < op->sched.n; i++)
		op->xs[i].nslices = max_t(u64, 1,
					  collx_nslices(op->sched.x[i].count,
							op->slice));
	op->left = op->sched.n;
	op->cmpl.comm_id = comm->handle;
	/* The uapi's meaning: this rank's output (a send's: its input). */
	op->cmpl.bytes = (op->coll == COLLX_COLL_SEND ? sh.in : sh.out) *
			 op->esize;
	op->cmpl.failed_rank = COLLX_RANK_NONE;
	op->cmpl.algo = algo;

	ret = collx_obj_reserve(&cf->ops, &cf->nops, COLLX_MAX_OPS_PER_FD,
				&op->id, &cf->next_op, -EAGAIN);
	if (ret)
		goto out_put;
	op->cmpl.op_id = op->id;
	*opp = op;
	return 0;

out_put:
	collx_op_put(op);
	return ret;
}

/* Undo collx_op_prepare() of an op that was never published. */
static void collx_op_unprepare(struct collx_file *cf, struct collx_op *op)
{
	collx_obj_abort(&cf->ops, &cf->nops, op->id);
	collx_op_put(op);
}

/* Publish and queue prepared ops as one group; all or nothing. */
static int collx_op_queue(struct collx_file *cf, struct collx_comm *comm,
			  struct collx_op **ops, u32 nops)
{
	struct collx_group *g;
	u32 i;
	int ret;

	for (i = 0; i < nops; i++) {
		ret = collx_comm_want_peers(comm, ops[i]);
		if (ret)
			return ret;
	}
	g = collx_group_alloc(comm, ops, nops);
	if (!g)
		return -ENOMEM;
	mutex_lock(&comm->lock);
	if (READ_ONCE(comm->state) != COLLX_COMM_READY) {
		mutex_unlock(&comm->lock);
		collx_group_free(g);
		return -EPIPE;
	}
	for (i = 0; i < nops; i++) {
		struct collx_op *op = ops[i];

		kref_get(&op->ref);	/* the group's */
		atomic_inc(&collx_stats.ops);
		trace_op_submit(comm->id, op->id, op->coll, op->dtype,
				op->redop, op->count, comm->params.rank,
				comm->params.nranks);
		collx_obj_finalize(&cf->ops, op->id, op);
	}
	collx_engine_queue(comm, g);
	mutex_unlock(&comm->lock);
	return 0;
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
	int ret;

	comm = collx_comm_get_handle(cf, cmd->comm_id);
	if (!comm)
		return -ENOENT;
	ret = -EPIPE;
	if (READ_ONCE(comm->state) != COLLX_COMM_READY)
		goto out_put;
	ret = collx_op_prepare(cf, comm, cmd, &op);
	if (ret)
		goto out_put;
	cmd->op_id = op->id;
	ret = collx_op_queue(cf, comm, &op, 1);
	if (ret)
		collx_op_unprepare(cf, op);
out_put:
	collx_comm_put(comm);
	return ret;
}

/**
 * collx_op_submit_group() - COLLX_IOC_SUBMIT_GROUP
 * @cf: the file
 * @cmd: the request; error_index is filled in, and each entry's op_id
 *
 * Context: process context of the submitting task.
 * Return: 0 or a negative errno (see the uapi header).
 */
int collx_op_submit_group(struct collx_file *cf, struct collx_submit_group *cmd)
{
	u8 __user *uent = u64_to_user_ptr(cmd->entries);
	struct collx_comm *comm = NULL;
	struct collx_submit *subs;
	struct collx_op **ops;
	u32 i, n = 0;
	int ret;

	cmd->error_index = cmd->count;
	if (cmd->flags)
		return -EOPNOTSUPP;
	/* entries is only a pointer: one that cannot be read is -EFAULT. */
	if (cmd->__reserved || !cmd->count || cmd->count > COLLX_MAX_GROUP ||
	    cmd->entry_size < offsetofend(struct collx_submit, op_id) ||
	    cmd->entry_size > COLLX_MAX_ENTRY_SIZE)
		return -EINVAL;
	subs = kvcalloc(cmd->count, sizeof(*subs), GFP_KERNEL_ACCOUNT);
	ops = kvcalloc(cmd->count, sizeof(*ops), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!subs || !ops)
		goto out_free;

	for (i = 0; i < cmd->count; i++) {
		cmd->error_index = i;
		ret = copy_struct_from_user(&subs[i], sizeof(subs[i]),
					    uent + (size_t)i * cmd->entry_size,
					    cmd->entry_size);
		if (ret)
			goto out_undo;
		ret = -EINVAL;
		if (subs[i].size != cmd->entry_size)
			goto out_undo;
		if (!comm) {
			comm = collx_comm_get_handle(cf, subs[i].comm_id);
			ret = -ENOENT;
			if (!comm)
				goto out_undo;
			ret = -EPIPE;
			if (READ_ONCE(comm->state) != COLLX_COMM_READY)
				goto out_undo;
		} else if (subs[i].comm_id != comm->handle) {
			ret = -EINVAL;
			goto out_undo;
		}
		ret = collx_op_prepare(cf, comm, &subs[i], &ops[i]);
		if (ret)
			goto out_undo;
		n++;
	}
	/* Write the ids out before anything can complete them. */
	for (i = 0; i < n; i++) {
		u64 __user *id = (u64 __user *)(uent + (size_t)i *
						cmd->entry_size +
						offsetof(struct collx_submit,
							 op_id));

		cmd->error_index = i;
		ret = -EFAULT;
		if (put_user((u64)ops[i]->id, id))
			goto out_undo;
	}
	cmd->error_index = cmd->count;
	ret = collx_op_queue(cf, comm, ops, n);
	if (!ret)
		goto out_free;

out_undo:
	for (i = 0; i < n; i++)
		collx_op_unprepare(cf, ops[i]);
out_free:
	if (comm)
		collx_comm_put(comm);
	kvfree(ops);
	kvfree(subs);
	return ret;
}

/**
 * collx_op_complete() - end an op and queue its record
 * @op: the op, with its comm's engine lock held
 * @status: 0 or a negative errno
 * @rank: the peer to blame, or COLLX_RANK_NONE
 * @phase: enum collx_phase at the end
 * @step: step within @phase
 * @hold: the NIC may still touch its buffers: keep them (and their
 *	registrations busy) until the comm's connections are drained
 *
 * Releases the op's buffers (dirtying bounced output pages) before the
 * record becomes visible, so a process that sees the record may reuse or
 * free its buffers.
 *
 * Context: process context.
 */
void collx_op_complete(struct collx_op *op, int status, u32 rank, u32 phase,
		       u32 step, bool hold)
{
	struct collx_comm *comm = op->comm;

	lockdep_assert_held(&comm->lock);
	if (hold) {
		kref_get(&op->ref);
		list_add_tail(&op->entry, &comm->held);
	} else {
		collx_op_release_bufs(op);
	}
	op->cmpl.status = status;
	op->cmpl.failed_rank = rank;
	op->cmpl.phase = phase;
	op->cmpl.step = step;
	op->cmpl.mem = op->mem;
	op->cmpl.end_ns = ktime_get_ns();
	if (!op->cmpl.start_ns)
		op->cmpl.start_ns = op->cmpl.end_ns;
	trace_op_done(comm->id, op->id, status, rank, phase, step,
		      op->cmpl.bytes, op->cmpl.end_ns - op->cmpl.start_ns);
	atomic_dec(&collx_stats.ops);
	atomic64_inc(status ? &collx_stats.ops_failed : &collx_stats.ops_done);
	/* The group's reference goes when the group is freed. */
	collx_file_post(op->cf, op);
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
