/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: a simulator of the schedules of coll.h, for the tests (KUnit
 * coll_test.c and the host tests/unit/test_coll.c).
 *
 * collx_csim_run() builds every rank's schedule of one collective and
 * checks, in this order:
 * - the build API: collx_coll_max_xfers() is room enough, one transfer
 *   less is -ENOSPC, at most 8 * nranks + 16 transfers, the same
 *   schedule twice;
 * - each transfer on its own: kind, phase, buffers (never the input in
 *   place, never scratch where the collective may not use it), ranges
 *   within the buffers the collective defines, only regions the caller
 *   lets it write, dependencies on earlier transfers (slice-wise ones of
 *   the same count), count-0 tokens only where tokens belong;
 * - matching: the k-th SEND from a to b and the k-th RECV of b from a
 *   exist and have the same count;
 * - hazards, statically: every read is ordered (by the transitive
 *   dependencies, slice by slice where they are slice-wise) after the
 *   write it needs and reads nothing undefined; every write after every
 *   earlier read and write of its elements; a send that forwards exactly
 *   what a receive (or scale) wrote waits for it slice by slice only (the
 *   pipeline);
 * - a run of all ranks together under the executor's rules: one channel
 *   per ordered pair with @credits slots, slices of @slice elements,
 *   sends to a peer posted in order and one transfer's slices before the
 *   next's, receives from a peer completing in order, a slice ready when
 *   its dependencies are met, and at each step a random choice among
 *   everything that may happen next.  A SEND slice's source is read when
 *   it completes (as late as zero copy allows) and a RECV slice's
 *   destination is written as soon as it is ready and its data was sent
 *   (as early as direct placement allows); a slice's window from ready to
 *   complete must not overlap a conflicting window.  Deadlock is nothing
 *   left to do before everything is done;
 * - the result, element by element, against the collective's definition:
 *   data are sets of contributions (one bit per rank, so at most 64
 *   ranks) tagged with the element they came from; a reduction must join
 *   disjoint sets of the same element, an avg is scaled exactly once after
 *   its sum is complete; every rank's output must hold what the
 *   collective defines (which rank's block lands where, in and out of
 *   place), in-place inputs that are not outputs must be unchanged, and a
 *   barrier rank must end having heard from every rank.
 *
 * An in-place reduce-scatter's output is the input from rank * count on:
 * the simulator reads that part of COLLX_BUF_IN from COLLX_BUF_OUT, so
 * the checks above see the aliasing.
 *
 * Memory comes from the caller (@mem, @size); nothing is allocated.
 */
#ifndef _COLLX_CORE_COLL_SIM_H
#define _COLLX_CORE_COLL_SIM_H

#include "coll.h"
#include "sched_sim.h"

/**
 * struct collx_csim_cfg - one simulated collective
 * @a: the collective; @a.rank is ignored (every rank is built).  For
 *	COLLX_COLL_SEND: rank @sender sends to rank @a.root, which receives
 *	(COLLX_COLL_RECV), and the other ranks do nothing
 * @sender: see @a
 * @slice: elements per slice, at least 1
 * @credits: slots per channel, at least 1
 * @seed: of the random choices
 * @dynamic_only: skip the static hazard check (to show that the run
 *	alone catches hazards too)
 * @mutate: if set, called on each built schedule (tests of the simulator
 *	break schedules with it)
 * @priv: for @mutate
 */
struct collx_csim_cfg {
	struct collx_coll_args a;
	u32 sender;
	u64 slice;
	u32 credits;
	u64 seed;
	bool dynamic_only;
	void (*mutate)(struct collx_sched *s, u32 rank, void *priv);
	void *priv;
};

/**
 * struct collx_csim_res - what a simulation found
 * @why: NULL if every check passed, else the first broken property
 * @rank: where (-1: not one rank's)
 * @xfer: which transfer of @rank (-1: none)
 * @elem: which element, where it applies
 * @xfers: transfers of all ranks
 * @max_xfers: most transfers of one rank
 * @tmp: most scratch elements of one rank
 * @actions: simulated actions
 * @mem: arena bytes used
 */
struct collx_csim_res {
	const char *why;
	s32 rank;
	s32 xfer;
	u64 elem;
	u64 xfers;
	u32 max_xfers;
	u64 tmp;
	u64 actions;
	size_t mem;
};

/* One element: a set of contributions of one element of the vector. */
struct csim_val {
	u64 mask;
	u32 idx;
	u8 def;
	u8 nscale;
	u16 pad;
};

/* Windows open on one element. */
struct csim_win {
	u16 readers;
	u16 writers;
};

#define CSIM_READERS	5

/* The static hazard check's view of one element. */
struct csim_hz {
	s32 lastw;
	s32 rd[CSIM_READERS];
	u8 nrd;
	u8 def;
};

/* slice states */
#define CSIM_READY	1
#define CSIM_WRITTEN	2
#define CSIM_DONE	4

enum { CSIM_LOCAL, CSIM_SENDQ, CSIM_RECVQ };

struct csim_act {
	u32 type;
	u32 rank;
	u32 x;
	u64 sl;
};

struct csim_rank {
	struct collx_coll_args a;
	struct collx_sched s;
	u64 size[4];
	u64 alias_lo;
	u64 alias_len;
	struct csim_val *buf[4];
	struct csim_win *win[4];
	u64 *sbase;
	u8 *st;
	u64 *ndone;
	u64 *snap;
	struct csim_val *snapv;
	u64 *know;
	u32 *rdep_start;
	u32 *rdep;
	u32 *sq_start;
	u32 *sq_x;
	u32 *rq_start;
	u32 *rq_x;
	u32 *xpos;
	u32 *sq_pos;
	u32 *rq_pos;
	u64 *sq_sl;
	u64 *rq_sl;
	u8 *sq_inpool;
	u8 *rq_inpool;
};

struct csim {
	const struct collx_csim_cfg *cfg;
	struct collx_csim_res *res;
	u32 n;
	u64 S;
	u64 rng;
	u8 *mem;
	size_t size;
	size_t used;
	struct csim_rank *rk;
	u64 *chan_sent;
	u64 *chan_cons;
	struct csim_act *pool;
	u64 npool;
	u64 cap;
};

