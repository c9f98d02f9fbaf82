/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: collective schedules as pure functions.  Who talks to whom at
 * which step, and which part of the buffer moves; no I/O, no state.
 * Documentation/reduce.md describes each schedule.
 */
#ifndef _COLLX_CORE_SCHED_H
#define _COLLX_CORE_SCHED_H

#include "core_shim.h"

/*
 * Most ranks the schedules handle; functions given more return -EINVAL (or
 * 0 steps, -1 peers).  Far above any real job, low enough that no rank or
 * step arithmetic can overflow.
 */
#define COLLX_SCHED_MAX_RANKS	BIT(20)

/**
 * struct collx_range - a run of elements
 * @off: first element
 * @len: number of elements (0 for an empty part)
 */
struct collx_range {
	u64 off;
	u64 len;
};

/**
 * collx_split() - part @idx of @count elements cut into @nparts balanced parts
 * @count: number of elements
 * @nparts: number of parts, at least 1
 * @idx: part, below @nparts
 * @r: out, the part; the first count % nparts parts have one element more
 *
 * Context: any.
 * Return: 0, or -EINVAL if @nparts is 0 or @idx is out of range.
 */
int collx_split(u64 count, u32 nparts, u32 idx, struct collx_range *r);

/**
 * collx_slice_elems() - elements per pipeline slice of about @slice_bytes
 * @slice_bytes: wanted slice size in bytes
 * @esize: element size in bytes, at least 1
 *
 * Context: any.
 * Return: slice_bytes / esize rounded down, but at least 1; 0 if @esize is 0.
 */
u64 collx_slice_elems(u64 slice_bytes, u32 esize);

/**
 * collx_nslices() - number of pipeline slices of @count elements
 * @count: number of elements
 * @slice: elements per slice, at least 1
 *
 * Context: any.
 * Return: ceil(@count / @slice); 0 if @count or @slice is 0.
 */
u64 collx_nslices(u64 count, u64 slice);

/**
 * collx_slice() - slice @idx of @count elements cut every @slice elements
 * @count: number of elements
 * @slice: elements per slice, at least 1; the last slice may be shorter
 * @idx: slice, below collx_nslices()
 * @r: out, the slice
 *
 * Context: any.
 * Return: 0, or -EINVAL if @slice is 0 or @idx is out of range.
 */
int collx_slice(u64 count, u64 slice, u64 idx, struct collx_range *r);

/**
 * enum collx_ring_kind - what a ring schedule computes
 * @COLLX_RING_ALLREDUCE: reduce-scatter then allgather, 2 * (n - 1) steps
 * @COLLX_RING_REDUCE_SCATTER: n - 1 steps, rank r ends owning chunk r
 * @COLLX_RING_ALLGATHER: n - 1 steps, rank r starts with chunk r
 */
enum collx_ring_kind {
	COLLX_RING_ALLREDUCE,
	COLLX_RING_REDUCE_SCATTER,
	COLLX_RING_ALLGATHER,
};

/**
 * struct collx_ring_step - one rank's work at one ring step
 * @send_chunk: chunk sent to collx_ring_next()
 * @recv_chunk: chunk received from collx_ring_prev()
 * @reduce: true if @recv_chunk is reduced into the local chunk, false if
 *	it is copied over it
 *
 * The buffer is cut into nranks chunks with collx_split().
 */
struct collx_ring_step {
	u32 send_chunk;
	u32 recv_chunk;
	bool reduce;
};

/**
 * collx_ring_next() - the rank this rank sends to
 * @nranks: ranks in the ring, at least 1
 * @rank: this rank
 *
 * Context: any.
 * Return: (@rank + 1) mod @nranks.
 */
u32 collx_ring_next(u32 nranks, u32 rank);

/**
 * collx_ring_prev() - the rank this rank receives from
 * @nranks: ranks in the ring, at least 1
 * @rank: this rank
 *
 * Context: any.
 * Return: (@rank - 1) mod @nranks.
 */
u32 collx_ring_prev(u32 nranks, u32 rank);

/**
 * collx_ring_nsteps() - number of steps of a ring schedule
 * @kind: what the ring computes
 * @nranks: ranks in the ring
 *
 * Context: any.
 * Return: the number of steps (0 for one rank or an unknown @kind).
 */
u32 collx_ring_nsteps(enum collx_ring_kind kind, u32 nranks);

