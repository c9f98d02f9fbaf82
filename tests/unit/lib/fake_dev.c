// SPDX-License-Identifier: GPL-2.0
/* A fake collx module behind ioctl(); see fake_dev.h. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "fake_dev.h"

struct fake_state fake = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

static void cond_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fake.cond, &ca);
	pthread_condattr_destroy(&ca);
}

void fake_reset(unsigned int minor)
{
	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&fake.lock);
	memset((char *)&fake + offsetof(struct fake_state, minor), 0,
	       sizeof(fake) - offsetof(struct fake_state, minor));
	fake.minor = minor;
	pthread_mutex_unlock(&fake.lock);
}

static bool is_fake(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

static struct fake_op *find(unsigned long long id)
{
	return id >= 1 && id <= (unsigned long long)fake.nops ? &fake.ops[id - 1] : NULL;
}

/* The memory path a real module would report for @s. */
static unsigned int mem_bits(const struct collx_submit *s)
{
	unsigned int bits = 0;
	int i;

	for (i = 0; i < fake.nmrs; i++)
		if (fake.mrs[i].live && s->recvbuf >= fake.mrs[i].start &&
		    s->recvbuf < fake.mrs[i].end)
			bits = COLLX_MEM_ZERO_COPY | COLLX_MEM_PLACED |
			       (fake.mrs[i].dmabuf ? COLLX_MEM_DMABUF : 0);
	return bits ? bits : COLLX_MEM_STAGED | COLLX_MEM_BOUNCED;
}

static void end_op(struct fake_op *op, int status, unsigned int rank, unsigned int phase)
{
	op->done = true;
	op->c.op_id = op->s.op_id;
	op->c.comm_id = op->s.comm_id;
	op->c.status = status;
	op->c.failed_rank = rank;
	op->c.phase = phase;
	op->c.algo = fake.minor ? (op->s.flags ? op->s.flags : COLLX_ALGO_RING) : 0;
	op->c.bytes = op->s.count * 4;
	op->c.start_ns = 1000;
	op->c.end_ns = 3000;
	op->c.mem = fake.minor ? mem_bits(&op->s) : 0;
	pthread_cond_broadcast(&fake.cond);
}

void fake_complete(unsigned long long id, int status, unsigned int rank, unsigned int phase)
{
	struct fake_op *op;

	pthread_mutex_lock(&fake.lock);
	op = find(id);
	if (op && !op->done)
		end_op(op, status, rank, phase);
	pthread_mutex_unlock(&fake.lock);
}

int fake_pending(void)
{
	int i, n = 0;

	pthread_mutex_lock(&fake.lock);
	for (i = 0; i < fake.nops; i++)
		n += !fake.ops[i].taken;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/* One SUBMIT, or one entry of a group (locked). */
static int submit_one(struct collx_submit *s, bool group)
{
	struct fake_op *op;

	if (s->size != sizeof(*s))
		return EINVAL;
	if (!fake.minor && (s->flags || s->coll != COLLX_COLL_ALLREDUCE))
		return s->flags ? EINVAL : EOPNOTSUPP;
	if (fake.fail_count && s->count == fake.fail_count)
		return EINVAL;
	if (fake.nops == FAKE_MAX_OPS)
		return EAGAIN;
	if (!group) {
		op = &fake.ops[fake.nops++];
		memset(op, 0, sizeof(*op));
		s->op_id = fake.nops;
		op->s = *s;
		fake.submits++;
		if (fake.auto_complete)
			end_op(op, 0, COLLX_RANK_NONE, 0);
	}
	return 0;
}

static int do_group(struct collx_submit_group *g)
{
	struct collx_submit *e = (struct collx_submit *)(uintptr_t)g->entries;
	unsigned int i;
	int err;

	if (!fake.minor)
		return ENOTTY;
	if (!g->count || g->count > COLLX_MAX_GROUP || g->entry_size != sizeof(*e))
		return EINVAL;
	for (i = 0; i < g->count; i++) {
		err = submit_one(&e[i], true);
		if (err) {
			g->error_index = i;
			return err;	/* all or nothing */
		}
	}
	for (i = 0; i < g->count; i++) {
		submit_one(&e[i], false);
		fake.submits--;
	}
	if (fake.groups < FAKE_MAX_CALLS)
		fake.group_sizes[fake.groups] = (int)g->count;
	fake.groups++;
	g->error_index = g->count;
	return 0;
}

static int do_wait(struct collx_wait *w)
{
	struct fake_op *op = find(w->op_id);
	struct timespec ts;

	fake.waits++;
	if (!op || op->taken)
		return ENOENT;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += w->timeout_ms / 1000;
	ts.tv_nsec += (long)(w->timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (!op->done) {
		if (!w->timeout_ms)
			return EAGAIN;
		if (w->timeout_ms == COLLX_WAIT_FOREVER)
			pthread_cond_wait(&fake.cond, &fake.lock);
		else if (pthread_cond_timedwait(&fake.cond, &fake.lock, &ts) == ETIMEDOUT)
			return op->done ? 0 : EAGAIN;
	}
	op->taken = true;
	w->completion = op->c;
	return 0;
}

static int dispatch(unsigned long req, void *arg)
{
	int i;

	switch (req) {
	case COLLX_IOC_VERSION: {
		struct collx_version *v = arg;

		v->abi_major = 1;
		v->abi_minor = fake.minor;
		v->nr_devices = 1;
		v->features = fake.minor ? 0x3f : 0;
		strcpy(v->module_version, "fake");
		return 0;
	}
	case COLLX_IOC_COMM_CREATE: {
		struct collx_comm_create *c = arg;

		if (!fake.minor && c->tos)
			return E2BIG;
		fake.last_create = *c;
		fake.creates++;
		c->comm_id = 1;
		c->global_id = fake.minor ? 77 : 0;
		return 0;
	}
	case COLLX_IOC_COMM_DESTROY:
		fake.destroys++;
		for (i = 0; i < fake.nops; i++)
			if (!fake.ops[i].done)
				end_op(&fake.ops[i], -ECANCELED, COLLX_RANK_NONE, 0);
		return 0;
	case COLLX_IOC_MR_REG: {
		struct collx_mr_reg *r = arg;

		if (!fake.minor && r->flags)
			return EINVAL;
		fake.last_mr = *r;
		fake.mr_regs++;
		if (fake.nmrs < 64) {
			fake.mrs[fake.nmrs].start = r->addr;
			fake.mrs[fake.nmrs].end = r->addr + r->length;
			fake.mrs[fake.nmrs].dmabuf = r->flags & COLLX_MR_F_DMABUF;
			fake.mrs[fake.nmrs].live = true;
			r->mr_id = ++fake.nmrs;
		}
		return 0;
	}
	case COLLX_IOC_MR_DEREG: {
		struct collx_mr_dereg *d = arg;

		if (!d->mr_id || d->mr_id > (unsigned int)fake.nmrs || !fake.mrs[d->mr_id - 1].live)
			return ENOENT;
		fake.mrs[d->mr_id - 1].live = false;
		fake.mr_deregs++;
		return 0;
	}
	case COLLX_IOC_SUBMIT:
		return submit_one(arg, false);
	case COLLX_IOC_SUBMIT_GROUP:
		return do_group(arg);
	case COLLX_IOC_WAIT:
		return do_wait(arg);
	}
	return ENOTTY;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int err;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_fake(fd))
		return __real_ioctl(fd, req, arg);
	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&fake.lock);
	err = dispatch(req, arg);
	pthread_mutex_unlock(&fake.lock);
	return err ? fail(err) : 0;
}
