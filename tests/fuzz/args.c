// SPDX-License-Identifier: GPL-2.0
/*
 * Making one ioctl: the size it claims (exact, the mandatory part, one
 * byte short, longer with a zero or a dirty tail, absurd), where its
 * struct lies (read-write memory between canaries, right before an
 * unmapped page, across one, in a read-only page, nowhere), the call,
 * and what its result must be: documented for the ioctl always, and
 * exactly what the size-first rules, the pointer or the content imply
 * where they imply one.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#define CANARY		0xa5
#define CANARY_LEN	64
#define ARG_PAGES	3
#define BIG_LEN		(640 * 1024)

static uint64_t callno;

static const char *const place_names[] = {
	[P_NORMAL] = "rw", [P_END] = "end-of-map", [P_CROSS] = "crossing",
	[P_RO] = "read-only", [P_BAD] = "bad",
};

static const char *const tail_names[] = {
	[T_NONE] = "", [T_ZERO] = "+zero-tail", [T_DIRTY] = "+dirty-tail",
	[T_HUGE] = "+huge",
};

static uint8_t *map_guarded(size_t len)
{
	uint8_t *p = mmap(NULL, len + FZ_PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p, len, PROT_READ | PROT_WRITE)) {
		perror("collx_fuzz: mmap");
		exit(2);
	}
	return p;
}

static void on_signal(int sig)
{
	(void)sig;
}

void fz_thread_init(struct fz_thread *t, unsigned int idx, uint64_t seed)
{
	struct sigaction sa = { 0 };

	memset(t, 0, sizeof(*t));
	t->idx = idx;
	fz_rng_seed(&t->rng, seed);
	t->arg = map_guarded(ARG_PAGES * FZ_PAGE);
	t->arg_ro = map_guarded(FZ_PAGE);
	/* Read-only from the start, not only after its first P_RO call. */
	memset(t->arg_ro, CANARY, FZ_PAGE);
	if (mprotect(t->arg_ro, FZ_PAGE, PROT_READ)) {
		perror("collx_fuzz: mprotect");
		exit(2);
	}
	t->big_len = BIG_LEN;
	t->big = map_guarded(BIG_LEN);
	/* No SA_RESTART: a blocking call returns EINTR. */
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
}

void fz_thread_attach(struct fz_thread *t)
{
	struct sigevent sev = { 0 };

	t->tid = gettid();
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = t->tid;	/* sigev_notify_thread_id */
	t->has_timer = !timer_create(CLOCK_MONOTONIC, &sev, &t->timer);
}

void fz_thread_detach(struct fz_thread *t)
{
	if (t->has_timer)
		timer_delete(t->timer);
	t->has_timer = false;
}

void fz_timer(struct fz_thread *t, unsigned int ms)
{
	struct itimerspec its = { 0 };

	if (!t->has_timer)
		return;
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	/*
	 * Again every @ms until cleared: a single expiry may come before
	 * the call goes to sleep (a few ms are nothing under TCG), and the
	 * call would then block for good.
	 */
	its.it_interval = its.it_value;
	timer_settime(t->timer, 0, &its, NULL);
}

void fz_begin(struct fz_thread *t, const char *what)
{
	size_t n = strnlen(what, sizeof(t->cur) - 1);

	t->cur_no = __atomic_add_fetch(&callno, 1, __ATOMIC_RELAXED);
	memcpy(t->cur, what, n);
	t->cur[n] = 0;
	t->cur_since = fz_now();
	t->calls++;
}

void fz_end(struct fz_thread *t)
{
	t->cur_since = 0;
}

void fz_count(struct fz_thread *t, enum fz_entry e, int err, const char *desc)
{
	char b1[16], list[256];

	fz_result(e, err);
	if (fz_opt.verbose)
		fprintf(stderr, "#%llu t%u %s -> %s\n",
			(unsigned long long)t->cur_no, t->idx, desc,
			fz_errname(err, b1, sizeof(b1)));
	if (!fz_documented(e, err))
		fz_finding(t, F_ERRNO, "%s -> %s; documented: %s", desc,
			   fz_errname(err, b1, sizeof(b1)),
			   fz_documented_list(e, list, sizeof(list)));
}

