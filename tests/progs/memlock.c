// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_MR_REG counts pinned pages against RLIMIT_MEMLOCK: run without
 * CAP_IPC_LOCK under a small limit, a registration that fits succeeds, one
 * that does not fails with ENOMEM, and dropping the first frees its share.
 *
 *   memlock LIMIT_BYTES   (the caller sets RLIMIT_MEMLOCK to LIMIT_BYTES)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/collx.h>

static int reg(int fd, void *p, size_t len, unsigned int *id)
{
	struct collx_mr_reg r = { .size = sizeof(r) };

	r.addr = (unsigned long)p;
	r.length = len;
	if (ioctl(fd, COLLX_IOC_MR_REG, &r))
		return -errno;
	*id = r.mr_id;
	return 0;
}

static int dereg(int fd, unsigned int id)
{
	struct collx_mr_dereg d = { .size = sizeof(d), .mr_id = id };

	return ioctl(fd, COLLX_IOC_MR_DEREG, &d) ? -errno : 0;
}

int main(int argc, char **argv)
{
	size_t limit = argc > 1 ? strtoul(argv[1], NULL, 0) : 0;
	size_t page = sysconf(_SC_PAGESIZE), half = limit / 2 / page * page;
	struct rlimit rl;
	unsigned int a, b;
	char *buf;
	int fd, err;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != limit) {
		fprintf(stderr, "RLIMIT_MEMLOCK is %llu, want %zu\n",
			(unsigned long long)rl.rlim_cur, limit);
		return 1;
	}
	buf = mmap(NULL, 4 * limit, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open("/dev/collx", O_RDWR);
	if (buf == MAP_FAILED || fd < 0) {
		perror("setup");
		return 1;
	}
	memset(buf, 1, 4 * limit);
	err = reg(fd, buf, half, &a);
	if (err) {
		fprintf(stderr, "%zu bytes under a %zu limit: %s\n", half, limit,
			strerror(-err));
		return 1;
	}
	err = reg(fd, buf + 2 * limit, limit, &b);
	if (err != -ENOMEM) {
		fprintf(stderr, "%zu more bytes over the limit: %s, want ENOMEM\n",
			limit, strerror(-err));
		return 1;
	}
	if (dereg(fd, a) || reg(fd, buf + 2 * limit, half, &b) || dereg(fd, b)) {
		fprintf(stderr, "the limit's share was not given back\n");
		return 1;
	}
	printf("RLIMIT_MEMLOCK %zu: %zu bytes registered, %zu more refused with ENOMEM, freed on deregister\n",
	       limit, half, limit);
	close(fd);
	return 0;
}
