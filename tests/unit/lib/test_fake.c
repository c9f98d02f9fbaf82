// SPDX-License-Identifier: GPL-2.0
/*
 * libcollx against a fake module (fake_dev.c) on 1-rank communicators:
 * group semantics (one SUBMIT_GROUP per comm, nesting, per thread, all or
 * nothing, blocking calls waited at the end), ABI 1.0 fallbacks, destroy
 * and abort from another thread while an op is waited on (under ASan),
 * the async error, COLLX_ALGO, COLLX_IB_TC and the secret in COMM_CREATE,
 * dma-buf registration, argument checks and the per-op log lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collx_int.h"
#include "fake_dev.h"
#include "unit_lib.h"

static float bufa[64], bufb[64];

/* A 1-rank communicator on the fake module of ABI 1.@minor. */
static int fake_comm(unsigned int minor, struct collx_comm **comm)
{
	char port[16];
	int err;

	fake_reset(minor);
	snprintf(port, sizeof(port), "%u", unit_free_port());
	setenv("COLLX_DEVICE", "/dev/null", 1);
	setenv("COLLX_RDMA_ADDR", "127.0.0.1", 1);
	setenv("COLLX_RANK", "0", 1);
	setenv("COLLX_NRANKS", "1", 1);
	setenv("COLLX_MASTER_ADDR", "127.0.0.1", 1);
	setenv("COLLX_MASTER_PORT", port, 1);
	setenv("COLLX_BOOTSTRAP_TIMEOUT", "5", 1);
	err = collx_comm_init_all(comm);
	if (err)
		printf("#   init: %d %s\n", err, collx_comm_last_error(NULL));
	return err;
}

static int test_group_one_comm(void)
{
	struct collx_comm *comm;
	struct collx_op *o1, *o2, *o3;

	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	CHECK(collx_group_start() == 0, "start");
	CHECK(!collx_allreduce_async(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &o1), "ar");
	CHECK(!collx_broadcast(comm, bufa, bufb, 8, COLLX_FP32, 0), "blocking bcast returns at once");
	CHECK(!collx_allgather_async(comm, bufa, bufb, 4, COLLX_FP32, &o2), "ag");
	CHECK(!collx_barrier_async(comm, &o3), "barrier");
	CHECK(fake.nops == 0, "%d submitted before the group ended", fake.nops);
	CHECK(collx_group_end() == 0, "end: %s", collx_comm_last_error(comm));
	CHECK(fake.groups == 1 && fake.group_sizes[0] == 4 && fake.submits == 0,
	      "%d groups of %d, %d single submits", fake.groups, fake.group_sizes[0], fake.submits);
	CHECK(fake.ops[0].s.coll == COLLX_COLL_ALLREDUCE && fake.ops[1].s.coll == COLLX_COLL_BROADCAST &&
	      fake.ops[2].s.coll == COLLX_COLL_ALLGATHER && fake.ops[3].s.coll == COLLX_COLL_BARRIER,
	      "not in issue order");
	CHECK(fake.ops[1].taken, "the blocking broadcast was not waited for by the group's end");
	CHECK(!collx_wait(o1, NULL) && !collx_wait(o2, NULL) && !collx_wait(o3, NULL), "waits");
	CHECK(fake_pending() == 0, "%d records left", fake_pending());
	collx_comm_destroy(comm);
	return 0;
}

static int test_group_nested(void)
{
	struct collx_comm *comm;
	struct collx_op *o1, *o2;

	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	collx_group_start();
	collx_group_start();
	CHECK(!collx_allreduce_async(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &o1), "ar");
	CHECK(collx_group_end() == 0 && fake.nops == 0, "the inner end submitted");
	CHECK(!collx_reduce_async(comm, bufa, bufb, 16, COLLX_INT32, COLLX_OP_MAX, 0, &o2), "reduce");
	CHECK(collx_group_end() == 0 && fake.groups == 1 && fake.group_sizes[0] == 2,
	      "%d groups of %d", fake.groups, fake.group_sizes[0]);
	CHECK(collx_group_end() == -EINVAL, "an end without a start");
	collx_wait(o1, NULL);
	collx_wait(o2, NULL);
	collx_comm_destroy(comm);
	return 0;
}

