// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: recursive doubling schedules (allreduce, allgather,
 * reduce-scatter, barrier) for any rank count.  The ranks beyond the
 * largest power of two fold in first (collx_rd_info(): even rank 2i below
 * 2 * rem hands its data to 2i + 1) and out last; the pof2 others exchange
 * with newrank XOR 2^k.  Allreduce of at least pof2 elements, and
 * reduce-scatter always, halve the data at each step instead of sending
 * all of it (Rabenseifner); allreduce then doubles it back.
 * Documentation/schedules.md.
 */
#include "coll_impl.h"

/* Exchange steps: log2 of COLLX_MAX_RANKS. */
#define COLLX_RD_MAX_STEPS	10

/*
 * Virtual block x (newrank x's data) is real blocks [first(x), first(x + 1)):
 * two for the folded pairs, one for the others.  Monotonic, so a run of
 * virtual blocks is a run of real ones.
 */
static u32 rd_first(const struct collx_rd_info *ri, u32 x)
{
	return x < ri->rem ? 2 * x : x + ri->rem;
}

/* Elements of virtual blocks [lo, lo + len) when blocks are @c long. */
static void rd_vblocks(const struct collx_rd_info *ri, u64 c, u32 lo,
		       u32 len, struct collx_range *rg)
{
	rg->off = rd_first(ri, lo) * c;
	rg->len = (rd_first(ri, lo + len) - rd_first(ri, lo)) * c;
}

/* Elements of pof2-ths [lo, lo + len) of @count (halving-doubling). */
static void rd_parts(const struct collx_rd_info *ri, u64 count, u32 lo,
		     u32 len, struct collx_range *rg)
{
	struct collx_range end;

	collx_split(count, ri->pof2, lo, rg);
	collx_split(count, ri->pof2, lo + len - 1, &end);
	rg->len = end.off + end.len - rg->off;
}

/*
 * Whole buffer at every step: send the sum so far, then add the
 * partner's into it, slice by slice (the partner reads this rank's slice
 * from the output, zero copy, before it is overwritten).  Until the first
 * step this rank's input can go straight from where it lies (@src0).
 */
static s32 rd_full(struct collx_bld *b, const struct collx_rd_info *ri,
		   u8 src0, s32 last)
{
	const struct collx_coll_args *a = b->a;
	s32 snd, rr, sc;
	u8 src;
	u32 k;

	for (k = 0; k < ri->nsteps; k++) {
		u32 p = (u32)collx_rd_peer(a->nranks, a->rank, k);

		collx_bld_at(b, COLLX_PHASE_EXCHANGE, k + 1);
		src = k ? COLLX_BUF_OUT : src0;
		snd = collx_bld_send(b, p, src, 0, a->count);
		rr = collx_bld_rr(b, p, COLLX_BUF_OUT, 0, a->count);
		if (src == COLLX_BUF_OUT) {
			collx_bld_sdep(b, snd, last);
			collx_bld_sdep(b, rr, snd);
		} else {
			collx_bld_sdep(b, rr, last);
		}
		last = rr;
	}
	sc = collx_bld_avg(b, COLLX_BUF_OUT, 0, a->count);
	collx_bld_sdep(b, sc, last);
	return sc == COLLX_NOX ? last : sc;
}

/*
 * Halving (reduce-scatter): at step j, bit nsteps - 1 - j of newrank says
 * which half of the current part this rank keeps and sums into; it sends
 * the other.  It ends with part newrank complete.  Doubling (allgather):
 * at step j it sends what it has to the partner of bit j and receives the
 * partner's, which is exactly the part it gave away at halving bit j.
 * Parts shrink and grow at each step, so the steps wait for each other
 * whole; a step's send and receive touch disjoint parts and overlap.
 */
