// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_MR_REG and COLLX_IOC_MR_DEREG: registrations of real memory
 * (private and shared mappings, aligned or not), of read-only and of
 * unmapped memory, of absurd lengths, of "dma-bufs" that are not, and
 * with flags and reserved fields set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static const int busy_errs[] = { EBUSY, 0 };
static const int busy_gone_errs[] = { EBUSY, ENOENT, 0 };

/*
 * Deregistrations by number in flight (fz_gen_dereg()), as for comms in
 * gen_comm.c: a registration recorded meanwhile under the id one names
 * may be the one it removes (MR_REG returned before the MR_DEREG, and the
 * model recorded it after the MR_DEREG looked), so it is busy until none
 * is in flight.  And ids removed by number that no registration of the
 * model had: another thread's MR_REG handed them out and has not
 * recorded them yet; that registration is gone, its id free again.
 */
#define MAX_BYNUM	(2 * FZ_MAX_THREADS)
#define MAX_UNSEEN	64
static struct fz_key bynum[MAX_BYNUM], unseen[MAX_UNSEEN];
static unsigned int nbynum, nunseen;

static bool bynum_pending(int fdi, uint32_t id)
{
	return fz_key_has(bynum, nbynum, fdi, id);
}

/*
 * The registration MR_REG returned, recorded: its index, -1 with no room
 * to record it, -2 when it is gone already (its fd closed, or removed by
 * number meanwhile).
 */
static int add_mr(struct fz_thread *t, struct fz_call *c)
{
	const struct collx_mr_reg *m = &c->st.reg;
	int i, mi;

	if (!c->out_ok)
		return -2;
	pthread_mutex_lock(&fz_lock);
	if (!fz_fds[c->fdi].used || fz_fds[c->fdi].gen != c->fd_gen ||
	    fz_key_take(unseen, &nunseen, c->fdi, m->mr_id)) {
		/* the fd was closed meanwhile: the registration went too */
		pthread_mutex_unlock(&fz_lock);
		return -2;
	}
	/* A busy one is being deregistered: its id may come back now. */
	for (i = 0; i < FZ_MAX_MRS; i++)
		if (fz_mrs[i].used && !fz_mrs[i].busy &&
		    fz_mrs[i].fdi == c->fdi &&
		    fz_mrs[i].id == m->mr_id && !fz_fds[c->fdi].shared)
			fz_finding(t, F_IDS, "MR_REG returned mr_id %u, already a live registration of fd%d",
				   m->mr_id, c->fdi);
	mi = fz_mr_add(c->fdi, m->mr_id, m->addr, m->length);
	if (mi >= 0 && bynum_pending(c->fdi, m->mr_id))
		fz_mrs[mi].busy = fz_mrs[mi].bynum = true;
	pthread_mutex_unlock(&fz_lock);
	return mi;
}

int fz_reg(struct fz_thread *t, int fdi, uint8_t *p, uint64_t len)
{
	struct fz_call c;
	int mi;

	fz_call_init(&c, FZ_MR_REG, fdi);
	c.st.reg.addr = (uint64_t)(uintptr_t)p;
	c.st.reg.length = len;
	c.fixed = true;
	c.size = sizeof(c.st.reg);
	c.place = P_NORMAL;
	c.valid = true;
	snprintf(c.desc, sizeof(c.desc), "addr=%p length=%llu", (void *)p,
		 (unsigned long long)len);
	if (fz_ioctl(t, &c))
		return -1;
	mi = add_mr(t, &c);
	if (mi == -1) {
		/* No room to remember it: give it back at once. */
		struct fz_call d;

		fz_call_init(&d, FZ_MR_DEREG, fdi);
		d.st.dereg.mr_id = c.st.reg.mr_id;
		d.fixed = true;
		d.size = sizeof(d.st.dereg);
		d.place = P_NORMAL;
		d.valid = true;
		snprintf(d.desc, sizeof(d.desc), "mr=%u", d.st.dereg.mr_id);
		fz_ioctl(t, &d);
	}
	return mi;
}

