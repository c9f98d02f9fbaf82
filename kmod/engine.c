// SPDX-License-Identifier: GPL-2.0
/*
 * collx: the engine, driving each comm's collectives from completions.
 *
 * Ring allreduce: reduce-scatter then all-gather, each of n - 1 steps
 * (kmod/core/sched.c says which chunk moves at each step).  Every chunk
 * is cut into slices of one staging slot; a "unit" is one slice of one
 * step, numbered step * nslices + slice, and every rank sends and receives
 * units in that order.  A unit can be sent once the unit it forwards (the
 * same slice one step earlier) has arrived and been reduced, and once the
 * successor has a free slot (a credit).  So slices of different steps
 * travel the ring at once: the pipeline.
 *
 * Chunks go through staging slots, or with zero copy (direct.c) straight
 * from and into registered outputs.
 *
 * All engine state is touched only here, under comm->lock, from the
 * comm's work item; CQ handlers only count and kick it.  No user thread
 * and no syscall is needed for progress.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/seq_file.h>
#include <linux/sched.h>

#include "collx_loc.h"
#include "core/reduce.h"
#include "core/sched.h"
#include "trace.h"
#include "wire.h"

/**
 * struct collx_unit - where one unit's elements are
 * @step: ring step
 * @slice: slice within the chunk
 * @phase: enum collx_phase
 * @reduce: reduce into the output (else copy)
 * @last_rs: the last reduce-scatter step: the chunk is now complete
 * @off: first element
 * @len: elements (0: nothing to move)
 */
struct collx_unit {
	u32 step;
	u32 slice;
	u32 phase;
	bool reduce;
	bool last_rs;
	u64 off;
	u64 len;
};

static void collx_unit_get(const struct collx_op *op, u32 unit, bool send,
			   struct collx_unit *u)
{
	const struct collx_comm *comm = op->comm;
	struct collx_ring_step st;
	struct collx_range seg, sl;

	u->step = unit / op->nslices;
	u->slice = unit % op->nslices;
	u->phase = u->step < comm->nranks - 1 ? COLLX_PHASE_REDUCE_SCATTER :
						COLLX_PHASE_ALLGATHER;
	u->last_rs = u->step == comm->nranks - 2;
	u->off = 0;
	u->len = 0;
	if (collx_ring_step(COLLX_RING_ALLREDUCE, comm->nranks, comm->rank,
			    u->step, &st))
		return;
	u->reduce = st.reduce;
	if (collx_split(op->count, comm->nranks,
			send ? st.send_chunk : st.recv_chunk, &seg))
		return;
	if (collx_slice(seg.len, op->slice_elems, u->slice, &sl))
		return;
	u->off = seg.off + sl.off;
	u->len = sl.len;
}

/* The step and phase an op is stuck at, for its completion record. */
static void collx_op_where(const struct collx_op *op, u32 *phase, u32 *step)
{
	struct collx_unit u;

	if (!op->started || !op->units) {
		*phase = COLLX_PHASE_NONE;
		*step = 0;
		return;
	}
	collx_unit_get(op, min(op->recvd, op->units - 1), false, &u);
	*phase = u.phase;
	*step = u.phase == COLLX_PHASE_REDUCE_SCATTER ? u.step :
		u.step - (op->comm->nranks - 1);
}

static void collx_engine_start(struct collx_comm *comm, struct collx_op *op)
{
	u64 bytes = op->count * op->esize;
	struct collx_range seg0;

	op->started = true;
	op->seq = comm->op_seq++;
	op->cmpl.start_ns = ktime_get_ns();
	if (!op->inplace)
		memcpy(op->recv.kva, op->send.kva, bytes);
	op->slice_elems = collx_slice_elems((u64)collx_slot_kib * 1024,
					    op->esize);
	collx_split(op->count, comm->nranks, 0, &seg0);
	op->nslices = collx_nslices(seg0.len, op->slice_elems);
	op->units = 2 * (comm->nranks - 1) * op->nslices;
	if (op->recv.mr && comm->nranks > 1 &&
	    !collx_dmap_map(op, comm->dev->ibdev))
		op->dmap.placed = collx_peer_post_dest(&comm->prev, &op->dmap,
						       op->seq) > 0;
	comm->progress_jiffies = jiffies;
	trace_op_start(comm->id, op->id, bytes);
	mod_delayed_work(collx_wq, &comm->timeout_work,
			 msecs_to_jiffies(comm->timeout_ms));
}

