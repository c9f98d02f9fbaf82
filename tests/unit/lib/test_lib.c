// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of libcollx: environment parsing, the TCP bootstrap
 * (several processes over 127.0.0.1), error relaying through
 * collx_comm_init_all(), the bench data (exact for every dtype x op in any
 * reduction order) and the nccl-tests table format.  Prints TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collx_int.h"
#include "benchdata.h"

static int ntests, nfailed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		return 1;						\
	}								\
} while (0)

static void run(const char *name, int (*fn)(void))
{
	int rc = fn();

	ntests++;
	if (rc)
		nfailed++;
	printf("%sok %d - %s\n", rc ? "not " : "", ntests, name);
	fflush(stdout);
}

static void clearenv_collx(void)
{
	static const char *const vars[] = {
		"COLLX_RANK", "COLLX_NRANKS", "COLLX_COMM_ID", "COLLX_MASTER_ADDR",
		"COLLX_MASTER_PORT", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
		"COLLX_BOOTSTRAP_TIMEOUT", "COLLX_TIMEOUT_MS", "COLLX_DEVICE",
		"COLLX_IB_HCA", "COLLX_RDMA_ADDR",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* ---- env ---- */

static int test_env_collx(void)
{
	struct collx_env_cfg c;
	char err[256];

	clearenv_collx();
	setenv("COLLX_RANK", "2", 1);
	setenv("COLLX_NRANKS", "4", 1);
	setenv("COLLX_MASTER_ADDR", "10.77.0.10", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.rank == 2 && c.nranks == 4, "rank %d n %d", c.rank, c.nranks);
	CHECK(!strcmp(c.host, "10.77.0.10") && c.port == COLLX_DEFAULT_PORT,
	      "%s:%u", c.host, c.port);
	setenv("COLLX_MASTER_PORT", "4000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 4000, "%u", c.port);
	setenv("COLLX_MASTER_ADDR", "node0:4100", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 4100 &&
	      !strcmp(c.host, "node0"), "%s:%u", c.host, c.port);
	setenv("COLLX_COMM_ID", "192.168.1.1:5000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 5000 &&
	      !strcmp(c.host, "192.168.1.1") && !strcmp(c.source, "COLLX_COMM_ID"),
	      "%s:%u", c.host, c.port);
	setenv("COLLX_COMM_ID", "192.168.1.1", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "COLLX_COMM_ID"),
	      "%s", err);
	return 0;
}

static int test_env_torchrun(void)
{
	struct collx_env_cfg c;
	char err[256];

	clearenv_collx();
	setenv("RANK", "1", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("MASTER_ADDR", "trainer-0", 1);
	setenv("MASTER_PORT", "29500", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.rank == 1 && c.nranks == 8 && !strcmp(c.host, "trainer-0"), "%d %d %s",
	      c.rank, c.nranks, c.host);
	CHECK(c.port == 29501, "torchrun's store holds MASTER_PORT; got %u", c.port);
	setenv("COLLX_MASTER_PORT", "7000", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.port == 7000, "%u", c.port);
	/* COLLX_ variables win over torchrun's */
	setenv("COLLX_RANK", "3", 1);
	setenv("COLLX_NRANKS", "4", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == 0 && c.rank == 3 && c.nranks == 4,
	      "%d %d", c.rank, c.nranks);
	return 0;
}

static int test_env_errors(void)
{
	struct collx_env_cfg c;
	char err[256];

	clearenv_collx();
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "not set"), "%s", err);
	setenv("COLLX_RANK", "4", 1);
	setenv("COLLX_NRANKS", "4", 1);
	setenv("COLLX_MASTER_ADDR", "x", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "not a rank below"),
	      "%s", err);
	setenv("COLLX_RANK", "1x", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "1x accepted");
	setenv("COLLX_RANK", "0", 1);
	setenv("COLLX_NRANKS", "0", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "0 ranks accepted");
	setenv("COLLX_NRANKS", "2", 1);
	unsetenv("COLLX_MASTER_ADDR");
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL && strstr(err, "rendezvous"),
	      "%s", err);
	setenv("COLLX_MASTER_ADDR", "h:99999", 1);
	CHECK(collx_env_parse(&c, err, sizeof(err)) == -EINVAL, "port 99999 accepted");
	return 0;
}