static void rd_hd(struct collx_bld *b, const struct collx_rd_info *ri,
		  u8 src0, s32 *last, s32 *lsnd)
{
	const struct collx_coll_args *a = b->a;
	s32 gave[COLLX_RD_MAX_STEPS], snd, x;
	u32 nr = (u32)ri->newrank, lo = 0, j, bit, h, p, keep;
	struct collx_range kr, gr;
	u8 src;

	for (j = 0; j < ri->nsteps; j++) {
		bit = ri->nsteps - 1 - j;
		h = 1U << bit;
		p = (u32)collx_rd_peer(a->nranks, a->rank, bit);
		keep = nr & h ? lo + h : lo;
		rd_parts(ri, a->count, keep, h, &kr);
		rd_parts(ri, a->count, keep ^ h, h, &gr);
		collx_bld_at(b, COLLX_PHASE_REDUCE_SCATTER, j);
		src = j ? COLLX_BUF_OUT : src0;
		snd = collx_bld_send(b, p, src, gr.off, gr.len);
		if (src == COLLX_BUF_OUT)
			collx_bld_dep(b, snd, *last);
		x = collx_bld_rr(b, p, COLLX_BUF_OUT, kr.off, kr.len);
		/* step 0 may follow a copy of exactly its part */
		if (*last >= 0 && b->s->x[*last].count == kr.len)
			collx_bld_sdep(b, x, *last);
		else
			collx_bld_dep(b, x, *last);
		gave[bit] = src == COLLX_BUF_OUT ? snd : COLLX_NOX;
		*last = x;
		lo = keep;
	}
	rd_parts(ri, a->count, nr, 1, &kr);
	x = collx_bld_avg(b, COLLX_BUF_OUT, kr.off, kr.len);
	collx_bld_sdep(b, x, *last);
	if (x != COLLX_NOX)
		*last = x;

	*lsnd = COLLX_NOX;
	for (j = 0; j < ri->nsteps; j++) {
		h = 1U << j;
		p = (u32)collx_rd_peer(a->nranks, a->rank, j);
		rd_parts(ri, a->count, nr & ~(h - 1), h, &kr);
		rd_parts(ri, a->count, (nr & ~(h - 1)) ^ h, h, &gr);
		collx_bld_at(b, COLLX_PHASE_ALLGATHER, j);
		/*
		 * What this rank has: at step 0 its sum, forwarded slice by
		 * slice; then the last receive and what it sent before.
		 */
		snd = collx_bld_send(b, p, COLLX_BUF_OUT, kr.off, kr.len);
		if (j) {
			collx_bld_dep(b, snd, *last);
			collx_bld_dep(b, snd, *lsnd);
		} else {
			collx_bld_sdep(b, snd, *last);
		}
		x = collx_bld_recv(b, p, COLLX_BUF_OUT, gr.off, gr.len);
		/* that part left from here at halving bit j (zero copy) */
		collx_bld_sdep(b, x, gave[j]);
		*last = x;
		*lsnd = snd;
	}
}

