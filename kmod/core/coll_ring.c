// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: ring schedules.  Rank r sends to r + 1 and receives from
 * r - 1 (alltoall: from and to every rank, shifted by the step).  Each
 * step forwards what the step before received, slice by slice, so slices
 * of all steps travel the ring at once.  Documentation/schedules.md.
 */
#include "coll_impl.h"

static void ring_allreduce(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, s, pos = 0;
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 snd, cp, rr = COLLX_NOX, last, rcv = COLLX_NOX, out;
	struct collx_ring_step st;
	struct collx_range cs, cr;

	/* reduce-scatter: chunk c ends complete at rank c */
	for (s = 0; s + 1 < n; s++) {
		collx_ring_step(COLLX_RING_REDUCE_SCATTER, n, r, s, &st);
		collx_split(a->count, n, st.send_chunk, &cs);
		collx_split(a->count, n, st.recv_chunk, &cr);
		collx_bld_at(b, COLLX_PHASE_REDUCE_SCATTER, s);
		/* step 0 sends this rank's own part, straight from its input */
		snd = collx_bld_send(b, next, s ? COLLX_BUF_OUT :
					  collx_bld_inbuf(b), cs.off, cs.len);
		collx_bld_sdep(b, snd, rr);
		cp = COLLX_NOX;
		if (!a->inplace)
			cp = collx_bld_copy(b, COLLX_BUF_IN, cr.off,
					    COLLX_BUF_OUT, cr.off, cr.len);
		rr = collx_bld_rr(b, prev, COLLX_BUF_OUT, cr.off, cr.len);
		collx_bld_sdep(b, rr, cp);
	}
	/* cr is chunk r now: its sum is complete, scale it before it leaves */
	last = collx_bld_avg(b, COLLX_BUF_OUT, cr.off, cr.len);
	collx_bld_sdep(b, last, rr);
	if (last == COLLX_NOX)
		last = rr;

	for (s = 0; s + 1 < n; s++) {
		collx_ring_step(COLLX_RING_ALLGATHER, n, r, s, &st);
		collx_split(a->count, n, st.send_chunk, &cs);
		collx_split(a->count, n, st.recv_chunk, &cr);
		collx_bld_at(b, COLLX_PHASE_ALLGATHER, s);
		snd = collx_bld_send(b, next, COLLX_BUF_OUT, cs.off, cs.len);
		collx_bld_sdep(b, snd, s ? rcv : last);
		rcv = collx_bld_recv(b, prev, COLLX_BUF_OUT, cr.off, cr.len);
		/*
		 * This chunk left from the output at reduce-scatter step s
		 * (zero copy): overwrite each slice only once it is sent.  Out
		 * of place, step 0's chunk left from the input instead.
		 */
		if (s || a->inplace) {
			out = collx_bld_find(b, &pos, COLLX_XF_SEND,
					     COLLX_PHASE_REDUCE_SCATTER, s);
			collx_bld_sdep(b, rcv, out);
		}
	}
}

static void ring_allgather(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, s;
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 snd, rcv = COLLX_NOX;
	struct collx_ring_step st;
	u64 c = a->count;

	collx_bld_at(b, COLLX_PHASE_ALLGATHER, 0);
	if (!a->inplace)
		collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT, r * c, c);
	for (s = 0; s + 1 < n; s++) {
		collx_ring_step(COLLX_RING_ALLGATHER, n, r, s, &st);
		collx_bld_at(b, COLLX_PHASE_ALLGATHER, s);
		if (s)
			snd = collx_bld_send(b, next, COLLX_BUF_OUT,
					     st.send_chunk * c, c);
		else	/* this rank's block, straight from its input */
			snd = collx_bld_send(b, next, collx_bld_inbuf(b),
					     a->inplace ? r * c : 0, c);
		collx_bld_sdep(b, snd, rcv);
		/* every block but this rank's is written once, here */
		rcv = collx_bld_recv(b, prev, COLLX_BUF_OUT,
				     st.recv_chunk * c, c);
	}
}

/*
 * Reduce-scatter over blocks of count: the partial sum of a block is
 * received into a slot and sent on at the next step.  Two slots
 * alternate, so a step's receive never waits for its own send.  Out of
 * place the output is one of them (it is free until the last step, which
 * lands there).  In place the output is this rank's block of the input,
 * needed until that last step, so both slots are scratch.
 */
