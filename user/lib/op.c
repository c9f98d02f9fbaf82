// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: collectives in flight: submission (one at a time, or a group
 * in one COLLX_IOC_SUBMIT_GROUP), waiting and testing by op id, and the
 * records a destroyed communicator still owes.
 *
 * An op's state changes under its comm's lock.  At most one thread is in
 * COLLX_IOC_WAIT for an op at a time (@waiting); whoever takes the record
 * marks the op done, so a waiter, the async-error probe and destroy never
 * take the same record twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collx_int.h"

struct collx_op *collx_op_new(struct collx_comm *comm, const struct collx_submit *s)
{
	struct collx_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->comm = comm;
	op->s = *s;
	op->s.size = sizeof(op->s);
	op->state = COLLX_OP_QUEUED;
	pthread_mutex_lock(&comm->lock);
	collx_comm_ref(comm);
	pthread_mutex_unlock(&comm->lock);
	return op;
}

void collx_op_free(struct collx_op *op)
{
	struct collx_comm *comm = op->comm;

	free(op);
	collx_comm_unref(comm);
}

/* ---- state changes, with the comm's lock held ---- */

static bool in_mr(struct collx_comm *comm, uint64_t addr)
{
	return !addr || collx_mem_lookup(comm, (void *)(uintptr_t)addr, 1);
}

static void op_link(struct collx_comm *comm, struct collx_op *op)
{
	/* ABI 1.0 records say nothing of the memory path: what we know */
	op->in_mr = in_mr(comm, op->s.sendbuf) && in_mr(comm, op->s.recvbuf) &&
		    (op->s.sendbuf || op->s.recvbuf);
	op->prev = NULL;
	op->next = comm->ops;
	if (comm->ops)
		comm->ops->prev = op;
	comm->ops = op;
	op->state = COLLX_OP_SUBMITTED;
	comm->nr_ops++;
}

static void op_record(struct collx_op *op, const struct collx_completion *c)
{
	struct collx_comm *comm = op->comm;

	if (op->state == COLLX_OP_SUBMITTED) {
		if (op->prev)
			op->prev->next = op->next;
		else
			comm->ops = op->next;
		if (op->next)
			op->next->prev = op->prev;
		op->prev = op->next = NULL;
	}
	op->c = *c;
	op->state = COLLX_OP_DONE;
}

/* The kernel's record: a failure there is the communicator's error. */
static void op_done(struct collx_op *op, const struct collx_completion *c)
{
	op_record(op, c);
	if (c->status && !op->comm->async_error)
		op->comm->async_error = c->status;
}

/* A record the kernel will not give (refused, cancelled): ends with @err. */
static void op_fail(struct collx_op *op, int err)
{
	struct collx_completion c = {
		.op_id = op->s.op_id,
		.comm_id = op->comm->comm_id,
		.status = err,
		.failed_rank = COLLX_RANK_NONE,
	};

	op_record(op, &c);
}

/* ---- text ---- */

static bool reduces(uint32_t coll)
{
	return coll == COLLX_COLL_ALLREDUCE || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_REDUCE_SCATTER;
}

static bool rooted(uint32_t coll)
{
	return coll == COLLX_COLL_BROADCAST || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_SEND || coll == COLLX_COLL_RECV;
}

static unsigned int op_subsys(const struct collx_op *op)
{
	return op->s.coll == COLLX_COLL_SEND || op->s.coll == COLLX_COLL_RECV ?
	       COLLX_SUB_P2P : COLLX_SUB_COLL;
}

/* "broadcast 1021 x float root 2" */
static void op_desc(const struct collx_op *op, char *out, size_t len)
{
	int n;

	n = snprintf(out, len, "%s %llu x %s", collx_coll_name(op->s.coll),
		     (unsigned long long)op->s.count, collx_dtype_name(op->s.dtype));
	if (reduces(op->s.coll) && n > 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, " %s", collx_redop_name(op->s.redop));
	if (rooted(op->s.coll) && n > 0 && (size_t)n < len)
		n += snprintf(out + n, len - n, " %s %u",
			      op->s.coll == COLLX_COLL_SEND ? "to" :
			      op->s.coll == COLLX_COLL_RECV ? "from" : "root", op->s.root);
	if ((op->s.flags & COLLX_SUBMIT_ALGO_MASK) && n > 0 && (size_t)n < len)
		snprintf(out + n, len - n, " algo %s",
			 collx_algo_name(op->s.flags & COLLX_SUBMIT_ALGO_MASK));
}

