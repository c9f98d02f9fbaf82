/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: every tunable and limit of the module in one place (as rxe's
 * rxe_param.h).  Module parameters are read through these helpers, never
 * spelled out at the point of use.
 */
#ifndef COLLX_PARAM_H
#define COLLX_PARAM_H

#include <linux/types.h>

/* main.c: module parameters */
extern unsigned short collx_listen_port;
extern unsigned int collx_comm_timeout_ms;
extern unsigned int collx_slot_kib;
extern unsigned int collx_nslots;

/* Bytes of one staging slot: one pipeline slice. */
static inline u32 collx_slot_bytes(void)
{
	return collx_slot_kib * 1024;
}

/* Staging slots per direction of a connection: slices in flight. */
static inline u32 collx_slots(void)
{
	return collx_nslots;
}

/* Bytes of one direction's staging area. */
static inline u32 collx_staging_bytes(void)
{
	return collx_slot_bytes() * collx_slots();
}

/* Bounds of the parameters, checked at load. */
#define COLLX_SLOT_KIB_MAX	1024
#define COLLX_NSLOTS_MAX	64
#define COLLX_STAGING_KIB_MAX	4096

/* Bytes of one control message buffer (READY, DEST, ABORT). */
#define COLLX_CTRL_SIZE		64

/* Gather entries of a zero-copy write: a 64 KiB slice over 4 KiB pages. */
#define COLLX_MAX_SGE		32

/*
 * FRWR MRs per connection through which a peer writes straight into our
 * outputs (one per receive transfer that is offered), and the most pages
 * one of them maps (fewer where the device allows fewer: rxe 512).
 */
#define COLLX_DEST_MRS		8
#define COLLX_DEST_MAX_PAGES	4096
/* Receives after the current one that may hold a window already. */
#define COLLX_DEST_AHEAD	2

/* rdma_cm's own per-step timeout for address and route resolution. */
#define COLLX_RESOLVE_MS	2000
/* Pause before trying a refused or failed connection again. */
#define COLLX_RETRY_MS		100
/*
 * A handshake established but not finished after this (a lost READY) is
 * dropped and made again;
 * each drop doubles the next attempt's allowance, up to 8 times this, so
 * a slow node (a debug kernel, a loaded host) still gets through.
 */
#define COLLX_HANDSHAKE_MS	5000
#define COLLX_HANDSHAKE_DOUBLINGS 3
/*
 * How long teardown waits for an ABORT to reach a peer before it cuts:
 * a few of the transport's retransmissions (rdma_cm's RoCE ACK timeout is
 * about 0.5 s), as a survivor whose last write lost its ACK learns from
 * the ABORT that the data arrived.  A live peer acknowledges in one RTT.
 */
#define COLLX_ABORT_WAIT_MS	2000
/*
 * How long a rank whose timeout expired waits for the answer of the peer
 * it waits for (whom that peer waits for), at most a quarter of the
 * comm's timeout: a live peer answers in one round trip, and the
 * fault matrix allows timeout + 1 s.
 */
#define COLLX_ASK_GRACE_MS	300
/* RC transport retries (7 = the most) and RNR retries (7 = forever). */
#define COLLX_RETRY_COUNT	7
#define COLLX_RNR_RETRY_COUNT	7

/* Slices a work item handles before it yields the CPU. */
#define COLLX_ENGINE_BUDGET	64

#endif /* COLLX_PARAM_H */