/**
 * collx_ring_step() - what @rank sends, receives and reduces at @step
 * @kind: what the ring computes
 * @nranks: ranks in the ring
 * @rank: this rank, below @nranks
 * @step: step, below collx_ring_nsteps()
 * @st: out, the step
 *
 * All ranks run step s at the same time (up to pipelining): what rank r
 * sends at step s is what rank r + 1 receives at step s.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an argument out of range.
 */
int collx_ring_step(enum collx_ring_kind kind, u32 nranks, u32 rank,
		    u32 step, struct collx_ring_step *st);

/* Maximum number of children of a tree node. */
#define COLLX_TREE_MAX_CHILDREN	2

/**
 * struct collx_tree_node - one rank's place in a tree
 * @parent: parent rank, -1 at the root
 * @nchildren: number of valid entries in @child
 * @child: child ranks, -1 for unused entries
 */
struct collx_tree_node {
	s32 parent;
	u32 nchildren;
	s32 child[COLLX_TREE_MAX_CHILDREN];
};

/**
 * collx_btree() - binary tree over @nranks ranks rooted at rank 0
 * @nranks: number of ranks, at least 1
 * @rank: this rank, below @nranks
 * @node: out, @rank's parent and children
 *
 * The tree of NCCL's ncclGetBtree(): a rank's parent and children follow
 * from its lowest set bit, odd ranks are leaves, depth is about log2(n).
 *
 * Context: any.
 * Return: 0, or -EINVAL for an argument out of range.
 */
int collx_btree(u32 nranks, u32 rank, struct collx_tree_node *node);

/**
 * collx_dtree() - one of the two trees of a double binary tree
 * @nranks: number of ranks, at least 1
 * @rank: this rank, below @nranks
 * @tree: 0 or 1
 * @node: out, @rank's parent and children in tree @tree
 *
 * Tree 0 is collx_btree().  Tree 1 is tree 0 mirrored (rank r in the place
 * of n - 1 - r) for an even @nranks, or shifted by one rank for an odd one,
 * so most ranks that are inner nodes in one tree are leaves in the other
 * and each half of the data uses links the other half leaves idle.
 *
 * Context: any.
 * Return: 0, or -EINVAL for an argument out of range.
 */
int collx_dtree(u32 nranks, u32 rank, u32 tree, struct collx_tree_node *node);

/**
 * collx_dtree_root() - the root of one tree of the double binary tree
 * @nranks: number of ranks, at least 1
 * @tree: 0 or 1
 *
 * Context: any.
 * Return: the rank whose collx_dtree() parent is -1: 0 for tree 0; for
 * tree 1 n - 1 (even @nranks) or 1 % n (odd), or 0 for arguments out of
 * range.
 */
u32 collx_dtree_root(u32 nranks, u32 tree);

/**
 * struct collx_rd_info - one rank's place in recursive doubling
 * @pof2: largest power of two not above nranks
 * @rem: nranks - @pof2, the ranks folded away before the exchange
 * @nsteps: exchange steps, log2(@pof2)
 * @newrank: index among the @pof2 exchanging ranks, -1 if this rank is
 *	folded (it then takes no part in the exchange steps)
 * @fold_peer: -1 unless rank < 2 * @rem.  Then even ranks send their data
 *	to @fold_peer (rank + 1) before the exchange and receive the result
 *	from it after; odd ranks reduce what @fold_peer (rank - 1) sends
 *	before the exchange and send it the result after.
 *
 * The MPICH scheme for any number of ranks: fold to a power of two, then at
 * exchange step k swap the whole buffer with collx_rd_peer() and reduce.
 */
struct collx_rd_info {
	u32 pof2;
	u32 rem;
	u32 nsteps;
	s32 newrank;
	s32 fold_peer;
};

/**
 * collx_rd_info() - recursive doubling layout for @rank
 * @nranks: number of ranks, at least 1
 * @rank: this rank, below @nranks
 * @info: out, the layout
 *
 * Context: any.
 * Return: 0, or -EINVAL for an argument out of range.
 */
int collx_rd_info(u32 nranks, u32 rank, struct collx_rd_info *info);

/**
 * collx_rd_peer() - exchange partner of @rank at recursive doubling @step
 * @nranks: number of ranks, at least 1
 * @rank: this rank, below @nranks
 * @step: exchange step, below &collx_rd_info.nsteps
 *
 * Context: any.
 * Return: the partner's rank, or -1 if @rank is folded or an argument is
 * out of range.
 */
s32 collx_rd_peer(u32 nranks, u32 rank, u32 step);

#endif /* _COLLX_CORE_SCHED_H */
