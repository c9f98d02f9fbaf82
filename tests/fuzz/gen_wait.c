// SPDX-License-Identifier: GPL-2.0
/*
 * Completions: COLLX_IOC_WAIT (live ops, ops whose record was read, ids
 * not yet handed out, nonsense; timeouts of 0, a few ms, forever under a
 * signal), read() of records (whole, short, odd lengths, into read-only
 * or unmapped memory, blocking under a signal) and poll().
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#define REC	sizeof(struct collx_completion)

static const int gone_errs[] = { ENOENT, 0 };

int fz_wait(struct fz_thread *t, int fdi, uint64_t id, unsigned int ms)
{
	struct fz_call c;
	int err;

	fz_call_init(&c, FZ_WAIT, fdi);
	c.st.wait.op_id = id;
	c.st.wait.timeout_ms = ms;
	c.fixed = true;
	c.size = sizeof(c.st.wait);
	c.place = P_NORMAL;
	c.timer_ms = !ms ? 0 : ms > 1000 ? 3000 : ms + 2000;
	snprintf(c.desc, sizeof(c.desc), "op=%llu timeout=%u",
		 (unsigned long long)id, ms);
	err = fz_ioctl(t, &c);
	if (!err && c.out_ok)
		fz_record(t, fdi, &c.st.wait.completion, "WAIT");
	return err;
}

void fz_gen_wait(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_wait *w;
	struct fz_call c;
	unsigned int k = (unsigned int)fz_below(r, 1000), ms;
	const char *which = "live";
	bool live = false, gone = false;
	struct fz_fd *f = &fz_fds[fdi];
	int oi = -1, err;

	fz_call_init(&c, FZ_WAIT, fdi);
	w = &c.st.wait;
	pthread_mutex_lock(&fz_lock);
	if (k < 550) {
		oi = fz_op_pick(r, fdi);
		if (oi >= 0) {
			w->op_id = fz_ops[oi].id;
			live = true;
		}
	} else if (k < 650 && f->done_n) {
		which = "already read";
		w->op_id = f->done_ids[fz_below(r, f->done_n < 64 ? f->done_n : 64)];
		gone = true;
	} else if (k < 750) {
		which = "next";
		w->op_id = f->max_op_id + 1 + fz_below(r, 3);
	} else if (k < 800) {
		which = "0";
		w->op_id = 0;
	} else {
		which = "random";
		w->op_id = fz_u64(r);
	}
	if (!live && !gone && k < 550) {
		which = "last";
		w->op_id = f->max_op_id;
	}
	pthread_mutex_unlock(&fz_lock);

	k = (unsigned int)fz_below(r, 100);
	if (k < 45) {
		ms = 0;
	} else if (k < 80) {
		ms = 1 + (unsigned int)fz_below(r, 5);
	} else if (k < 90) {
		ms = 20 + (unsigned int)fz_below(r, 80);
	} else if (k < 95) {
		ms = COLLX_WAIT_FOREVER;
		c.timer_ms = 20 + (unsigned int)fz_below(r, 100);
	} else {
		ms = COLLX_WAIT_FOREVER - 1 - (unsigned int)fz_below(r, 1000);
		c.timer_ms = 20 + (unsigned int)fz_below(r, 100);
	}
	w->timeout_ms = ms;
	if (ms && ms < 1000)
		c.timer_ms = ms + 2000;
	if (fz_pm(r, 60)) {
		w->flags = fz_u32(r) | 1;
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
	} else if (fz_pm(r, 60)) {
		w->__reserved = fz_u32(r) | 1;
		c.expect = EINVAL;
	} else if (gone) {
		/* "ENOENT (unknown id, or its record was already read)". */
		c.expect = ENOENT;
	}
	if (fz_pm(r, 300))
		memset(&w->completion, 0xee, sizeof(w->completion));
	if (fz_opt.threads > 1 || f->shared || f->scenario)
		c.tolerate = gone_errs;
	snprintf(c.desc, sizeof(c.desc), "op=%llu (%s) timeout=%u flags=%#x reserved=%#x",
		 (unsigned long long)w->op_id, which, ms, w->flags,
		 w->__reserved);
	err = fz_ioctl(t, &c);
	if (!err && c.out_ok && c.size >= sizeof(*w)) {
		if (w->completion.op_id != w->op_id)
			fz_finding(t, F_RECORD, "WAIT for op %llu returned the record of op %llu",
				   (unsigned long long)w->op_id,
				   (unsigned long long)w->completion.op_id);
		fz_record(t, fdi, &w->completion, "WAIT");
		return;
	}
	pthread_mutex_lock(&fz_lock);
	oi = fz_op_find(fdi, w->op_id);
	if (oi >= 0 && err == EFAULT && c.place == P_RO)
		fz_ops[oi].wait_efault = true;
	if (oi >= 0 && live && err == ENOENT && !c.tolerate &&
	    !fz_ops[oi].wait_efault && fz_can_act(&c) && c.delivered)
		fz_finding(t, F_LOST, "WAIT for op %llu, submitted at call #%llu and not read: ENOENT",
			   (unsigned long long)w->op_id,
			   (unsigned long long)fz_ops[oi].callno);
	/*
	 * On an fd shared with other processes, one of them read its
	 * record: forget it, or such ops fill fz_ops over a long run.
	 */
	if (oi >= 0 && err == ENOENT && fz_fds[fdi].shared &&
	    fz_can_act(&c) && c.delivered)
		fz_op_remove(oi);
	pthread_mutex_unlock(&fz_lock);
}

