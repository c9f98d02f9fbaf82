/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: schedule simulators for tests (KUnit sched_test.c and the
 * host tests).  Each runs a schedule on sets of contributions, one bit
 * per rank (so at most 64 ranks), and checks that every reduction adds
 * disjoint sets (each contribution is counted exactly once) and that every
 * rank ends with the complete result.
 *
 * Each returns NULL on success or a static string naming the first broken
 * property.
 */
#ifndef _COLLX_CORE_SCHED_SIM_H
#define _COLLX_CORE_SCHED_SIM_H

#include "sched.h"

#define COLLX_SIM_MAX_RANKS	64

static inline u64 collx_sim_full(u32 n)
{
	return n == 64 ? ~0ULL : (1ULL << n) - 1;
}

/* @st: n * n words (rank r's copy of chunk c at st[r * n + c]); @old: same */
static inline const char *collx_sim_ring(enum collx_ring_kind kind, u32 n,
					 u64 *st, u64 *old)
{
	u64 full = collx_sim_full(n);
	struct collx_ring_step a, b;
	u32 r, c, s, nx, nsteps, to, from;

	if (!n || n > COLLX_SIM_MAX_RANKS)
		return "rank count out of range";
	for (r = 0; r < n; r++)
		for (c = 0; c < n; c++)
			st[r * n + c] = kind == COLLX_RING_ALLGATHER ?
				(c == r ? full : 0) : 1ULL << r;
	nsteps = collx_ring_nsteps(kind, n);
	for (s = 0; s < nsteps; s++) {
		memcpy(old, st, sizeof(*st) * n * n);
		for (r = 0; r < n; r++) {
			nx = collx_ring_next(n, r);
			if (collx_ring_prev(n, nx) != r)
				return "next/prev disagree";
			if (collx_ring_step(kind, n, r, s, &a) ||
			    collx_ring_step(kind, n, nx, s, &b))
				return "step rejected";
			if (a.send_chunk >= n || a.recv_chunk >= n)
				return "chunk out of range";
			if (a.send_chunk != b.recv_chunk ||
			    a.reduce != b.reduce)
				return "send does not match the receive";
			c = a.send_chunk;
			to = nx * n + c;
			from = r * n + c;
			if (a.reduce && (old[to] & old[from]))
				return "a contribution is reduced twice";
			if (!a.reduce && old[from] != full)
				return "copy of an incomplete chunk";
			st[to] = a.reduce ? old[to] | old[from] : old[from];
		}
	}
	if (collx_ring_step(kind, n, 0, nsteps, &a) != -EINVAL)
		return "step past the end accepted";
	for (r = 0; r < n; r++)
		for (c = 0; c < n; c++)
			if (st[r * n + c] != full &&
			    (kind != COLLX_RING_REDUCE_SCATTER || c == r))
				return "a rank ends without a complete chunk";
	return NULL;
}

static inline bool collx_sim_lists(const struct collx_tree_node *t, u32 r)
{
	u32 i;

	for (i = 0; i < t->nchildren; i++)
		if (t->child[i] == (s32)r)
			return true;
	return false;
}

/*
 * @nodes: n entries; @mask: n words; @depth: n words.  Checks tree @tree of
 * collx_dtree(): a single root, parent and child links agree, no cycles,
 * and a reduce up then broadcast down gives every rank everything.
 */
static inline const char *collx_sim_tree(u32 n, u32 tree,
					 struct collx_tree_node *nodes,
					 u64 *mask, u32 *depth)
{
	u32 r, i, d, maxd = 0, roots = 0, root = 0;
	s32 p;

	if (!n || n > COLLX_SIM_MAX_RANKS)
		return "rank count out of range";
	for (r = 0; r < n; r++)
		if (collx_dtree(n, r, tree, &nodes[r]))
			return "tree rejected a valid rank";
	for (r = 0; r < n; r++) {
		const struct collx_tree_node *t = &nodes[r];

		if (t->nchildren > COLLX_TREE_MAX_CHILDREN)
			return "too many children";
		if (t->parent < 0) {
			roots++;
			root = r;
		} else if (t->parent >= (s32)n || t->parent == (s32)r) {
			return "parent out of range";
		} else if (!collx_sim_lists(&nodes[t->parent], r)) {
			return "parent does not list the child";
		}
		for (i = 0; i < t->nchildren; i++)
			if (t->child[i] < 0 || t->child[i] >= (s32)n ||
			    nodes[t->child[i]].parent != (s32)r)
				return "child does not point back";
	}
	if (roots != 1)
		return "not exactly one root";
	if (tree == 0 && root != 0)
		return "tree 0 not rooted at rank 0";
	if (root != collx_dtree_root(n, tree))
		return "collx_dtree_root() is not the root";
	for (r = 0; r < n; r++) {
		d = 0;
		for (p = nodes[r].parent; p >= 0; p = nodes[p].parent)
			if (++d > n)
				return "cycle";
		depth[r] = d;
		if (d > maxd)
			maxd = d;
		mask[r] = 1ULL << r;
	}
	/* reduce: deepest first, each node into its parent */
	for (d = maxd; d > 0; d--)
		for (r = 0; r < n; r++) {
			if (depth[r] != d)
				continue;
			p = nodes[r].parent;
			if (mask[p] & mask[r])
				return "a contribution is reduced twice";
			mask[p] |= mask[r];
		}
	if (mask[root] != collx_sim_full(n))
		return "root misses contributions";
	/* depth bound of a binary tree built this way: log2(n) + 2 */
	for (d = 0, r = 1; r < n; r <<= 1)
		d++;
	if (maxd > d + 2)
		return "tree too deep";
	return NULL;
}

