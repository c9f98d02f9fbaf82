// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: the rendezvous over TCP, as ncclGetUniqueId does it.
 *
 * Rank 0 listens; every other rank connects (retrying while rank 0 is not
 * up yet), sends a hello with its RDMA address, and gets back the table of
 * every rank's address, the communicator key and the communicator's
 * secret: 32 bytes rank 0 takes from getrandom(), which the kernels use to
 * authenticate each other's connections (COMM_CREATE's secret) and which
 * never appear in a log.  Rank 0 answers once all ranks have joined, or,
 * at the deadline, tells those that did which ranks never came.  A rank
 * whose own setup failed still joins, with its error, so that every rank
 * fails at once with the same message.
 *
 * The connections stay open through COMM_CREATE: then every rank reports
 * its outcome to rank 0, which answers all of them with the first failure
 * (or success) once everyone reported (collx_bs_confirm).  So init is a
 * barrier, as in NCCL — no rank returns, and may destroy its comm, before
 * every rank's RDMA connections are up — and all ranks agree on the result.
 *
 * Wire format (version 2): fixed-size structs, integers in network order.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collx_int.h"

struct bs_hello {
	uint32_t magic;
	uint32_t version;
	uint32_t rank;
	uint32_t nranks;
	uint64_t nonce;
	uint32_t seq;
	int32_t status;
	struct collx_rank_addr addr;
	char host[64];
	char msg[128];
};

struct bs_reply {
	uint32_t magic;
	uint32_t version;
	int32_t status;
	uint32_t failed_rank;
	uint64_t comm_key;
	uint32_t nranks;
	uint32_t __pad;
	uint8_t secret[COLLX_SECRET_BYTES];
	char msg[COLLX_ERRLEN];
};

struct bs_entry {
	struct collx_rank_addr addr;
	char host[64];
};

/* How long one peer may take to send its hello or read a reply. */
#define BS_IO_MS	5000
/* How much longer than its own deadline a rank waits for rank 0's answer,
 * so that rank 0's message about missing ranks arrives first. */
#define BS_GRACE_MS	5000