static void rd_allreduce(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	s32 snd, rcv, cp, x, last, lsnd = COLLX_NOX;
	u64 c = a->count;
	struct collx_rd_info ri;
	struct collx_range cr = { 0, c };
	bool hd, fold;
	u8 src0;

	if (!c)
		return;
	collx_rd_info(a->nranks, a->rank, &ri);
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, 0);
	if (ri.newrank < 0) {
		/* folded: the odd neighbour sums for this rank */
		snd = collx_bld_send(b, (u32)ri.fold_peer, collx_bld_inbuf(b),
				     0, c);
		collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
		rcv = collx_bld_recv(b, (u32)ri.fold_peer, COLLX_BUF_OUT, 0,
				     c);
		if (a->inplace)
			collx_bld_sdep(b, rcv, snd);
		return;
	}
	hd = c >= ri.pof2;
	fold = ri.fold_peer >= 0;
	/* halving-doubling sums only the half kept at step 0 here */
	if (hd && !fold)
		rd_parts(&ri, c, (u32)ri.newrank & (ri.pof2 >> 1),
			 ri.pof2 >> 1, &cr);
	cp = COLLX_NOX;
	if (!a->inplace)
		cp = collx_bld_copy(b, COLLX_BUF_IN, cr.off, COLLX_BUF_OUT,
				    cr.off, cr.len);
	last = cp;
	if (fold) {
		x = collx_bld_rr(b, (u32)ri.fold_peer, COLLX_BUF_OUT, 0, c);
		collx_bld_sdep(b, x, cp);
		last = x;
	}
	/* this rank's own input leaves from where it is */
	src0 = fold || a->inplace ? COLLX_BUF_OUT : COLLX_BUF_IN;
	if (hd)
		rd_hd(b, &ri, src0, &last, &lsnd);
	else
		last = rd_full(b, &ri, src0, last);
	if (!fold)
		return;
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
	snd = collx_bld_send(b, (u32)ri.fold_peer, COLLX_BUF_OUT, 0, c);
	if (hd) {
		collx_bld_dep(b, snd, last);
		collx_bld_dep(b, snd, lsnd);
	} else {
		collx_bld_sdep(b, snd, last);
	}
}

/*
 * The folded even neighbour's share of the output: everything written
 * (the last receive and, through @own, all before), or, when the range
 * is exactly the last receive's, that receive slice by slice.
 */
static void rd_ag_unfold(struct collx_bld *b, u32 peer, u64 off, u64 len,
			 s32 last, s32 own)
{
	const struct collx_xfer *l = last >= 0 ? &b->s->x[last] : NULL;
	s32 x;

	x = collx_bld_send(b, peer, COLLX_BUF_OUT, off, len);
	if (l && l->dst_off == off && l->count == len) {
		collx_bld_sdep(b, x, last);
	} else {
		collx_bld_dep(b, x, last);
		collx_bld_dep(b, x, own);
	}
}

/*
 * Allgather: the part of the output a rank has doubles at every step; the
 * folded even ranks get everything but their own block back in two runs.
 * Every block is written once, so receives wait for nothing.
 */
static void rd_allgather(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, j, h, p, my;
	s32 cp = COLLX_NOX, fr = COLLX_NOX, snd, last, own;
	u64 c = a->count;
	struct collx_rd_info ri;
	struct collx_range mr, pr;
	u8 in = collx_bld_inbuf(b);
	u64 inoff = a->inplace ? r * c : 0;

	if (!c)
		return;
	collx_rd_info(n, r, &ri);
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, 0);
	if (!a->inplace)
		cp = collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT, r * c,
				    c);
	if (ri.newrank < 0) {
		collx_bld_send(b, (u32)ri.fold_peer, in, inoff, c);
		collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
		collx_bld_recv(b, (u32)ri.fold_peer, COLLX_BUF_OUT, 0, r * c);
		collx_bld_recv(b, (u32)ri.fold_peer, COLLX_BUF_OUT,
			       (r + 1) * c, (n - r - 1) * c);
		return;
	}
	if (ri.fold_peer >= 0)
		fr = collx_bld_recv(b, (u32)ri.fold_peer, COLLX_BUF_OUT,
				    (r - 1) * c, c);
	/*
	 * last: the latest receive; own: a transfer after which the rest of
	 * this rank's part is written (the send of it, which waited for
	 * those writes; or the copy, when that send came from the input).
	 */
	last = COLLX_NOX;
	own = COLLX_NOX;
	for (j = 0; j < ri.nsteps; j++) {
		h = 1U << j;
		p = (u32)collx_rd_peer(n, r, j);
		my = (u32)ri.newrank & ~(h - 1);
		rd_vblocks(&ri, c, my, h, &mr);
		rd_vblocks(&ri, c, my ^ h, h, &pr);
		collx_bld_at(b, COLLX_PHASE_ALLGATHER, j);
		if (!j && ri.fold_peer < 0) {
			/* just this rank's block, straight from its input */
			snd = collx_bld_send(b, p, in, inoff, c);
			own = cp;
		} else {
			snd = collx_bld_send(b, p, COLLX_BUF_OUT, mr.off,
					     mr.len);
			collx_bld_dep(b, snd, j ? last : cp);
			collx_bld_dep(b, snd, j ? own : fr);
			own = snd;
		}
		last = collx_bld_recv(b, p, COLLX_BUF_OUT, pr.off, pr.len);
	}
	if (ri.fold_peer < 0)
		return;
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
	rd_ag_unfold(b, (u32)ri.fold_peer, 0, (r - 1) * c, last, own);
	rd_ag_unfold(b, (u32)ri.fold_peer, r * c, (n - r) * c, last, own);
}

