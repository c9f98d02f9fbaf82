/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: what travels between modules: rdma_cm private data and control
 * messages.  Big-endian, fixed layout; COLLX_WIRE_MAGIC changes with any
 * incompatible change.  Everything here arrives from the network and is
 * checked before use.
 */
#ifndef COLLX_WIRE_H
#define COLLX_WIRE_H

#include <linux/types.h>

#define COLLX_WIRE_MAGIC	0x434c5805	/* "CLX" v5 (ASK and TELL) */
#define COLLX_WIRE_NONCE	16
#define COLLX_WIRE_PROOF	32

/**
 * struct collx_wire_req - private data of a connection request (56 bytes
 *	at most fit an rdma_cm REQ)
 * @magic: COLLX_WIRE_MAGIC
 * @nranks: ranks in the communicator
 * @src_rank: the connecting rank (the lower one)
 * @dst_rank: the rank it wants
 * @lookup: the communicator's lookup id (derived from its secret)
 * @nonce: the connecting side's fresh nonce
 */
struct collx_wire_req {
	__be32 magic;
	__be32 nranks;
	__be32 src_rank;
	__be32 dst_rank;
	__be64 lookup;
	u8 nonce[COLLX_WIRE_NONCE];
};

/**
 * struct collx_wire_rep - private data of the acceptance
 * @magic: COLLX_WIRE_MAGIC
 * @__pad: 0
 * @nonce: the accepting side's fresh nonce
 * @proof: HMAC proving the accepting side knows the secret
 */
struct collx_wire_rep {
	__be32 magic;
	__be32 __pad;
	u8 nonce[COLLX_WIRE_NONCE];
	u8 proof[COLLX_WIRE_PROOF];
};

/*
 * Every refusal carries the same reason, so that a connecting side cannot
 * tell a wrong key from a wrong rank or a communicator not made yet: it
 * tries again until its deadline.
 */
#define COLLX_REJ_NOT_NOW	1

/**
 * struct collx_wire_rej - private data of a refusal
 * @magic: COLLX_WIRE_MAGIC
 * @reason: COLLX_REJ_NOT_NOW
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
	/* struct collx_wire_abort */
	COLLX_CTRL_ABORT = 3,
	/* struct collx_wire_ask */
	COLLX_CTRL_ASK = 4,
	/* struct collx_wire_tell */
	COLLX_CTRL_TELL = 5,
};

/**
 * struct collx_wire_ready - READY: where to write into my rx staging
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_READY
 * @nslots: staging slots
 * @slot_bytes: bytes per slot
 * @rkey: key of the staging area
 * @__pad: 0
 * @iova: its address
 * @proof: (the connecting side's READY) HMAC proving it knows the secret;
 *	zero from the accepting side, which proved it in the REP
 *
 * The connecting side sends READY first, once it has checked the
 * acceptor's proof; the accepting side grants remote write on its
 * staging and answers with its own READY only after checking this one.
 */
struct collx_wire_ready {
	__be32 magic;
	__be32 type;
	__be32 nslots;
	__be32 slot_bytes;
	__be32 rkey;
	__be32 __pad;
	__be64 iova;
	u8 proof[COLLX_WIRE_PROOF];
};

/**
 * struct collx_wire_dest - DEST: write transfer @ordinal of group @seq
 *	straight into this window of my output
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_DEST
 * @seq: my receive sequence on this connection of the group
 * @ordinal: which of my receive transfers from you (0-based) it serves
 * @window: which of my DEST MRs (a later DEST for the same one replaces
 *	this window)
 * @__pad: 0
 * @rkey: key of the window's registration
 * @iova: the address of the transfer's first byte in the registration
 * @bytes: the window's length (the transfer's bytes)
 */
struct collx_wire_dest {
	__be32 magic;
	__be32 type;
	__be64 seq;
	__be32 ordinal;
	__be32 window;
	__be32 rkey;
	__be32 __pad;
	__be64 iova;
	__be64 bytes;
};

/**
 * struct collx_wire_abort - ABORT: my side of the comm failed; this is why
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_ABORT
 * @err: the errno (negative)
 * @rank: the rank blamed (COLLX_RANK_NONE: nobody)
 * @phase: enum collx_phase
 * @step: step within @phase
 * @arrived: how many of the receiver's data writes arrived here, ever
 *
 * Sent before disconnecting, so that every survivor of a failure blames
 * the rank that caused it rather than the neighbour that hung up.  A
 * destroy sends one too (naming itself, -ECONNRESET).  @arrived settles
 * writes whose acknowledgment was lost: the disconnect flushes them on
 * the receiver, but the data is here, and the peer's collective that
 * needed it completed.
 */
struct collx_wire_abort {
	__be32 magic;
	__be32 type;
	__be32 err;
	__be32 rank;
	__be32 phase;
	__be32 step;
	__be64 arrived;
};

/**
 * struct collx_wire_ask - ASK: my group stopped; whom does yours wait for?
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_ASK
 * @idle_ms: how long my group has made no progress
 * @__pad: 0
 *
 * Sent once per stall, by a rank whose timeout expired, to the peer it
 * waits for; answered with a TELL.
 */
struct collx_wire_ask {
	__be32 magic;
	__be32 type;
	__be32 idle_ms;
	__be32 __pad;
};

/* @kind of a TELL whose sender runs no collective, or waits on no peer. */
#define COLLX_WIRE_WAITS_NOTHING	0xffffffffu

/**
 * struct collx_wire_tell - TELL: whom my running group waits for
 * @magic: COLLX_WIRE_MAGIC
 * @type: COLLX_CTRL_TELL
 * @rank: that rank (COLLX_RANK_NONE: nobody)
 * @kind: what for: 0 credits, 1 data, 2 connection, 3 acknowledgements;
 *	COLLX_WIRE_WAITS_NOTHING
 * @phase: enum collx_phase of the transfer waiting
 * @step: its step
 * @idle_ms: how long my group has made no progress (0: none runs)
 * @__pad: 0
 * @written: my data writes to you that completed, ever
 * @arrived: your data writes that arrived here, ever
 *
 * With equal timeouts a rank that is not a neighbour of a dead one times
 * out with its neighbours, before their ABORTs arrive: the answer names
 * the dead rank for it.  The counters say, for the log, which side lost
 * what.
 */
struct collx_wire_tell {
	__be32 magic;
	__be32 type;
	__be32 rank;
	__be32 kind;
	__be32 phase;
	__be32 step;
	__be32 idle_ms;
	__be32 __pad;
	__be64 written;
	__be64 arrived;
};

/*
 * Immediate data of a chunk: the low 8 bits of the channel's group
 * sequence, a flag saying the chunk was written straight into the
 * receiver's output (else into a staging slot), 4 bits of a signature of
 * the op it belongs to (collective, type, operation, count, algorithm),
 * and the low 19 bits of the chunk's index among the group's chunks on
 * this channel, so the receiver can check that both sides agree on what
 * is being sent: ranks that submitted different collectives get -EPROTO,
 * not silently wrong data (15 times in 16 when the sizes agree).
 */
#define COLLX_WIRE_IMM_DIRECT	0x800000u
#define COLLX_WIRE_IMM_SIG	0x780000u
#define COLLX_WIRE_IMM_UNIT	0x07ffffu

static inline u32 collx_wire_imm(u64 seq, u32 sig, u32 unit)
{
	return (u32)(seq & 0xff) << 24 | (sig & 0xf) << 19 |
	       (unit & COLLX_WIRE_IMM_UNIT);
}

#endif /* COLLX_WIRE_H */
