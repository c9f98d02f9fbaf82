// SPDX-License-Identifier: GPL-2.0
/* Attribution of congestion events to collx ops: see attrib.h. */
#include <string.h>
#include "attrib.h"

void attrib_init(struct attrib *a)
{
	memset(a, 0, sizeof(*a));
}

static struct attrib_op *find_op(struct attrib *a, uint32_t comm, uint64_t op)
{
	int i;

	for (i = 0; i < a->ninflight; i++)
		if (a->inflight[i].comm_id == comm && a->inflight[i].op_id == op)
			return &a->inflight[i];
	return NULL;
}

static struct attrib_op *new_op(struct attrib *a, uint32_t comm, uint64_t op, uint64_t ts)
{
	struct attrib_op *o;
	int p;

	if (a->ninflight == ATTRIB_MAX_INFLIGHT)
		return NULL;
	o = &a->inflight[a->ninflight++];
	memset(o, 0, sizeof(*o));
	o->comm_id = comm;
	o->op_id = op;
	o->coll = ~0U;
	o->submit_ns = ts;
	o->cur_peer = ATTRIB_NO_PEER;
	for (p = 0; p < NETMON_NPRIO; p++)
		o->until_peer[p] = ATTRIB_NO_PEER;
	return o;
}

static struct attrib_peer *peer_of(struct attrib_op *o, uint32_t peer)
{
	int i;

	for (i = 0; i < o->npeers; i++)
		if (o->peers[i].peer == peer)
			return &o->peers[i];
	if (o->npeers == ATTRIB_MAX_PEERS)
		return &o->peers[ATTRIB_MAX_PEERS - 1];	/* overflow: last slot */
	o->peers[o->npeers].peer = peer;
	return &o->peers[o->npeers++];
}

/*
 * An op is in flight from op_start, when it begins moving data; an op that
 * is only queued behind another (submitted, not started) is not slowed by
 * the fabric yet.
 */
static uint64_t op_begin(const struct attrib_op *o)
{
	return o->start_ns ? o->start_ns : UINT64_MAX;
}

/* Take back the part of priority @p's pause that lies after @t. */
static void cut_pause(struct attrib_op *o, int p, uint64_t t)
{
	uint64_t rest;

	if (o->until[p] <= t)
		return;
	rest = o->until[p] - t;
	o->paused_ns -= rest;
	peer_of(o, o->until_peer[p])->paused_ns -= rest;
	o->until[p] = t;
}

static struct attrib_summary *summary_of(struct attrib *a, uint32_t comm, uint32_t coll)
{
	int i;

	for (i = 0; i < a->nsum; i++)
		if (a->sum[i].comm_id == comm && a->sum[i].coll == coll)
			return &a->sum[i];
	if (a->nsum == ATTRIB_MAX_SUMMARY)
		return NULL;
	memset(&a->sum[a->nsum], 0, sizeof(a->sum[0]));
	a->sum[a->nsum].comm_id = comm;
	a->sum[a->nsum].coll = coll;
	return &a->sum[a->nsum++];
}

static void finish_op(struct attrib *a, struct attrib_op *o, const struct netmon_event *e)
{
	struct attrib_summary *s;
	int p;

	o->end_ns = e->ts;
	o->status = e->status;
	o->done = 1;
	if (e->coll != ~0U)
		o->coll = e->coll;
	if (!o->bytes)
		o->bytes = e->a;
	for (p = 0; p < NETMON_NPRIO; p++)
		cut_pause(o, p, e->ts);
	s = summary_of(a, o->comm_id, o->coll);
	if (s) {
		s->ops++;
		if (o->pauses || o->cnp || o->ce || o->nak || o->drops)
			s->ops_hit++;
		s->pauses += o->pauses;
		s->paused_ns += o->paused_ns;
		s->cnp += o->cnp;
		s->ce += o->ce;
		s->nak += o->nak;
		s->drops += o->drops;
	}
	a->recent[a->nrecent % ATTRIB_RECENT] = *o;
	a->nrecent++;
	*o = a->inflight[--a->ninflight];
}