/*
 * Reduce-scatter by recursive halving over virtual blocks.  Partial sums
 * live in scratch: the kept part of step 0 (the input is read-only), or
 * the whole vector at a folding odd rank.  A rank whose virtual block is
 * its own block sums the last step straight into its output; a folding
 * odd rank ends with two blocks, copies its own out and sends the other
 * to its even neighbour.  In place the output is this rank's block of the
 * input: it is only written after every read of that block (all of them
 * precede, through the dependencies, the copy or reduce that writes it).
 */
static void rd_reduce_scatter(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, j, bit, h, p, lo = 0, keep, nr;
	s32 snd, rcv, cp, x, last = COLLX_NOX;
	u64 c = a->count, dbase = 0, tbase;
	u8 dbuf = COLLX_BUF_IN, tbuf;
	struct collx_rd_info ri;
	struct collx_range kr, gr;
	bool fold, alias;

	if (!c)
		return;
	collx_rd_info(n, r, &ri);
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, 0);
	if (ri.newrank < 0) {
		snd = collx_bld_send(b, (u32)ri.fold_peer, COLLX_BUF_IN, 0,
				     n * c);
		collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
		rcv = collx_bld_recv(b, (u32)ri.fold_peer, COLLX_BUF_OUT, 0,
				     c);
		if (a->inplace)
			collx_bld_dep(b, rcv, snd);
		return;
	}
	nr = (u32)ri.newrank;
	fold = ri.fold_peer >= 0;
	if (fold) {
		cp = collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_TMP, 0,
				    n * c);
		last = collx_bld_rr(b, (u32)ri.fold_peer, COLLX_BUF_TMP, 0,
				    n * c);
		collx_bld_sdep(b, last, cp);
		dbuf = COLLX_BUF_TMP;
	}
	/* element e of the vector is at dbuf[e - dbase] */
	for (j = 0; j < ri.nsteps; j++) {
		bit = ri.nsteps - 1 - j;
		h = 1U << bit;
		p = (u32)collx_rd_peer(n, r, bit);
		keep = nr & h ? lo + h : lo;
		rd_vblocks(&ri, c, keep, h, &kr);
		rd_vblocks(&ri, c, keep ^ h, h, &gr);
		collx_bld_at(b, COLLX_PHASE_REDUCE_SCATTER, j);
		snd = collx_bld_send(b, p, dbuf, gr.off - dbase, gr.len);
		collx_bld_dep(b, snd, last);
		if (j + 1 == ri.nsteps && !fold) {
			tbuf = COLLX_BUF_OUT;
			tbase = kr.off;
		} else {
			tbuf = COLLX_BUF_TMP;
			tbase = dbuf == COLLX_BUF_TMP ? dbase : kr.off;
		}
		/* in place, this rank's block of the input is the output */
		alias = a->inplace && dbuf == COLLX_BUF_IN &&
			tbuf == COLLX_BUF_OUT;
		cp = COLLX_NOX;
		if (!alias && (tbuf != dbuf || tbase != dbase)) {
			cp = collx_bld_copy(b, dbuf, kr.off - dbase, tbuf,
					    kr.off - tbase, kr.len);
			collx_bld_dep(b, cp, last);
		}
		x = collx_bld_rr(b, p, tbuf, kr.off - tbase, kr.len);
		if (cp != COLLX_NOX)
			collx_bld_sdep(b, x, cp);
		else
			collx_bld_dep(b, x, last);
		last = x;
		dbuf = tbuf;
		dbase = tbase;
		lo = keep;
	}
	rd_vblocks(&ri, c, nr, 1, &kr);
	x = collx_bld_avg(b, dbuf, kr.off - dbase, kr.len);
	collx_bld_sdep(b, x, last);
	if (x != COLLX_NOX)
		last = x;
	if (!fold)
		return;
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
	cp = collx_bld_copy(b, COLLX_BUF_TMP, r * c - dbase, COLLX_BUF_OUT, 0,
			    c);
	collx_bld_dep(b, cp, last);
	snd = collx_bld_send(b, (u32)ri.fold_peer, COLLX_BUF_TMP,
			     (r - 1) * c - dbase, c);
	collx_bld_dep(b, snd, last);
}

