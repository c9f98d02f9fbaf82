// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP rendezvous between processes over 127.0.0.1: the table, the
 * communicator key and the secret every rank gets, retries, the errors
 * every rank hears (missing rank, no rank 0, count mismatch, stale id,
 * relayed local failure), the closing barrier; collx_comm_init_all()
 * without a device, and unique ids.  With a job token (H4): SHA-256 and
 * HMAC known answers, the token file's checks, impostors, replays, address
 * binding, token mismatches, and a relay that sees every byte on the wire
 * and never the secret.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
	int64_t elapsed_ms;	/* how long collx_bootstrap() took */
};

/* Ranks plus one extra process (an impostor, a replayer). */
#define BS_PROCS	9

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
	const char *token_of[BS_PROCS];	/* job token (NULL: none) */
	int self_lo;		/* rank r binds and claims 127.0.0.(r + 1) */
	int claim_of[BS_PROCS];	/* self_lo: claim 127.0.0.claim instead */
	int any_addr;		/* rank 0: COLLX_SEPARATE_RDMA_NET=1 */
	int delay_of[BS_PROCS];	/* ms before the process starts */
	uint16_t port;		/* rank 0's (0: a free one) */
	uint16_t relay_port;	/* other ranks connect here instead */
	/* Run as process nranks, with rank 0's port; fills cr->rc, cr->err. */
	void (*extra)(const struct bs_case *bc, uint16_t port, struct child_res *cr);
	int impostor;		/* the rank an impostor claims */
	const char *root_log;	/* rank 0: COLLX_DEBUG=WARN into this file */
};

/* Rank @r's parameters for @round, as run_bs() gives them. */
static void bs_params(const struct bs_case *bc, int proc, int r, int round, uint16_t port,
		      struct collx_bs_params *p)
{
	const char *tok = bc->token_of[proc];

	memset(p, 0, sizeof(*p));
	p->rank = r;
	p->nranks = bc->nranks_of[r] ? bc->nranks_of[r] : bc->nranks;
	p->root.sin_family = AF_INET;
	p->root.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->root.sin_port = htons(r && bc->relay_port ? bc->relay_port : port);
	p->nonce = bc->nonce_of[r];
	p->seq = bc->seq + round;
	p->listen_fd = -1;
	p->bind_addr.s_addr = bc->bind_lo ? htonl(INADDR_LOOPBACK) : htonl(INADDR_ANY);
	p->timeout_ms = bc->timeout_ms ? bc->timeout_ms : 10000;
	p->local_status = bc->status_of[r];
	if (p->local_status)
		snprintf(p->local_msg, sizeof(p->local_msg), "test failure %d", -p->local_status);
	p->self.family = AF_INET;
	p->self.addr[0] = 10;
	p->self.addr[3] = (uint8_t)(r + 1 + 16 * round);
	if (bc->self_lo) {
		p->bind_addr.s_addr = htonl(INADDR_LOOPBACK + r);
		p->self.addr[0] = 127;
		p->self.addr[3] = (uint8_t)(bc->claim_of[proc] ? bc->claim_of[proc] : r + 1);
	}
	p->auth = tok != NULL;
	if (tok)
		collx_job_key_derive(tok, strlen(tok), p->job_key);
	p->any_rdma_addr = bc->any_addr;
}

