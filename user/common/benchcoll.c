// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Every collective as the benchmark and the lab run it; see benchcoll.h. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "benchcoll.h"
#include "benchdata.h"

static const struct bench_coll colls[BENCH_KIND_COUNT] = {
	[BENCH_ALLREDUCE] = { BENCH_ALLREDUCE, "allreduce", "all_reduce_perf", true, false, true },
	[BENCH_ALLGATHER] = { BENCH_ALLGATHER, "allgather", "all_gather_perf", false, false, true },
	[BENCH_BROADCAST] = { BENCH_BROADCAST, "broadcast", "broadcast_perf", false, true, true },
	[BENCH_REDUCE] = { BENCH_REDUCE, "reduce", "reduce_perf", true, true, true },
	[BENCH_REDUCE_SCATTER] = { BENCH_REDUCE_SCATTER, "reduce_scatter", "reduce_scatter_perf",
				   true, false, true },
	[BENCH_ALLTOALL] = { BENCH_ALLTOALL, "alltoall", "alltoall_perf", false, false, false },
	[BENCH_SENDRECV] = { BENCH_SENDRECV, "sendrecv", "sendrecv_perf", false, false, false },
	[BENCH_BARRIER] = { BENCH_BARRIER, "barrier", NULL, false, false, false },
};

const struct bench_coll *bench_coll_get(enum bench_kind k)
{
	return (unsigned int)k < BENCH_KIND_COUNT ? &colls[k] : NULL;
}

/* "all_reduce" and "allreduce" are the same name. */
static bool same_name(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_')
			a++;
		while (*b == '_')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if ((*a | 0x20) != (*b | 0x20))
			return false;
		a++;
		b++;
	}
}

const struct bench_coll *bench_coll_find(const char *name)
{
	char base[64];
	size_t n = strlen(name);
	int k;

	snprintf(base, sizeof(base), "%s", name);
	if (n > 5 && n < sizeof(base) && !strcmp(base + n - 5, "_perf"))
		base[n - 5] = 0;
	for (k = 0; k < BENCH_KIND_COUNT; k++)
		if (same_name(base, colls[k].name))
			return &colls[k];
	return NULL;
}

int bench_coll_algos(enum bench_kind k, enum collx_algo *out)
{
	static const enum collx_algo algos[BENCH_KIND_COUNT][4] = {
		[BENCH_ALLREDUCE] = { COLLX_ALGO_RING, COLLX_ALGO_TREE, COLLX_ALGO_RD },
		[BENCH_ALLGATHER] = { COLLX_ALGO_RING, COLLX_ALGO_RD },
		[BENCH_BROADCAST] = { COLLX_ALGO_RING, COLLX_ALGO_TREE },
		[BENCH_REDUCE] = { COLLX_ALGO_RING, COLLX_ALGO_TREE },
		[BENCH_REDUCE_SCATTER] = { COLLX_ALGO_RING, COLLX_ALGO_RD },
		[BENCH_ALLTOALL] = { COLLX_ALGO_RING, COLLX_ALGO_PAIRWISE },
		[BENCH_SENDRECV] = { COLLX_ALGO_P2P },
		[BENCH_BARRIER] = { COLLX_ALGO_RD },
	};
	int n = 0, i;

	out[n++] = COLLX_ALGO_AUTO;
	for (i = 0; i < 4 && algos[k][i]; i++)
		out[n++] = algos[k][i];
	return n;
}

size_t bench_count_from_bytes(enum bench_kind k, size_t bytes, size_t esize, int nranks)
{
	size_t count = bytes / esize;

	/* nccl-tests cuts the per-rank part to whole 16-byte vectors */
	if (k == BENCH_ALLGATHER || k == BENCH_REDUCE_SCATTER || k == BENCH_ALLTOALL)
		return (count / nranks) & ~(16 / esize - 1);
	return k == BENCH_BARRIER ? 0 : count;
}

