// SPDX-License-Identifier: GPL-2.0
/*
 * What the out fields say, on a communicator of this node with itself
 * (ranks 0 and 1 on two fds): COMM_QUERY's ops_queued counts every op
 * submitted and not yet complete, a running one included, and a record's
 * bytes is this rank's output (a send's: its input), per collective and
 * rank: a reduce's non-root writes nothing and reports 0.  A 1-rank comm
 * cannot tell either apart (nothing waits, and input equals output).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "etest.h"

static int query(int fd, uint32_t comm, struct collx_comm_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->comm_id = comm;
	return et_ioctl(fd, COLLX_IOC_COMM_QUERY, q);
}

/* ops_queued on rank 0 after @ms; UINT32_MAX if the query failed. */
static uint32_t queued_after(const struct et_pair *p, unsigned int ms)
{
	struct collx_comm_query q;

	usleep(ms * 1000U);
	return query(p->fd[0], p->id[0], &q) ? UINT32_MAX : q.ops_queued;
}

static void ops_queued(void)
{
	struct collx_completion c[2];
	struct collx_submit s[2], r[2];
	uint32_t got[3];
	struct et_pair p;
	int err, i;

	if (!et_pair_or_fail(&p, "COMM_QUERY: a 2-rank comm of this node for ops_queued"))
		return;
	got[0] = queued_after(&p, 0);
	et_allreduce(&s[0], p.id[0], 1024, et.buf, et.buf + 8192);
	et_allreduce(&s[1], p.id[0], 1024, et.buf + 16384, et.buf + 24576);
	err = et_submit(p.fd[0], &s[0]);
	/* The first has started (and waits for rank 1) long before 300 ms. */
	got[1] = err ? UINT32_MAX : queued_after(&p, 300 * fz_slowdown());
	if (!err)
		err = et_submit(p.fd[0], &s[1]);
	got[2] = err ? UINT32_MAX : queued_after(&p, 0);
	et_ok(!err && got[0] == 0 && got[1] == 1 && got[2] == 2,
	      err ? et_err(err) : "wrong count",
	      "COMM_QUERY: ops_queued counts a started collective still waiting for its peer (%u, %u, %u; want 0, 1, 2)",
	      got[0], got[1], got[2]);
	for (i = 0; !err && i < 2; i++) {
		et_allreduce(&r[i], p.id[1], 1024, et.buf + 1048576 + i * 16384,
			     et.buf + 1048576 + i * 16384 + 8192);
		err = et_submit(p.fd[1], &r[i]);
	}
	for (i = 0; !err && i < 2; i++) {
		err = et_wait(p.fd[0], s[i].op_id, 10000 * fz_slowdown(), &c[0]);
		if (!err)
			err = et_wait(p.fd[1], r[i].op_id,
				      10000 * fz_slowdown(), &c[1]);
		if (!err && (c[0].status || c[1].status))
			err = -(c[0].status ? c[0].status : c[1].status);
	}
	/*
	 * The engine takes an op off the count just after it queues the
	 * op's record (the uapi says so): a query racing that sees it still
	 * counted, for as long as the engine's lock is held.
	 */
	for (i = 0; i < 100 * (int)fz_slowdown(); i++) {
		got[0] = err ? UINT32_MAX : queued_after(&p, i ? 20 : 0);
		if (got[0] != 1)
			break;
	}
	et_ok(!err && got[0] == 0, err ? et_err(err) : "wrong count",
	      "COMM_QUERY: ops_queued is 0 once both collectives completed on both ranks (%u)",
	      got[0]);
	et_pair_close(&p);
}

struct shape {
	const char *name;
	uint32_t coll;
	uint32_t dtype;
	uint32_t root;		/* rooted: the root; send on 0, recv on 1 */
	uint64_t count;
	uint64_t want[2];	/* each rank's completion bytes */
};

/* count 1000 (100 for the gathers), 2 ranks. */
static const struct shape shapes[] = {
	{ "reduce_scatter of 1000 int64", COLLX_COLL_REDUCE_SCATTER,
	  COLLX_INT64, 0, 1000, { 8000, 8000 } },
	{ "reduce of 1000 fp32 to rank 1", COLLX_COLL_REDUCE, COLLX_FP32, 1,
	  1000, { 0, 4000 } },
	{ "allgather of 100 int32", COLLX_COLL_ALLGATHER, COLLX_INT32, 0, 100,
	  { 800, 800 } },
	{ "alltoall of 100 int32", COLLX_COLL_ALLTOALL, COLLX_INT32, 0, 100,
	  { 800, 800 } },
	{ "broadcast of 1000 uint8 from rank 0", COLLX_COLL_BROADCAST,
	  COLLX_UINT8, 0, 1000, { 1000, 1000 } },
	{ "send of 100 fp64 from rank 0 to rank 1", COLLX_COLL_SEND,
	  COLLX_FP64, 1, 100, { 800, 800 } },
};

/* The submit of @sh on @rank; the buffers lie 1 MiB apart per rank. */
static void shape_submit(const struct shape *sh, const struct et_pair *p,
			 uint32_t rank, struct collx_submit *s)
{
	uint8_t *in = et.buf + rank * 2 * 1048576;
	uint8_t *out = in + 1048576;

	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->comm_id = p->id[rank];
	s->coll = sh->coll;
	s->dtype = sh->dtype;
	s->count = sh->count;
	s->root = sh->root;
	s->sendbuf = (uint64_t)(uintptr_t)in;
	s->recvbuf = (uint64_t)(uintptr_t)out;
	if (sh->coll == COLLX_COLL_REDUCE && rank != sh->root)
		s->recvbuf = 0;		/* a non-root writes nothing */
	if (sh->coll == COLLX_COLL_BROADCAST && rank != sh->root)
		s->sendbuf = 0;
	if (sh->coll == COLLX_COLL_SEND && rank == 1) {
		s->coll = COLLX_COLL_RECV;	/* the other half of the pair */
		s->root = 0;
		s->sendbuf = 0;
	} else if (sh->coll == COLLX_COLL_SEND) {
		s->recvbuf = 0;
	}
}

static void completion_bytes(void)
{
	struct collx_completion c[2];
	struct collx_submit s[2];
	struct et_pair p;
	unsigned int i;
	int err, r;

	if (!et_pair_or_fail(&p, "completion: a 2-rank comm of this node for bytes"))
		return;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *sh = &shapes[i];

		memset(c, 0, sizeof(c));
		err = 0;
		for (r = 0; !err && r < 2; r++) {
			shape_submit(sh, &p, (uint32_t)r, &s[r]);
			err = et_submit(p.fd[r], &s[r]);
		}
		for (r = 0; !err && r < 2; r++) {
			err = et_wait(p.fd[r], s[r].op_id, 10000 * fz_slowdown(),
				      &c[r]);
			if (!err && c[r].status)
				err = -c[r].status;
		}
		et_ok(!err && c[0].bytes == sh->want[0] &&
		      c[1].bytes == sh->want[1],
		      err ? et_err(err) : "wrong bytes",
		      "completion: bytes of a 2-rank %s is each rank's output (%llu, %llu; want %llu, %llu)",
		      sh->name, (unsigned long long)c[0].bytes,
		      (unsigned long long)c[1].bytes,
		      (unsigned long long)sh->want[0],
		      (unsigned long long)sh->want[1]);
		if (err)
			break;
	}
	et_pair_close(&p);
}

void et_field_cases(void)
{
	ops_queued();
	completion_bytes();
}
