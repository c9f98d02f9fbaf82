// SPDX-License-Identifier: GPL-2.0
/*
 * collx_lab: libcollx scenarios the lab cases run on every node.
 *
 *   collx_lab init                 create a comm and destroy it; print why not
 *   collx_lab twocomm              two comms in one process, interleaved; each
 *                                  comm's fd polls for its own ops only
 *   collx_lab async                an allreduce completes while we compute
 *   collx_lab destroy              destroy a comm with allreduces in flight
 *   collx_lab loop FILE            allreduce until one fails; touch FILE
 *                                  after the first (kill tests)
 *   collx_lab stall RANK FILE      RANK never submits; the others' allreduce
 *                                  must end naming who they wait for
 *   collx_lab rawcreate MISSING TIMEOUT_MS ADDR...
 *                                  COLLX_IOC_COMM_CREATE straight, rank
 *                                  MISSING never calls it; print the result
 *   collx_lab matrix SPEC...       many collectives on one comm, checked
 *                                  exactly (matrix.c)
 *   collx_lab inflight             16 mixed collectives in flight at once
 *   collx_lab ringp2p COUNT        send right / recv left, grouped and not
 *   collx_lab stuck RANK           RANK never submits on three comms: a ring
 *                                  broadcast root, a tree node, an rd partner
 *   collx_lab abort RANK           async error and abort from a watchdog
 *                                  thread while RANK never submits
 *
 * Exit: 0 as expected, 1 wrong, 2 init failed (init), 3 an expected
 * failure happened (loop).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "benchdata.h"
#include "lab.h"

int lab_rank = -1;

void lab_touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	if (fd >= 0)
		close(fd);
}

uint64_t lab_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct collx_comm *lab_init(void)
{
	struct collx_comm *comm;
	int err = collx_comm_init_all(&comm);

	if (err)
		FAIL("init: %s: %s", collx_strerror(err), collx_comm_last_error(NULL));
	lab_rank = collx_comm_rank(comm);
	return comm;
}

void *lab_alloc(size_t bytes)
{
	void *p;

	if (posix_memalign(&p, 4096, bytes ? bytes : 1))
		FAIL("out of memory");
	memset(p, 0, bytes);
	return p;
}

static int check_or_die(const char *what, const void *buf, size_t count, int dt,
			int op, int nranks, int rep)
{
	size_t first = 0, wrong = bench_check(buf, count, dt, op, nranks, rep, &first);

	if (wrong)
		FAIL("%s: %zu of %zu wrong, first at %zu: %g, want %g", what, wrong, count,
		     first, bench_load(buf, first, dt), bench_expected(dt, op, nranks, first, rep));
	return 0;
}

static int cmd_init(void)
{
	struct collx_comm *comm;
	int err = collx_comm_init_all(&comm);

	if (err) {
		printf("init failed: %s (%d): %s\n", collx_strerror(err), err,
		       collx_comm_last_error(NULL));
		return 2;
	}
	printf("rank %d of %d: comm up on %s\n", collx_comm_rank(comm), collx_comm_size(comm),
	       collx_comm_device(comm));
	collx_comm_destroy(comm);
	return 0;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* collx_comm_fd(): readable when one of that comm's ops completed, for an
 * event loop; collx_test() takes the record and it is quiet again. */
static void poll_fds(struct collx_comm *a, struct collx_comm *b, float *s, float *r,
		     size_t count, int n)
{
	int fa = collx_comm_fd(a), fb = collx_comm_fd(b), done = 0;
	struct collx_op *op;

	if (fa < 0 || fb < 0 || fa == fb)
		FAIL("comm fds %d and %d", fa, fb);
	if (readable(fa, 0) || readable(fb, 0))
		FAIL("a comm fd is readable with nothing in flight");
	bench_fill(s, count, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, 77);
	if (collx_allreduce_async(a, s, r, count, COLLX_FP32, COLLX_OP_SUM, &op))
		FAIL("submit a: %s", collx_comm_last_error(a));
	if (!readable(fa, 60000))
		FAIL("comm a's fd never polled readable for its allreduce");
	if (readable(fb, 0))
		FAIL("comm b's fd is readable for comm a's op");
	if (collx_test(op, &done, NULL) || !done)
		FAIL("poll said done, collx_test did not: %s", collx_comm_last_error(a));
	if (readable(fa, 0))
		FAIL("comm a's fd still readable once the record was taken");
	check_or_die("comm a after poll", r, count, COLLX_FP32, COLLX_OP_SUM, n, 77);
}