static void ring_rs_slot(const struct collx_bld *b, u32 s, u8 *buf, u64 *off)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks;

	*off = 0;
	if (s == n - 2) {
		*buf = COLLX_BUF_OUT;
	} else if (a->inplace) {
		*buf = COLLX_BUF_TMP;
		*off = (s % 2) * a->count;
	} else {
		*buf = (n - 2 - s) % 2 ? COLLX_BUF_TMP : COLLX_BUF_OUT;
	}
}

static void ring_reduce_scatter(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, s;
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 snd = COLLX_NOX, psnd, cp, rr = COLLX_NOX, sc;
	struct collx_ring_step st;
	u64 c = a->count, off, poff = 0;
	u8 buf, pbuf = 0;

	for (s = 0; s + 1 < n; s++) {
		collx_ring_step(COLLX_RING_REDUCE_SCATTER, n, r, s, &st);
		collx_bld_at(b, COLLX_PHASE_REDUCE_SCATTER, s);
		psnd = snd;
		if (s) {
			snd = collx_bld_send(b, next, pbuf, poff, c);
			collx_bld_sdep(b, snd, rr);
		} else {
			snd = collx_bld_send(b, next, COLLX_BUF_IN,
					     st.send_chunk * c, c);
		}
		ring_rs_slot(b, s, &buf, &off);
		/* in place, the last step's block already is the output */
		cp = COLLX_NOX;
		if (!a->inplace || s != n - 2)
			cp = collx_bld_copy(b, COLLX_BUF_IN, st.recv_chunk * c,
					    buf, off, c);
		/* the slot's last contents left at the previous step */
		if (s >= 2)
			collx_bld_sdep(b, cp, psnd);
		rr = collx_bld_rr(b, prev, buf, off, c);
		collx_bld_sdep(b, rr, cp);
		pbuf = buf;
		poff = off;
	}
	sc = collx_bld_avg(b, pbuf, poff, c);
	collx_bld_sdep(b, sc, rr);
}

/* A chain from the root, pipelined slice by slice. */
static void ring_broadcast(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank;
	u32 v = collx_mod_sub(n, r, a->root);
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 snd, rcv;

	if (!v) {
		collx_bld_at(b, COLLX_PHASE_BROADCAST, 0);
		if (!a->inplace)
			collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT, 0,
				       a->count);
		collx_bld_send(b, next, collx_bld_inbuf(b), 0, a->count);
		return;
	}
	/* hop h goes from the root's h-th successor to the next one */
	collx_bld_at(b, COLLX_PHASE_BROADCAST, v - 1);
	rcv = collx_bld_recv(b, prev, COLLX_BUF_OUT, 0, a->count);
	if (v + 1 < n) {
		collx_bld_at(b, COLLX_PHASE_BROADCAST, v);
		snd = collx_bld_send(b, next, COLLX_BUF_OUT, 0, a->count);
		collx_bld_sdep(b, snd, rcv);
	}
}

/*
 * A chain ending at the root: the root's successor starts it, every
 * other rank adds its part in scratch (its output is not its own to
 * write, in place it is its input) and passes the sum on.
 */
static void ring_reduce(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank;
	u32 v = collx_mod_sub(n, r, a->root);
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 cp = COLLX_NOX, rr, snd, sc;

	if (v == 1) {
		collx_bld_at(b, COLLX_PHASE_REDUCE, 0);
		collx_bld_send(b, next, collx_bld_inbuf(b), 0, a->count);
		return;
	}
	/* hop h goes from the root's (h + 1)-th successor to the next */
	collx_bld_at(b, COLLX_PHASE_REDUCE, v ? v - 2 : n - 2);
	if (!v) {
		if (!a->inplace)
			cp = collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT,
					    0, a->count);
		rr = collx_bld_rr(b, prev, COLLX_BUF_OUT, 0, a->count);
		collx_bld_sdep(b, rr, cp);
		sc = collx_bld_avg(b, COLLX_BUF_OUT, 0, a->count);
		collx_bld_sdep(b, sc, rr);
		return;
	}
	cp = collx_bld_copy(b, collx_bld_inbuf(b), 0, COLLX_BUF_TMP, 0,
			    a->count);
	rr = collx_bld_rr(b, prev, COLLX_BUF_TMP, 0, a->count);
	collx_bld_sdep(b, rr, cp);
	collx_bld_at(b, COLLX_PHASE_REDUCE, v - 1);
	snd = collx_bld_send(b, next, COLLX_BUF_TMP, 0, a->count);
	collx_bld_sdep(b, snd, rr);
}