void fz_call_init(struct fz_call *c, enum fz_entry e, int fdi)
{
	memset(c, 0, sizeof(*c));
	c->e = e;
	c->fdi = fdi;
	c->fd = fdi >= 0 ? fz_fds[fdi].fd : -1;
	c->fd_gen = fdi >= 0 ? fz_fds[fdi].gen : 0;
	c->nr = e < FZ_NR_IOCTLS ? fz_ioctls[e].nr : 0;
	c->expect = -1;
	c->alt = -1;
}

/* The size and the tail, unless the generator chose. */
static void choose_size(struct fz_thread *t, struct fz_call *c)
{
	static const uint32_t huge[] = { 0x10000, 1U << 20, 0x7fffffff,
					 0x80000000, 0xffffffff };
	const struct fz_ioctl *io = &fz_ioctls[c->e];
	struct fz_rng *r = &t->rng;
	uint64_t k = fz_below(r, 1000);

	c->tail = T_NONE;
	if (k < 780) {
		c->size = io->ksize;
	} else if (k < 830) {
		c->size = io->min;
	} else if (k < 850 && io->min < io->ksize) {
		c->size = io->min + (uint32_t)fz_below(r, io->ksize - io->min);
	} else if (k < 880) {
		c->size = io->min - 1;
	} else if (k < 895) {
		c->size = (uint32_t)fz_below(r, io->min);
	} else if (k < 935) {
		c->size = io->ksize + 1 + (uint32_t)fz_below(r, 512);
		c->tail = T_ZERO;
	} else if (k < 975) {
		c->size = io->ksize + 1 + (uint32_t)fz_below(r, 512);
		c->tail = T_DIRTY;
	} else if (k < 985) {
		c->size = FZ_PAGE;
		c->tail = T_ZERO;
	} else {
		c->size = huge[fz_below(r, FZ_ARRAY_SIZE(huge))];
		c->tail = T_HUGE;
	}
}

static void choose_place(struct fz_thread *t, struct fz_call *c)
{
	uint64_t k = fz_below(&t->rng, 1000);

	if (k < 900)
		c->place = P_NORMAL;
	else if (k < 930)
		c->place = P_END;
	else if (k < 950)
		c->place = P_CROSS;
	else if (k < 975)
		c->place = P_RO;
	else
		c->place = P_BAD;
}

void fz_choose(struct fz_thread *t, struct fz_call *c)
{
	uint64_t total;

	choose_size(t, c);
	choose_place(t, c);
	/* Placements that need the struct to fit the pages before a guard. */
	total = c->tail == T_HUGE ? 0 : c->size;
	if ((c->place == P_END || c->place == P_CROSS) &&
	    (c->tail == T_HUGE || total > 2 * FZ_PAGE))
		c->place = P_NORMAL;
	if ((c->place == P_CROSS && total < 2) ||
	    (c->place == P_END && total < sizeof(uint32_t)))
		c->place = P_NORMAL;
	c->fixed = true;
}

bool fz_can_act(const struct fz_call *c)
{
	return c->size >= fz_ioctls[c->e].min &&
	       (c->tail == T_NONE || c->tail == T_ZERO) &&
	       (c->place == P_NORMAL || c->place == P_END);
}

/*
 * Write the struct (with its size) and its tail at @p, at most @room
 * bytes; returns how many were written.  A huge size gets zeros up to
 * @room, where an unmapped page follows.
 */
static uint64_t lay_out(struct fz_thread *t, struct fz_call *c, uint8_t *p,
			uint64_t room, uint64_t *dirty_at)
{
	uint32_t ks = fz_ioctls[c->e].ksize;
	uint64_t total = c->tail == T_HUGE ? room : c->size, n;

	if (total > room)
		total = room;
	/* The kernel reads the whole size field, whatever the size says. */
	if (total < sizeof(c->size) && room >= sizeof(c->size))
		total = sizeof(c->size);
	memcpy(c->st.bytes, &c->size, sizeof(c->size));
	n = total < ks ? total : ks;
	memcpy(p, c->st.bytes, n);
	if (total > ks) {
		memset(p + ks, 0, total - ks);
		if (c->tail == T_DIRTY) {
			*dirty_at = ks + fz_below(&t->rng, c->size - ks);
			if (*dirty_at < total)
				p[*dirty_at] = (uint8_t)(1 + fz_below(&t->rng, 255));
		}
	}
	return total;
}