static inline u64 csim_rand(struct csim *sim)
{
	u64 x = sim->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sim->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline bool csim_fail(struct csim *sim, const char *why, s32 rank,
			     s32 xfer, u64 elem)
{
	if (!sim->res->why) {
		sim->res->why = why;
		sim->res->rank = rank;
		sim->res->xfer = xfer;
		sim->res->elem = elem;
	}
	return false;
}

static inline void *csim_alloc(struct csim *sim, size_t bytes)
{
	size_t at = (sim->used + 15) & ~(size_t)15;
	void *p;

	if (sim->res->why)
		return NULL;
	if (at > sim->size || bytes > sim->size - at) {
		csim_fail(sim, "sim: arena too small", -1, -1, at + bytes);
		return NULL;
	}
	p = sim->mem + at;
	memset(p, 0, bytes);
	sim->used = at + bytes;
	if (sim->res->mem < sim->used)
		sim->res->mem = sim->used;
	return p;
}

/* Rank @r's contribution; ranks past 64 (static checks only) have none. */
static inline u64 csim_rbit(u32 r)
{
	return r < 64 ? 1ULL << r : 0;
}

static inline u64 csim_nsl(const struct collx_xfer *x, u64 S)
{
	return x->count ? (x->count + S - 1) / S : 1;
}

static inline bool csim_reducing(u32 coll)
{
	return coll == COLLX_COLL_ALLREDUCE || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_REDUCE_SCATTER;
}

static inline bool csim_token_ok(u32 coll)
{
	return coll == COLLX_COLL_BARRIER || coll == COLLX_COLL_SEND ||
	       coll == COLLX_COLL_RECV;
}

/* Sizes of the buffers the collective defines for @r (COLLX_BUF_*). */
static inline void csim_sizes(const struct collx_coll_args *a, u32 sender,
			      u32 r, u64 *size)
{
	u64 c = a->count, nc = c * a->nranks;
	bool root = r == a->root, ip = a->inplace;

	size[COLLX_BUF_IN] = ip ? 0 : c;
	size[COLLX_BUF_OUT] = c;
	switch (a->coll) {
	case COLLX_COLL_BROADCAST:
		size[COLLX_BUF_IN] = root && !ip ? c : 0;
		break;
	case COLLX_COLL_REDUCE:
		size[COLLX_BUF_OUT] = root || ip ? c : 0;
		break;
	case COLLX_COLL_ALLGATHER:
		size[COLLX_BUF_OUT] = nc;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		size[COLLX_BUF_IN] = nc;
		break;
	case COLLX_COLL_ALLTOALL:
		size[COLLX_BUF_IN] = nc;
		size[COLLX_BUF_OUT] = nc;
		break;
	case COLLX_COLL_BARRIER:
		size[COLLX_BUF_IN] = 0;
		size[COLLX_BUF_OUT] = 0;
		break;
	case COLLX_COLL_SEND:
		size[COLLX_BUF_IN] = r == sender ? c : 0;
		size[COLLX_BUF_OUT] = root ? c : 0;
		break;
	default:
		break;
	}
}

/* In-place reduce-scatter: the output is the input from rank * count. */
static inline void csim_set_alias(const struct collx_coll_args *a, u32 r,
				  struct csim_rank *rk)
{
	rk->alias_len = 0;
	if (a->coll == COLLX_COLL_REDUCE_SCATTER && a->inplace) {
		rk->alias_lo = r * a->count;
		rk->alias_len = a->count;
	}
}

/*
 * The value element @e of @r's output holds before the collective: the
 * in-place input; 0 (undefined) elsewhere.
 */
static inline void csim_out_init(const struct collx_coll_args *a, u32 r,
				 u64 e, struct csim_val *v)
{
	u64 c = a->count;
	bool in = false;

	memset(v, 0, sizeof(*v));
	if (!a->inplace)
		return;
	switch (a->coll) {
	case COLLX_COLL_ALLREDUCE:
	case COLLX_COLL_REDUCE:
		in = true;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		/* this rank's block of the input */
		v->mask = csim_rbit(r);
		v->idx = (u32)(r * c + e);
		v->def = 1;
		return;
	case COLLX_COLL_BROADCAST:
		in = r == a->root;
		break;
	case COLLX_COLL_ALLGATHER:
		in = e >= r * c && e < (r + 1) * c;
		break;
	default:
		break;
	}
	if (in) {
		v->mask = csim_rbit(r);
		v->idx = (u32)(a->coll == COLLX_COLL_ALLGATHER ? e - r * c : e);
		v->def = 1;
	}
}

/* May the collective write element @e of @r's output? */
static inline bool csim_writable(const struct collx_coll_args *a, u32 r,
				 u64 e)
{
	u64 c = a->count;

	if (!a->inplace)
		return true;
	switch (a->coll) {
	case COLLX_COLL_BROADCAST:
		return r != a->root;
	case COLLX_COLL_REDUCE:
		return r == a->root;
	case COLLX_COLL_ALLGATHER:
		return e < r * c || e >= (r + 1) * c;
	default:
		return true;
	}
}

/* Where element @e of @buf is: the aliased part of the input is output. */
static inline void csim_map(const struct csim_rank *rk, u8 *buf, u64 *e)
{
	if (*buf == COLLX_BUF_IN && rk->alias_len &&
	    *e - rk->alias_lo < rk->alias_len) {
		*buf = COLLX_BUF_OUT;
		*e -= rk->alias_lo;
	}
}

/* The value at element @e of @buf, aliasing applied. */
static inline struct csim_val *csim_val_at(struct csim_rank *rk, u8 buf,
					   u64 e)
{
	csim_map(rk, &buf, &e);
	return &rk->buf[buf][e];
}

/* What element @e of @r's output must hold at the end. */
static inline void csim_out_want(const struct collx_csim_cfg *cfg, u32 r,
				 u64 e, struct csim_val *v)
{
	const struct collx_coll_args *a = &cfg->a;
	u64 full = collx_sim_full(a->nranks), c = a->count;
	u8 sc = a->redop == COLLX_OP_AVG;

	csim_out_init(a, r, e, v);
	v->def = 1;
	switch (a->coll) {
	case COLLX_COLL_ALLREDUCE:
		v->mask = full;
		v->idx = (u32)e;
		v->nscale = sc;
		break;
	case COLLX_COLL_BROADCAST:
		v->mask = 1ULL << a->root;
		v->idx = (u32)e;
		break;
	case COLLX_COLL_REDUCE:
		if (r == a->root) {
			v->mask = full;
			v->idx = (u32)e;
			v->nscale = sc;
		}
		break;
	case COLLX_COLL_ALLGATHER:
		v->mask = 1ULL << (e / c);
		v->idx = (u32)(e % c);
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		v->mask = full;
		v->idx = (u32)(r * c + e);
		v->nscale = sc;
		break;
	case COLLX_COLL_ALLTOALL:
		v->mask = 1ULL << (e / c);
		v->idx = (u32)(r * c + e % c);
		break;
	case COLLX_COLL_SEND:
		v->mask = 1ULL << cfg->sender;
		v->idx = (u32)e;
		break;
	default:
		break;
	}
}

/* ---- building and per-transfer checks ---- */

static inline bool csim_build(struct csim *sim, u32 r)
{
	const struct collx_csim_cfg *cfg = sim->cfg;
	struct csim_rank *rk = &sim->rk[r];
	struct collx_sched again;
	u32 n = sim->n, max;
	int ret;

	rk->a = cfg->a;
	rk->a.rank = r;
	if (cfg->a.coll == COLLX_COLL_SEND) {
		if (r != cfg->sender && r != cfg->a.root)
			return true;	/* not involved: empty */
		if (r == cfg->a.root) {
			rk->a.coll = COLLX_COLL_RECV;
			rk->a.root = cfg->sender;
		}
	}
	max = collx_coll_max_xfers(&rk->a);
	if (!max)
		return csim_fail(sim, "collx_coll_max_xfers() is 0", r, -1, 0);
	if (max > 8 * n + 16)
		return csim_fail(sim, "more room than 8 * nranks + 16", r, -1,
				 max);
	rk->s.x = csim_alloc(sim, (max + 1) * sizeof(*rk->s.x));
	again.x = csim_alloc(sim, (max + 1) * sizeof(*rk->s.x));
	if (!rk->s.x || !again.x)
		return false;
	rk->s.max = max;
	ret = collx_coll_build(&rk->a, &rk->s);
	if (ret)
		return csim_fail(sim, ret == -ENOSPC ?
				 "max_xfers is not room enough" :
				 "collx_coll_build() failed", r, ret, 0);
	if (rk->s.n > rk->s.max)
		return csim_fail(sim, "built past its room", r, -1, rk->s.n);
	again.max = max;
	if (collx_coll_build(&rk->a, &again) || again.n != rk->s.n ||
	    again.tmp_count != rk->s.tmp_count ||
	    memcmp(again.x, rk->s.x, rk->s.n * sizeof(*rk->s.x)))
		return csim_fail(sim, "not deterministic", r, -1, 0);
	if (rk->s.n) {
		again.max = rk->s.n - 1;
		if (collx_coll_build(&rk->a, &again) != -ENOSPC)
			return csim_fail(sim, "short room is not -ENOSPC", r,
					 -1, 0);
	}
	if (cfg->mutate)
		cfg->mutate(&rk->s, r, cfg->priv);
	rk->size[COLLX_BUF_TMP] = rk->s.tmp_count;
	sim->res->xfers += rk->s.n;
	if (sim->res->max_xfers < rk->s.n)
		sim->res->max_xfers = rk->s.n;
	if (sim->res->tmp < rk->s.tmp_count)
		sim->res->tmp = rk->s.tmp_count;
	return true;
}

static inline bool csim_range_ok(struct csim *sim, u32 r, u32 j, u8 buf,
				 u64 off, u64 count)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_sched *s = &rk->s;
	u64 decl = buf == COLLX_BUF_IN ? s->in_count :
		   buf == COLLX_BUF_OUT ? s->out_count : s->tmp_count;

	if (buf < COLLX_BUF_IN || buf > COLLX_BUF_TMP)
		return csim_fail(sim, "bad buffer", r, j, 0);
	if (buf == COLLX_BUF_IN && rk->a.inplace &&
	    rk->a.coll != COLLX_COLL_REDUCE_SCATTER)
		return csim_fail(sim, "names the input in place", r, j, 0);
	if (off > decl || count > decl - off)
		return csim_fail(sim, "outside in/out/tmp_count", r, j, off);
	if (off + count > rk->size[buf])
		return csim_fail(sim, "outside the collective's buffer", r, j,
				 off);
	return true;
}