/* Records read into @buf: @n bytes. */
static void records(struct fz_thread *t, int fdi, const uint8_t *buf,
		    ssize_t n, size_t len, const char *desc)
{
	struct collx_completion rec;
	ssize_t off;

	if (n % REC || (size_t)n > len) {
		fz_finding(t, F_RECORD, "%s returned %zd bytes, not whole records of %zu",
			   desc, n, REC);
		return;
	}
	for (off = 0; off < n; off += REC) {
		memcpy(&rec, buf + off, REC);
		fz_record(t, fdi, &rec, "read");
	}
}

static ssize_t do_read(struct fz_thread *t, int fdi, void *buf, size_t len,
		       unsigned int timer_ms, const char *desc, int *errp)
{
	ssize_t n;

	fz_begin(t, desc);
	if (timer_ms)
		fz_timer(t, timer_ms);
	n = read(fz_fds[fdi].fd, buf, len);
	*errp = n < 0 ? errno : 0;
	if (timer_ms)
		fz_timer(t, 0);
	fz_end(t);
	fz_count(t, FZ_READ, *errp, desc);
	return n;
}

void fz_gen_read(struct fz_thread *t, int fdi)
{
	static __thread uint8_t ro_before[FZ_PAGE];
	struct fz_rng *r = &t->rng;
	unsigned int k = (unsigned int)fz_below(r, 100), timer = 0;
	uint8_t *buf = t->big;
	size_t len, room = t->big_len;
	const char *what = "rw";
	char desc[160], b1[16];
	bool ro = false;
	ssize_t n;
	int err;

	if (k < 70)
		len = REC * (1 + fz_below(r, 16));
	else if (k < 80)
		len = 1 + fz_below(r, REC - 1);
	else if (k < 85)
		len = fz_pm(r, 500) ? 0 : REC + 1 + fz_below(r, REC - 1);
	else if (k < 90)
		len = REC * (1 + fz_below(r, 4096));
	else
		len = REC * (1 + fz_below(r, 64));
	if (len > room)
		len = room;
	k = (unsigned int)fz_below(r, 100);
	if (k < 5) {
		what = "read-only";
		buf = t->arg_ro;
		room = FZ_PAGE;
		ro = true;
		memcpy(ro_before, t->arg_ro, FZ_PAGE);
	} else if (k < 10) {
		buf = (uint8_t *)(uintptr_t)fz_ptr_bad(r, &what);
		room = 0;
	} else if (k < 15) {
		what = "into a guard page";
		room = REC * (1 + fz_below(r, 3)) - 1 - fz_below(r, REC - 1);
		buf = t->big + t->big_len - room;
		if (len < room + 1)
			len = room + 1 + fz_below(r, REC);
	}
	if (fz_fds[fdi].blocking) {
		/* Mostly only when a record is there; else a signal ends it. */
		if (fz_pm(r, 800)) {
			struct pollfd p = { .fd = fz_fds[fdi].fd, .events = POLLIN };
			int rc;

			fz_begin(t, "poll before a blocking read");
			rc = poll(&p, 1, 0);
			err = rc < 0 ? errno : 0;
			fz_end(t);
			fz_count(t, FZ_POLL, err, "poll before a blocking read");
			if (rc <= 0)
				return;
		}
		timer = 1 + (unsigned int)fz_below(r, 2);
	}
	snprintf(desc, sizeof(desc), "read fd%d len=%zu into %s", fdi, len,
		 what);
	n = do_read(t, fdi, buf, len, timer, desc, &err);
	/* The VFS answers EFAULT for memory no user may touch, first. */
	if (!room && n < 0 && err == EFAULT)
		;
	else if (len && len < REC && n >= 0)
		fz_finding(t, F_ORACLE, "%s -> %zd; a buffer shorter than a record gets EINVAL",
			   desc, n);
	else if (len && len < REC && err != EINVAL)
		fz_finding(t, F_ORACLE, "%s -> %s; a buffer shorter than a record gets EINVAL",
			   desc, fz_errname(err, b1, sizeof(b1)));
	if (ro && memcmp(ro_before, t->arg_ro, FZ_PAGE))
		fz_finding(t, F_DATA, "%s: the read-only page changed", desc);
	if (n > 0 && !ro && room)
		records(t, fdi, buf, n, len, desc);
	else if (n > 0)
		fz_finding(t, F_DATA, "%s returned %zd bytes into memory it cannot write",
			   desc, n);
}

