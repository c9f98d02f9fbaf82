// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_SUBMIT: every collective on 1-rank communicators (each must
 * complete as a local copy, checked byte for byte), broken one way or
 * several, on live comms and on numbers that are none.
 */
#include <errno.h>
#include <stdio.h>

#include "plan.h"

static int submit(struct fz_thread *t, int fdi, struct fz_call *c,
		  struct fz_plan *p)
{
	uint64_t t0;
	int err;

	fz_plan_fill(p);
	fz_plan_to_submit(p, &c->st.submit);
	c->valid = p->valid;
	c->expect = p->expect;
	c->alt = p->alt;
	c->tolerate = fz_submit_tolerate(fdi, p->ci);
	snprintf(c->desc, sizeof(c->desc), "comm=%u %s send=%p recv=%p",
		 p->comm_id, p->what, (void *)p->send, (void *)p->recv);
	t0 = fz_now_ns();
	err = fz_ioctl(t, c);
	if (!err && c->out_ok)
		fz_plan_queued(t, p, fdi, c->st.submit.op_id, t0);
	else if (!err || (err == EFAULT && c->place == P_RO))
		fz_plan_unknown(p, fdi);	/* queued, or maybe */
	else
		fz_plan_drop(p);
	return err;
}

int fz_submit_valid(struct fz_thread *t, int fdi, int ci, uint32_t coll,
		    uint64_t max_bytes, uint64_t *idp)
{
	struct fz_plan p;
	struct fz_call c;
	int err;

	if (!fz_plan_valid(t, &p, ci, coll, max_bytes, false))
		return ENOMEM;
	fz_call_init(&c, FZ_SUBMIT, fdi);
	c.fixed = true;
	c.size = sizeof(c.st.submit);
	c.place = P_NORMAL;
	err = submit(t, fdi, &c, &p);
	if (!err && idp)
		*idp = c.st.submit.op_id;
	return err;
}

void fz_gen_submit(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct fz_plan p;
	struct fz_call c;
	unsigned int n, i;
	bool scratch;
	int ci;

	fz_call_init(&c, FZ_SUBMIT, fdi);
	fz_choose(t, &c);
	scratch = !fz_can_act(&c);
	pthread_mutex_lock(&fz_lock);
	ci = fz_pm(r, 950) ? fz_comm_pick(r, fdi) : -1;
	pthread_mutex_unlock(&fz_lock);
	if (!fz_plan_valid(t, &p, ci, UINT32_MAX, FZ_MAX_BUF, scratch) &&
	    !fz_plan_valid(t, &p, ci, UINT32_MAX, FZ_MAX_BUF, true))
		return;
	if (fz_pm(r, 250)) {
		n = fz_pm(r, 750) ? 1 : 2 + (unsigned int)fz_below(r, 2);
		for (i = 0; i < n; i++)
			fz_plan_break(t, &p);
		if (n > 1)
			p.expect = p.alt = -1;
	}
	if (fz_pm(r, 200))
		c.st.submit.op_id = fz_u64(r);	/* an out field: not read */
	submit(t, fdi, &c, &p);
}
