// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_SUBMIT_GROUP: groups of valid collectives (each checked like
 * a single submit), the largest group of barriers, and groups with one
 * defect: a count or an entry size out of range, entries that cannot be
 * read or written back, one bad entry, one entry on another comm.  All
 * or nothing: a failed group queues nothing (a record for any of its
 * entries is a finding) and names the bad entry in error_index.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "plan.h"

#define SENTINEL_INDEX	0xfffffffeU
#define MAX_PLANS	64

enum gdefect {
	G_NONE, G_COUNT0, G_COUNT_MAX, G_COUNT_HUGE, G_ESIZE_SHORT,
	G_ESIZE_DIRTY, G_ENTRIES_BAD, G_ENTRIES_RO, G_ENTRIES_CROSS, G_ENTRY,
	G_MISMATCH, G_TWO_COMMS, G_FLAGS, G_RESERVED, G_NR
};

static const char *const gdefect_names[G_NR] = {
	"none", "count=0", "count=MAX_GROUP+1", "count huge",
	"entry_size short", "an entry's tail dirty", "entries=bad",
	"entries read-only", "entries into a guard page", "one bad entry",
	"an entry's size!=entry_size", "entries on two comms", "flags!=0",
	"__reserved!=0",
};

struct group {
	struct fz_plan plans[MAX_PLANS];
	unsigned int nplans;	/* entries with a plan (the rest barriers) */
	uint32_t count;		/* entries written */
	uint32_t entry_size;
	uint32_t bad;		/* the entry that is wrong, for error_index */
	uint32_t comm2_id;	/* G_TWO_COMMS: the other comm */
	bool ro, rw;		/* entries read-only / read back after */
	uint8_t *entries;
};

static void barrier_entry(struct collx_submit *s, uint32_t comm_id)
{
	memset(s, 0, sizeof(*s));
	s->comm_id = comm_id;
	s->coll = COLLX_COLL_BARRIER;
}

/* Write every entry at g->entries (@room bytes there). */
static void write_entries(struct fz_thread *t, struct group *g,
			  enum gdefect gd, uint32_t comm_id, uint64_t room)
{
	uint32_t es = g->entry_size, j;
	struct collx_submit s;
	uint64_t off, n;
	uint8_t *e;

	for (j = 0; j < g->count; j++) {
		off = (uint64_t)j * es;
		if (off >= room)
			break;
		e = g->entries + off;
		if (j < g->nplans) {
			memset(&s, 0, sizeof(s));
			fz_plan_to_submit(&g->plans[j], &s);
		} else {
			barrier_entry(&s, gd == G_TWO_COMMS && j == g->bad ?
					  g->comm2_id : comm_id);
		}
		s.size = es;
		if (gd == G_MISMATCH && j == g->bad)
			s.size = es + (fz_pm(&t->rng, 500) ? 1 : -1) *
				      (1 + (uint32_t)fz_below(&t->rng, 8));
		n = es < room - off ? es : room - off;
		memset(e, 0, n);
		memcpy(e, &s, sizeof(s) < n ? sizeof(s) : n);
		if (gd == G_ESIZE_DIRTY && j == g->bad && n > sizeof(s))
			e[sizeof(s) + fz_below(&t->rng, n - sizeof(s))] = 0x77;
	}
}

static void drop_all(struct group *g)
{
	unsigned int j;

	for (j = 0; j < g->nplans; j++)
		fz_plan_drop(&g->plans[j]);
}