static int test_group_two_comms(void)
{
	struct collx_comm *a, *b;
	struct collx_op *a1, *b1, *a2;

	CHECK(!fake_comm(1, &a), "init a");
	CHECK(!collx_comm_init_all(&b), "init b: %s", collx_comm_last_error(NULL));
	fake.auto_complete = true;
	CHECK(collx_comm_fd(a) >= 0 && collx_comm_fd(b) >= 0 && collx_comm_fd(a) != collx_comm_fd(b),
	      "one fd per comm: %d %d", collx_comm_fd(a), collx_comm_fd(b));
	collx_group_start();
	collx_allreduce_async(a, bufa, bufb, 1, COLLX_FP32, COLLX_OP_SUM, &a1);
	collx_allreduce_async(b, bufa, bufb, 2, COLLX_FP32, COLLX_OP_SUM, &b1);
	collx_allreduce_async(a, bufa, bufb, 3, COLLX_FP32, COLLX_OP_SUM, &a2);
	CHECK(collx_group_end() == 0, "end");
	CHECK(fake.groups == 1 && fake.submits == 1 && fake.group_sizes[0] == 2,
	      "a: one group of 2, b: one submit; got %d groups (%d), %d submits", fake.groups,
	      fake.group_sizes[0], fake.submits);
	CHECK(fake.ops[0].s.count == 1 && fake.ops[1].s.count == 3 && fake.ops[2].s.count == 2,
	      "a's ops first, in order");
	collx_wait(a1, NULL);
	collx_wait(a2, NULL);
	collx_wait(b1, NULL);
	collx_comm_destroy(b);
	collx_comm_destroy(a);
	return 0;
}

static int test_group_all_or_nothing(void)
{
	struct collx_comm *comm;
	struct collx_op *o1, *o2;

	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	fake.fail_count = 666;
	collx_group_start();
	collx_allreduce_async(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &o1);
	collx_allreduce_async(comm, bufa, bufb, 666, COLLX_FP32, COLLX_OP_SUM, &o2);
	CHECK(collx_wait(o1, NULL) == -EINVAL, "a wait inside the group");
	collx_allreduce(comm, bufa, bufb, 8, COLLX_FP32, COLLX_OP_SUM);
	CHECK(collx_group_end() == -EINVAL, "end succeeded");
	CHECK(fake.nops == 0, "%d ops queued by a failed group", fake.nops);
	CHECK(strstr(collx_comm_last_error(comm), "entry 1 (allreduce 666 x float sum)"), "'%s'",
	      collx_comm_last_error(comm));
	CHECK(collx_wait(o1, NULL) == -EINVAL && collx_wait(o2, NULL) == -EINVAL,
	      "the group's ops end with its error");
	CHECK(collx_comm_get_async_error(comm) == 0, "a refused group is not the comm's error");
	collx_comm_destroy(comm);
	return 0;
}

struct thr {
	struct collx_comm *comm;
	struct collx_op *op;
	int rc;
	struct collx_completion c;
	int64_t ended_ms;
	int up[2], down[2];	/* thread -> main, main -> thread */
};

static void *group_thread(void *arg)
{
	struct thr *t = arg;
	struct collx_op *op;
	char c;

	collx_group_start();
	collx_allreduce_async(t->comm, bufa, bufb, 5, COLLX_FP32, COLLX_OP_SUM, &op);
	if (write(t->up[1], "x", 1) != 1 || read(t->down[0], &c, 1) != 1)
		t->rc = -EIO;
	t->rc = collx_group_end();
	if (!t->rc)
		t->rc = collx_wait(op, NULL);
	return NULL;
}