/* "<what> on rank R: <error>; rank F (host, addr), <phase> step S<tail>" */
static void set_failure(struct collx_comm *comm, const char *what, int err, uint32_t rank,
			uint32_t phase, uint32_t step, const char *tail)
{
	char who[160];

	collx_rank_desc(comm, rank, who, sizeof(who));
	if (phase == COLLX_PHASE_NONE)	/* between collectives: no step */
		collx_set_error(comm, "%s on rank %d: %s; %s%s", what, comm->rank,
				collx_strerror(err), who, tail);
	else
		collx_set_error(comm, "%s on rank %d: %s; %s, %s step %u%s", what,
				comm->rank, collx_strerror(err), who,
				collx_phase_name(phase), step, tail);
}

/*
 * SUBMIT said EPIPE: the comm failed before this op.  Say what failed it
 * (COMM_QUERY keeps the first failure), so that a submit racing a peer's
 * death names that peer like the op that saw it would have.
 */
static void log_earlier_failure(struct collx_comm *comm, const char *d)
{
	struct collx_comm_query q = {
		.size = sizeof(q),
		.comm_id = comm->comm_id,
	};
	char tail[64];

	if (!comm->abi11 || collx_ioctl(comm->fd, COLLX_IOC_COMM_QUERY, &q) ||
	    q.state != COLLX_COMM_STATE_ERROR || q.error >= 0) {
		collx_set_error(comm, "%s: comm %u is in its error state after an earlier failure; destroy it",
				d, comm->global_id);
		return;
	}
	if (!comm->async_error)
		comm->async_error = q.error;
	snprintf(tail, sizeof(tail), " (comm %u failed before this submit; destroy it)",
		 comm->global_id);
	set_failure(comm, d, q.error, q.failed_rank, q.phase, q.step, tail);
}

static void log_submit_error(struct collx_op *op, int err, int index, int n)
{
	struct collx_comm *comm = op->comm;
	char d[160];

	op_desc(op, d, sizeof(d));
	if (err == -EAGAIN) {
		/* flow control, not a failure: the caller reaps and retries */
		snprintf(comm->last_error, sizeof(comm->last_error),
			 "%s: comm %u has COLLX_MAX_OPS_PER_FD records outstanding: wait for some",
			 d, comm->global_id);
		TRACE(op_subsys(op), comm->rank, "%s", comm->last_error);
	} else if (err == -EPIPE)
		log_earlier_failure(comm, d);
	else if (err == -ECANCELED)
		collx_set_error(comm, "%s: comm %u was destroyed", d, comm->global_id);
	else if (n > 1)
		collx_set_error(comm, "group of %d on comm %u: entry %d (%s): %s%s", n,
				comm->global_id, index, d, collx_strerror(err),
				err == -EOPNOTSUPP && !comm->abi11 ?
				" (the module speaks ABI 1.0: ring allreduce only)" : "");
	else
		collx_set_error(comm, "%s: submit on comm %u: %s%s", d, comm->global_id,
				collx_strerror(err),
				err == -EOPNOTSUPP && !comm->abi11 ?
				" (the module speaks ABI 1.0: ring allreduce only)" : "");
}

/* At completion: what ran and how the memory went, as NCCL logs its
 * algorithm and protocol. */