void bench_op_elems(const struct bench_op *o, size_t *send, size_t *recv)
{
	size_t c = o->count, n = (size_t)o->nranks;

	*send = *recv = c;
	switch (o->kind) {
	case BENCH_ALLGATHER:
		*recv = c * n;
		break;
	case BENCH_REDUCE_SCATTER:
		*send = c * n;
		break;
	case BENCH_ALLTOALL:
		*send = *recv = c * n;
		break;
	case BENCH_BARRIER:
		*send = *recv = 0;
		break;
	default:
		break;
	}
}

size_t bench_op_bytes(const struct bench_op *o)
{
	size_t s, r;

	bench_op_elems(o, &s, &r);
	return (s > r ? s : r) * collx_dtype_size(o->dtype);
}

double bench_busbw_factor(enum bench_kind k, int nranks)
{
	switch (k) {
	case BENCH_ALLREDUCE:
		return 2.0 * (nranks - 1) / nranks;
	case BENCH_ALLGATHER:
	case BENCH_REDUCE_SCATTER:
	case BENCH_ALLTOALL:
		return (double)(nranks - 1) / nranks;
	case BENCH_BARRIER:
		return 0;
	default:
		return 1;
	}
}

void bench_op_bw(const struct bench_op *o, double sec, double *algbw, double *busbw)
{
	double bytes = (double)o->count * collx_dtype_size(o->dtype);

	/* nccl-tests' S: count x size, times nranks where count is a part */
	if (o->kind == BENCH_ALLGATHER || o->kind == BENCH_REDUCE_SCATTER ||
	    o->kind == BENCH_ALLTOALL)
		bytes *= o->nranks;
	*algbw = sec > 0 ? bytes / 1.0e9 / sec : 0;
	*busbw = *algbw * bench_busbw_factor(o->kind, o->nranks);
}

void bench_op_bufs(const struct bench_op *o, void *send, void *recv, void **s, void **r)
{
	size_t part = o->count * collx_dtype_size(o->dtype);

	*s = send;
	*r = recv;
	if (o->kind == BENCH_BARRIER) {
		*s = *r = NULL;
		return;
	}
	if (!o->inplace)
		return;
	*s = recv;
	if (o->kind == BENCH_ALLGATHER)
		*s = (char *)recv + o->rank * part;
	else if (o->kind == BENCH_REDUCE_SCATTER)
		*r = (char *)recv + o->rank * part;
}

/* Whether this rank's send buffer is an input of @o. */
static bool has_input(const struct bench_op *o)
{
	return o->kind != BENCH_BARRIER && (o->kind != BENCH_BROADCAST || o->rank == o->root);
}

/* Element @i of this rank's input. */
static long input_value(const struct bench_op *o, size_t i)
{
	switch (o->kind) {
	case BENCH_ALLREDUCE:
	case BENCH_REDUCE:
	case BENCH_REDUCE_SCATTER:
		return bench_value(o->dtype, o->redop, o->nranks, o->rank, i, o->rep);
	default:
		return bench_gen(o->dtype, o->rank, i, o->rep);
	}
}

/* Element @i of this rank's output, and whether it has one there. */
static bool output_value(const struct bench_op *o, size_t i, double *v)
{
	size_t c = o->count;

	switch (o->kind) {
	case BENCH_ALLREDUCE:
		*v = bench_expected(o->dtype, o->redop, o->nranks, i, o->rep);
		return true;
	case BENCH_REDUCE:
		*v = bench_expected(o->dtype, o->redop, o->nranks, i, o->rep);
		return o->rank == o->root;
	case BENCH_REDUCE_SCATTER:
		*v = bench_expected(o->dtype, o->redop, o->nranks, o->rank * c + i, o->rep);
		return true;
	case BENCH_ALLGATHER:
		*v = (double)bench_gen(o->dtype, (int)(i / c), i % c, o->rep);
		return true;
	case BENCH_BROADCAST:
		*v = (double)bench_gen(o->dtype, o->root, i, o->rep);
		return true;
	case BENCH_ALLTOALL:
		*v = (double)bench_gen(o->dtype, (int)(i / c), o->rank * c + i % c, o->rep);
		return true;
	case BENCH_SENDRECV:
		*v = (double)bench_gen(o->dtype, (o->rank + o->nranks - 1) % o->nranks, i, o->rep);
		return true;
	default:
		return false;
	}
}