/* The error of a connection that failed, or 0. */
static int collx_peer_failed(struct collx_peer *peer)
{
	int err = 0;

	spin_lock_irq(&peer->lock);
	if (peer->state == COLLX_PEER_FAILED)
		err = peer->err ? peer->err : -ECONNRESET;
	spin_unlock_irq(&peer->lock);
	return err;
}

/*
 * The error of a predecessor that failed and whose receive queue has been
 * flushed, so every chunk it got through has been seen; else 0.
 */
static int collx_peer_drained(struct collx_peer *peer)
{
	int err = 0;

	spin_lock_irq(&peer->lock);
	if (peer->state == COLLX_PEER_FAILED && peer->rq_flushed)
		err = peer->err ? peer->err : -ECONNRESET;
	spin_unlock_irq(&peer->lock);
	return err;
}

/*
 * Consume the chunks that arrived from the predecessor, in order.  What
 * arrived before the predecessor went away is still good; only waiting
 * for more from it fails.
 */
static int collx_engine_recv(struct collx_comm *comm, struct collx_op *op,
			     u32 *blame)
{
	struct collx_peer *prev = &comm->prev;
	u32 size = 2 * collx_nslots, slot;
	struct collx_arrival arr;
	struct collx_unit u;
	void *src, *dst;
	bool direct;
	int ret;

	while (op->recvd < op->units) {
		collx_unit_get(op, op->recvd, false, &u);
		if (!u.len) {
			op->recvd++;
			continue;
		}
		spin_lock_irq(&prev->lock);
		if (prev->arr_head == prev->arr_tail) {
			spin_unlock_irq(&prev->lock);
			*blame = prev->rank;
			return collx_peer_drained(prev);
		}
		arr = prev->arrivals[prev->arr_head % size];
		prev->arr_head++;
		spin_unlock_irq(&prev->lock);

		slot = prev->consumed % collx_nslots;
		direct = arr.imm & COLLX_WIRE_IMM_DIRECT;
		/* Direct writes only into an output we offered, not in RS. */
		if ((arr.imm & ~COLLX_WIRE_IMM_DIRECT) !=
		    collx_wire_imm(op->seq, op->recvd) ||
		    arr.bytes != u.len * op->esize ||
		    (direct && (!op->dmap.placed || u.reduce))) {
			pr_warn("comm %u: op %llu: rank %u sent chunk %#x of %u bytes, expected %#x of %llu\n",
				comm->id, op->id, prev->rank, arr.imm,
				arr.bytes, collx_wire_imm(op->seq, op->recvd),
				u.len * op->esize);
			*blame = prev->rank;
			return -EPROTO;
		}
		src = prev->staging.kva + (size_t)slot * collx_slot_kib * 1024;
		dst = op->recv.kva + u.off * op->esize;
		if (direct) {
			collx_dmap_sync_for_cpu(&op->dmap, u.off * op->esize,
						arr.bytes);
		} else if (u.reduce) {
			ret = collx_reduce(dst, src, u.len, op->dtype,
					   op->redop);
			if (ret)
				return ret;
			if (u.last_rs && op->redop == COLLX_OP_AVG)
				collx_reduce_scale_avg(dst, u.len, op->dtype,
						       comm->nranks);
		} else {
			memcpy(dst, src, u.len * op->esize);
		}
		prev->consumed++;
		/* A predecessor that is gone needs no credit back. */
		ret = collx_peer_post_credit(prev, slot);
		if (ret && !collx_peer_failed(prev)) {
			*blame = prev->rank;
			return -ECONNRESET;
		}
		trace_chunk_done(comm->id, op->id, prev->rank, u.phase, u.step,
				 u.slice, arr.bytes);
		op->recvd++;
		comm->progress_jiffies = jiffies;
		cond_resched();
	}
	return 0;
}