int collx_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = getrandom(p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

static void wipe(void *p, size_t len)
{
	explicit_bzero(p, len);
}

/* ---- listeners made by collx_get_unique_id() ---- */

#define MAX_KEPT 64
static struct {
	uint64_t nonce;
	int fd;
} kept[MAX_KEPT];
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void collx_bs_keep_listener(uint64_t nonce, int fd)
{
	int i;

	pthread_mutex_lock(&kept_lock);
	for (i = 0; i < MAX_KEPT; i++) {
		if (!kept[i].nonce) {
			kept[i].nonce = nonce;
			kept[i].fd = fd;
			fd = -1;
			break;
		}
	}
	pthread_mutex_unlock(&kept_lock);
	if (fd >= 0)	/* table full: rank 0's init binds the port again */
		close(fd);
}

int collx_bs_take_listener(uint64_t nonce)
{
	int i, fd = -1;

	pthread_mutex_lock(&kept_lock);
	for (i = 0; i < MAX_KEPT; i++) {
		if (kept[i].nonce == nonce) {
			fd = kept[i].fd;
			kept[i].nonce = 0;
			break;
		}
	}
	pthread_mutex_unlock(&kept_lock);
	return fd;
}

/* ---- messages ---- */

static bool header_ok(uint32_t magic, uint32_t version)
{
	return ntohl(magic) == COLLX_BS_MAGIC && ntohl(version) == COLLX_BS_VERSION;
}

/* A reply or report: header, outcome and message. */
static void reply_init(struct bs_reply *r, int status, int failed_rank, const char *msg)
{
	memset(r, 0, sizeof(*r));
	r->magic = htonl(COLLX_BS_MAGIC);
	r->version = htonl(COLLX_BS_VERSION);
	r->status = htonl(-status);
	r->failed_rank = htonl(failed_rank < 0 ? COLLX_RANK_NONE : (uint32_t)failed_rank);
	snprintf(r->msg, sizeof(r->msg), "%s", msg ? msg : "");
}

static void reply_to(int fd, const struct bs_reply *r, const struct bs_entry *tab, int n)
{
	int64_t dl = collx_now_ms() + BS_IO_MS;

	if (collx_sock_io(fd, (void *)r, sizeof(*r), dl, true))
		return;
	if (tab)
		collx_sock_io(fd, (void *)tab, sizeof(*tab) * n, dl, true);
}

static int fill_result(struct collx_bs_result *res, const struct bs_entry *tab, int n)
{
	int i;

	res->addrs = calloc(n, sizeof(*res->addrs));
	res->hosts = calloc(n, sizeof(*res->hosts));
	if (!res->addrs || !res->hosts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		res->addrs[i] = tab[i].addr;
		memcpy(res->hosts[i], tab[i].host, sizeof(res->hosts[i]));
		res->hosts[i][sizeof(res->hosts[i]) - 1] = 0;
	}
	return 0;
}

/* ---- rank 0 ---- */

struct bs_root {
	const struct collx_bs_params *p;
	int n, fd, njoined;
	int status;			/* the first failure, for everyone */
	uint32_t failed;
	char msg[COLLX_ERRLEN];
	struct bs_entry *tab;
	int *conns;			/* by rank; -1 until it joined */
};

static void root_fail(struct bs_root *r, int status, uint32_t rank, const char *msg)
{
	if (r->status)
		return;
	r->status = status;
	r->failed = rank;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

static int root_setup(struct bs_root *r, struct collx_bs_result *res)
{
	const struct collx_bs_params *p = r->p;
	int i;

	r->n = p->nranks;
	r->fd = p->listen_fd;
	r->njoined = 1;
	r->failed = COLLX_RANK_NONE;
	if (r->fd < 0) {
		struct sockaddr_in sa = p->root;

		sa.sin_addr = p->bind_addr;
		r->fd = collx_sock_listen(&sa);
		if (r->fd < 0) {
			snprintf(res->err, sizeof(res->err),
				 "bootstrap: rank 0 cannot listen on TCP port %u: %s",
				 ntohs(p->root.sin_port), strerror(-r->fd));
			return r->fd;
		}
	}
	r->tab = calloc(r->n, sizeof(*r->tab));
	r->conns = malloc(r->n * sizeof(*r->conns));
	if (!r->tab || !r->conns) {
		close(r->fd);
		return -ENOMEM;
	}
	for (i = 0; i < r->n; i++)
		r->conns[i] = -1;
	r->tab[0].addr = p->self;
	collx_host_name(r->tab[0].host, sizeof(r->tab[0].host));
	if (p->local_status) {
		char m[COLLX_ERRLEN];

		snprintf(m, sizeof(m), "rank 0 (%s): %s", r->tab[0].host, p->local_msg);
		root_fail(r, p->local_status, 0, m);
	}
	return 0;
}

/* A hello that names a rank this rendezvous cannot take: why, or NULL. */
static const char *root_bad_rank(struct bs_root *r, const struct bs_hello *h,
				 char *why, size_t len)
{
	uint32_t hr = ntohl(h->rank), hn = ntohl(h->nranks);

	if (hn != (uint32_t)r->n)
		snprintf(why, len, "bootstrap: rank %u (%s) says there are %u ranks, rank 0 (%s) says %d",
			 hr, h->host, hn, r->tab[0].host, r->n);
	else if (hr == 0 || hr >= (uint32_t)r->n)
		snprintf(why, len, "bootstrap: %s claims rank %u of %d", h->host, hr, r->n);
	else if (r->conns[hr] >= 0)
		snprintf(why, len, "bootstrap: rank %u claimed twice (%s and %s)",
			 hr, r->tab[hr].host, h->host);
	else
		return NULL;
	return why;
}

/* Take one connection: a rank joins, is refused, or is told to retry. */
static void root_accept(struct bs_root *r, int c)
{
	const struct collx_bs_params *p = r->p;
	struct bs_reply rep;
	struct bs_hello h;
	char why[COLLX_ERRLEN];
	uint32_t hr;

	if (collx_sock_io(c, &h, sizeof(h), collx_now_ms() + BS_IO_MS, false) ||
	    !header_ok(h.magic, h.version)) {
		WARN(0, "bootstrap: dropped a connection that is not a libcollx v%d hello",
		     COLLX_BS_VERSION);
		close(c);
		return;
	}
	h.host[sizeof(h.host) - 1] = 0;
	h.msg[sizeof(h.msg) - 1] = 0;
	hr = ntohl(h.rank);
	if (p->nonce && be64toh(h.nonce) != p->nonce) {
		reply_init(&rep, -EPROTO, (int)hr,
			   "bootstrap: rank 0 at this address serves another unique id (stale id or another job)");
		WARN(0, "bootstrap: %s (rank %u) came with another job's id", h.host, hr);
		reply_to(c, &rep, NULL, 0);
		close(c);
		return;
	}
	if (!p->nonce && ntohl(h.seq) != p->seq) {
		/* Its n-th init against our m-th: it retries. */
		TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank %u is at init #%u, rank 0 at #%u; it retries",
		      hr, ntohl(h.seq), p->seq);
		close(c);
		return;
	}
	if (root_bad_rank(r, &h, why, sizeof(why))) {
		WARN(0, "%s", why);
		root_fail(r, -EINVAL, hr, why);
		if (hr > 0 && hr < (uint32_t)r->n && r->conns[hr] < 0) {
			r->conns[hr] = c;	/* hears the verdict with the rest */
			memcpy(r->tab[hr].host, h.host, sizeof(h.host));
			r->njoined++;
		} else {
			reply_init(&rep, -EINVAL, (int)hr, why);
			reply_to(c, &rep, NULL, 0);
			close(c);
		}
		return;
	}
	r->conns[hr] = c;
	r->tab[hr].addr = h.addr;
	memcpy(r->tab[hr].host, h.host, sizeof(h.host));
	r->njoined++;
	TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank %u (%s) joined, %d of %d", hr, h.host,
	      r->njoined, r->n);
	if (ntohl(h.status)) {
		snprintf(why, sizeof(why), "rank %u (%s): %s", hr, h.host, h.msg);
		root_fail(r, -(int)ntohl(h.status), hr, why);
	}
}

