// SPDX-License-Identifier: GPL-2.0
/*
 * Raw-ioctl checks for a lab node, without libcollx: builds the rank
 * table from the lab's environment (COLLX_RANK, LAB addresses), creates a
 * communicator with a secret derived from KEY, and runs
 *
 * - int32 sums of several sizes (one larger than the staging area), out
 *   of place (reaped with COLLX_IOC_WAIT) and in place (reaped with poll()
 *   and read()), registered and bounced, forced onto the ring: every
 *   element checked, and each record's algorithm and memory path;
 * - a COLLX_IOC_SUBMIT_GROUP of an allreduce, a broadcast and an
 *   allgather, checked;
 * - a collective forced on an algorithm that cannot run it (EOPNOTSUPP,
 *   nothing queued, the ranks stay in step);
 * - the debugfs state file of the live communicator.
 *
 *   ring_smoke NRANKS KEY                 the checks above
 *   ring_smoke NRANKS KEY badsecret RANK  RANK proves another secret:
 *                                         every rank's COMM_CREATE fails
 *                                         (EACCES or ETIMEDOUT) naming a peer
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/collx.h>

static int fd;
static unsigned int rank, nranks;

static void make_secret(unsigned long long key, __u8 *secret)
{
	unsigned int i;

	for (i = 0; i < 32; i++)
		secret[i] = (__u8)((key >> (8 * (i % 8))) ^ (i * 37) ^ 0x5a);
}

static unsigned int global_id;

static int comm_create(unsigned long long key, unsigned long long secret_key,
		       unsigned int timeout_ms, unsigned int *comm_id, unsigned int *failed)
{
	struct collx_rank_addr *addrs = calloc(nranks, sizeof(*addrs));
	const char *prefix = getenv("LAB_NET_PREFIX");
	const char *base = getenv("LAB_HOST_BASE");
	struct collx_comm_create cc = { .size = sizeof(cc) };
	char ip[64];
	unsigned int i;
	int ret;

	for (i = 0; i < nranks; i++) {
		snprintf(ip, sizeof(ip), "%s.%d", prefix ? prefix : "10.77.0",
			 (base ? atoi(base) : 10) + (int)i);
		addrs[i].family = AF_INET;
		inet_pton(AF_INET, ip, addrs[i].addr);
	}
	cc.nranks = nranks;
	cc.rank = rank;
	cc.comm_key = key;
	cc.addrs = (unsigned long)addrs;
	cc.addr_size = sizeof(*addrs);
	cc.timeout_ms = timeout_ms;
	make_secret(secret_key, cc.secret);
	ret = ioctl(fd, COLLX_IOC_COMM_CREATE, &cc) ? -errno : 0;
	free(addrs);
	*failed = cc.failed_rank;
	if (ret)
		return ret;
	*comm_id = cc.comm_id;
	global_id = cc.global_id;
	printf("rank %u/%u: comm %u (module-wide %u) up\n", rank, nranks, cc.comm_id, cc.global_id);
	return 0;
}

/* Completion through poll() and read() instead of COLLX_IOC_WAIT. */
static int reap(unsigned long long op_id, struct collx_completion *c)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, 120000) != 1 || !(pfd.revents & POLLIN)) {
		fprintf(stderr, "op %llu: poll() saw no completion\n", op_id);
		return -1;
	}
	n = read(fd, c, sizeof(*c));
	if (n != sizeof(*c)) {
		fprintf(stderr, "read() returned %zd\n", n);
		return -1;
	}
	if (c->op_id != op_id || c->status) {
		fprintf(stderr, "read() gave op %llu status %d, want op %llu status 0\n",
			(unsigned long long)c->op_id, c->status, op_id);
		return -1;
	}
	/* Nothing else is pending: a non-blocking read says so. */
	if (read(fd, c + 1, sizeof(*c)) != -1 || errno != EAGAIN) {
		fprintf(stderr, "a second read() did not fail with EAGAIN\n");
		return -1;
	}
	return 0;
}

static int wait_op(unsigned long long op_id, struct collx_completion *c)
{
	struct collx_wait w = { .size = sizeof(w), .op_id = op_id, .timeout_ms = COLLX_WAIT_FOREVER };

	if (ioctl(fd, COLLX_IOC_WAIT, &w)) {
		perror("wait");
		return -1;
	}
	*c = w.completion;
	if (c->status) {
		fprintf(stderr, "op %llu: %s, rank %d, phase %u step %u\n", op_id,
			strerror(-c->status), (int)c->failed_rank, c->phase, c->step);
		return -1;
	}
	return 0;
}

/* The comm's debugfs state file, named by its module-wide id, says
 * what it is. */
static int check_state(unsigned int global_id)
{
	char path[96], want[128], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/collx/%u/state", global_id);
	snprintf(want, sizeof(want), "comm %u rank %u/%u state ready", global_id, rank, nranks);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, want))
			found = 1;
		fputs(line, stdout);
	}
	if (f)
		fclose(f);
	if (!found)
		fprintf(stderr, "%s does not say '%s'\n", path, want);
	return found ? 0 : -1;
}

