/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Every collective as collx-bench and the lab programs run it: nccl-tests'
 * names, buffer sizes and bus-bandwidth factors, in-place layouts, input
 * data, exact checks, and starting one through libcollx.
 */
#ifndef COLLX_BENCHCOLL_H
#define COLLX_BENCHCOLL_H

#include <stdbool.h>
#include <stddef.h>

#include "collx.h"

enum bench_kind {
	BENCH_ALLREDUCE,
	BENCH_ALLGATHER,
	BENCH_BROADCAST,
	BENCH_REDUCE,
	BENCH_REDUCE_SCATTER,
	BENCH_ALLTOALL,
	BENCH_SENDRECV,		/* send to rank + 1, recv from rank - 1, grouped */
	BENCH_BARRIER,
	BENCH_KIND_COUNT,
};

struct bench_coll {
	enum bench_kind kind;
	const char *name;	/* "allreduce" (-t) */
	const char *perf;	/* "all_reduce_perf" (argv[0]), NULL: none */
	bool has_op;		/* reduces: the redop column means something */
	bool has_root;
	bool inplace;		/* has an in-place form */
};

const struct bench_coll *bench_coll_get(enum bench_kind k);
/* "allreduce", "all_reduce", "all_reduce_perf", "sendrecv" ...; NULL */
const struct bench_coll *bench_coll_find(const char *name);
/* The algorithms that can run @k, AUTO first; returns how many. */
int bench_coll_algos(enum bench_kind k, enum collx_algo *out);

/* One instance of a collective on one rank. */
struct bench_op {
	enum bench_kind kind;
	enum collx_dtype dtype;
	enum collx_redop redop;
	int root;
	size_t count;		/* nccl-tests' count: per rank for allgather,
				 * reduce_scatter and alltoall */
	bool inplace;
	int nranks, rank;
	int rep;
	enum collx_algo algo;
};

/* nccl-tests' getCollByteCount(): the count a size in bytes gives. */
size_t bench_count_from_bytes(enum bench_kind k, size_t bytes, size_t esize, int nranks);
/* Elements of the send and receive buffers @o needs. */
void bench_op_elems(const struct bench_op *o, size_t *send, size_t *recv);
/* The size column: bytes of the larger buffer. */
size_t bench_op_bytes(const struct bench_op *o);
/* algbw = S / t (GB/s), busbw = algbw x nccl-tests' factor. */
void bench_op_bw(const struct bench_op *o, double sec, double *algbw, double *busbw);
double bench_busbw_factor(enum bench_kind k, int nranks);

/* Where @o reads and writes, in @send and @recv (in place: within @recv). */
void bench_op_bufs(const struct bench_op *o, void *send, void *recv, void **s, void **r);
/* Fill this rank's input and poison its output. */
void bench_op_fill(const struct bench_op *o, void *send, void *recv);
/* Wrong elements after @o ran (output, and an out-of-place input that
 * changed); the first in @why. */
size_t bench_op_check(const struct bench_op *o, const void *send, const void *recv,
		      char *why, size_t len);
/* Start @o; its ops (at most 2) in @ops.  0 or a libcollx error. */
int bench_op_start(struct collx_comm *comm, const struct bench_op *o, void *send,
		   void *recv, struct collx_op **ops, int *nops);

#endif
