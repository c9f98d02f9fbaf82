// SPDX-License-Identifier: GPL-2.0
/*
 * Races between two threads on one fd of its own, each bounded in calls
 * and in time: destroy against submit and wait, close against a waiter
 * (the waiter must return), deregister against submits that use the
 * registration, create against destroys of every small handle (the
 * handles of comms still connecting included), and waits for the next
 * op ids against the submits that hand them out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "plan.h"

struct job {
	struct fz_thread *h;
	void (*fn)(struct job *j);
	int fdi, ci, mi;
	uint8_t *region;
	size_t len;
	uint64_t id;
	int err;
	volatile bool stop;
	volatile bool done;
};

static void *run_job(void *arg)
{
	struct job *j = arg;

	fz_thread_attach(j->h);
	j->fn(j);
	fz_thread_detach(j->h);
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void start(struct fz_thread *t, struct job *j, pthread_t *th)
{
	j->h = t->helper;
	j->h->tid = 0;
	if (pthread_create(th, NULL, run_job, j)) {
		perror("collx_fuzz: pthread_create");
		exit(2);
	}
}

/*
 * Join within @secs (times the slowdown); a helper that does not return
 * is a hang.
 */
static void join(struct fz_thread *t, pthread_t th, struct job *j,
		 double secs, const char *what)
{
	double end;

	secs *= fz_slowdown();
	end = fz_now() + secs;

	while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE) && fz_now() < end)
		usleep(1000);
	if (__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)) {
		pthread_join(th, NULL);
		t->calls += j->h->calls;
		j->h->calls = 0;
		return;
	}
	fz_finding(t, F_HANG, "%s: the other thread is still in \"%s\" after %.0f s",
		   what, j->h->cur, secs);
	pthread_detach(th);
	/* Its context is lost with it; the run ends. */
	t->helper = calloc(1, sizeof(*t->helper));
	if (!t->helper)
		exit(2);
	fz_thread_init(t->helper, t->idx + 100, fz_next(&t->rng));
	fz_request_stop();
}

static int scen_open(struct fz_thread *t)
{
	bool blocking = fz_pm(&t->rng, 500);
	int fd = open("/dev/collx", O_RDWR | O_CLOEXEC |
		      (blocking ? 0 : O_NONBLOCK)), fdi;

	if (fd < 0) {
		fz_finding(t, F_ORACLE, "open /dev/collx: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_lock(&fz_lock);
	fdi = fz_fd_add(fd, false, true, blocking);
	pthread_mutex_unlock(&fz_lock);
	if (fdi < 0)
		close(fd);
	return fdi;
}

/* Close @fdi (unless @closed: then it was, after fz_fd_closing()). */
static void scen_close(int fdi, bool closed)
{
	if (!closed) {
		pthread_mutex_lock(&fz_lock);
		fz_fd_closing(fdi);
		pthread_mutex_unlock(&fz_lock);
		close(fz_fds[fdi].fd);
	}
	pthread_mutex_lock(&fz_lock);
	fz_fd_forget(fdi);
	pthread_mutex_unlock(&fz_lock);
}

static void pause_us(struct fz_thread *t, unsigned int max)
{
	usleep((useconds_t)fz_below(&t->rng, max + 1));
}

/* Every op on @fdi has its record once its comm was destroyed. */
static void all_ended(struct fz_thread *t, int fdi, const char *what)
{
	int i;

	fz_drain(t, fdi, 300);
	pthread_mutex_lock(&fz_lock);
	for (i = 0; i < FZ_MAX_OPS; i++)
		if (fz_ops[i].used && fz_ops[i].fdi == fdi)
			fz_finding(t, F_LOST, "%s: op %llu (%s, call #%llu) has no record after its comm was destroyed",
				   what, (unsigned long long)fz_ops[i].id,
				   fz_coll_name(fz_ops[i].coll),
				   (unsigned long long)fz_ops[i].callno);
	pthread_mutex_unlock(&fz_lock);
}

/* ---- destroy against submit and wait -------------------------------- */

static void submitter(struct job *j)
{
	uint64_t id;
	int i, err;

	for (i = 0; i < 24 && !j->stop; i++) {
		err = fz_submit_valid(j->h, j->fdi, j->ci, UINT32_MAX, 1 << 18,
				      &id);
		if (err == ENOENT || err == EPIPE)
			break;
		if (!err && fz_pm(&j->h->rng, 500))
			fz_wait(j->h, j->fdi, id, (unsigned int)fz_below(&j->h->rng, 3));
	}
}

static void race_destroy(struct fz_thread *t, int fdi)
{
	struct job j = { .fn = submitter, .fdi = fdi };
	pthread_t th;
	int err;

	j.ci = fz_create_1rank(t, fdi, UINT32_MAX, &err);
	if (j.ci < 0)
		return;
	start(t, &j, &th);
	pause_us(t, 3000);
	fz_destroy(t, fdi, j.ci);
	j.stop = true;
	join(t, th, &j, 10, "destroy vs submit");
	all_ended(t, fdi, "destroy vs submit");
}

/* ---- close against a waiter ------------------------------------------ */

static void waiter(struct job *j)
{
	j->err = fz_wait(j->h, j->fdi, j->id, COLLX_WAIT_FOREVER);
}

/* Is thread @tid blocked in ioctl() on @fd? */
static bool in_ioctl(pid_t tid, int fd)
{
	char path[64], buf[128];
	long nr, a0;
	FILE *f;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) &&
	    sscanf(buf, "%ld %lx", &nr, &a0) == 2)
		yes = nr == 16 /* __NR_ioctl */ && a0 == fd;
	fclose(f);
	return yes;
}

