// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract of /dev/collx (include/uapi/linux/collx.h): the
 * ioctl dispatch for every ioctl of ABI 1.1 (one byte short, a newer
 * caller's zero and dirty tails, NULL, unknown numbers), and, on 1-rank
 * communicators of this node, the limits and the new errnos: EMFILE at
 * COLLX_MAX_COMMS_PER_FD, EAGAIN at COLLX_MAX_OPS_PER_FD, EOPNOTSUPP for
 * unknown algorithms, collectives and flags, EINVAL for a timeout over
 * COLLX_MAX_TIMEOUT_MS, and COLLX_IOC_SUBMIT_GROUP's all-or-nothing.
 * Runs inside a lab node (COLLX_NODE_ADDR is this node's address).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/collx.h>

static int failures;

#define CHECK(cond, ...)                                          \
	do {                                                      \
		if (!(cond)) {                                    \
			fprintf(stderr, "FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);             \
			fputc('\n', stderr);                      \
			failures++;                               \
		}                                                 \
	} while (0)

#define offsetofend(t, f) (offsetof(t, f) + sizeof(((t *)0)->f))

/* ioctl() returning 0 or the errno. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static int open_dev(void)
{
	int fd = open("/dev/collx", O_RDWR | O_NONBLOCK);

	if (fd < 0) {
		perror("open /dev/collx");
		exit(1);
	}
	return fd;
}

static void check_version(int fd)
{
	const size_t min = offsetofend(struct collx_version, __reserved);
	unsigned char big[4096];
	struct collx_version v;
	int err;

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == 0, "full-size request: errno %d", err);
	CHECK(v.abi_major == COLLX_ABI_MAJOR, "abi_major %u", v.abi_major);
	CHECK(v.abi_minor == COLLX_ABI_MINOR, "abi_minor %u", v.abi_minor);
	CHECK(memchr(v.module_version, 0, sizeof(v.module_version)) &&
	      v.module_version[0], "module_version not a string");
	printf("version %s, ABI %u.%u, %u device(s), features 0x%llx\n", v.module_version,
	       v.abi_major, v.abi_minor, v.nr_devices, (unsigned long long)v.features);

	/* Just the mandatory part: answered, nothing written past it. */
	memset(big, 0xa5, sizeof(big));
	memset(big, 0, min);
	((struct collx_version *)big)->size = min;
	err = xioctl(fd, COLLX_IOC_VERSION, big);
	CHECK(err == 0, "size %zu: errno %d", min, err);
	CHECK(((struct collx_version *)big)->abi_major == COLLX_ABI_MAJOR,
	      "short struct: abi_major not written");
	CHECK(big[min] == 0xa5 && big[sizeof(v)] == 0xa5, "kernel wrote past the user's size");

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.flags = 1;
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	/* an unknown flag, as everywhere (the errno contract's DOC) */
	CHECK(err == EOPNOTSUPP, "flags=1: errno %d, want EOPNOTSUPP", err);
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.__reserved = 1;
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == EINVAL, "__reserved=1: errno %d, want EINVAL", err);
}

/*
 * Every ioctl's size-first rules: the mandatory part one byte short is
 * EINVAL, bytes beyond the struct this kernel knows are E2BIG when not
 * zero, and NULL is EFAULT.  The mandatory parts are ABI 1.0's, so 1.0
 * callers keep working (SUBMIT_GROUP is new in 1.1: all of it).
 */
static void check_dispatch(int fd)
{
	static const struct {
		const char *name;
		unsigned long cmd;
		size_t min, size;
	} ops[] = {
		{ "VERSION", COLLX_IOC_VERSION, offsetofend(struct collx_version, __reserved),
		  sizeof(struct collx_version) },
		{ "COMM_CREATE", COLLX_IOC_COMM_CREATE,
		  offsetofend(struct collx_comm_create, failed_rank), sizeof(struct collx_comm_create) },
		{ "COMM_DESTROY", COLLX_IOC_COMM_DESTROY,
		  offsetofend(struct collx_comm_destroy, __reserved), sizeof(struct collx_comm_destroy) },
		{ "MR_REG", COLLX_IOC_MR_REG, offsetofend(struct collx_mr_reg, __reserved),
		  sizeof(struct collx_mr_reg) },
		{ "MR_DEREG", COLLX_IOC_MR_DEREG, offsetofend(struct collx_mr_dereg, __reserved),
		  sizeof(struct collx_mr_dereg) },
		{ "SUBMIT", COLLX_IOC_SUBMIT, offsetofend(struct collx_submit, op_id),
		  sizeof(struct collx_submit) },
		{ "WAIT", COLLX_IOC_WAIT, offsetofend(struct collx_wait, completion),
		  sizeof(struct collx_wait) },
		{ "SUBMIT_GROUP", COLLX_IOC_SUBMIT_GROUP,
		  offsetofend(struct collx_submit_group, __reserved),
		  sizeof(struct collx_submit_group) },
	};
	unsigned char big[4096];
	size_t i;
	int err;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		memset(big, 0, sizeof(big));
		*(__u32 *)big = ops[i].min - 1;
		err = xioctl(fd, ops[i].cmd, big);
		CHECK(err == EINVAL, "%s one byte short (%zu): errno %d, want EINVAL", ops[i].name,
		      ops[i].min - 1, err);
		memset(big, 0, sizeof(big));
		*(__u32 *)big = sizeof(big);
		big[ops[i].size + 7] = 1;
		err = xioctl(fd, ops[i].cmd, big);
		CHECK(err == E2BIG, "%s dirty tail: errno %d, want E2BIG", ops[i].name, err);
		err = xioctl(fd, ops[i].cmd, NULL);
		CHECK(err == EFAULT, "%s NULL: errno %d, want EFAULT", ops[i].name, err);
	}
	/* A newer caller: longer struct, zero tail. */
	memset(big, 0, sizeof(big));
	*(__u32 *)big = sizeof(big);
	err = xioctl(fd, COLLX_IOC_VERSION, big);
	CHECK(err == 0, "VERSION size %zu, zero tail: errno %d", sizeof(big), err);

	err = xioctl(fd, _IO(COLLX_TYPE, COLLX_CMD_BASE + 0x70), big);
	CHECK(err == ENOTTY, "unknown command: errno %d, want ENOTTY", err);
	err = xioctl(fd, _IO('Y', COLLX_CMD_VERSION), big);
	CHECK(err == ENOTTY, "foreign ioctl type: errno %d, want ENOTTY", err);
	err = xioctl(fd, _IOWR(COLLX_TYPE, COLLX_CMD_VERSION, struct collx_version), big);
	CHECK(err == ENOTTY, "size-encoded number: errno %d, want ENOTTY", err);
}

/* ---- on 1-rank communicators ---- */

static struct collx_rank_addr self;

static int create(int fd, __u64 key, __u32 timeout_ms, __u32 *comm_id)
{
	struct collx_comm_create cc = { .size = sizeof(cc) };
	int err;

	cc.nranks = 1;
	cc.comm_key = key;
	cc.addrs = (uintptr_t)&self;
	cc.addr_size = sizeof(self);
	cc.timeout_ms = timeout_ms;
	memset(cc.secret, 0x5c, sizeof(cc.secret));
	err = xioctl(fd, COLLX_IOC_COMM_CREATE, &cc);
	if (!err && comm_id)
		*comm_id = cc.comm_id;
	return err;
}

static int barrier(int fd, __u32 comm, __u32 algo)
{
	struct collx_submit s = { .size = sizeof(s), .flags = algo, .comm_id = comm,
				  .coll = COLLX_COLL_BARRIER };

	return xioctl(fd, COLLX_IOC_SUBMIT, &s);
}

/*
 * Read records until @want came (or, @want 0, until 200 ms pass without
 * one): how many.  Bounded by 30 s.
 */
static int drain(int fd, int want)
{
	struct collx_completion c[64];
	int n = 0, idle = 0, k;
	ssize_t got;

	while (idle < (want ? 30000 : 200)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (want && n >= want)
			break;
		if (poll(&p, 1, 100) <= 0) {
			idle += 100;
			continue;
		}
		got = read(fd, c, sizeof(c));
		if (got <= 0)
			continue;
		for (k = 0; k < got / (ssize_t)sizeof(c[0]); k++)
			CHECK(!c[k].status, "op %llu ended %d", (unsigned long long)c[k].op_id,
			      c[k].status);
		n += got / sizeof(c[0]);
		idle = 0;
	}
	return n;
}

static void check_limits(void)
{
	__u32 ids[COLLX_MAX_COMMS_PER_FD + 1], comm;
	int fd = open_dev(), err, i, n, before = failures;

	err = create(fd, 0xc0110000, COLLX_MAX_TIMEOUT_MS + 1, NULL);
	CHECK(err == EINVAL, "timeout %u: errno %d, want EINVAL", COLLX_MAX_TIMEOUT_MS + 1, err);
	for (i = 0; i < COLLX_MAX_COMMS_PER_FD; i++) {
		err = create(fd, 0xc0110001 + i, 5000, &ids[i]);
		CHECK(err == 0, "1-rank comm %d: errno %d", i, err);
		if (err)
			break;
	}
	err = create(fd, 0xc0110100, 5000, NULL);
	CHECK(err == EMFILE, "comm %d on one fd: errno %d, want EMFILE", COLLX_MAX_COMMS_PER_FD, err);
	close(fd);
	if (failures == before)
		printf("%d 1-rank comms on one fd, the next EMFILE; a timeout over %u ms EINVAL\n",
		       COLLX_MAX_COMMS_PER_FD, COLLX_MAX_TIMEOUT_MS);
	before = failures;

	fd = open_dev();
	CHECK(create(fd, 0xc0110200, 5000, &comm) == 0, "1-rank comm");
	for (i = 0; i < COLLX_MAX_OPS_PER_FD; i++) {
		err = barrier(fd, comm, COLLX_ALGO_AUTO);
		if (err)
			break;
	}
	CHECK(i == COLLX_MAX_OPS_PER_FD, "only %d ops before errno %d", i, err);
	err = barrier(fd, comm, COLLX_ALGO_AUTO);
	CHECK(err == EAGAIN, "op %d with no record read: errno %d, want EAGAIN",
	      COLLX_MAX_OPS_PER_FD + 1, err);
	n = drain(fd, COLLX_MAX_OPS_PER_FD);
	CHECK(n == COLLX_MAX_OPS_PER_FD, "read %d records, want %d", n, COLLX_MAX_OPS_PER_FD);
	CHECK(barrier(fd, comm, COLLX_ALGO_AUTO) == 0 && drain(fd, 1) == 1, "a submit after reading");
	if (failures == before)
		printf("%d ops queued, the next EAGAIN, all %d records read\n", COLLX_MAX_OPS_PER_FD, n);
	before = failures;

	/* An algorithm this kernel does not know, an unknown flag bit:
	 * EOPNOTSUPP (algorithms that cannot run a collective are forced on
	 * a real ring: ring_smoke, case 17). */
	{
		struct collx_submit s = { .size = sizeof(s), .flags = COLLX_ALGO_COUNT,
					  .comm_id = comm, .coll = COLLX_COLL_BARRIER };

		err = xioctl(fd, COLLX_IOC_SUBMIT, &s);
		CHECK(err == EOPNOTSUPP, "algorithm %u: errno %d, want EOPNOTSUPP", COLLX_ALGO_COUNT, err);
		err = barrier(fd, comm, 0x10);
		CHECK(err == EOPNOTSUPP, "an unknown flag bit: errno %d, want EOPNOTSUPP", err);
		s.flags = 0;
		s.coll = COLLX_COLL_COUNT;
		err = xioctl(fd, COLLX_IOC_SUBMIT, &s);
		CHECK(err == EOPNOTSUPP, "collective %u: errno %d, want EOPNOTSUPP", COLLX_COLL_COUNT, err);
		CHECK(drain(fd, 0) == 0, "a refused submit left a record");
	}

	/* COLLX_IOC_SUBMIT_GROUP: all or nothing. */
	{
		struct collx_submit e[3];
		struct collx_submit_group g = { .size = sizeof(g), .entry_size = sizeof(e[0]),
						.entries = (uintptr_t)e };

		for (i = 0; i < 3; i++)
			e[i] = (struct collx_submit){ .size = sizeof(e[0]), .comm_id = comm,
						      .coll = COLLX_COLL_BARRIER };
		g.count = 0;
		CHECK(xioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g) == EINVAL, "count 0");
		g.count = COLLX_MAX_GROUP + 1;
		CHECK(xioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g) == EINVAL, "count over COLLX_MAX_GROUP");
		g.count = 3;
		e[1].size = sizeof(e[0]) - 8;
		CHECK(xioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g) == EINVAL, "an entry's size differs");
		e[1].size = sizeof(e[0]);
		e[2].dtype = COLLX_DTYPE_COUNT;
		g.error_index = 99;
		err = xioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g);
		CHECK(err == EOPNOTSUPP && g.error_index == 2,
		      "bad dtype in entry 2: errno %d index %u, want EOPNOTSUPP 2", err, g.error_index);
		CHECK(drain(fd, 0) == 0, "a failed group queued some of its entries");
		e[2].dtype = 0;
		err = xioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g);
		CHECK(err == 0 && g.error_index == 3 && e[0].op_id && e[1].op_id > e[0].op_id &&
		      e[2].op_id > e[1].op_id, "group of 3: errno %d index %u ids %llu %llu %llu", err,
		      g.error_index, (unsigned long long)e[0].op_id, (unsigned long long)e[1].op_id,
		      (unsigned long long)e[2].op_id);
		CHECK(drain(fd, 3) == 3 && drain(fd, 0) == 0, "a group of 3 gave another number of records");
	}
	if (failures == before)
		printf("unknown algorithm, collective, flag: EOPNOTSUPP; SUBMIT_GROUP all or nothing\n");
	close(fd);
}

int main(void)
{
	const char *addr = getenv("COLLX_NODE_ADDR");
	int fd = open_dev();

	check_version(fd);
	check_dispatch(fd);
	close(fd);
	if (!addr || inet_pton(AF_INET, addr, self.addr) != 1) {
		fprintf(stderr, "COLLX_NODE_ADDR not set: this node's address is needed\n");
		return 1;
	}
	self.family = AF_INET;
	check_limits();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