static int test_parse_misc(void)
{
	char host[64], name[64];
	uint16_t port;
	int p;
	long v;

	CHECK(collx_parse_hostport("[fe80::1]:80", host, sizeof(host), &port) == 0 &&
	      !strcmp(host, "fe80::1") && port == 80, "%s %u", host, port);
	CHECK(collx_parse_hostport("fe80::1", host, sizeof(host), &port) == -EINVAL, "bare v6");
	CHECK(collx_parse_hostport(":80", host, sizeof(host), &port) == -EINVAL, "no host");
	CHECK(collx_parse_hostport("h:", host, sizeof(host), &port) == -EINVAL, "no port");
	CHECK(collx_parse_hca("rxe0", name, sizeof(name), &p) == 0 && !strcmp(name, "rxe0") &&
	      p == 0, "%s %d", name, p);
	CHECK(collx_parse_hca("mlx5_1:2", name, sizeof(name), &p) == 0 &&
	      !strcmp(name, "mlx5_1") && p == 2, "%s %d", name, p);
	CHECK(collx_parse_hca("=mlx5_0:1,mlx5_1", name, sizeof(name), &p) == 0 &&
	      !strcmp(name, "mlx5_0") && p == 1, "%s %d", name, p);
	CHECK(collx_parse_hca("^mlx5_0", name, sizeof(name), &p) == -EINVAL, "exclusion");
	CHECK(collx_parse_hca("rxe0:x", name, sizeof(name), &p) == -EINVAL, "port x");
	setenv("COLLX_T", "17", 1);
	CHECK(collx_env_long("COLLX_T", 5, 1, 100, &v) == 0 && v == 17, "%ld", v);
	CHECK(collx_env_long("COLLX_UNSET_T", 5, 1, 100, &v) == 0 && v == 5, "%ld", v);
	setenv("COLLX_T", "170", 1);
	CHECK(collx_env_long("COLLX_T", 5, 1, 100, &v) == -EINVAL, "range");
	return 0;
}

static int test_debug(void)
{
	char out[256], want[256], host[64];

	CHECK(collx_log_parse_level("warn") == COLLX_LOG_WARN, "warn");
	CHECK(collx_log_parse_level("INFO") == COLLX_LOG_INFO, "info");
	CHECK(collx_log_parse_level("TRACE") == COLLX_LOG_TRACE, "trace");
	CHECK(collx_log_parse_level(NULL) == COLLX_LOG_NONE, "unset");
	CHECK(collx_log_parse_level("LOUD") == -1, "bad");
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(want, sizeof(want), "/tmp/collx.%s.%d.log%%", host, (int)getpid());
	CHECK(collx_log_expand_path("/tmp/collx.%h.%p.log%%", out, sizeof(out)) == 0 &&
	      !strcmp(out, want), "%s vs %s", out, want);
	CHECK(collx_log_expand_path("%h%h%h%h%h%h%h%h", out, 8) == -ENAMETOOLONG, "overflow");
	return 0;
}

/* ---- bootstrap: several processes over loopback ---- */

struct child_res {
	int rc;
	int failed_rank;
	uint64_t key;
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
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint16_t free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &len);
	close(fd);
	return ntohs(sa.sin_port);
}

static void run_bs(const struct bs_case *bc, struct child_res *res)
{
	uint16_t port = free_port();
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
				memcpy(cr.err, br.err, sizeof(cr.err));
				for (i = 0; !cr.rc && i < p.nranks && i < 8; i++)
					memcpy(&cr.addrs[i], br.addrs[i].addr, 4);
				if (!cr.rc && bc->confirm) {
					int st = bc->create_status_of[r];

					usleep(bc->create_ms_of[r] * 1000);
					cr.rc = collx_bs_confirm(&p, &br, st, st ? r : -1,
								 st ? "create failed here" : "",
								 bc->confirm_wait_ms ? bc->confirm_wait_ms : 5000);
					cr.confirmed_ms = mono_ms();
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
	int64_t start = mono_ms();
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
	uint16_t port = free_port();
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

			clearenv_collx();
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
	}
	printf("#   message: %s\n", msgs[2]);
	return 0;
}

static int test_unique_id(void)
{
	struct collx_unique_id id;
	struct collx_id_int *ii = (struct collx_id_int *)id.internal;
	int fd;

	clearenv_collx();
	setenv("COLLX_RDMA_ADDR", "127.0.0.1", 1);
	CHECK(collx_get_unique_id(&id) == 0, "%s", collx_comm_last_error(NULL));
	CHECK(ii->magic == COLLX_BS_MAGIC && ii->nonce && ii->port, "bad id");
	fd = collx_bs_take_listener(ii->nonce);
	CHECK(fd >= 0, "listener not kept");
	CHECK(collx_bs_take_listener(ii->nonce) < 0, "listener taken twice");
	close(fd);
	setenv("COLLX_COMM_ID", "127.0.0.1:nope", 1);
	CHECK(collx_get_unique_id(&id) == -EINVAL, "bad COLLX_COMM_ID accepted");
	clearenv_collx();
	return 0;
}

/* ---- bench data ---- */

