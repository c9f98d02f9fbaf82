// SPDX-License-Identifier: GPL-2.0
/*
 * collx simulator at scale: builds the real schedules of kmod/core for
 * every rank of an 8 .. 16,384-rank communicator, runs their data
 * movement symbolically and checks every output element it tracks, and
 * prints the cost model's time per algorithm, its choice, today's choice
 * (collx_algo_choose()) and the connections (QPs) and memory per rank.
 *
 * What is tracked (memory stays bounded at 16,384 ranks):
 * - an element is a fingerprint: the sum of 64-bit hashes h(rank, index)
 *   of the contributions it holds and their count; a reduction adds both,
 *   so an output is right when it holds exactly the n hashes it must
 *   (each once: a missing or doubled contribution changes the sum);
 * - elements are sampled by their index within a block of C (residues E:
 *   the first, the last, the middle and random ones; scratch also the
 *   residues the tree's second half lands on), and blocked buffers
 *   (allgather's output, reduce-scatter's and alltoall's input and
 *   output) by block too: all blocks up to 64 ranks, else a set B of
 *   ranks' blocks (0, 1, 2, n/2, the last, recursive doubling's fold and
 *   power-of-two boundaries, random ones); alltoall tracks every block of
 *   the ranks in B as well;
 * - a transfer that touches no tracked element is dropped; what depended
 *   on it depends on what it depended on (transitively), so the order
 *   among the kept transfers is the schedule's own;
 * - the k-th SEND from a to b meets the k-th RECV of b from a (ordinals
 *   counted over all transfers, dropped or not); every pair's counts are
 *   checked through a hash of (a, b, k, count) summed over all sends and
 *   all receives of all ranks;
 * - a RECV whose SEND was dropped, or a read of an untracked element,
 *   gives "untracked": an output check that meets one fails (the sample
 *   was not closed), so sampling can make a check fail but never pass
 *   something wrong at a tracked element.
 * Transfers run whole (not slice by slice) in dependency order, data read
 * when a SEND meets its RECV.  Slices, credits, hazards and interleavings
 * are kmod/core/coll_sim.h's job at up to 64 ranks (tests/unit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "coll.h"
#include "sched.h"
#include "model.h"

#define UNTR 2

struct sv {
	u64 sum;
	u32 cnt;
	u8 def;		/* 0 undefined, 1 defined, UNTR untracked */
	u8 nscale;
	u16 pad;
};

struct kx {
	u32 rank, peer, ord;
	u8 kind, src, dst, state;	/* state: 0 waiting, 1 ready, 2 done */
	u64 count, src_off, dst_off;
	s64 match;
	u32 ndeps_left;
	u64 *know;	/* barrier: a token's snapshot while it waits */
	struct sv *snap;	/* a completed send's data, until its receive */
	u64 nsnap;
};

struct sim {
	struct collx_coll_args a;
	u32 n;
	u64 C;
	u64 seed;
	/* samples */
	u64 E[8], Et[16];
	u32 nE, nEt;
	u32 *B;
	u32 nB;
	bool Ball;
	u8 *inB;
	/* per rank */
	u64 *tmp;
	u64 *out_base, *tmp_base;
	struct sv *val;
	u64 nval;
	u64 **know;	/* barrier */
	u32 W;
	/* kept transfers */
	struct kx *x;
	u64 nx, capx;
	u64 *edge_from, *edge_to;
	u64 nedge, capedge;
	/* results */
	const char *why;
	s64 why_rank;
	u64 why_off;
	u64 built, max_xfers, checked, hash_s, hash_r;
	u32 max_peers;
	double mean_peers;
	u64 max_tmp;
	u64 slot_cap;
	bool data_skipped;
	u64 slots_needed;
};

static u64 mix(u64 z)
{
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static u64 hv(const struct sim *s, u32 rank, u64 idx)
{
	return mix(s->seed ^ mix(((u64)rank << 40) ^ idx)) | 1;
}

static void fail(struct sim *s, const char *why, s64 rank, u64 off)
{
	if (!s->why) {
		s->why = why;
		s->why_rank = rank;
		s->why_off = off;
	}
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		fprintf(stderr, "sim: out of memory (%zu x %zu)\n", n, sz);
		exit(2);
	}
	return p;
}

static void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz);
	if (!p) {
		fprintf(stderr, "sim: out of memory (%zu)\n", sz);
		exit(2);
	}
	return p;
}

/* Size in elements of @buf at @r (COLLX_BUF_*), as the collective defines. */
static u64 buf_size(const struct sim *s, u32 r, u8 buf)
{
	const struct collx_coll_args *a = &s->a;
	u64 c = a->count, nc = c * a->nranks;
	bool root = r == a->root, ip = a->inplace;

	if (buf == COLLX_BUF_TMP)
		return s->tmp[r];
	switch (a->coll) {
	case COLLX_COLL_BROADCAST:
		return buf == COLLX_BUF_IN ? (root && !ip ? c : 0) : c;
	case COLLX_COLL_REDUCE:
		return buf == COLLX_BUF_IN ? (ip ? 0 : c) : (root || ip ? c : 0);
	case COLLX_COLL_ALLGATHER:
		return buf == COLLX_BUF_IN ? (ip ? 0 : c) : nc;
	case COLLX_COLL_REDUCE_SCATTER:
		return buf == COLLX_BUF_IN ? nc : c;
	case COLLX_COLL_ALLTOALL:
		return nc;
	case COLLX_COLL_BARRIER:
		return 0;
	default:
		return buf == COLLX_BUF_IN ? (ip ? 0 : c) : c;
	}
}

