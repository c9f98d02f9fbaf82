// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab load NCOMMS NOPS: NCOMMS comms in this process, and NOPS
 * rounds in which every one of them has an allreduce in flight at once.
 * The lab case runs several such processes per node, each its own job on
 * its own rendezvous port, so the module carries processes x NCOMMS comms
 * per node.  Rounds rotate dtype, op and count; even comms are registered
 * (zero copy), odd ones bounced; every element of every result is checked.
 * Bounded in count and in time (LOAD_SECS, 600 s by default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchdata.h"
#include "lab.h"

#define LOAD_MAX_COMMS	64
#define LOAD_MAX_COUNT	4099

static const struct {
	enum collx_dtype dt;
	enum collx_redop op;
	size_t count;
} rounds[] = {
	{ COLLX_FP32, COLLX_OP_SUM, 1021 },
	{ COLLX_INT32, COLLX_OP_MAX, 4099 },
	{ COLLX_INT64, COLLX_OP_MIN, 257 },
	{ COLLX_INT32, COLLX_OP_SUM, 1 },
};

struct load_comm {
	struct collx_comm *comm;
	void *send, *recv, *h[2];
	struct collx_op *op;
};

int lab_load(int argc, char **argv)
{
	const char *s = getenv("LOAD_SECS");
	uint64_t t0 = lab_now_ns(), limit_ns;
	size_t bytes = LOAD_MAX_COUNT * 8;
	struct load_comm *c;
	int ncomms, nops, n, i, it;
	uint64_t done = 0;

	if (argc != 2)
		FAIL("usage: load NCOMMS NOPS");
	ncomms = atoi(argv[0]);
	nops = atoi(argv[1]);
	if (ncomms < 1 || ncomms > LOAD_MAX_COMMS || nops < 1)
		FAIL("load: NCOMMS 1..%d and NOPS >= 1", LOAD_MAX_COMMS);
	limit_ns = (uint64_t)(s ? atoi(s) : 600) * 1000000000ull;
	c = calloc(ncomms, sizeof(*c));
	if (!c)
		FAIL("out of memory");
	for (i = 0; i < ncomms; i++) {
		c[i].comm = lab_init();
		c[i].send = lab_alloc(bytes);
		c[i].recv = lab_alloc(bytes);
		if (i % 2 == 0 &&
		    (collx_mem_register(c[i].comm, c[i].send, bytes, &c[i].h[0]) ||
		     collx_mem_register(c[i].comm, c[i].recv, bytes, &c[i].h[1])))
			FAIL("comm %d: register: %s", i, collx_comm_last_error(c[i].comm));
	}
	n = collx_comm_size(c[0].comm);
	for (it = 0; it < nops; it++) {
		const int k = it % (int)(sizeof(rounds) / sizeof(rounds[0]));

		if (lab_now_ns() - t0 > limit_ns)
			FAIL("load: only %d of %d rounds in %s s", it, nops, s ? s : "600");
		for (i = 0; i < ncomms; i++) {
			bench_fill(c[i].send, rounds[k].count, rounds[k].dt,
				   rounds[k].op, n, lab_rank, it + i);
			memset(c[i].recv, 0, rounds[k].count *
			       collx_dtype_size(rounds[k].dt));
			if (collx_allreduce_async(c[i].comm, c[i].send, c[i].recv,
						  rounds[k].count, rounds[k].dt,
						  rounds[k].op, &c[i].op))
				FAIL("round %d comm %d: submit: %s", it, i,
				     collx_comm_last_error(c[i].comm));
		}
		/* Wait in another order than submitted: the comms are independent. */
		for (i = ncomms - 1; i >= 0; i--) {
			size_t first = 0, wrong;

			if (collx_wait(c[i].op, NULL))
				FAIL("round %d comm %d: %s", it, i,
				     collx_comm_last_error(c[i].comm));
			wrong = bench_check(c[i].recv, rounds[k].count, rounds[k].dt,
					    rounds[k].op, n, it + i, &first);
			if (wrong)
				FAIL("round %d comm %d: %zu of %zu elements wrong, first at %zu",
				     it, i, wrong, rounds[k].count, first);
			done++;
		}
	}
	for (i = 0; i < ncomms; i++) {
		if (i % 2 == 0 &&
		    (collx_mem_deregister(c[i].comm, c[i].h[0]) ||
		     collx_mem_deregister(c[i].comm, c[i].h[1])))
			FAIL("comm %d: deregister failed", i);
		if (collx_comm_destroy(c[i].comm))
			FAIL("comm %d: destroy failed", i);
		free(c[i].send);
		free(c[i].recv);
	}
	free(c);
	printf("rank %d: %d comms x %d rounds: %llu allreduces exact in %.1f s\n",
	       lab_rank, ncomms, nops, (unsigned long long)done,
	       (lab_now_ns() - t0) / 1e9);
	return 0;
}
