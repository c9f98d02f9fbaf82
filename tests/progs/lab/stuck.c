// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab stuck RANK: RANK joins three communicators and never submits.
 * The others run a ring broadcast rooted at RANK, a tree allreduce and an
 * rd barrier, each on its own comm, all at once.  Nothing hangs: every
 * op ends with an error naming a rank and the phase it waited in, and the
 * ranks that wait for RANK itself name it: the ring successor of the
 * root, the barrier's first-step partner (RANK ^ 1), and in the tree at
 * least one rank (which ones depends on the tree's shape).  Those direct
 * waiters get the shortest timeouts, so they time out before anyone
 * hangs up on them.  A fourth, healthy comm sums the verdicts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchdata.h"
#include "lab.h"

#define SHORT_MS	2500
#define LONG_MS		6000

enum { BCAST, TREE, BARRIER, NCOMM };

static const char *const names[NCOMM] = { "ring broadcast", "tree allreduce", "rd barrier" };

static struct collx_comm *init_with(int timeout_ms)
{
	struct collx_comm *c;
	char ms[16];

	snprintf(ms, sizeof(ms), "%d", timeout_ms);
	setenv("COLLX_TIMEOUT_MS", ms, 1);
	c = lab_init();
	unsetenv("COLLX_TIMEOUT_MS");
	return c;
}

int lab_stuck(int argc, char **argv)
{
	struct collx_comm *comm[NCOMM], *verdict;
	struct collx_completion c[NCOMM];
	struct collx_op *op[NCOMM];
	int stuck, n, i, err[NCOMM], succ, partner, named[NCOMM] = { 0 };
	float *s, *r;
	uint64_t t0;
	long v;

	if (argc != 1 || bench_parse_int(argv[0], 0, COLLX_MAX_RANKS - 1, &v))
		FAIL("usage: stuck RANK");
	stuck = (int)v;
	/* the rank is known only once a comm exists: COLLX_RANK says it */
	lab_rank = atoi(getenv("COLLX_RANK") ? getenv("COLLX_RANK") : "-1");
	n = atoi(getenv("COLLX_NRANKS") ? getenv("COLLX_NRANKS") : "0");
	if (n < 3 || stuck >= n)
		FAIL("stuck needs 3 ranks or more and a stuck rank below them");
	succ = (stuck + 1) % n;
	partner = stuck ^ 1;
	comm[BCAST] = init_with(lab_rank == succ ? SHORT_MS : LONG_MS);
	comm[TREE] = init_with(SHORT_MS);
	comm[BARRIER] = init_with(lab_rank == partner || lab_rank == (stuck ^ 2) ? SHORT_MS : LONG_MS);
	s = lab_alloc(4096 * 4);
	r = lab_alloc(4096 * 4);
	if (lab_rank == stuck) {
		printf("rank %d: joined %d comms, submitting nothing\n", lab_rank, NCOMM);
		sleep(LONG_MS / 1000 + 3);
	} else {
		struct collx_args a = { .dtype = COLLX_FP32, .count = 4096, .sendbuf = s,
					.recvbuf = r };

		bench_fill(s, 4096, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, 1);
		t0 = lab_now_ns();
		a.coll = COLLX_COLL_BROADCAST;
		a.root = stuck;
		a.algo = COLLX_ALGO_RING;
		if (collx_submit(comm[BCAST], &a, &op[BCAST]))
			FAIL("broadcast: %s", collx_comm_last_error(comm[BCAST]));
		a.coll = COLLX_COLL_ALLREDUCE;
		a.root = 0;
		a.algo = COLLX_ALGO_TREE;
		if (collx_submit(comm[TREE], &a, &op[TREE]))
			FAIL("allreduce: %s", collx_comm_last_error(comm[TREE]));
		if (collx_submit(comm[BARRIER], &(struct collx_args){ .coll = COLLX_COLL_BARRIER,
								       .algo = COLLX_ALGO_RD }, &op[BARRIER]))
			FAIL("barrier: %s", collx_comm_last_error(comm[BARRIER]));
		for (i = 0; i < NCOMM; i++) {
			err[i] = collx_wait(op[i], &c[i]);
			printf("rank %d: %s ended after %.1f s: %s, failed_rank %d, phase %s step %u\n",
			       lab_rank, names[i], (lab_now_ns() - t0) / 1e9,
			       err[i] ? collx_strerror(err[i]) : "done", (int)c[i].failed_rank,
			       collx_phase_name(c[i].phase), c[i].step);
			if (!err[i])
				FAIL("the %s completed without rank %d", names[i], stuck);
			if (c[i].failed_rank == COLLX_RANK_NONE || c[i].failed_rank == (uint32_t)lab_rank ||
			    c[i].failed_rank >= (uint32_t)n)
				FAIL("the %s names no other rank", names[i]);
			named[i] = c[i].failed_rank == (uint32_t)stuck;
		}
		if (c[BCAST].phase != COLLX_PHASE_BROADCAST)
			FAIL("the broadcast ended in phase %s", collx_phase_name(c[BCAST].phase));
		if (c[TREE].phase != COLLX_PHASE_REDUCE && c[TREE].phase != COLLX_PHASE_BROADCAST)
			FAIL("the tree allreduce ended in phase %s", collx_phase_name(c[TREE].phase));
		if (c[BARRIER].phase != COLLX_PHASE_EXCHANGE)
			FAIL("the barrier ended in phase %s", collx_phase_name(c[BARRIER].phase));
		if (lab_rank == succ && (!named[BCAST] || err[BCAST] != -ETIMEDOUT))
			FAIL("rank %d, the root's successor, does not time out naming it", lab_rank);
		if (!(n & (n - 1)) && lab_rank == partner &&
		    (!named[BARRIER] || err[BARRIER] != -ETIMEDOUT))
			FAIL("rank %d, its first-step partner, does not time out naming it", lab_rank);
	}
	for (i = 0; i < NCOMM; i++)
		collx_comm_destroy(comm[i]);
	verdict = lab_init();
	for (i = 0; i < NCOMM; i++) {
		int32_t k = named[i];

		if (collx_allreduce(verdict, &k, &k, 1, COLLX_INT32, COLLX_OP_SUM))
			FAIL("verdict: %s", collx_comm_last_error(verdict));
		if (lab_rank == 0)
			printf("%s: %d rank(s) name rank %d\n", names[i], k, stuck);
		if (!k)
			FAIL("no rank's %s names rank %d, which never submitted", names[i], stuck);
	}
	collx_comm_destroy(verdict);
	return 0;
}