static void pause_event(struct attrib *a, const struct netmon_event *e)
{
	int p = e->type == EV_PAUSE ? -1 : (int)e->a;
	int lo = p < 0 ? 0 : p, hi = p < 0 ? NETMON_NPRIO - 1 : p;
	uint64_t end = e->ts + e->c;
	int i, q, hit = 0;

	if (p >= NETMON_NPRIO)
		return;
	for (q = lo; q <= hi; q++)
		a->g_until[q] = end;
	for (i = 0; i < a->ninflight; i++) {
		struct attrib_op *o = &a->inflight[i];
		struct attrib_peer *pp;

		if (op_begin(o) > e->ts)
			continue;
		hit = 1;
		if (e->b)
			o->pauses++;
		pp = peer_of(o, o->cur_peer);
		if (e->b)
			pp->pauses++;
		for (q = lo; q <= hi; q++) {
			cut_pause(o, q, e->ts);
			o->paused_ns += e->c;
			pp->paused_ns += e->c;
			o->until[q] = end;
			o->until_peer[q] = o->cur_peer;
		}
	}
	a->events++;
	if (!hit)
		a->unattributed++;
}

static void signal_event(struct attrib *a, const struct netmon_event *e)
{
	int i, hit = 0;

	for (i = 0; i < a->ninflight; i++) {
		struct attrib_op *o = &a->inflight[i];
		struct attrib_peer *pp;

		if (op_begin(o) > e->ts)
			continue;
		hit = 1;
		pp = peer_of(o, o->cur_peer);
		switch (e->type) {
		case EV_CNP: o->cnp++; pp->cnp++; break;
		case EV_CE: o->ce++; pp->ce++; break;
		case EV_NAK: o->nak++; pp->nak++; break;
		case EV_DROP: o->drops++; pp->drops++; break;
		}
	}
	a->events++;
	if (!hit)
		a->unattributed++;
}

void attrib_event(struct attrib *a, const struct netmon_event *e)
{
	struct attrib_op *o;
	int p;

	switch (e->type) {
	case EV_OP_SUBMIT:
		o = find_op(a, e->comm_id, e->op_id);
		if (!o)
			o = new_op(a, e->comm_id, e->op_id, e->ts);
		if (o)
			o->coll = e->coll;
		break;
	case EV_OP_START:
		o = find_op(a, e->comm_id, e->op_id);
		if (!o)
			o = new_op(a, e->comm_id, e->op_id, e->ts);
		if (!o)
			break;
		o->start_ns = e->ts;
		o->bytes = e->a;
		if (e->coll != ~0U)
			o->coll = e->coll;
		/* a pause already running when the op starts delays it too */
		for (p = 0; p < NETMON_NPRIO; p++) {
			if (a->g_until[p] > e->ts) {
				o->paused_ns += a->g_until[p] - e->ts;
				peer_of(o, ATTRIB_NO_PEER)->paused_ns += a->g_until[p] - e->ts;
				o->until[p] = a->g_until[p];
				o->until_peer[p] = ATTRIB_NO_PEER;
			}
		}
		break;
	case EV_CHUNK_POST:
		o = find_op(a, e->comm_id, e->op_id);
		if (o)
			o->cur_peer = e->peer;
		break;
	case EV_OP_DONE:
		o = find_op(a, e->comm_id, e->op_id);
		if (o)
			finish_op(a, o, e);
		break;
	case EV_PFC:
	case EV_PAUSE:
		if (e->dir == NETMON_RX)
			pause_event(a, e);
		break;
	case EV_CNP:
	case EV_CE:
	case EV_NAK:
	case EV_DROP:
		signal_event(a, e);
		break;
	}
}

const struct attrib_op *attrib_recent(const struct attrib *a, uint64_t i)
{
	if (i >= a->nrecent || i >= ATTRIB_RECENT)
		return NULL;
	return &a->recent[(a->nrecent - 1 - i) % ATTRIB_RECENT];
}

uint64_t attrib_paused_now(const struct attrib_op *o, uint64_t now)
{
	uint64_t v = o->paused_ns;
	int p;

	if (o->done)
		return v;
	for (p = 0; p < NETMON_NPRIO; p++)
		if (o->until[p] > now)
			v -= o->until[p] - now;
	return v;
}