/* The deadline passed: every rank is told which ranks never came. */
static void root_missing(struct bs_root *r)
{
	char list[160] = "";
	size_t o = 0;
	int i, missing = 0;

	r->failed = COLLX_RANK_NONE;
	for (i = 1; i < r->n; i++) {
		if (r->conns[i] >= 0)
			continue;
		if (r->failed == COLLX_RANK_NONE)
			r->failed = i;
		if (missing++ < 16 && o < sizeof(list))
			o += snprintf(list + o, sizeof(list) - o, "%s%d", missing > 1 ? ", " : "", i);
	}
	if (missing > 16 && o < sizeof(list))
		snprintf(list + o, sizeof(list) - o, " and %d more", missing - 16);
	r->status = -ETIMEDOUT;
	snprintf(r->msg, sizeof(r->msg),
		 "bootstrap: rank%s %.100s never joined within %g s (rank 0 %.40s waited on port %u)",
		 missing > 1 ? "s" : "", list, r->p->timeout_ms / 1000.0, r->tab[0].host,
		 ntohs(r->p->root.sin_port));
}

/* The key and the secret for a rendezvous that worked. */
static void root_secrets(struct bs_root *r, struct collx_bs_result *res)
{
	char m[COLLX_ERRLEN];
	int err;

	res->comm_key = r->p->nonce;
	err = collx_random_bytes(res->secret, sizeof(res->secret));
	while (!err && !res->comm_key)
		err = collx_random_bytes(&res->comm_key, sizeof(res->comm_key));
	if (err) {
		snprintf(m, sizeof(m), "bootstrap: rank 0 (%s) cannot take %zu random bytes from getrandom(): %s",
			 r->tab[0].host, sizeof(res->secret), strerror(-err));
		root_fail(r, err, 0, m);
	}
}