struct layout {
	uint8_t *arg;		/* where the struct starts */
	uint64_t bytes;		/* of it and its tail we wrote */
	uint64_t dirty_at;
	uint64_t cross_k;	/* bytes before the guard (P_CROSS) */
	uint8_t ro_copy[FZ_PAGE];
};

static uint64_t arg_addr(struct fz_thread *t, struct fz_call *c,
			 struct layout *l)
{
	uint8_t *guard = t->arg + ARG_PAGES * FZ_PAGE;
	uint64_t total = c->tail == T_HUGE ? 0 : c->size, mis = 0;
	const char *what;

	switch (c->place) {
	case P_NORMAL:
		if (fz_pm(&t->rng, 100))
			mis = 1 + fz_below(&t->rng, 7);
		l->arg = t->arg + FZ_PAGE + mis;
		memset(l->arg - CANARY_LEN, CANARY, CANARY_LEN);
		l->bytes = lay_out(t, c, l->arg, guard - l->arg, &l->dirty_at);
		if (c->tail != T_HUGE)
			memset(l->arg + l->bytes, CANARY, CANARY_LEN);
		return (uint64_t)(uintptr_t)l->arg;
	case P_END:
		l->arg = guard - total;
		memset(l->arg - CANARY_LEN, CANARY, CANARY_LEN);
		l->bytes = lay_out(t, c, l->arg, total, &l->dirty_at);
		return (uint64_t)(uintptr_t)l->arg;
	case P_CROSS:
		l->cross_k = 1 + fz_below(&t->rng, total - 1);
		l->arg = guard - l->cross_k;
		l->bytes = lay_out(t, c, l->arg, l->cross_k, &l->dirty_at);
		return (uint64_t)(uintptr_t)l->arg;
	case P_RO:
		if (mprotect(t->arg_ro, FZ_PAGE, PROT_READ | PROT_WRITE))
			abort();
		memset(t->arg_ro, CANARY, FZ_PAGE);
		if (fz_pm(&t->rng, 100))
			mis = 1 + fz_below(&t->rng, 7);
		l->arg = t->arg_ro + CANARY_LEN + mis;
		l->bytes = lay_out(t, c, l->arg, FZ_PAGE - CANARY_LEN - mis,
				   &l->dirty_at);
		memcpy(l->ro_copy, t->arg_ro, FZ_PAGE);
		if (mprotect(t->arg_ro, FZ_PAGE, PROT_READ))
			abort();
		return (uint64_t)(uintptr_t)l->arg;
	default:
		return fz_ptr_bad(&t->rng, &what);
	}
}

static bool canaries_ok(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != CANARY)
			return false;
	return true;
}

static bool in(int err, const int *list)
{
	for (; list && *list; list++)
		if (*list == err)
			return true;
	return false;
}

/* What the size-first rules and the pointer imply; -1: nothing. */
static int implied(const struct fz_call *c, const struct layout *l, int *alt)
{
	const struct fz_ioctl *io = &fz_ioctls[c->e];

	*alt = -1;
	if (c->place == P_BAD)
		return EFAULT;
	if (c->place == P_CROSS && l->bytes < sizeof(uint32_t))
		return EFAULT;
	if (c->size < io->min) {
		/* Whether the struct is read before its size is checked. */
		if (l->bytes < c->size)
			*alt = EFAULT;
		return EINVAL;
	}
	if (c->tail == T_HUGE) {
		*alt = E2BIG;
		return EFAULT;
	}
	if (l->bytes < c->size) {
		/* It runs into an unmapped page. */
		if (c->tail == T_DIRTY && l->dirty_at < l->bytes)
			*alt = E2BIG;
		return EFAULT;
	}
	if (c->tail == T_DIRTY)
		return E2BIG;
	return -1;
}

/* Resource errors a well-formed call may always meet. */
static const int resource_errs[] = { ENOMEM, EMFILE, EAGAIN, 0 };

