// SPDX-License-Identifier: GPL-2.0
/*
 * Raw-ioctl allreduce check for a lab node: builds the rank table from the
 * lab's environment (COLLX_RANK, COLLX_NRANKS, LAB addresses), creates a
 * communicator, and runs int32 sums of several sizes (one larger than the
 * staging area), out-of-place (reaped with COLLX_IOC_WAIT) and in-place
 * (reaped with poll() and read()), registered and bounced, checking every
 * element.
 *
 *   ring_smoke [NRANKS] [KEY]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/collx.h>

static int fd;

static int comm_create(unsigned int rank, unsigned int nranks,
		       unsigned long long key, unsigned int *comm_id)
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
	cc.timeout_ms = 20000;
	ret = ioctl(fd, COLLX_IOC_COMM_CREATE, &cc);
	if (ret) {
		fprintf(stderr, "comm create: %s, failed rank %d\n",
			strerror(errno), (int)cc.failed_rank);
		return -errno;
	}
	*comm_id = cc.comm_id;
	free(addrs);
	return 0;
}

/* Completion through poll() and read() instead of COLLX_IOC_WAIT. */
static int reap(unsigned long long op_id)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct collx_completion c;
	ssize_t n;

	if (poll(&pfd, 1, 120000) != 1 || !(pfd.revents & POLLIN)) {
		fprintf(stderr, "op %llu: poll() saw no completion\n", op_id);
		return -1;
	}
	n = read(fd, &c, sizeof(c));
	if (n != sizeof(c)) {
		fprintf(stderr, "read() returned %zd\n", n);
		return -1;
	}
	if (c.op_id != op_id || c.status) {
		fprintf(stderr, "read() gave op %llu status %d, want op %llu status 0\n",
			(unsigned long long)c.op_id, c.status, op_id);
		return -1;
	}
	/* Nothing else is pending: a non-blocking read says so. */
	if (read(fd, &c, sizeof(c)) != -1 || errno != EAGAIN) {
		fprintf(stderr, "a second read() did not fail with EAGAIN\n");
		return -1;
	}
	return 0;
}

/* The comm's debugfs state file names it, its rank and its neighbours. */
static int check_state(unsigned long long key, unsigned int rank,
		       unsigned int nranks)
{
	char want[128], line[512];
	unsigned int i;
	int found = 0;
	glob_t g;

	snprintf(want, sizeof(want), "key %#llx rank %u/%u state ready", key,
		 rank, nranks);
	if (glob("/sys/kernel/debug/collx/[0-9]*/state", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && !found; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		while (f && fgets(line, sizeof(line), f)) {
			if (strstr(line, want))
				found = 1;
			if (found)
				fputs(line, stdout);
		}
		if (f)
			fclose(f);
	}
	globfree(&g);
	if (!found)
		fprintf(stderr, "no debugfs state file says '%s'\n", want);
	return found ? 0 : -1;
}

static int run(unsigned int comm, unsigned int dtype, void *send, void *recv,
	       unsigned long long count)
{
	struct collx_submit s = { .size = sizeof(s) };
	struct collx_wait w = { .size = sizeof(w) };

	s.comm_id = comm;
	s.coll = COLLX_COLL_ALLREDUCE;
	s.dtype = dtype;
	s.redop = COLLX_OP_SUM;
	s.count = count;
	s.sendbuf = (unsigned long)send;
	s.recvbuf = (unsigned long)recv;
	if (ioctl(fd, COLLX_IOC_SUBMIT, &s)) {
		perror("submit");
		return -1;
	}
	if (send == recv)
		return reap(s.op_id);
	w.op_id = s.op_id;
	w.timeout_ms = COLLX_WAIT_FOREVER;
	if (ioctl(fd, COLLX_IOC_WAIT, &w)) {
		perror("wait");
		return -1;
	}
	if (w.completion.status) {
		fprintf(stderr, "op %llu: %s, rank %d, phase %u step %u\n",
			(unsigned long long)w.op_id,
			strerror(-w.completion.status),
			(int)w.completion.failed_rank, w.completion.phase,
			w.completion.step);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int rank = atoi(getenv("COLLX_RANK") ? : "0");
	unsigned int nranks = argc > 1 ? atoi(argv[1]) :
			      atoi(getenv("COLLX_NRANKS") ? : "1");
	unsigned long long key = argc > 2 ? strtoull(argv[2], NULL, 0) : 0xc011;
	static const unsigned long long counts[] = { 1, 7, 1000, 65537, 300001 };
	unsigned int comm = 0, i, reg;
	int bad = 0;

	if (rank >= nranks)
		return 77;
	fd = open("/dev/collx", O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		perror("/dev/collx");
		return 1;
	}
	if (comm_create(rank, nranks, key, &comm))
		return 1;
	printf("rank %u/%u: comm %u up\n", rank, nranks, comm);
	if (check_state(key, rank, nranks))
		return 1;

	for (reg = 0; reg < 2; reg++) {
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			unsigned long long n = counts[i], j;
			int *a = malloc(n * 4), *b = malloc(n * 4);
			struct collx_mr_reg mr = { .size = sizeof(mr) };
			struct collx_mr_dereg dr = { .size = sizeof(dr) };
			long long want;

			for (j = 0; j < n; j++)
				a[j] = (int)(j % 1000) * (int)(rank + 1);
			if (reg) {
				mr.addr = (unsigned long)b;
				mr.length = n * 4;
				if (ioctl(fd, COLLX_IOC_MR_REG, &mr)) {
					perror("mr reg");
					return 1;
				}
			}
			if (run(comm, COLLX_INT32, a, b, n))
				return 1;
			for (j = 0; j < n; j++) {
				want = (long long)(j % 1000) * nranks * (nranks + 1) / 2;
				if (b[j] != want) {
					if (bad < 5)
						fprintf(stderr, "count %llu elem %llu: %d want %lld\n",
							n, j, b[j], want);
					bad++;
				}
			}
			/* in place */
			if (run(comm, COLLX_INT32, b, b, n))
				return 1;
			for (j = 0; j < n; j++) {
				want = (long long)(j % 1000) * nranks * (nranks + 1) / 2 * nranks;
				if (b[j] != want) {
					if (bad < 10)
						fprintf(stderr, "inplace count %llu elem %llu: %d want %lld\n",
							n, j, b[j], want);
					bad++;
				}
			}
			if (reg) {
				dr.mr_id = mr.mr_id;
				if (ioctl(fd, COLLX_IOC_MR_DEREG, &dr)) {
					perror("mr dereg");
					return 1;
				}
			}
			printf("count %llu %s: %s\n", n, reg ? "registered" : "bounced",
			       bad ? "WRONG" : "ok");
			free(a);
			free(b);
		}
	}
	close(fd);
	return bad ? 1 : 0;
}