static int root_answer(struct bs_root *r, struct collx_bs_result *res)
{
	struct bs_reply rep;
	int i, err;

	if (!r->status)
		root_secrets(r, res);
	reply_init(&rep, r->status, r->failed == COLLX_RANK_NONE ? -1 : (int)r->failed,
		   r->status ? r->msg : NULL);
	rep.nranks = htonl(r->n);
	if (!r->status) {
		rep.comm_key = htobe64(res->comm_key);
		memcpy(rep.secret, res->secret, sizeof(rep.secret));
	}
	for (i = 1; i < r->n; i++) {
		if (r->conns[i] < 0)
			continue;
		reply_to(r->conns[i], &rep, r->status ? NULL : r->tab, r->n);
		if (r->status)
			close(r->conns[i]);
	}
	wipe(&rep, sizeof(rep));
	if (r->status) {
		free(r->conns);
		res->failed_rank = r->failed == COLLX_RANK_NONE ? -1 : (int)r->failed;
		snprintf(res->err, sizeof(res->err), "%s", r->msg);
		wipe(res->secret, sizeof(res->secret));
		return r->status;
	}
	/* Kept open for collx_bs_confirm(). */
	res->conns = r->conns;
	res->nconns = r->n;
	err = fill_result(res, r->tab, r->n);
	return err;
}

static int bootstrap_root(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	int64_t deadline = collx_now_ms() + p->timeout_ms;
	struct bs_root r = { .p = p };
	int err;

	err = root_setup(&r, res);
	if (err) {
		free(r.tab);
		free(r.conns);
		return err;
	}
	TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank 0 listening on port %u for %d ranks",
	      ntohs(p->root.sin_port), r.n - 1);
	while (r.njoined < r.n) {
		struct pollfd pfd = { .fd = r.fd, .events = POLLIN };
		int64_t rem = deadline - collx_now_ms();
		int c;

		if (rem <= 0)
			break;
		if (poll(&pfd, 1, rem > 1000000 ? 1000000 : (int)rem) <= 0)
			continue;
		c = accept4(r.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c >= 0)
			root_accept(&r, c);
	}
	close(r.fd);
	if (r.njoined < r.n)
		root_missing(&r);
	err = root_answer(&r, res);
	free(r.tab);
	return err;
}

/* ---- every other rank ---- */

static void peer_hello(const struct collx_bs_params *p, struct bs_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = htonl(COLLX_BS_MAGIC);
	h->version = htonl(COLLX_BS_VERSION);
	h->rank = htonl(p->rank);
	h->nranks = htonl(p->nranks);
	h->nonce = htobe64(p->nonce);
	h->seq = htonl(p->seq);
	h->status = htonl(-p->local_status);
	h->addr = p->self;
	collx_host_name(h->host, sizeof(h->host));
	snprintf(h->msg, sizeof(h->msg), "%s", p->local_msg);
}

/* Connect and trade hello for reply, retrying until rank 0 answers. */
static int peer_join(const struct collx_bs_params *p, struct collx_bs_result *res,
		     struct bs_reply *r, int *fdp)
{
	int64_t deadline = collx_now_ms() + p->timeout_ms;
	int backoff = 50, last = 0, err, attempts = 0;
	char ip[INET_ADDRSTRLEN];
	struct bs_hello h;
	int64_t rem;