unsigned int fz_drain(struct fz_thread *t, int fdi, unsigned int ms)
{
	double end = fz_now() + ms / 1000.0;
	struct pollfd p = { .fd = fz_fds[fdi].fd, .events = POLLIN };
	unsigned int got = 0;
	char desc[64];
	ssize_t n;
	int err, rc;

	snprintf(desc, sizeof(desc), "read fd%d (drain)", fdi);
	while (fz_now() < end) {
		fz_begin(t, "poll (drain)");
		rc = poll(&p, 1, 10);
		err = rc < 0 ? errno : 0;
		fz_end(t);
		fz_count(t, FZ_POLL, err, "poll (drain)");
		if (rc <= 0)
			continue;
		n = do_read(t, fdi, t->big, REC * 256, 1000, desc, &err);
		if (n <= 0)
			continue;
		records(t, fdi, t->big, n, REC * 256, desc);
		got += (unsigned int)(n / REC);
		end = fz_now() + ms / 1000.0;
	}
	return got;
}

void fz_gen_poll(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	struct pollfd p[FZ_MAX_FDS];
	int idx[FZ_MAX_FDS], n = 0, i, rc, err, ms;
	char desc[96], b1[16];
	ssize_t got;

	for (i = 0; i < (int)fz_opt.nfds && n < FZ_MAX_FDS; i++) {
		if (!fz_fds[i].used || fz_pm(r, 300))
			continue;
		p[n].fd = fz_fds[i].fd;
		p[n].events = POLLIN | POLLRDNORM | POLLOUT | POLLPRI;
		idx[n++] = i;
	}
	if (!n)
		return;
	ms = fz_pm(r, 900) ? 0 : 1;
	snprintf(desc, sizeof(desc), "poll %d fds timeout=%d", n, ms);
	fz_begin(t, desc);
	rc = poll(p, n, ms);
	err = rc < 0 ? errno : 0;
	fz_end(t);
	fz_count(t, FZ_POLL, err, desc);
	for (i = 0; rc > 0 && i < n; i++) {
		if (p[i].revents & ~(POLLIN | POLLRDNORM))
			fz_finding(t, F_ORACLE, "poll on fd%d: revents %#x beyond POLLIN|POLLRDNORM",
				   idx[i], p[i].revents);
		if (!(p[i].revents & POLLIN) || fz_opt.threads > 1 ||
		    fz_fds[idx[i]].shared)
			continue;
		/* Alone on the fd: a record must be there to read. */
		snprintf(desc, sizeof(desc), "read fd%d after POLLIN", idx[i]);
		got = do_read(t, idx[i], t->big, REC * 64, 100, desc, &err);
		if (got > 0)
			records(t, idx[i], t->big, got, REC * 64, desc);
		else
			fz_finding(t, F_ORACLE, "poll said POLLIN on fd%d, then read -> %s",
				   idx[i], got ? fz_errname(err, b1, sizeof(b1)) : "0");
	}
}