static int test_group_per_thread(void)
{
	struct thr t = { 0 };
	struct collx_op *op;
	pthread_t th;
	char c;

	CHECK(!fake_comm(1, &t.comm), "init");
	fake.auto_complete = true;
	CHECK(!pipe(t.up) && !pipe(t.down), "pipe");
	pthread_create(&th, NULL, group_thread, &t);
	CHECK(read(t.up[0], &c, 1) == 1, "sync");
	/* another thread's group does not hold this thread's op */
	CHECK(!collx_allreduce_async(t.comm, bufa, bufb, 7, COLLX_FP32, COLLX_OP_SUM, &op), "ar");
	CHECK(fake.nops == 1 && fake.ops[0].s.count == 7, "%d ops", fake.nops);
	CHECK(write(t.down[1], "x", 1) == 1, "go");
	pthread_join(th, NULL);
	CHECK(t.rc == 0 && fake.nops == 2 && fake.ops[1].s.count == 5, "thread: %d", t.rc);
	collx_wait(op, NULL);
	close(t.up[0]);
	close(t.up[1]);
	close(t.down[0]);
	close(t.down[1]);
	collx_comm_destroy(t.comm);
	return 0;
}

static void *waiter(void *arg)
{
	struct thr *t = arg;

	t->rc = collx_wait(t->op, &t->c);
	t->ended_ms = unit_mono_ms();
	return NULL;
}

/* PyTorch's watchdog: abort from another thread while this one waits. */
static int test_abort_while_waiting(void)
{
	struct thr t = { 0 };
	pthread_t th;
	int64_t t0;
	int fd;

	CHECK(!fake_comm(1, &t.comm), "init");
	CHECK(!collx_allreduce_async(t.comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &t.op), "ar");
	fd = collx_comm_fd(t.comm);
	pthread_create(&th, NULL, waiter, &t);
	usleep(200000);
	CHECK(fake.waits >= 1, "the waiter is not in COLLX_IOC_WAIT");
	t0 = unit_mono_ms();
	CHECK(collx_comm_abort(t.comm) == 0, "abort");
	CHECK(unit_mono_ms() - t0 < 2000, "abort took %lld ms", (long long)(unit_mono_ms() - t0));
	pthread_join(th, NULL);
	CHECK(t.rc == -ECANCELED && t.c.status == -ECANCELED, "the wait ended %d", t.rc);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF, "fd %d still open", fd);
	CHECK(fake.destroys == 1, "%d destroys", fake.destroys);
	return 0;
}

/* Destroy with an op nobody waits on: its record is kept for the wait. */
static int test_destroy_pending(void)
{
	struct collx_comm *comm;
	struct collx_completion c;
	struct collx_op *op;
	int waits;

	CHECK(!fake_comm(1, &comm), "init");
	CHECK(!collx_allreduce_async(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &op), "ar");
	CHECK(collx_comm_destroy(comm) == 0, "destroy");
	waits = fake.waits;
	CHECK(collx_wait(op, &c) == -ECANCELED && c.status == -ECANCELED, "wait after destroy");
	CHECK(fake.waits == waits, "the wait went to a closed fd");
	CHECK(fake_pending() == 0, "a record left in the kernel");
	return 0;
}

static int test_async_error(void)
{
	struct collx_comm *comm;
	struct collx_completion c;
	struct collx_op *op;
	int done = -1;

	CHECK(!fake_comm(1, &comm), "init");
	CHECK(!collx_allreduce_async(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM, &op), "ar");
	CHECK(collx_comm_get_async_error(comm) == 0, "error while running");
	CHECK(collx_test(op, &done, NULL) == 0 && done == 0, "test: done %d", done);
	fake_complete(1, -ETIMEDOUT, 0, COLLX_PHASE_BROADCAST);
	CHECK(collx_comm_get_async_error(comm) == -ETIMEDOUT, "async error %d",
	      collx_comm_get_async_error(comm));
	CHECK(collx_wait(op, &c) == -ETIMEDOUT && c.failed_rank == 0 &&
	      c.phase == COLLX_PHASE_BROADCAST, "wait: %d rank %u", c.status, c.failed_rank);
	CHECK(strstr(collx_comm_last_error(comm), "allreduce 16 x float sum op 1 of comm 77 on rank 0: ") &&
	      strstr(collx_comm_last_error(comm), "rank 0 (") &&
	      strstr(collx_comm_last_error(comm), "broadcast step 0"), "'%s'",
	      collx_comm_last_error(comm));
	collx_comm_destroy(comm);
	return 0;
}

