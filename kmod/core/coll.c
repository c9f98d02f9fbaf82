// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: every collective as a schedule of transfers (coll.h).  This
 * file holds the choice of algorithm, the argument checks, the dispatch
 * to the builders of coll_ring.c, coll_tree.c, coll_rd.c and
 * coll_pairwise.c, the point-to-point and one-rank schedules, and the
 * helpers every builder adds transfers with.
 */
#include "coll_impl.h"

#define COLLX_KIB(n)	((u64)(n) << 10)

/*
 * What COLLX_ALGO_AUTO picks: the first row of the collective whose bound,
 * below + per_rank * nranks bytes of its largest buffer, exceeds the
 * collective's size; a row with neither bound takes every size.
 *
 * PROVISIONAL: these come from a latency/bandwidth argument, not from
 * measurements; the lab measures the crossovers and replaces them.
 * - Below 64 KiB a collective is latency bound: recursive doubling has
 *   the fewest rounds (log2 n; halving-doubling keeps allreduce's traffic
 *   at 2 (n - 1) / n of the data from pof2 elements on).
 * - Allreduce from 64 KiB: the double binary tree (about 2 log2 n hops,
 *   pipelined) until the ring's 2 (n - 1) steps carry enough per step to
 *   hide their latency.  That crossover grows with n, hence 256 KiB plus
 *   32 KiB per rank (half a default 64 KiB staging slot per ring chunk).
 * - Broadcast and reduce: the tree's log2 n hops below 256 KiB, the ring's
 *   one-link-per-byte chain above.
 * - Allgather and reduce-scatter: recursive doubling or halving below
 *   64 KiB, the ring above.
 * - Alltoall: pairwise exchange (one partner per step, no incast); barrier:
 *   recursive doubling (log2 n token rounds); send and recv: one transfer.
 */
static const struct collx_algo_pick {
	u8 coll;
	u8 algo;
	u64 below;
	u64 per_rank;
} collx_algo_picks[] = {
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_RD, COLLX_KIB(64), 0 },
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_TREE, COLLX_KIB(256),
	  COLLX_KIB(32) },
	{ COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING, 0, 0 },
	{ COLLX_COLL_BROADCAST, COLLX_ALGO_TREE, COLLX_KIB(256), 0 },
	{ COLLX_COLL_BROADCAST, COLLX_ALGO_RING, 0, 0 },
	{ COLLX_COLL_REDUCE, COLLX_ALGO_TREE, COLLX_KIB(256), 0 },
	{ COLLX_COLL_REDUCE, COLLX_ALGO_RING, 0, 0 },
	{ COLLX_COLL_ALLGATHER, COLLX_ALGO_RD, COLLX_KIB(64), 0 },
	{ COLLX_COLL_ALLGATHER, COLLX_ALGO_RING, 0, 0 },
	{ COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RD, COLLX_KIB(64), 0 },
	{ COLLX_COLL_REDUCE_SCATTER, COLLX_ALGO_RING, 0, 0 },
	{ COLLX_COLL_ALLTOALL, COLLX_ALGO_PAIRWISE, 0, 0 },
	{ COLLX_COLL_BARRIER, COLLX_ALGO_RD, 0, 0 },
	{ COLLX_COLL_SEND, COLLX_ALGO_P2P, 0, 0 },
	{ COLLX_COLL_RECV, COLLX_ALGO_P2P, 0, 0 },
};

u32 collx_algo_choose(u32 coll, u64 bytes, u32 nranks)
{
	const struct collx_algo_pick *p;
	u64 bound;
	size_t i;

	if (nranks <= 1)
		return COLLX_ALGO_P2P;
	for (i = 0; i < ARRAY_SIZE(collx_algo_picks); i++) {
		p = &collx_algo_picks[i];
		if (p->coll != coll)
			continue;
		if (!p->below && !p->per_rank)
			return p->algo;
		bound = p->below + p->per_rank * nranks;
		if (bytes < bound)
			return p->algo;
	}
	/* not a collective: let collx_coll_build() say -EINVAL */
	return COLLX_ALGO_P2P;
}

/* Bit c set: the algorithm runs collective c (at any rank count). */
#define COLLX_C(c)	BIT(COLLX_COLL_##c)
static const u16 collx_algo_colls[COLLX_ALGO_COUNT] = {
	[COLLX_ALGO_RING] = COLLX_C(ALLREDUCE) | COLLX_C(BROADCAST) |
			    COLLX_C(REDUCE) | COLLX_C(ALLGATHER) |
			    COLLX_C(REDUCE_SCATTER) | COLLX_C(ALLTOALL) |
			    COLLX_C(BARRIER),
	[COLLX_ALGO_TREE] = COLLX_C(ALLREDUCE) | COLLX_C(REDUCE) |
			    COLLX_C(BROADCAST),
	[COLLX_ALGO_RD] = COLLX_C(ALLREDUCE) | COLLX_C(ALLGATHER) |
			  COLLX_C(REDUCE_SCATTER) | COLLX_C(BARRIER),
	[COLLX_ALGO_PAIRWISE] = COLLX_C(ALLTOALL),
	/*
	 * Send and recv; and every collective of one rank, which this table
	 * cannot tell apart: collx_coll_build() refuses the rest when
	 * nranks > 1.
	 */
	[COLLX_ALGO_P2P] = BIT(COLLX_COLL_COUNT) - 1,
};

