// SPDX-License-Identifier: GPL-2.0
/*
 * COMM_CREATE, one defect at a time on a valid 1-rank request (its rank
 * table holds this node's address), COMM_DESTROY of what is not, and a
 * create that cannot complete failing within its timeout plus the uapi's
 * slack for hanging up.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "etest.h"

struct create_req {
	struct collx_comm_create c;
	uint8_t table[2 * COLLX_MAX_ADDR_SIZE + 64];
};

static void valid(struct create_req *r)
{
	struct collx_rank_addr a;

	memset(r, 0, sizeof(*r));
	et_rank_addr(&a);
	memcpy(r->table, &a, sizeof(a));
	r->c.size = sizeof(r->c);
	r->c.nranks = 1;
	r->c.comm_key = et_key();
	r->c.addrs = (uint64_t)(uintptr_t)r->table;
	r->c.addr_size = sizeof(a);
}

static struct collx_rank_addr *addr0(struct create_req *r)
{
	return (struct collx_rank_addr *)r->table;
}

static void m_nranks0(struct create_req *r) { r->c.nranks = 0; }
static void m_nranks_max(struct create_req *r) { r->c.nranks = COLLX_MAX_RANKS + 1; }
static void m_rank(struct create_req *r) { r->c.rank = 1; }
static void m_key0(struct create_req *r) { r->c.comm_key = 0; }
static void m_addrs_unmapped(struct create_req *r)
{
	r->c.addrs = (uint64_t)(uintptr_t)et.none;
}
static void m_addrs_cross(struct create_req *r)
{
	struct collx_rank_addr a;

	et_rank_addr(&a);
	memcpy(et.end + ET_PAGE - sizeof(a) / 2, &a, sizeof(a) / 2);
	r->c.addrs = (uint64_t)(uintptr_t)(et.end + ET_PAGE - sizeof(a) / 2);
}
static void m_addrs_ro(struct create_req *r)
{
	r->c.addrs = (uint64_t)(uintptr_t)(et.ro + 2 * ET_PAGE);
}
static void m_asize0(struct create_req *r) { r->c.addr_size = 0; }
static void m_asize_short(struct create_req *r)
{
	r->c.addr_size = sizeof(struct collx_rank_addr) - 1;
}
static void m_asize_zero_tail(struct create_req *r)
{
	r->c.addr_size = COLLX_MAX_ADDR_SIZE;
}
static void m_asize_dirty(struct create_req *r)
{
	r->c.addr_size = sizeof(struct collx_rank_addr) + 8;
	r->table[r->c.addr_size - 1] = 1;
}
static void m_asize_max(struct create_req *r)
{
	r->c.addr_size = COLLX_MAX_ADDR_SIZE + 1;
}
static void m_timeout_max(struct create_req *r)
{
	r->c.timeout_ms = COLLX_MAX_TIMEOUT_MS;
}
static void m_timeout_over(struct create_req *r)
{
	r->c.timeout_ms = COLLX_MAX_TIMEOUT_MS + 1;
}
static void m_family(struct create_req *r) { addr0(r)->family = AF_UNIX; }
static void m_reserved(struct create_req *r) { addr0(r)->__reserved = 1; }
static void m_v4tail(struct create_req *r) { addr0(r)->addr[15] = 1; }
static void m_tos(struct create_req *r) { r->c.tos = 256; }
static void m_tos_ok(struct create_req *r) { r->c.tos = 46 << 2; }
static void m_secret(struct create_req *r)
{
	memset(r->c.secret, 0x5c, sizeof(r->c.secret));
}
static void m_out_junk(struct create_req *r)
{
	r->c.comm_id = 0xdeadbeef;
	r->c.failed_rank = 7;
	r->c.global_id = 0xfeedface;
}

static const struct {
	const char *name;
	void (*mutate)(struct create_req *r);
	int want, alt;
} cases[] = {
	{ "nranks 0", m_nranks0, EINVAL, -1 },
	{ "nranks COLLX_MAX_RANKS + 1", m_nranks_max, EINVAL, -1 },
	{ "rank = nranks", m_rank, EINVAL, -1 },
	{ "comm_key 0", m_key0, EINVAL, -1 },
	{ "addrs unmapped", m_addrs_unmapped, EFAULT, -1 },
	{ "addrs running into an unmapped page", m_addrs_cross, EFAULT, -1 },
	{ "addrs in read-only memory (only read)", m_addrs_ro, 0, -1 },
	{ "addr_size 0", m_asize0, EINVAL, -1 },
	{ "addr_size one short of struct collx_rank_addr", m_asize_short, EINVAL, -1 },
	{ "addr_size COLLX_MAX_ADDR_SIZE, zero tail", m_asize_zero_tail, 0, -1 },
	{ "addr_size longer, a non-zero byte in the tail", m_asize_dirty, E2BIG, -1 },
	{ "addr_size above COLLX_MAX_ADDR_SIZE", m_asize_max, EINVAL, -1 },
	{ "timeout_ms COLLX_MAX_TIMEOUT_MS", m_timeout_max, 0, -1 },
	{ "timeout_ms above COLLX_MAX_TIMEOUT_MS", m_timeout_over, EINVAL, -1 },
	{ "family AF_UNIX", m_family, EINVAL, -1 },
	{ "rank address __reserved != 0", m_reserved, EINVAL, -1 },
	{ "IPv4 address with addr[15] != 0", m_v4tail, EINVAL, -1 },
	{ "tos 256", m_tos, EINVAL, -1 },
	{ "tos DSCP 46 << 2", m_tos_ok, 0, -1 },
	{ "a secret on a 1-rank comm", m_secret, 0, -1 },
	{ "junk in the out fields (comm_id, failed_rank, global_id)", m_out_junk, 0, -1 },
};

/*
 * Ranks 0 and 1 of a 3-rank comm whose rank 2 never comes: they connect
 * to each other, so each failing create also tells the other why (an
 * ABORT it waits to see acknowledged) before it hangs up.  The uapi
 * bounds that at COLLX_CREATE_SLACK_MS past the timeout.
 */