int fz_ioctl(struct fz_thread *t, struct fz_call *c)
{
	const struct fz_ioctl *io = &fz_ioctls[c->e];
	char desc[400], b1[16], b2[16], list[256];
	struct layout l = { 0 };
	uint64_t arg;
	int want, alt, err;
	bool whole;

	if (!c->fixed)
		fz_choose(t, c);
	arg = arg_addr(t, c, &l);
	snprintf(desc, sizeof(desc), "%s fd%d %s size=%u%s at %s", io->name,
		 c->fdi, c->desc, c->size, tail_names[c->tail],
		 place_names[c->place]);
	fz_begin(t, desc);
	if (c->timer_ms)
		fz_timer(t, c->timer_ms);
	err = ioctl(c->fd, c->nr, (void *)(uintptr_t)arg) ? errno : 0;
	if (c->timer_ms)
		fz_timer(t, 0);
	fz_end(t);
	c->err = err;
	fz_count(t, c->e, err, desc);

	whole = c->size >= io->ksize && (c->tail == T_NONE || c->tail == T_ZERO);
	c->delivered = whole && (c->place == P_NORMAL || c->place == P_END ||
				 c->place == P_RO);
	c->out_ok = c->place == P_NORMAL || c->place == P_END;
	if (c->out_ok)
		memcpy(c->st.bytes, l.arg,
		       c->size < io->ksize ? c->size : io->ksize);

	want = implied(c, &l, &alt);
	if (want >= 0) {
		if (err != want && err != alt)
			fz_finding(t, F_ORACLE, "%s -> %s; the size-first rules and the pointer imply %s%s%s",
				   desc, fz_errname(err, b1, sizeof(b1)),
				   fz_errname(want, b2, sizeof(b2)),
				   alt >= 0 ? " or " : "",
				   alt >= 0 ? fz_errname(alt, list, sizeof(list)) : "");
	} else if (c->expect >= 0 && c->delivered) {
		/*
		 * A call that fails changes nothing: SUBMIT, SUBMIT_GROUP
		 * and WAIT make sure they can write their output before they
		 * act, so their struct in read-only memory may be EFAULT
		 * whatever the content.
		 */
		bool ro_first = c->place == P_RO &&
				(c->e == FZ_WAIT || c->e == FZ_SUBMIT ||
				 c->e == FZ_SUBMIT_GROUP);

		if (err != c->expect && err != c->alt &&
		    !(ro_first && err == EFAULT) &&
		    !in(err, resource_errs) && !in(err, c->tolerate))
			fz_finding(t, F_ORACLE, "%s -> %s; its content implies %s",
				   desc, fz_errname(err, b1, sizeof(b1)),
				   fz_errname(c->expect, b2, sizeof(b2)));
	} else if (c->valid && c->size >= io->min &&
		   (c->tail == T_NONE || c->tail == T_ZERO) &&
		   c->place != P_CROSS) {
		if (c->place == P_RO && io->writes_back) {
			if (!err)
				fz_finding(t, F_ORACLE, "%s -> ok, but its output could not be written back",
					   desc);
		} else if (err && err != c->alt && !in(err, resource_errs) &&
			   !in(err, c->tolerate)) {
			fz_finding(t, F_ORACLE, "%s -> %s; a well-formed call, expected success",
				   desc, fz_errname(err, b1, sizeof(b1)));
		}
	} else if (c->place == P_RO && io->writes_back && !err) {
		fz_finding(t, F_ORACLE, "%s -> ok, but its output could not be written back",
			   desc);
	}

	if (c->place == P_NORMAL || c->place == P_END) {
		if (!canaries_ok(l.arg - CANARY_LEN, CANARY_LEN))
			fz_finding(t, F_DATA, "%s: the kernel wrote before the struct",
				   desc);
		if (c->place == P_NORMAL && c->tail != T_HUGE &&
		    !canaries_ok(l.arg + l.bytes, CANARY_LEN))
			fz_finding(t, F_DATA, "%s: the kernel wrote past the size passed",
				   desc);
	} else if (c->place == P_RO && memcmp(l.ro_copy, t->arg_ro, FZ_PAGE)) {
		fz_finding(t, F_DATA, "%s: a read-only page changed", desc);
	}
	return err;
}