/* Does a copy from the input overlap its destination through the alias? */
static inline bool csim_copy_aliased(const struct csim_rank *rk,
				     const struct collx_xfer *x)
{
	u64 lo = x->src_off, hi = x->src_off + x->count;

	if (x->src != COLLX_BUF_IN || x->dst != COLLX_BUF_OUT ||
	    !rk->alias_len)
		return false;
	if (lo < rk->alias_lo)
		lo = rk->alias_lo;
	if (hi > rk->alias_lo + rk->alias_len)
		hi = rk->alias_lo + rk->alias_len;
	if (lo >= hi)
		return false;
	lo -= rk->alias_lo;
	hi -= rk->alias_lo;
	return lo < x->dst_off + x->count && x->dst_off < hi;
}

static inline bool csim_check_xfer(struct csim *sim, u32 r, u32 j)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_xfer *x = &rk->s.x[j], *d;
	const struct collx_coll_args *a = &rk->a;
	bool rd = false, wr = false;
	u32 k;

	if (x->phase < COLLX_PHASE_REDUCE_SCATTER ||
	    x->phase >= COLLX_PHASE_COUNT)
		return csim_fail(sim, "bad phase", r, j, x->phase);
	if (x->ndeps > COLLX_XF_MAX_DEPS || (x->dep_sliced >> x->ndeps))
		return csim_fail(sim, "bad dependency count or bits", r, j, 0);
	for (k = 0; k < x->ndeps; k++) {
		if (x->deps[k] >= j)
			return csim_fail(sim, "depends on a later transfer", r,
					 j, x->deps[k]);
		d = &rk->s.x[x->deps[k]];
		if ((x->dep_sliced & BIT(k)) && d->count != x->count)
			return csim_fail(sim, "slice-wise on another count", r,
					 j, x->deps[k]);
	}
	if (!x->count && (!csim_token_ok(a->coll) ||
			  (x->kind != COLLX_XF_SEND &&
			   x->kind != COLLX_XF_RECV)))
		return csim_fail(sim, "an empty transfer not omitted", r, j, 0);
	if (x->count && a->coll == COLLX_COLL_BARRIER)
		return csim_fail(sim, "a barrier moving data", r, j, 0);
	switch (x->kind) {
	case COLLX_XF_SEND:
		rd = x->count;
		if (x->dst || (!x->count && x->src))
			return csim_fail(sim, "bad send buffers", r, j, 0);
		break;
	case COLLX_XF_RECV_REDUCE:
		if (!csim_reducing(a->coll))
			return csim_fail(sim, "reduces in a collective without",
					 r, j, 0);
		fallthrough;
	case COLLX_XF_RECV:
		wr = x->count;
		if (x->src || (!x->count && x->dst))
			return csim_fail(sim, "bad recv buffers", r, j, 0);
		break;
	case COLLX_XF_COPY:
		rd = true;
		wr = true;
		if (x->src == x->dst && x->src_off < x->dst_off + x->count &&
		    x->dst_off < x->src_off + x->count)
			return csim_fail(sim, "copy onto itself", r, j, 0);
		if (csim_copy_aliased(rk, x))
			return csim_fail(sim, "copy onto aliased itself", r,
					 j, 0);
		break;
	case COLLX_XF_SCALE:
		wr = true;
		if (x->src || a->redop != COLLX_OP_AVG ||
		    !csim_reducing(a->coll))
			return csim_fail(sim, "scale outside an avg", r, j, 0);
		break;
	default:
		return csim_fail(sim, "bad kind", r, j, x->kind);
	}
	if (x->kind != COLLX_XF_COPY && x->kind != COLLX_XF_SCALE &&
	    (x->peer >= sim->n || x->peer == r))
		return csim_fail(sim, "bad peer", r, j, x->peer);
	if (rd && !csim_range_ok(sim, r, j, x->src, x->src_off, x->count))
		return false;
	if (wr && x->dst == COLLX_BUF_IN)
		return csim_fail(sim, "writes the input", r, j, 0);
	if (wr && !csim_range_ok(sim, r, j, x->dst, x->dst_off, x->count))
		return false;
	return true;
}

static inline bool csim_check_sched(struct csim *sim, u32 r)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_sched *s = &rk->s;
	u32 j, c = rk->a.coll;

	if (s->in_count > rk->size[COLLX_BUF_IN] ||
	    s->out_count > rk->size[COLLX_BUF_OUT])
		return csim_fail(sim, "in/out_count beyond the buffers", r, -1,
				 0);
	if (s->tmp_count && c != COLLX_COLL_REDUCE &&
	    c != COLLX_COLL_REDUCE_SCATTER)
		return csim_fail(sim, "scratch where it may not be used", r,
				 -1, s->tmp_count);
	for (j = 0; j < s->n; j++)
		if (!csim_check_xfer(sim, r, j))
			return false;
	return true;
}

/* Queues per peer, slices, snapshots, reverse dependencies, buffers. */
static inline bool csim_layout(struct csim *sim, u32 r)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_sched *s = &rk->s;
	u32 n = sim->n, T = s->n, j, k, p, b;
	u64 nsnap = 0, e;

	rk->sbase = csim_alloc(sim, (T + 1) * sizeof(u64));
	rk->ndone = csim_alloc(sim, (T + 1) * sizeof(u64));
	rk->snap = csim_alloc(sim, (T + 1) * sizeof(u64));
	rk->know = csim_alloc(sim, (T + 1) * sizeof(u64));
	rk->rdep_start = csim_alloc(sim, (T + 2) * sizeof(u32));
	rk->rdep = csim_alloc(sim, (T * COLLX_XF_MAX_DEPS + 1) * sizeof(u32));
	rk->sq_start = csim_alloc(sim, (n + 1) * sizeof(u32));
	rk->rq_start = csim_alloc(sim, (n + 1) * sizeof(u32));
	rk->sq_x = csim_alloc(sim, (T + 1) * sizeof(u32));
	rk->rq_x = csim_alloc(sim, (T + 1) * sizeof(u32));
	rk->xpos = csim_alloc(sim, (T + 1) * sizeof(u32));
	rk->sq_pos = csim_alloc(sim, n * sizeof(u32));
	rk->rq_pos = csim_alloc(sim, n * sizeof(u32));
	rk->sq_sl = csim_alloc(sim, n * sizeof(u64));
	rk->rq_sl = csim_alloc(sim, n * sizeof(u64));
	rk->sq_inpool = csim_alloc(sim, n);
	rk->rq_inpool = csim_alloc(sim, n);
	if (sim->res->why)
		return false;
	for (j = 0; j < T; j++) {
		const struct collx_xfer *x = &s->x[j];

		rk->sbase[j + 1] = rk->sbase[j] + csim_nsl(x, sim->S);
		rk->snap[j] = nsnap;
		if (x->kind == COLLX_XF_SEND) {
			nsnap += x->count;
			rk->sq_start[x->peer + 1]++;
		} else if (x->kind == COLLX_XF_RECV ||
			   x->kind == COLLX_XF_RECV_REDUCE) {
			rk->rq_start[x->peer + 1]++;
		}
		for (k = 0; k < x->ndeps; k++)
			rk->rdep_start[x->deps[k] + 1]++;
	}
	for (p = 0; p < n; p++) {
		rk->sq_start[p + 1] += rk->sq_start[p];
		rk->rq_start[p + 1] += rk->rq_start[p];
	}
	for (j = 0; j < T; j++)
		rk->rdep_start[j + 1] += rk->rdep_start[j];
	/* fill, using the heads as cursors; reset them after */
	for (j = 0; j < T; j++) {
		const struct collx_xfer *x = &s->x[j];

		if (x->kind == COLLX_XF_SEND) {
			rk->xpos[j] = rk->sq_pos[x->peer]++;
			rk->sq_x[rk->sq_start[x->peer] + rk->xpos[j]] = j;
		} else if (x->kind == COLLX_XF_RECV ||
			   x->kind == COLLX_XF_RECV_REDUCE) {
			rk->xpos[j] = rk->rq_pos[x->peer]++;
			rk->rq_x[rk->rq_start[x->peer] + rk->xpos[j]] = j;
		}
		for (k = 0; k < x->ndeps; k++)
			rk->rdep[rk->rdep_start[x->deps[k]] +
				 rk->ndone[x->deps[k]]++] = j * 4 + k;
	}
	memset(rk->sq_pos, 0, n * sizeof(u32));
	memset(rk->rq_pos, 0, n * sizeof(u32));
	memset(rk->ndone, 0, (T + 1) * sizeof(u64));
	rk->st = csim_alloc(sim, rk->sbase[T] + 1);
	rk->snapv = csim_alloc(sim, (nsnap + 1) * sizeof(struct csim_val));
	for (b = COLLX_BUF_IN; b <= COLLX_BUF_TMP; b++) {
		rk->buf[b] = csim_alloc(sim, (rk->size[b] + 1) *
					sizeof(struct csim_val));
		rk->win[b] = csim_alloc(sim, (rk->size[b] + 1) *
					sizeof(struct csim_win));
	}
	if (sim->res->why)
		return false;
	for (e = 0; e < rk->size[COLLX_BUF_IN]; e++) {
		rk->buf[COLLX_BUF_IN][e].mask = csim_rbit(r);
		rk->buf[COLLX_BUF_IN][e].idx = (u32)e;
		rk->buf[COLLX_BUF_IN][e].def = 1;
	}
	for (e = 0; e < rk->size[COLLX_BUF_OUT]; e++)
		csim_out_init(&rk->a, r, e, &rk->buf[COLLX_BUF_OUT][e]);
	return true;
}

