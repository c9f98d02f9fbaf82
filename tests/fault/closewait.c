// SPDX-License-Identifier: GPL-2.0
/*
 * closewait: one thread closes /dev/collx while another is blocked in
 * COLLX_IOC_WAIT on an allreduce that cannot finish.
 *
 *   closewait RANK TIMEOUT_MS SECRET_HEX ADDR0 ADDR1
 *
 * A two-rank communicator made with raw ioctls (no library in between,
 * so nothing but the kernel holds the fd's state).  Rank 1 joins and never
 * submits; it keeps its comm for TIMEOUT_MS + 3 s.  Rank 0 registers its
 * buffers, submits an allreduce and waits with COLLX_WAIT_FOREVER; 1 s
 * later a second thread close()s the fd.  The close must return at once,
 * the wait must end within the communicator's timeout + 1 s of the submit
 * (however it ends: the comm's timeout, a cancel, a reset), and the fd
 * number must then be gone (EBADF).  The file is released when the wait
 * returns; the lab case checks that everything it held is freed.
 *
 * Prints one "closewait ..." line with the figures; exit 0 when all held,
 * 1 when not, 2 on bad usage or a failed setup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/collx.h>

#define COUNT		(1 << 16)	/* 256 KiB of fp32 */
#define CLOSE_AFTER_MS	1000
#define COMM_KEY	0xc011c105e0000000ull

static int dev_fd = -1;
static double t_submit, t_close_done;
static int close_ret, close_errno;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup_fail(const char *what)
{
	fprintf(stderr, "closewait: %s: %s\n", what, strerror(errno));
	return 2;
}

static int parse_secret(const char *hex, __u8 *out, size_t len)
{
	size_t i;
	unsigned int b;

	if (strlen(hex) != 2 * len)
		return -1;
	for (i = 0; i < len; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = b;
	}
	return 0;
}

static void *closer(void *arg)
{
	(void)arg;
	usleep(CLOSE_AFTER_MS * 1000);
	close_ret = close(dev_fd);
	close_errno = errno;
	t_close_done = now() - t_submit;
	printf("rank 0: close() returned %d after %.2f s, the wait still blocked\n",
	       close_ret, t_close_done);
	return NULL;
}

/*
 * ABI 1.0 modules know struct collx_comm_create up to failed_rank: pass
 * them that much, and the secret only to modules that read it.
 */
static int comm_create(int rank, unsigned int timeout_ms, const __u8 *secret,
		       struct collx_rank_addr *addrs)
{
	struct collx_version v = { .size = sizeof(v) };
	struct collx_comm_create cc = { .size = sizeof(cc) };

	if (ioctl(dev_fd, COLLX_IOC_VERSION, &v))
		return -1;
	if (v.abi_minor >= 1)
		memcpy(cc.secret, secret, sizeof(cc.secret));
	else
		cc.size = offsetof(struct collx_comm_create, secret);
	cc.nranks = 2;
	cc.rank = rank;
	cc.comm_key = COMM_KEY | timeout_ms;
	cc.addrs = (uintptr_t)addrs;
	cc.addr_size = sizeof(*addrs);
	cc.timeout_ms = timeout_ms;
	if (ioctl(dev_fd, COLLX_IOC_COMM_CREATE, &cc)) {
		fprintf(stderr, "closewait: rank %d: COMM_CREATE: %s, failed_rank %d\n", rank,
			strerror(errno), (int)cc.failed_rank);
		return -1;
	}
	printf("rank %d: comm %u up (module ABI %u.%u)\n", rank, cc.comm_id, v.abi_major,
	       v.abi_minor);
	return cc.comm_id;
}

static int mr_reg(void *buf, size_t len)
{
	struct collx_mr_reg r = { .size = sizeof(r) };

	r.addr = (uintptr_t)buf;
	r.length = len;
	return ioctl(dev_fd, COLLX_IOC_MR_REG, &r);
}

