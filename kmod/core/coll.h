/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: every collective as a schedule of transfers for one rank.
 *
 * The engine (kmod/engine.c) is an executor of these schedules and knows
 * nothing of algorithms; this file is the contract between the two.  A
 * schedule is built once per collective, on the submitting rank, from
 * (collective, algorithm, nranks, rank, root, count, redop, in place) and
 * is a pure function of them, so every rank builds the schedules that
 * match each other's.
 *
 * Transfers (struct collx_xfer) and what the executor guarantees:
 *
 * - Buffers are named, not addressed: COLLX_BUF_IN (the caller's input),
 *   COLLX_BUF_OUT (its output) and COLLX_BUF_TMP (kernel scratch of
 *   &collx_sched.tmp_count elements).  Offsets and counts are in elements.
 *   A schedule built for an in-place allreduce, broadcast, reduce or
 *   allgather never names COLLX_BUF_IN (the input is the part of
 *   COLLX_BUF_OUT the collective defines).  An in-place reduce-scatter
 *   has both, COLLX_BUF_OUT aliasing COLLX_BUF_IN from rank * count: its
 *   schedule must write COLLX_BUF_OUT only after its last read of that
 *   part of COLLX_BUF_IN.
 * - Each transfer is cut into slices of the executor's slice size S
 *   (elements per staging slot; any S >= 1 must work): slice i covers
 *   elements [i * S, min((i + 1) * S, count)).  A transfer of count 0 is a
 *   single empty slice (a token: barriers, zero-byte messages).
 * - A slice of a transfer may run once its dependencies are met: for each
 *   deps[k], either slice i of that transfer is complete (bit k of
 *   @dep_sliced set; both transfers must then have the same count), or
 *   every slice of it is.  Dependencies name earlier transfers only.
 * - Complete means: a SEND slice has been read by the NIC and acknowledged
 *   (so its source may be overwritten); a RECV slice's data is in its
 *   destination; a COPY or SCALE slice has run.
 * - SENDs to one peer are posted in schedule order, all slices of one
 *   before any of the next.  RECVs from one peer complete in schedule
 *   order.  The k-th SEND from rank a to rank b matches the k-th RECV of
 *   rank b from rank a, with the same count; the engine checks that and
 *   fails the collective with -EPROTO when ranks disagree.
 * - A RECV may be written straight into its destination by the peer
 *   (zero copy) at any moment after it became ready and before it
 *   completes, and a RECV_REDUCE's destination read and written in that
 *   window; a SEND may be read from its source at any moment after it
 *   became ready and before it completes.  So a schedule must order (by
 *   dependencies) every write of a region after every earlier read and
 *   write of it, and every read after the writes it needs.
 * - Nothing else is ordered: independent transfers run in any order, and
 *   a transfer's slices run as soon as each is ready (the pipeline).
 *
 * Every transfer carries the phase and step it belongs to, which is what
 * a failed collective reports (enum collx_phase, &collx_completion.step).
 */
#ifndef _COLLX_CORE_COLL_H
#define _COLLX_CORE_COLL_H

#include "core_shim.h"

/**
 * enum collx_buf_id - the buffers a schedule names
 * @COLLX_BUF_NONE: no buffer (a token transfer, or the unused side)
 * @COLLX_BUF_IN: the caller's input (sendbuf)
 * @COLLX_BUF_OUT: the caller's output (recvbuf)
 * @COLLX_BUF_TMP: kernel scratch, &collx_sched.tmp_count elements
 */
enum collx_buf_id {
	COLLX_BUF_NONE = 0,
	COLLX_BUF_IN = 1,
	COLLX_BUF_OUT = 2,
	COLLX_BUF_TMP = 3,
};

/**
 * enum collx_xfer_kind - what a transfer does
 * @COLLX_XF_SEND: @count elements of @src at @src_off to rank @peer
 * @COLLX_XF_RECV: @count elements from rank @peer into @dst at @dst_off
 * @COLLX_XF_RECV_REDUCE: @count elements from rank @peer reduced (the
 *	collective's redop; avg as sum) into @dst at @dst_off
 * @COLLX_XF_COPY: local copy of @count elements from @src at @src_off to
 *	@dst at @dst_off (the regions do not overlap)
 * @COLLX_XF_SCALE: divide @count elements of @dst at @dst_off by nranks
 *	(the end of an avg: collx_reduce_scale_avg())
 */
enum collx_xfer_kind {
	COLLX_XF_SEND = 0,
	COLLX_XF_RECV = 1,
	COLLX_XF_RECV_REDUCE = 2,
	COLLX_XF_COPY = 3,
	COLLX_XF_SCALE = 4,
};

#define COLLX_XF_MAX_DEPS	4

/**
 * struct collx_xfer - one transfer of one rank's schedule
 * @kind: enum collx_xfer_kind
 * @src: enum collx_buf_id read (SEND, COPY), else COLLX_BUF_NONE
 * @dst: enum collx_buf_id written (RECV, RECV_REDUCE, COPY, SCALE), else
 *	COLLX_BUF_NONE
 * @phase: enum collx_phase
 * @step: step within @phase
 * @ndeps: valid entries of @deps
 * @dep_sliced: bit k set: @deps[k] is a slice-wise dependency
 * @peer: the remote rank (SEND, RECV, RECV_REDUCE)
 * @count: elements; 0 is one empty slice (SEND and RECV only)
 * @src_off: first element read in @src
 * @dst_off: first element written in @dst
 * @deps: indices of earlier transfers of the same schedule
 */
struct collx_xfer {
	u8 kind;
	u8 src;
	u8 dst;
	u8 phase;
	u16 step;
	u8 ndeps;
	u8 dep_sliced;
	u32 peer;
	u64 count;
	u64 src_off;
	u64 dst_off;
	u32 deps[COLLX_XF_MAX_DEPS];
};

/**
 * struct collx_coll_args - what a schedule is built from
 * @coll: enum collx_coll
 * @algo: enum collx_algo; never COLLX_ALGO_AUTO (collx_algo_choose() first)
 * @nranks: ranks in the communicator, 1..COLLX_MAX_RANKS
 * @rank: this rank
 * @root: broadcast and reduce: the root; send and recv: the peer
 * @redop: enum collx_redop (COLLX_OP_AVG adds SCALE transfers)
 * @count: elements, with enum collx_coll's meaning for @coll
 * @inplace: the collective is in place (enum collx_coll says when:
 *	allreduce, broadcast, reduce, allgather, reduce-scatter; a barrier
 *	ignores it, and alltoall, send and recv in place are -EINVAL)
 */
struct collx_coll_args {
	u32 coll;
	u32 algo;
	u32 nranks;
	u32 rank;
	u32 root;
	u32 redop;
	u64 count;
	bool inplace;
};

/**
 * struct collx_sched - a built schedule
 * @x: the transfers, @n of them (room for @max)
 * @n: transfers built
 * @max: room in @x
 * @tmp_count: elements of COLLX_BUF_TMP the schedule uses (0: none)
 * @in_count: elements of COLLX_BUF_IN it reads or writes, at most
 * @out_count: elements of COLLX_BUF_OUT it reads or writes, at most
 */
struct collx_sched {
	struct collx_xfer *x;
	u32 n;
	u32 max;
	u64 tmp_count;
	u64 in_count;
	u64 out_count;
};

/**
 * collx_coll_supported() - can @algo run @coll
 * @coll: enum collx_coll
 * @algo: enum collx_algo, not COLLX_ALGO_AUTO
 *
 * COLLX_ALGO_P2P runs every collective of one rank (a local copy), so it
 * is "supported" for all; collx_coll_build() refuses it for collectives
 * other than send and recv on more than one rank.
 *
 * Context: any.
 * Return: 0, -EOPNOTSUPP if it cannot, -EINVAL for values out of range.
 */
int collx_coll_supported(u32 coll, u32 algo);

/**
 * collx_algo_choose() - the algorithm COLLX_ALGO_AUTO picks
 * @coll: enum collx_coll
 * @bytes: bytes of the collective's largest buffer on one rank
 * @nranks: ranks
 *
 * Thresholds are measured in the lab (Documentation/engine.md).  One rank
 * always gets COLLX_ALGO_P2P (a local copy).
 *
 * Context: any.
 * Return: an enum collx_algo other than COLLX_ALGO_AUTO.
 */
u32 collx_algo_choose(u32 coll, u64 bytes, u32 nranks);

/**
 * collx_coll_max_xfers() - room a schedule of @a needs
 * @a: the collective
 *
 * Context: any.
 * Return: an upper bound of the transfers collx_coll_build() makes, or 0
 * if @a is invalid.
 */
u32 collx_coll_max_xfers(const struct collx_coll_args *a);

/**
 * collx_coll_build() - build this rank's schedule of a collective
 * @a: the collective (validated by the caller: ranks, root, algo
 *	supported, counts that do not overflow)
 * @s: out; @s->x must have room for @s->max >= collx_coll_max_xfers(@a)
 *
 * Context: any.
 * Return: 0, -EINVAL for arguments out of range, -EOPNOTSUPP if @a->algo
 * cannot run @a->coll, -ENOSPC if @s->max is too small.
 */
int collx_coll_build(const struct collx_coll_args *a, struct collx_sched *s);

#endif /* _COLLX_CORE_COLL_H */