void bench_op_fill(const struct bench_op *o, void *send, void *recv)
{
	size_t esz = collx_dtype_size(o->dtype), ns, nr, i;
	void *s, *r;

	bench_op_elems(o, &ns, &nr);
	bench_op_bufs(o, send, recv, &s, &r);
	if (!s && !r)
		return;
	memset(recv, 0xa5, nr > ns || !o->inplace ? nr * esz : ns * esz);
	if (has_input(o))
		for (i = 0; i < ns; i++)
			bench_store(s, i, o->dtype, (double)input_value(o, i));
}

size_t bench_op_check(const struct bench_op *o, const void *send, const void *recv,
		      char *why, size_t len)
{
	size_t ns, nr, i, wrong = 0;
	void *s, *r;
	double want;

	if (why && len)
		why[0] = 0;
	bench_op_elems(o, &ns, &nr);
	bench_op_bufs(o, (void *)send, (void *)recv, &s, &r);
	if (!r)
		return 0;
	for (i = 0; i < nr; i++) {
		double got = bench_load(r, i, o->dtype);

		if (!output_value(o, i, &want) || got == want)
			continue;
		if (!wrong++ && why)
			snprintf(why, len, "element %zu is %g, want %g", i, got, want);
	}
	if (o->inplace || !has_input(o))
		return wrong;
	for (i = 0; i < ns; i++) {
		double got = bench_load(s, i, o->dtype);

		want = (double)input_value(o, i);
		if (got == want)
			continue;
		if (!wrong++ && why)
			snprintf(why, len, "send buffer element %zu changed to %g, was %g", i, got, want);
	}
	return wrong;
}

int bench_op_start(struct collx_comm *comm, const struct bench_op *o, void *send,
		   void *recv, struct collx_op **ops, int *nops)
{
	static const enum collx_coll coll_of[BENCH_KIND_COUNT] = {
		[BENCH_ALLREDUCE] = COLLX_COLL_ALLREDUCE,
		[BENCH_ALLGATHER] = COLLX_COLL_ALLGATHER,
		[BENCH_BROADCAST] = COLLX_COLL_BROADCAST,
		[BENCH_REDUCE] = COLLX_COLL_REDUCE,
		[BENCH_REDUCE_SCATTER] = COLLX_COLL_REDUCE_SCATTER,
		[BENCH_ALLTOALL] = COLLX_COLL_ALLTOALL,
		[BENCH_BARRIER] = COLLX_COLL_BARRIER,
	};
	struct collx_args a = {
		.dtype = o->dtype, .redop = o->redop, .root = o->root,
		.count = o->count, .algo = o->algo,
	};
	void *s, *r;
	int err, end;

	*nops = 0;
	bench_op_bufs(o, send, recv, &s, &r);
	a.sendbuf = s;
	a.recvbuf = r;
	if (o->kind != BENCH_SENDRECV) {
		a.coll = coll_of[o->kind];
		if (o->kind == BENCH_BARRIER)
			a.dtype = COLLX_INT8;
		err = collx_submit(comm, &a, &ops[0]);
		*nops = !err;
		return err;
	}
	/* nccl-tests' sendrecv: one grouped send right and recv left */
	collx_group_start();
	a.coll = COLLX_COLL_SEND;
	a.root = (o->rank + 1) % o->nranks;
	a.recvbuf = NULL;
	err = collx_submit(comm, &a, &ops[*nops]);
	if (!err)
		(*nops)++;
	a.coll = COLLX_COLL_RECV;
	a.root = (o->rank + o->nranks - 1) % o->nranks;
	a.sendbuf = NULL;
	a.recvbuf = r;
	if (!err) {
		err = collx_submit(comm, &a, &ops[*nops]);
		if (!err)
			(*nops)++;
	}
	end = collx_group_end();
	return err ? err : end;
}