/* A range of real memory: the data arena or the shared mapping. */
static void real_range(struct fz_rng *r, uint8_t *base, size_t len,
		       __u64 *addr, __u64 *length)
{
	uint64_t off = fz_below(r, len / FZ_PAGE) * FZ_PAGE, max, cap;

	if (fz_pm(r, 150))
		off += 1 + fz_below(r, FZ_PAGE - 1);
	max = len - off;
	/* One draw: a second one could raise max past the region's end. */
	cap = fz_pm(r, 900) ? 262144U : 4U << 20;
	if (max > cap)
		max = cap;
	*length = 1 + fz_below(r, max);
	*addr = (uint64_t)(uintptr_t)(base + off);
}

void fz_gen_reg(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_mr_reg *m;
	struct fz_call c;
	unsigned int k = (unsigned int)fz_below(r, 1000);
	const char *what = "data";
	uint64_t dirty;

	if (fz_fds[fdi].live_mrs >= FZ_MRS_SOFT) {
		fz_gen_dereg(t, fdi);
		return;
	}
	fz_call_init(&c, FZ_MR_REG, fdi);
	m = &c.st.reg;
	real_range(r, fz_mem.data, fz_mem.data_len, &m->addr, &m->length);
	if (k < 520) {
		c.valid = true;
	} else if (k < 600) {
		what = "shared";
		real_range(r, fz_mem.shm, fz_mem.shm_len, &m->addr, &m->length);
		c.valid = true;
	} else if (k < 660) {
		bool zero = fz_pm(r, 500);

		what = zero ? "read-only, never written" : "read-only";
		real_range(r, zero ? fz_mem.ro_zero : fz_mem.ro,
			   fz_mem.ro_len, &m->addr, &m->length);
		c.expect = EFAULT;
	} else if (k < 700) {
		if (fz_pm(r, 500)) {
			what = "unmapped";
			m->addr = (uint64_t)(uintptr_t)fz_mem.none +
				  fz_below(r, fz_mem.none_len / 2);
			m->length = 1 + fz_below(r, 1 << 20);
		} else {
			what = "into the guard page";
			m->length = 2 + fz_below(r, 1 << 16);
			m->addr = fz_ptr_end(m->length - 1 -
					     fz_below(r, m->length - 1));
		}
		c.expect = EFAULT;
	} else if (k < 750) {
		what = "huge";
		m->length = fz_u64(r) | 0x100000000ULL;
	} else if (k < 780) {
		m->length = 0;
		c.expect = EINVAL;
	} else if (k < 820) {
		m->addr = fz_ptr_bad(r, &what);
		m->length = 1 + fz_below(r, 8192);
		c.expect = EFAULT;
		c.alt = EINVAL;
	} else if (k < 880) {
		m->flags = COLLX_MR_F_DMABUF;
		m->dmabuf_offset = fz_pm(r, 500) ? 0 : fz_u64(r);
		if (fz_pm(r, 500)) {
			what = "dma-buf fd closed";
			m->dmabuf_fd = fz_pm(r, 500) ? -1 : 0x7ffffff0;
			c.expect = EBADF;
		} else {
			what = "dma-buf fd not a dma-buf";
			m->dmabuf_fd = fz_fds[fdi].fd;
			c.expect = EINVAL;
		}
		if (!(fz_features & COLLX_FEATURE_DMABUF))
			c.expect = EOPNOTSUPP;
	} else if (k < 940) {
		what = "unknown flag";
		m->flags = 1U << (1 + fz_below(r, 31));
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
	} else if (k < 970) {
		m->__reserved = fz_u32(r) | 1;
		c.expect = EINVAL;
	} else {
		m->__reserved2 = fz_u32(r) | 1;
		c.expect = EINVAL;
	}
	if (c.valid && fz_pm(r, 50)) {
		/* dma-buf fields without the flag: the uapi does not say. */
		m->dmabuf_fd = (int32_t)fz_u32(r);
		m->dmabuf_offset = fz_u64(r);
		c.valid = false;
		what = "dma-buf fields without the flag";
	}
	if (fz_pm(r, 200))
		m->mr_id = fz_u32(r);
	dirty = m->flags | m->__reserved | m->__reserved2;
	snprintf(c.desc, sizeof(c.desc), "%s addr=%#llx length=%#llx flags=%#x%s",
		 what, (unsigned long long)m->addr,
		 (unsigned long long)m->length, m->flags,
		 dirty && !m->flags ? " reserved!=0" : "");
	if (!fz_ioctl(t, &c) && add_mr(t, &c) == -1)
		fz_finding(NULL, F_IDS, "no room to track a registration");
}

