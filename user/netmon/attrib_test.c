// SPDX-License-Identifier: GPL-2.0
/* Unit test of the attribution logic with synthetic events (no BPF). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attrib.h"

static int failures;

#define EXPECT(cond) do { \
	if (!(cond)) { \
		printf("not ok - %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

static struct attrib A;

static void ev(uint64_t ts, uint32_t type, uint32_t comm, uint64_t op, uint32_t peer,
	       uint64_t a, uint64_t b, uint64_t c)
{
	struct netmon_event e;

	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.type = type;
	e.comm_id = comm;
	e.op_id = op;
	e.peer = peer;
	e.coll = type == EV_OP_SUBMIT ? 0 : ~0U;
	e.dir = NETMON_RX;
	e.a = a;
	e.b = b;
	e.c = c;
	attrib_event(&A, &e);
}

static const struct attrib_op *find_done(uint32_t comm, uint64_t op)
{
	const struct attrib_op *o;
	uint64_t i;

	for (i = 0; (o = attrib_recent(&A, i)); i++)
		if (o->comm_id == comm && o->op_id == op)
			return o;
	return NULL;
}

static const struct attrib_peer *peer(const struct attrib_op *o, uint32_t p)
{
	int i;

	for (i = 0; o && i < o->npeers; i++)
		if (o->peers[i].peer == p)
			return &o->peers[i];
	return NULL;
}

int main(void)
{
	const struct attrib_op *o1, *o2, *o3;
	uint64_t paused_now;

	attrib_init(&A);
	/* op 1 of comm 7: 1000..5000; op 2: 2000..3000; op 3 of comm 8 starts at 9000 */
	ev(900, EV_OP_SUBMIT, 7, 1, 0, 0, 0, 0);
	ev(1000, EV_OP_START, 7, 1, 0, 4096, 0, 0);
	ev(1100, EV_CHUNK_POST, 7, 1, 1, 0, 0, 0);
	/* pause before op 2: only op 1, peer 1, 300 ns */
	ev(1500, EV_PFC, 0, 0, 0, 3, 0xffff, 300);
	ev(1900, EV_OP_SUBMIT, 7, 2, 0, 0, 0, 0);
	ev(2000, EV_OP_START, 7, 2, 0, 8192, 0, 0);
	ev(2050, EV_CHUNK_POST, 7, 2, 2, 0, 0, 0);
	/* pause on prio 5 at 2100 for 1000 ns, resumed at 2400: 300 ns each */
	ev(2100, EV_PFC, 0, 0, 0, 5, 0x100, 1000);
	ev(2400, EV_PFC, 0, 0, 0, 5, 0, 0);
	/* a pause reloaded before it ran out: 2500+400, again at 2700+400 -> 600 */
	ev(2500, EV_PFC, 0, 0, 0, 3, 0x10, 400);
	ev(2700, EV_PFC, 0, 0, 0, 3, 0x10, 400);
	ev(2800, EV_CNP, 0, 0, 0, 0x11, 0x81, 0);
	/* op 2 ends at 3000, cutting its pause (until 3100) to 300 of 600 */
	ev(3000, EV_OP_DONE, 7, 2, 0, 8192, 1000, 0);
	ev(3500, EV_DROP, 0, 0, 0, 2, 1, 0);
	ev(5000, EV_OP_DONE, 7, 1, 0, 4096, 4000, 0);
	/* a pause with no op in flight */
	ev(8000, EV_PFC, 0, 0, 0, 3, 0xffff, 2000);
	/* op 3 starts while that pause runs (until 10000): inherits 1000 ns */
	ev(9000, EV_OP_START, 8, 1, 0, 64, 0, 0);
	paused_now = attrib_paused_now(&A.inflight[0], 9500);
	EXPECT(paused_now == 500);
	ev(12000, EV_OP_DONE, 8, 1, 0, 64, 3000, 0);

	o1 = find_done(7, 1);
	o2 = find_done(7, 2);
	o3 = find_done(8, 1);
	EXPECT(o1 && o2 && o3);
	if (!o1 || !o2 || !o3)
		return 1;
	/* op 1: pauses at 1500, 2100, 2500, 2700 (the resume is not a pause) */
	EXPECT(o1->pauses == 4);
	EXPECT(o1->paused_ns == 300 + 300 + 600);
	EXPECT(o1->cnp == 1 && o1->drops == 1);
	EXPECT(peer(o1, 1) && peer(o1, 1)->pauses == 4 && peer(o1, 1)->paused_ns == 1200);
	EXPECT(o1->end_ns == 5000 && o1->start_ns == 1000 && o1->coll == 0);
	/* op 2: 2100 (300 after the resume) and 2500..3100 cut at 3000 (500) */
	EXPECT(o2->pauses == 3);
	EXPECT(o2->paused_ns == 300 + 500);
	EXPECT(peer(o2, 2) && peer(o2, 2)->paused_ns == 800 && peer(o2, 2)->cnp == 1);
	EXPECT(o2->drops == 0);
	/* op 3: no frame during it, 1000 ns of an earlier pause, no peer yet */
	EXPECT(o3->pauses == 0 && o3->paused_ns == 1000);
	EXPECT(peer(o3, ATTRIB_NO_PEER) && peer(o3, ATTRIB_NO_PEER)->paused_ns == 1000);
	/* summaries per comm and collective */
	EXPECT(A.nsum == 2);
	EXPECT(A.sum[0].comm_id == 7 && A.sum[0].ops == 2 && A.sum[0].ops_hit == 2 &&
	       A.sum[0].pauses == 7 && A.sum[0].paused_ns == 2000);
	EXPECT(A.events == 8 && A.unattributed == 1);
	EXPECT(A.ninflight == 0);
	if (!failures)
		printf("ok - attribution: 3 ops, 7 pauses, exact paused time per op and peer\n");
	return failures ? 1 : 0;
}
