/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One collective as the fuzzer plans it: its fields, its buffers (slots
 * of the data arena with canaries around them, or scratch memory nobody
 * checks when the call cannot queue anything), and what its completion
 * must look like.  Shared by SUBMIT and SUBMIT_GROUP.
 */
#ifndef FUZZ_PLAN_H
#define FUZZ_PLAN_H

#include "fuzz.h"

#define FZ_MARGIN	64	/* canary bytes around every buffer */
#define FZ_MARGIN_BYTE	0xc3

struct fz_plan {
	uint32_t comm_id, nranks, coll, dtype, redop, root, flags, reserved;
	int ci;
	uint32_t cgen;
	uint64_t count, in_bytes, out_bytes;
	size_t esize;
	bool in_place, p2p, scratch;
	uint8_t *send, *recv;		/* as submitted */
	uint8_t *send_buf, *recv_buf;	/* the buffers in the slots */
	uint8_t *send_slot, *recv_slot;
	size_t send_pages, recv_pages;
	const uint8_t *ro_src;
	uint32_t pat;
	bool checkable, expect_ok;
	bool valid;		/* the kernel must accept it */
	int expect, alt;	/* one defect's errno, or -1 */
	char what[96];
};

/*
 * A valid collective on comm @ci (a 1-rank one: every collective is a
 * local copy); @coll UINT32_MAX picks one.  With @scratch its buffers are
 * scratch memory (the call cannot succeed), else slots.  False when the
 * arena has no room.
 */
bool fz_plan_valid(struct fz_thread *t, struct fz_plan *p, int ci,
		   uint32_t coll, uint64_t max_bytes, bool scratch);
/* Break it in one random way whose errno is known (p->expect). */
void fz_plan_break(struct fz_thread *t, struct fz_plan *p);
/* Fill its buffers and margins; write it as a struct collx_submit. */
void fz_plan_fill(const struct fz_plan *p);
void fz_plan_to_submit(const struct fz_plan *p, struct collx_submit *s);
/* Give its slots back (the call failed). */
void fz_plan_drop(struct fz_plan *p);
/* It was queued as op @id on @fdi: remember it (takes its slots). */
void fz_plan_queued(struct fz_thread *t, struct fz_plan *p, int fdi,
		    uint64_t id, uint64_t t_submit);
/* A submit whose fate is unknown (its struct could not be written). */
void fz_plan_unknown(struct fz_plan *p, int fdi);
/* Errnos a valid submit may meet on @fdi besides resource ones. */
const int *fz_submit_tolerate(int fdi, int ci);

#endif /* FUZZ_PLAN_H */