static void race_close(struct fz_thread *t, int fdi)
{
	struct job j = { .fn = waiter, .fdi = fdi };
	bool lone = fz_pm(&t->rng, 300), closed = false;
	pthread_t th;
	double end;
	int err;

	/*
	 * The op waited for: a large local copy, or a send nobody receives
	 * on a comm whose timeout (300 ms) must end it.
	 */
	j.ci = fz_create_1rank(t, fdi, lone ? 300 : UINT32_MAX, &err);
	if (j.ci >= 0)
		err = fz_submit_valid(t, fdi, j.ci, lone ? COLLX_COLL_SEND :
				      COLLX_COLL_ALLREDUCE, FZ_MAX_BUF, &j.id);
	if (j.ci < 0 || err) {
		scen_close(fdi, false);
		return;
	}
	start(t, &j, &th);
	end = fz_now() + 0.05;
	while (fz_now() < end && !__atomic_load_n(&j.done, __ATOMIC_ACQUIRE)) {
		if (j.h->tid && in_ioctl(j.h->tid, fz_fds[fdi].fd)) {
			pause_us(t, 500);
			pthread_mutex_lock(&fz_lock);
			fz_fd_closing(fdi);
			pthread_mutex_unlock(&fz_lock);
			close(fz_fds[fdi].fd);
			closed = true;
			break;
		}
		usleep(100);
	}
	join(t, th, &j, 6, "close vs wait");
	if (j.err == EINTR)
		fz_finding(t, F_HANG, "close vs wait: WAIT for op %llu (%s) still blocked after 3 s%s",
			   (unsigned long long)j.id, lone ?
			   "a send on a comm with a 300 ms timeout" :
			   "a local copy", closed ? ", its fd closed meanwhile" : "");
	scen_close(fdi, closed);
}

/* ---- deregister against submits that use the registration ------------ */

static void region_submitter(struct job *j)
{
	struct fz_thread *h = j->h;
	size_t half = j->len / 2 - 2 * FZ_MARGIN;
	struct fz_plan p;
	struct fz_call c;
	uint64_t t0;
	int i, err;

	for (i = 0; i < 12 && !j->stop; i++) {
		if (!fz_plan_valid(h, &p, j->ci, COLLX_COLL_ALLREDUCE, 0, true))
			return;
		p.count = (1 + fz_below(&h->rng, half)) / p.esize;
		p.in_bytes = p.out_bytes = p.count * p.esize;
		p.send = j->region + FZ_MARGIN;
		p.recv = j->region + j->len / 2 + FZ_MARGIN;
		p.scratch = false;
		p.checkable = true;
		fz_fill(p.send, p.in_bytes, p.pat);
		fz_fill(p.recv, p.out_bytes, ~p.pat);
		fz_call_init(&c, FZ_SUBMIT, j->fdi);
		c.fixed = true;
		c.size = sizeof(c.st.submit);
		c.place = P_NORMAL;
		fz_plan_to_submit(&p, &c.st.submit);
		c.valid = true;
		c.tolerate = fz_submit_tolerate(j->fdi, j->ci);
		snprintf(c.desc, sizeof(c.desc), "comm=%u %s in a registration",
			 p.comm_id, p.what);
		t0 = fz_now_ns();
		if (fz_ioctl(h, &c))
			return;
		fz_plan_queued(h, &p, j->fdi, c.st.submit.op_id, t0);
		/* The region is the next op's only once this one ended. */
		err = fz_wait(h, j->fdi, c.st.submit.op_id, 2000);
		if (err)
			return;
	}
}