static void create_bounded(void)
{
	uint32_t timeout = 300 * fz_slowdown();
	uint64_t bound = timeout + (uint64_t)COLLX_CREATE_SLACK_MS * fz_slowdown();
	struct et_pair p;
	int r;

	et_ranks_up(&p, 3, timeout);
	for (r = 0; r < 2; r++)
		et_ok(p.err[r] == ETIMEDOUT && p.failed_rank[r] == 2 &&
		      p.took_ms[r] <= bound,
		      p.err[r] != ETIMEDOUT ? et_err(p.err[r]) :
		      p.failed_rank[r] != 2 ? "failed_rank" : "too late",
		      "COMM_CREATE: rank %d of 3 without rank 2, timeout %u ms -> ETIMEDOUT, failed_rank 2 (%#x), within %llu ms (%llu)",
		      r, timeout, p.failed_rank[r], (unsigned long long)bound,
		      (unsigned long long)p.took_ms[r]);
	et_pair_close(&p);
}

void et_comm_cases(void)
{
	struct create_req r;
	uint32_t id, id2;
	unsigned int i;
	uint64_t key;
	int fd = et_open(), err, err2;

	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++) {
		valid(&r);
		cases[i].mutate(&r);
		err = et_ioctl(fd, COLLX_IOC_COMM_CREATE, &r.c);
		et_expect(err, cases[i].want, cases[i].alt,
			  "COMM_CREATE: %s -> %s", cases[i].name,
			  et_err(cases[i].want));
		if (!err)
			et_destroy(fd, r.c.comm_id);
	}

	valid(&r);
	err = et_ioctl(fd, COLLX_IOC_COMM_CREATE, &r.c);
	et_ok(!err && r.c.failed_rank == COLLX_RANK_NONE, et_err(err),
	      "COMM_CREATE: ok leaves failed_rank COLLX_RANK_NONE (got %#x)",
	      r.c.failed_rank);
	key = r.c.comm_key;
	id = r.c.comm_id;
	/*
	 * The key tells connections apart, and a 1-rank comm makes none:
	 * EEXIST is for ranks of bigger comms (errno_state.c).
	 */
	err2 = et_comm(fd, key, &id2);
	et_expect(err2, 0, -1,
		  "COMM_CREATE: a 1-rank comm with a live 1-rank comm's key -> ok");
	if (!err2)
		et_destroy(fd, id2);
	if (!err) {
		err = et_destroy(fd, id);
		et_expect(err, 0, -1, "COMM_DESTROY: a live comm -> ok");
		et_expect(et_destroy(fd, id), ENOENT, -1,
			  "COMM_DESTROY: the same comm again -> ENOENT");
		et_expect(et_comm(fd, key, &id2), 0, -1,
			  "COMM_CREATE: the key of a destroyed comm -> ok");
		et_destroy(fd, id2);
	}
	et_expect(et_destroy(fd, 0x7fffffff), ENOENT, -1,
		  "COMM_DESTROY: a comm_id never handed out -> ENOENT");
	close(fd);
	create_bounded();
}