void fz_gen_group(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	static __thread struct group g;
	struct collx_submit_group *sg;
	enum gdefect gd = G_NONE;
	struct fz_call c;
	int ci, ci2 = -1, err;
	uint64_t t0, room = t->big_len, id;
	uint32_t ks = sizeof(struct collx_submit), comm_id, j, n;
	bool scratch, big = false;
	const char *what;

	pthread_mutex_lock(&fz_lock);
	ci = fz_comm_pick(r, fdi);
	if (ci >= 0) {
		comm_id = fz_comms[ci].id;
		for (j = 0; j < 4 && (ci2 < 0 || ci2 == ci); j++)
			ci2 = fz_comm_pick(r, fdi);
	}
	pthread_mutex_unlock(&fz_lock);
	if (ci < 0) {
		fz_gen_submit(t, fdi);
		return;
	}
	memset(&g, 0, sizeof(g));
	fz_call_init(&c, FZ_SUBMIT_GROUP, fdi);
	sg = &c.st.group;
	fz_choose(t, &c);
	if (fz_pm(r, 350))
		gd = (enum gdefect)(1 + fz_below(r, G_NR - 1));
	if (gd == G_TWO_COMMS && (ci2 < 0 || ci2 == ci))
		gd = G_ENTRY;
	if (gd == G_TWO_COMMS) {
		pthread_mutex_lock(&fz_lock);
		g.comm2_id = fz_comms[ci2].id;
		pthread_mutex_unlock(&fz_lock);
		/* two entries of the model with one handle: a shared fd's */
		if (g.comm2_id == comm_id)
			gd = G_ENTRY;
	}
	n = fz_pm(r, 880) ? 1 + (uint32_t)fz_below(r, 8) :
	    fz_pm(r, 800) ? 9 + (uint32_t)fz_below(r, MAX_PLANS - 8) :
	    COLLX_MAX_GROUP;
	if (gd == G_COUNT_MAX)
		n = COLLX_MAX_GROUP + 1;
	big = n > MAX_PLANS;
	if (gd == G_TWO_COMMS && n < 2)
		n = 2;
	g.count = n;
	g.entry_size = ks;
	if (gd == G_NONE && fz_pm(r, 100))
		g.entry_size = ks + 8 * (1 + (uint32_t)fz_below(r, 8));
	else if (gd == G_ESIZE_DIRTY)
		g.entry_size = ks + 1 + (uint32_t)fz_below(r, 64);
	else if (gd == G_ESIZE_SHORT)
		g.entry_size = (uint32_t)fz_below(r, ks);
	g.bad = (uint32_t)fz_below(r, n);
	if (gd == G_TWO_COMMS && !g.bad)
		g.bad = 1;
	g.rw = gd != G_ENTRIES_RO && gd != G_ENTRIES_BAD &&
	       gd != G_ENTRIES_CROSS;
	scratch = !fz_can_act(&c) || !g.rw;
	g.nplans = big ? 0 : n;
	/*
	 * With a defect to find, no send or recv: with root 0 they may name
	 * this very rank (always on one rank), an EINVAL of their own at an
	 * entry before the bad one.
	 */
	for (j = 0; j < g.nplans; j++) {
		uint32_t coll = gd == G_NONE ? UINT32_MAX :
				(uint32_t)fz_below(r, COLLX_COLL_SEND);
		/* The other comm's entry stays on it, scratch or not. */
		int cj = gd == G_TWO_COMMS && j == g.bad ? ci2 : ci;

		if (!fz_plan_valid(t, &g.plans[j], cj, coll, FZ_MAX_BUF / 8,
				   scratch))
			fz_plan_valid(t, &g.plans[j], cj, coll, 4096, true);
	}
	if (gd == G_ENTRY && g.bad < g.nplans) {
		fz_plan_break(t, &g.plans[g.bad]);
		c.expect = g.plans[g.bad].expect;
		c.alt = g.plans[g.bad].alt;
	}
	for (j = 0; j < g.nplans; j++)
		fz_plan_fill(&g.plans[j]);

	what = "rw";
	g.entries = t->big;
	switch (gd) {
	case G_ENTRIES_BAD:
		g.entries = (uint8_t *)(uintptr_t)fz_ptr_bad(r, &what);
		room = 0;
		c.expect = EFAULT;
		c.alt = EINVAL;
		break;
	case G_ENTRIES_RO:
		what = "read-only";
		g.ro = true;
		/* The entries take t->arg_ro: the struct must not. */
		if (c.place == P_RO)
			c.place = P_NORMAL;
		if (g.count * (uint64_t)g.entry_size > FZ_PAGE)
			g.count = FZ_PAGE / g.entry_size;
		if (!g.count)
			g.count = 1;
		g.entries = t->arg_ro;
		room = FZ_PAGE;
		c.expect = EFAULT;
		break;
	case G_ENTRIES_CROSS:
		what = "crossing";
		room = (uint64_t)g.count * g.entry_size;
		room -= 1 + fz_below(r, g.entry_size);
		g.entries = t->big + t->big_len - room;
		c.expect = EFAULT;
		break;
	default:
		break;
	}
	if (g.ro && mprotect(t->arg_ro, FZ_PAGE, PROT_READ | PROT_WRITE))
		return;
	if (room)
		write_entries(t, &g, gd, comm_id, room);
	if (g.ro)
		mprotect(t->arg_ro, FZ_PAGE, PROT_READ);

	sg->count = g.count;
	sg->entry_size = g.entry_size;
	sg->entries = (uint64_t)(uintptr_t)g.entries;
	sg->error_index = SENTINEL_INDEX;
	switch (gd) {
	case G_COUNT0:
		sg->count = 0;
		c.expect = EINVAL;
		break;
	case G_COUNT_HUGE:
		sg->count = 0x80000000U | fz_u32(r);
		c.expect = EINVAL;
		break;
	case G_COUNT_MAX:
	case G_ESIZE_SHORT:
	case G_MISMATCH:
	case G_TWO_COMMS:
		c.expect = EINVAL;
		break;
	case G_ESIZE_DIRTY:
		c.expect = E2BIG;
		break;
	case G_FLAGS:
		sg->flags = fz_u32(r) | 1;
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
		break;
	case G_RESERVED:
		sg->__reserved = fz_u32(r) | 1;
		c.expect = EINVAL;
		break;
	default:
		break;
	}
	c.valid = gd == G_NONE;
	for (j = 0; j < g.nplans; j++)
		c.valid = c.valid && g.plans[j].valid;
	c.tolerate = fz_submit_tolerate(fdi, ci);
	snprintf(c.desc, sizeof(c.desc), "comm=%u count=%u entry_size=%u entries=%s %s%s (entry %u)",
		 comm_id, sg->count, g.entry_size, what,
		 big ? "barriers, " : "", gdefect_names[gd], g.bad);
	t0 = fz_now_ns();
	err = fz_ioctl(t, &c);

	if (c.out_ok &&
	    c.size >= offsetofend(struct collx_submit_group, error_index)) {
		uint32_t ei = sg->error_index;

		if (!err && ei != sg->count)
			fz_finding(t, F_ORACLE, "SUBMIT_GROUP ok but error_index=%u of %u",
				   ei, sg->count);
		else if (err && ei != SENTINEL_INDEX && ei > sg->count)
			fz_finding(t, F_ORACLE, "SUBMIT_GROUP failed with error_index=%u of %u",
				   ei, sg->count);
		else if (err && err == c.expect && c.delivered &&
			 (gd == G_ENTRY || gd == G_MISMATCH ||
			  gd == G_TWO_COMMS || gd == G_ESIZE_DIRTY) &&
			 ei != g.bad)
			fz_finding(t, F_ORACLE, "SUBMIT_GROUP: %s at entry %u, error_index=%u",
				   gdefect_names[gd], g.bad, ei);
	}
	if (err) {
		drop_all(&g);
		return;
	}
	/* Queued: every entry, with its op_id written back. */
	for (j = 0; j < sg->count && j < g.count; j++) {
		struct fz_plan bar;

		if (!g.rw) {
			if (j < g.nplans)
				fz_plan_unknown(&g.plans[j], fdi);
			continue;
		}
		memcpy(&id, g.entries + (uint64_t)j * g.entry_size +
		       offsetof(struct collx_submit, op_id), sizeof(id));
		if (j < g.nplans) {
			fz_plan_queued(t, &g.plans[j], fdi, id, t0);
			continue;
		}
		memset(&bar, 0, sizeof(bar));
		bar.ci = ci;
		bar.cgen = fz_comms[ci].gen;
		bar.comm_id = comm_id;
		bar.nranks = 1;
		bar.coll = COLLX_COLL_BARRIER;
		bar.valid = bar.expect_ok = true;
		fz_plan_queued(t, &bar, fdi, id, t0);
	}
}
