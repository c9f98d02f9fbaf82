// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: every collective, as NCCL names and orders their arguments,
 * and collx_submit() behind them: checks the arguments (so a mistake is
 * reported with its reason, not as a bare EINVAL from the kernel), picks
 * the algorithm (COLLX_ALGO for what asks AUTO) and submits, queues in a
 * group, or waits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collx_int.h"

/* Which algorithms can run which collective (include/uapi/linux/collx.h). */
static bool algo_runs(enum collx_algo a, enum collx_coll c)
{
	switch (a) {
	case COLLX_ALGO_AUTO:
		return true;
	case COLLX_ALGO_RING:
		return c != COLLX_COLL_BARRIER && c != COLLX_COLL_SEND && c != COLLX_COLL_RECV;
	case COLLX_ALGO_TREE:
		return c == COLLX_COLL_ALLREDUCE || c == COLLX_COLL_REDUCE ||
		       c == COLLX_COLL_BROADCAST;
	case COLLX_ALGO_RD:
		return c == COLLX_COLL_ALLREDUCE || c == COLLX_COLL_ALLGATHER ||
		       c == COLLX_COLL_REDUCE_SCATTER || c == COLLX_COLL_BARRIER;
	case COLLX_ALGO_PAIRWISE:
		return c == COLLX_COLL_ALLTOALL;
	case COLLX_ALGO_P2P:
		return c == COLLX_COLL_SEND || c == COLLX_COLL_RECV;
	default:
		return false;
	}
}

/* Elements of each buffer this rank passes (0: the buffer is unused). */
static void buf_elems(enum collx_coll coll, size_t count, size_t nranks, bool root,
		      size_t *send, size_t *recv)
{
	*send = *recv = count;
	switch (coll) {
	case COLLX_COLL_BROADCAST:
		*send = root ? count : 0;
		break;
	case COLLX_COLL_REDUCE:
		*recv = root ? count : 0;
		break;
	case COLLX_COLL_ALLGATHER:
		*recv = count * nranks;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		*send = count * nranks;
		break;
	case COLLX_COLL_ALLTOALL:
		*send = *recv = count * nranks;
		break;
	case COLLX_COLL_BARRIER:
		*send = *recv = 0;
		break;
	case COLLX_COLL_SEND:
		*recv = 0;
		break;
	case COLLX_COLL_RECV:
		*send = 0;
		break;
	default:
		break;
	}
}

static int bad(struct collx_comm *comm, const struct collx_args *a, const char *why)
{
	collx_set_error(comm, "%s: %s", collx_coll_name(a->coll), why);
	return -EINVAL;
}

/* @a as the kernel takes it, or -EINVAL with the reason. */
static int build(struct collx_comm *comm, const struct collx_args *a, struct collx_submit *s)
{
	bool is_root, reduces, rooted;
	size_t esz, parts, send, recv;
	enum collx_algo algo;
	char why[128];

	if ((unsigned int)a->coll >= COLLX_COLL_COUNT) {
		collx_set_error(comm, "collective %d unknown", a->coll);
		return -EINVAL;
	}
	reduces = a->coll == COLLX_COLL_ALLREDUCE || a->coll == COLLX_COLL_REDUCE ||
		  a->coll == COLLX_COLL_REDUCE_SCATTER;
	rooted = a->coll == COLLX_COLL_BROADCAST || a->coll == COLLX_COLL_REDUCE ||
		 a->coll == COLLX_COLL_SEND || a->coll == COLLX_COLL_RECV;
	if ((unsigned int)a->dtype >= COLLX_DTYPE_COUNT)
		return bad(comm, a, "unknown dtype");
	if (reduces && (unsigned int)a->redop >= COLLX_OP_COUNT)
		return bad(comm, a, "unknown reduction op");
	if ((unsigned int)a->algo >= COLLX_ALGO_COUNT)
		return bad(comm, a, "unknown algorithm");
	if (rooted && (a->root < 0 || a->root >= comm->nranks)) {
		snprintf(why, sizeof(why), "%s %d is not a rank of 0..%d",
			 a->coll == COLLX_COLL_SEND || a->coll == COLLX_COLL_RECV ? "peer" : "root",
			 a->root, comm->nranks - 1);
		return bad(comm, a, why);
	}
	if (a->coll == COLLX_COLL_BARRIER && (a->count || a->sendbuf || a->recvbuf))
		return bad(comm, a, "a barrier takes no count and no buffers");
	is_root = rooted && a->root == comm->rank;
	esz = collx_dtype_size(a->dtype);
	parts = a->coll == COLLX_COLL_ALLGATHER || a->coll == COLLX_COLL_REDUCE_SCATTER ||
		a->coll == COLLX_COLL_ALLTOALL ? (size_t)comm->nranks : 1;
	if (a->count > COLLX_MAX_BYTES / esz / parts) {
		snprintf(why, sizeof(why), "count %zu makes a buffer larger than %llu bytes",
			 a->count, (unsigned long long)COLLX_MAX_BYTES);
		return bad(comm, a, why);
	}
	buf_elems(a->coll, a->count, comm->nranks, is_root, &send, &recv);
	if (a->count && ((send && !a->sendbuf) || (recv && !a->recvbuf)))
		return bad(comm, a, send && !a->sendbuf ? "no send buffer" : "no receive buffer");

	algo = a->algo;
	if (algo == COLLX_ALGO_AUTO && algo_runs(comm->env_algo, a->coll))
		algo = comm->env_algo;
	if (!comm->abi11 && algo != COLLX_ALGO_AUTO) {
		/* ABI 1.0 has ring allreduce only, and no algorithm field. */
		if (algo != COLLX_ALGO_RING || a->coll != COLLX_COLL_ALLREDUCE) {
			collx_set_error(comm, "%s: algorithm %s needs a collx module with ABI 1.1",
					collx_coll_name(a->coll), collx_algo_name(algo));
			return -EOPNOTSUPP;
		}
		algo = COLLX_ALGO_AUTO;
	}

	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->flags = algo;
	s->comm_id = comm->comm_id;
	s->coll = a->coll;
	s->dtype = a->dtype;
	s->redop = reduces ? a->redop : 0;
	s->root = rooted ? (uint32_t)a->root : 0;
	s->count = a->count;
	/* Buffers a rank does not use are ignored: pass none, pin nothing. */
	s->sendbuf = send ? (uintptr_t)a->sendbuf : 0;
	s->recvbuf = recv ? (uintptr_t)a->recvbuf : 0;
	return 0;
}