/* The k-th send from @a to @b and the k-th receive of @b from @a. */
static inline bool csim_match_pair(struct csim *sim, u32 a, u32 b)
{
	const struct csim_rank *ra = &sim->rk[a], *rb = &sim->rk[b];
	const u32 *xs = ra->sq_x + ra->sq_start[b];
	const u32 *xr = rb->rq_x + rb->rq_start[a];
	u32 ns = ra->sq_start[b + 1] - ra->sq_start[b];
	u32 nr = rb->rq_start[a + 1] - rb->rq_start[a];
	u32 i;

	for (i = 0; i < ns && i < nr; i++)
		if (ra->s.x[xs[i]].count != rb->s.x[xr[i]].count)
			return csim_fail(sim, "count mismatch", a, xs[i],
					 rb->s.x[xr[i]].count);
	if (ns > nr)
		return csim_fail(sim, "a send nobody receives", a, xs[nr], b);
	if (nr > ns)
		return csim_fail(sim, "a receive nobody sends", b, xr[ns], a);
	return true;
}

static inline bool csim_match(struct csim *sim)
{
	u32 a, b;

	for (a = 0; a < sim->n; a++)
		for (b = 0; b < sim->n; b++)
			if (!csim_match_pair(sim, a, b))
				return false;
	return true;
}

/* ---- static hazards ---- */

struct csim_hzctx {
	struct csim *sim;
	u32 r;
	u32 W;
	u64 *whole;
	u64 *sliced;
	struct csim_hz *hz[4];
};

static inline bool csim_bit(const u64 *set, u32 i)
{
	return set[i / 64] >> (i % 64) & 1;
}

/* Index within @x of its element that is element @e of @buf. */
static inline u64 csim_pos(const struct csim_rank *rk,
			   const struct collx_xfer *x, u8 buf, u64 e)
{
	u64 ea = e + rk->alias_lo;

	if (x->src == buf && e >= x->src_off && e - x->src_off < x->count)
		return e - x->src_off;
	if (x->src == COLLX_BUF_IN && buf == COLLX_BUF_OUT && rk->alias_len &&
	    ea >= x->src_off && ea - x->src_off < x->count)
		return ea - x->src_off;
	return e - x->dst_off;
}

/* Is transfer @i's access to element @e over before @j's may start? */
static inline bool csim_before(const struct csim_hzctx *h, u32 i, u32 j,
			       u8 buf, u64 e)
{
	const struct csim_rank *rk = &h->sim->rk[h->r];
	u64 S = h->sim->S;

	if (csim_bit(h->whole + (u64)j * h->W, i))
		return true;
	if (!csim_bit(h->sliced + (u64)j * h->W, i))
		return false;
	return csim_pos(rk, &rk->s.x[i], buf, e) / S ==
	       csim_pos(rk, &rk->s.x[j], buf, e) / S;
}

static inline bool csim_hz_read(struct csim_hzctx *h, u32 j, u8 buf, u64 e)
{
	struct csim_hz *z = &h->hz[buf][e];
	u32 i, k;

	if (z->lastw >= 0 && !csim_before(h, (u32)z->lastw, j, buf, e))
		return csim_fail(h->sim, "a read races the write it needs",
				 h->r, j, e);
	if (!z->def)
		return csim_fail(h->sim, "reads undefined data", h->r, j, e);
	/* keep only readers not ordered before this one */
	for (i = 0, k = 0; i < z->nrd; i++)
		if (z->rd[i] != (s32)j &&
		    !csim_before(h, (u32)z->rd[i], j, buf, e))
			z->rd[k++] = z->rd[i];
	if (k == CSIM_READERS)
		return csim_fail(h->sim, "sim: too many concurrent readers",
				 h->r, j, e);
	z->rd[k++] = (s32)j;
	z->nrd = (u8)k;
	return true;
}

static inline bool csim_hz_write(struct csim_hzctx *h, u32 j, u8 buf, u64 e)
{
	struct csim_rank *rk = &h->sim->rk[h->r];
	struct csim_hz *z = &h->hz[buf][e];
	u32 i;

	if (buf == COLLX_BUF_OUT && !csim_writable(&rk->a, h->r, e))
		return csim_fail(h->sim, "writes what it must leave alone",
				 h->r, j, e);
	for (i = 0; i < z->nrd; i++)
		if (z->rd[i] != (s32)j &&
		    !csim_before(h, (u32)z->rd[i], j, buf, e))
			return csim_fail(h->sim, "a write races a read", h->r,
					 j, e);
	if (z->lastw >= 0 && z->lastw != (s32)j &&
	    !csim_before(h, (u32)z->lastw, j, buf, e))
		return csim_fail(h->sim, "a write races a write", h->r, j, e);
	z->lastw = (s32)j;
	z->nrd = 0;
	z->def = 1;
	return true;
}

/*
 * A send of exactly the range that a receive, receive-reduce or scale it
 * depends on wrote last forwards it: slice i may leave once slice i is
 * there, so it must not wait for all of it.
 */
static inline bool csim_pipelined(struct csim_hzctx *h, u32 j)
{
	const struct csim_rank *rk = &h->sim->rk[h->r];
	const struct collx_xfer *x = &rk->s.x[j], *w;
	u8 buf = x->src;
	u64 e = x->src_off;
	s32 lw;
	u32 k;

	if (x->kind != COLLX_XF_SEND || !x->count)
		return true;
	csim_map(rk, &buf, &e);
	if (buf == COLLX_BUF_IN)
		return true;
	lw = h->hz[buf][e].lastw;
	if (lw < 0)
		return true;
	w = &rk->s.x[lw];
	if ((w->kind != COLLX_XF_RECV && w->kind != COLLX_XF_RECV_REDUCE &&
	     w->kind != COLLX_XF_SCALE) || w->count != x->count ||
	    w->dst != buf || w->dst_off != e)
		return true;
	for (k = 0; k < x->ndeps; k++)
		if (x->deps[k] == (u32)lw && !(x->dep_sliced & BIT(k)))
			return csim_fail(h->sim, "forwards without pipelining",
					 h->r, j, e);
	return true;
}

