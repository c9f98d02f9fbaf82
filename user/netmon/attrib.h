/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Attribution of congestion events to the collx ops in flight.
 *
 * Pure logic fed with struct netmon_event (from the ring buffer, or from a
 * synthetic list in the unit test): no BPF, no I/O.
 *
 * An op is in flight from op_start (when it begins moving data; an op only
 * queued behind another is not) to op_done.  A PFC/PAUSE frame received on a watched netdev stops this node's
 * transmissions on that priority: every op in flight at that instant gets
 * the pause, credited to the peer of its latest chunk_post (the peer its
 * sends were going to; ATTRIB_NO_PEER before any).  Paused time per op is
 * the merged pause timer per priority (a new frame reloads it, a resume
 * clears it), clipped to the op's lifetime.  CNP/CE/NAK/drop events count
 * per op and peer the same way.
 */
#ifndef COLLX_NETMON_ATTRIB_H
#define COLLX_NETMON_ATTRIB_H

#include <stdint.h>
#include <linux/types.h>
#include "netmon.h"

#define ATTRIB_NO_PEER		0xffffffffU
#define ATTRIB_MAX_PEERS	8
#define ATTRIB_MAX_INFLIGHT	1024
#define ATTRIB_RECENT		256
#define ATTRIB_MAX_SUMMARY	256

struct attrib_peer {
	uint32_t peer;
	uint64_t pauses, paused_ns, cnp, ce, nak, drops;
};

struct attrib_op {
	uint32_t comm_id, coll;
	uint64_t op_id;
	uint64_t submit_ns, start_ns, end_ns, bytes;
	int32_t status;
	int done;
	uint32_t cur_peer;
	uint64_t pauses, paused_ns, cnp, ce, nak, drops;
	uint64_t until[NETMON_NPRIO];
	uint32_t until_peer[NETMON_NPRIO];
	int npeers;
	struct attrib_peer peers[ATTRIB_MAX_PEERS];
};

/* Per comm and collective type. */
struct attrib_summary {
	uint32_t comm_id, coll;
	uint64_t ops, ops_hit, pauses, paused_ns, cnp, ce, nak, drops;
};

struct attrib {
	struct attrib_op inflight[ATTRIB_MAX_INFLIGHT];
	int ninflight;
	struct attrib_op recent[ATTRIB_RECENT];	/* ring of finished ops */
	uint64_t nrecent;			/* total ever finished */
	struct attrib_summary sum[ATTRIB_MAX_SUMMARY];
	int nsum;
	/* pause timer per priority, all watched netdevs together */
	uint64_t g_until[NETMON_NPRIO];
	uint64_t events, unattributed;		/* congestion events seen / with no op */
};

void attrib_init(struct attrib *a);
void attrib_event(struct attrib *a, const struct netmon_event *e);
/* The i-th most recently finished op (0 = newest), NULL past the end. */
const struct attrib_op *attrib_recent(const struct attrib *a, uint64_t i);
/* Paused time so far: an op's pause that is still running is cut at @now. */
uint64_t attrib_paused_now(const struct attrib_op *op, uint64_t now);

#endif