/* Send what the successor has room for and what is ready to go. */
static int collx_engine_send(struct collx_comm *comm, struct collx_op *op,
			     u32 *blame)
{
	u32 lkey = comm->dev->pd->local_dma_lkey;
	struct ib_sge sge[COLLX_MAX_SGE], staged;
	struct collx_peer *next = &comm->next;
	u32 slot, bytes, nsge, rkey, imm;
	struct collx_unit u;
	bool zero_copy;
	u64 off, raddr;
	void *kva;
	int ret;

	while (op->sent < op->units) {
		/* It forwards the unit one step back: has that arrived? */
		if (op->sent >= op->nslices &&
		    op->recvd <= op->sent - op->nslices)
			return 0;
		collx_unit_get(op, op->sent, true, &u);
		if (!u.len) {
			op->sent++;
			continue;
		}
		*blame = next->rank;
		spin_lock_irq(&next->lock);
		if (!next->credits) {
			spin_unlock_irq(&next->lock);
			return collx_peer_failed(next);
		}
		next->credits--;
		slot = next->posted % collx_nslots;
		spin_unlock_irq(&next->lock);

		bytes = u.len * op->esize;
		off = u.off * op->esize;
		imm = collx_wire_imm(op->seq, op->sent);
		collx_peer_slot(next, slot, bytes, &kva, &staged, &raddr,
				&rkey);
		nsge = 0;
		if (op->dmap.ibdev)
			nsge = collx_dmap_sges(&op->dmap, off, bytes, lkey, sge,
					       next->max_sge);
		zero_copy = nsge;
		if (!zero_copy) {
			memcpy(kva, op->recv.kva + off, bytes);
			sge[0] = staged;
			nsge = 1;
		}
		/* All-gather data is final: it may overwrite the output. */
		if (u.phase == COLLX_PHASE_ALLGATHER &&
		    collx_peer_dest(next, op->seq, off, bytes, &raddr, &rkey))
			imm |= COLLX_WIRE_IMM_DIRECT;
		ret = collx_peer_post_write(next, sge, nsge, raddr, rkey, imm);
		if (ret)
			return collx_peer_failed(next) ? : -ECONNRESET;
		atomic64_add(bytes, &collx_stats.bytes_written);
		if (zero_copy)
			atomic64_add(bytes, &collx_stats.bytes_zero_copy);
		if (imm & COLLX_WIRE_IMM_DIRECT)
			atomic64_add(bytes, &collx_stats.bytes_placed);
		trace_chunk_post(comm->id, op->id, next->rank, u.phase, u.step,
				 u.slice, bytes);
		op->sent++;
		comm->progress_jiffies = jiffies;
	}
	return 0;
}

/*
 * 1: every write completed; 0: some are in flight; <0: some were lost.
 * A successor that went away flushes what it did not acknowledge, so
 * every write completes one way or the other.
 */
static int collx_engine_writes_done(struct collx_comm *comm)
{
	struct collx_peer *next = &comm->next;
	int ret = 0;

	spin_lock_irq(&next->lock);
	if (next->write_done + next->write_errs == next->posted)
		ret = next->write_errs ? -ECONNRESET : 1;
	spin_unlock_irq(&next->lock);
	return ret;
}

/**
 * collx_engine_fail_ops() - complete every pending op with an error
 * @comm: the failed communicator, with @comm->lock held
 * @err: negative errno
 * @rank: peer to blame, or COLLX_RANK_NONE
 *
 * Context: process context.
 */
void collx_engine_fail_ops(struct collx_comm *comm, int err, u32 rank)
{
	struct collx_op *op, *tmp;
	u32 phase, step;

	list_for_each_entry_safe(op, tmp, &comm->ops, entry) {
		collx_op_where(op, &phase, &step);
		trace_comm_error(comm->id, op->id, rank, phase, err);
		collx_op_complete(op, err, rank, phase, step);
	}
	comm->nops = 0;
}