static inline bool csim_hazards(struct csim *sim, u32 r, u64 *whole,
				u64 *sliced, struct csim_hz *hzo,
				struct csim_hz *hzt)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_sched *s = &rk->s;
	struct csim_hzctx h = { .sim = sim, .r = r };
	u32 j, k, w, d;
	u64 e, *wj, *sj;
	struct csim_val v;

	h.W = (s->n + 63) / 64;
	h.whole = whole;
	h.sliced = sliced;
	h.hz[COLLX_BUF_OUT] = hzo;
	h.hz[COLLX_BUF_TMP] = hzt;
	memset(whole, 0, (u64)s->n * h.W * sizeof(u64));
	memset(sliced, 0, (u64)s->n * h.W * sizeof(u64));
	/* transitive dependencies: whole, or slice i on slice i */
	for (j = 0; j < s->n; j++) {
		const struct collx_xfer *x = &s->x[j];

		wj = whole + (u64)j * h.W;
		sj = sliced + (u64)j * h.W;
		for (k = 0; k < x->ndeps; k++) {
			d = x->deps[k];
			for (w = 0; w < h.W; w++) {
				wj[w] |= whole[(u64)d * h.W + w];
				if (x->dep_sliced & BIT(k))
					sj[w] |= sliced[(u64)d * h.W + w];
				else
					wj[w] |= sliced[(u64)d * h.W + w];
			}
			if (x->dep_sliced & BIT(k))
				sj[d / 64] |= 1ULL << (d % 64);
			else
				wj[d / 64] |= 1ULL << (d % 64);
		}
	}
	for (e = 0; e < rk->size[COLLX_BUF_OUT]; e++) {
		csim_out_init(&rk->a, r, e, &v);
		hzo[e].lastw = -1;
		hzo[e].nrd = 0;
		hzo[e].def = v.def;
	}
	for (e = 0; e < rk->size[COLLX_BUF_TMP]; e++) {
		hzt[e].lastw = -1;
		hzt[e].nrd = 0;
		hzt[e].def = 0;
	}
	for (j = 0; j < s->n; j++) {
		const struct collx_xfer *x = &s->x[j];
		bool rd_src = x->kind == COLLX_XF_SEND ||
			      x->kind == COLLX_XF_COPY;

		if (!csim_pipelined(&h, j))
			return false;
		bool rd_dst = x->kind == COLLX_XF_RECV_REDUCE ||
			      x->kind == COLLX_XF_SCALE;

		for (e = 0; e < x->count; e++) {
			u8 sb = x->src;
			u64 se = x->src_off + e;

			csim_map(rk, &sb, &se);
			if (rd_src && sb != COLLX_BUF_IN &&
			    !csim_hz_read(&h, j, sb, se))
				return false;
			if (rd_dst && !csim_hz_read(&h, j, x->dst,
						    x->dst_off + e))
				return false;
			if (x->kind != COLLX_XF_SEND &&
			    !csim_hz_write(&h, j, x->dst, x->dst_off + e))
				return false;
		}
	}
	return true;
}

/* ---- the run ---- */

static inline void csim_push(struct csim *sim, u32 type, u32 r, u32 x,
			     u64 sl)
{
	struct csim_act *act;

	if (sim->npool >= sim->cap) {
		csim_fail(sim, "sim: action pool full", (s32)r, (s32)x, sl);
		return;
	}
	act = &sim->pool[sim->npool++];
	act->type = type;
	act->rank = r;
	act->x = x;
	act->sl = sl;
}

static inline void csim_slice(struct csim *sim, const struct collx_xfer *x,
			      u64 sl, u64 *lo, u64 *len)
{
	*lo = sl * sim->S;
	*len = x->count - *lo < sim->S ? x->count - *lo : sim->S;
	if (!x->count)
		*len = 0;
}

/* Open (@open) or close a slice's windows on what it reads and writes. */
static inline void csim_window(struct csim *sim, u32 r, u32 j, u64 sl,
			       bool open)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_xfer *x = &rk->s.x[j];
	bool rd = x->kind == COLLX_XF_SEND || x->kind == COLLX_XF_COPY;
	bool wr = x->kind != COLLX_XF_SEND;
	struct csim_win *w;
	u64 lo, len, e;

	csim_slice(sim, x, sl, &lo, &len);
	for (e = lo; e < lo + len; e++) {
		u8 sb = x->src;
		u64 se = x->src_off + e;

		csim_map(rk, &sb, &se);
		if (rd && sb != COLLX_BUF_IN) {
			w = &rk->win[sb][se];
			if (open && w->writers)
				csim_fail(sim, "a read runs while a write may",
					  (s32)r, (s32)j, se);
			w->readers += open ? 1 : -1;
		}
		if (wr) {
			w = &rk->win[x->dst][x->dst_off + e];
			if (open && (w->writers || w->readers))
				csim_fail(sim, "a write runs while others may",
					  (s32)r, (s32)j, x->dst_off + e);
			w->writers += open ? 1 : -1;
		}
	}
}

/* The sender's transfer matched with receive @j of @r. */
static inline u32 csim_sender_x(struct csim *sim, u32 r, u32 j)
{
	struct csim_rank *rk = &sim->rk[r];
	struct csim_rank *rs = &sim->rk[rk->s.x[j].peer];

	return rs->sq_x[rs->sq_start[r] + rk->xpos[j]];
}

/* Has slice @sl of receive @j of @r been sent? */
static inline bool csim_sent(struct csim *sim, u32 r, u32 j, u64 sl)
{
	struct csim_rank *rk = &sim->rk[r];
	u32 p = rk->s.x[j].peer;
	struct csim_rank *rs = &sim->rk[p];
	u32 pos = rk->xpos[j];

	return rs->sq_pos[r] > pos ||
	       (rs->sq_pos[r] == pos && rs->sq_sl[r] > sl);
}

/* Write slice @sl of receive @j of @r from the sender's snapshot. */
static inline void csim_place(struct csim *sim, u32 r, u32 j, u64 sl)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_xfer *x = &rk->s.x[j];
	struct csim_rank *rs = &sim->rk[x->peer];
	u32 js = csim_sender_x(sim, r, j);
	u64 lo, len, e;

	csim_slice(sim, x, sl, &lo, &len);
	for (e = lo; e < lo + len; e++)
		rk->buf[x->dst][x->dst_off + e] = rs->snapv[rs->snap[js] + e];
	rk->st[rk->sbase[j] + sl] |= CSIM_WRITTEN;
}

static inline bool csim_ready(const struct csim_rank *rk, u32 j, u64 sl)
{
	return (rk->st[rk->sbase[j] + sl] & (CSIM_READY | CSIM_DONE)) ==
	       CSIM_READY;
}

static inline void csim_sendq(struct csim *sim, u32 r, u32 p)
{
	struct csim_rank *rk = &sim->rk[r];
	u32 pos = rk->sq_start[p] + rk->sq_pos[p];

	if (rk->sq_inpool[p] || pos >= rk->sq_start[p + 1] ||
	    !csim_ready(rk, rk->sq_x[pos], rk->sq_sl[p]) ||
	    sim->chan_sent[r * sim->n + p] - sim->chan_cons[r * sim->n + p] >=
	    sim->cfg->credits)
		return;
	rk->sq_inpool[p] = 1;
	csim_push(sim, CSIM_SENDQ, r, p, 0);
}

static inline void csim_recvq(struct csim *sim, u32 r, u32 p)
{
	struct csim_rank *rk = &sim->rk[r];
	u32 pos = rk->rq_start[p] + rk->rq_pos[p];

	if (rk->rq_inpool[p] || pos >= rk->rq_start[p + 1] ||
	    !csim_ready(rk, rk->rq_x[pos], rk->rq_sl[p]) ||
	    sim->chan_sent[p * sim->n + r] <= sim->chan_cons[p * sim->n + r])
		return;
	rk->rq_inpool[p] = 1;
	csim_push(sim, CSIM_RECVQ, r, p, 0);
}

static inline void csim_try_ready(struct csim *sim, u32 r, u32 j, u64 sl)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_xfer *x = &rk->s.x[j];
	u8 *st = &rk->st[rk->sbase[j] + sl];
	u32 k, d;

	if (*st)
		return;
	for (k = 0; k < x->ndeps; k++) {
		d = x->deps[k];
		if (x->dep_sliced & BIT(k)) {
			if (!(rk->st[rk->sbase[d] + sl] & CSIM_DONE))
				return;
		} else if (rk->ndone[d] < rk->sbase[d + 1] - rk->sbase[d]) {
			return;
		}
	}
	*st = CSIM_READY;
	csim_window(sim, r, j, sl, true);
	switch (x->kind) {
	case COLLX_XF_COPY:
	case COLLX_XF_SCALE:
		csim_push(sim, CSIM_LOCAL, r, j, sl);
		break;
	case COLLX_XF_SEND:
		csim_sendq(sim, r, x->peer);
		break;
	case COLLX_XF_RECV:
		/* direct placement: as early as the data exists */
		if (csim_sent(sim, r, j, sl))
			csim_place(sim, r, j, sl);
		fallthrough;
	default:
		csim_recvq(sim, r, x->peer);
		break;
	}
}

static inline void csim_complete(struct csim *sim, u32 r, u32 j, u64 sl)
{
	struct csim_rank *rk = &sim->rk[r];
	u64 nsl = rk->sbase[j + 1] - rk->sbase[j], s2;
	u32 i, jj, k;

	rk->st[rk->sbase[j] + sl] |= CSIM_DONE;
	rk->ndone[j]++;
	csim_window(sim, r, j, sl, false);
	for (i = rk->rdep_start[j]; i < rk->rdep_start[j + 1]; i++) {
		jj = rk->rdep[i] / 4;
		k = rk->rdep[i] % 4;
		if (rk->s.x[jj].dep_sliced & BIT(k))
			csim_try_ready(sim, r, jj, sl);
		else if (rk->ndone[j] == nsl)
			for (s2 = 0; s2 < rk->sbase[jj + 1] - rk->sbase[jj];
			     s2++)
				csim_try_ready(sim, r, jj, s2);
	}
}

