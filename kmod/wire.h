/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: what travels between modules: rdma_cm private data and control
 * messages.  Big-endian, fixed layout; COLLX_WIRE_MAGIC changes with any
 * incompatible change.
 */
#ifndef COLLX_WIRE_H
#define COLLX_WIRE_H

#include <linux/types.h>

#define COLLX_WIRE_MAGIC	0x434c5802	/* "CLX" v2 */

/**
 * struct collx_wire_req - private data of a connection request
 * @magic: COLLX_WIRE_MAGIC
 * @nranks: ranks in the communicator
 * @src_rank: the connecting rank
 * @dst_rank: the rank it wants (its next)
 * @comm_key: the communicator's key
 */
struct collx_wire_req {
	__be32 magic;
	__be32 nranks;
	__be32 src_rank;
	__be32 dst_rank;
	__be64 comm_key;
};

/* Why a connection request was refused. */
enum collx_wire_rej_reason {
	/* No such communicator here yet: try again until the timeout. */
	COLLX_REJ_NOT_READY = 1,
	/* The communicator exists but disagrees (ranks): give up. */
	COLLX_REJ_MISMATCH = 2,
	/* That rank's incoming connection is already taken or failed. */
	COLLX_REJ_BUSY = 3,
	/* The accepting side could not set the connection up. */
	COLLX_REJ_NO_RESOURCES = 4,
};

/**
 * struct collx_wire_rej - private data of a refusal
 * @magic: COLLX_WIRE_MAGIC
 * @reason: enum collx_wire_rej_reason
 */
struct collx_wire_rej {
	__be32 magic;
	__be32 reason;
};

/* What a control SEND carries (the word after the magic). */
enum collx_wire_ctrl_type {
	/* struct collx_wire_ready */
	COLLX_CTRL_READY = 1,
	/* struct collx_wire_dest */
	COLLX_CTRL_DEST = 2,
};

/**
 * struct collx_wire_ready - READY, sent by the accepting side
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_READY
 * @nslots: staging slots
 * @slot_bytes: bytes per slot
 * @rkey: key of the staging area
 * @iova: its address
 */
struct collx_wire_ready {
	__be32 magic;
	__be32 type;
	__be32 nslots;
	__be32 slot_bytes;
	__be32 rkey;
	__be32 __pad;
	__be64 iova;
};

/**
 * struct collx_wire_dest - DEST: write this op's all-gather data straight
 *	into this window of my registered output; sent by the accepting
 *	side, one per window
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_DEST
 * @seq: the op's sequence number on the comm
 * @rkey: key of the window's registration
 * @window: the window's index (its first byte is @window * @stride)
 * @start: offset of the window's first byte in the output
 * @len: the window's length in bytes
 * @iova: the address of its first byte in the registration
 * @stride: bytes between window starts
 */
struct collx_wire_dest {
	__be32 magic;
	__be32 type;
	__be64 seq;
	__be32 rkey;
	__be32 window;
	__be64 start;
	__be64 len;
	__be64 iova;
	__be64 stride;
};

/*
 * Immediate data of a chunk: the low 8 bits of the op's sequence number,
 * a flag saying the chunk was written straight into the receiver's output
 * (else into a staging slot), and the low 23 bits of the chunk's index in
 * the op, so the receiver can check that both sides agree on what is
 * being sent.
 */
#define COLLX_WIRE_IMM_DIRECT	0x800000u
#define COLLX_WIRE_IMM_UNIT	0x7fffffu

static inline u32 collx_wire_imm(u64 seq, u32 unit)
{
	return (u32)(seq & 0xff) << 24 | (unit & COLLX_WIRE_IMM_UNIT);
}

#endif /* COLLX_WIRE_H */
