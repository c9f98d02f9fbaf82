// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: communicators, registrations and allreduce.
 *
 * Each communicator has its own /dev/collx fd, so op ids, registrations
 * and completions never mix between communicators.  Completions are taken
 * with COLLX_IOC_WAIT by op id; the library never read()s the fd.
 *
 *   COLLX_BOOTSTRAP_TIMEOUT   seconds for the rendezvous (default 60)
 *   COLLX_TIMEOUT_MS          the kernel's connect/progress timeout
 *                             (default 0: the module's comm_timeout_ms)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collx_int.h"

/* The device is opened through collx_dev_open(); device.c owns it. */
struct collx_dev;
struct comm_priv {
	struct collx_comm c;
	struct collx_dev *dev;
	bool logged_path[2][2];
};

static __thread char init_error[COLLX_ERRLEN];
static unsigned int init_all_seq;
static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;

static struct comm_priv *priv(struct collx_comm *c)
{
	return (struct comm_priv *)c;
}

void collx_set_error(struct collx_comm *comm, const char *fmt, ...)
{
	char *buf = comm ? comm->last_error : init_error;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, COLLX_ERRLEN, fmt, ap);
	va_end(ap);
	WARN(comm ? comm->rank : -1, "%s", buf);
}

const char *collx_comm_last_error(const struct collx_comm *comm)
{
	return comm ? comm->last_error : init_error;
}

int collx_comm_rank(const struct collx_comm *comm)
{
	return comm ? comm->rank : -EINVAL;
}

int collx_comm_size(const struct collx_comm *comm)
{
	return comm ? comm->nranks : -EINVAL;
}

const char *collx_comm_device(const struct collx_comm *comm)
{
	static __thread char buf[160];
	char ip[INET_ADDRSTRLEN];

	if (!comm)
		return "";
	inet_ntop(AF_INET, &comm->dev.addr, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s:%d %s MTU %d", comm->dev.name, comm->dev.port, ip,
		 comm->dev.mtu);
	return buf;
}

void collx_rank_desc(const struct collx_comm *comm, uint32_t rank, char *out,
		     size_t outlen)
{
	char ip[INET6_ADDRSTRLEN];

	if (rank == COLLX_RANK_NONE || !comm->addrs || rank >= (uint32_t)comm->nranks) {
		snprintf(out, outlen, rank == COLLX_RANK_NONE ? "no single rank" : "rank %u", rank);
		return;
	}
	collx_addr_str(&comm->addrs[rank], ip, sizeof(ip));
	snprintf(out, outlen, "rank %u (%s, %s)", rank, comm->hosts[rank], ip);
}

static int read_timeouts(int *bs_ms, int *comm_ms, char *err, size_t errlen)
{
	long v;

	if (collx_env_long("COLLX_BOOTSTRAP_TIMEOUT", 60, 1, 86400, &v)) {
		snprintf(err, errlen, "COLLX_BOOTSTRAP_TIMEOUT=%s is not seconds in 1..86400",
			 getenv("COLLX_BOOTSTRAP_TIMEOUT"));
		return -EINVAL;
	}
	*bs_ms = (int)v * 1000;
	if (collx_env_long("COLLX_TIMEOUT_MS", 0, 0, 0x7fffffff, &v)) {
		snprintf(err, errlen, "COLLX_TIMEOUT_MS=%s is not milliseconds",
			 getenv("COLLX_TIMEOUT_MS"));
		return -EINVAL;
	}
	*comm_ms = (int)v;
	return 0;
}

static const char *create_errtext(int err)
{
	switch (err) {
	case ETIMEDOUT:
		return "did not answer within the timeout";
	case ECONNREFUSED:
		return "refused the connection (not in this communicator yet, or another job's key)";
	case EHOSTUNREACH:
		return "is unreachable (no route)";
	case ENODEV:
		return "is reached by no RDMA device collx serves";
	case EINTR:
		return "was still being connected when a signal came";
	default:
		return strerror(err);
	}
}

/* Everything after the parameters are known: local setup, rendezvous,
 * the kernel's connect. */
