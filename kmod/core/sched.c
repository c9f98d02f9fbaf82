// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: collective schedules (ring, double binary tree, recursive
 * doubling, chunking).  Pure functions of (nranks, rank, step).
 */
#include "sched.h"

int collx_split(u64 count, u32 nparts, u32 idx, struct collx_range *r)
{
	u64 base, extra;

	if (!nparts || idx >= nparts)
		return -EINVAL;
	base = count / nparts;
	extra = count % nparts;
	r->len = base + (idx < extra);
	r->off = base * idx + (idx < extra ? idx : extra);
	return 0;
}

u64 collx_slice_elems(u64 slice_bytes, u32 esize)
{
	u64 n;

	if (!esize)
		return 0;
	n = slice_bytes / esize;
	return n ? n : 1;
}

u64 collx_nslices(u64 count, u64 slice)
{
	if (!slice)
		return 0;
	return count / slice + (count % slice != 0);
}

int collx_slice(u64 count, u64 slice, u64 idx, struct collx_range *r)
{
	if (!slice || idx >= collx_nslices(count, slice))
		return -EINVAL;
	r->off = idx * slice;
	r->len = count - r->off < slice ? count - r->off : slice;
	return 0;
}

u32 collx_ring_next(u32 nranks, u32 rank)
{
	return nranks ? (rank + 1) % nranks : 0;
}

u32 collx_ring_prev(u32 nranks, u32 rank)
{
	return nranks ? (rank + nranks - 1) % nranks : 0;
}

u32 collx_ring_nsteps(enum collx_ring_kind kind, u32 nranks)
{
	if (!nranks || nranks > COLLX_SCHED_MAX_RANKS)
		return 0;
	switch (kind) {
	case COLLX_RING_ALLREDUCE:
		return 2 * (nranks - 1);
	case COLLX_RING_REDUCE_SCATTER:
	case COLLX_RING_ALLGATHER:
		return nranks - 1;
	default:
		return 0;
	}
}

/* (a - b) mod n, for a < n and b <= n + 1 */
static u32 ring_sub(u32 n, u32 a, u32 b)
{
	return (a + 2 * n - b) % n;
}

int collx_ring_step(enum collx_ring_kind kind, u32 nranks, u32 rank,
		    u32 step, struct collx_ring_step *st)
{
	if (rank >= nranks || step >= collx_ring_nsteps(kind, nranks))
		return -EINVAL;

	if (kind == COLLX_RING_ALLREDUCE && step >= nranks - 1) {
		/* second half: the allgather */
		kind = COLLX_RING_ALLGATHER;
		step -= nranks - 1;
	}
	if (kind == COLLX_RING_ALLGATHER) {
		/* rank r starts with chunk r and forwards what it got last */
		st->send_chunk = ring_sub(nranks, rank, step);
		st->recv_chunk = ring_sub(nranks, rank, step + 1);
		st->reduce = false;
	} else {
		/*
		 * Reduce-scatter: chunk c starts at rank c + 1 and travels the
		 * ring, each rank adding its part, to end complete at rank c.
		 */
		st->send_chunk = ring_sub(nranks, rank, step + 1);
		st->recv_chunk = ring_sub(nranks, rank, step + 2);
		st->reduce = true;
	}
	return 0;
}

static void tree_node_init(struct collx_tree_node *node)
{
	node->parent = -1;
	node->nchildren = 0;
	node->child[0] = -1;
	node->child[1] = -1;
}

static void tree_add_child(struct collx_tree_node *node, s32 child)
{
	node->child[node->nchildren++] = child;
}

int collx_btree(u32 nranks, u32 rank, struct collx_tree_node *node)
{
	u64 bit, up, low;

	if (rank >= nranks || nranks > COLLX_SCHED_MAX_RANKS)
		return -EINVAL;
	tree_node_init(node);

	if (rank == 0) {
		/* the root's one child is the largest power of two below n */
		for (bit = 1; bit < nranks; bit <<= 1)
			;
		if (nranks > 1)
			tree_add_child(node, (s32)(bit >> 1));
		return 0;
	}

	bit = rank & -rank;	/* lowest set bit */
	up = (rank ^ bit) | (bit << 1);
	if (up >= nranks)
		up = rank ^ bit;
	node->parent = (s32)up;

	/* children: rank - bit/2, and rank + the largest bit/2^k that fits */
	low = bit >> 1;
	if (!low)
		return 0;
	tree_add_child(node, (s32)(rank - low));
	while (low && rank + low >= nranks)
		low >>= 1;
	if (low)
		tree_add_child(node, (s32)(rank + low));
	return 0;
}

static s32 tree_map(s32 r, u32 nranks, bool mirror)
{
	if (r < 0)
		return -1;
	if (mirror)
		return (s32)(nranks - 1 - (u32)r);
	return (s32)(((u32)r + 1) % nranks);
}

int collx_dtree(u32 nranks, u32 rank, u32 tree, struct collx_tree_node *node)
{
	bool mirror = !(nranks & 1);
	u32 pos;
	int ret;
	u32 i;

	if (rank >= nranks || nranks > COLLX_SCHED_MAX_RANKS || tree > 1)
		return -EINVAL;
	if (tree == 0)
		return collx_btree(nranks, rank, node);

	/* tree 1: rank sits where tree 0 has position pos */
	pos = mirror ? nranks - 1 - rank : (rank + nranks - 1) % nranks;
	ret = collx_btree(nranks, pos, node);
	if (ret)
		return ret;
	node->parent = tree_map(node->parent, nranks, mirror);
	for (i = 0; i < node->nchildren; i++)
		node->child[i] = tree_map(node->child[i], nranks, mirror);
	return 0;
}

u32 collx_dtree_root(u32 nranks, u32 tree)
{
	if (!nranks || nranks > COLLX_SCHED_MAX_RANKS || tree != 1)
		return 0;
	/* the rank collx_dtree() puts at position 0 of tree 0 */
	return nranks & 1 ? 1 % nranks : nranks - 1;
}

int collx_rd_info(u32 nranks, u32 rank, struct collx_rd_info *info)
{
	u32 pof2 = 1, nsteps = 0;

	if (rank >= nranks || nranks > COLLX_SCHED_MAX_RANKS)
		return -EINVAL;
	while (pof2 * 2 <= nranks) {
		pof2 *= 2;
		nsteps++;
	}
	info->pof2 = pof2;
	info->nsteps = nsteps;
	info->rem = nranks - pof2;
	if (rank < 2 * info->rem) {
		info->fold_peer = (s32)(rank ^ 1);
		info->newrank = (rank & 1) ? (s32)(rank / 2) : -1;
	} else {
		info->fold_peer = -1;
		info->newrank = (s32)(rank - info->rem);
	}
	return 0;
}

s32 collx_rd_peer(u32 nranks, u32 rank, u32 step)
{
	struct collx_rd_info info;
	u32 peer;

	if (collx_rd_info(nranks, rank, &info) || info.newrank < 0 ||
	    step >= info.nsteps)
		return -1;
	peer = (u32)info.newrank ^ (1U << step);
	return (s32)(peer < info.rem ? peer * 2 + 1 : peer + info.rem);
}