	inet_ntop(AF_INET, &p->root.sin_addr, ip, sizeof(ip));
	peer_hello(p, &h);
	for (;;) {
		rem = deadline - collx_now_ms();
		if (rem <= 0) {
			res->failed_rank = 0;
			snprintf(res->err, sizeof(res->err),
				 "bootstrap: rank %d cannot reach rank 0 at %s:%u within %g s (%d attempts, last: %s)",
				 p->rank, ip, ntohs(p->root.sin_port), p->timeout_ms / 1000.0,
				 attempts, last ? strerror(-last) : "no answer");
			return -ETIMEDOUT;
		}
		attempts++;
		err = collx_sock_connect(&p->root, p->bind_addr, deadline, fdp);
		if (!err) {
			err = collx_sock_io(*fdp, &h, sizeof(h), collx_now_ms() + BS_IO_MS, true);
			if (!err)
				err = collx_sock_io(*fdp, r, sizeof(*r), deadline + BS_GRACE_MS, false);
			if (!err) {
				TRACE(COLLX_SUB_BOOTSTRAP, p->rank, "bootstrap: rank 0 at %s:%u answered after %d attempt(s)",
				      ip, ntohs(p->root.sin_port), attempts);
				return 0;
			}
			close(*fdp);
			if (err == -ETIMEDOUT && collx_now_ms() >= deadline) {
				res->failed_rank = 0;
				snprintf(res->err, sizeof(res->err),
					 "bootstrap: rank 0 at %s:%u took rank %d's hello but never answered within %g s",
					 ip, ntohs(p->root.sin_port), p->rank,
					 (p->timeout_ms + BS_GRACE_MS) / 1000.0);
				return -ETIMEDOUT;
			}
			/* Closed before answering: a listener of an earlier
			 * init, or rank 0 restarting.  Try again. */
		}
		last = err;
		rem = deadline - collx_now_ms();
		if (rem > 0)
			usleep((rem < backoff ? rem : backoff) * 1000);
		if (backoff < 1000)
			backoff *= 2;
	}
}

static int bootstrap_peer(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	struct bs_entry *tab;
	struct bs_reply r;
	int fd = -1, err;
	uint32_t n;

	err = peer_join(p, res, &r, &fd);
	if (err)
		return err;
	if (!header_ok(r.magic, r.version)) {
		close(fd);
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 answered, but not as libcollx v%d", COLLX_BS_VERSION);
		return -EPROTO;
	}
	r.msg[sizeof(r.msg) - 1] = 0;
	if (r.status) {
		close(fd);
		res->failed_rank = ntohl(r.failed_rank) == COLLX_RANK_NONE ? -1 :
				   (int)ntohl(r.failed_rank);
		snprintf(res->err, sizeof(res->err), "%s", r.msg);
		return -(int)ntohl(r.status);
	}
	n = ntohl(r.nranks);
	if (n != (uint32_t)p->nranks) {
		close(fd);
		wipe(&r, sizeof(r));
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 sent %u ranks, not %d",
			 n, p->nranks);
		return -EPROTO;
	}
	res->comm_key = be64toh(r.comm_key);
	memcpy(res->secret, r.secret, sizeof(res->secret));
	wipe(&r, sizeof(r));
	tab = calloc(n, sizeof(*tab));
	if (!tab) {
		close(fd);
		return -ENOMEM;
	}
	err = collx_sock_io(fd, tab, sizeof(*tab) * n, collx_now_ms() + BS_IO_MS, false);
	if (err) {
		close(fd);
		free(tab);
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 dropped the table: %s",
			 strerror(-err));
		return err;
	}
	err = fill_result(res, tab, n);
	free(tab);
	if (err)
		close(fd);
	else
		res->fd = fd;
	return err;
}

