// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab abort RANK: RANK joins and never submits.
 *
 * 1. Async error: the others submit an allreduce and never wait for it;
 *    collx_comm_get_async_error() (which never blocks) turns non-zero
 *    once the comm's short timeout has failed it, and the wait then
 *    returns an error too.
 * 2. Abort, as PyTorch's watchdog does it: the main thread waits for an
 *    allreduce (module default timeout, 30 s); a watchdog thread aborts
 *    the communicator after 1.5 s; the wait returns at once, cancelled
 *    (or reset, when a peer's abort came first), and nothing of the comm
 *    is touched after it is gone.
 * 3. A new communicator works.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchdata.h"
#include "lab.h"

struct watchdog {
	struct collx_comm *comm;
	int early_error, rc;
	uint64_t at_ns;
};

/* Look at 0.5 s (nothing has failed: every rank is still waiting), abort
 * at 1.5 s: the ranks' watchdogs are less than a second apart. */
static void *watchdog(void *arg)
{
	struct watchdog *w = arg;

	usleep(500000);
	w->early_error = collx_comm_get_async_error(w->comm);
	usleep(1000000);
	w->at_ns = lab_now_ns();
	w->rc = collx_comm_abort(w->comm);
	return NULL;
}

static void async_error(int stuck, float *s, float *r, size_t count)
{
	struct collx_comm *comm;
	struct collx_op *op;
	uint64_t t0;
	int err = 0, werr, polls = 0;

	setenv("COLLX_TIMEOUT_MS", "3000", 1);
	comm = lab_init();
	unsetenv("COLLX_TIMEOUT_MS");
	if (lab_rank == stuck) {
		sleep(7);
		collx_comm_destroy(comm);
		return;
	}
	if (collx_allreduce_async(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM, &op))
		FAIL("submit: %s", collx_comm_last_error(comm));
	t0 = lab_now_ns();
	while (!(err = collx_comm_get_async_error(comm)) && lab_now_ns() - t0 < 20000000000ull) {
		polls++;
		usleep(100000);
	}
	werr = collx_wait(op, NULL);
	printf("rank %d: async error %s after %.1f s and %d polls; the wait then said %s\n",
	       lab_rank, err ? collx_strerror(err) : "none", (lab_now_ns() - t0) / 1e9, polls,
	       collx_strerror(werr));
	if (!err)
		FAIL("no async error within 20 s while rank %d never submitted", stuck);
	if (!werr)
		FAIL("the wait succeeded after an async error");
	collx_comm_destroy(comm);
}

static void abort_waiter(int stuck, float *s, float *r, size_t count)
{
	struct watchdog w = { 0 };
	struct collx_op *op;
	pthread_t th;
	uint64_t t0, t1;
	int err;

	w.comm = lab_init();
	if (lab_rank == stuck) {
		sleep(5);
		collx_comm_destroy(w.comm);
		return;
	}
	if (collx_allreduce_async(w.comm, s, r, count, COLLX_FP32, COLLX_OP_SUM, &op))
		FAIL("submit: %s", collx_comm_last_error(w.comm));
	t0 = lab_now_ns();
	pthread_create(&th, NULL, watchdog, &w);
	err = collx_wait(op, NULL);
	t1 = lab_now_ns();
	pthread_join(th, NULL);
	/* a peer's abort may end this rank's wait before its own */
	printf("rank %d: the wait returned %s %.2f s %s the watchdog's abort (%.1f s in), abort %s\n",
	       lab_rank, collx_strerror(err),
	       (t1 > w.at_ns ? t1 - w.at_ns : w.at_ns - t1) / 1e9,
	       t1 > w.at_ns ? "after" : "before", (t1 - t0) / 1e9,
	       w.rc ? collx_strerror(w.rc) : "ok");
	if (w.early_error)
		FAIL("an async error (%s) before anything failed", collx_strerror(w.early_error));
	if (err != -ECANCELED && err != -ECONNRESET)
		FAIL("the wait ended %s, want ECANCELED (or ECONNRESET: a peer aborted first)",
		     collx_strerror(err));
	if (t1 > w.at_ns && t1 - w.at_ns > 5000000000ull)
		FAIL("the wait outlived the abort by %.1f s", (t1 - w.at_ns) / 1e9);
	if (t1 - t0 > 10000000000ull)
		FAIL("the wait took %.1f s: neither abort ended it", (t1 - t0) / 1e9);
}

int lab_abort(int argc, char **argv)
{
	size_t count = 65536;
	float *s = lab_alloc(count * 4), *r = lab_alloc(count * 4);
	struct collx_comm *comm;
	long stuck;
	int n;

	if (argc != 1 || bench_parse_int(argv[0], 0, COLLX_MAX_RANKS - 1, &stuck))
		FAIL("usage: abort RANK");
	unsetenv("COLLX_TIMEOUT_MS");
	lab_rank = atoi(getenv("COLLX_RANK") ? getenv("COLLX_RANK") : "-1");
	async_error((int)stuck, s, r, count);
	abort_waiter((int)stuck, s, r, count);
	comm = lab_init();
	n = collx_comm_size(comm);
	bench_fill(s, count, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, 5);
	if (collx_allreduce(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM))
		FAIL("allreduce after the abort: %s", collx_comm_last_error(comm));
	if (bench_check(r, count, COLLX_FP32, COLLX_OP_SUM, n, 5, NULL))
		FAIL("allreduce after the abort is wrong");
	printf("rank %d: a new comm works after the abort\n", lab_rank);
	collx_comm_destroy(comm);
	return 0;
}
