// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: communicators: init (local setup, rendezvous, the kernel's
 * connect, the closing barrier), their state, destroy and abort.
 *
 * Each communicator has its own /dev/collx fd, so op ids, registrations
 * and completions never mix between communicators, and poll() on that fd
 * (collx_comm_fd()) means this communicator's ops.  Completions are taken
 * with COLLX_IOC_WAIT by op id; the library never read()s the fd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "collx_int.h"

static __thread char init_error[COLLX_ERRLEN];
static unsigned int init_all_seq;
static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;

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

unsigned int collx_comm_global_id(const struct collx_comm *comm)
{
	return comm ? comm->global_id : 0;
}

int collx_comm_fd(const struct collx_comm *comm)
{
	return comm && !comm->dead ? comm->fd : -EINVAL;
}

const char *collx_comm_device(const struct collx_comm *comm)
{
	static __thread char buf[160];
	char ip[INET_ADDRSTRLEN];

	if (!comm)
		return "";
	inet_ntop(AF_INET, &comm->ibdev.addr, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s:%d %s MTU %d", comm->ibdev.name, comm->ibdev.port, ip,
		 comm->ibdev.mtu);
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

/* ---- lifetime ---- */

void collx_comm_ref(struct collx_comm *comm)
{
	comm->refs++;
}

static void comm_free(struct collx_comm *comm)
{
	collx_dev_close(comm->dev);
	free(comm->addrs);
	free(comm->hosts);
	pthread_cond_destroy(&comm->cond);
	pthread_mutex_destroy(&comm->lock);
	free(comm);
}

void collx_comm_unref(struct collx_comm *comm)
{
	bool last;

	pthread_mutex_lock(&comm->lock);
	last = --comm->refs == 0;
	pthread_mutex_unlock(&comm->lock);
	if (last)
		comm_free(comm);
}

void collx_comm_fd_get(struct collx_comm *comm)
{
	comm->fd_users++;
}

void collx_comm_fd_put(struct collx_comm *comm)
{
	if (--comm->fd_users)
		return;
	/* Only a destroyed comm gets here: nobody is in an ioctl any more. */
	collx_dev_close(comm->dev);
	comm->dev = NULL;
	comm->fd = -1;
}

static struct collx_comm *comm_alloc(int rank, int nranks)
{
	struct collx_comm *comm = calloc(1, sizeof(*comm));
	pthread_condattr_t ca;

	if (!comm)
		return NULL;
	pthread_mutex_init(&comm->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&comm->cond, &ca);
	pthread_condattr_destroy(&ca);
	comm->refs = 1;
	comm->fd = -1;
	comm->rank = rank;
	comm->nranks = nranks;
	return comm;
}

/* ---- init ---- */

static const char *create_errtext(int err)
{
	switch (err) {
	case ETIMEDOUT:
		return "did not answer within the timeout";
	case ECONNREFUSED:
		return "refused the connection (not in this communicator yet, or another job's key)";
	case EACCES:
		return "failed to prove the communicator's secret (another job?)";
	case EHOSTUNREACH:
		return "is unreachable (no route)";
	case ENODEV:
		return "is reached by no RDMA device collx serves";
	case EXDEV:
		return "is reached through another RDMA device than the other peers";
	case EINTR:
		return "was still being connected when a signal came";
	default:
		return strerror(err);
	}
}

/* Everything this rank checks before the rendezvous; on failure the text
 * goes to the rendezvous so that every rank hears it. */
static int local_setup(struct collx_comm *comm, struct collx_bs_params *bp,
		       struct collx_env_comm *env)
{
	char *msg = bp->local_msg;
	size_t len = sizeof(bp->local_msg);
	int err;

	err = collx_env_comm_read(env, msg, len);
	bp->timeout_ms = err ? 60000 : env->bs_timeout_ms;
	comm->timeout_ms = env->timeout_ms;
	comm->env_algo = env->algo;
	if (!err)
		err = collx_sock_bind_addr(&bp->bind_addr, msg, len);
	if (!err) {
		err = collx_dev_open(&comm->dev);
		collx_log_version(err ? NULL : collx_dev_version(comm->dev));
		if (err) {
			snprintf(msg, len, "/dev/collx: %s", collx_dev_strerror(err));
		} else {
			comm->fd = collx_dev_fd(comm->dev);
			comm->fd_users = 1;
			comm->abi11 = collx_dev_abi11(comm->dev);
		}
	}
	if (!err && !comm->abi11 && env->tos) {
		snprintf(msg, len, "COLLX_IB_TC=%d needs a collx module with ABI 1.1 (this one: %s, ABI 1.%u)",
			 env->tos, comm->dev->version.module_version, comm->dev->version.abi_minor);
		err = -EOPNOTSUPP;
	}
	if (!err && !comm->abi11 && env->algo != COLLX_ALGO_AUTO) {
		WARN(comm->rank, "COLLX_ALGO=%s ignored: the module speaks ABI 1.0 (ring allreduce only)",
		     collx_algo_name(env->algo));
		comm->env_algo = COLLX_ALGO_AUTO;
	}
	if (!err)
		err = collx_ibdev_select(&comm->ibdev, msg, len);
	return err;
}

static void log_device(const struct collx_comm *comm)
{
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &comm->ibdev.addr, ip, sizeof(ip));
	INFO(COLLX_SUB_NET, comm->rank, "device %s port %d (netdev %s), GID %s index %d%s%s, MTU %d, address %s (from %s)%s",
	     comm->ibdev.name, comm->ibdev.port, comm->ibdev.netdev[0] ? comm->ibdev.netdev : "-",
	     comm->ibdev.gid[0] ? comm->ibdev.gid : "-", comm->ibdev.gid_index,
	     comm->ibdev.gid[0] ? " " : "",
	     comm->ibdev.gid[0] ? collx_gid_type_name(comm->ibdev.gid_type) : "",
	     comm->ibdev.mtu, ip, comm->ibdev.how,
	     comm->ibdev.ncandidates > 1 ? "; one port per communicator, the first of those that qualify" : "");
}