int collx_bootstrap(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	memset(res, 0, sizeof(*res));
	res->failed_rank = -1;
	res->fd = -1;
	if (p->nranks < 1 || p->nranks > COLLX_MAX_RANKS || p->rank < 0 ||
	    p->rank >= p->nranks || p->timeout_ms <= 0) {
		snprintf(res->err, sizeof(res->err), "bootstrap: rank %d of %d is not valid",
			 p->rank, p->nranks);
		if (p->listen_fd >= 0)
			close(p->listen_fd);
		return -EINVAL;
	}
	if (p->rank == 0)
		return bootstrap_root(p, res);
	return bootstrap_peer(p, res);
}

/* ---- the closing barrier ---- */

static int confirm_verdict(struct collx_bs_result *res, const struct bs_reply *r)
{
	int status = -(int)ntohl(r->status);
	uint32_t failed = ntohl(r->failed_rank);

	if (status) {
		res->failed_rank = failed == COLLX_RANK_NONE ? -1 : (int)failed;
		snprintf(res->err, sizeof(res->err), "%.*s", (int)sizeof(r->msg) - 1, r->msg);
	}
	return status;
}

static void close_conns(struct collx_bs_result *res)
{
	int i;

	for (i = 1; res->conns && i < res->nconns; i++)
		if (res->conns[i] >= 0)
			close(res->conns[i]);
	free(res->conns);
	res->conns = NULL;
}

static int confirm_peer(struct collx_bs_result *res, const struct bs_reply *mine,
			int64_t deadline)
{
	struct bs_reply v;
	int err;

	err = collx_sock_io(res->fd, (void *)mine, sizeof(*mine), collx_now_ms() + BS_IO_MS, true);
	if (!err)
		err = collx_sock_io(res->fd, &v, sizeof(v), deadline + BS_GRACE_MS, false);
	close(res->fd);
	res->fd = -1;
	if (!err && !header_ok(v.magic, v.version))
		err = -EPROTO;
	if (err) {
		res->failed_rank = 0;
		snprintf(res->err, sizeof(res->err),
			 "init: rank 0 did not confirm that every rank connected: %s", strerror(-err));
		return err;
	}
	return confirm_verdict(res, &v);
}

/*
 * @status, @failed_rank, @msg: this rank's COMM_CREATE outcome.  Rank 0
 * waits up to @wait_ms for every rank's report; the others a little
 * longer for rank 0's verdict.  Returns 0 when every rank connected, else
 * the first failure's negative errno with res->err and res->failed_rank.
 */
int collx_bs_confirm(const struct collx_bs_params *p, struct collx_bs_result *res,
		     int status, int failed_rank, const char *msg, int wait_ms)
{
	int64_t deadline = collx_now_ms() + wait_ms;
	struct bs_reply r, v;
	int i, err;

	if (p->rank != 0) {
		reply_init(&r, status, failed_rank, msg);
		return confirm_peer(res, &r, deadline);
	}
	reply_init(&v, status, failed_rank, msg);
	for (i = 1; i < res->nconns; i++) {
		err = collx_sock_io(res->conns[i], &r, sizeof(r), deadline, false);
		if (!err && !header_ok(r.magic, r.version))
			err = -EPROTO;
		if (err && !v.status) {
			char m[COLLX_ERRLEN];

			snprintf(m, sizeof(m), "init: rank %d did not report its connections within %g s: %s",
				 i, wait_ms / 1000.0, strerror(-err));
			reply_init(&v, err, i, m);
		} else if (!err && r.status && !v.status) {
			v = r;
		}
	}
	for (i = 1; i < res->nconns; i++)
		collx_sock_io(res->conns[i], &v, sizeof(v), collx_now_ms() + BS_IO_MS, true);
	close_conns(res);
	return confirm_verdict(res, &v);
}

void collx_bs_result_free(struct collx_bs_result *res)
{
	if (res->fd >= 0)
		close(res->fd);
	res->fd = -1;
	close_conns(res);
	free(res->addrs);
	free(res->hosts);
	res->addrs = NULL;
	res->hosts = NULL;
	wipe(res->secret, sizeof(res->secret));
}