static void log_done(const struct collx_op *op)
{
	struct collx_comm *comm = op->comm;
	char d[160], mem[96], what[192];
	const struct collx_completion *c = &op->c;

	op_desc(op, d, sizeof(d));
	if (c->status && op->refused)
		return;
	if (c->status) {
		/* the comm as debugfs, the tracepoints and collx-netmon name it */
		snprintf(what, sizeof(what), "%s op %llu of comm %u", d,
			 (unsigned long long)c->op_id, comm->global_id);
		set_failure(comm, what, c->status, c->failed_rank, c->phase, c->step, "");
		return;
	}
	collx_log_init();
	if (collx_log_level_cur < COLLX_LOG_INFO || !(collx_log_mask & op_subsys(op)))
		return;
	if (comm->abi11)
		collx_mem_path_str(c->mem, mem, sizeof(mem));
	else
		snprintf(mem, sizeof(mem), "%s (ABI 1.0)", op->in_mr ? "registered" : "bounced");
	collx_log(COLLX_LOG_INFO, comm->rank, "comm %u op %llu: %s, %llu bytes, algo %s, mem %s, %.1f us",
		  comm->global_id, (unsigned long long)c->op_id, d, (unsigned long long)c->bytes,
		  c->algo || comm->abi11 ? collx_algo_name(c->algo) : "ring (ABI 1.0)",
		  mem, (c->end_ns - c->start_ns) / 1e3);
}

/* ---- submission ---- */

static void trace_submit(const struct collx_op *op)
{
	struct collx_comm *comm = op->comm;
	char d[160];

	collx_log_init();
	if (collx_log_level_cur < COLLX_LOG_TRACE || !(collx_log_mask & op_subsys(op)))
		return;
	op_desc(op, d, sizeof(d));
	collx_log(COLLX_LOG_TRACE, comm->rank, "comm %u op %llu: %s, send %p (%s) recv %p (%s)",
		  comm->global_id, (unsigned long long)op->s.op_id, d,
		  (void *)(uintptr_t)op->s.sendbuf,
		  collx_mem_lookup(comm, (void *)(uintptr_t)op->s.sendbuf, 1) ? "registered" : "bounce",
		  (void *)(uintptr_t)op->s.recvbuf,
		  collx_mem_lookup(comm, (void *)(uintptr_t)op->s.recvbuf, 1) ? "registered" : "bounce");
}

/* With the lock held: ops [0, n) one SUBMIT each (ABI 1.0, or alone). */
static int submit_each(struct collx_comm *comm, struct collx_op **ops, int n, int *failed)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = collx_ioctl(comm->fd, COLLX_IOC_SUBMIT, &ops[i]->s);
		if (err) {
			*failed = i;
			return err;
		}
		op_link(comm, ops[i]);
		trace_submit(ops[i]);
	}
	return 0;
}