static int run(unsigned int comm, void *send, void *recv, unsigned long long count, int reg)
{
	struct collx_submit s = { .size = sizeof(s), .flags = COLLX_ALGO_RING };
	struct collx_completion c[2];
	int err;

	s.comm_id = comm;
	s.coll = COLLX_COLL_ALLREDUCE;
	s.dtype = COLLX_INT32;
	s.redop = COLLX_OP_SUM;
	s.count = count;
	s.sendbuf = (unsigned long)send;
	s.recvbuf = (unsigned long)recv;
	if (ioctl(fd, COLLX_IOC_SUBMIT, &s)) {
		perror("submit");
		return -1;
	}
	err = send == recv ? reap(s.op_id, c) : wait_op(s.op_id, c);
	if (err)
		return err;
	if (c[0].algo != COLLX_ALGO_RING) {
		fprintf(stderr, "op %llu forced onto the ring ran algorithm %u\n",
			(unsigned long long)s.op_id, c[0].algo);
		return -1;
	}
	/* in place and registered: nothing bounced; unregistered: bounced */
	if ((reg && send == recv && (c[0].mem & COLLX_MEM_BOUNCED)) ||
	    (!reg && !(c[0].mem & COLLX_MEM_BOUNCED))) {
		fprintf(stderr, "op %llu (%s, %s): memory path 0x%x\n", (unsigned long long)s.op_id,
			reg ? "registered" : "bounced", send == recv ? "in place" : "out of place",
			c[0].mem);
		return -1;
	}
	return 0;
}

static int check_ints(const char *what, const int *b, unsigned long long n, long long mul,
		      long long add)
{
	unsigned long long j;
	int bad = 0;

	for (j = 0; j < n; j++) {
		long long want = (long long)(j % 1000) * mul + add;

		if (b[j] != want) {
			if (bad < 5)
				fprintf(stderr, "%s elem %llu: %d want %lld\n", what, j, b[j], want);
			bad++;
		}
	}
	return bad;
}

static int allreduces(unsigned int comm)
{
	static const unsigned long long counts[] = { 1, 7, 1000, 65537, 300001 };
	unsigned int i, reg;
	int bad = 0;

	for (reg = 0; reg < 2; reg++) {
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			unsigned long long n = counts[i], j;
			int *a = malloc(n * 4), *b = malloc(n * 4);
			struct collx_mr_reg mr = { .size = sizeof(mr) };
			struct collx_mr_dereg dr = { .size = sizeof(dr) };
			long long tri = (long long)nranks * (nranks + 1) / 2;

			for (j = 0; j < n; j++)
				a[j] = (int)(j % 1000) * (int)(rank + 1);
			if (reg) {
				mr.addr = (unsigned long)b;
				mr.length = n * 4;
				if (ioctl(fd, COLLX_IOC_MR_REG, &mr)) {
					perror("mr reg");
					return -1;
				}
			}
			if (run(comm, a, b, n, 0))
				return -1;
			bad += check_ints("out of place", b, n, tri, 0);
			if (run(comm, b, b, n, reg))
				return -1;
			bad += check_ints("in place", b, n, tri * nranks, 0);
			if (reg) {
				dr.mr_id = mr.mr_id;
				if (ioctl(fd, COLLX_IOC_MR_DEREG, &dr)) {
					perror("mr dereg");
					return -1;
				}
			}
			printf("count %llu %s: %s\n", n, reg ? "registered" : "bounced",
			       bad ? "WRONG" : "ok");
			free(a);
			free(b);
		}
	}
	return bad;
}

/* One COLLX_IOC_SUBMIT_GROUP of three collectives, then each checked. */
static int group(unsigned int comm)
{
	enum { AR = 1021, BC = 4099, AG = 100 };
	int *a = calloc(AR, 4), *ar = calloc(AR, 4), *bc = calloc(BC, 4), *ag = calloc(AG, 4);
	int *agr = calloc((size_t)AG * nranks, 4);
	struct collx_submit e[3] = {
		{ .coll = COLLX_COLL_ALLREDUCE, .count = AR, .sendbuf = (uintptr_t)a,
		  .recvbuf = (uintptr_t)ar },
		{ .coll = COLLX_COLL_BROADCAST, .flags = COLLX_ALGO_TREE, .root = nranks - 1,
		  .count = BC, .sendbuf = (uintptr_t)bc, .recvbuf = (uintptr_t)bc },
		{ .coll = COLLX_COLL_ALLGATHER, .flags = COLLX_ALGO_RD, .count = AG,
		  .sendbuf = (uintptr_t)ag, .recvbuf = (uintptr_t)agr },
	};
	struct collx_submit_group g = { .size = sizeof(g), .count = 3, .entry_size = sizeof(e[0]),
					.entries = (uintptr_t)e };
	struct collx_completion c;
	unsigned int i, j;
	int bad = 0;

	for (i = 0; i < 3; i++) {
		e[i].size = sizeof(e[0]);
		e[i].comm_id = comm;
		e[i].dtype = COLLX_INT32;
	}
	for (j = 0; j < AR; j++)
		a[j] = (int)(j % 1000) * (int)(rank + 1);
	for (j = 0; j < BC; j++)
		bc[j] = rank == nranks - 1 ? (int)(j % 1000) + 7 : -1;
	for (j = 0; j < AG; j++)
		ag[j] = (int)(j % 1000) + 1000 * (int)rank;
	if (ioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g) || g.error_index != 3) {
		fprintf(stderr, "SUBMIT_GROUP: %s, error_index %u\n", strerror(errno), g.error_index);
		return -1;
	}
	for (i = 0; i < 3; i++)
		if (wait_op(e[i].op_id, &c))
			return -1;
	bad += check_ints("group allreduce", ar, AR, (long long)nranks * (nranks + 1) / 2, 0);
	bad += check_ints("group broadcast", bc, BC, 1, 7);
	for (i = 0; i < nranks; i++)
		bad += check_ints("group allgather", agr + i * AG, AG, 1, 1000LL * i);
	printf("SUBMIT_GROUP of allreduce, tree broadcast, rd allgather: %s\n", bad ? "WRONG" : "ok");
	free(a);
	free(ar);
	free(bc);
	free(ag);
	free(agr);
	return bad;
}