/* How long COLLX_IOC_COMM_CREATE may take: ours, or the module's default. */
static int connect_timeout_ms(const struct collx_comm *comm)
{
	FILE *f;
	int ms = 30000;	/* the module's own default */

	if (comm->timeout_ms)
		return comm->timeout_ms;
	f = fopen("/sys/module/collx/parameters/comm_timeout_ms", "r");
	if (f) {
		if (fscanf(f, "%d", &ms) != 1 || ms <= 0)
			ms = 30000;
		fclose(f);
	}
	return ms;
}

static int comm_init(struct collx_comm **commp, struct collx_bs_params *bp)
{
	struct collx_bs_result res;
	struct collx_comm_create cc;
	struct comm_priv *p;
	struct collx_comm *comm;
	char ip[INET_ADDRSTRLEN], who[160], msg[COLLX_ERRLEN] = "";
	int err, verdict;

	*commp = NULL;
	init_error[0] = 0;
	p = calloc(1, sizeof(*p));
	if (!p) {
		if (bp->listen_fd >= 0)
			close(bp->listen_fd);
		return -ENOMEM;
	}
	comm = &p->c;
	comm->fd = -1;
	comm->rank = bp->rank;
	comm->nranks = bp->nranks;
	pthread_mutex_init(&comm->lock, NULL);

	/* Local setup; a failure is still taken to the rendezvous so that
	 * every rank hears it. */
	err = read_timeouts(&bp->timeout_ms, &comm->timeout_ms, bp->local_msg,
			    sizeof(bp->local_msg));
	if (err)
		bp->timeout_ms = 60000;
	if (!err) {
		err = collx_dev_open(&p->dev);
		if (err)
			snprintf(bp->local_msg, sizeof(bp->local_msg), "/dev/collx: %s",
				 collx_strerror(err));
		else
			comm->fd = collx_dev_fd(p->dev);
	}
	if (!err)
		err = collx_ibdev_select(&comm->dev, bp->local_msg, sizeof(bp->local_msg));
	bp->local_status = err;
	memset(&bp->self, 0, sizeof(bp->self));
	bp->self.family = AF_INET;
	memcpy(bp->self.addr, &comm->dev.addr, 4);
	if (!err) {
		inet_ntop(AF_INET, &comm->dev.addr, ip, sizeof(ip));
		INFO(comm->rank, "device %s port %d (netdev %s), GID %s index %d, MTU %d, address %s (from %s)",
		     comm->dev.name, comm->dev.port, comm->dev.netdev,
		     comm->dev.gid[0] ? comm->dev.gid : "-", comm->dev.gid_index,
		     comm->dev.mtu, ip, comm->dev.how);
	} else {
		WARN(comm->rank, "local setup failed: %s", bp->local_msg);
	}

	err = collx_bootstrap(bp, &res);
	if (err) {
		collx_set_error(NULL, "%s", res.err[0] ? res.err : collx_strerror(err));
		goto out_free;
	}
	comm->comm_key = res.comm_key;
	comm->addrs = res.addrs;
	comm->hosts = res.hosts;
	TRACE(comm->rank, "bootstrap done: %d ranks, key 0x%016llx", comm->nranks,
	      (unsigned long long)comm->comm_key);

	memset(&cc, 0, sizeof(cc));
	cc.size = sizeof(cc);
	cc.nranks = comm->nranks;
	cc.rank = comm->rank;
	cc.comm_key = comm->comm_key;
	cc.addrs = (uintptr_t)comm->addrs;
	cc.addr_size = sizeof(*comm->addrs);
	cc.timeout_ms = comm->timeout_ms;
	cc.failed_rank = COLLX_RANK_NONE;
	while ((err = ioctl(comm->fd, COLLX_IOC_COMM_CREATE, &cc)) && errno == EINTR)
		;
	if (err) {
		err = -errno;
		collx_rank_desc(comm, cc.failed_rank, who, sizeof(who));
		if (cc.failed_rank != COLLX_RANK_NONE)
			snprintf(msg, sizeof(msg), "connect: rank %d: %s %s (%s)", comm->rank,
				 who, create_errtext(-err), strerror(-err));
		else
			snprintf(msg, sizeof(msg), "connect: rank %d: COLLX_IOC_COMM_CREATE: %s",
				 comm->rank, collx_strerror(err));
	}
	/* Every rank's outcome, before any rank may use or destroy its comm. */
	verdict = collx_bs_confirm(bp, &res, err, err ? (int)comm->rank : -1, msg,
				   connect_timeout_ms(comm) + bp->timeout_ms);
	if (err) {
		collx_set_error(NULL, "%s", msg);
		goto out_free;
	}
	if (verdict) {
		struct collx_comm_destroy cd = { .size = sizeof(cd), .comm_id = cc.comm_id };

		ioctl(comm->fd, COLLX_IOC_COMM_DESTROY, &cd);
		collx_set_error(NULL, "%s", res.err);
		err = verdict;
		goto out_free;
	}
	TRACE(comm->rank, "init: every rank connected");
	comm->comm_id = cc.comm_id;
	INFO(comm->rank, "comm %u: rank %d of %d connected, algorithm ring (kernel), key 0x%016llx, timeout %s%d ms",
	     comm->comm_id, comm->rank, comm->nranks, (unsigned long long)comm->comm_key,
	     comm->timeout_ms ? "" : "module default, ", comm->timeout_ms);
	*commp = comm;
	return 0;

out_free:
	collx_bs_result_free(&res);
	collx_dev_close(p->dev);
	pthread_mutex_destroy(&comm->lock);
	free(p);
	return err;
}