int collx_coll_supported(u32 coll, u32 algo)
{
	if (coll >= COLLX_COLL_COUNT || algo == COLLX_ALGO_AUTO ||
	    algo >= COLLX_ALGO_COUNT)
		return -EINVAL;
	return collx_algo_colls[algo] & BIT(coll) ? 0 : -EOPNOTSUPP;
}

/* Blocks of @count per rank: no element offset may overflow. */
static bool collx_coll_blocked(u32 coll)
{
	return coll == COLLX_COLL_ALLGATHER ||
	       coll == COLLX_COLL_REDUCE_SCATTER || coll == COLLX_COLL_ALLTOALL;
}

static int collx_coll_check(const struct collx_coll_args *a)
{
	u64 total;
	int ret;

	if (a->coll >= COLLX_COLL_COUNT || a->redop >= COLLX_OP_COUNT ||
	    !a->nranks || a->nranks > COLLX_MAX_RANKS ||
	    a->rank >= a->nranks)
		return -EINVAL;
	ret = collx_coll_supported(a->coll, a->algo);
	if (ret)
		return ret;
	switch (a->coll) {
	case COLLX_COLL_SEND:
	case COLLX_COLL_RECV:
		/* a rank cannot be its own peer: nothing would match */
		if (a->root == a->rank)
			return -EINVAL;
		fallthrough;
	case COLLX_COLL_ALLTOALL:
		/* no in-place form (the buffers must not overlap) */
		if (a->inplace)
			return -EINVAL;
		break;
	case COLLX_COLL_BARRIER:
		if (a->count)
			return -EINVAL;
		break;
	default:
		break;
	}
	if ((a->coll == COLLX_COLL_BROADCAST || a->coll == COLLX_COLL_REDUCE ||
	     a->coll == COLLX_COLL_SEND || a->coll == COLLX_COLL_RECV) &&
	    a->root >= a->nranks)
		return -EINVAL;
	if (collx_coll_blocked(a->coll) &&
	    check_mul_overflow(a->count, (u64)a->nranks, &total))
		return -EINVAL;
	if (a->algo == COLLX_ALGO_P2P && a->nranks > 1 &&
	    a->coll != COLLX_COLL_SEND && a->coll != COLLX_COLL_RECV)
		return -EOPNOTSUPP;
	return 0;
}

u32 collx_coll_max_xfers(const struct collx_coll_args *a)
{
	if (collx_coll_check(a))
		return 0;
	/* one rank: a copy and a scale at most */
	if (a->nranks == 1)
		return 2;
	switch (a->algo) {
	case COLLX_ALGO_RING:
		return collx_ring_max_xfers(a->coll, a->nranks);
	case COLLX_ALGO_TREE:
		return collx_tree_max_xfers(a->coll);
	case COLLX_ALGO_RD:
		return collx_rd_max_xfers(a->coll, a->nranks);
	case COLLX_ALGO_PAIRWISE:
		/* n - 1 exchanges and the local block */
		return 2 * (a->nranks - 1) + 1;
	default:
		return 1;
	}
}

static s32 collx_bld_add(struct collx_bld *b, u8 kind, u32 peer, u8 src,
			 u64 src_off, u8 dst, u64 dst_off, u64 count)
{
	struct collx_sched *s = b->s;
	struct collx_xfer *x;
	u64 *ext[4] = { NULL, &s->in_count, &s->out_count, &s->tmp_count };

	if (b->err)
		return COLLX_NOX;
	if (s->n >= s->max) {
		b->err = -ENOSPC;
		return COLLX_NOX;
	}
	x = &s->x[s->n];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->src = src;
	x->dst = dst;
	x->phase = b->phase;
	x->step = b->step;
	x->peer = peer;
	x->count = count;
	x->src_off = src_off;
	x->dst_off = dst_off;
	/* extents of what the schedule touches, read or written */
	if (src && *ext[src] < src_off + count)
		*ext[src] = src_off + count;
	if (dst && *ext[dst] < dst_off + count)
		*ext[dst] = dst_off + count;
	return (s32)s->n++;
}

s32 collx_bld_send(struct collx_bld *b, u32 peer, u8 src, u64 off, u64 count)
{
	if (!count)
		return COLLX_NOX;
	return collx_bld_add(b, COLLX_XF_SEND, peer, src, off, COLLX_BUF_NONE,
			     0, count);
}

s32 collx_bld_recv(struct collx_bld *b, u32 peer, u8 dst, u64 off, u64 count)
{
	if (!count)
		return COLLX_NOX;
	return collx_bld_add(b, COLLX_XF_RECV, peer, COLLX_BUF_NONE, 0, dst,
			     off, count);
}