static inline void csim_know(struct csim_rank *rk, u32 r, u32 j)
{
	const struct collx_xfer *x = &rk->s.x[j];
	u32 k;

	rk->know[j] |= 1ULL << r;
	for (k = 0; k < x->ndeps; k++)
		rk->know[j] |= rk->know[x->deps[k]];
}

static inline void csim_do_local(struct csim *sim, u32 r, u32 j, u64 sl)
{
	struct csim_rank *rk = &sim->rk[r];
	const struct collx_xfer *x = &rk->s.x[j];
	u64 full = collx_sim_full(sim->n), lo, len, e;
	struct csim_val *v;

	csim_slice(sim, x, sl, &lo, &len);
	for (e = lo; e < lo + len; e++) {
		v = &rk->buf[x->dst][x->dst_off + e];
		if (x->kind == COLLX_XF_COPY) {
			*v = *csim_val_at(rk, x->src, x->src_off + e);
			if (!v->def)
				csim_fail(sim, "copies undefined data", (s32)r,
					  (s32)j, e);
		} else if (!v->def) {
			csim_fail(sim, "scales undefined data", (s32)r, (s32)j,
				  e);
		} else if (v->nscale) {
			csim_fail(sim, "scales twice", (s32)r, (s32)j, e);
		} else if (v->mask != full) {
			csim_fail(sim, "scales an incomplete sum", (s32)r,
				  (s32)j, e);
		} else {
			v->nscale = 1;
		}
	}
	csim_know(rk, r, j);
	csim_complete(sim, r, j, sl);
}

static inline void csim_do_send(struct csim *sim, u32 r, u32 p)
{
	struct csim_rank *rk = &sim->rk[r];
	u32 pos = rk->sq_pos[p], j = rk->sq_x[rk->sq_start[p] + pos];
	const struct collx_xfer *x = &rk->s.x[j];
	struct csim_rank *rr = &sim->rk[p];
	u64 sl = rk->sq_sl[p], lo, len, e;
	u32 jr;

	rk->sq_inpool[p] = 0;
	/* zero copy: the source is read as late as possible, now */
	csim_slice(sim, x, sl, &lo, &len);
	for (e = lo; e < lo + len; e++) {
		rk->snapv[rk->snap[j] + e] = *csim_val_at(rk, x->src,
							  x->src_off + e);
		if (!rk->snapv[rk->snap[j] + e].def)
			csim_fail(sim, "sends undefined data", (s32)r, (s32)j,
				  e);
	}
	csim_know(rk, r, j);
	if (++rk->sq_sl[p] == csim_nsl(x, sim->S)) {
		rk->sq_sl[p] = 0;
		rk->sq_pos[p]++;
	}
	sim->chan_sent[r * sim->n + p]++;
	csim_complete(sim, r, j, sl);
	csim_sendq(sim, r, p);
	/* the receiver: a slice waiting for this data is placed now */
	jr = rr->rq_x[rr->rq_start[r] + pos];
	if (rr->s.x[jr].kind == COLLX_XF_RECV && csim_ready(rr, jr, sl) &&
	    !(rr->st[rr->sbase[jr] + sl] & CSIM_WRITTEN))
		csim_place(sim, p, jr, sl);
	csim_recvq(sim, p, r);
}

static inline void csim_do_recv(struct csim *sim, u32 r, u32 p)
{
	struct csim_rank *rk = &sim->rk[r];
	u32 j = rk->rq_x[rk->rq_start[p] + rk->rq_pos[p]];
	const struct collx_xfer *x = &rk->s.x[j];
	struct csim_rank *rs = &sim->rk[p];
	u32 js = csim_sender_x(sim, r, j);
	u64 sl = rk->rq_sl[p], lo, len, e;
	struct csim_val *d;
	const struct csim_val *v;

	rk->rq_inpool[p] = 0;
	csim_slice(sim, x, sl, &lo, &len);
	if (x->kind == COLLX_XF_RECV) {
		if (!(rk->st[rk->sbase[j] + sl] & CSIM_WRITTEN))
			csim_place(sim, r, j, sl);
	} else {
		for (e = lo; e < lo + len; e++) {
			d = &rk->buf[x->dst][x->dst_off + e];
			v = &rs->snapv[rs->snap[js] + e];
			if (!d->def || !v->def)
				csim_fail(sim, "reduces undefined data",
					  (s32)r, (s32)j, e);
			else if (d->idx != v->idx)
				csim_fail(sim, "reduces different elements",
					  (s32)r, (s32)j, e);
			else if (d->mask & v->mask)
				csim_fail(sim, "reduces a contribution twice",
					  (s32)r, (s32)j, e);
			else if (d->nscale || v->nscale)
				csim_fail(sim, "reduces scaled data", (s32)r,
					  (s32)j, e);
			d->mask |= v->mask;
		}
	}
	rk->know[j] |= rs->know[js];
	if (++rk->rq_sl[p] == csim_nsl(x, sim->S)) {
		rk->rq_sl[p] = 0;
		rk->rq_pos[p]++;
	}
	sim->chan_cons[p * sim->n + r]++;
	csim_complete(sim, r, j, sl);
	csim_recvq(sim, r, p);
	/* a slot is free again */
	csim_sendq(sim, p, r);
}

static inline bool csim_run_all(struct csim *sim)
{
	struct csim_act act;
	u64 i, sl;
	u32 r, j;

	for (r = 0; r < sim->n; r++)
		for (j = 0; j < sim->rk[r].s.n; j++)
			for (sl = 0; sl < sim->rk[r].sbase[j + 1] -
				     sim->rk[r].sbase[j]; sl++)
				csim_try_ready(sim, r, j, sl);
	while (sim->npool && !sim->res->why) {
		i = csim_rand(sim) % sim->npool;
		act = sim->pool[i];
		sim->pool[i] = sim->pool[--sim->npool];
		sim->res->actions++;
		if (act.type == CSIM_LOCAL)
			csim_do_local(sim, act.rank, act.x, act.sl);
		else if (act.type == CSIM_SENDQ)
			csim_do_send(sim, act.rank, act.x);
		else
			csim_do_recv(sim, act.rank, act.x);
	}
	if (sim->res->why)
		return false;
	for (r = 0; r < sim->n; r++)
		for (j = 0; j < sim->rk[r].s.n; j++)
			if (sim->rk[r].ndone[j] < sim->rk[r].sbase[j + 1] -
			    sim->rk[r].sbase[j])
				return csim_fail(sim, "deadlock", (s32)r,
						 (s32)j, sim->rk[r].ndone[j]);
	return true;
}

/* Element @e of @r's output against the collective's definition. */
static inline bool csim_check_out(struct csim *sim, u32 r, u64 e)
{
	const struct csim_val *v = &sim->rk[r].buf[COLLX_BUF_OUT][e];
	struct csim_val want;
	const char *why = NULL;

	csim_out_want(sim->cfg, r, e, &want);
	if (!v->def)
		why = "output element not written";
	else if (v->idx != want.idx || (v->mask & ~want.mask))
		why = "output holds the wrong data";
	else if (v->mask != want.mask)
		why = "output misses contributions";
	else if (v->nscale != want.nscale)
		why = want.nscale ? "avg not scaled" :
				    "scaled though not an avg";
	return why ? csim_fail(sim, why, (s32)r, -1, e) : true;
}

static inline bool csim_results(struct csim *sim)
{
	u64 full = collx_sim_full(sim->n), e, know;
	struct csim_rank *rk;
	u32 r, j;

	for (r = 0; r < sim->n; r++) {
		rk = &sim->rk[r];
		for (e = 0; e < rk->size[COLLX_BUF_OUT]; e++)
			if (!csim_check_out(sim, r, e))
				return false;
		if (sim->cfg->a.coll != COLLX_COLL_BARRIER)
			continue;
		for (know = 1ULL << r, j = 0; j < rk->s.n; j++)
			know |= rk->know[j];
		if (know != full)
			return csim_fail(sim, "barrier ends before all arrived",
					 (s32)r, -1, know);
	}
	return true;
}

/**
 * collx_csim_run() - simulate one collective on every rank
 * @cfg: the collective and the executor's parameters
 * @mem: scratch memory
 * @size: its bytes
 * @res: out, what was found
 *
 * Context: any; no allocation.
 * Return: @res->why: NULL if every check passed.
 */