/*
 * A shifted ring: at step s rank r sends block r + s to rank r + s and
 * receives block r - s from rank r - s.  Each send waits for the one
 * before it, so a rank feeds one peer at a time; receives are free.
 */
static void ring_alltoall(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, s, to, from;
	s32 snd, psnd = COLLX_NOX;
	u64 c = a->count;

	collx_bld_at(b, COLLX_PHASE_ALLTOALL, 0);
	collx_bld_copy(b, COLLX_BUF_IN, r * c, COLLX_BUF_OUT, r * c, c);
	for (s = 1; s < n; s++) {
		to = collx_mod_add(n, r, s);
		from = collx_mod_sub(n, r, s);
		collx_bld_at(b, COLLX_PHASE_ALLTOALL, s - 1);
		snd = collx_bld_send(b, to, COLLX_BUF_IN, to * c, c);
		collx_bld_dep(b, snd, psnd);
		collx_bld_recv(b, from, COLLX_BUF_OUT, from * c, c);
		psnd = snd;
	}
}

/*
 * A token goes round from rank 0 and back to it (everyone has arrived),
 * then round again to release the others.
 */
static void ring_barrier(struct collx_bld *b)
{
	u32 n = b->a->nranks, r = b->a->rank;
	u32 next = collx_ring_next(n, r), prev = collx_ring_prev(n, r);
	s32 r1, s1, r2, s2;

	if (!r) {
		collx_bld_at(b, COLLX_PHASE_REDUCE, 0);
		collx_bld_token_send(b, next);
		collx_bld_at(b, COLLX_PHASE_REDUCE, n - 1);
		r1 = collx_bld_token_recv(b, prev);
		collx_bld_at(b, COLLX_PHASE_BROADCAST, 0);
		s2 = collx_bld_token_send(b, next);
		collx_bld_dep(b, s2, r1);
		return;
	}
	collx_bld_at(b, COLLX_PHASE_REDUCE, r - 1);
	r1 = collx_bld_token_recv(b, prev);
	collx_bld_at(b, COLLX_PHASE_REDUCE, r);
	s1 = collx_bld_token_send(b, next);
	collx_bld_dep(b, s1, r1);
	collx_bld_at(b, COLLX_PHASE_BROADCAST, r - 1);
	r2 = collx_bld_token_recv(b, prev);
	if (r + 1 < n) {
		collx_bld_at(b, COLLX_PHASE_BROADCAST, r);
		s2 = collx_bld_token_send(b, next);
		collx_bld_dep(b, s2, r2);
	}
}

void collx_ring_build(struct collx_bld *b)
{
	switch (b->a->coll) {
	case COLLX_COLL_ALLREDUCE:
		ring_allreduce(b);
		break;
	case COLLX_COLL_ALLGATHER:
		ring_allgather(b);
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		ring_reduce_scatter(b);
		break;
	case COLLX_COLL_BROADCAST:
		ring_broadcast(b);
		break;
	case COLLX_COLL_REDUCE:
		ring_reduce(b);
		break;
	case COLLX_COLL_ALLTOALL:
		ring_alltoall(b);
		break;
	case COLLX_COLL_BARRIER:
		ring_barrier(b);
		break;
	default:
		b->err = -EOPNOTSUPP;
		break;
	}
}

u32 collx_ring_max_xfers(u32 coll, u32 nranks)
{
	u32 steps = nranks - 1;

	switch (coll) {
	case COLLX_COLL_ALLREDUCE:
		/* send, copy, receive-reduce; a scale; send, receive */
		return 5 * steps + 1;
	case COLLX_COLL_REDUCE_SCATTER:
		return 3 * steps + 1;
	case COLLX_COLL_ALLGATHER:
	case COLLX_COLL_ALLTOALL:
		return 2 * steps + 1;
	case COLLX_COLL_BARRIER:
		return 4;
	default:
		/* broadcast 2, reduce 3 */
		return 3;
	}
}
