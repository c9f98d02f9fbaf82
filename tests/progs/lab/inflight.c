// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab inflight: 16 collectives of every kind, algorithm and memory
 * path submitted at once on one communicator, then reaped in whatever
 * order they end through poll() on collx_comm_fd() and collx_test(),
 * every element checked.  Needs 2 ranks or more.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "benchcoll.h"
#include "benchdata.h"
#include "lab.h"

#define NMIX	15	/* bench ops; sendrecv is two collx ops: 16 in all */

struct mix {
	enum bench_kind kind;
	enum collx_algo algo;
	enum collx_dtype dtype;
	enum collx_redop redop;
	int root;		/* -1: last rank */
	size_t count;
	bool inplace, reg;
};

static const struct mix mixes[NMIX] = {
	{ BENCH_ALLREDUCE, COLLX_ALGO_RING, COLLX_FP32, COLLX_OP_SUM, 0, 70001, false, true },
	{ BENCH_ALLREDUCE, COLLX_ALGO_TREE, COLLX_INT32, COLLX_OP_MAX, 0, 1021, true, false },
	{ BENCH_ALLREDUCE, COLLX_ALGO_RD, COLLX_BF16, COLLX_OP_AVG, 0, 13, false, false },
	{ BENCH_BROADCAST, COLLX_ALGO_TREE, COLLX_FP64, 0, -1, 4099, false, true },
	{ BENCH_BROADCAST, COLLX_ALGO_RING, COLLX_UINT8, 0, 0, 7, true, false },
	{ BENCH_REDUCE, COLLX_ALGO_RING, COLLX_INT64, COLLX_OP_SUM, 0, 509, false, false },
	{ BENCH_REDUCE, COLLX_ALGO_TREE, COLLX_FP16, COLLX_OP_MIN, -1, 1021, true, true },
	{ BENCH_ALLGATHER, COLLX_ALGO_RD, COLLX_INT32, 0, 0, 257, false, true },
	{ BENCH_ALLGATHER, COLLX_ALGO_RING, COLLX_FP8_E4M3, 0, 0, 31, true, false },
	{ BENCH_REDUCE_SCATTER, COLLX_ALGO_RING, COLLX_FP32, COLLX_OP_PROD, 0, 127, false, false },
	{ BENCH_REDUCE_SCATTER, COLLX_ALGO_RD, COLLX_UINT32, COLLX_OP_SUM, 0, 64, true, true },
	{ BENCH_ALLTOALL, COLLX_ALGO_PAIRWISE, COLLX_INT8, 0, 0, 100, false, false },
	{ BENCH_ALLTOALL, COLLX_ALGO_RING, COLLX_FP32, 0, 0, 1000, false, true },
	{ BENCH_BARRIER, COLLX_ALGO_AUTO, COLLX_INT8, 0, 0, 0, false, false },
	{ BENCH_SENDRECV, COLLX_ALGO_P2P, COLLX_FP64, 0, 0, 3001, false, true },
};

int lab_inflight(void)
{
	struct collx_comm *comm = lab_init();
	int n = collx_comm_size(comm), fd = collx_comm_fd(comm), i, k, nops = 0, left;
	struct bench_op o[NMIX];
	struct collx_op *ops[2 * NMIX];
	int owner[2 * NMIX];
	void *send[NMIX], *recv[NMIX], *h;
	uint64_t t0 = lab_now_ns(), first_end = 0, last_start = 0;
	char why[160];
	long long wrong = 0;

	if (n < 2)
		FAIL("inflight needs 2 ranks or more");
	for (i = 0; i < NMIX; i++) {
		size_t s, r, bytes;

		o[i] = (struct bench_op){ .kind = mixes[i].kind, .algo = mixes[i].algo,
					  .dtype = mixes[i].dtype, .redop = mixes[i].redop,
					  .root = mixes[i].root < 0 ? n - 1 : mixes[i].root,
					  .count = mixes[i].count, .inplace = mixes[i].inplace,
					  .nranks = n, .rank = lab_rank, .rep = 100 + i };
		bench_op_elems(&o[i], &s, &r);
		bytes = ((s > r ? s : r) * 8 + 4095) & ~(size_t)4095;
		send[i] = lab_alloc(bytes ? bytes : 4096);
		recv[i] = lab_alloc(bytes ? bytes : 4096);
		if (mixes[i].reg && (collx_mem_register(comm, send[i], bytes, &h) ||
				     collx_mem_register(comm, recv[i], bytes, &h)))
			FAIL("register: %s", collx_comm_last_error(comm));
		bench_op_fill(&o[i], send[i], recv[i]);
	}
	for (i = 0; i < NMIX; i++) {
		int m;

		if (bench_op_start(comm, &o[i], send[i], recv[i], ops + nops, &m))
			FAIL("submit %d (%s): %s", i, bench_coll_get(o[i].kind)->name,
			     collx_comm_last_error(comm));
		for (k = 0; k < m; k++)
			owner[nops + k] = i;
		nops += m;
	}
	if (nops != 16)
		FAIL("%d collectives in flight, meant 16", nops);
	/* Reap in completion order: poll says one is ready, test them all. */
	for (left = nops; left; ) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (lab_now_ns() - t0 > 120000000000ull)
			FAIL("%d of 16 collectives still running after 120 s", left);
		if (poll(&p, 1, 1000) < 0)
			FAIL("poll: %m");
		for (k = 0; k < nops; k++) {
			struct collx_completion c;
			int done = 0, err;

			if (!ops[k])
				continue;
			err = collx_test(ops[k], &done, &c);
			if (!done)
				continue;
			if (err)
				FAIL("collective %d (%s) ended %s: %s", owner[k],
				     bench_coll_get(o[owner[k]].kind)->name, collx_strerror(err),
				     collx_comm_last_error(comm));
			ops[k] = NULL;
			left--;
			first_end = !first_end || c.end_ns < first_end ? c.end_ns : first_end;
			last_start = c.start_ns > last_start ? c.start_ns : last_start;
		}
	}
	for (i = 0; i < NMIX; i++) {
		size_t w = bench_op_check(&o[i], send[i], recv[i], why, sizeof(why));

		if (w)
			fprintf(stderr, "inflight: rank %d: WRONG %s %s %s: %s\n", lab_rank,
				bench_coll_get(o[i].kind)->name, collx_algo_name(o[i].algo),
				collx_dtype_name(o[i].dtype), why);
		wrong += (long long)w;
	}
	printf("rank %d: 16 collectives of 8 kinds in flight at once, reaped through poll() on the comm fd in %.1f s; %s; %lld wrong\n",
	       lab_rank, (lab_now_ns() - t0) / 1e9,
	       last_start > first_end ? "the last started after the first ended" :
	       "all were moving data at once", wrong);
	collx_comm_destroy(comm);
	return wrong ? 1 : 0;
}
