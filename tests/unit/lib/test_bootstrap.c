// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP rendezvous between processes over 127.0.0.1: the table, the
 * communicator key and the secret every rank gets, retries, the errors
 * every rank hears (missing rank, no rank 0, count mismatch, stale id,
 * relayed local failure), the closing barrier; collx_comm_init_all()
 * without a device, and unique ids.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collx_int.h"
#include "unit_lib.h"


struct child_res {
	int rc;
	int failed_rank;
	uint64_t key;
	uint8_t secret[COLLX_SECRET_BYTES];
	char err[COLLX_ERRLEN];
	uint32_t addrs[8];
	int64_t confirmed_ms;	/* when collx_bs_confirm() returned */
};

struct bs_case {
	int nranks;
	int skip_rank;		/* never starts */
	int nranks_of[8];	/* 0: nranks */
	uint64_t nonce_of[8];	/* per rank nonce (id mode) */
	int status_of[8];	/* local failure */
	int root_delay_ms;
	int timeout_ms;
	uint32_t seq;
	int rounds;		/* bootstraps in a row per process (env mode) */
	int confirm;		/* then collx_bs_confirm(), as after COMM_CREATE */
	int create_status_of[8];	/* COMM_CREATE outcome reported */
	int create_ms_of[8];	/* how long "COMM_CREATE" takes */
	int confirm_wait_ms;
	int bind_lo;		/* bind every socket to 127.0.0.1 */
};

static void run_bs(const struct bs_case *bc, struct child_res *res)
{
	uint16_t port = unit_free_port();
	int pipes[8][2], r, round;
	pid_t pids[8];

	for (r = 0; r < bc->nranks; r++) {
		memset(&res[r], 0, sizeof(res[r]));
		res[r].rc = 999;
		if (r == bc->skip_rank)
			continue;
		if (pipe(pipes[r]))
			abort();
		pids[r] = fork();
		if (pids[r] == 0) {
			struct collx_bs_params p;
			struct collx_bs_result br;
			struct child_res cr;
			int i;

			close(pipes[r][0]);
			if (r == 0 && bc->root_delay_ms)
				usleep(bc->root_delay_ms * 1000);
			for (round = 0; round < (bc->rounds ? bc->rounds : 1); round++) {
				memset(&p, 0, sizeof(p));
				memset(&cr, 0, sizeof(cr));
				p.rank = r;
				p.nranks = bc->nranks_of[r] ? bc->nranks_of[r] : bc->nranks;
				p.root.sin_family = AF_INET;
				p.root.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
				p.root.sin_port = htons(port);
				p.nonce = bc->nonce_of[r];
				p.seq = bc->seq + round;
				p.listen_fd = -1;
				p.bind_addr.s_addr = bc->bind_lo ? htonl(INADDR_LOOPBACK) : htonl(INADDR_ANY);
				p.timeout_ms = bc->timeout_ms ? bc->timeout_ms : 10000;
				p.local_status = bc->status_of[r];
				if (p.local_status)
					snprintf(p.local_msg, sizeof(p.local_msg), "test failure %d",
						 -p.local_status);
				p.self.family = AF_INET;
				p.self.addr[0] = 10;
				p.self.addr[3] = (uint8_t)(r + 1 + 16 * round);
				cr.rc = collx_bootstrap(&p, &br);
				cr.failed_rank = br.failed_rank;
				cr.key = br.comm_key;
				memcpy(cr.secret, br.secret, sizeof(cr.secret));
				memcpy(cr.err, br.err, sizeof(cr.err));
				for (i = 0; !cr.rc && i < p.nranks && i < 8; i++)
					memcpy(&cr.addrs[i], br.addrs[i].addr, 4);
				if (!cr.rc && bc->confirm) {
					int st = bc->create_status_of[r];

					usleep(bc->create_ms_of[r] * 1000);
					cr.rc = collx_bs_confirm(&p, &br, st, st ? r : -1,
								 st ? "create failed here" : "",
								 bc->confirm_wait_ms ? bc->confirm_wait_ms : 5000);
					cr.confirmed_ms = unit_mono_ms();
					cr.failed_rank = br.failed_rank;
					memcpy(cr.err, br.err, sizeof(cr.err));
				}
				collx_bs_result_free(&br);
			}
			if (write(pipes[r][1], &cr, sizeof(cr)) != sizeof(cr))
				_exit(2);
			_exit(0);
		}
		close(pipes[r][1]);
	}
	for (r = 0; r < bc->nranks; r++) {
		int st;

		if (r == bc->skip_rank)
			continue;
		if (read(pipes[r][0], &res[r], sizeof(res[r])) != sizeof(res[r]))
			res[r].rc = 998;
		close(pipes[r][0]);
		waitpid(pids[r], &st, 0);
	}
}