int collx_get_unique_id(struct collx_unique_id *id)
{
	struct collx_id_int *ii = (struct collx_id_int *)id->internal;
	const char *cid = getenv("COLLX_COMM_ID");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct in_addr adv;
	char host[256], err[COLLX_ERRLEN];
	uint16_t port = 0;
	int fd, rc;

	memset(id, 0, sizeof(*id));
	if (cid && *cid) {
		if (collx_parse_hostport(cid, host, sizeof(host), &port) || !port) {
			collx_set_error(NULL, "COLLX_COMM_ID=%s is not host:port", cid);
			return -EINVAL;
		}
		rc = collx_resolve_ipv4(host, &adv);
		if (rc) {
			collx_set_error(NULL, "COLLX_COMM_ID=%s: cannot resolve %s", cid, host);
			return rc;
		}
		sa.sin_addr = adv;
		sa.sin_port = htons(port);
	} else {
		struct collx_ibdev_info info;

		if (!collx_ibdev_select(&info, err, sizeof(err)))
			adv = info.addr;
		else if (collx_first_ipv4(&adv))
			adv.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
	}
	fd = collx_bs_listen(&sa);
	if (fd < 0) {
		collx_set_error(NULL, "unique id: cannot listen on TCP port %u: %s",
				port, strerror(-fd));
		return fd;
	}
	ii->magic = COLLX_BS_MAGIC;
	ii->version = COLLX_BS_VERSION;
	ii->family = AF_INET;
	ii->addr = adv.s_addr;
	ii->port = sa.sin_port;
	ii->nonce = collx_random_u64();
	collx_bs_keep_listener(ii->nonce, fd);
	TRACE(0, "unique id: %s:%u nonce 0x%016llx", inet_ntoa(adv), ntohs(sa.sin_port),
	      (unsigned long long)ii->nonce);
	return 0;
}

int collx_comm_init_rank(struct collx_comm **comm, int nranks,
			 const struct collx_unique_id *id, int rank)
{
	const struct collx_id_int *ii = (const struct collx_id_int *)id->internal;
	struct collx_bs_params bp;

	if (!comm)
		return -EINVAL;
	*comm = NULL;
	if (ii->magic != COLLX_BS_MAGIC || ii->version != COLLX_BS_VERSION ||
	    ii->family != AF_INET || !ii->nonce) {
		collx_set_error(NULL, "init: not a libcollx unique id (or another version's)");
		return -EINVAL;
	}
	if (nranks < 1 || nranks > COLLX_MAX_RANKS || rank < 0 || rank >= nranks) {
		collx_set_error(NULL, "init: rank %d of %d ranks is not valid (1..%d ranks)",
				rank, nranks, COLLX_MAX_RANKS);
		return -EINVAL;
	}
	memset(&bp, 0, sizeof(bp));
	bp.rank = rank;
	bp.nranks = nranks;
	bp.root.sin_family = AF_INET;
	bp.root.sin_addr.s_addr = ii->addr;
	bp.root.sin_port = ii->port;
	bp.nonce = ii->nonce;
	bp.listen_fd = rank == 0 ? collx_bs_take_listener(ii->nonce) : -1;
	return comm_init(comm, &bp);
}