static int test_abi10(void)
{
	struct collx_args a = { .coll = COLLX_COLL_ALLREDUCE, .dtype = COLLX_FP32,
				.count = 4, .sendbuf = bufa, .recvbuf = bufb };
	struct collx_comm *comm;
	struct collx_op *o1, *o2;

	setenv("COLLX_ALGO", "tree", 1);
	CHECK(!fake_comm(0, &comm), "init");
	fake.auto_complete = true;
	CHECK(collx_comm_global_id(comm) == 1, "global id %u on ABI 1.0", collx_comm_global_id(comm));
	CHECK(fake.last_create.size == sizeof(struct collx_comm_create) && !fake.last_create.tos,
	      "create");
	collx_group_start();
	collx_allreduce_async(comm, bufa, bufb, 4, COLLX_FP32, COLLX_OP_SUM, &o1);
	collx_allreduce_async(comm, bufa, bufb, 4, COLLX_FP32, COLLX_OP_SUM, &o2);
	CHECK(collx_group_end() == 0 && fake.groups == 0 && fake.submits == 2,
	      "ABI 1.0: %d groups, %d submits", fake.groups, fake.submits);
	CHECK(!fake.ops[0].s.flags, "COLLX_ALGO sent to an ABI 1.0 module");
	collx_wait(o1, NULL);
	collx_wait(o2, NULL);
	a.algo = COLLX_ALGO_TREE;
	CHECK(collx_submit(comm, &a, NULL) == -EOPNOTSUPP &&
	      strstr(collx_comm_last_error(comm), "needs a collx module with ABI 1.1"), "'%s'",
	      collx_comm_last_error(comm));
	a.algo = COLLX_ALGO_RING;
	CHECK(collx_submit(comm, &a, NULL) == 0 && !fake.ops[2].s.flags, "ring is what 1.0 runs");
	CHECK(collx_broadcast(comm, bufa, bufb, 4, COLLX_FP32, 0) == -EOPNOTSUPP &&
	      strstr(collx_comm_last_error(comm), "ABI 1.0"), "'%s'", collx_comm_last_error(comm));
	CHECK(collx_mem_register_dmabuf_at(comm, 0, 0, 4096, bufa, (void **)&o1) == -EOPNOTSUPP,
	      "dma-buf on ABI 1.0");
	collx_comm_destroy(comm);
	setenv("COLLX_IB_TC", "106", 1);
	CHECK(fake_comm(0, &comm) == -EOPNOTSUPP &&
	      strstr(collx_comm_last_error(NULL), "COLLX_IB_TC=106 needs a collx module with ABI 1.1"),
	      "'%s'", collx_comm_last_error(NULL));
	return 0;
}

