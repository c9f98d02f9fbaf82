// SPDX-License-Identifier: GPL-2.0
/*
 * collx_errno: the errno contract of include/uapi/linux/collx.h, case by
 * case, one TAP line each ("ok 12 - SUBMIT: count*esize overflow ->
 * EINVAL").  Runs inside a lab node on its own: 1-rank comms (and one
 * comm of this node with itself), no traffic leaves the node.  Works as
 * root and as any user; the RLIMIT_MEMLOCK cases run in a child that
 * lowers its limit (and, when root, becomes nobody first).
 *
 *   collx_errno [NODE_ADDR]
 *
 * Exit status: 0 when every case passed, 1 otherwise, 2 cannot run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etest.h"
#include "node.h"

static uint8_t *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int setup(const char *addr)
{
	struct collx_version v = { .size = sizeof(v) };
	struct collx_rank_addr a;
	uint8_t *end;
	int fd;

	et.node_addr = fz_node_addr(addr);
	if (!et.node_addr) {
		fprintf(stderr, "collx_errno: no IPv4 address for 1-rank comms\n");
		return 2;
	}
	et.root = !geteuid();
	et.buf = map(ET_BUF_LEN, PROT_READ | PROT_WRITE);
	et.ro = map(4 * ET_PAGE, PROT_READ | PROT_WRITE);
	et.none = map(ET_PAGE, PROT_NONE);
	end = map(2 * ET_PAGE, PROT_READ | PROT_WRITE);
	if (!et.buf || !et.ro || !et.none || !end ||
	    mprotect(end + ET_PAGE, ET_PAGE, PROT_NONE))
		return 2;
	et.end = end;
	memset(et.buf, 0x3c, ET_BUF_LEN);
	memset(et.ro, 0x5a, 4 * ET_PAGE);
	/* Page 2 of the read-only memory: a valid rank table. */
	et_rank_addr(&a);
	memcpy(et.ro + 2 * ET_PAGE, &a, sizeof(a));
	if (mprotect(et.ro, 4 * ET_PAGE, PROT_READ))
		return 2;
	fd = et_open();
	if (fd < 0 || et_ioctl(fd, COLLX_IOC_VERSION, &v)) {
		perror("collx_errno: /dev/collx");
		return 2;
	}
	close(fd);
	et.abi_minor = v.abi_minor;
	et.features = v.features;
	printf("# module %.32s, ABI %u.%u, features %#llx, %s\n",
	       v.module_version, v.abi_major, v.abi_minor,
	       (unsigned long long)v.features, et.root ? "root" : "not root");
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc > 2) {
		fprintf(stderr, "usage: collx_errno [NODE_ADDR]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = setup(argc > 1 ? argv[1] : NULL);
	if (err)
		return err;
	et_size_cases();
	et_comm_cases();
	et_mr_cases();
	et_submit_cases();
	et_group_cases();
	et_limit_cases();
	et_state_cases();
	et_field_cases();
	printf("1..%u\n", et_count());
	if (et_failed())
		printf("# %u of %u failed\n", et_failed(), et_count());
	return et_failed() ? 1 : 0;
}