int collx_comm_init_all(struct collx_comm **comm)
{
	struct collx_env_cfg cfg;
	struct collx_bs_params bp;
	char err[COLLX_ERRLEN];
	int rc;

	if (!comm)
		return -EINVAL;
	*comm = NULL;
	rc = collx_env_parse(&cfg, err, sizeof(err));
	if (rc) {
		collx_set_error(NULL, "%s", err);
		return rc;
	}
	memset(&bp, 0, sizeof(bp));
	bp.rank = cfg.rank;
	bp.nranks = cfg.nranks;
	bp.root.sin_family = AF_INET;
	bp.root.sin_port = htons(cfg.port);
	bp.listen_fd = -1;
	if (cfg.rank != 0) {
		rc = collx_resolve_ipv4(cfg.host, &bp.root.sin_addr);
		if (rc) {
			collx_set_error(NULL, "init: %s=%s: cannot resolve to IPv4", cfg.source,
					cfg.host);
			return rc;
		}
	}
	pthread_mutex_lock(&seq_lock);
	bp.seq = ++init_all_seq;
	pthread_mutex_unlock(&seq_lock);
	INFO(cfg.rank, "init: rank %d of %d, rendezvous %s:%u (from %s), init #%u",
	     cfg.rank, cfg.nranks, cfg.host, cfg.port, cfg.source, bp.seq);
	return comm_init(comm, &bp);
}

int collx_comm_destroy(struct collx_comm *comm)
{
	struct collx_comm_destroy d = { .size = sizeof(d) };
	struct collx_op *op, *next;
	struct collx_mr *mr, *mnext;
	int err = 0;

	if (!comm)
		return -EINVAL;
	d.comm_id = comm->comm_id;
	if (ioctl(comm->fd, COLLX_IOC_COMM_DESTROY, &d))
		err = -errno;
	pthread_mutex_lock(&comm->lock);
	for (op = comm->ops; op; op = next) {
		struct collx_wait w = { .size = sizeof(w), .op_id = op->op_id,
					.timeout_ms = 10000 };

		next = op->next;
		/* Ops in flight end with ECANCELED; keep their records for
		 * collx_wait()/collx_test(). */
		if (ioctl(comm->fd, COLLX_IOC_WAIT, &w) == 0) {
			op->c = w.completion;
		} else {
			memset(&op->c, 0, sizeof(op->c));
			op->c.op_id = op->op_id;
			op->c.comm_id = comm->comm_id;
			op->c.status = errno == EAGAIN ? -ECANCELED : -errno;
			op->c.failed_rank = COLLX_RANK_NONE;
		}
		op->done = true;
		op->comm = NULL;
		op->next = NULL;
	}
	comm->ops = NULL;
	for (mr = comm->mrs; mr; mr = mnext) {
		struct collx_mr_dereg dr = { .size = sizeof(dr), .mr_id = mr->mr_id };

		mnext = mr->next;
		ioctl(comm->fd, COLLX_IOC_MR_DEREG, &dr);
		free(mr);
	}
	comm->mrs = NULL;
	pthread_mutex_unlock(&comm->lock);
	INFO(comm->rank, "comm %u destroyed after %llu collective(s)%s", comm->comm_id,
	     (unsigned long long)comm->nr_ops, err ? " (destroy ioctl failed)" : "");
	collx_dev_close(priv(comm)->dev);
	free(comm->addrs);
	free(comm->hosts);
	pthread_mutex_destroy(&comm->lock);
	free(priv(comm));
	return err;
}