static inline const char *collx_csim_run(const struct collx_csim_cfg *cfg,
					 void *mem, size_t size,
					 struct collx_csim_res *res)
{
	struct csim sim = { .cfg = cfg, .res = res, .mem = mem, .size = size };
	u32 n = cfg->a.nranks, r, maxT = 0;
	u64 maxo = 0, maxt = 0, slices = 0, W;
	struct csim_hz *hzo, *hzt;
	u64 *whole, *sliced;

	memset(res, 0, sizeof(*res));
	res->rank = -1;
	res->xfer = -1;
	if (!n || n > COLLX_SIM_MAX_RANKS || !cfg->slice || !cfg->credits) {
		csim_fail(&sim, "sim: bad configuration", -1, -1, 0);
		return res->why;
	}
	sim.n = n;
	sim.S = cfg->slice;
	sim.rng = cfg->seed | 1;
	sim.rk = csim_alloc(&sim, n * sizeof(*sim.rk));
	sim.chan_sent = csim_alloc(&sim, (u64)n * n * sizeof(u64));
	sim.chan_cons = csim_alloc(&sim, (u64)n * n * sizeof(u64));
	if (res->why)
		return res->why;
	for (r = 0; r < n && !res->why; r++) {
		csim_sizes(&cfg->a, cfg->sender, r, sim.rk[r].size);
		csim_set_alias(&cfg->a, r, &sim.rk[r]);
		if (csim_build(&sim, r) && csim_check_sched(&sim, r))
			csim_layout(&sim, r);
	}
	if (res->why || !csim_match(&sim))
		return res->why;
	for (r = 0; r < n; r++) {
		if (sim.rk[r].s.n > maxT)
			maxT = sim.rk[r].s.n;
		if (sim.rk[r].size[COLLX_BUF_OUT] > maxo)
			maxo = sim.rk[r].size[COLLX_BUF_OUT];
		if (sim.rk[r].size[COLLX_BUF_TMP] > maxt)
			maxt = sim.rk[r].size[COLLX_BUF_TMP];
		slices += sim.rk[r].sbase[sim.rk[r].s.n];
	}
	/* the static checks, one rank at a time in shared scratch */
	W = (maxT + 63) / 64;
	whole = csim_alloc(&sim, (maxT * W + 1) * sizeof(u64));
	sliced = csim_alloc(&sim, (maxT * W + 1) * sizeof(u64));
	hzo = csim_alloc(&sim, (maxo + 1) * sizeof(*hzo));
	hzt = csim_alloc(&sim, (maxt + 1) * sizeof(*hzt));
	for (r = 0; r < n && !res->why && !cfg->dynamic_only; r++)
		csim_hazards(&sim, r, whole, sliced, hzo, hzt);
	if (res->why)
		return res->why;
	sim.cap = slices + 2ULL * n * n;
	sim.pool = csim_alloc(&sim, sim.cap * sizeof(*sim.pool));
	if (!res->why && csim_run_all(&sim))
		csim_results(&sim);
	return res->why;
}

/**
 * collx_csim_check_rank() - the checks of one rank's schedule alone
 * @cfg: the collective (@cfg->a.nranks up to COLLX_MAX_RANKS)
 * @rank: the rank to build
 * @mem: scratch memory
 * @size: its bytes
 * @res: out, what was found
 *
 * The build API, each transfer on its own and the static hazards, for
 * rank counts beyond what collx_csim_run() can simulate.
 *
 * Context: any; no allocation.
 * Return: @res->why: NULL if every check passed.
 */
static inline const char *
collx_csim_check_rank(const struct collx_csim_cfg *cfg, u32 rank, void *mem,
		      size_t size, struct collx_csim_res *res)
{
	struct csim sim = { .cfg = cfg, .res = res, .mem = mem, .size = size };
	u32 n = cfg->a.nranks;
	struct csim_rank *rk;
	u64 W, T, *whole, *sliced;
	struct csim_hz *hzo, *hzt;

	memset(res, 0, sizeof(*res));
	res->rank = -1;
	res->xfer = -1;
	if (!n || n > COLLX_MAX_RANKS || rank >= n || !cfg->slice) {
		csim_fail(&sim, "sim: bad configuration", -1, -1, 0);
		return res->why;
	}
	sim.n = n;
	sim.S = cfg->slice;
	sim.rk = csim_alloc(&sim, n * sizeof(*sim.rk));
	if (!sim.rk)
		return res->why;
	rk = &sim.rk[rank];
	csim_sizes(&cfg->a, cfg->sender, rank, rk->size);
	csim_set_alias(&cfg->a, rank, rk);
	if (!csim_build(&sim, rank) || !csim_check_sched(&sim, rank) ||
	    !csim_layout(&sim, rank))
		return res->why;
	T = rk->s.n;
	W = (T + 63) / 64;
	whole = csim_alloc(&sim, (T * W + 1) * sizeof(u64));
	sliced = csim_alloc(&sim, (T * W + 1) * sizeof(u64));
	hzo = csim_alloc(&sim, (rk->size[COLLX_BUF_OUT] + 1) * sizeof(*hzo));
	hzt = csim_alloc(&sim, (rk->size[COLLX_BUF_TMP] + 1) * sizeof(*hzt));
	if (!res->why)
		csim_hazards(&sim, rank, whole, sliced, hzo, hzt);
	return res->why;
}

/* ---- broken schedules: the simulator must catch each ---- */

enum collx_csim_mut_kind {
	COLLX_MUT_NODEPS,	/* drop the dependencies of one transfer */
	COLLX_MUT_COUNT,	/* one element less in one send */
	COLLX_MUT_DROP,		/* delete one transfer, keeping its order */
	COLLX_MUT_SCALE2,	/* a second scale of what was scaled */
	COLLX_MUT_RR,		/* a receive made a receive-reduce */
	COLLX_MUT_RECV,		/* a receive-reduce made a receive */
	COLLX_MUT_SWAP,		/* first two transfers swapped (a cycle) */
	COLLX_MUT_DST,		/* a receive into another block */
	COLLX_MUT_SRC,		/* a copy from another block */
	COLLX_MUT_SLICED,	/* a whole dependency made slice-wise */
	COLLX_MUT_WHOLE,	/* slice-wise dependencies made whole */
};

/**
 * struct collx_csim_mut - a schedule broken on purpose
 * @name: what it breaks
 * @coll: the collective
 * @algo: its algorithm
 * @nranks: ranks
 * @count: elements
 * @inplace: in place
 * @redop: reduction
 * @kind: enum collx_csim_mut_kind
 * @rank: the rank whose schedule is broken
 * @xkind: the kind of transfer broken (the @nth of it)
 * @phase: and its phase
 * @nth: which one, 0-based
 * @block: COLLX_MUT_DST / COLLX_MUT_SRC: the block it is moved to
 * @why: what the simulator must say (a substring)
 */
struct collx_csim_mut {
	const char *name;
	u32 coll;
	u32 algo;
	u32 nranks;
	u64 count;
	bool inplace;
	u32 redop;
	u32 kind;
	u32 rank;
	u8 xkind;
	u8 phase;
	u32 nth;
	u32 block;
	const char *why;
};