/* COLLX_IOC_COMM_CREATE; the secret lives on the stack only meanwhile. */
static int comm_create(struct collx_comm *comm, struct collx_bs_result *res,
		       const struct collx_env_comm *env, char *msg, size_t len)
{
	struct collx_comm_create cc;
	char who[160];
	int err;

	memset(&cc, 0, sizeof(cc));
	cc.size = sizeof(cc);
	cc.nranks = comm->nranks;
	cc.rank = comm->rank;
	cc.comm_key = comm->comm_key;
	cc.addrs = (uintptr_t)comm->addrs;
	cc.addr_size = sizeof(*comm->addrs);
	cc.timeout_ms = comm->timeout_ms;
	cc.failed_rank = COLLX_RANK_NONE;
	if (comm->abi11) {
		memcpy(cc.secret, res->secret, sizeof(cc.secret));
		cc.tos = env->tos;
	}
	err = collx_ioctl(comm->fd, COLLX_IOC_COMM_CREATE, &cc);
	explicit_bzero(cc.secret, sizeof(cc.secret));
	explicit_bzero(res->secret, sizeof(res->secret));
	if (!err) {
		comm->comm_id = cc.comm_id;
		/* ABI 1.0 has no module-wide id: its handle is all there is */
		comm->global_id = comm->abi11 ? cc.global_id : cc.comm_id;
		return 0;
	}
	collx_rank_desc(comm, cc.failed_rank, who, sizeof(who));
	if (cc.failed_rank != COLLX_RANK_NONE)
		snprintf(msg, len, "connect: rank %d: %s %s (%s)", comm->rank, who,
			 create_errtext(-err), strerror(-err));
	else
		snprintf(msg, len, "connect: rank %d: COLLX_IOC_COMM_CREATE: %s", comm->rank,
			 collx_strerror(err));
	return err;
}

/*
 * The job token, if the launcher gave one, authenticates the rendezvous;
 * without one it runs as before, and says once that it is open to anyone
 * who reaches the port.
 */