/* With the lock held: up to COLLX_MAX_GROUP ops in one call. */
static int submit_group(struct collx_comm *comm, struct collx_op **ops, int n, int *failed)
{
	struct collx_submit_group g = { .size = sizeof(g) };
	struct collx_submit *e;
	int i, err;

	e = malloc(n * sizeof(*e));
	if (!e) {
		*failed = 0;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		e[i] = ops[i]->s;
	g.count = n;
	g.entry_size = sizeof(*e);
	g.entries = (uintptr_t)e;
	g.error_index = n;
	err = collx_ioctl(comm->fd, COLLX_IOC_SUBMIT_GROUP, &g);
	if (err) {
		/* All or nothing: nothing of this call was queued. */
		*failed = g.error_index < (uint32_t)n ? (int)g.error_index : 0;
	} else {
		for (i = 0; i < n; i++) {
			ops[i]->s.op_id = e[i].op_id;
			op_link(comm, ops[i]);
			trace_submit(ops[i]);
		}
	}
	free(e);
	return err;
}

/* A send to this rank and the next recv from it, of the same size. */
static bool self_pair(const struct collx_comm *comm, const struct collx_op *s,
		      const struct collx_op *r)
{
	return s->s.coll == COLLX_COLL_SEND && r->s.coll == COLLX_COLL_RECV &&
	       s->s.root == (uint32_t)comm->rank && r->s.root == (uint32_t)comm->rank &&
	       s->s.count * collx_dtype_size(s->s.dtype) ==
	       r->s.count * collx_dtype_size(r->s.dtype);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void self_done(struct collx_op *op, uint64_t bytes, uint64_t t0, uint64_t t1)
{
	struct collx_completion c = {
		.comm_id = op->comm->comm_id,
		.failed_rank = COLLX_RANK_NONE,
		.phase = COLLX_PHASE_NONE,
		.algo = COLLX_ALGO_P2P,
		.bytes = bytes,
		.start_ns = t0,
		.end_ns = t1,
	};

	op_record(op, &c);
}

/*
 * With the lock held: in a group, a send to this rank and the recv from
 * it that matches it (in order, as NCCL matches them) are one copy, done
 * here; the module refuses a transfer to its own rank (EINVAL).  Both
 * complete now, with op_id 0 and mem 0 (no module memory path).  Returns
 * how many ops are left in @ops, in their order.
 */
static int self_p2p(struct collx_comm *comm, struct collx_op **ops, int n)
{
	int i, j, k = 0;

	for (i = 0; i < n; i++) {
		struct collx_op *op = ops[i];

		if (!op || op->s.coll != COLLX_COLL_SEND || op->s.root != (uint32_t)comm->rank)
			continue;
		for (j = 0; j < n; j++) {
			struct collx_op *r = ops[j];
			uint64_t bytes, t0;

			if (!r || r == op || r->s.coll != COLLX_COLL_RECV ||
			    r->s.root != (uint32_t)comm->rank)
				continue;
			if (!self_pair(comm, op, r))
				break;	/* the module says EINVAL */
			bytes = op->s.count * collx_dtype_size(op->s.dtype);
			t0 = now_ns();
			if (bytes)
				memmove((void *)(uintptr_t)r->s.recvbuf,
					(const void *)(uintptr_t)op->s.sendbuf, bytes);
			self_done(op, bytes, t0, now_ns());
			self_done(r, bytes, t0, now_ns());
			ops[i] = ops[j] = NULL;
			break;
		}
	}
	for (i = 0; i < n; i++)
		if (ops[i])
			ops[k++] = ops[i];
	return k;
}

int collx_op_submit(struct collx_comm *comm, struct collx_op **ops, int n)
{
	int done = 0, err = 0, failed = 0, chunk, i;
	bool group;

	pthread_mutex_lock(&comm->lock);
	if (n > 1 && !comm->dead)
		n = self_p2p(comm, ops, n);
	group = n > 1 && comm->abi11;
	if (comm->dead)
		err = -ECANCELED;
	while (!err && done < n) {
		chunk = n - done;
		if (group && chunk > COLLX_MAX_GROUP)
			chunk = COLLX_MAX_GROUP;
		failed = 0;
		err = group && chunk > 1 ? submit_group(comm, ops + done, chunk, &failed) :
		      submit_each(comm, ops + done, chunk, &failed);
		if (err) {
			log_submit_error(ops[done + failed], err, done + failed, n);
			/* ABI 1.0 queued the ops before @failed one by one. */
			if (!group)
				done += failed;
			break;
		}
		done += chunk;
	}
	if (err == -ECANCELED && !done)
		log_submit_error(ops[0], err, 0, n);
	if (err == -EPIPE && !comm->async_error)
		comm->async_error = -EPIPE;
	for (i = done; i < n; i++) {
		op_fail(ops[i], err);
		ops[i]->refused = true;
	}
	pthread_mutex_unlock(&comm->lock);
	return err;
}

/* ---- completion ---- */

/* One COLLX_IOC_WAIT for @op outside the lock; the lock is held on entry
 * and on return.  0 with the record taken, -EAGAIN still running. */
static int wait_once(struct collx_op *op, uint32_t timeout_ms)
{
	struct collx_comm *comm = op->comm;
	struct collx_wait w = { .size = sizeof(w), .op_id = op->s.op_id,
				.timeout_ms = timeout_ms };
	int fd = comm->fd, rc;

	op->waiting = true;
	collx_comm_fd_get(comm);
	pthread_mutex_unlock(&comm->lock);
	rc = collx_ioctl(fd, COLLX_IOC_WAIT, &w);
	pthread_mutex_lock(&comm->lock);
	op->waiting = false;
	collx_comm_fd_put(comm);
	pthread_cond_broadcast(&comm->cond);
	if (rc == -EAGAIN)
		return rc;
	if (rc)
		op_fail(op, rc);
	else
		op_done(op, &w.completion);
	return 0;
}

/* A test under the lock: COLLX_IOC_WAIT with timeout 0 never blocks. */
static void test_locked(struct collx_op *op)
{
	struct collx_wait w = { .size = sizeof(w), .op_id = op->s.op_id };
	int rc = collx_ioctl(op->comm->fd, COLLX_IOC_WAIT, &w);

	if (rc == -EAGAIN)
		return;
	if (rc)
		op_fail(op, rc);
	else
		op_done(op, &w.completion);
}

int collx_op_finish(struct collx_op *op, int timeout_ms, int *done,
		    struct collx_completion *c)
{
	struct collx_comm *comm = op->comm;
	int st;

	pthread_mutex_lock(&comm->lock);
	if (op->state == COLLX_OP_QUEUED) {
		pthread_mutex_unlock(&comm->lock);
		collx_set_error(comm, "wait: op is in a group that has not ended: collx_group_end() submits it");
		return -EINVAL;
	}
	while (op->state != COLLX_OP_DONE) {
		if (op->waiting) {
			/* destroy or the async-error probe has it: their
			 * wait is short, and marks it done */
			if (!timeout_ms) {
				pthread_mutex_unlock(&comm->lock);
				*done = 0;
				return 0;
			}
			pthread_cond_wait(&comm->cond, &comm->lock);
			continue;
		}
		if (!comm->fd_users) {
			op_fail(op, -ECANCELED);
			break;
		}
		if (!timeout_ms) {
			test_locked(op);
			if (op->state == COLLX_OP_DONE)
				break;
			pthread_mutex_unlock(&comm->lock);
			*done = 0;
			return 0;
		}
		if (wait_once(op, timeout_ms < 0 ? COLLX_WAIT_FOREVER : (uint32_t)timeout_ms) == -EAGAIN) {
			pthread_mutex_unlock(&comm->lock);
			*done = 0;
			return 0;
		}
	}
	pthread_mutex_unlock(&comm->lock);
	*done = 1;
	st = op->c.status;
	log_done(op);
	if (c)
		*c = op->c;
	collx_op_free(op);
	return st;
}

int collx_wait(struct collx_op *op, struct collx_completion *c)
{
	int done;

	if (!op)
		return -EINVAL;
	return collx_op_finish(op, -1, &done, c);
}

int collx_test(struct collx_op *op, int *done, struct collx_completion *c)
{
	if (!op || !done)
		return -EINVAL;
	return collx_op_finish(op, 0, done, c);
}

/* ---- what destroy and the probe take ---- */

static struct collx_op *first_unreaped(struct collx_comm *comm)
{
	struct collx_op *op;

	for (op = comm->ops; op; op = op->next)
		if (!op->reap_skip)
			return op;
	return NULL;
}

void collx_op_reap_all(struct collx_comm *comm, int budget_ms)
{
	int64_t deadline = collx_now_ms() + budget_ms;
	struct collx_op *op;

	while ((op = first_unreaped(comm))) {
		int64_t rem = deadline - collx_now_ms();

		if (op->waiting) {
			/* Its waiter gets the ECANCELED record; wait for it
			 * to leave the kernel, but not for ever. */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
			if (rem <= 0 ||
			    pthread_cond_timedwait(&comm->cond, &comm->lock, &ts) == ETIMEDOUT)
				op->reap_skip = op->waiting;
			continue;
		}
		if (wait_once(op, rem > 0 ? (uint32_t)rem : 0) == -EAGAIN)
			op_fail(op, -ECANCELED);
	}
}

void collx_op_poll(struct collx_comm *comm)
{
	struct collx_op *op, *next;

	for (op = comm->ops; op; op = next) {
		next = op->next;
		if (!op->waiting)
			test_locked(op);
	}
}