static void collx_engine_progress(struct collx_comm *comm)
{
	u32 blame = COLLX_RANK_NONE;
	struct collx_op *op;
	int ret;

	while ((op = list_first_entry_or_null(&comm->ops, struct collx_op,
					      entry))) {
		if (!op->started)
			collx_engine_start(comm, op);
		ret = collx_engine_recv(comm, op, &blame);
		if (!ret)
			ret = collx_engine_send(comm, op, &blame);
		if (!ret)
			ret = collx_engine_recv(comm, op, &blame);
		if (!ret && op->recvd == op->units && op->sent == op->units) {
			blame = comm->next.rank;
			ret = collx_engine_writes_done(comm);
			/* Our output is no longer the predecessor's target. */
			if (ret == 1 && op->dmap.placed) {
				blame = comm->prev.rank;
				ret = collx_peer_dest_done(&comm->prev);
			}
			if (ret == 1) {
				comm->nops--;
				collx_op_complete(op, 0, COLLX_RANK_NONE,
						  COLLX_PHASE_NONE, 0);
				continue;
			}
		}
		if (ret < 0)
			collx_comm_fail(comm, ret, blame);
		return;
	}

	/* Nothing in flight: a lost neighbour now fails the comm. */
	cancel_delayed_work(&comm->timeout_work);
	ret = collx_peer_failed(&comm->next);
	if (ret) {
		collx_comm_fail(comm, ret, comm->next.rank);
		return;
	}
	ret = collx_peer_failed(&comm->prev);
	if (ret)
		collx_comm_fail(comm, ret, comm->prev.rank);
}

/**
 * collx_engine_work() - run a communicator's collectives as far as they go
 * @work: the comm's work
 *
 * Context: collx_wq.
 */
void collx_engine_work(struct work_struct *work)
{
	struct collx_comm *comm = container_of(work, struct collx_comm, work);
	enum collx_comm_state state;

	mutex_lock(&comm->lock);
	spin_lock_irq(&comm->elock);
	state = comm->state;
	spin_unlock_irq(&comm->elock);
	if (state == COLLX_COMM_READY)
		collx_engine_progress(comm);
	spin_lock_irq(&comm->elock);
	state = comm->state;
	spin_unlock_irq(&comm->elock);
	if (state == COLLX_COMM_ERROR && !list_empty(&comm->ops))
		collx_engine_fail_ops(comm, comm->err, comm->failed_rank);
	mutex_unlock(&comm->lock);

	if (state == COLLX_COMM_ERROR) {
		/* Tell the neighbours now rather than at their timeout. */
		collx_peer_disconnect(&comm->next);
		collx_peer_disconnect(&comm->prev);
	}
}

/*
 * Who the running op waits for: the successor when a unit is ready to go
 * but it has given no credit back (it is not consuming), else the
 * predecessor while data is missing, else the successor (write acks).
 */
static u32 collx_engine_waits_for(struct collx_comm *comm,
				  struct collx_op *op, bool *data)
{
	struct collx_peer *next = &comm->next;
	bool ready, starved;

	ready = op->sent < op->units &&
		(op->sent < op->nslices || op->recvd > op->sent - op->nslices);
	spin_lock_irq(&next->lock);
	starved = !next->credits;
	spin_unlock_irq(&next->lock);
	*data = !(ready && starved) && op->recvd < op->units;
	return *data ? comm->prev.rank : next->rank;
}

/**
 * collx_engine_timeout() - fail the running op if it stopped progressing
 * @work: the comm's timeout_work
 *
 * Blames the successor when the op has a unit to send and no credit for
 * it, else the predecessor when the op waits for data, else the successor
 * (its writes' completions).
 *
 * Context: collx_wq.
 */