int collx_mem_register(struct collx_comm *comm, void *buf, size_t size, void **handle)
{
	struct collx_mr_reg r = { .size = sizeof(r) };
	struct collx_mr *mr;
	int err;

	if (!comm || !buf || !size || !handle)
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	r.addr = (uintptr_t)buf;
	r.length = size;
	if (ioctl(comm->fd, COLLX_IOC_MR_REG, &r)) {
		err = -errno;
		free(mr);
		collx_set_error(comm, "register %zu bytes at %p: %s%s", size, buf,
				strerror(-err),
				err == -ENOMEM ? " (over RLIMIT_MEMLOCK? see ulimit -l)" : "");
		return err;
	}
	mr->mr_id = r.mr_id;
	mr->start = (uintptr_t)buf;
	mr->end = (uintptr_t)buf + size;
	pthread_mutex_lock(&comm->lock);
	mr->next = comm->mrs;
	comm->mrs = mr;
	pthread_mutex_unlock(&comm->lock);
	INFO(comm->rank, "registered %zu bytes at %p (mr %u): collectives inside it run in place",
	     size, buf, mr->mr_id);
	*handle = mr;
	return 0;
}

int collx_mem_deregister(struct collx_comm *comm, void *handle)
{
	struct collx_mr_dereg d = { .size = sizeof(d) };
	struct collx_mr *mr = handle, **pp;
	int err = -ENOENT;

	if (!comm || !mr)
		return -EINVAL;
	pthread_mutex_lock(&comm->lock);
	for (pp = &comm->mrs; *pp; pp = &(*pp)->next) {
		if (*pp != mr)
			continue;
		d.mr_id = mr->mr_id;
		if (ioctl(comm->fd, COLLX_IOC_MR_DEREG, &d)) {
			err = -errno;
			break;
		}
		*pp = mr->next;
		free(mr);
		err = 0;
		break;
	}
	pthread_mutex_unlock(&comm->lock);
	if (err)
		collx_set_error(comm, "deregister: %s", strerror(-err));
	return err;
}

/* Whether [p, p + len) lies inside one registration.  Called locked. */
static bool registered(struct collx_comm *comm, const void *p, size_t len)
{
	uintptr_t s = (uintptr_t)p, e = s + len;
	struct collx_mr *mr;

	for (mr = comm->mrs; mr; mr = mr->next)
		if (s >= mr->start && e <= mr->end)
			return true;
	return false;
}

int collx_allreduce_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t count, enum collx_dtype dtype,
			  enum collx_redop redop, struct collx_op **opp)
{
	struct collx_submit s = { .size = sizeof(s) };
	struct collx_op *op;
	size_t bytes;
	bool rs, rr;
	int err;