/*
 * Tokens.  A rank's token at step k must vouch for every rank it has
 * heard of: it waits for the receive of step k - 1 and for its own token
 * of step k - 1, which waited for everything before (the fold included).
 */
static void rd_barrier(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	s32 last = COLLX_NOX, snd = COLLX_NOX, psnd;
	struct collx_rd_info ri;
	u32 k;

	collx_rd_info(a->nranks, a->rank, &ri);
	collx_bld_at(b, COLLX_PHASE_EXCHANGE, 0);
	if (ri.newrank < 0) {
		collx_bld_token_send(b, (u32)ri.fold_peer);
		collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
		collx_bld_token_recv(b, (u32)ri.fold_peer);
		return;
	}
	if (ri.fold_peer >= 0)
		last = collx_bld_token_recv(b, (u32)ri.fold_peer);
	for (k = 0; k < ri.nsteps; k++) {
		u32 p = (u32)collx_rd_peer(a->nranks, a->rank, k);

		collx_bld_at(b, COLLX_PHASE_EXCHANGE, k + 1);
		psnd = snd;
		snd = collx_bld_token_send(b, p);
		collx_bld_dep(b, snd, last);
		collx_bld_dep(b, snd, psnd);
		last = collx_bld_token_recv(b, p);
	}
	if (ri.fold_peer >= 0) {
		collx_bld_at(b, COLLX_PHASE_EXCHANGE, ri.nsteps + 1);
		psnd = snd;
		snd = collx_bld_token_send(b, (u32)ri.fold_peer);
		collx_bld_dep(b, snd, last);
		collx_bld_dep(b, snd, psnd);
	}
}

void collx_rd_build(struct collx_bld *b)
{
	switch (b->a->coll) {
	case COLLX_COLL_ALLREDUCE:
		rd_allreduce(b);
		break;
	case COLLX_COLL_ALLGATHER:
		rd_allgather(b);
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		rd_reduce_scatter(b);
		break;
	case COLLX_COLL_BARRIER:
		rd_barrier(b);
		break;
	default:
		b->err = -EOPNOTSUPP;
		break;
	}
}

u32 collx_rd_max_xfers(u32 coll, u32 nranks)
{
	u32 l = collx_ilog2(nranks);

	switch (coll) {
	case COLLX_COLL_ALLREDUCE:
		/* copy, fold, 2 per halving and doubling step, scale, unfold */
		return 4 * l + 4;
	case COLLX_COLL_ALLGATHER:
		/* copy, fold, 2 per step, 2 unfolds */
		return 2 * l + 4;
	case COLLX_COLL_REDUCE_SCATTER:
		/* copy and fold, 3 per step, scale, copy and unfold */
		return 3 * l + 5;
	default:
		/* barrier: fold, 2 per step, unfold */
		return 2 * l + 2;
	}
}