/* A forced algorithm that cannot run the collective queues nothing (the
 * next collectives still match on every rank). */
static int refused(unsigned int comm)
{
	static const struct { __u32 coll, algo; } no[] = {
		{ COLLX_COLL_ALLTOALL, COLLX_ALGO_TREE },
		{ COLLX_COLL_BARRIER, COLLX_ALGO_TREE },
		{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_PAIRWISE },
		{ COLLX_COLL_ALLGATHER, COLLX_ALGO_TREE },
		{ COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_P2P },
		{ COLLX_COLL_BROADCAST, COLLX_ALGO_RD },
		{ COLLX_COLL_SEND, COLLX_ALGO_RING },
	};
	static int buf[64];
	unsigned int k;

	for (k = 0; k < sizeof(no) / sizeof(no[0]); k++) {
		struct collx_submit s = { .size = sizeof(s), .flags = no[k].algo, .comm_id = comm,
					  .coll = no[k].coll, .dtype = COLLX_INT32, .count = 2,
					  .sendbuf = (uintptr_t)buf, .recvbuf = (uintptr_t)(buf + 32) };

		if (no[k].coll == COLLX_COLL_BARRIER)
			s.count = s.sendbuf = s.recvbuf = 0;
		if (no[k].coll == COLLX_COLL_SEND) {
			s.recvbuf = 0;
			s.root = (rank + 1) % nranks;
		}
		int err = ioctl(fd, COLLX_IOC_SUBMIT, &s) ? errno : 0;

		if (err != EOPNOTSUPP) {
			fprintf(stderr, "collective %u forced onto algorithm %u: %s, want EOPNOTSUPP\n",
				no[k].coll, no[k].algo, err ? strerror(err) : "accepted");
			return -1;
		}
	}
	printf("%zu collectives forced onto algorithms that cannot run them: EOPNOTSUPP\n",
	       sizeof(no) / sizeof(no[0]));
	return 0;
}

static int bad_secret(unsigned long long key, unsigned int liar)
{
	unsigned int comm, failed;
	int err;

	err = comm_create(key, rank == liar ? key ^ 1 : key, 6000, &comm, &failed);
	printf("rank %u: COMM_CREATE with %s secret: %s, failed_rank %d\n", rank,
	       rank == liar ? "another" : "the shared", err ? strerror(-err) : "ok", (int)failed);
	if (!err) {
		fprintf(stderr, "a communicator with a rank proving another secret came up\n");
		return 1;
	}
	if (err != -EACCES && err != -ETIMEDOUT) {
		fprintf(stderr, "want EACCES or ETIMEDOUT\n");
		return 1;
	}
	if (failed == COLLX_RANK_NONE || failed >= nranks || failed == rank) {
		fprintf(stderr, "the failure names no peer\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long key = argc > 2 ? strtoull(argv[2], NULL, 0) : 0xc011;
	unsigned int comm = 0, failed;
	int bad = 0, err;

	rank = atoi(getenv("COLLX_RANK") ? : "0");
	nranks = argc > 1 ? atoi(argv[1]) : atoi(getenv("COLLX_NRANKS") ? : "1");
	if (rank >= nranks)
		return 77;
	fd = open("/dev/collx", O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		perror("/dev/collx");
		return 1;
	}
	if (argc > 4 && !strcmp(argv[3], "badsecret"))
		return bad_secret(key, atoi(argv[4]));
	err = comm_create(key, key, 20000, &comm, &failed);
	if (err) {
		fprintf(stderr, "comm create: %s, failed rank %d\n", strerror(-err), (int)failed);
		return 1;
	}
	if (check_state(global_id))
		return 1;
	bad = allreduces(comm);
	if (bad < 0 || refused(comm))
		return 1;
	bad += group(comm);
	close(fd);
	return bad ? 1 : 0;
}