static int test_bs_env_4(void)
{
	struct bs_case bc = { .nranks = 4, .skip_rank = -1, .seq = 1 };
	struct child_res res[8];
	int r, i;

	run_bs(&bc, res);
	for (r = 0; r < 4; r++) {
		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(res[r].key && res[r].key == res[0].key, "rank %d key %llx vs %llx", r,
		      (unsigned long long)res[r].key, (unsigned long long)res[0].key);
		for (i = 0; i < 4; i++) {
			uint8_t *a = (uint8_t *)&res[r].addrs[i];

			CHECK(a[0] == 10 && a[3] == i + 1, "rank %d sees rank %d at %u.x.x.%u", r,
			      i, a[0], a[3]);
		}
	}
	return 0;
}

static int test_bs_root_late(void)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .root_delay_ms = 700 };
	struct child_res res[8];
	int r;

	run_bs(&bc, res);
	for (r = 0; r < 3; r++)
		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
	return 0;
}

static int test_bs_rounds(void)
{
	/* Three inits in a row on the same port: the n-th call of every
	 * rank pairs up, whoever is fast. */
	struct bs_case bc = { .nranks = 4, .skip_rank = -1, .seq = 1, .rounds = 3 };
	struct child_res res[8];
	int r;

	run_bs(&bc, res);
	for (r = 0; r < 4; r++) {
		uint8_t *a = (uint8_t *)&res[r].addrs[3];

		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(res[r].key == res[0].key, "keys differ");
		CHECK(a[3] == 4 + 32, "rank %d: last round's table has %u", r, a[3]);
	}
	return 0;
}

static int test_bs_missing(void)
{
	struct bs_case bc = { .nranks = 4, .skip_rank = 2, .seq = 1, .timeout_ms = 1500 };
	struct child_res res[8];
	int r;

	run_bs(&bc, res);
	for (r = 0; r < 4; r++) {
		if (r == 2)
			continue;
		CHECK(res[r].rc == -ETIMEDOUT, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(res[r].failed_rank == 2, "rank %d: failed_rank %d", r, res[r].failed_rank);
		CHECK(strstr(res[r].err, "rank 2 never joined"), "rank %d: '%s'", r, res[r].err);
	}
	printf("#   message: %s\n", res[1].err);
	return 0;
}

static int test_bs_no_root(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = 0, .seq = 1, .timeout_ms = 1000 };
	struct child_res res[8];

	run_bs(&bc, res);
	CHECK(res[1].rc == -ETIMEDOUT && res[1].failed_rank == 0, "%d %d", res[1].rc,
	      res[1].failed_rank);
	CHECK(strstr(res[1].err, "cannot reach rank 0 at 127.0.0.1:"), "'%s'", res[1].err);
	CHECK(strstr(res[1].err, "Connection refused"), "'%s'", res[1].err);
	printf("#   message: %s\n", res[1].err);
	return 0;
}