void collx_engine_timeout(struct work_struct *work)
{
	struct collx_comm *comm = container_of(to_delayed_work(work),
					       struct collx_comm, timeout_work);
	unsigned long limit = msecs_to_jiffies(comm->timeout_ms);
	struct collx_op *op;
	bool data;
	u32 rank;

	mutex_lock(&comm->lock);
	op = list_first_entry_or_null(&comm->ops, struct collx_op, entry);
	if (!op || !op->started || comm->state != COLLX_COMM_READY) {
		mutex_unlock(&comm->lock);
		return;
	}
	if (time_before(jiffies, comm->progress_jiffies + limit)) {
		mod_delayed_work(collx_wq, &comm->timeout_work,
				 comm->progress_jiffies + limit - jiffies);
		mutex_unlock(&comm->lock);
		return;
	}
	rank = collx_engine_waits_for(comm, op, &data);
	mutex_unlock(&comm->lock);
	pr_warn("comm %u: op %llu made no progress for %u ms; waiting for rank %u (%s)\n",
		comm->id, op->id, comm->timeout_ms, rank,
		data ? "data" : "credits/acks");
	collx_comm_fail(comm, -ETIMEDOUT, rank);
}

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

static void collx_describe_peer(struct seq_file *m, struct collx_peer *peer)
{
	spin_lock_irq(&peer->lock);
	if (peer->outgoing)
		seq_printf(m, "next rank %u: %s, attempts %u, credits %u/%u, writes posted %llu done %llu\n",
			   peer->rank, collx_peer_state_name(peer->state),
			   peer->attempts, peer->credits, collx_nslots,
			   peer->posted, peer->write_done);
	else
		seq_printf(m, "prev rank %u: %s, chunks arrived %llu consumed %llu\n",
			   peer->rank, collx_peer_state_name(peer->state),
			   peer->consumed + (peer->arr_tail - peer->arr_head),
			   peer->consumed);
	spin_unlock_irq(&peer->lock);
}

/**
 * collx_engine_describe() - the debugfs view of a communicator
 * @comm: the communicator
 * @m: where to print
 *
 * For the running op: how far it got per peer and which peer it waits
 * for, the answer to "which rank is stuck".
 *
 * Context: process context; takes @comm->lock.
 */
void collx_engine_describe(struct collx_comm *comm, struct seq_file *m)
{
	u32 phase, step, idle_ms, rank;
	struct collx_op *op;
	bool data;

	mutex_lock(&comm->lock);
	seq_printf(m, "comm %u key %#llx rank %u/%u state %s timeout %u ms device %s\n",
		   comm->id, comm->key, comm->rank, comm->nranks,
		   collx_comm_state_name(comm->state), comm->timeout_ms,
		   comm->dev ? dev_name(&comm->dev->ibdev->dev) : "-");
	if (comm->state == COLLX_COMM_ERROR)
		seq_printf(m, "error %d, rank %d\n", comm->err,
			   (int)comm->failed_rank);
	if (comm->nranks > 1) {
		collx_describe_peer(m, &comm->next);
		collx_describe_peer(m, &comm->prev);
	}
	seq_printf(m, "ops started %llu, queued %u\n", comm->op_seq,
		   comm->nops);
	idle_ms = jiffies_to_msecs(jiffies - comm->progress_jiffies);
	list_for_each_entry(op, &comm->ops, entry) {
		if (!op->started)
			continue;
		collx_op_where(op, &phase, &step);
		seq_printf(m, "op %llu allreduce dtype %u redop %u count %llu memory %s: %s step %u, units sent %u/%u received %u/%u, ",
			   op->id, op->dtype, op->redop, op->count,
			   op->dmap.placed ? "zero-copy+placed" :
			   op->dmap.ibdev ? "zero-copy" : "staged",
			   phase == COLLX_PHASE_REDUCE_SCATTER ?
			   "reduce-scatter" : "all-gather", step,
			   op->sent, op->units, op->recvd, op->units);
		rank = collx_engine_waits_for(comm, op, &data);
		seq_printf(m, "waiting for rank %u (%s) since %u ms\n", rank,
			   data ? "data" : "credits/acks", idle_ms);
	}
	mutex_unlock(&comm->lock);
}
