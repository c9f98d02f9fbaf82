// SPDX-License-Identifier: GPL-2.0
/*
 * collx_errno's fixture: TAP lines, and the calls every case is made of.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "etest.h"

struct et_ctx et;
static unsigned int n, failed;

static void line(bool ok, const char *why, const char *fmt, va_list ap)
{
	n++;
	if (!ok)
		failed++;
	printf("%sok %u - ", ok ? "" : "not ", n);
	vprintf(fmt, ap);
	if (why && *why)
		printf(" # %s", why);
	putchar('\n');
	fflush(stdout);
}

void et_ok(bool ok, const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line(ok, ok ? NULL : why, fmt, ap);
	va_end(ap);
}

const char *et_err(int err)
{
	static __thread char buf[4][24];
	static __thread unsigned int k;

	return fz_errname(err, buf[k++ % 4], sizeof(buf[0]));
}

void et_expect(int got, int want, int alt, const char *fmt, ...)
{
	char why[64] = "";
	va_list ap;
	bool ok = got == want || (alt >= 0 && got == alt);

	if (!ok)
		snprintf(why, sizeof(why), "got %s", et_err(got));
	va_start(ap, fmt);
	line(ok, why, fmt, ap);
	va_end(ap);
}

void et_skip(const char *why, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n++;
	printf("ok %u - %s # SKIP %s\n", n, buf, why);
	fflush(stdout);
}

unsigned int et_failed(void)
{
	return failed;
}

unsigned int et_count(void)
{
	return n;
}

int et_open(void)
{
	return open("/dev/collx", O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

int et_ioctl(int fd, unsigned long nr, void *arg)
{
	return ioctl(fd, nr, arg) ? errno : 0;
}

uint64_t et_key(void)
{
	static uint64_t k;

	if (!k && getrandom(&k, sizeof(k), 0) != sizeof(k))
		k = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	k += 2;
	return k | 1;
}

void et_rank_addr(struct collx_rank_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	memcpy(a->addr, &et.node_addr, 4);
}

int et_comm(int fd, uint64_t key, uint32_t *id)
{
	struct collx_rank_addr a;
	struct collx_comm_create c = { .size = sizeof(c) };
	int err;

	et_rank_addr(&a);
	c.nranks = 1;
	c.comm_key = key ? key : et_key();
	c.addrs = (uint64_t)(uintptr_t)&a;
	c.addr_size = sizeof(a);
	err = et_ioctl(fd, COLLX_IOC_COMM_CREATE, &c);
	if (!err && id)
		*id = c.comm_id;
	return err;
}

int et_destroy(int fd, uint32_t id)
{
	struct collx_comm_destroy d = { .size = sizeof(d), .comm_id = id };

	return et_ioctl(fd, COLLX_IOC_COMM_DESTROY, &d);
}

int et_reg(int fd, void *p, uint64_t len, uint32_t *id)
{
	struct collx_mr_reg r = { .size = sizeof(r) };
	int err;

	r.addr = (uint64_t)(uintptr_t)p;
	r.length = len;
	err = et_ioctl(fd, COLLX_IOC_MR_REG, &r);
	if (!err && id)
		*id = r.mr_id;
	return err;
}

int et_dereg(int fd, uint32_t id)
{
	struct collx_mr_dereg d = { .size = sizeof(d), .mr_id = id };

	return et_ioctl(fd, COLLX_IOC_MR_DEREG, &d);
}

void et_allreduce(struct collx_submit *s, uint32_t comm, uint64_t count,
		  void *send, void *recv)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->comm_id = comm;
	s->coll = COLLX_COLL_ALLREDUCE;
	s->dtype = COLLX_FP32;
	s->redop = COLLX_OP_SUM;
	s->count = count;
	s->sendbuf = (uint64_t)(uintptr_t)send;
	s->recvbuf = (uint64_t)(uintptr_t)recv;
}

int et_submit(int fd, struct collx_submit *s)
{
	return et_ioctl(fd, COLLX_IOC_SUBMIT, s);
}

int et_wait(int fd, uint64_t id, unsigned int ms, struct collx_completion *c)
{
	struct collx_wait w = { .size = sizeof(w), .op_id = id,
				.timeout_ms = ms };
	int err = et_ioctl(fd, COLLX_IOC_WAIT, &w);

	if (!err && c)
		*c = w.completion;
	return err;
}

bool et_readable(int fd, unsigned int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, (int)ms) == 1 && (p.revents & POLLIN);
}

unsigned int et_drain(int fd, unsigned int ms)
{
	struct collx_completion c[64];
	unsigned int got = 0, k;
	ssize_t r;

	/* Bounded: a record at least every @ms, at most 1000 rounds. */
	for (k = 0; k < 1000 && et_readable(fd, ms); k++) {
		r = read(fd, c, sizeof(c));
		if (r <= 0)
			break;
		got += (unsigned int)(r / sizeof(c[0]));
	}
	return got;
}

/* ---- a communicator of this node with itself ---------------------------- */

struct joiner {
	struct et_pair *p;
	uint32_t rank;
};

static void *join(void *arg)
{
	const struct joiner *j = arg;
	struct et_pair *p = j->p;
	struct collx_comm_create c = { .size = sizeof(c) };
	uint64_t t0 = et_now_ms();

	c.nranks = p->nranks;
	c.rank = j->rank;
	c.comm_key = p->key;
	c.addrs = (uint64_t)(uintptr_t)p->addrs;
	c.addr_size = sizeof(p->addrs[0]);
	c.timeout_ms = p->timeout_ms;
	p->err[j->rank] = et_ioctl(p->fd[j->rank], COLLX_IOC_COMM_CREATE, &c);
	p->id[j->rank] = c.comm_id;
	p->failed_rank[j->rank] = c.failed_rank;
	p->took_ms[j->rank] = et_now_ms() - t0;
	return NULL;
}

int et_ranks_up(struct et_pair *p, uint32_t nranks, uint32_t timeout_ms)
{
	struct joiner j[2] = { { p, 0 }, { p, 1 } };
	pthread_t th[2];
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->key = et_key();
	p->nranks = nranks;
	p->timeout_ms = timeout_ms;
	for (i = 0; i < nranks; i++)
		et_rank_addr(&p->addrs[i]);
	for (i = 0; i < 2; i++)
		p->fd[i] = et_open();
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, join, &j[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return p->err[0] ? p->err[0] : p->err[1];
}

int et_pair_up(struct et_pair *p)
{
	return et_ranks_up(p, 2, 5000 * fz_slowdown());
}

void et_pair_close(struct et_pair *p)
{
	close(p->fd[0]);
	close(p->fd[1]);
}

bool et_pair_or_fail(struct et_pair *p, const char *what)
{
	int err = et_pair_up(p);

	if (err) {
		et_ok(false, et_err(err), "%s", what);
		et_pair_close(p);
	}
	return !err;
}

uint64_t et_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