static int bs_auth_setup(struct collx_bs_params *bp)
{
	char err[COLLX_ERRLEN];
	long sep;
	int rc;

	rc = collx_job_key(bp->job_key, err, sizeof(err));
	if (rc < 0) {
		collx_set_error(NULL, "init: rank %d: %s", bp->rank, err);
		return rc;
	}
	bp->auth = rc > 0;
	if (!bp->auth) {
		if (bp->nranks > 1)	/* one rank meets nobody */
			collx_warn_unauthenticated(ntohs(bp->root.sin_port));
		return 0;
	}
	if (collx_env_long("COLLX_SEPARATE_RDMA_NET", 0, 0, 1, &sep)) {
		collx_set_error(NULL, "init: COLLX_SEPARATE_RDMA_NET=%s is not 0 or 1",
				getenv("COLLX_SEPARATE_RDMA_NET"));
		explicit_bzero(bp->job_key, sizeof(bp->job_key));
		return -EINVAL;
	}
	bp->any_rdma_addr = sep;
	return 0;
}

static int comm_init(struct collx_comm **commp, struct collx_bs_params *bp)
{
	char msg[COLLX_ERRLEN] = "";
	struct collx_bs_result res;
	struct collx_env_comm env;
	struct collx_comm *comm;
	int err, verdict, wait_ms;

	*commp = NULL;
	init_error[0] = 0;
	err = bs_auth_setup(bp);
	comm = err ? NULL : comm_alloc(bp->rank, bp->nranks);
	if (!comm) {
		if (bp->listen_fd >= 0)
			close(bp->listen_fd);
		explicit_bzero(bp->job_key, sizeof(bp->job_key));
		return err ? err : -ENOMEM;
	}
	bp->local_status = local_setup(comm, bp, &env);
	memset(&bp->self, 0, sizeof(bp->self));
	bp->self.family = AF_INET;
	memcpy(bp->self.addr, &comm->ibdev.addr, 4);
	if (!bp->local_status)
		log_device(comm);
	else
		WARN(comm->rank, "local setup failed: %s", bp->local_msg);

	err = collx_bootstrap(bp, &res);
	if (err) {
		collx_set_error(NULL, "%s", res.err[0] ? res.err : collx_strerror(err));
		goto out_free;
	}
	comm->comm_key = res.comm_key;
	comm->addrs = res.addrs;
	comm->hosts = res.hosts;
	res.addrs = NULL;
	res.hosts = NULL;
	TRACE(COLLX_SUB_BOOTSTRAP, comm->rank, "bootstrap done: %d ranks", comm->nranks);

	err = comm_create(comm, &res, &env, msg, sizeof(msg));
	/* Every rank's outcome, before any rank may use or destroy its comm:
	 * bounded by the slowest rank's own COMM_CREATE timeout. */
	wait_ms = bp->timeout_ms + (comm->timeout_ms ? comm->timeout_ms : (int)COLLX_MAX_TIMEOUT_MS);
	verdict = collx_bs_confirm(bp, &res, err, err ? (int)comm->rank : -1, msg, wait_ms);
	if (err) {
		collx_set_error(NULL, "%s", msg);
		goto out_free;
	}
	if (verdict) {
		struct collx_comm_destroy cd = { .size = sizeof(cd), .comm_id = comm->comm_id };

		collx_ioctl(comm->fd, COLLX_IOC_COMM_DESTROY, &cd);
		collx_set_error(NULL, "%s", res.err);
		err = verdict;
		goto out_free;
	}
	collx_bs_result_free(&res);
	explicit_bzero(bp->job_key, sizeof(bp->job_key));
	INFO(COLLX_SUB_INIT, comm->rank, "comm %u: rank %d of %d connected on %s, timeout %s%d ms",
	     comm->global_id, comm->rank, comm->nranks, comm->ibdev.name,
	     comm->timeout_ms ? "" : "module default, ", comm->timeout_ms);
	if (env.tos)
		INFO(COLLX_SUB_NET, comm->rank, "comm %u: RoCE traffic class %d (DSCP %d)",
		     comm->global_id, env.tos, env.tos >> 2);
	*commp = comm;
	return 0;

out_free:
	collx_bs_result_free(&res);
	explicit_bzero(bp->job_key, sizeof(bp->job_key));
	comm_free(comm);
	return err;
}