static int waiter(int comm, unsigned int timeout_ms)
{
	size_t bytes = COUNT * sizeof(float);
	float *s = aligned_alloc(4096, bytes), *r = aligned_alloc(4096, bytes);
	struct collx_submit sub = { .size = sizeof(sub) };
	struct collx_wait w = { .size = sizeof(w) };
	double t_wait, limit = timeout_ms / 1000.0 + 1;
	int ret, err, ok = 1;
	pthread_t th;
	size_t i;

	if (!s || !r)
		return setup_fail("aligned_alloc");
	for (i = 0; i < COUNT; i++)
		s[i] = 1.0f;
	if (mr_reg(s, bytes) || mr_reg(r, bytes))
		return setup_fail("MR_REG");
	sub.comm_id = comm;
	sub.coll = COLLX_COLL_ALLREDUCE;
	sub.dtype = COLLX_FP32;
	sub.redop = COLLX_OP_SUM;
	sub.count = COUNT;
	sub.sendbuf = (uintptr_t)s;
	sub.recvbuf = (uintptr_t)r;
	if (ioctl(dev_fd, COLLX_IOC_SUBMIT, &sub))
		return setup_fail("SUBMIT");
	t_submit = now();
	printf("rank 0: submitted op %llu; another thread closes the fd in %d ms\n",
	       (unsigned long long)sub.op_id, CLOSE_AFTER_MS);
	fflush(stdout);
	if (pthread_create(&th, NULL, closer, NULL))
		return setup_fail("pthread_create");
	w.op_id = sub.op_id;
	w.timeout_ms = COLLX_WAIT_FOREVER;
	ret = ioctl(dev_fd, COLLX_IOC_WAIT, &w);
	err = errno;
	t_wait = now() - t_submit;
	pthread_join(th, NULL);
	printf("rank 0: wait returned %d (%s) after %.2f s: status %d (%s), failed_rank %d, phase %u step %u\n",
	       ret, ret ? strerror(err) : "ok", t_wait, w.completion.status,
	       w.completion.status ? strerror(-w.completion.status) : "done",
	       (int)w.completion.failed_rank, w.completion.phase, w.completion.step);
	if (close_ret) {
		printf("problem: close() failed: %s\n", strerror(close_errno));
		ok = 0;
	}
	if (t_close_done > CLOSE_AFTER_MS / 1000.0 + 1) {
		printf("problem: close() took %.2f s: it waited for the wait\n", t_close_done);
		ok = 0;
	}
	if (t_wait > limit) {
		printf("problem: the wait ended %.2f s after the submit, want at most %.1f s\n",
		       t_wait, limit);
		ok = 0;
	}
	if (fcntl(dev_fd, F_GETFD) != -1 || errno != EBADF) {
		printf("problem: fd %d still open after close()\n", dev_fd);
		ok = 0;
	}
	printf("closewait rank=0 close_at=%.2f wait_ended=%.2f ret=%d errno=%d status=%d failed_rank=%d\n",
	       t_close_done, t_wait, ret, ret ? err : 0, w.completion.status,
	       (int)w.completion.failed_rank);
	free(s);
	free(r);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct collx_rank_addr addrs[2] = { 0 };
	__u8 secret[32];
	unsigned int timeout_ms;
	int rank, comm, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 6 || parse_secret(argv[3], secret, sizeof(secret))) {
		fprintf(stderr, "usage: closewait RANK TIMEOUT_MS SECRET_HEX(64) ADDR0 ADDR1\n");
		return 2;
	}
	rank = atoi(argv[1]);
	timeout_ms = strtoul(argv[2], NULL, 0);
	if ((rank != 0 && rank != 1) || timeout_ms < 1000 || timeout_ms > 600000) {
		fprintf(stderr, "closewait: RANK is 0 or 1, TIMEOUT_MS 1000..600000\n");
		return 2;
	}
	for (i = 0; i < 2; i++) {
		addrs[i].family = AF_INET;
		if (inet_pton(AF_INET, argv[4 + i], addrs[i].addr) != 1) {
			fprintf(stderr, "closewait: bad address %s\n", argv[4 + i]);
			return 2;
		}
	}
	dev_fd = open(getenv("COLLX_DEVICE") ? getenv("COLLX_DEVICE") : "/dev/collx", O_RDWR);
	if (dev_fd < 0)
		return setup_fail("open /dev/collx");
	comm = comm_create(rank, timeout_ms, secret, addrs);
	if (comm < 0)
		return 2;
	if (rank == 0)
		return waiter(comm, timeout_ms);
	/* Rank 1: joined, never submits; outlives rank 0's wait. */
	usleep((timeout_ms + 3000) * 1000ull);
	close(dev_fd);
	printf("closewait rank=1 held its comm %u ms without submitting\n", timeout_ms + 3000);
	return 0;
}