static int test_half(void)
{
	int i;

	for (i = -2048; i <= 2048; i++) {
		CHECK(bench_f16_to_f32(bench_f32_to_f16((float)i)) == (float)i, "fp16 %d", i);
		if (i >= -256 && i <= 256)
			CHECK(bench_bf16_to_f32(bench_f32_to_bf16((float)i)) == (float)i, "bf16 %d", i);
	}
	CHECK(bench_f32_to_f16(1.0f) == 0x3c00, "1.0");
	CHECK(bench_f32_to_f16(65504.0f) == 0x7bff, "max");
	CHECK(bench_f32_to_f16(1e6f) == 0x7c00, "inf");
	CHECK(bench_f32_to_f16(2049.0f) == 0x6800, "tie to even: %x", bench_f32_to_f16(2049.0f));
	CHECK(bench_f32_to_f16(5.960464477539063e-08f) == 0x0001, "subnormal");
	CHECK(bench_f16_to_f32(0x0001) == 5.960464477539063e-08f, "subnormal back");
	CHECK(bench_f32_to_bf16(1.0f) == 0x3f80, "bf16 1.0");
	return 0;
}

/* Reduce in the element type, in two orders, and compare with
 * bench_expected(): the data must be exact whatever the order. */
static int test_data_exact(void)
{
	int dt, op, n, r, rep;
	size_t i;
	char a[8], b[8], v[8];

	for (n = 1; n <= 8; n++)
		for (dt = 0; dt < COLLX_DTYPE_COUNT; dt++)
			for (op = 0; op < COLLX_OP_COUNT; op++)
				for (rep = 0; rep < 3; rep++)
					for (i = 0; i < 420; i++) {
						double ra, rb, want;

						bench_store(a, 0, dt, (double)bench_value(dt, op, n, 0, i, rep));
						bench_store(b, 0, dt, (double)bench_value(dt, op, n, n - 1, i, rep));
						for (r = 1; r < n; r++) {
							double x, y;

							bench_store(v, 0, dt, (double)bench_value(dt, op, n, r, i, rep));
							x = bench_load(a, 0, dt);
							y = bench_load(v, 0, dt);
							ra = op == COLLX_OP_PROD ? x * y :
							     op == COLLX_OP_MAX ? fmax(x, y) :
							     op == COLLX_OP_MIN ? fmin(x, y) : x + y;
							bench_store(a, 0, dt, ra);
							bench_store(v, 0, dt, (double)bench_value(dt, op, n, n - 1 - r, i, rep));
							x = bench_load(b, 0, dt);
							y = bench_load(v, 0, dt);
							rb = op == COLLX_OP_PROD ? x * y :
							     op == COLLX_OP_MAX ? fmax(x, y) :
							     op == COLLX_OP_MIN ? fmin(x, y) : x + y;
							bench_store(b, 0, dt, rb);
						}
						ra = bench_load(a, 0, dt);
						rb = bench_load(b, 0, dt);
						if (op == COLLX_OP_AVG) {
							ra = dt >= COLLX_FP16 ? ra / n : (double)((long long)ra / n);
							rb = dt >= COLLX_FP16 ? rb / n : (double)((long long)rb / n);
						}
						want = bench_expected(dt, op, n, i, rep);
						CHECK(ra == want && rb == want,
						      "n %d %s %s i %zu: %g / %g, want %g", n,
						      collx_dtype_name(dt), collx_redop_name(op), i, ra, rb, want);
						/* and the stored expectation survives the type */
						bench_store(v, 0, dt, want);
						CHECK(bench_load(v, 0, dt) == want, "not representable");
					}
	return 0;
}

static int test_check(void)
{
	float buf[100];
	size_t first = 0, i;

	for (i = 0; i < 100; i++)
		buf[i] = (float)bench_expected(COLLX_FP32, COLLX_OP_SUM, 4, i, 7);
	CHECK(bench_check(buf, 100, COLLX_FP32, COLLX_OP_SUM, 4, 7, &first) == 0, "clean");
	buf[42] += 1;
	buf[77] = -0.5f;
	CHECK(bench_check(buf, 100, COLLX_FP32, COLLX_OP_SUM, 4, 7, &first) == 2 && first == 42,
	      "first %zu", first);
	return 0;
}

