/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: what the schedule builders share (coll.c and coll_*.c).
 * Documentation/schedules.md describes every schedule they build.
 */
#ifndef _COLLX_CORE_COLL_IMPL_H
#define _COLLX_CORE_COLL_IMPL_H

#include "coll.h"
#include "sched.h"

/*
 * "No transfer": what adding an empty range returns.  Empty ranges are
 * omitted on both ends of a link alike (every rank computes the same
 * ranges), and dependencies on an omitted transfer are dropped.
 */
#define COLLX_NOX	(-1)

/**
 * struct collx_bld - a schedule being built
 * @a: the collective
 * @s: the schedule
 * @err: first error (-ENOSPC: @s is full); later adds do nothing
 * @phase: enum collx_phase of the transfers added next
 * @step: their step
 */
struct collx_bld {
	const struct collx_coll_args *a;
	struct collx_sched *s;
	int err;
	u8 phase;
	u16 step;
};

static inline void collx_bld_at(struct collx_bld *b, u8 phase, u32 step)
{
	b->phase = phase;
	b->step = (u16)step;
}

/* The buffer holding this rank's input: COLLX_BUF_OUT when in place. */
static inline u8 collx_bld_inbuf(const struct collx_bld *b)
{
	return b->a->inplace ? COLLX_BUF_OUT : COLLX_BUF_IN;
}

/* Transfers of count 0 are omitted (COLLX_NOX returned). */
s32 collx_bld_send(struct collx_bld *b, u32 peer, u8 src, u64 off, u64 count);
s32 collx_bld_recv(struct collx_bld *b, u32 peer, u8 dst, u64 off, u64 count);
s32 collx_bld_rr(struct collx_bld *b, u32 peer, u8 dst, u64 off, u64 count);
s32 collx_bld_copy(struct collx_bld *b, u8 src, u64 src_off, u8 dst,
		   u64 dst_off, u64 count);
/* SCALE for COLLX_OP_AVG; with any other redop nothing (COLLX_NOX). */
s32 collx_bld_avg(struct collx_bld *b, u8 dst, u64 off, u64 count);
/* Count-0 token transfers: never omitted. */
s32 collx_bld_token_send(struct collx_bld *b, u32 peer);
s32 collx_bld_token_recv(struct collx_bld *b, u32 peer);

/*
 * @x waits for @dep: every slice of it (collx_bld_dep()), or slice by
 * slice (collx_bld_sdep(): same count, the pipeline).  No-ops when either
 * is COLLX_NOX, so builders need not test what they omitted.
 */
void collx_bld_dep(struct collx_bld *b, s32 x, s32 dep);
void collx_bld_sdep(struct collx_bld *b, s32 x, s32 dep);

/*
 * The next transfer of @kind in @phase at @step, searching forward from
 * *@pos (then past it): how a builder finds what an earlier phase added
 * without an array of n indices.  Those transfers must have been added in
 * increasing step order.  COLLX_NOX if it was omitted.
 */
s32 collx_bld_find(const struct collx_bld *b, u32 *pos, u8 kind, u8 phase,
		   u32 step);

/* floor(log2(n)) for n >= 1 */
static inline u32 collx_ilog2(u32 n)
{
	u32 l = 0;

	while (n >>= 1)
		l++;
	return l;
}

/* (a + b) mod n and (a - b) mod n for a, b < n */
static inline u32 collx_mod_add(u32 n, u32 a, u32 b)
{
	return (a + b) % n;
}

static inline u32 collx_mod_sub(u32 n, u32 a, u32 b)
{
	return (a + n - b) % n;
}

/* Builders by algorithm: each sets b->err on failure. */
void collx_ring_build(struct collx_bld *b);
void collx_tree_build(struct collx_bld *b);
void collx_rd_build(struct collx_bld *b);
void collx_pairwise_build(struct collx_bld *b);

/* Their bounds of collx_coll_max_xfers() for nranks >= 2. */
u32 collx_ring_max_xfers(u32 coll, u32 nranks);
u32 collx_tree_max_xfers(u32 coll);
u32 collx_rd_max_xfers(u32 coll, u32 nranks);

#endif /* _COLLX_CORE_COLL_IMPL_H */