int collx_get_unique_id(struct collx_unique_id *id)
{
	struct collx_id_int *ii = (struct collx_id_int *)id->internal;
	const char *cid = collx_getenv("COLLX_COMM_ID");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[256], err[COLLX_ERRLEN];
	struct in_addr adv, bind;
	uint16_t port = 0;
	int fd, rc;

	memset(id, 0, sizeof(*id));
	rc = collx_sock_bind_addr(&bind, err, sizeof(err));
	if (rc) {
		collx_set_error(NULL, "unique id: %s", err);
		return rc;
	}
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
	} else if (bind.s_addr != htonl(INADDR_ANY)) {
		adv = bind;
		sa.sin_addr = bind;
	} else {
		struct collx_ibdev_info info;

		if (!collx_ibdev_select(&info, err, sizeof(err)))
			adv = info.addr;
		else if (collx_first_ipv4(&adv))
			adv.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
	}
	do {
		rc = collx_random_bytes(&ii->nonce, sizeof(ii->nonce));
	} while (!rc && !ii->nonce);
	if (rc) {
		collx_set_error(NULL, "unique id: getrandom() failed: %s", strerror(-rc));
		return rc;
	}
	fd = collx_sock_listen(&sa);
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
	collx_bs_keep_listener(ii->nonce, fd);
	TRACE(COLLX_SUB_BOOTSTRAP, 0, "unique id: %s:%u", inet_ntoa(adv), ntohs(sa.sin_port));
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
			collx_set_error(NULL, "init: %s=%.100s: rank 0's host %s does not resolve to an IPv4 address",
					cfg.source, getenv(cfg.source), cfg.host);
			return rc;
		}
	}
	pthread_mutex_lock(&seq_lock);
	bp.seq = ++init_all_seq;
	pthread_mutex_unlock(&seq_lock);
	INFO(COLLX_SUB_INIT, cfg.rank, "init: rank %d of %d (from %s), rendezvous %s:%u (from %s), init #%u",
	     cfg.rank, cfg.nranks, cfg.launcher, cfg.host, cfg.port, cfg.source, bp.seq);
	return comm_init(comm, &bp);
}

/* ---- state ---- */

int collx_comm_get_async_error(struct collx_comm *comm)
{
	int err;

	if (!comm)
		return -EINVAL;
	pthread_mutex_lock(&comm->lock);
	if (!comm->dead && !comm->async_error)
		collx_op_poll(comm);
	err = comm->async_error;
	pthread_mutex_unlock(&comm->lock);
	return err;
}

/* ---- destroy and abort ---- */

/*
 * Safe while other threads wait on the comm's ops: COMM_DESTROY makes the
 * kernel end them with ECANCELED, their waiters take those records, and
 * the fd and the memory stay until the last of them has left.
 */
static int comm_teardown(struct collx_comm *comm, bool abort)
{
	struct collx_comm_destroy d = { .size = sizeof(d) };
	uint64_t nops;
	int err, fd;

	pthread_mutex_lock(&comm->lock);
	if (comm->dead) {
		pthread_mutex_unlock(&comm->lock);
		return -EINVAL;
	}
	comm->dead = true;
	fd = comm->fd;
	d.comm_id = comm->comm_id;
	nops = comm->nr_ops;
	pthread_mutex_unlock(&comm->lock);

	/* Not under the lock: waiters must be able to take their records. */
	err = collx_ioctl(fd, COLLX_IOC_COMM_DESTROY, &d);

	pthread_mutex_lock(&comm->lock);
	collx_op_reap_all(comm, abort ? 2000 : 10000);
	collx_mem_release_all(comm);
	collx_comm_fd_put(comm);
	pthread_mutex_unlock(&comm->lock);
	if (abort)
		WARN(comm->rank, "comm %u aborted after %llu collective(s)%s", comm->global_id,
		     (unsigned long long)nops, err ? " (destroy ioctl failed)" : "");
	else
		INFO(COLLX_SUB_INIT, comm->rank, "comm %u destroyed after %llu collective(s)%s",
		     comm->global_id, (unsigned long long)nops, err ? " (destroy ioctl failed)" : "");
	collx_comm_unref(comm);
	return err;
}

int collx_comm_destroy(struct collx_comm *comm)
{
	return comm ? comm_teardown(comm, false) : -EINVAL;
}

int collx_comm_abort(struct collx_comm *comm)
{
	return comm ? comm_teardown(comm, true) : -EINVAL;
}