/* One rank's process: its rendezvous (rounds of them), then the barrier. */
static void bs_rank(const struct bs_case *bc, int r, uint16_t port, struct child_res *cr)
{
	struct collx_bs_params p;
	struct collx_bs_result br;
	int64_t t0;
	int i, round;

	if (r == 0 && bc->root_log) {
		setenv("COLLX_DEBUG", "WARN", 1);
		setenv("COLLX_DEBUG_FILE", bc->root_log, 1);
		collx_log_reinit();
	}
	for (round = 0; round < (bc->rounds ? bc->rounds : 1); round++) {
		memset(cr, 0, sizeof(*cr));
		bs_params(bc, r, r, round, port, &p);
		t0 = unit_mono_ms();
		cr->rc = collx_bootstrap(&p, &br);
		cr->elapsed_ms = unit_mono_ms() - t0;
		cr->failed_rank = br.failed_rank;
		cr->key = br.comm_key;
		memcpy(cr->secret, br.secret, sizeof(cr->secret));
		memcpy(cr->err, br.err, sizeof(cr->err));
		for (i = 0; !cr->rc && i < p.nranks && i < 8; i++)
			memcpy(&cr->addrs[i], br.addrs[i].addr, 4);
		if (!cr->rc && bc->confirm) {
			int st = bc->create_status_of[r];

			usleep(bc->create_ms_of[r] * 1000);
			cr->rc = collx_bs_confirm(&p, &br, st, st ? r : -1,
						  st ? "create failed here" : "",
						  bc->confirm_wait_ms ? bc->confirm_wait_ms : 5000);
			cr->confirmed_ms = unit_mono_ms();
			cr->failed_rank = br.failed_rank;
			memcpy(cr->err, br.err, sizeof(cr->err));
		}
		collx_bs_result_free(&br);
	}
}

