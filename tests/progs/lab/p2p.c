// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab ringp2p COUNT: every rank sends COUNT floats (more than the
 * kernel can stage) to its right neighbour and receives as many from its
 * left, send first.  Without a group the send waits for a recv its peer
 * never posts (it is in its own send): the deadlock ends at the comm's
 * timeout, the error naming a peer (never the rank itself) in phase p2p.  In a group
 * (collx_group_start/end: one COLLX_IOC_SUBMIT_GROUP) the same pattern
 * completes, bounced and registered, every element checked.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchdata.h"
#include "lab.h"

static void fill(float *buf, size_t count, int src, int rep)
{
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = (float)bench_gen(COLLX_FP32, src, i, rep);
}

static size_t wrong(const float *buf, size_t count, int src, int rep)
{
	size_t i, w = 0;

	for (i = 0; i < count; i++)
		w += buf[i] != (float)bench_gen(COLLX_FP32, src, i, rep);
	return w;
}

static void deadlock(size_t count, int timeout_ms)
{
	struct collx_completion c;
	struct collx_comm *comm;
	struct collx_op *op;
	float *s = lab_alloc(count * 4);
	int n, right, err;
	uint64_t t0;
	char ms[16];

	snprintf(ms, sizeof(ms), "%d", timeout_ms);
	setenv("COLLX_TIMEOUT_MS", ms, 1);
	comm = lab_init();
	unsetenv("COLLX_TIMEOUT_MS");
	n = collx_comm_size(comm);
	right = (lab_rank + 1) % n;
	fill(s, count, lab_rank, 1);
	t0 = lab_now_ns();
	/* the recv would come next, once the send is done: it never is */
	if (collx_send_async(comm, s, count, COLLX_FP32, right, &op))
		FAIL("send: %s", collx_comm_last_error(comm));
	err = collx_wait(op, &c);
	printf("rank %d: ungrouped send of %zu B to rank %d ended after %.1f s: %s, failed_rank %d, phase %s\n",
	       lab_rank, count * 4, right, (lab_now_ns() - t0) / 1e9,
	       err ? collx_strerror(err) : "done", (int)c.failed_rank, collx_phase_name(c.phase));
	if (!err)
		FAIL("the send completed without its recv: no deadlock to show");
	if (err != -ETIMEDOUT && err != -ECONNRESET)
		FAIL("the deadlock ended %s, want ETIMEDOUT (or ECONNRESET)", collx_strerror(err));
	/* The first rank to time out names its right neighbour and tells
	 * the others, who repeat it unless it names themselves; then they
	 * name whom they wait for.  Never oneself, never nobody. */
	if (c.failed_rank >= (uint32_t)n || c.failed_rank == (uint32_t)lab_rank ||
	    c.phase != COLLX_PHASE_P2P)
		FAIL("it names rank %d in phase %s, want another rank in p2p", (int)c.failed_rank,
		     collx_phase_name(c.phase));
	collx_comm_destroy(comm);
	free(s);
}

static void grouped(struct collx_comm *comm, size_t count, bool reg, int rep)
{
	int n = collx_comm_size(comm), right = (lab_rank + 1) % n, left = (lab_rank + n - 1) % n;
	size_t bytes = (count * 4 + 4095) & ~(size_t)4095, w;
	float *s = lab_alloc(bytes), *r = lab_alloc(bytes);
	struct collx_op *so, *ro;
	void *hs = NULL, *hr = NULL;
	uint64_t t0;
	int err;

	if (reg && (collx_mem_register(comm, s, bytes, &hs) ||
		    collx_mem_register(comm, r, bytes, &hr)))
		FAIL("register: %s", collx_comm_last_error(comm));
	fill(s, count, lab_rank, rep);
	memset(r, 0xa5, count * 4);
	t0 = lab_now_ns();
	collx_group_start();
	if (collx_send_async(comm, s, count, COLLX_FP32, right, &so) ||
	    collx_recv_async(comm, r, count, COLLX_FP32, left, &ro))
		FAIL("queue: %s", collx_comm_last_error(comm));
	if ((err = collx_group_end()))
		FAIL("group: %s", collx_comm_last_error(comm));
	if ((err = collx_wait(so, NULL)) || (err = collx_wait(ro, NULL)))
		FAIL("grouped send/recv: %s", collx_comm_last_error(comm));
	w = wrong(r, count, left, rep) + wrong(s, count, lab_rank, rep);
	printf("rank %d: grouped send to %d / recv from %d of %zu B (%s) in %.2f s, %zu wrong\n",
	       lab_rank, right, left, count * 4, reg ? "registered" : "bounced",
	       (lab_now_ns() - t0) / 1e9, w);
	if (w)
		FAIL("%zu elements wrong", w);
	if (hs)
		collx_mem_deregister(comm, hs);
	if (hr)
		collx_mem_deregister(comm, hr);
	free(s);
	free(r);
}

int lab_ringp2p(int argc, char **argv)
{
	struct collx_comm *comm;
	long count, timeout_ms = 4000;

	if (argc < 1 || bench_parse_int(argv[0], 1, 1L << 28, &count) ||
	    (argc > 1 && bench_parse_int(argv[1], 1000, 60000, &timeout_ms)))
		FAIL("usage: ringp2p COUNT [DEADLOCK_TIMEOUT_MS]");
	deadlock((size_t)count, (int)timeout_ms);
	comm = lab_init();
	grouped(comm, (size_t)count, false, 2);
	grouped(comm, (size_t)count, true, 3);
	collx_comm_destroy(comm);
	return 0;
}