static int test_bs_nranks_mismatch(void)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .timeout_ms = 3000 };
	struct child_res res[8];
	int r;

	bc.nranks_of[2] = 4;
	run_bs(&bc, res);
	for (r = 0; r < 3; r++) {
		CHECK(res[r].rc == -EINVAL, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(strstr(res[r].err, "says there are 4 ranks"), "rank %d: '%s'", r, res[r].err);
	}
	return 0;
}

static int test_bs_wrong_nonce(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = -1, .timeout_ms = 1500 };
	struct child_res res[8];

	bc.nonce_of[0] = 0x1111;
	bc.nonce_of[1] = 0x2222;
	run_bs(&bc, res);
	CHECK(res[1].rc == -EPROTO && strstr(res[1].err, "another unique id"), "%d %s",
	      res[1].rc, res[1].err);
	CHECK(res[0].rc == -ETIMEDOUT, "root: %d %s", res[0].rc, res[0].err);
	return 0;
}

static int test_bs_nonce_key(void)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1 };
	struct child_res res[8];
	int r;

	for (r = 0; r < 3; r++)
		bc.nonce_of[r] = 0xabcdef0123456789ull;
	run_bs(&bc, res);
	for (r = 0; r < 3; r++)
		CHECK(res[r].rc == 0 && res[r].key == 0xabcdef0123456789ull,
		      "rank %d: %d key %llx", r, res[r].rc, (unsigned long long)res[r].key);
	return 0;
}

static int test_bs_local_failure(void)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1 };
	struct child_res res[8];
	int r;

	bc.status_of[1] = -ENODEV;
	run_bs(&bc, res);
	for (r = 0; r < 3; r++) {
		CHECK(res[r].rc == -ENODEV, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(res[r].failed_rank == 1 && strstr(res[r].err, "rank 1 (") &&
		      strstr(res[r].err, "test failure 19"), "rank %d: %d '%s'", r,
		      res[r].failed_rank, res[r].err);
	}
	return 0;
}

static int test_bs_confirm_barrier(void)
{
	/* Rank 2's COMM_CREATE takes 600 ms: nobody returns before it. */
	struct bs_case bc = { .nranks = 4, .skip_rank = -1, .seq = 1, .confirm = 1 };
	struct child_res res[8];
	int64_t start = unit_mono_ms();
	int r;

	bc.create_ms_of[2] = 600;
	run_bs(&bc, res);
	for (r = 0; r < 4; r++) {
		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(res[r].confirmed_ms - start >= 600, "rank %d returned after %lld ms",
		      r, (long long)(res[r].confirmed_ms - start));
	}
	return 0;
}

static int test_bs_confirm_failure(void)
{
	/* Rank 3's COMM_CREATE fails: every rank hears it, naming rank 3. */
	struct bs_case bc = { .nranks = 4, .skip_rank = -1, .seq = 1, .confirm = 1 };
	struct child_res res[8];
	int r;

	bc.create_status_of[3] = -ETIMEDOUT;
	run_bs(&bc, res);
	for (r = 0; r < 4; r++)
		CHECK(res[r].rc == -ETIMEDOUT && res[r].failed_rank == 3 &&
		      strstr(res[r].err, "create failed here"), "rank %d: %d %d '%s'", r,
		      res[r].rc, res[r].failed_rank, res[r].err);
	return 0;
}

static int test_bs_confirm_silent(void)
{
	/* Rank 1 never reports (its COMM_CREATE outlasts rank 0's wait). */
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .confirm = 1,
			      .confirm_wait_ms = 300 };
	struct child_res res[8];
	int r;

	bc.create_ms_of[1] = 1500;
	run_bs(&bc, res);
	for (r = 0; r < 3; r++)
		CHECK(res[r].rc && res[r].failed_rank == 1, "rank %d: %d %d '%s'", r,
		      res[r].rc, res[r].failed_rank, res[r].err);
	CHECK(strstr(res[0].err, "rank 1 did not report"), "rank 0: '%s'", res[0].err);
	return 0;
}

/* The public API, end to end up to the device: no /dev/collx on a build
 * host, so every rank must fail at once with the same message. */