static int test_parse_names(void)
{
	CHECK(bench_parse_dtype("float") == COLLX_FP32, "float");
	CHECK(bench_parse_dtype("bf16") == COLLX_BF16, "bf16");
	CHECK(bench_parse_dtype("half") == COLLX_FP16, "half");
	CHECK(bench_parse_dtype("uint64") == COLLX_UINT64, "uint64");
	CHECK(bench_parse_dtype("quad") == -1, "quad");
	CHECK(bench_parse_redop("avg") == COLLX_OP_AVG, "avg");
	CHECK(bench_parse_redop("xor") == -1, "xor");
	CHECK(bench_parse_size("8") == 8, "8");
	CHECK(bench_parse_size("1K") == 1024, "1K");
	CHECK(bench_parse_size("64M") == 64u << 20, "64M");
	CHECK(bench_parse_size("1G") == 1u << 30, "1G");
	CHECK(bench_parse_size("1MB") == 1u << 20, "1MB");
	CHECK(bench_parse_size("x") == 0, "x");
	CHECK(!strcmp(collx_dtype_name(COLLX_FP32), "float") &&
	      !strcmp(collx_dtype_name(COLLX_BF16), "bfloat16"), "names");
	return 0;
}

/* The row and header text, column for column as nccl-tests prints them. */
static int test_format(void)
{
	char line[256];
	double alg, bus;
	int n;
	FILE *f;
	char hdr[1024];
	size_t got;

	n = bench_fmt_lead(line, sizeof(line), 8, 2, "float", "sum", -1);
	n += bench_fmt_half(line + n, sizeof(line) - n, 17.39, 0.0, 0.0, 0);
	bench_fmt_half(line + n, sizeof(line) - n, 16.26, 0.0, 0.0, 0);
	CHECK(!strcmp(line, "           8             2     float     sum      -1    17.39    0.00    0.00      0    16.26    0.00    0.00      0"),
	      "'%s'", line);
	n = bench_fmt_lead(line, sizeof(line), 1073741824, 268435456, "float", "sum", -1);
	bench_fmt_half(line + n, sizeof(line) - n, 44023, 24.39, 45.73, 0);
	CHECK(!strcmp(line, "  1073741824     268435456     float     sum      -1    44023   24.39   45.73      0"),
	      "'%s'", line);
	bench_fmt_half(line, sizeof(line), 583.4, 1.80, 1.80, -1);
	CHECK(!strcmp(line, "    583.4    1.80    1.80    N/A"), "'%s'", line);
	bench_bw(1 << 20, 0.001, 4, &alg, &bus);
	CHECK(fabs(alg - 1.048576) < 1e-9 && fabs(bus - 1.572864) < 1e-9, "%g %g", alg, bus);
	f = tmpfile();
	bench_print_header(f);
	rewind(f);
	got = fread(hdr, 1, sizeof(hdr) - 1, f);
	hdr[got] = 0;
	fclose(f);
	CHECK(strstr(hdr, "\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"),
	      "'%s'", hdr);
	CHECK(strstr(hdr, "\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"),
	      "'%s'", hdr);
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	run("env: COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR/COLLX_COMM_ID", test_env_collx);
	run("env: torchrun RANK/WORLD_SIZE/MASTER_ADDR, port MASTER_PORT+1", test_env_torchrun);
	run("env: errors name the variable", test_env_errors);
	run("parse: host:port, COLLX_IB_HCA, integers", test_parse_misc);
	run("debug: levels and COLLX_DEBUG_FILE %h/%p", test_debug);
	run("bootstrap: 4 processes over 127.0.0.1, one key, one table", test_bs_env_4);
	run("bootstrap: ranks retry until rank 0 listens", test_bs_root_late);
	run("bootstrap: three inits in a row pair up by call number", test_bs_rounds);
	run("bootstrap: a rank that never joins is named on every rank", test_bs_missing);
	run("bootstrap: no rank 0 -> bounded retry, clear error", test_bs_no_root);
	run("bootstrap: ranks disagreeing on nranks fail with the reason", test_bs_nranks_mismatch);
	run("bootstrap: another job's id is refused", test_bs_wrong_nonce);
	run("bootstrap: the unique id's nonce is the comm key", test_bs_nonce_key);
	run("bootstrap: one rank's local failure reaches every rank", test_bs_local_failure);
	run("bootstrap: init ends in a barrier after COMM_CREATE", test_bs_confirm_barrier);
	run("bootstrap: one rank's COMM_CREATE failure reaches every rank", test_bs_confirm_failure);
	run("bootstrap: a rank that never reports its COMM_CREATE is named", test_bs_confirm_silent);
	run("init_all: no /dev/collx -> every rank fails fast, same message", test_init_all_no_device);
	run("unique id: keeps its listener, checks COLLX_COMM_ID", test_unique_id);
	run("bench: fp16/bf16 conversions", test_half);
	run("bench: data exact for every dtype x op x 1..8 ranks, any order", test_data_exact);
	run("bench: check counts wrong elements", test_check);
	run("bench: type, op and size names", test_parse_names);
	run("bench: nccl-tests row and header format", test_format);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