static void run_bs(const struct bs_case *bc, struct child_res *res)
{
	uint16_t port = bc->port ? bc->port : unit_free_port();
	int nprocs = bc->nranks + (bc->extra != NULL);
	int pipes[BS_PROCS][2], r;
	pid_t pids[BS_PROCS];

	for (r = 0; r < nprocs; r++) {
		memset(&res[r], 0, sizeof(res[r]));
		res[r].rc = 999;
		if (r == bc->skip_rank)
			continue;
		if (pipe(pipes[r]))
			abort();
		pids[r] = fork();
		if (pids[r] == 0) {
			struct child_res cr;

			close(pipes[r][0]);
			if (r == 0 && bc->root_delay_ms)
				usleep(bc->root_delay_ms * 1000);
			usleep(bc->delay_of[r] * 1000);
			memset(&cr, 0, sizeof(cr));
			if (r == bc->nranks)
				bc->extra(bc, port, &cr);
			else
				bs_rank(bc, r, port, &cr);
			if (write(pipes[r][1], &cr, sizeof(cr)) != sizeof(cr))
				_exit(2);
			_exit(0);
		}
		close(pipes[r][1]);
	}
	for (r = 0; r < nprocs; r++) {
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
/* collx_comm_init_all() on 3 processes; @toks: each one's COLLX_JOB_TOKEN;
 * @timeout: COLLX_BOOTSTRAP_TIMEOUT. */
static int init_all_procs(const char *const *toks, const char *timeout, int *rcs,
			  char (*msgs)[COLLX_ERRLEN])
{
	uint16_t port = unit_free_port();
	int pipes[3][2], r;
	pid_t pids[3];
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
			setenv("COLLX_BOOTSTRAP_TIMEOUT", timeout, 1);
			setenv("COLLX_DEVICE", "/nonexistent/collx", 1);
			if (toks && toks[r])
				setenv("COLLX_JOB_TOKEN", toks[r], 1);
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
	return 0;
}

static int test_init_all_no_device(void)
{
	char msgs[3][COLLX_ERRLEN];
	int rcs[3], r;

	if (init_all_procs(NULL, "10", rcs, msgs))
		return 1;
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


/* ---- H4: the authenticated rendezvous ---- */

#define TOKEN	"0123456789abcdef-this-job"

static int hex_is(const uint8_t *d, const char *hex)
{
	char got[2 * COLLX_SHA256_BYTES + 1];
	int i;

	for (i = 0; i < COLLX_SHA256_BYTES; i++)
		snprintf(got + 2 * i, 3, "%02x", d[i]);
	if (strcmp(got, hex)) {
		printf("#   got  %s\n#   want %s\n", got, hex);
		return 0;
	}
	return 1;
}

/* FIPS 180-2 appendix B, and a million 'a' fed in uneven pieces. */
static int test_sha256_kat(void)
{
	static const char m2[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	struct collx_sha256 s;
	uint8_t d[COLLX_SHA256_BYTES], a[1000];
	size_t done = 0, step = 1;

	collx_sha256("abc", 3, d);
	CHECK(hex_is(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "abc");
	collx_sha256("", 0, d);
	CHECK(hex_is(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "empty");
	collx_sha256(m2, sizeof(m2) - 1, d);
	CHECK(hex_is(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
	      "two blocks");
	memset(a, 'a', sizeof(a));
	collx_sha256_init(&s);
	while (done < 1000000) {
		size_t n = step < 1000000 - done ? step : 1000000 - done;

		collx_sha256_update(&s, a, n);
		done += n;
		step = step % 900 + 63;	/* 1..962: uneven pieces */
	}
	collx_sha256_final(&s, d);
	CHECK(hex_is(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
	      "a million 'a'");
	return 0;
}

/* RFC 4231 test cases 1, 2, 6 and 7; the MAC comparison. */
static int test_hmac_kat(void)
{
	static const char d6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
	static const char d7[] = "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.";
	uint8_t k[131], d[COLLX_SHA256_BYTES], e[COLLX_SHA256_BYTES];

	memset(k, 0x0b, 20);
	collx_hmac_sha256(k, 20, "Hi There", 8, d);
	CHECK(hex_is(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"), "case 1");
	collx_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
	CHECK(hex_is(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"), "case 2");
	memset(k, 0xaa, sizeof(k));
	collx_hmac_sha256(k, sizeof(k), d6, sizeof(d6) - 1, d);
	CHECK(hex_is(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"), "case 6");
	collx_hmac_sha256(k, sizeof(k), d7, sizeof(d7) - 1, d);
	CHECK(hex_is(d, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"), "case 7");
	memcpy(e, d, sizeof(e));
	CHECK(collx_mac_equal(d, e, sizeof(d)), "equal MACs differ");
	e[31] ^= 1;
	CHECK(!collx_mac_equal(d, e, sizeof(d)), "last bit ignored");
	e[31] ^= 1;
	e[0] ^= 0x80;
	CHECK(!collx_mac_equal(d, e, sizeof(d)), "first bit ignored");
	return 0;
}

/* The token from the environment or a file only its owner can read. */
static int test_job_token(void)
{
	char path[] = "/tmp/collx-unit-token.XXXXXX", err[COLLX_ERRLEN];
	uint8_t key[COLLX_JOB_KEY_BYTES], want[COLLX_JOB_KEY_BYTES];
	int fd, rc;

	CHECK(collx_job_key(key, err, sizeof(err)) == 0, "no token: %s", err);
	collx_job_key_derive(TOKEN, strlen(TOKEN), want);
	setenv("COLLX_JOB_TOKEN", TOKEN, 1);
	CHECK(collx_job_key(key, err, sizeof(err)) == 1 && !memcmp(key, want, sizeof(key)),
	      "COLLX_JOB_TOKEN: %s", err);
	setenv("COLLX_JOB_TOKEN", "0123456789abcde", 1);
	rc = collx_job_key(key, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "fewer than 16"), "15 bytes: %d %s", rc, err);
	unsetenv("COLLX_JOB_TOKEN");

	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	CHECK(write(fd, TOKEN "\n", sizeof(TOKEN)) == sizeof(TOKEN), "write");
	close(fd);
	setenv("COLLX_JOB_TOKEN_FILE", path, 1);
	chmod(path, 0644);
	rc = collx_job_key(key, err, sizeof(err));
	printf("#   message: %s\n", err);
	CHECK(rc == -EPERM && strstr(err, path) && strstr(err, "mode 0644"), "0644: %d %s", rc, err);
	chmod(path, 0640);
	rc = collx_job_key(key, err, sizeof(err));
	CHECK(rc == -EPERM && strstr(err, "mode 0640"), "0640: %d %s", rc, err);
	chmod(path, 0600);
	rc = collx_job_key(key, err, sizeof(err));
	CHECK(rc == 1 && !memcmp(key, want, sizeof(key)), "0600, the same key as the variable: %d %s",
	      rc, err);
	setenv("COLLX_JOB_TOKEN", TOKEN, 1);
	rc = collx_job_key(key, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "both"), "both set: %d %s", rc, err);
	unsetenv("COLLX_JOB_TOKEN");
	unlink(path);
	rc = collx_job_key(key, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, path), "missing file: %d %s", rc, err);
	unsetenv("COLLX_JOB_TOKEN_FILE");
	return 0;
}

static void all_tokens(struct bs_case *bc, const char *tok)
{
	int r;

	for (r = 0; r < bc->nranks; r++)
		bc->token_of[r] = tok;
}

/* Three ranks with the token: one key, one table, one secret, derived. */
static int test_auth_3(void)
{
	static const uint8_t zero[COLLX_SECRET_BYTES];
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .self_lo = 1 };
	struct child_res res[BS_PROCS], again[BS_PROCS];
	int r, i;

	all_tokens(&bc, TOKEN);
	run_bs(&bc, res);
	run_bs(&bc, again);
	for (r = 0; r < 3; r++) {
		CHECK(res[r].rc == 0 && again[r].rc == 0, "rank %d: %d %s / %s", r, res[r].rc,
		      res[r].err, again[r].err);
		CHECK(res[r].key && res[r].key == res[0].key, "rank %d: key", r);
		CHECK(!memcmp(res[r].secret, res[0].secret, COLLX_SECRET_BYTES),
		      "rank %d has another secret", r);
		for (i = 0; i < 3; i++) {
			uint8_t *a = (uint8_t *)&res[r].addrs[i];

			CHECK(a[0] == 127 && a[3] == i + 1, "rank %d sees rank %d at %u.x.x.%u",
			      r, i, a[0], a[3]);
		}
	}
	CHECK(memcmp(res[0].secret, zero, COLLX_SECRET_BYTES), "secret is all zero");
	CHECK(memcmp(res[0].secret, again[0].secret, COLLX_SECRET_BYTES),
	      "two rendezvous made the same secret");
	return 0;
}

/* Process nranks: collx_bootstrap() as rank bc->impostor, with its own
 * token (or none), from the start, before the real rank. */
static void bs_impostor(const struct bs_case *bc, uint16_t port, struct child_res *cr)
{
	struct collx_bs_params p;
	struct collx_bs_result br;

	bs_params(bc, bc->nranks, bc->impostor, 0, port, &p);
	cr->rc = collx_bootstrap(&p, &br);
	memcpy(cr->err, br.err, sizeof(cr->err));
	memcpy(cr->secret, br.secret, sizeof(cr->secret));
	collx_bs_result_free(&br);
}

static int auth_impostor(const char *tok, const char *expect)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .self_lo = 1,
			      .timeout_ms = 5000, .extra = bs_impostor, .impostor = 1 };
	struct child_res res[BS_PROCS];
	int r;

	all_tokens(&bc, TOKEN);
	bc.token_of[3] = tok;
	bc.delay_of[1] = 600;		/* the impostor is first */
	run_bs(&bc, res);
	printf("#   impostor: %s\n", res[3].err);
	CHECK(res[3].rc == -EACCES && strstr(res[3].err, expect), "impostor: %d '%s'",
	      res[3].rc, res[3].err);
	for (r = 0; r < 3; r++) {
		uint8_t *a = (uint8_t *)&res[r].addrs[1];

		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
		CHECK(!memcmp(res[r].secret, res[0].secret, COLLX_SECRET_BYTES), "rank %d secret", r);
		CHECK(a[0] == 127 && a[3] == 2, "rank %d: rank 1 at %u.x.x.%u", r, a[0], a[3]);
	}
	CHECK(memcmp(res[3].secret, res[0].secret, COLLX_SECRET_BYTES), "the impostor has the secret");
	return 0;
}

static int test_auth_impostor_none(void)
{
	return auth_impostor(NULL, "wants a job token and rank 1 has none");
}

static int test_auth_impostor_wrong(void)
{
	return auth_impostor("another-job-0123456789", "different job tokens");
}

/* Process nranks: five hellos with another token, one after the other. */
static void bs_five_impostors(const struct bs_case *bc, uint16_t port, struct child_res *cr)
{
	int i;

	for (i = 0; i < 5; i++) {
		bs_impostor(bc, port, cr);
		if (cr->rc != -EACCES)
			return;
	}
}

/* Five refusals are logged at the 1st, 2nd and 4th, with the peer's
 * address and never the token. */
static int test_auth_refusal_log(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = 1, .seq = 1, .timeout_ms = 2500,
			      .extra = bs_five_impostors, .impostor = 1 };
	struct child_res res[BS_PROCS];
	char path[64], log[8192], *p;
	int lines = 0;

	snprintf(path, sizeof(path), "/tmp/collx-unit-refusals.%d.log", getpid());
	unlink(path);
	bc.root_log = path;
	all_tokens(&bc, TOKEN);
	bc.token_of[2] = "another-job-0123456789";
	run_bs(&bc, res);
	CHECK(unit_slurp(path, log, sizeof(log)) > 0, "no log in %s", path);
	unlink(path);
	CHECK(res[2].rc == -EACCES, "impostors: %d %s", res[2].rc, res[2].err);
	CHECK(res[0].rc == -ETIMEDOUT && strstr(res[0].err, "refused 5: a hello from 127.0.0.1"),
	      "rank 0: %d '%s'", res[0].rc, res[0].err);
	for (p = log; (p = strstr(p, "bootstrap: refused a hello from 127.0.0.1")); p++)
		lines++;
	CHECK(lines == 3, "%d refusal lines, not 3 (1st, 2nd, 4th):\n%s", lines, log);
	CHECK(strstr(log, "(4 refused so far)") && !strstr(log, "(5 refused so far)"), "%s", log);
	CHECK(!strstr(log, TOKEN) && !strstr(log, "another-job"), "a token in the log");
	return 0;
}

/* Without a token, once per process, on stderr, naming the port. */
static int test_unauth_warning(void)
{
	char buf[1024];
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		/* The parent never warned: its comms have one rank. */
		dup2(fds[1], 2);
		collx_warn_unauthenticated(4242);
		collx_warn_unauthenticated(4243);
		_exit(0);
	}
	close(fds[1]);
	waitpid(pid, &st, 0);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	buf[n > 0 ? n : 0] = 0;
	CHECK(strstr(buf, "collx: the rendezvous is not authenticated (no COLLX_JOB_TOKEN/COLLX_JOB_TOKEN_FILE): any host that reaches port 4242 can join this job\n"),
	      "'%s'", buf);
	CHECK(!strstr(buf, "4243") && strstr(buf, "\n") == buf + strlen(buf) - 1, "twice: '%s'",
	      buf);
	return 0;
}

/* Rank 1 connects from 127.0.0.2 but claims 127.0.0.3. */
static int test_auth_addr_bound(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = -1, .seq = 1, .self_lo = 1,
			      .timeout_ms = 1500 };
	struct child_res res[BS_PROCS];
	uint8_t *a;

	all_tokens(&bc, TOKEN);
	bc.claim_of[1] = 3;
	run_bs(&bc, res);
	printf("#   rank 0: %s\n#   rank 1: %s\n", res[0].err, res[1].err);
	CHECK(res[1].rc == -EADDRNOTAVAIL &&
	      strstr(res[1].err, "claims RDMA address 127.0.0.3 but came from 127.0.0.2"),
	      "rank 1: %d '%s'", res[1].rc, res[1].err);
	/* before rank 0's deadline: it did not wait for it */
	CHECK(res[1].elapsed_ms < bc.timeout_ms, "rank 1 took %lld ms",
	      (long long)res[1].elapsed_ms);
	CHECK(res[0].rc == -ETIMEDOUT && strstr(res[0].err, "claims RDMA address"),
	      "rank 0: %d '%s'", res[0].rc, res[0].err);

	bc.any_addr = 1;		/* COLLX_SEPARATE_RDMA_NET=1 */
	run_bs(&bc, res);
	a = (uint8_t *)&res[0].addrs[1];
	CHECK(res[0].rc == 0 && res[1].rc == 0, "opt-out: %d %s / %d %s", res[0].rc, res[0].err,
	      res[1].rc, res[1].err);
	CHECK(a[3] == 3, "opt-out: rank 1 at 127.0.0.%u, not the claimed .3", a[3]);
	return 0;
}

/* A rank with a token and one without: the joiner fails at once, rank 0
 * at its deadline; both name the mismatch. */
static int test_auth_mismatch(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = -1, .seq = 1, .timeout_ms = 2000 };
	struct child_res res[BS_PROCS];

	bc.token_of[0] = TOKEN;
	run_bs(&bc, res);
	printf("#   rank 0: %s\n#   rank 1: %s\n", res[0].err, res[1].err);
	CHECK(res[1].rc == -EACCES && strstr(res[1].err, "wants a job token and rank 1 has none"),
	      "token on rank 0 only, rank 1: %d '%s'", res[1].rc, res[1].err);
	/* before rank 0's deadline: it did not wait for it */
	CHECK(res[1].elapsed_ms < bc.timeout_ms, "rank 1 took %lld ms",
	      (long long)res[1].elapsed_ms);
	CHECK(res[0].rc == -ETIMEDOUT && strstr(res[0].err, "without the job token"),
	      "token on rank 0 only, rank 0: %d '%s'", res[0].rc, res[0].err);

	bc.token_of[0] = NULL;
	bc.token_of[1] = TOKEN;
	run_bs(&bc, res);
	printf("#   rank 0: %s\n#   rank 1: %s\n", res[0].err, res[1].err);
	CHECK(res[1].rc == -EACCES && strstr(res[1].err, "has no job token and rank 1 has one"),
	      "token on rank 1 only, rank 1: %d '%s'", res[1].rc, res[1].err);
	/* before rank 0's deadline: it did not wait for it */
	CHECK(res[1].elapsed_ms < bc.timeout_ms, "rank 1 took %lld ms",
	      (long long)res[1].elapsed_ms);
	CHECK(res[0].rc == -ETIMEDOUT && strstr(res[0].err, "rank 0 has none"),
	      "token on rank 1 only, rank 0: %d '%s'", res[0].rc, res[0].err);
	return 0;
}

/* Through the environment, as a launcher gives it: the rendezvous works
 * (every rank hears rank 0's missing device), and a rank without the
 * token fails at once, saying so. */
static int test_auth_init_all(void)
{
	static const char *const all[3] = { TOKEN, TOKEN, TOKEN };
	static const char *const only0[3] = { TOKEN, NULL, NULL };
	char msgs[3][COLLX_ERRLEN];
	int rcs[3], r;

	if (init_all_procs(all, "10", rcs, msgs))
		return 1;
	for (r = 0; r < 3; r++)
		CHECK(rcs[r] == -ENOENT && strstr(msgs[r], "rank 0 (") && strstr(msgs[r], "/dev/collx"),
		      "rank %d: %d '%s'", r, rcs[r], msgs[r]);
	if (init_all_procs(only0, "2", rcs, msgs))
		return 1;
	for (r = 1; r < 3; r++)
		CHECK(rcs[r] == -EACCES && strstr(msgs[r], "wants a job token"), "rank %d: %d '%s'",
		      r, rcs[r], msgs[r]);
	CHECK(rcs[0] == -ETIMEDOUT && strstr(msgs[0], "without the job token"), "rank 0: %d '%s'",
	      rcs[0], msgs[0]);
	return 0;
}

/* ---- a TCP relay that keeps every byte it forwards ---- */

struct relay {
	pid_t pid;
	uint16_t port;
	char all[64];		/* both directions */
	char up[64];		/* joiner to rank 0 only */
};

static int relay_listen(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		abort();
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Move what @from has to @to, appending it to the captures. */
static int relay_move(int from, int to, int all, int up)
{
	char buf[4096];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return -1;
	if (write(all, buf, n) != n || (up >= 0 && write(up, buf, n) != n) ||
	    write(to, buf, n) != n)
		return -1;
	return 0;
}

/* The child: accept on r->port, forward each connection to @to. */
static void relay_run(int lfd, uint16_t to, int all, int up)
{
	struct pollfd pf[1 + 2 * 8];
	int n = 1, i;

	alarm(30);			/* never outlives a stuck test */
	pf[0].fd = lfd;
	pf[0].events = POLLIN;
	for (;;) {
		if (poll(pf, n, -1) <= 0)
			continue;
		if ((pf[0].revents & POLLIN) && n < 1 + 2 * 8) {
			struct sockaddr_in sa = { .sin_family = AF_INET };
			int c = accept(lfd, NULL, NULL), s = socket(AF_INET, SOCK_STREAM, 0);

			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			sa.sin_port = htons(to);
			/* Upstream first: a joiner rank 0 never saw sent nothing. */
			if (c < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
				close(c);
				close(s);
			} else {
				pf[n].fd = c;
				pf[n++].events = POLLIN;
				pf[n].fd = s;
				pf[n++].events = POLLIN;
			}
		}
		for (i = 1; i < n; i++) {
			int peer = i & 1 ? i + 1 : i - 1;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (relay_move(pf[i].fd, pf[peer].fd, all, i & 1 ? up : -1)) {
				close(pf[i].fd);
				close(pf[peer].fd);
				pf[i].fd = pf[peer].fd = -1;
			}
		}
	}
}

static void relay_start(struct relay *r, uint16_t to)
{
	int lfd = relay_listen(&r->port), all, up;

	snprintf(r->all, sizeof(r->all), "/tmp/collx-unit-relay.%d.all", getpid());
	snprintf(r->up, sizeof(r->up), "/tmp/collx-unit-relay.%d.up", getpid());
	all = open(r->all, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	up = open(r->up, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (all < 0 || up < 0)
		abort();
	r->pid = fork();
	if (r->pid == 0) {
		relay_run(lfd, to, all, up);
		_exit(0);
	}
	close(lfd);
	close(all);
	close(up);
}

/* Stop it; what it forwarded, both ways or upstream only. */
static long relay_stop(struct relay *r, bool upstream, char *buf, size_t len)
{
	long n;

	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
	n = unit_slurp(upstream ? r->up : r->all, buf, len);
	unlink(r->all);
	unlink(r->up);
	return n;
}

/* A 3-rank rendezvous through the relay: @buf gets its bytes. */
static long relayed_rendezvous(const char *tok, struct child_res *res, char *buf, size_t len)
{
	struct bs_case bc = { .nranks = 3, .skip_rank = -1, .seq = 1, .any_addr = 1 };
	struct relay rl;

	all_tokens(&bc, tok);
	bc.port = unit_free_port();
	relay_start(&rl, bc.port);
	bc.relay_port = rl.port;
	run_bs(&bc, res);
	return relay_stop(&rl, false, buf, len);
}

/* The secret is never on the wire with a token; it was without one, which
 * shows that the relay sees what it should. */
static int test_auth_secret_not_sent(void)
{
	static char buf[1 << 16];
	struct child_res res[BS_PROCS];
	uint8_t key[COLLX_JOB_KEY_BYTES];
	long n;
	int r;

	n = relayed_rendezvous(TOKEN, res, buf, sizeof(buf));
	for (r = 0; r < 3; r++)
		CHECK(res[r].rc == 0, "rank %d: %d %s", r, res[r].rc, res[r].err);
	/* COLLX_BS_MAGIC in network order opens every message */
	CHECK(n > 2 * 200 && memmem(buf, n, "BXLC", 4), "the relay saw %ld bytes, no rendezvous", n);
	CHECK(!memmem(buf, n, res[0].secret, COLLX_SECRET_BYTES), "the secret crossed the wire");
	CHECK(!memmem(buf, n, res[0].secret, 8), "8 bytes of the secret crossed the wire");
	collx_job_key_derive(TOKEN, strlen(TOKEN), key);
	CHECK(!memmem(buf, n, key, sizeof(key)) && !memmem(buf, n, TOKEN, strlen(TOKEN)),
	      "the job key or token crossed the wire");

	n = relayed_rendezvous(NULL, res, buf, sizeof(buf));
	CHECK(res[1].rc == 0 && n > 0, "without a token: %d %s", res[1].rc, res[1].err);
	CHECK(memmem(buf, n, res[0].secret, COLLX_SECRET_BYTES),
	      "without a token the secret is sent in the clear, and the relay missed it");
	return 0;
}

/* Process 2: replays rank 1's bytes of an earlier rendezvous to rank 0. */
static char replay_bytes[4096];
static long replay_len;

static void bs_replayer(const struct bs_case *bc, uint16_t port, struct child_res *cr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint8_t chal[40], rep[12];
	int64_t dl = unit_mono_ms() + 3000;
	int fd = -1, err;

	(void)bc;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	while (unit_mono_ms() < dl) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		close(fd);
		fd = -1;
		usleep(20000);
	}
	cr->rc = -ETIMEDOUT;
	if (fd < 0)
		return;
	/* The new challenge, ignored: the old answer goes back. */
	err = collx_sock_io(fd, chal, sizeof(chal), unit_mono_ms() + 2000, false);
	if (!err)
		err = collx_sock_io(fd, replay_bytes, replay_len, unit_mono_ms() + 2000, true);
	if (!err)
		err = collx_sock_io(fd, rep, sizeof(rep), unit_mono_ms() + 2000, false);
	close(fd);
	if (err) {
		cr->rc = err;
		return;
	}
	/* magic, version, status: refused with EACCES */
	memcpy(&err, rep + 8, 4);
	cr->rc = -(int)ntohl(err);
}

static int test_auth_replay(void)
{
	struct bs_case bc = { .nranks = 2, .skip_rank = -1, .seq = 1, .any_addr = 1 };
	struct child_res res[BS_PROCS];
	struct relay rl;

	/* Record: rank 1's nonce, hello and MAC, as it sent them. */
	all_tokens(&bc, TOKEN);
	bc.port = unit_free_port();
	relay_start(&rl, bc.port);
	bc.relay_port = rl.port;
	run_bs(&bc, res);
	replay_len = relay_stop(&rl, true, replay_bytes, sizeof(replay_bytes));
	CHECK(res[0].rc == 0 && res[1].rc == 0, "recording: %d %s / %d %s", res[0].rc,
	      res[0].err, res[1].rc, res[1].err);
	CHECK(replay_len > 40 && !memcmp(replay_bytes, "BXLC", 4), "recorded %ld bytes",
	      replay_len);

	/* Replay them to a new rank 0 of the same job: it keeps rank 1 free. */
	memset(&bc, 0, sizeof(bc));
	bc.nranks = 2;
	bc.skip_rank = 1;
	bc.seq = 1;
	bc.any_addr = 1;
	bc.timeout_ms = 1500;
	bc.extra = bs_replayer;
	all_tokens(&bc, TOKEN);
	run_bs(&bc, res);
	printf("#   rank 0: %s\n", res[0].err);
	CHECK(res[2].rc == -EACCES, "replayer: %d", res[2].rc);
	CHECK(res[0].rc == -ETIMEDOUT && strstr(res[0].err, "rank 1 never joined") &&
	      strstr(res[0].err, "does not verify"), "rank 0: %d '%s'", res[0].rc, res[0].err);
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
	{ "auth: SHA-256 known answers (FIPS 180-2)", test_sha256_kat },
	{ "auth: HMAC-SHA256 known answers (RFC 4231 1, 2, 6, 7), MAC compare", test_hmac_kat },
	{ "auth: COLLX_JOB_TOKEN, COLLX_JOB_TOKEN_FILE (0644 refused)", test_job_token },
	{ "auth: 3 ranks with a token, one table, one derived secret", test_auth_3 },
	{ "auth: an impostor without the token does not take rank 1", test_auth_impostor_none },
	{ "auth: an impostor with another token does not take rank 1", test_auth_impostor_wrong },
	{ "auth: refusals are logged rate-limited, with the address, not the token", test_auth_refusal_log },
	{ "auth: no token -> one warning per process naming the port", test_unauth_warning },
	{ "auth: the RDMA address is the connection's, unless opted out", test_auth_addr_bound },
	{ "auth: token on one side only fails on both, named", test_auth_mismatch },
	{ "auth: init_all with COLLX_JOB_TOKEN, and a rank without it", test_auth_init_all },
	{ "auth: the secret never crosses the wire (a relay sees every byte)", test_auth_secret_not_sent },
	{ "auth: a replayed hello is refused, the rank stays free", test_auth_replay },
	{ NULL, NULL },
};