/* @st, @old: n words each */
static inline const char *collx_sim_rd(u32 n, u64 *st, u64 *old)
{
	struct collx_rd_info info, pinfo;
	u32 r, k;
	s32 p;

	if (!n || n > COLLX_SIM_MAX_RANKS)
		return "rank count out of range";
	for (r = 0; r < n; r++)
		st[r] = 1ULL << r;
	if (collx_rd_info(n, 0, &info))
		return "rd_info rejected rank 0";
	if (info.pof2 > n || info.pof2 * 2 <= n || info.rem != n - info.pof2 ||
	    (1U << info.nsteps) != info.pof2)
		return "bad pof2/rem/nsteps";
	/* fold: odd ranks below 2 * rem take their even neighbour's data */
	for (r = 0; r < n; r++) {
		if (collx_rd_info(n, r, &info))
			return "rd_info rejected a valid rank";
		if (info.fold_peer < 0)
			continue;
		if (collx_rd_info(n, info.fold_peer, &pinfo) ||
		    pinfo.fold_peer != (s32)r)
			return "fold peers disagree";
		if (info.newrank < 0 && pinfo.newrank < 0)
			return "fold pair without a survivor";
		if (info.newrank >= 0 && pinfo.newrank >= 0)
			return "fold pair without exactly one survivor";
		if (info.newrank >= 0) {
			if (st[r] & st[info.fold_peer])
				return "a contribution is reduced twice";
			st[r] |= st[info.fold_peer];
		}
	}
	for (k = 0; k < info.nsteps; k++) {
		memcpy(old, st, sizeof(*st) * n);
		for (r = 0; r < n; r++) {
			p = collx_rd_peer(n, r, k);
			collx_rd_info(n, r, &info);
			if (info.newrank < 0) {
				if (p != -1)
					return "folded rank has a peer";
				continue;
			}
			if (p < 0 || p >= (s32)n ||
			    collx_rd_peer(n, p, k) != (s32)r)
				return "exchange peers disagree";
			if (old[r] & old[p])
				return "a contribution is reduced twice";
			st[r] = old[r] | old[p];
		}
	}
	if (collx_rd_peer(n, n - 1, info.nsteps) != -1)
		return "step past the end has a peer";
	/* unfold: even ranks get the result back */
	for (r = 0; r < n; r++) {
		collx_rd_info(n, r, &info);
		if (info.newrank < 0)
			st[r] = st[info.fold_peer];
	}
	for (r = 0; r < n; r++)
		if (st[r] != collx_sim_full(n))
			return "a rank ends without every contribution";
	return NULL;
}

/* Parts of collx_split() tile [0, count) in order, sizes within one. */
static inline const char *collx_sim_split(u64 count, u32 nparts)
{
	struct collx_range rg;
	u64 next = 0, minl = ~0ULL, maxl = 0;
	u32 i;

	for (i = 0; i < nparts; i++) {
		if (collx_split(count, nparts, i, &rg))
			return "split rejected a valid part";
		if (rg.off != next)
			return "parts not contiguous";
		next += rg.len;
		minl = rg.len < minl ? rg.len : minl;
		maxl = rg.len > maxl ? rg.len : maxl;
	}
	if (next != count)
		return "parts do not cover the count";
	if (nparts && maxl - minl > 1)
		return "parts not balanced";
	if (!collx_split(count, nparts, nparts, &rg))
		return "part past the end accepted";
	return NULL;
}

/* Slices of collx_slice() tile [0, count), all full but the last. */
static inline const char *collx_sim_slices(u64 count, u64 slice)
{
	u64 ns = collx_nslices(count, slice), i, next = 0;
	struct collx_range rg;

	for (i = 0; i < ns; i++) {
		if (collx_slice(count, slice, i, &rg))
			return "slice rejected a valid index";
		if (rg.off != next || !rg.len || rg.len > slice ||
		    (i + 1 < ns && rg.len != slice))
			return "bad slice";
		next += rg.len;
	}
	if (next != count)
		return "slices do not cover the count";
	if (!collx_slice(count, slice, ns, &rg))
		return "slice past the end accepted";
	return NULL;
}

#endif /* _COLLX_CORE_SCHED_SIM_H */
