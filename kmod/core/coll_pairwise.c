// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: pairwise exchange alltoall.  At step s (1..n - 1) every rank
 * swaps one block with one partner: rank XOR s when n is a power of two
 * (both ends of a link then pair up with each other), else it sends to
 * r + s and receives from r - s.  A step starts when this rank's step
 * before it has ended, so a rank works with one partner at a time rather
 * than all of them at once (incast).  Documentation/schedules.md.
 */
#include "coll_impl.h"

void collx_pairwise_build(struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 n = a->nranks, r = a->rank, s, to, from;
	s32 snd, rcv, psnd = COLLX_NOX, prcv = COLLX_NOX;
	bool xor = !(n & (n - 1));
	u64 c = a->count;

	collx_bld_at(b, COLLX_PHASE_ALLTOALL, 0);
	collx_bld_copy(b, COLLX_BUF_IN, r * c, COLLX_BUF_OUT, r * c, c);
	for (s = 1; s < n; s++) {
		to = xor ? r ^ s : collx_mod_add(n, r, s);
		from = xor ? r ^ s : collx_mod_sub(n, r, s);
		collx_bld_at(b, COLLX_PHASE_ALLTOALL, s - 1);
		snd = collx_bld_send(b, to, COLLX_BUF_IN, to * c, c);
		collx_bld_dep(b, snd, psnd);
		collx_bld_dep(b, snd, prcv);
		rcv = collx_bld_recv(b, from, COLLX_BUF_OUT, from * c, c);
		collx_bld_dep(b, rcv, psnd);
		collx_bld_dep(b, rcv, prcv);
		psnd = snd;
		prcv = rcv;
	}
}