static int cmd_twocomm(void)
{
	struct collx_comm *a = lab_init(), *b = lab_init();
	size_t ca = 10007, cb = 4099;
	float *sa = lab_alloc(ca * 4), *ra = lab_alloc(ca * 4);
	int32_t *rb = lab_alloc(cb * 4);
	int n = collx_comm_size(a), it, err;
	void *h1, *h2;

	if (collx_comm_size(b) != n || collx_comm_rank(b) != lab_rank)
		FAIL("second comm has rank %d of %d", collx_comm_rank(b), collx_comm_size(b));
	/* a: registered; b: bounced */
	if ((err = collx_mem_register(a, sa, ca * 4, &h1)) ||
	    (err = collx_mem_register(a, ra, ca * 4, &h2)))
		FAIL("register: %s", collx_comm_last_error(a));
	for (it = 0; it < 5; it++) {
		struct collx_op *o1, *o2, *o3;

		bench_fill(sa, ca, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, it);
		bench_fill(rb, cb, COLLX_INT32, COLLX_OP_MAX, n, lab_rank, it);
		/* interleave: a, b, then b again in place after a second a */
		if ((err = collx_allreduce_async(a, sa, ra, ca, COLLX_FP32, COLLX_OP_SUM, &o1)))
			FAIL("submit a: %s", collx_comm_last_error(a));
		if ((err = collx_allreduce_async(b, rb, rb, cb, COLLX_INT32, COLLX_OP_MAX, &o2)))
			FAIL("submit b: %s", collx_comm_last_error(b));
		if ((err = collx_wait(o2, NULL)))
			FAIL("b: %s", collx_comm_last_error(b));
		if ((err = collx_wait(o1, NULL)))
			FAIL("a: %s", collx_comm_last_error(a));
		check_or_die("comm a fp32 sum", ra, ca, COLLX_FP32, COLLX_OP_SUM, n, it);
		check_or_die("comm b int32 max in place", rb, cb, COLLX_INT32, COLLX_OP_MAX, n, it);
		bench_fill(rb, cb, COLLX_INT32, COLLX_OP_MIN, n, lab_rank, it);
		if ((err = collx_allreduce_async(b, rb, rb, cb, COLLX_INT32, COLLX_OP_MIN, &o3)))
			FAIL("submit b: %s", collx_comm_last_error(b));
		if ((err = collx_wait(o3, NULL)))
			FAIL("b: %s", collx_comm_last_error(b));
		check_or_die("comm b int32 min", rb, cb, COLLX_INT32, COLLX_OP_MIN, n, it);
	}
	poll_fds(a, b, sa, ra, ca, n);
	collx_mem_deregister(a, h1);
	collx_mem_deregister(a, h2);
	if (collx_comm_destroy(b) || collx_comm_destroy(a))
		FAIL("destroy failed");
	printf("rank %d: two comms, 16 interleaved allreduces, all exact; each fd polls for its own comm\n",
	       lab_rank);
	return 0;
}