static const struct collx_csim_mut collx_csim_muts[] = {
	{ "zero-copy send overwritten", COLLX_COLL_ALLREDUCE,
	  COLLX_ALGO_RING, 4, 37, true, COLLX_OP_SUM, COLLX_MUT_NODEPS, 1,
	  COLLX_XF_RECV, COLLX_PHASE_ALLGATHER, 1, 0, "a write races a read" },
	{ "send forwarded before it arrived", COLLX_COLL_BROADCAST,
	  COLLX_ALGO_RING, 5, 23, false, COLLX_OP_SUM, COLLX_MUT_NODEPS, 2,
	  COLLX_XF_SEND, COLLX_PHASE_BROADCAST, 0, 0,
	  "a read races the write it needs" },
	{ "two reductions into one place at once", COLLX_COLL_REDUCE,
	  COLLX_ALGO_TREE, 8, 40, false, COLLX_OP_SUM, COLLX_MUT_NODEPS, 4,
	  COLLX_XF_RECV_REDUCE, COLLX_PHASE_REDUCE, 1, 0,
	  "a read races the write it needs" },
	{ "count mismatch", COLLX_COLL_ALLGATHER, COLLX_ALGO_RD, 6, 5, false,
	  COLLX_OP_SUM, COLLX_MUT_COUNT, 4, COLLX_XF_SEND,
	  COLLX_PHASE_ALLGATHER, 0, 0, "count mismatch" },
	{ "avg not scaled", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING, 3, 10,
	  false, COLLX_OP_AVG, COLLX_MUT_DROP, 2, COLLX_XF_SCALE,
	  COLLX_PHASE_REDUCE_SCATTER, 0, 0, "avg not scaled" },
	{ "avg scaled twice", COLLX_COLL_ALLREDUCE, COLLX_ALGO_P2P, 1, 9,
	  false, COLLX_OP_AVG, COLLX_MUT_SCALE2, 0, COLLX_XF_SCALE,
	  COLLX_PHASE_P2P, 0, 0, "scales twice" },
	{ "contribution reduced twice", COLLX_COLL_ALLREDUCE,
	  COLLX_ALGO_RING, 4, 37, false, COLLX_OP_SUM, COLLX_MUT_RR, 3,
	  COLLX_XF_RECV, COLLX_PHASE_ALLGATHER, 1, 0,
	  "reduces a contribution twice" },
	{ "contribution lost", COLLX_COLL_ALLREDUCE, COLLX_ALGO_RING, 4, 37,
	  false, COLLX_OP_SUM, COLLX_MUT_RECV, 1, COLLX_XF_RECV_REDUCE,
	  COLLX_PHASE_REDUCE_SCATTER, 0, 0, "output misses contributions" },
	{ "barrier token waits in a cycle", COLLX_COLL_BARRIER,
	  COLLX_ALGO_RING, 2, 0, false, COLLX_OP_SUM, COLLX_MUT_SWAP, 0, 0, 0,
	  0, 0, "deadlock" },
	{ "barrier token leaves early", COLLX_COLL_BARRIER, COLLX_ALGO_RING,
	  3, 0, false, COLLX_OP_SUM, COLLX_MUT_NODEPS, 2, COLLX_XF_SEND,
	  COLLX_PHASE_REDUCE, 0, 0, "barrier ends before all arrived" },
	{ "in-place input overwritten", COLLX_COLL_ALLGATHER,
	  COLLX_ALGO_RING, 4, 6, true, COLLX_OP_SUM, COLLX_MUT_DST, 2,
	  COLLX_XF_RECV, COLLX_PHASE_ALLGATHER, 0, 2,
	  "writes what it must leave alone" },
	{ "block lands in the wrong place", COLLX_COLL_ALLTOALL,
	  COLLX_ALGO_PAIRWISE, 4, 3, false, COLLX_OP_SUM, COLLX_MUT_SRC, 0,
	  COLLX_XF_COPY, COLLX_PHASE_ALLTOALL, 0, 1,
	  "output holds the wrong data" },
	{ "scratch read before written", COLLX_COLL_REDUCE_SCATTER,
	  COLLX_ALGO_RING, 5, 4, false, COLLX_OP_SUM, COLLX_MUT_DROP, 3,
	  COLLX_XF_COPY, COLLX_PHASE_REDUCE_SCATTER, 0, 0,
	  "reads undefined data" },
	{ "forwarding not pipelined", COLLX_COLL_BROADCAST, COLLX_ALGO_RING,
	  5, 23, false, COLLX_OP_SUM, COLLX_MUT_WHOLE, 2, COLLX_XF_SEND,
	  COLLX_PHASE_BROADCAST, 0, 0, "forwards without pipelining" },
	{ "tree forwarding not pipelined", COLLX_COLL_ALLREDUCE,
	  COLLX_ALGO_TREE, 8, 40, true, COLLX_OP_AVG, COLLX_MUT_WHOLE, 4,
	  COLLX_XF_SEND, COLLX_PHASE_BROADCAST, 0, 0,
	  "forwards without pipelining" },
	{ "slice-wise on a whole dependency", COLLX_COLL_ALLGATHER,
	  COLLX_ALGO_RD, 6, 5, false, COLLX_OP_SUM, COLLX_MUT_SLICED, 1,
	  COLLX_XF_SEND, COLLX_PHASE_ALLGATHER, 0, 0,
	  "slice-wise on another count" },
};

/* Index of the @nth transfer of @kind in @phase, or -1. */
static inline s32 csim_mut_find(const struct collx_sched *s, u8 kind,
				u8 phase, u32 nth)
{
	u32 j;

	for (j = 0; j < s->n; j++)
		if (s->x[j].kind == kind && s->x[j].phase == phase && !nth--)
			return (s32)j;
	return -1;
}

/*
 * Delete transfer @d: later ones move down; what depended on it depends
 * on its first dependency instead (so order survives, only @d is gone).
 */
static inline void csim_mut_delete(struct collx_sched *s, u32 d)
{
	const struct collx_xfer gone = s->x[d];
	struct collx_xfer *x;
	u32 j, k, m;

	memmove(&s->x[d], &s->x[d + 1], (s->n - d - 1) * sizeof(*s->x));
	s->n--;
	for (j = d; j < s->n; j++) {
		x = &s->x[j];
		for (k = 0, m = 0; k < x->ndeps; k++) {
			u32 dep = x->deps[k];
			bool sl = x->dep_sliced & BIT(k);

			if (dep == d) {
				if (!gone.ndeps)
					continue;
				dep = gone.deps[0];
				sl = sl && (gone.dep_sliced & 1);
			} else if (dep > d) {
				dep--;
			}
			x->dep_sliced &= ~BIT(m);
			x->dep_sliced |= sl ? BIT(m) : 0;
			x->deps[m++] = dep;
		}
		x->dep_sliced &= BIT(m) - 1;
		x->ndeps = (u8)m;
	}
}

/* A struct collx_csim_cfg .mutate that applies a struct collx_csim_mut. */
static inline void collx_csim_mutate(struct collx_sched *s, u32 rank,
				     void *priv)
{
	const struct collx_csim_mut *m = priv;
	struct collx_xfer *x, t;
	s32 j;

	if (rank != m->rank)
		return;
	if (m->kind == COLLX_MUT_SWAP) {
		/* the first receive before the first send, waiting on it */
		t = s->x[0];
		s->x[0] = s->x[1];
		s->x[1] = t;
		s->x[0].ndeps = 0;
		s->x[1].ndeps = 1;
		s->x[1].deps[0] = 0;
		s->x[1].dep_sliced = 0;
		return;
	}
	j = csim_mut_find(s, m->xkind, m->phase, m->nth);
	if (j < 0)
		return;
	x = &s->x[j];
	switch (m->kind) {
	case COLLX_MUT_NODEPS:
		x->ndeps = 0;
		x->dep_sliced = 0;
		break;
	case COLLX_MUT_COUNT:
		x->count--;
		break;
	case COLLX_MUT_DROP:
		csim_mut_delete(s, (u32)j);
		break;
	case COLLX_MUT_SCALE2:
		/* collx_csim_run() leaves room for one transfer more */
		if (s->n <= s->max) {
			s->x[s->n] = *x;
			s->x[s->n].ndeps = 1;
			s->x[s->n].deps[0] = (u32)j;
			s->x[s->n].dep_sliced = 0;
			s->n++;
		}
		break;
	case COLLX_MUT_RR:
		x->kind = COLLX_XF_RECV_REDUCE;
		break;
	case COLLX_MUT_RECV:
		x->kind = COLLX_XF_RECV;
		break;
	case COLLX_MUT_DST:
		x->dst_off = m->block * x->count;
		break;
	case COLLX_MUT_SRC:
		x->src_off = m->block * x->count;
		break;
	case COLLX_MUT_SLICED:
		x->dep_sliced = (u8)(BIT(x->ndeps) - 1);
		break;
	case COLLX_MUT_WHOLE:
		x->dep_sliced = 0;
		break;
	}
}

/* The configuration a struct collx_csim_mut runs in. */
static inline void collx_csim_mut_cfg(const struct collx_csim_mut *m,
				      struct collx_csim_cfg *cfg, u64 slice,
				      u32 credits, u64 seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->a.coll = m->coll;
	cfg->a.algo = m->algo;
	cfg->a.nranks = m->nranks;
	cfg->a.count = m->count;
	cfg->a.inplace = m->inplace;
	cfg->a.redop = m->redop;
	cfg->slice = slice;
	cfg->credits = credits;
	cfg->seed = seed;
	cfg->mutate = collx_csim_mutate;
	cfg->priv = (void *)m;
}

#endif /* _COLLX_CORE_COLL_SIM_H */