static int test_create_fields(void)
{
	static const uint8_t zero[COLLX_SECRET_BYTES];
	char path[] = "/tmp/collx-unit-log-XXXXXX", log[8192], hex[2 * COLLX_SECRET_BYTES + 1];
	struct collx_comm *comm;
	int fd = mkstemp(path), i;

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	setenv("COLLX_DEBUG", "TRACE", 1);
	setenv("COLLX_DEBUG_FILE", path, 1);
	setenv("COLLX_IB_TC", "106", 1);
	collx_log_reinit();
	CHECK(!fake_comm(1, &comm), "init");
	CHECK(fake.last_create.tos == 106, "tos %u", fake.last_create.tos);
	CHECK(memcmp(fake.last_create.secret, zero, sizeof(zero)), "no secret in COMM_CREATE");
	CHECK(collx_comm_global_id(comm) == 77, "global id %u", collx_comm_global_id(comm));
	collx_comm_destroy(comm);
	unsetenv("COLLX_DEBUG_FILE");
	collx_log_reinit();
	CHECK(unit_slurp(path, log, sizeof(log)) > 0, "no log");
	unlink(path);
	for (i = 0; i < COLLX_SECRET_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", fake.last_create.secret[i]);
	CHECK(!strstr(log, hex) && !memmem(log, sizeof(log), fake.last_create.secret, 8),
	      "the secret is in the log");
	CHECK(strstr(log, "comm 77: rank 0 of 1 connected"), "no init line:\n%s", log);
	CHECK(strstr(log, "comm 77 destroyed"), "the log does not name the global id:\n%s", log);
	return 0;
}

static int test_algo_env(void)
{
	struct collx_args a = { .coll = COLLX_COLL_ALLREDUCE, .dtype = COLLX_FP32,
				.count = 4, .sendbuf = bufa, .recvbuf = bufb,
				.algo = COLLX_ALGO_RD };
	struct collx_comm *comm;

	setenv("COLLX_ALGO", "tree", 1);
	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	CHECK(!collx_allreduce(comm, bufa, bufb, 4, COLLX_FP32, COLLX_OP_SUM), "ar");
	CHECK(!collx_allgather(comm, bufa, bufb, 4, COLLX_FP32), "ag");
	CHECK(!collx_submit(comm, &a, NULL), "submit rd");
	CHECK(fake.ops[0].s.flags == COLLX_ALGO_TREE, "allreduce ran %u", fake.ops[0].s.flags);
	CHECK(fake.ops[1].s.flags == COLLX_ALGO_AUTO, "tree cannot run allgather: %u",
	      fake.ops[1].s.flags);
	CHECK(fake.ops[2].s.flags == COLLX_ALGO_RD, "an explicit algorithm wins: %u",
	      fake.ops[2].s.flags);
	collx_comm_destroy(comm);
	return 0;
}

static int test_args(void)
{
	struct collx_comm *comm;
	struct collx_op *op = (void *)1;

	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	CHECK(collx_broadcast(comm, bufa, bufb, 4, COLLX_FP32, 1) == -EINVAL &&
	      strstr(collx_comm_last_error(comm), "root 1 is not a rank of 0..0"), "'%s'",
	      collx_comm_last_error(comm));
	CHECK(collx_send(comm, bufa, 4, COLLX_FP32, -1) == -EINVAL &&
	      strstr(collx_comm_last_error(comm), "peer -1"), "'%s'", collx_comm_last_error(comm));
	CHECK(collx_allreduce(comm, NULL, bufb, 4, COLLX_FP32, COLLX_OP_SUM) == -EINVAL &&
	      strstr(collx_comm_last_error(comm), "no send buffer"), "'%s'",
	      collx_comm_last_error(comm));
	CHECK(collx_allreduce(comm, bufa, bufb, 4, COLLX_DTYPE_COUNT, COLLX_OP_SUM) == -EINVAL,
	      "dtype");
	CHECK(collx_allgather(comm, bufa, bufb, (size_t)1 << 62, COLLX_FP64) == -EINVAL &&
	      strstr(collx_comm_last_error(comm), "larger than"), "'%s'", collx_comm_last_error(comm));
	CHECK(collx_allreduce_async(comm, bufa, bufb, 4, COLLX_FP32, COLLX_OP_SUM, NULL) == -EINVAL,
	      "no op pointer");
	CHECK(collx_reduce_async(comm, bufa, bufb, 4, COLLX_FP32, 9, 0, &op) == -EINVAL && !op,
	      "redop; op not cleared");
	CHECK(fake.nops == 0, "a bad call reached the kernel");
	CHECK(!collx_allreduce(comm, NULL, NULL, 0, COLLX_FP32, COLLX_OP_SUM), "count 0");
	/* what a rank does not use is not passed (and not pinned) */
	CHECK(!collx_reduce(comm, bufa, bufb, 4, COLLX_FP32, COLLX_OP_SUM, 0) &&
	      fake.ops[1].s.recvbuf == (uintptr_t)bufb, "root's recv");
	CHECK(!collx_broadcast(comm, bufa, bufb, 4, COLLX_FP32, 0) &&
	      fake.ops[2].s.redop == 0 && fake.ops[2].s.sendbuf == (uintptr_t)bufa, "broadcast");
	CHECK(!collx_send(comm, bufa, 4, COLLX_FP32, 0) && !fake.ops[3].s.recvbuf &&
	      fake.ops[3].s.root == 0, "send");
	collx_comm_destroy(comm);
	return 0;
}

static int test_dmabuf(void)
{
	struct collx_comm *comm;
	struct collx_completion c;
	struct collx_op *op;
	void *addr, *h, *h2;
	char data[16] = "collx dma-buf!";
	int fd;

	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	fd = memfd_create("unit", MFD_CLOEXEC);
	CHECK(fd >= 0 && !ftruncate(fd, 8192), "memfd");
	CHECK(pwrite(fd, data, sizeof(data), 4196) == sizeof(data), "pwrite");
	CHECK(collx_mem_register_dmabuf(comm, fd, 100, 4000, &addr, &h) == 0, "%s",
	      collx_comm_last_error(comm));
	CHECK(fake.last_mr.flags == COLLX_MR_F_DMABUF && fake.last_mr.dmabuf_fd == fd &&
	      fake.last_mr.dmabuf_offset == 100 && fake.last_mr.length == 4000 &&
	      fake.last_mr.addr == (uintptr_t)addr, "MR_REG %x fd %d off %llu addr %llx vs %p",
	      fake.last_mr.flags, fake.last_mr.dmabuf_fd, (unsigned long long)fake.last_mr.dmabuf_offset,
	      (unsigned long long)fake.last_mr.addr, addr);
	CHECK(!memcmp((char *)addr + 4096, data, sizeof(data)), "the mapping is not at the offset");
	CHECK(!collx_allreduce_async(comm, bufa, addr, 16, COLLX_FP32, COLLX_OP_SUM, &op), "ar");
	CHECK(!collx_wait(op, &c) && (c.mem & COLLX_MEM_DMABUF), "mem %x", c.mem);
	CHECK(collx_mem_register_dmabuf_at(comm, fd, 0, 8192, (void *)0x7f0000000000, &h2) == 0 &&
	      fake.last_mr.addr == 0x7f0000000000ull, "_at");
	CHECK(collx_mem_deregister(comm, h) == 0 && collx_mem_deregister(comm, h2) == 0 &&
	      fake.mr_deregs == 2, "deregister");
	CHECK(collx_mem_deregister(comm, h) == -ENOENT, "deregistered twice");
	close(fd);
	collx_comm_destroy(comm);
	return 0;
}

static int test_op_log(void)
{
	char path[] = "/tmp/collx-unit-log-XXXXXX", log[8192];
	struct collx_comm *comm;
	void *h;
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	setenv("COLLX_DEBUG", "INFO", 1);
	setenv("COLLX_DEBUG_FILE", path, 1);
	collx_log_reinit();
	CHECK(!fake_comm(1, &comm), "init");
	fake.auto_complete = true;
	CHECK(!collx_mem_register(comm, bufb, sizeof(bufb), &h), "register");
	CHECK(!collx_allreduce(comm, bufa, bufb, 16, COLLX_FP32, COLLX_OP_SUM), "registered");
	CHECK(!collx_allreduce(comm, bufb, bufa, 16, COLLX_FP32, COLLX_OP_MAX), "bounced");
	CHECK(!collx_send(comm, bufa, 4, COLLX_INT32, 0), "send");
	setenv("COLLX_DEBUG_SUBSYS", "^COLL", 1);
	collx_log_reinit();
	CHECK(!collx_allreduce(comm, bufa, bufb, 5, COLLX_FP32, COLLX_OP_SUM), "filtered");
	collx_mem_deregister(comm, h);
	collx_comm_destroy(comm);
	unsetenv("COLLX_DEBUG_FILE");
	collx_log_reinit();
	CHECK(unit_slurp(path, log, sizeof(log)) > 0, "no log");
	unlink(path);
	CHECK(strstr(log, "COLLX INFO libcollx 1.1, module fake (ABI 1.1"), "no version line:\n%s", log);
	CHECK(strstr(log, "comm 77 op 1: allreduce 16 x float sum, 64 bytes, algo ring, mem zero-copy+placed,"),
	      "registered:\n%s", log);
	CHECK(strstr(log, "comm 77 op 2: allreduce 16 x float max, 64 bytes, algo ring, mem staged+bounced,"),
	      "bounced:\n%s", log);
	CHECK(strstr(log, "comm 77 op 3: send 4 x int32 to 0,"), "p2p:\n%s", log);
	CHECK(!strstr(log, "op 4:"), "COLLX_DEBUG_SUBSYS=^COLL did not filter:\n%s", log);
	return 0;
}

static int test_version_only(void)
{
	char path[] = "/tmp/collx-unit-log-XXXXXX", log[4096];
	struct collx_comm *comm;
	int fd = mkstemp(path);
	char *first;

	CHECK(fd >= 0, "mkstemp");
	close(fd);
	setenv("COLLX_DEBUG", "VERSION", 1);
	setenv("COLLX_DEBUG_FILE", path, 1);
	collx_log_reinit();
	CHECK(!fake_comm(1, &comm), "init");
	collx_comm_destroy(comm);
	CHECK(!fake_comm(1, &comm), "init 2");
	collx_comm_destroy(comm);
	unsetenv("COLLX_DEBUG_FILE");
	collx_log_reinit();
	CHECK(unit_slurp(path, log, sizeof(log)) > 0, "no log");
	unlink(path);
	first = strstr(log, "COLLX VERSION libcollx 1.1, module fake (ABI 1.1, features 0x3f)\n");
	CHECK(first, "'%s'", log);
	CHECK(!strstr(first + 1, "COLLX VERSION") && !strstr(log, "INFO"), "more than once:\n%s", log);
	return 0;
}

static int test_version(void)
{
	int v = 0;

	CHECK(collx_get_version(&v) == 0 && v == 10100, "%d", v);
	CHECK(collx_get_version(NULL) == -EINVAL, "NULL");
	CHECK(!strcmp(collx_coll_name(COLLX_COLL_REDUCE_SCATTER), "reduce_scatter") &&
	      !strcmp(collx_algo_name(COLLX_ALGO_PAIRWISE), "pairwise") &&
	      !strcmp(collx_phase_name(COLLX_PHASE_EXCHANGE), "exchange") &&
	      !strcmp(collx_dtype_name(COLLX_FP8_E5M2), "f8e5m2") &&
	      collx_dtype_size(COLLX_FP8_E4M3) == 1 && !strcmp(collx_coll_name(99), "?"), "names");
	return 0;
}

const struct unit_test fake_tests[] = {
	{ "group: one SUBMIT_GROUP, issue order, blocking calls waited at the end", test_group_one_comm },
	{ "group: nested start/end submit at the outermost end", test_group_nested },
	{ "group: one SUBMIT_GROUP per communicator", test_group_two_comms },
	{ "group: all or nothing; its ops end with the error", test_group_all_or_nothing },
	{ "group: per thread", test_group_per_thread },
	{ "abort from another thread while an op is waited on", test_abort_while_waiting },
	{ "destroy keeps the record of an op nobody waits on", test_destroy_pending },
	{ "async error, test and wait of a failed op", test_async_error },
	{ "ABI 1.0 module: no group ioctl, no algorithm, no tos, no dma-buf", test_abi10 },
	{ "COMM_CREATE: secret (never logged), COLLX_IB_TC, global id", test_create_fields },
	{ "COLLX_ALGO for what it can run; explicit algorithms win", test_algo_env },
	{ "argument checks name the mistake; unused buffers are not passed", test_args },
	{ "dma-buf registration, mapped and _at", test_dmabuf },
	{ "COLLX_DEBUG=INFO: per op collective, bytes, algorithm, memory path", test_op_log },
	{ "COLLX_DEBUG=VERSION: library and module versions once", test_version_only },
	{ "collx_get_version and the names", test_version },
	{ NULL, NULL },
};