s32 collx_bld_rr(struct collx_bld *b, u32 peer, u8 dst, u64 off, u64 count)
{
	if (!count)
		return COLLX_NOX;
	return collx_bld_add(b, COLLX_XF_RECV_REDUCE, peer, COLLX_BUF_NONE, 0,
			     dst, off, count);
}

s32 collx_bld_copy(struct collx_bld *b, u8 src, u64 src_off, u8 dst,
		   u64 dst_off, u64 count)
{
	if (!count)
		return COLLX_NOX;
	return collx_bld_add(b, COLLX_XF_COPY, 0, src, src_off, dst, dst_off,
			     count);
}

s32 collx_bld_avg(struct collx_bld *b, u8 dst, u64 off, u64 count)
{
	if (!count || b->a->redop != COLLX_OP_AVG)
		return COLLX_NOX;
	return collx_bld_add(b, COLLX_XF_SCALE, 0, COLLX_BUF_NONE, 0, dst, off,
			     count);
}

s32 collx_bld_token_send(struct collx_bld *b, u32 peer)
{
	return collx_bld_add(b, COLLX_XF_SEND, peer, COLLX_BUF_NONE, 0,
			     COLLX_BUF_NONE, 0, 0);
}

s32 collx_bld_token_recv(struct collx_bld *b, u32 peer)
{
	return collx_bld_add(b, COLLX_XF_RECV, peer, COLLX_BUF_NONE, 0,
			     COLLX_BUF_NONE, 0, 0);
}

static void collx_bld_dep_add(struct collx_bld *b, s32 x, s32 dep,
			      bool sliced)
{
	struct collx_xfer *t;

	if (x < 0 || dep < 0 || b->err)
		return;
	t = &b->s->x[x];
	/* a builder bug; the tests build and check every schedule */
	if (t->ndeps >= COLLX_XF_MAX_DEPS || dep >= x ||
	    (sliced && b->s->x[dep].count != t->count)) {
		b->err = -EINVAL;
		return;
	}
	if (sliced)
		t->dep_sliced |= BIT(t->ndeps);
	t->deps[t->ndeps++] = (u32)dep;
}

void collx_bld_dep(struct collx_bld *b, s32 x, s32 dep)
{
	collx_bld_dep_add(b, x, dep, false);
}

void collx_bld_sdep(struct collx_bld *b, s32 x, s32 dep)
{
	collx_bld_dep_add(b, x, dep, true);
}

s32 collx_bld_find(const struct collx_bld *b, u32 *pos, u8 kind, u8 phase,
		   u32 step)
{
	const struct collx_sched *s = b->s;
	const struct collx_xfer *x;

	for (; *pos < s->n; (*pos)++) {
		x = &s->x[*pos];
		if (x->kind != kind || x->phase != phase)
			continue;
		if (x->step > step)
			return COLLX_NOX;
		if (x->step == step)
			return (s32)(*pos)++;
	}
	return COLLX_NOX;
}

/*
 * One rank: the output is the input (a sum of one), so at most a copy out
 * of place, and the scale of an avg (a division by one, kept so that every
 * avg is scaled exactly once whatever the rank count).
 */
static void collx_local_build(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	s32 cp = COLLX_NOX, sc;

	collx_bld_at(b, COLLX_PHASE_P2P, 0);
	if (a->coll == COLLX_COLL_BARRIER)
		return;
	if (!a->inplace)
		cp = collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT, 0,
				    a->count);
	if (a->coll == COLLX_COLL_ALLREDUCE || a->coll == COLLX_COLL_REDUCE ||
	    a->coll == COLLX_COLL_REDUCE_SCATTER) {
		sc = collx_bld_avg(b, COLLX_BUF_OUT, 0, a->count);
		collx_bld_sdep(b, sc, cp);
	}
}

/* Send and recv: one transfer; count 0 is a token, matched all the same. */
static void collx_p2p_build(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;

	collx_bld_at(b, COLLX_PHASE_P2P, 0);
	if (a->coll == COLLX_COLL_SEND && a->count)
		collx_bld_send(b, a->root, COLLX_BUF_IN, 0, a->count);
	else if (a->coll == COLLX_COLL_SEND)
		collx_bld_token_send(b, a->root);
	else if (a->count)
		collx_bld_recv(b, a->root, COLLX_BUF_OUT, 0, a->count);
	else
		collx_bld_token_recv(b, a->root);
}

int collx_coll_build(const struct collx_coll_args *a, struct collx_sched *s)
{
	struct collx_bld b = { .a = a, .s = s };
	int ret;

	s->n = 0;
	s->tmp_count = 0;
	s->in_count = 0;
	s->out_count = 0;
	ret = collx_coll_check(a);
	if (ret)
		return ret;
	if (a->nranks == 1)
		collx_local_build(&b);
	else if (a->algo == COLLX_ALGO_RING)
		collx_ring_build(&b);
	else if (a->algo == COLLX_ALGO_TREE)
		collx_tree_build(&b);
	else if (a->algo == COLLX_ALGO_RD)
		collx_rd_build(&b);
	else if (a->algo == COLLX_ALGO_PAIRWISE)
		collx_pairwise_build(&b);
	else
		collx_p2p_build(&b);
	return b.err;
}
