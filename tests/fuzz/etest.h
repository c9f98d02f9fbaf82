/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx_errno: the targeted cases of the errno contract, one TAP line
 * each.  The fixture (errno_fixture.c) gives every case what it needs:
 * fresh fds, 1-rank comms on this node's address, memory of every kind;
 * the errno_*.c files hold the tables of cases, one file per concern.
 */
#ifndef FUZZ_ETEST_H
#define FUZZ_ETEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"

#define ET_PAGE		4096UL
#define ET_BUF_LEN	(4UL << 20)

struct et_ctx {
	uint32_t node_addr;	/* this node's IPv4, network order */
	uint32_t abi_minor;
	uint64_t features;
	bool root;
	uint8_t *buf;		/* ET_BUF_LEN read-write bytes */
	uint8_t *ro;		/* ET_PAGE * 4 read-only bytes, not zero */
	uint8_t *none;		/* an unmapped page */
	uint8_t *end;		/* a read-write page right before an unmapped one */
};

extern struct et_ctx et;

/* TAP. */
void et_ok(bool ok, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "ok N - NAME -> WANT" when @got is @want (or @alt, if >= 0). */
void et_expect(int got, int want, int alt, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void et_skip(const char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
unsigned int et_failed(void);
unsigned int et_count(void);
const char *et_err(int err);

/* Calls: 0 or the errno. */
int et_open(void);		/* /dev/collx, non-blocking */
int et_ioctl(int fd, unsigned long nr, void *arg);
/* A 1-rank comm on this node's address (key 0: a fresh one). */
int et_comm(int fd, uint64_t key, uint32_t *id);
uint64_t et_key(void);
void et_rank_addr(struct collx_rank_addr *a);
int et_destroy(int fd, uint32_t id);
int et_reg(int fd, void *p, uint64_t len, uint32_t *id);
int et_dereg(int fd, uint32_t id);
/* An allreduce of @count fp32 from @send to @recv. */
void et_allreduce(struct collx_submit *s, uint32_t comm, uint64_t count,
		  void *send, void *recv);
int et_submit(int fd, struct collx_submit *s);
/* Wait for op @id up to @ms; its record in @c. */
int et_wait(int fd, uint64_t id, unsigned int ms, struct collx_completion *c);
/* Read records until none arrives for @ms; how many. */
unsigned int et_drain(int fd, unsigned int ms);
/* Is a record readable within @ms? */
bool et_readable(int fd, unsigned int ms);

/*
 * Ranks 0 and 1 of one comm, each on its own fd, all its ranks at this
 * node's address (no traffic leaves the node), created at once from two
 * threads: what each create returned and how long it took.
 */
struct et_pair {
	int fd[2];
	uint32_t id[2];
	int err[2];
	uint32_t failed_rank[2];
	uint64_t took_ms[2];
	uint64_t key;
	uint32_t nranks;
	uint32_t timeout_ms;
	struct collx_rank_addr addrs[4];
};

/* A 2-rank comm, timeout 5 s; 0 or the first rank's errno. */
int et_pair_up(struct et_pair *p);
/* Ranks 0 and 1 of @nranks (at most 4): the others never come. */
int et_ranks_up(struct et_pair *p, uint32_t nranks, uint32_t timeout_ms);
/* et_pair_close() after either, whatever they returned. */
void et_pair_close(struct et_pair *p);
/* et_pair_up(); if it fails, a failed TAP line @what, closed, false. */
bool et_pair_or_fail(struct et_pair *p, const char *what);
uint64_t et_now_ms(void);	/* CLOCK_MONOTONIC */

/* The tables, in the order they run. */
void et_size_cases(void);
void et_comm_cases(void);
void et_mr_cases(void);
void et_submit_cases(void);
void et_group_cases(void);
void et_limit_cases(void);
void et_state_cases(void);
void et_field_cases(void);

#endif /* FUZZ_ETEST_H */