static int test_init_all_no_device(void)
{
	uint16_t port = unit_free_port();
	int pipes[3][2], r;
	pid_t pids[3];
	char msgs[3][COLLX_ERRLEN];
	int rcs[3];
	char ps[16];

	snprintf(ps, sizeof(ps), "%u", port);
	for (r = 0; r < 3; r++) {
		if (pipe(pipes[r]))
			abort();
		pids[r] = fork();
		if (pids[r] == 0) {
			struct collx_comm *comm;
			char buf[sizeof(int) + COLLX_ERRLEN];
			int rc;

			unit_clearenv();
			setenv("COLLX_RANK", (char[]){ '0' + r, 0 }, 1);
			setenv("COLLX_NRANKS", "3", 1);
			setenv("COLLX_MASTER_ADDR", "127.0.0.1", 1);
			setenv("COLLX_MASTER_PORT", ps, 1);
			setenv("COLLX_BOOTSTRAP_TIMEOUT", "10", 1);
			setenv("COLLX_DEVICE", "/nonexistent/collx", 1);
			rc = collx_comm_init_all(&comm);
			memcpy(buf, &rc, sizeof(int));
			snprintf(buf + sizeof(int), COLLX_ERRLEN, "%s", collx_comm_last_error(NULL));
			if (write(pipes[r][1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				_exit(2);
			_exit(comm != NULL);
		}
		close(pipes[r][1]);
	}
	for (r = 0; r < 3; r++) {
		char buf[sizeof(int) + COLLX_ERRLEN];
		int st;

		if (read(pipes[r][0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			memset(buf, 0, sizeof(buf));
		memcpy(&rcs[r], buf, sizeof(int));
		memcpy(msgs[r], buf + sizeof(int), COLLX_ERRLEN);
		close(pipes[r][0]);
		waitpid(pids[r], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rank %d returned a comm", r);
	}
	for (r = 0; r < 3; r++) {
		CHECK(rcs[r] == -ENOENT, "rank %d: %d '%s'", r, rcs[r], msgs[r]);
		CHECK(strstr(msgs[r], "rank 0 (") && strstr(msgs[r], "/dev/collx"), "rank %d: '%s'",
		      r, msgs[r]);
		/* what opening the device means, not collx_strerror()'s peer text */
		CHECK(strstr(msgs[r], "is the collx module loaded?"), "rank %d: '%s'", r, msgs[r]);
	}
	CHECK(strstr(collx_dev_strerror(-EACCES), "not a member of its group") &&
	      !strstr(collx_dev_strerror(-EACCES), "secret"), "EACCES opening /dev/collx: '%s'",
	      collx_dev_strerror(-EACCES));
	printf("#   message: %s\n", msgs[2]);
	return 0;
}

static int test_unique_id(void)
{
	struct collx_unique_id id;
	struct collx_id_int *ii = (struct collx_id_int *)id.internal;
	int fd;

	unit_clearenv();
	setenv("COLLX_RDMA_ADDR", "127.0.0.1", 1);
	CHECK(collx_get_unique_id(&id) == 0, "%s", collx_comm_last_error(NULL));
	CHECK(ii->magic == COLLX_BS_MAGIC && ii->nonce && ii->port, "bad id");
	fd = collx_bs_take_listener(ii->nonce);
	CHECK(fd >= 0, "listener not kept");
	CHECK(collx_bs_take_listener(ii->nonce) < 0, "listener taken twice");
	close(fd);
	setenv("COLLX_COMM_ID", "127.0.0.1:nope", 1);
	CHECK(collx_get_unique_id(&id) == -EINVAL, "bad COLLX_COMM_ID accepted");
	unsetenv("COLLX_COMM_ID");
	unsetenv("COLLX_RDMA_ADDR");
	setenv("COLLX_SOCKET_IFNAME", "=lo", 1);
	CHECK(collx_get_unique_id(&id) == 0 && ii->addr == htonl(INADDR_LOOPBACK),
	      "COLLX_SOCKET_IFNAME=lo: advertised %08x", ntohl(ii->addr));
	fd = collx_bs_take_listener(ii->nonce);
	CHECK(fd >= 0, "listener not kept");
	close(fd);
	unit_clearenv();
	return 0;
}


/* Every rank gets rank 0's 32 random bytes; two rendezvous never share them. */
static int test_bs_secret(void)
{
	static const uint8_t zero[COLLX_SECRET_BYTES];
	struct bs_case bc = { .nranks = 4, .skip_rank = -1, .seq = 1, .bind_lo = 1 };
	struct child_res res[8], again[8];
	int r;

	run_bs(&bc, res);
	run_bs(&bc, again);
	for (r = 0; r < 4; r++) {
		CHECK(res[r].rc == 0 && again[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(!memcmp(res[r].secret, res[0].secret, COLLX_SECRET_BYTES),
		      "rank %d has another secret", r);
	}
	CHECK(memcmp(res[0].secret, zero, COLLX_SECRET_BYTES), "secret is all zero");
	CHECK(memcmp(res[0].secret, again[0].secret, COLLX_SECRET_BYTES),
	      "two rendezvous made the same secret");
	return 0;
}

/* A failed rendezvous hands out no secret. */
static int test_bs_no_secret_on_failure(void)
{
	static const uint8_t zero[COLLX_SECRET_BYTES];
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1 };
	struct child_res res[8];
	int r;

	bc.status_of[2] = -ENODEV;
	run_bs(&bc, res);
	for (r = 0; r < 3; r++)
		CHECK(res[r].rc == -ENODEV && !memcmp(res[r].secret, zero, COLLX_SECRET_BYTES),
		      "rank %d: %d, secret %s", r, res[r].rc,
		      memcmp(res[r].secret, zero, COLLX_SECRET_BYTES) ? "given" : "none");
	return 0;
}

static int test_random(void)
{
	uint8_t a[64], b[64];

	CHECK(collx_random_bytes(a, sizeof(a)) == 0 && collx_random_bytes(b, sizeof(b)) == 0,
	      "getrandom");
	CHECK(memcmp(a, b, sizeof(a)), "the same 64 random bytes twice");
	return 0;
}

const struct unit_test bootstrap_tests[] = {
	{ "bootstrap: 4 processes over 127.0.0.1, one key, one table", test_bs_env_4 },
	{ "bootstrap: every rank gets rank 0's secret, new for every rendezvous", test_bs_secret },
	{ "bootstrap: no secret when the rendezvous fails", test_bs_no_secret_on_failure },
	{ "bootstrap: getrandom() bytes", test_random },
	{ "bootstrap: ranks retry until rank 0 listens", test_bs_root_late },
	{ "bootstrap: three inits in a row pair up by call number", test_bs_rounds },
	{ "bootstrap: a rank that never joins is named on every rank", test_bs_missing },
	{ "bootstrap: no rank 0 -> bounded retry, clear error", test_bs_no_root },
	{ "bootstrap: ranks disagreeing on nranks fail with the reason", test_bs_nranks_mismatch },
	{ "bootstrap: another job's id is refused", test_bs_wrong_nonce },
	{ "bootstrap: the unique id's nonce is the comm key", test_bs_nonce_key },
	{ "bootstrap: one rank's local failure reaches every rank", test_bs_local_failure },
	{ "bootstrap: init ends in a barrier after COMM_CREATE", test_bs_confirm_barrier },
	{ "bootstrap: one rank's COMM_CREATE failure reaches every rank", test_bs_confirm_failure },
	{ "bootstrap: a rank that never reports its COMM_CREATE is named", test_bs_confirm_silent },
	{ "init_all: no /dev/collx -> every rank fails fast, same message", test_init_all_no_device },
	{ "unique id: keeps its listener, checks COLLX_COMM_ID, COLLX_SOCKET_IFNAME", test_unique_id },
	{ NULL, NULL },
};