/* Work the CPU without entering the library or the kernel. */
static volatile double sink;
static uint64_t compute_until(uint64_t end_ns)
{
	uint64_t rounds = 0;
	double x = 1.0;
	int i;

	while (lab_now_ns() < end_ns) {	/* vDSO: no system call */
		for (i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
		rounds++;
	}
	sink = x;
	return rounds;
}

static int cmd_async(void)
{
	struct collx_comm *comm = lab_init();
	int n = collx_comm_size(comm), err, done = 0;
	size_t count = 1 << 20;		/* 4 MiB of fp32: many staging areas */
	float *s = lab_alloc(count * 4), *r = lab_alloc(count * 4);
	struct collx_completion c;
	struct collx_op *op;
	uint64_t t0, t_block, t_end, window, t_data = 0, rounds;
	size_t first = 0;
	void *h1, *h2;

	if (collx_mem_register(comm, s, count * 4, &h1) ||
	    collx_mem_register(comm, r, count * 4, &h2))
		FAIL("register: %s", collx_comm_last_error(comm));
	bench_fill(s, count, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, 1);
	t0 = lab_now_ns();
	if ((err = collx_allreduce(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM)))
		FAIL("blocking allreduce: %s", collx_comm_last_error(comm));
	t_block = lab_now_ns() - t0;
	check_or_die("blocking", r, count, COLLX_FP32, COLLX_OP_SUM, n, 1);

	bench_fill(s, count, COLLX_FP32, COLLX_OP_SUM, n, lab_rank, 2);
	memset(r, 0, count * 4);
	t0 = lab_now_ns();
	if ((err = collx_allreduce_async(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM, &op)))
		FAIL("submit: %s", collx_comm_last_error(comm));
	/* Compute for three times what the blocking call took (and at least
	 * 2 s), with no library call at all; then one non-blocking test.  On
	 * a loaded host the engine, sharing the node's one CPU with this
	 * loop, can take longer: while the sum is not all in r yet (read
	 * from memory, no call), compute on, up to 120 s, and then as long
	 * again as the blocking call took (at least 1 s) for the kernel to
	 * post the completion it writes after the data. */
	window = 3 * t_block + 2000000000ull;
	rounds = compute_until(t0 + window);
	/* t_data: when the sum was seen all in place, if that was late */
	for (; bench_check(r, count, COLLX_FP32, COLLX_OP_SUM, n, 2, &first) &&
	     lab_now_ns() - t0 < 120000000000ull; t_data = lab_now_ns() - t0)
		rounds += compute_until(lab_now_ns() + 100000000ull);
	if (t_data)
		rounds += compute_until(lab_now_ns() + (t_block > 1000000000ull ? t_block : 1000000000ull));
	t_end = lab_now_ns();
	err = collx_test(op, &done, &c);
	if (!done)
		FAIL("allreduce not done after %.0f ms of pure compute (blocking took %.0f ms): no progress without the caller",
		     (t_end - t0) / 1e6, t_block / 1e6);
	if (err)
		FAIL("async allreduce: %s", collx_comm_last_error(comm));
	if (c.end_ns > t_end || c.start_ns < t0)
		FAIL("completion times %llu..%llu outside the compute window %llu..%llu",
		     (unsigned long long)c.start_ns, (unsigned long long)c.end_ns,
		     (unsigned long long)t0, (unsigned long long)t_end);
	check_or_die("async", r, count, COLLX_FP32, COLLX_OP_SUM, n, 2);
	if (t_data)
		printf("rank %d: the sum was all in place only after %.0f ms (window %.0f ms): computed on\n",
		       lab_rank, t_data / 1e6, window / 1e6);
	printf("rank %d: blocking allreduce of %zu B took %.0f ms; the async one ran %.0f ms (kernel clock) and ended %.0f ms before the caller, busy computing %llu rounds with no library call, tested it once\n",
	       lab_rank, count * 4, t_block / 1e6, (c.end_ns - c.start_ns) / 1e6,
	       (t_end - c.end_ns) / 1e6, (unsigned long long)rounds);
	collx_mem_deregister(comm, h1);
	collx_mem_deregister(comm, h2);
	collx_comm_destroy(comm);
	return 0;
}

static int cmd_destroy(void)
{
	struct collx_comm *comm = lab_init();
	int n = collx_comm_size(comm), i, err, ended = 0, nsub = 0;
	size_t count = 1 << 19;		/* 2 MiB of int32, bounced */
	struct collx_op *ops[4];
	int32_t *bufs[4];

	/*
	 * Every rank destroys with its ops in flight, so a rank may find its
	 * comm already failed by a faster neighbour's destroy (-EPIPE): that
	 * is the contract too.
	 */
	for (i = 0; i < 4; i++) {
		bufs[i] = lab_alloc(count * 4);
		bench_fill(bufs[i], count, COLLX_INT32, COLLX_OP_SUM, n, lab_rank, i);
		err = collx_allreduce_async(comm, bufs[i], bufs[i], count, COLLX_INT32,
					    COLLX_OP_SUM, &ops[i]);
		if (err == -EPIPE) {
			printf("rank %d: submit %d refused: %s\n", lab_rank, i,
			       collx_comm_last_error(comm));
			free(bufs[i]);
			break;
		}
		if (err)
			FAIL("submit %d: %s", i, collx_comm_last_error(comm));
		nsub++;
	}
	err = collx_comm_destroy(comm);
	if (err)
		FAIL("destroy with ops in flight: %s", collx_strerror(err));
	for (i = 0; i < nsub; i++) {
		struct collx_completion c;

		err = collx_wait(ops[i], &c);
		printf("rank %d: op %d ended %d (%s), phase %s step %u\n", lab_rank, i, err,
		       err ? collx_strerror(err) : "done", collx_phase_name(c.phase), c.step);
		if (err == -ECANCELED || err == -ECONNRESET)
			ended++;
		else if (err)
			FAIL("op %d ended %s, want ECANCELED (or ECONNRESET)", i, collx_strerror(err));
		free(bufs[i]);
	}
	if (nsub == 4 && !ended)
		FAIL("all 4 ops completed: the destroy cancelled nothing");
	/* The node still works: a new comm, an exact allreduce. */
	comm = lab_init();
	bufs[0] = lab_alloc(1021 * 4);
	bench_fill(bufs[0], 1021, COLLX_INT32, COLLX_OP_SUM, n, lab_rank, 9);
	if ((err = collx_allreduce(comm, bufs[0], bufs[0], 1021, COLLX_INT32, COLLX_OP_SUM)))
		FAIL("allreduce after the destroy: %s", collx_comm_last_error(comm));
	check_or_die("after destroy", bufs[0], 1021, COLLX_INT32, COLLX_OP_SUM, n, 9);
	collx_comm_destroy(comm);
	free(bufs[0]);
	printf("rank %d: %d of %d in-flight ops ended by the destroy; a new comm works\n",
	       lab_rank, ended, nsub);
	return 0;
}

/*
 * Rank @stuck joins the comm but never submits; every other rank's
 * allreduce must end (comm timeout), with the error, the rank blamed and
 * the phase printed for the case to check.
 */
static int cmd_stall(int stuck, const char *ready)
{
	struct collx_comm *comm = lab_init();
	size_t count = 1 << 18;		/* 1 MiB of fp32, registered */
	float *s = lab_alloc(count * 4), *r = lab_alloc(count * 4);
	struct collx_completion c;
	struct collx_op *op;
	uint64_t t0 = lab_now_ns();
	void *h1, *h2;
	int err;

	if (lab_rank == stuck) {
		printf("rank %d: joined, submitting nothing\n", lab_rank);
		sleep(15);
		collx_comm_destroy(comm);
		return 0;
	}
	if (collx_mem_register(comm, s, count * 4, &h1) ||
	    collx_mem_register(comm, r, count * 4, &h2))
		FAIL("register: %s", collx_comm_last_error(comm));
	if ((err = collx_allreduce_async(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM, &op)))
		FAIL("submit: %s", collx_comm_last_error(comm));
	lab_touch(ready);
	err = collx_wait(op, &c);
	printf("rank %d: allreduce ended after %.1f s: %s, failed_rank %d, phase %s step %u\n",
	       lab_rank, (lab_now_ns() - t0) / 1e9, err ? collx_strerror(err) : "done",
	       (int)c.failed_rank, collx_phase_name(c.phase), c.step);
	if (!err)
		FAIL("the allreduce completed without rank %d", stuck);
	collx_comm_destroy(comm);
	return 0;
}

static int cmd_loop(const char *ready)
{
	struct collx_comm *comm = lab_init();
	size_t count = 1 << 18;		/* 1 MiB of fp32 */
	float *s = lab_alloc(count * 4), *r = lab_alloc(count * 4);
	uint64_t t0 = lab_now_ns();
	int err, it;
	void *h1, *h2;

	if (collx_mem_register(comm, s, count * 4, &h1) ||
	    collx_mem_register(comm, r, count * 4, &h2))
		FAIL("register: %s", collx_comm_last_error(comm));
	for (it = 0; lab_now_ns() - t0 < 240000000000ull; it++) {
		err = collx_allreduce(comm, s, r, count, COLLX_FP32, COLLX_OP_SUM);
		if (err) {
			printf("rank %d: allreduce %d failed after %.1f s: %s\n", lab_rank, it,
			       (lab_now_ns() - t0) / 1e9, collx_comm_last_error(comm));
			fflush(stdout);
			/* Destroying the broken comm must not hang either. */
			collx_comm_destroy(comm);
			return 3;
		}
		if (it == 0)
			lab_touch(ready);
	}
	FAIL("no allreduce failed in 240 s");
}

static int cmd_rawcreate(int argc, char **argv)
{
	struct collx_comm_create cc = { .size = sizeof(cc) };
	struct collx_rank_addr *addrs;
	int missing, timeout, n, i, fd, rc;
	const char *rs = getenv("COLLX_RANK");

	if (argc < 4 || !rs)
		FAIL("usage: rawcreate MISSING TIMEOUT_MS ADDR... (COLLX_RANK set)");
	lab_rank = atoi(rs);
	missing = atoi(argv[0]);
	timeout = atoi(argv[1]);
	n = argc - 2;
	if (lab_rank == missing) {
		usleep((timeout + 3000) * 1000);
		printf("rank %d: stayed away\n", lab_rank);
		return 0;
	}
	addrs = calloc(n, sizeof(*addrs));
	for (i = 0; i < n; i++) {
		addrs[i].family = AF_INET;
		if (inet_pton(AF_INET, argv[2 + i], addrs[i].addr) != 1)
			FAIL("bad address %s", argv[2 + i]);
	}
	fd = open(getenv("COLLX_DEVICE") ? getenv("COLLX_DEVICE") : "/dev/collx", O_RDWR);
	if (fd < 0)
		FAIL("open /dev/collx: %s", strerror(errno));
	cc.nranks = n;
	cc.rank = lab_rank;
	cc.comm_key = 0xc011ec7000000000ull | (uint64_t)timeout;
	cc.addrs = (uintptr_t)addrs;
	cc.addr_size = sizeof(*addrs);
	cc.timeout_ms = timeout;
	cc.failed_rank = 12345;
	rc = ioctl(fd, COLLX_IOC_COMM_CREATE, &cc);
	if (rc)
		printf("rank %d: COMM_CREATE failed: %s, failed_rank %d\n", lab_rank, strerror(errno),
		       (int)cc.failed_rank);
	else
		printf("rank %d: COMM_CREATE ok, comm %u, failed_rank %d\n", lab_rank, cc.comm_id,
		       (int)cc.failed_rank);
	close(fd);
	free(addrs);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "init"))
		return cmd_init();
	if (!strcmp(argv[1], "twocomm"))
		return cmd_twocomm();
	if (!strcmp(argv[1], "async"))
		return cmd_async();
	if (!strcmp(argv[1], "destroy"))
		return cmd_destroy();
	if (!strcmp(argv[1], "loop") && argc == 3)
		return cmd_loop(argv[2]);
	if (!strcmp(argv[1], "stall") && argc == 4)
		return cmd_stall(atoi(argv[2]), argv[3]);
	if (!strcmp(argv[1], "rawcreate"))
		return cmd_rawcreate(argc - 2, argv + 2);
	if (!strcmp(argv[1], "load"))
		return lab_load(argc - 2, argv + 2);
	if (!strcmp(argv[1], "matrix"))
		return lab_matrix(argc - 2, argv + 2);
	if (!strcmp(argv[1], "inflight"))
		return lab_inflight();
	if (!strcmp(argv[1], "ringp2p"))
		return lab_ringp2p(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stuck"))
		return lab_stuck(argc - 2, argv + 2);
	if (!strcmp(argv[1], "abort"))
		return lab_abort(argc - 2, argv + 2);
usage:
	fprintf(stderr, "usage: collx_lab init|twocomm|async|destroy|loop FILE|stall RANK FILE|rawcreate MISSING TIMEOUT_MS ADDR...|matrix SPEC...|inflight|ringp2p COUNT|stuck RANK|abort RANK|load NCOMMS NOPS\n");
	return 2;
}