int collx_submit(struct collx_comm *comm, const struct collx_args *args,
		 struct collx_op **opp)
{
	struct collx_submit s;
	struct collx_op *op;
	int err, done;

	if (opp)
		*opp = NULL;
	if (!comm || !args)
		return -EINVAL;
	err = build(comm, args, &s);
	if (err)
		return err;
	op = collx_op_new(comm, &s);
	if (!op)
		return -ENOMEM;
	op->blocking = !opp;
	if (collx_group_take(op)) {
		if (opp)
			*opp = op;
		return 0;
	}
	err = collx_op_submit(comm, &op, 1);
	if (err) {
		collx_op_free(op);
		return err;
	}
	if (opp) {
		*opp = op;
		return 0;
	}
	return collx_op_finish(op, -1, &done, NULL);
}

static int coll(struct collx_comm *comm, enum collx_coll c, const void *sendbuf,
		void *recvbuf, size_t count, enum collx_dtype dtype, enum collx_redop redop,
		int root, struct collx_op **op)
{
	struct collx_args a = {
		.coll = c, .dtype = dtype, .redop = redop, .root = root,
		.count = count, .sendbuf = sendbuf, .recvbuf = recvbuf,
		.algo = COLLX_ALGO_AUTO,
	};

	return collx_submit(comm, &a, op);
}

/* The _async forms must get somewhere to put the op. */
#define NEED_OP(op) do { if (!(op)) return -EINVAL; } while (0)

int collx_allreduce(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		    size_t count, enum collx_dtype dtype, enum collx_redop redop)
{
	return coll(comm, COLLX_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, redop, 0, NULL);
}

int collx_allreduce_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t count, enum collx_dtype dtype,
			  enum collx_redop redop, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, redop, 0, op);
}

int collx_broadcast(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		    size_t count, enum collx_dtype dtype, int root)
{
	return coll(comm, COLLX_COLL_BROADCAST, sendbuf, recvbuf, count, dtype, 0, root, NULL);
}

int collx_broadcast_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t count, enum collx_dtype dtype,
			  int root, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_BROADCAST, sendbuf, recvbuf, count, dtype, 0, root, op);
}

int collx_reduce(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		 size_t count, enum collx_dtype dtype, enum collx_redop redop,
		 int root)
{
	return coll(comm, COLLX_COLL_REDUCE, sendbuf, recvbuf, count, dtype, redop, root, NULL);
}

int collx_reduce_async(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		       size_t count, enum collx_dtype dtype, enum collx_redop redop,
		       int root, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_REDUCE, sendbuf, recvbuf, count, dtype, redop, root, op);
}

int collx_allgather(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		    size_t sendcount, enum collx_dtype dtype)
{
	return coll(comm, COLLX_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, 0, 0, NULL);
}

int collx_allgather_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t sendcount,
			  enum collx_dtype dtype, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, 0, 0, op);
}

int collx_reduce_scatter(struct collx_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t recvcount,
			 enum collx_dtype dtype, enum collx_redop redop)
{
	return coll(comm, COLLX_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, redop,
		    0, NULL);
}

int collx_reduce_scatter_async(struct collx_comm *comm, const void *sendbuf,
			       void *recvbuf, size_t recvcount,
			       enum collx_dtype dtype, enum collx_redop redop,
			       struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, redop,
		    0, op);
}

int collx_alltoall(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		   size_t count, enum collx_dtype dtype)
{
	return coll(comm, COLLX_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, 0, 0, NULL);
}

int collx_alltoall_async(struct collx_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t count, enum collx_dtype dtype,
			 struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, 0, 0, op);
}

int collx_barrier(struct collx_comm *comm)
{
	return coll(comm, COLLX_COLL_BARRIER, NULL, NULL, 0, COLLX_INT8, 0, 0, NULL);
}

int collx_barrier_async(struct collx_comm *comm, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_BARRIER, NULL, NULL, 0, COLLX_INT8, 0, 0, op);
}

int collx_send(struct collx_comm *comm, const void *sendbuf, size_t count,
	       enum collx_dtype dtype, int peer)
{
	return coll(comm, COLLX_COLL_SEND, sendbuf, NULL, count, dtype, 0, peer, NULL);
}

int collx_send_async(struct collx_comm *comm, const void *sendbuf,
		     size_t count, enum collx_dtype dtype, int peer,
		     struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_SEND, sendbuf, NULL, count, dtype, 0, peer, op);
}

int collx_recv(struct collx_comm *comm, void *recvbuf, size_t count,
	       enum collx_dtype dtype, int peer)
{
	return coll(comm, COLLX_COLL_RECV, NULL, recvbuf, count, dtype, 0, peer, NULL);
}

int collx_recv_async(struct collx_comm *comm, void *recvbuf, size_t count,
		     enum collx_dtype dtype, int peer, struct collx_op **op)
{
	NEED_OP(op);
	return coll(comm, COLLX_COLL_RECV, NULL, recvbuf, count, dtype, 0, peer, op);
}