static bool blocked(const struct sim *s, u32 r, u8 buf)
{
	return buf != COLLX_BUF_TMP && buf_size(s, r, buf) > s->C;
}

static bool allblk(const struct sim *s, u32 r, u8 buf)
{
	return !blocked(s, r, buf) || s->Ball ||
	       (s->a.coll == COLLX_COLL_ALLTOALL && s->inB[r]);
}

static s64 eidx(const u64 *E, u32 nE, u64 res)
{
	for (u32 i = 0; i < nE; i++)
		if (E[i] == res)
			return i;
	return -1;
}

static s64 bidx(const struct sim *s, u64 blk)
{
	u32 lo = 0, hi = s->nB;

	while (lo < hi) {
		u32 mid = (lo + hi) / 2;

		if (s->B[mid] < blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nB && s->B[lo] == blk ? (s64)lo : -1;
}

/* Tracked slot of element @o of @buf at @r, or -1. */
static s64 slot_of(const struct sim *s, u32 r, u8 buf, u64 o)
{
	const u64 *E = buf == COLLX_BUF_TMP ? s->Et : s->E;
	u32 nE = buf == COLLX_BUF_TMP ? s->nEt : s->nE;
	u64 blk = o / s->C;
	s64 e = eidx(E, nE, o % s->C), b;

	if (e < 0)
		return -1;
	if (allblk(s, r, buf))
		return (s64)(blk * nE) + e;
	b = bidx(s, blk);
	return b < 0 ? -1 : b * nE + e;
}

static u64 nslots(const struct sim *s, u32 r, u8 buf)
{
	u32 nE = buf == COLLX_BUF_TMP ? s->nEt : s->nE;
	u64 sz = buf_size(s, r, buf), nblk = (sz + s->C - 1) / s->C;

	if (!sz)
		return 0;
	if (allblk(s, r, buf))
		return nblk * nE;
	return (u64)s->nB * nE;
}

/*
 * Call @fn for every tracked element of [lo, lo + len) of @buf at @r;
 * stops when @fn returns false.  Returns false if stopped.
 */
typedef bool (*each_fn)(struct sim *s, u64 o, void *priv);

static bool each_tracked(struct sim *s, u32 r, u8 buf, u64 lo, u64 len,
			 each_fn fn, void *priv)
{
	const u64 *E = buf == COLLX_BUF_TMP ? s->Et : s->E;
	u32 nE = buf == COLLX_BUF_TMP ? s->nEt : s->nE;
	u64 hi = lo + len, b0, b1, blk, o;
	u32 i, k;

	if (!len || buf == COLLX_BUF_NONE)
		return true;
	b0 = lo / s->C;
	b1 = (hi - 1) / s->C;
	if (allblk(s, r, buf)) {
		for (blk = b0; blk <= b1; blk++)
			for (i = 0; i < nE; i++) {
				o = blk * s->C + E[i];
				if (o >= lo && o < hi && !fn(s, o, priv))
					return false;
			}
		return true;
	}
	for (k = (u32)(bidx(s, b0) >= 0 ? bidx(s, b0) : 0); k < s->nB; k++) {
		blk = s->B[k];
		if (blk < b0)
			continue;
		if (blk > b1)
			break;
		for (i = 0; i < nE; i++) {
			o = blk * s->C + E[i];
			if (o >= lo && o < hi && !fn(s, o, priv))
				return false;
		}
	}
	return true;
}

static bool stop_fn(struct sim *s, u64 o, void *priv)
{
	(void)s;
	(void)o;
	(void)priv;
	return false;
}

static bool any_tracked(struct sim *s, u32 r, u8 buf, u64 lo, u64 len)
{
	return !each_tracked(s, r, buf, lo, len, stop_fn, NULL);
}

/* ---- values ---- */

static struct sv *val_at(struct sim *s, u32 r, u8 buf, u64 o)
{
	s64 sl = slot_of(s, r, buf, o);

	if (sl < 0)
		return NULL;
	return &s->val[(buf == COLLX_BUF_OUT ? s->out_base[r] : s->tmp_base[r]) + (u64)sl];
}

/* The value of element @o of @buf at @r, for a read. */
static struct sv read_val(struct sim *s, u32 r, u8 buf, u64 o)
{
	struct sv v = { 0 }, *p;
	const struct collx_coll_args *a = &s->a;

	if (buf == COLLX_BUF_IN && a->coll == COLLX_COLL_REDUCE_SCATTER &&
	    a->inplace && o >= r * a->count && o < (r + 1) * a->count) {
		buf = COLLX_BUF_OUT;
		o -= r * a->count;
	}
	if (buf == COLLX_BUF_IN) {
		if (o >= buf_size(s, r, COLLX_BUF_IN)) {
			fail(s, "reads past the input", r, o);
			return v;
		}
		v.sum = hv(s, r, o);
		v.cnt = 1;
		v.def = 1;
		return v;
	}
	p = val_at(s, r, buf, o);
	if (!p) {
		v.def = UNTR;
		return v;
	}
	return *p;
}

/* What @r's output element @o holds before the collective (in place). */
static struct sv out_init(const struct sim *s, u32 r, u64 o)
{
	const struct collx_coll_args *a = &s->a;
	struct sv v = { 0 };
	u64 c = a->count;

	if (!a->inplace)
		return v;
	switch (a->coll) {
	case COLLX_COLL_ALLREDUCE:
	case COLLX_COLL_REDUCE:
		v.sum = hv(s, r, o);
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		v.sum = hv(s, r, r * c + o);
		break;
	case COLLX_COLL_BROADCAST:
		if (r != a->root)
			return v;
		v.sum = hv(s, r, o);
		break;
	case COLLX_COLL_ALLGATHER:
		if (o / c != r)
			return v;
		v.sum = hv(s, r, o % c);
		break;
	default:
		return v;
	}
	v.cnt = 1;
	v.def = 1;
	return v;
}

/* ---- building ---- */

static void add_edge(struct sim *s, u64 from, u64 to)
{
	if (s->nedge == s->capedge) {
		s->capedge = s->capedge ? 2 * s->capedge : 1024;
		s->edge_from = xrealloc(s->edge_from, s->capedge * 8);
		s->edge_to = xrealloc(s->edge_to, s->capedge * 8);
	}
	s->edge_from[s->nedge] = from;
	s->edge_to[s->nedge++] = to;
}

#define FRONT_MAX 64

/*
 * Build-time taint of one rank's output and scratch: ranges proven to
 * hold only untracked data (a copy of untracked input, or a reduction
 * into such a range).  Transfers whose input is all untracked are
 * dropped like those that touch no tracked element: that is what keeps a
 * ring reduce-scatter's scratch slots from dragging every block along.
 * Schedules order every write of a region after every earlier read and
 * write of it (coll.h), so schedule order is the order that counts.
 */
struct ivs {
	u64 *lo, *hi;
	u32 n, cap;
};

static void ivs_set(struct ivs *v, u64 lo, u64 hi, bool untracked)
{
	u32 i, m = 0, need = v->n + 2;
	u64 *nl, *nh;
	bool placed = !untracked;

	if (lo >= hi)
		return;
	if (need > v->cap) {
		v->cap = 2 * need;
		v->lo = xrealloc(v->lo, 2 * (size_t)v->cap * 8);
		v->hi = xrealloc(v->hi, 2 * (size_t)v->cap * 8);
	}
	/* build the new sorted list in the upper half, then move it down */
	nl = v->lo + v->cap;
	nh = v->hi + v->cap;
	for (i = 0; i < v->n; i++) {
		u64 l = v->lo[i], h = v->hi[i];

		if (!placed && l >= lo) {
			nl[m] = lo;
			nh[m++] = hi;
			placed = true;
		}
		if (h <= lo || l >= hi) {
			nl[m] = l;
			nh[m++] = h;
			continue;
		}
		if (l < lo) {
			nl[m] = l;
			nh[m++] = lo;
		}
		if (!placed) {
			nl[m] = lo;
			nh[m++] = hi;
			placed = true;
		}
		if (h > hi) {
			nl[m] = hi;
			nh[m++] = h;
		}
	}
	if (!placed) {
		nl[m] = lo;
		nh[m++] = hi;
	}
	/* merge touching ranges */
	v->n = 0;
	for (i = 0; i < m; i++) {
		if (v->n && v->hi[v->n - 1] >= nl[i]) {
			if (nh[i] > v->hi[v->n - 1])
				v->hi[v->n - 1] = nh[i];
			continue;
		}
		v->lo[v->n] = nl[i];
		v->hi[v->n++] = nh[i];
	}
}

/* Is [lo, hi) covered by the union of the ranges? */
static bool ivs_covers(const struct ivs *v, u64 lo, u64 hi)
{
	u32 a = 0, b = v->n;

	/* sorted, disjoint, merged: one range must hold it all */
	while (a < b) {
		u32 m = (a + b) / 2;

		if (v->hi[m] <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < v->n && v->lo[a] <= lo && v->hi[a] >= hi;
}

/* Tests of the simulator itself break one rank's schedule with this. */
static void (*g_mutate)(struct collx_sched *sch, u32 rank);

struct bstate {
	struct collx_sched sch;
	u32 *sord, *rord, *mark;
	/* frontier of each transfer of the rank being built */
	u64 *front;	/* [xfer * FRONT_MAX + i] */
	u8 *nfront;
	struct ivs taint[4];
};

/* Does @buf [off, off + len) at @r hold only untracked data? */
static bool all_untracked(struct sim *s, struct bstate *bs, u32 r, u8 buf,
			  u64 off, u64 len)
{
	if (!len || buf == COLLX_BUF_NONE)
		return false;
	if (!any_tracked(s, r, buf, off, len))
		return true;
	if (buf == COLLX_BUF_IN)
		return false;
	return ivs_covers(&bs->taint[buf], off, off + len);
}

static void taint_update(struct sim *s, struct bstate *bs, u32 r,
			 const struct collx_xfer *x)
{
	bool u;

	if (!x->count || x->dst == COLLX_BUF_NONE || x->dst == COLLX_BUF_IN)
		return;
	switch (x->kind) {
	case COLLX_XF_COPY:
		u = all_untracked(s, bs, r, x->src, x->src_off, x->count);
		break;
	case COLLX_XF_RECV_REDUCE:
	case COLLX_XF_SCALE:
		u = ivs_covers(&bs->taint[x->dst], x->dst_off, x->dst_off + x->count);
		break;
	default:
		u = false;	/* a receive: the peer's data, tracked or not */
	}
	ivs_set(&bs->taint[x->dst], x->dst_off, x->dst_off + x->count, u);
}

static bool keep_xfer(struct sim *s, struct bstate *bs, u32 r,
		      const struct collx_xfer *x)
{
	if (!x->count)
		return true;	/* tokens */
	switch (x->kind) {
	case COLLX_XF_SEND:
		return !all_untracked(s, bs, r, x->src, x->src_off, x->count);
	case COLLX_XF_RECV:
		return any_tracked(s, r, x->dst, x->dst_off, x->count);
	case COLLX_XF_COPY:
		return any_tracked(s, r, x->dst, x->dst_off, x->count) &&
		       !all_untracked(s, bs, r, x->src, x->src_off, x->count);
	default:	/* reduce, scale: the old content is an input */
		return !all_untracked(s, bs, r, x->dst, x->dst_off, x->count);
	}
}

static void front_add(struct sim *s, struct bstate *bs, u32 j, u64 id)
{
	u64 *f = &bs->front[(u64)j * FRONT_MAX];

	for (u32 i = 0; i < bs->nfront[j]; i++)
		if (f[i] == id)
			return;
	if (bs->nfront[j] == FRONT_MAX) {
		fail(s, "sim: dependency frontier too wide", -1, j);
		return;
	}
	f[bs->nfront[j]++] = id;
}

static int build_rank(struct sim *s, struct bstate *bs, u32 r)
{
	struct collx_coll_args a = s->a;
	struct collx_sched *sch = &bs->sch;
	u32 j, k, peers = 0;
	int ret;

	a.rank = r;
	sch->max = collx_coll_max_xfers(&a);
	if (!sch->max) {
		fail(s, "collx_coll_max_xfers() refuses it", r, 0);
		return -1;
	}
	ret = collx_coll_build(&a, sch);
	if (ret) {
		fail(s, "collx_coll_build() failed", r, (u64)-ret);
		return -1;
	}
	if (g_mutate)
		g_mutate(sch, r);
	s->built += sch->n;
	if (sch->n > s->max_xfers)
		s->max_xfers = sch->n;
	s->tmp[r] = sch->tmp_count;
	if (sch->tmp_count > s->max_tmp)
		s->max_tmp = sch->tmp_count;
	for (j = 0; j < sch->n; j++) {
		const struct collx_xfer *x = &sch->x[j];
		bool kept, comm = x->kind <= COLLX_XF_RECV_REDUCE;
		u32 ord = 0;

		bs->nfront[j] = 0;
		if (comm) {
			if (x->peer >= s->n || x->peer == r) {
				fail(s, "bad peer", r, j);
				return -1;
			}
			if (bs->mark[x->peer] != r + 1) {
				bs->mark[x->peer] = r + 1;
				peers++;
			}
			if (x->kind == COLLX_XF_SEND) {
				ord = bs->sord[x->peer]++;
				s->hash_s += mix(mix(((u64)r << 32) | x->peer) ^ ((u64)ord << 20) ^ x->count);
			} else {
				ord = bs->rord[x->peer]++;
				s->hash_r += mix(mix(((u64)x->peer << 32) | r) ^ ((u64)ord << 20) ^ x->count);
			}
		}
		for (k = 0; k < x->ndeps; k++)
			if (x->deps[k] >= j) {
				fail(s, "depends on a later transfer", r, j);
				return -1;
			}
		kept = s->data_skipped ? false : keep_xfer(s, bs, r, x);
		taint_update(s, bs, r, x);
		if (kept) {
			struct kx *t;

			if (s->nx == s->capx) {
				s->capx = s->capx ? 2 * s->capx : 4096;
				s->x = xrealloc(s->x, s->capx * sizeof(*s->x));
			}
			t = &s->x[s->nx];
			memset(t, 0, sizeof(*t));
			t->rank = r;
			t->peer = x->peer;
			t->ord = ord;
			t->kind = x->kind;
			t->src = x->src;
			t->dst = x->dst;
			t->count = x->count;
			t->src_off = x->src_off;
			t->dst_off = x->dst_off;
			t->match = -1;
			for (k = 0; k < x->ndeps; k++) {
				u32 d = x->deps[k];

				for (u32 i = 0; i < bs->nfront[d]; i++) {
					add_edge(s, bs->front[(u64)d * FRONT_MAX + i], s->nx);
					t->ndeps_left++;
				}
			}
			bs->nfront[j] = 1;
			bs->front[(u64)j * FRONT_MAX] = s->nx;
			s->nx++;
		} else {
			for (k = 0; k < x->ndeps; k++) {
				u32 d = x->deps[k];

				for (u32 i = 0; i < bs->nfront[d]; i++)
					front_add(s, bs, j, bs->front[(u64)d * FRONT_MAX + i]);
			}
		}
	}
	if (peers > s->max_peers)
		s->max_peers = peers;
	s->mean_peers += (double)peers / s->n;
	return 0;
}

/* ---- matching: (sender, receiver, ordinal) -> kept send / recv ---- */

struct mslot {
	u64 key;
	s64 send, recv;
};

static u64 mkey(u32 from, u32 to, u32 ord)
{
	return mix(((u64)from << 34) ^ ((u64)to << 8) ^ ((u64)ord << 40) ^ ord) | 1;
}

static struct mslot *mfind(struct mslot *t, u64 cap, u32 from, u32 to,
			   u32 ord, const struct kx *xs, bool create)
{
	u64 key = mkey(from, to, ord), i = key & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		struct mslot *m = &t[i];

		if (!m->key) {
			if (!create)
				return NULL;
			m->key = key;
			m->send = m->recv = -1;
			return m;
		}
		if (m->key == key) {
			/* keys may collide: confirm on a member */
			s64 any = m->send >= 0 ? m->send : m->recv;
			const struct kx *e = &xs[any];
			u32 f = e->kind == COLLX_XF_SEND ? e->rank : e->peer;
			u32 d = e->kind == COLLX_XF_SEND ? e->peer : e->rank;

			if (f == from && d == to && e->ord == ord)
				return m;
		}
	}
}

/* ---- running ---- */

struct apply_ctx {
	struct kx *x;	/* writes */
	struct kx *y;	/* the matching send, or NULL */
	struct sv *snap;	/* or what it sent, in order */
	u64 si;
};

/* A send completes when its data left: keep it for the receive. */
static bool snap_fn(struct sim *s, u64 o, void *priv)
{
	struct apply_ctx *c = priv;
	struct kx *y = c->y, *x = c->x;

	c->snap[c->si] = read_val(s, y->rank, y->src, o - x->dst_off + y->src_off);
	if (!c->snap[c->si].def)
		fail(s, "sends undefined data", y->rank, o);
	c->si++;
	return true;
}

static bool count_fn(struct sim *s, u64 o, void *priv)
{
	(void)s;
	(void)o;
	(*(u64 *)priv)++;
	return true;
}

static bool apply_fn(struct sim *s, u64 o, void *priv)
{
	struct apply_ctx *c = priv;
	struct kx *x = c->x;
	struct sv *d = val_at(s, x->rank, x->dst, o), v;

	if (!d)
		return true;
	if (x->kind == COLLX_XF_SCALE) {
		if (d->def == UNTR)
			return true;
		if (!d->def)
			fail(s, "scales undefined data", x->rank, o);
		else if (d->cnt != s->n)
			fail(s, "scales a sum before it is complete", x->rank, o);
		else if (d->nscale)
			fail(s, "scales twice", x->rank, o);
		d->nscale++;
		return true;
	}
	if (x->kind == COLLX_XF_COPY) {
		v = read_val(s, x->rank, x->src, o - x->dst_off + x->src_off);
		if (!v.def)
			fail(s, "copies undefined data", x->rank, o);
	} else if (c->snap) {
		v = c->snap[c->si++];
	} else if (c->y) {
		v = read_val(s, c->y->rank, c->y->src, o - x->dst_off + c->y->src_off);
		if (!v.def)
			fail(s, "sends undefined data", c->y->rank, o);
	} else {
		memset(&v, 0, sizeof(v));
		v.def = UNTR;
	}
	if (x->kind == COLLX_XF_RECV_REDUCE) {
		if (!d->def)
			fail(s, "reduces into undefined data", x->rank, o);
		if (d->nscale || v.nscale)
			fail(s, "reduces scaled data", x->rank, o);
		if (d->def == UNTR || v.def == UNTR) {
			d->def = UNTR;
		} else {
			d->sum += v.sum;
			d->cnt += v.cnt;
		}
	} else {
		*d = v;
	}
	return true;
}

static void know_or(struct sim *s, u64 *dst, const u64 *src)
{
	for (u32 w = 0; w < s->W; w++)
		dst[w] |= src[w];
}

static void run(struct sim *s)
{
	u64 *start, *adj, *queue, qh = 0, qt = 0, i, cap = 1, done = 0;
	struct mslot *mt;

	/* dependents, CSR */
	start = xcalloc(s->nx + 1, 8);
	adj = xcalloc(s->nedge, 8);
	for (i = 0; i < s->nedge; i++)
		start[s->edge_from[i] + 1]++;
	for (i = 0; i < s->nx; i++)
		start[i + 1] += start[i];
	{
		u64 *fill = xcalloc(s->nx + 1, 8);

		for (i = 0; i < s->nedge; i++) {
			u64 f = s->edge_from[i];

			adj[start[f] + fill[f]++] = s->edge_to[i];
		}
		free(fill);
	}
	/* matching table over the kept sends and receives */
	while (cap < 2 * s->nx + 2)
		cap <<= 1;
	mt = xcalloc(cap, sizeof(*mt));
	for (i = 0; i < s->nx; i++) {
		struct kx *x = &s->x[i];
		struct mslot *m;

		if (x->kind == COLLX_XF_SEND) {
			m = mfind(mt, cap, x->rank, x->peer, x->ord, s->x, true);
			m->send = (s64)i;
		} else if (x->kind != COLLX_XF_COPY && x->kind != COLLX_XF_SCALE) {
			m = mfind(mt, cap, x->peer, x->rank, x->ord, s->x, true);
			m->recv = (s64)i;
		}
	}
	for (i = 0; i < cap; i++)
		if (mt[i].key && mt[i].send >= 0 && mt[i].recv >= 0) {
			s->x[mt[i].send].match = mt[i].recv;
			s->x[mt[i].recv].match = mt[i].send;
			if (s->x[mt[i].send].count != s->x[mt[i].recv].count)
				fail(s, "a send and its receive differ in count",
				     s->x[mt[i].recv].rank, mt[i].recv);
		}
	free(mt);

	queue = xcalloc(s->nx, 8);
	for (i = 0; i < s->nx; i++)
		if (!s->x[i].ndeps_left)
			queue[qt++] = i;
	while (qh < qt) {
		u64 id = queue[qh++], fin[2];
		struct kx *x = &s->x[id], *y;
		u32 nfin = 0;

		x->state = 1;
		if (x->kind == COLLX_XF_SEND) {
			y = x->match >= 0 ? &s->x[x->match] : NULL;
			if (y && y->state == 1) {
				struct apply_ctx c = { y, x, NULL, 0 };

				each_tracked(s, y->rank, y->dst, y->dst_off, y->count,
					     apply_fn, &c);
				if (s->know)
					know_or(s, s->know[y->rank], s->know[x->rank]);
				fin[nfin++] = (u64)x->match;
			} else if (y) {
				/*
				 * Its data leaves now (into the peer's staging):
				 * what the receive will get is what the source
				 * holds at this moment.
				 */
				struct apply_ctx c = { y, x, NULL, 0 };
				u64 cnt = 0;

				each_tracked(s, y->rank, y->dst, y->dst_off, y->count,
					     count_fn, &cnt);
				x->snap = xcalloc(cnt, sizeof(*x->snap));
				x->nsnap = cnt;
				c.snap = x->snap;
				each_tracked(s, y->rank, y->dst, y->dst_off, y->count,
					     snap_fn, &c);
				if (s->know) {
					x->know = xcalloc(s->W, 8);
					memcpy(x->know, s->know[x->rank], s->W * 8);
				}
			}
			fin[nfin++] = id;
		} else if (x->kind == COLLX_XF_RECV || x->kind == COLLX_XF_RECV_REDUCE) {
			y = x->match >= 0 ? &s->x[x->match] : NULL;
			if (!y || y->state == 2) {
				struct apply_ctx c = { x, y, y ? y->snap : NULL, 0 };

				if (y && !y->snap)
					c.y = NULL;	/* cannot happen: sends snapshot */
				each_tracked(s, x->rank, x->dst, x->dst_off, x->count,
					     apply_fn, &c);
				if (s->know && y && y->know)
					know_or(s, s->know[x->rank], y->know);
				if (y) {
					free(y->snap);
					y->snap = NULL;
					free(y->know);
					y->know = NULL;
				}
				fin[nfin++] = id;
			}
			/* else: the send, when ready, applies it */
		} else {
			struct apply_ctx c = { x, NULL, NULL, 0 };

			each_tracked(s, x->rank, x->dst, x->dst_off, x->count,
				     apply_fn, &c);
			fin[nfin++] = id;
		}
		for (u32 f = 0; f < nfin; f++) {
			struct kx *z = &s->x[fin[f]];

			z->state = 2;
			done++;
			for (u64 e = start[fin[f]]; e < start[fin[f] + 1]; e++)
				if (!--s->x[adj[e]].ndeps_left)
					queue[qt++] = adj[e];
		}
	}
	if (done != s->nx)
		fail(s, "deadlock: transfers never become ready", -1, s->nx - done);
	for (i = 0; i < s->nx; i++) {
		free(s->x[i].know);
		free(s->x[i].snap);
	}
	free(queue);
	free(start);
	free(adj);
}

/* ---- the result ---- */

static u64 sum_all(const struct sim *s, u64 idx)
{
	u64 t = 0;

	for (u32 j = 0; j < s->n; j++)
		t += hv(s, j, idx);
	return t;
}

struct chk_ctx {
	u32 r;
	u64 *esum;	/* allreduce / reduce: expected sums by residue slot */
};

static bool check_fn(struct sim *s, u64 o, void *priv)
{
	struct chk_ctx *c = priv;
	const struct collx_coll_args *a = &s->a;
	struct sv *v = val_at(s, c->r, COLLX_BUF_OUT, o), w = { 0 };
	u32 r = c->r;
	u64 C = a->count;
	bool red = false;

	if (!v)
		return true;
	switch (a->coll) {
	case COLLX_COLL_ALLREDUCE:
		red = true;
		w.sum = c->esum[eidx(s->E, s->nE, o)];
		break;
	case COLLX_COLL_REDUCE:
		if (r != a->root) {
			if (!a->inplace)
				return true;
			w = out_init(s, r, o);	/* left alone */
			break;
		}
		red = true;
		w.sum = c->esum[eidx(s->E, s->nE, o)];
		break;
	case COLLX_COLL_BROADCAST:
		w.sum = hv(s, a->root, o);
		w.cnt = 1;
		break;
	case COLLX_COLL_ALLGATHER:
		w.sum = hv(s, (u32)(o / C), o % C);
		w.cnt = 1;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		if (!s->Ball && !s->inB[r])
			return true;	/* fed by untracked blocks */
		red = true;
		w.sum = sum_all(s, r * C + o);
		break;
	case COLLX_COLL_ALLTOALL:
		w.sum = hv(s, (u32)(o / C), r * C + o % C);
		w.cnt = 1;
		break;
	default:
		return true;
	}
	if (red) {
		w.cnt = s->n;
		w.nscale = a->redop == COLLX_OP_AVG;
	}
	s->checked++;
	if (v->def == UNTR)
		fail(s, "sim: sample not closed (untracked data in a checked output)", r, o);
	else if (!v->def)
		fail(s, "output left undefined", r, o);
	else if (v->cnt != w.cnt)
		fail(s, v->cnt < w.cnt ? "output misses contributions" :
			"output holds a contribution twice", r, o);
	else if (v->sum != w.sum)
		fail(s, "output holds the wrong data", r, o);
	else if (v->nscale != w.nscale)
		fail(s, "avg scaled the wrong number of times", r, o);
	return !s->why;
}

static void check(struct sim *s)
{
	const struct collx_coll_args *a = &s->a;
	u64 esum[8];
	struct chk_ctx c = { 0, esum };

	if (s->hash_s != s->hash_r)
		fail(s, "sends and receives of the ranks do not match", -1, 0);
	if (a->coll == COLLX_COLL_BARRIER) {
		for (u32 r = 0; r < s->n && !s->why; r++)
			for (u32 j = 0; j < s->n; j++) {
				s->checked++;
				if (!(s->know[r][j / 64] >> (j % 64) & 1)) {
					fail(s, "barrier ends before all arrived", r, j);
					break;
				}
			}
		return;
	}
	if (a->coll == COLLX_COLL_ALLREDUCE || a->coll == COLLX_COLL_REDUCE)
		for (u32 i = 0; i < s->nE; i++)
			esum[i] = sum_all(s, s->E[i]);
	for (u32 r = 0; r < s->n && !s->why; r++) {
		c.r = r;
		each_tracked(s, r, COLLX_BUF_OUT, 0, buf_size(s, r, COLLX_BUF_OUT),
			     check_fn, &c);
	}
}

static bool init_fn(struct sim *s, u64 o, void *priv)
{
	struct chk_ctx *c = priv;
	struct sv *v = val_at(s, c->r, COLLX_BUF_OUT, o);

	if (v)
		*v = out_init(s, c->r, o);
	return true;
}

/* ---- one simulated collective ---- */

static void add_u64(u64 *E, u32 *n, u32 max, u64 v)
{
	for (u32 i = 0; i < *n; i++)
		if (E[i] == v)
			return;
	if (*n < max)
		E[(*n)++] = v;
}

static int cmp_u32(const void *x, const void *y)
{
	u32 a = *(const u32 *)x, b = *(const u32 *)y;

	return a < b ? -1 : a > b;
}

struct result {
	const char *why;
	s64 rank;
	u64 off;
	u64 built, kept, checked, max_xfers, max_tmp;
	u32 max_peers;
	double mean_peers;
	bool data_skipped;
	u64 slots_needed;
	double secs;
};

static void simulate(const struct collx_coll_args *args, u64 seed, u64 slot_cap,
		     struct result *res)
{
	struct sim s = { 0 };
	struct bstate bs = { 0 };
	struct collx_rd_info ri;
	struct timespec t0, t1;
	u32 n = args->nranks, r, i;
	u64 C, h, cand[16], rnd = seed;
	u32 ncand = 0, maxx;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	s.a = *args;
	s.n = n;
	s.seed = seed;
	C = s.C = args->count ? args->count : 1;
	/* residues */
	add_u64(s.E, &s.nE, 8, 0);
	add_u64(s.E, &s.nE, 8, C - 1);
	add_u64(s.E, &s.nE, 8, (C - 1) / 2);
	add_u64(s.E, &s.nE, 8, C / 2);
	rnd = mix(rnd);
	add_u64(s.E, &s.nE, 8, rnd % C);
	rnd = mix(rnd);
	add_u64(s.E, &s.nE, 8, rnd % C);
	h = (C + 1) / 2;	/* collx_split(C, 2, 0).len: the tree's first half */
	for (i = 0; i < s.nE; i++)
		add_u64(s.Et, &s.nEt, 16, s.E[i]);
	for (i = 0; i < s.nE; i++)
		if (s.E[i] >= h)
			add_u64(s.Et, &s.nEt, 16, s.E[i] - h);
	/* blocks */
	s.Ball = n <= 64;
	s.inB = xcalloc(n, 1);
	collx_rd_info(n, 0, &ri);
	cand[ncand++] = 0;
	cand[ncand++] = 1;
	cand[ncand++] = 2 % n;
	cand[ncand++] = n / 2;
	cand[ncand++] = n - 2;
	cand[ncand++] = n - 1;
	cand[ncand++] = ri.pof2 - 1;
	if (ri.rem) {
		cand[ncand++] = ri.pof2;
		cand[ncand++] = 2 * ri.rem - 1;
		cand[ncand++] = 2 * ri.rem < n ? 2 * ri.rem : 0;
	}
	while (ncand < 14) {
		rnd = mix(rnd);
		cand[ncand++] = rnd % n;
	}
	s.B = xcalloc(ncand, 4);
	for (i = 0; i < ncand; i++) {
		if (s.inB[cand[i]] && !s.Ball)
			continue;
		if (!s.inB[cand[i]])
			s.B[s.nB++] = (u32)cand[i];
		s.inB[cand[i]] = 1;
	}
	qsort(s.B, s.nB, 4, cmp_u32);
	if (s.Ball)
		memset(s.inB, 1, n);
	s.tmp = xcalloc(n, 8);
	s.out_base = xcalloc(n, 8);
	s.tmp_base = xcalloc(n, 8);

	/* room for the largest schedule */
	maxx = 0;
	for (r = 0; r < n; r++) {
		struct collx_coll_args a = *args;
		u32 m;

		a.rank = r;
		m = collx_coll_max_xfers(&a);
		if (m > maxx)
			maxx = m;
	}
	bs.sch.x = xcalloc(maxx, sizeof(*bs.sch.x));
	bs.sord = xcalloc(n, 4);
	bs.rord = xcalloc(n, 4);
	bs.mark = xcalloc(n, 4);
	bs.front = xcalloc((u64)maxx * FRONT_MAX, 8);
	bs.nfront = xcalloc(maxx, 1);

	/*
	 * The slots the data check needs: output and scratch of every rank.
	 * Scratch is known once built; estimate it from rank 0 and the
	 * sampled ranks first (it is the same order at every rank).
	 */
	{
		u64 need = 0;

		for (r = 0; r < n; r++)
			need += nslots(&s, r, COLLX_BUF_OUT);
		for (i = 0; i < s.nB; i++) {
			struct collx_coll_args a = *args;

			a.rank = s.B[i];
			bs.sch.max = collx_coll_max_xfers(&a);
			if (bs.sch.max && !collx_coll_build(&a, &bs.sch) &&
			    bs.sch.tmp_count > s.tmp[0])
				s.tmp[0] = bs.sch.tmp_count;
		}
		{
			u64 t0s;

			s.tmp[1 % n] = s.tmp[0];
			t0s = nslots(&s, 1 % n, COLLX_BUF_TMP);
			need += t0s * n;
			s.tmp[0] = 0;
			s.tmp[1 % n] = 0;
		}
		s.slots_needed = need;
		s.data_skipped = need > slot_cap;
	}
	if (args->coll == COLLX_COLL_BARRIER) {
		s.W = (n + 63) / 64;
		s.know = xcalloc(n, sizeof(*s.know));
		for (r = 0; r < n; r++) {
			s.know[r] = xcalloc(s.W, 8);
			s.know[r][r / 64] |= 1ULL << (r % 64);
		}
	}
	for (r = 0; r < n && !s.why; r++) {
		for (i = 0; i < 4; i++)
			ivs_set(&bs.taint[i], 0, ~0ULL, false);
		memset(bs.sord, 0, n * 4);
		memset(bs.rord, 0, n * 4);
		build_rank(&s, &bs, r);
	}
	if (!s.why && !s.data_skipped) {
		for (r = 0; r < n; r++) {
			s.out_base[r] = s.nval;
			s.nval += nslots(&s, r, COLLX_BUF_OUT);
			s.tmp_base[r] = s.nval;
			s.nval += nslots(&s, r, COLLX_BUF_TMP);
		}
		s.val = xcalloc(s.nval, sizeof(*s.val));
		for (r = 0; r < n && args->inplace; r++) {
			struct chk_ctx c = { r, NULL };

			each_tracked(&s, r, COLLX_BUF_OUT, 0,
				     buf_size(&s, r, COLLX_BUF_OUT), init_fn, &c);
		}
		run(&s);
		if (!s.why)
			check(&s);
	} else if (!s.why && args->coll == COLLX_COLL_BARRIER) {
		fail(&s, "sim: barrier not simulated", -1, 0);
	}
	if (!s.why && s.hash_s != s.hash_r)
		fail(&s, "sends and receives of the ranks do not match", -1, 0);

	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->why = s.why;
	res->rank = s.why_rank;
	res->off = s.why_off;
	res->built = s.built;
	res->kept = s.nx;
	res->checked = s.checked;
	res->max_xfers = s.max_xfers;
	res->max_tmp = s.max_tmp;
	res->max_peers = s.max_peers;
	res->mean_peers = s.mean_peers;
	res->data_skipped = s.data_skipped;
	res->slots_needed = s.slots_needed;
	res->secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (s.know) {
		for (r = 0; r < n; r++)
			free(s.know[r]);
		free(s.know);
	}
	free(bs.sch.x);
	free(bs.sord);
	free(bs.rord);
	free(bs.mark);
	free(bs.front);
	free(bs.nfront);
	for (i = 0; i < 4; i++) {
		free(bs.taint[i].lo);
		free(bs.taint[i].hi);
	}
	free(s.B);
	free(s.inB);
	free(s.tmp);
	free(s.out_base);
	free(s.tmp_base);
	free(s.val);
	free(s.x);
	free(s.edge_from);
	free(s.edge_to);
}

#include "sim_main.h"