static void race_dereg(struct fz_thread *t, int fdi)
{
	struct job j = { .fn = region_submitter, .fdi = fdi };
	size_t pages, len = (32 + fz_below(&t->rng, 224)) * FZ_PAGE;
	pthread_t th;
	int i, err;

	j.region = fz_slot_get(len, &pages);
	j.len = len;
	j.ci = j.region ? fz_create_1rank(t, fdi, UINT32_MAX, &err) : -1;
	j.mi = j.ci >= 0 ? fz_reg(t, fdi, j.region, len) : -1;
	if (j.mi < 0) {
		scen_close(fdi, false);
		fz_slot_put(j.region, pages);
		return;
	}
	start(t, &j, &th);
	for (i = 0; i < 40 && !__atomic_load_n(&j.done, __ATOMIC_ACQUIRE); i++) {
		if (!fz_dereg(t, fdi, j.mi)) {
			j.mi = fz_reg(t, fdi, j.region, len);
			if (j.mi < 0)
				break;
		}
		pause_us(t, 300);
	}
	j.stop = true;
	join(t, th, &j, 10, "dereg vs submit");
	fz_drain(t, fdi, 100);
	if (j.mi >= 0)
		fz_dereg(t, fdi, j.mi);
	fz_destroy(t, fdi, j.ci);
	all_ended(t, fdi, "dereg vs submit");
	scen_close(fdi, false);
	fz_slot_put(j.region, pages);
}

/* ---- create against destroys of every small handle ------------------- */

static void creator(struct job *j)
{
	struct fz_thread *h = j->h;
	int i, err;

	for (i = 0; i < 6 && !j->stop; i++) {
		if (fz_pm(&h->rng, 500))
			fz_create_1rank(h, j->fdi, UINT32_MAX, &err);
		else
			fz_gen_create(h, j->fdi);
	}
}

static void race_create(struct fz_thread *t, int fdi)
{
	struct job j = { .fn = creator, .fdi = fdi };
	struct fz_call c;
	pthread_t th;
	int i, ci;

	start(t, &j, &th);
	for (i = 0; i < 200 && !__atomic_load_n(&j.done, __ATOMIC_ACQUIRE); i++) {
		fz_call_init(&c, FZ_COMM_DESTROY, fdi);
		c.st.destroy.comm_id = 1 + (uint32_t)fz_below(&t->rng, 8);
		c.fixed = true;
		c.size = sizeof(c.st.destroy);
		c.place = P_NORMAL;
		snprintf(c.desc, sizeof(c.desc), "comm=%u (by number)",
			 c.st.destroy.comm_id);
		ci = fz_comm_doom_id(fdi, c.st.destroy.comm_id);
		fz_comm_doomed(fdi, c.st.destroy.comm_id, ci,
			       fz_ioctl(t, &c));
		pause_us(t, 300);
	}
	join(t, th, &j, 10, "create vs destroy");
	scen_close(fdi, false);
}

/* ---- waits for the next ids against the submits ---------------------- */

static void next_waiter(struct job *j)
{
	struct fz_thread *h = j->h;
	uint64_t id;
	int i;

	for (i = 0; i < 32 && !j->stop; i++) {
		pthread_mutex_lock(&fz_lock);
		id = fz_fds[j->fdi].max_op_id + 1 + fz_below(&h->rng, 2);
		pthread_mutex_unlock(&fz_lock);
		fz_wait(h, j->fdi, id, (unsigned int)fz_below(&h->rng, 2));
	}
}

static void race_next_id(struct fz_thread *t, int fdi)
{
	struct job j = { .fn = next_waiter, .fdi = fdi };
	pthread_t th;
	int i, err;

	j.ci = fz_create_1rank(t, fdi, UINT32_MAX, &err);
	if (j.ci < 0)
		return;
	start(t, &j, &th);
	for (i = 0; i < 32; i++)
		if (fz_submit_valid(t, fdi, j.ci, UINT32_MAX, 1 << 16, NULL) ==
		    EAGAIN)
			break;
	if (fz_pm(&t->rng, 500))
		fz_destroy(t, fdi, j.ci);
	j.stop = true;
	join(t, th, &j, 10, "wait vs submit");
}

void fz_race(struct fz_thread *t)
{
	int fdi = scen_open(t);

	if (fdi < 0)
		return;
	switch (fz_below(&t->rng, 5)) {
	case 0:
		race_destroy(t, fdi);
		break;
	case 1:
		race_close(t, fdi);
		return;		/* it closed the fd */
	case 2:
		race_dereg(t, fdi);
		return;
	case 3:
		race_create(t, fdi);
		return;
	default:
		race_next_id(t, fdi);
		break;
	}
	fz_drain(t, fdi, 50);
	scen_close(fdi, false);
}