int fz_dereg(struct fz_thread *t, int fdi, int mi)
{
	struct fz_call c;
	int err;

	fz_call_init(&c, FZ_MR_DEREG, fdi);
	c.st.dereg.mr_id = fz_mrs[mi].id;
	c.fixed = true;
	c.size = sizeof(c.st.dereg);
	c.place = P_NORMAL;
	c.valid = !fz_fds[fdi].shared;
	c.tolerate = fz_opt.threads > 1 ? busy_gone_errs : busy_errs;
	snprintf(c.desc, sizeof(c.desc), "mr=%u", c.st.dereg.mr_id);
	err = fz_ioctl(t, &c);
	pthread_mutex_lock(&fz_lock);
	fz_mrs[mi].busy = false;
	if (!err || err == ENOENT)
		fz_mr_gone(mi);
	pthread_mutex_unlock(&fz_lock);
	return err;
}

void fz_gen_dereg(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_mr_dereg *d;
	struct fz_call c;
	int mi = -1, byno = -1, err, i;
	bool found;

	pthread_mutex_lock(&fz_lock);
	if (fz_pm(r, 850))
		mi = fz_mr_pick(r, fdi);
	if (mi >= 0)
		fz_mrs[mi].busy = true;
	pthread_mutex_unlock(&fz_lock);
	if (mi >= 0 && fz_pm(r, 850)) {
		fz_dereg(t, fdi, mi);
		return;
	}
	fz_call_init(&c, FZ_MR_DEREG, fdi);
	d = &c.st.dereg;
	d->mr_id = mi >= 0 ? fz_mrs[mi].id :
		   fz_pm(r, 500) ? fz_u32(r) : (uint32_t)fz_below(r, 16);
	if (mi < 0) {
		/* By number: a live one it names is busy meanwhile too. */
		pthread_mutex_lock(&fz_lock);
		for (i = 0; i < FZ_MAX_MRS && byno < 0; i++) {
			if (fz_mrs[i].used && !fz_mrs[i].busy &&
			    fz_mrs[i].fdi == fdi && fz_mrs[i].id == d->mr_id) {
				fz_mrs[i].busy = true;
				byno = i;
			}
		}
		if (nbynum == MAX_BYNUM)
			abort();	/* more at once than threads */
		bynum[nbynum].fdi = fdi;
		bynum[nbynum++].id = d->mr_id;
		pthread_mutex_unlock(&fz_lock);
	}
	if (mi >= 0 && fz_pm(r, 500)) {
		d->flags = fz_u32(r) | 1;
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
	} else if (mi >= 0) {
		d->__reserved = fz_u32(r) | 1;
		c.expect = EINVAL;
	}
	snprintf(c.desc, sizeof(c.desc), "mr=%u%s flags=%#x reserved=%#x",
		 d->mr_id, mi >= 0 ? " (live)" : "", d->flags, d->__reserved);
	err = fz_ioctl(t, &c);
	pthread_mutex_lock(&fz_lock);
	if (mi >= 0)
		fz_mrs[mi].busy = false;
	if (byno >= 0)
		fz_mrs[byno].busy = false;
	if (!err) {
		found = false;
		for (i = 0; i < FZ_MAX_MRS; i++) {
			if (fz_mrs[i].used && fz_mrs[i].fdi == fdi &&
			    fz_mrs[i].id == d->mr_id) {
				fz_mr_gone(i);
				found = true;
			}
		}
		/* (Another process's, on a shared fd: nothing to wait for.) */
		if (mi < 0 && !found && !fz_fds[fdi].shared) {
			if (nunseen == MAX_UNSEEN)
				memmove(unseen, unseen + 1,
					--nunseen * sizeof(unseen[0]));
			unseen[nunseen].fdi = fdi;
			unseen[nunseen++].id = d->mr_id;
		}
	}
	if (mi < 0) {
		fz_key_take(bynum, &nbynum, fdi, d->mr_id);
		/* None in flight any more: what none removed is live. */
		for (i = 0; i < FZ_MAX_MRS && !bynum_pending(fdi, d->mr_id); i++) {
			if (fz_mrs[i].used && fz_mrs[i].bynum &&
			    fz_mrs[i].fdi == fdi && fz_mrs[i].id == d->mr_id)
				fz_mrs[i].busy = fz_mrs[i].bynum = false;
		}
	}
	pthread_mutex_unlock(&fz_lock);
}