	if (!opp)
		return -EINVAL;
	*opp = NULL;
	if (!comm || !sendbuf || !recvbuf)
		return -EINVAL;
	if ((unsigned int)dtype >= COLLX_DTYPE_COUNT || (unsigned int)redop >= COLLX_OP_COUNT) {
		collx_set_error(comm, "allreduce: dtype %d or op %d unknown", dtype, redop);
		return -EINVAL;
	}
	if (!count || count > SIZE_MAX / collx_dtype_size(dtype)) {
		collx_set_error(comm, "allreduce: count %zu is not valid", count);
		return -EINVAL;
	}
	bytes = count * collx_dtype_size(dtype);
	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	s.comm_id = comm->comm_id;
	s.coll = COLLX_COLL_ALLREDUCE;
	s.dtype = dtype;
	s.redop = redop;
	s.count = count;
	s.sendbuf = (uintptr_t)sendbuf;
	s.recvbuf = (uintptr_t)recvbuf;
	pthread_mutex_lock(&comm->lock);
	if (ioctl(comm->fd, COLLX_IOC_SUBMIT, &s)) {
		err = -errno;
		pthread_mutex_unlock(&comm->lock);
		free(op);
		if (err == -EPIPE)
			collx_set_error(comm, "allreduce: comm %u is in its error state after an earlier failure; destroy it",
					comm->comm_id);
		else
			collx_set_error(comm, "allreduce: submit %zu x %s %s: %s", count,
					collx_dtype_name(dtype), collx_redop_name(redop),
					collx_strerror(err));
		return err;
	}
	op->comm = comm;
	op->op_id = s.op_id;
	op->next = comm->ops;
	comm->ops = op;
	comm->nr_ops++;
	rs = registered(comm, sendbuf, bytes);
	rr = registered(comm, recvbuf, bytes);
	if (!priv(comm)->logged_path[rs][rr]) {
		priv(comm)->logged_path[rs][rr] = true;
		INFO(comm->rank, "allreduce: memory path send %s, recv %s%s", rs ? "registered" : "bounce",
		     rr ? "registered" : "bounce", sendbuf == recvbuf ? " (in place)" : "");
	}
	pthread_mutex_unlock(&comm->lock);
	TRACE(comm->rank, "allreduce op %llu: %zu x %s %s, %zu bytes, send %p (%s) recv %p (%s)%s",
	      (unsigned long long)op->op_id, count, collx_dtype_name(dtype),
	      collx_redop_name(redop), bytes, sendbuf, rs ? "registered" : "bounce",
	      recvbuf, rr ? "registered" : "bounce", sendbuf == recvbuf ? " in place" : "");
	*opp = op;
	return 0;
}

/* timeout_ms: -1 forever, 0 test. */
static int op_finish(struct collx_op *op, int timeout_ms, int *done,
		     struct collx_completion *c)
{
	struct collx_comm *comm = op->comm;
	struct collx_op **pp;
	char who[160];
	int st;

	if (!op->done) {
		struct collx_wait w = { .size = sizeof(w), .op_id = op->op_id };
		int rc;

		w.timeout_ms = timeout_ms < 0 ? COLLX_WAIT_FOREVER : (uint32_t)timeout_ms;
		while ((rc = ioctl(comm->fd, COLLX_IOC_WAIT, &w)) && errno == EINTR)
			;
		if (rc && errno == EAGAIN) {
			*done = 0;
			return 0;
		}
		if (rc) {
			memset(&op->c, 0, sizeof(op->c));
			op->c.op_id = op->op_id;
			op->c.status = -errno;
			op->c.failed_rank = COLLX_RANK_NONE;
		} else {
			op->c = w.completion;
		}
		op->done = true;
	}
	*done = 1;
	st = op->c.status;
	if (comm) {
		pthread_mutex_lock(&comm->lock);
		for (pp = &comm->ops; *pp; pp = &(*pp)->next)
			if (*pp == op) {
				*pp = op->next;
				break;
			}
		pthread_mutex_unlock(&comm->lock);
		if (st) {
			collx_rank_desc(comm, op->c.failed_rank, who, sizeof(who));
			collx_set_error(comm, "allreduce op %llu on rank %d: %s; %s, %s step %u",
					(unsigned long long)op->op_id, comm->rank,
					collx_strerror(st), who,
					collx_phase_name(op->c.phase), op->c.step);
		} else {
			TRACE(comm->rank, "allreduce op %llu done: %llu bytes in %.1f us",
			      (unsigned long long)op->op_id, (unsigned long long)op->c.bytes,
			      (op->c.end_ns - op->c.start_ns) / 1e3);
		}
	}
	if (c)
		*c = op->c;
	free(op);
	return st;
}

int collx_wait(struct collx_op *op, struct collx_completion *c)
{
	int done;

	if (!op)
		return -EINVAL;
	return op_finish(op, -1, &done, c);
}

int collx_test(struct collx_op *op, int *done, struct collx_completion *c)
{
	if (!op || !done)
		return -EINVAL;
	return op_finish(op, 0, done, c);
}

int collx_allreduce(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		    size_t count, enum collx_dtype dtype, enum collx_redop redop)
{
	struct collx_op *op;
	int err;

	err = collx_allreduce_async(comm, sendbuf, recvbuf, count, dtype, redop, &op);
	if (err)
		return err;
	return collx_wait(op, NULL);
}
