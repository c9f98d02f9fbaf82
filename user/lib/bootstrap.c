// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: the rendezvous over TCP, as ncclGetUniqueId does it.
 *
 * Rank 0 listens; every other rank connects (retrying while rank 0 is not
 * up yet), sends a hello with its RDMA address, and gets back the table of
 * every rank's address and the communicator key.  Rank 0 answers once all
 * ranks have joined, or, at the deadline, tells those that did which ranks
 * never came.  A rank whose own setup failed still joins, with its error,
 * so that every rank fails at once with the same message.
 *
 * The connections stay open through COMM_CREATE: then every rank reports
 * its outcome to rank 0, which answers all of them with the first failure
 * (or success) once everyone reported (collx_bs_confirm).  So init is a
 * barrier, as in NCCL — no rank returns, and may destroy its comm, before
 * every rank's RDMA connections are up — and all ranks agree on the result.
 *
 * Wire format (version 1): fixed-size structs, integers in network order.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
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

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t collx_random_u64(void)
{
	uint64_t v = 0;

	while (!v) {
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
			v = ((uint64_t)getpid() << 32) ^ (uint64_t)now_ms() ^
			    (uint64_t)(uintptr_t)&v;
	}
	return v;
}

int collx_resolve_ipv4(const char *host, struct in_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int rc;

	if (inet_pton(AF_INET, host, out) == 1)
		return 0;
	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc)
		return -EHOSTUNREACH;
	*out = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	freeaddrinfo(ai);
	return 0;
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

int collx_bs_listen(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd, one = 1, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* ---- bounded I/O on non-blocking sockets ---- */

/* 0, -ETIMEDOUT, -ECONNRESET (EOF), or another -errno. */
static int io_full(int fd, void *buf, size_t len, int64_t deadline, bool wr)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { .fd = fd, .events = wr ? POLLOUT : POLLIN };
			int64_t rem = deadline - now_ms();
			int rc;

			if (rem <= 0)
				return -ETIMEDOUT;
			rc = poll(&pfd, 1, rem > 1000000 ? 1000000 : (int)rem);
			if (rc < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		return -errno;
	}
	return 0;
}

static void host_name(char *out, size_t len)
{
	if (gethostname(out, len))
		snprintf(out, len, "?");
	out[len - 1] = 0;
}

void collx_addr_str(const struct collx_rank_addr *a, char *out, size_t len)
{
	if (!inet_ntop(a->family == AF_INET6 ? AF_INET6 : AF_INET, a->addr, out, len))
		snprintf(out, len, "?");
}

static void reply_to(int fd, const struct bs_reply *r, const struct bs_entry *tab,
		     int n)
{
	int64_t dl = now_ms() + BS_IO_MS;

	if (io_full(fd, (void *)r, sizeof(*r), dl, true))
		return;
	if (tab)
		io_full(fd, (void *)tab, sizeof(*tab) * n, dl, true);
}

static int fill_result(struct collx_bs_result *res, const struct bs_entry *tab,
		       int n, uint64_t key)
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
	res->comm_key = key;
	return 0;
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

static int bootstrap_root(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	int n = p->nranks, fd = p->listen_fd, njoined = 1, status, i, err;
	int64_t deadline = now_ms() + p->timeout_ms;
	uint32_t failed = COLLX_RANK_NONE;
	struct bs_entry *tab;
	struct bs_reply r;
	int *conns;
	char msg[COLLX_ERRLEN] = "";

	if (fd < 0) {
		struct sockaddr_in sa = p->root;

		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		fd = collx_bs_listen(&sa);
		if (fd < 0) {
			snprintf(res->err, sizeof(res->err),
				 "bootstrap: rank 0 cannot listen on TCP port %u: %s",
				 ntohs(p->root.sin_port), strerror(-fd));
			return fd;
		}
	}
	tab = calloc(n, sizeof(*tab));
	conns = malloc(n * sizeof(*conns));
	if (!tab || !conns) {
		free(tab);
		free(conns);
		close(fd);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		conns[i] = -1;
	tab[0].addr = p->self;
	host_name(tab[0].host, sizeof(tab[0].host));
	status = p->local_status;
	if (status) {
		failed = 0;
		snprintf(msg, sizeof(msg), "rank 0 (%s): %s", tab[0].host, p->local_msg);
	}
	TRACE(0, "bootstrap: rank 0 listening on port %u for %d ranks",
	      ntohs(p->root.sin_port), n - 1);

	while (njoined < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t rem = deadline - now_ms();
		struct bs_hello h;
		uint32_t hr, hn;
		int c;

		if (rem <= 0)
			break;
		if (poll(&pfd, 1, rem > 1000000 ? 1000000 : (int)rem) <= 0)
			continue;
		c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c < 0)
			continue;
		err = io_full(c, &h, sizeof(h), now_ms() + BS_IO_MS, false);
		if (err || ntohl(h.magic) != COLLX_BS_MAGIC ||
		    ntohl(h.version) != COLLX_BS_VERSION) {
			WARN(0, "bootstrap: dropped a connection that is not a libcollx v%d hello",
			     COLLX_BS_VERSION);
			close(c);
			continue;
		}
		h.host[sizeof(h.host) - 1] = 0;
		h.msg[sizeof(h.msg) - 1] = 0;
		hr = ntohl(h.rank);
		hn = ntohl(h.nranks);
		memset(&r, 0, sizeof(r));
		r.magic = htonl(COLLX_BS_MAGIC);
		r.version = htonl(COLLX_BS_VERSION);
		r.failed_rank = htonl(hr);
		if (p->nonce && be64toh(h.nonce) != p->nonce) {
			r.status = htonl(EPROTO);
			snprintf(r.msg, sizeof(r.msg),
				 "bootstrap: rank 0 at this address serves another unique id (stale id or another job)");
			WARN(0, "bootstrap: %s (rank %u) came with another job's id", h.host, hr);
			reply_to(c, &r, NULL, 0);
			close(c);
			continue;
		}
		if (!p->nonce && ntohl(h.seq) != p->seq) {
			/* Its n-th init against our m-th: it retries. */
			TRACE(0, "bootstrap: rank %u is at init #%u, rank 0 at #%u; it retries",
			      hr, ntohl(h.seq), p->seq);
			close(c);
			continue;
		}
		if (hn != (uint32_t)n || hr == 0 || hr >= (uint32_t)n ||
		    conns[hr] >= 0) {
			r.status = htonl(EINVAL);
			if (hn != (uint32_t)n)
				snprintf(r.msg, sizeof(r.msg),
					 "bootstrap: rank %u (%s) says there are %u ranks, rank 0 (%s) says %d",
					 hr, h.host, hn, tab[0].host, n);
			else if (hr == 0 || hr >= (uint32_t)n)
				snprintf(r.msg, sizeof(r.msg),
					 "bootstrap: %s claims rank %u of %d", h.host, hr, n);
			else
				snprintf(r.msg, sizeof(r.msg),
					 "bootstrap: rank %u claimed twice (%s and %s)",
					 hr, tab[hr].host, h.host);
			WARN(0, "%s", r.msg);
			if (!status) {
				status = -EINVAL;
				failed = hr;
				snprintf(msg, sizeof(msg), "%s", r.msg);
			}
			if (hr > 0 && hr < (uint32_t)n && conns[hr] < 0) {
				conns[hr] = c;	/* hears the verdict with the rest */
				memcpy(tab[hr].host, h.host, sizeof(h.host));
				njoined++;
			} else {
				reply_to(c, &r, NULL, 0);
				close(c);
			}
			continue;
		}
		conns[hr] = c;
		tab[hr].addr = h.addr;
		memcpy(tab[hr].host, h.host, sizeof(h.host));
		njoined++;
		TRACE(0, "bootstrap: rank %u (%s) joined, %d of %d", hr, h.host, njoined, n);
		if (ntohl(h.status) && !status) {
			status = -(int)ntohl(h.status);
			failed = hr;
			snprintf(msg, sizeof(msg), "rank %u (%s): %s", hr, h.host, h.msg);
		}
	}
	close(fd);

	if (njoined < n) {
		char list[160] = "";
		size_t o = 0;
		int missing = 0;

		failed = COLLX_RANK_NONE;
		for (i = 1; i < n; i++) {
			if (conns[i] >= 0)
				continue;
			if (failed == COLLX_RANK_NONE)
				failed = i;
			if (missing++ < 16 && o < sizeof(list))
				o += snprintf(list + o, sizeof(list) - o, "%s%d",
					      missing > 1 ? ", " : "", i);
		}
		status = -ETIMEDOUT;
		if (missing > 16 && o < sizeof(list))
			snprintf(list + o, sizeof(list) - o, " and %d more", missing - 16);
		snprintf(msg, sizeof(msg),
			 "bootstrap: rank%s %.100s never joined within %g s (rank 0 %.40s waited on port %u)",
			 missing > 1 ? "s" : "", list, p->timeout_ms / 1000.0, tab[0].host,
			 ntohs(p->root.sin_port));
	}

	reply_init(&r, status, failed == COLLX_RANK_NONE ? -1 : (int)failed,
		   status ? msg : NULL);
	r.nranks = htonl(n);
	if (!status) {
		res->comm_key = p->nonce ? p->nonce : collx_random_u64();
		r.comm_key = htobe64(res->comm_key);
	}
	for (i = 1; i < n; i++) {
		if (conns[i] < 0)
			continue;
		reply_to(conns[i], &r, status ? NULL : tab, n);
		if (status)
			close(conns[i]);
	}
	if (status) {
		free(conns);
		res->failed_rank = failed == COLLX_RANK_NONE ? -1 : (int)failed;
		snprintf(res->err, sizeof(res->err), "%s", msg);
		free(tab);
		return status;
	}
	/* Kept open for collx_bs_confirm(). */
	res->conns = conns;
	res->nconns = n;
	err = fill_result(res, tab, n, res->comm_key);
	free(tab);
	return err;
}

static int connect_once(const struct sockaddr_in *sa, int64_t deadline, int *fdp)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, one = 1;
	int64_t rem;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		goto out_ok;
	if (errno != EINPROGRESS) {
		err = -errno;
		goto out_close;
	}
	rem = deadline - now_ms();
	if (rem > 2000)
		rem = 2000;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (rem <= 0 || poll(&pfd, 1, (int)rem) <= 0) {
		err = -ETIMEDOUT;
		goto out_close;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		err = err ? -err : -errno;
		goto out_close;
	}
out_ok:
	*fdp = fd;
	return 0;
out_close:
	close(fd);
	return err;
}

static int bootstrap_peer(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	int64_t start = now_ms(), deadline = start + p->timeout_ms;
	int backoff = 50, last = 0, fd = -1, err, attempts = 0;
	struct bs_entry *tab;
	struct bs_hello h;
	struct bs_reply r;
	char ip[INET_ADDRSTRLEN];
	uint32_t n;

	inet_ntop(AF_INET, &p->root.sin_addr, ip, sizeof(ip));
	memset(&h, 0, sizeof(h));
	h.magic = htonl(COLLX_BS_MAGIC);
	h.version = htonl(COLLX_BS_VERSION);
	h.rank = htonl(p->rank);
	h.nranks = htonl(p->nranks);
	h.nonce = htobe64(p->nonce);
	h.seq = htonl(p->seq);
	h.status = htonl(-p->local_status);
	h.addr = p->self;
	host_name(h.host, sizeof(h.host));
	snprintf(h.msg, sizeof(h.msg), "%s", p->local_msg);

	for (;;) {
		int64_t rem = deadline - now_ms();

		if (rem <= 0) {
			res->failed_rank = 0;
			snprintf(res->err, sizeof(res->err),
				 "bootstrap: rank %d cannot reach rank 0 at %s:%u within %g s (%d attempts, last: %s)",
				 p->rank, ip, ntohs(p->root.sin_port), p->timeout_ms / 1000.0,
				 attempts, last ? strerror(-last) : "no answer");
			return -ETIMEDOUT;
		}
		attempts++;
		err = connect_once(&p->root, deadline, &fd);
		if (!err) {
			err = io_full(fd, &h, sizeof(h), now_ms() + BS_IO_MS, true);
			if (!err)
				err = io_full(fd, &r, sizeof(r), deadline + BS_GRACE_MS, false);
			if (!err)
				break;
			close(fd);
			fd = -1;
			if (err == -ETIMEDOUT && now_ms() >= deadline) {
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
		rem = deadline - now_ms();
		if (rem > 0)
			usleep((rem < backoff ? rem : backoff) * 1000);
		if (backoff < 1000)
			backoff *= 2;
	}

	if (ntohl(r.magic) != COLLX_BS_MAGIC || ntohl(r.version) != COLLX_BS_VERSION) {
		close(fd);
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: %s:%u answered, but not as libcollx v%d rank 0",
			 ip, ntohs(p->root.sin_port), COLLX_BS_VERSION);
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
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 sent %u ranks, not %d",
			 n, p->nranks);
		return -EPROTO;
	}
	tab = calloc(n, sizeof(*tab));
	if (!tab) {
		close(fd);
		return -ENOMEM;
	}
	err = io_full(fd, tab, sizeof(*tab) * n, now_ms() + BS_IO_MS, false);
	if (err) {
		close(fd);
		free(tab);
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 at %s:%u dropped the table: %s",
			 ip, ntohs(p->root.sin_port), strerror(-err));
		return err;
	}
	err = fill_result(res, tab, n, be64toh(r.comm_key));
	free(tab);
	if (err)
		close(fd);
	else
		res->fd = fd;
	TRACE(p->rank, "bootstrap: joined rank 0 at %s:%u after %lld ms, %d attempt(s)",
	      ip, ntohs(p->root.sin_port), (long long)(now_ms() - start), attempts);
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

/*
 * @status, @failed_rank, @msg: this rank's COMM_CREATE outcome.  Rank 0
 * waits up to @wait_ms for every rank's report; the others a little
 * longer for rank 0's verdict.  Returns 0 when every rank connected, else
 * the first failure's negative errno with res->err and res->failed_rank.
 */
int collx_bs_confirm(const struct collx_bs_params *p, struct collx_bs_result *res,
		     int status, int failed_rank, const char *msg, int wait_ms)
{
	int64_t deadline = now_ms() + wait_ms;
	struct bs_reply r, v;
	int i, err;

	if (p->rank != 0) {
		reply_init(&r, status, failed_rank, msg);
		err = io_full(res->fd, &r, sizeof(r), now_ms() + BS_IO_MS, true);
		if (!err)
			err = io_full(res->fd, &v, sizeof(v), deadline + BS_GRACE_MS, false);
		close(res->fd);
		res->fd = -1;
		if (!err && (ntohl(v.magic) != COLLX_BS_MAGIC ||
			     ntohl(v.version) != COLLX_BS_VERSION))
			err = -EPROTO;
		if (err) {
			res->failed_rank = 0;
			snprintf(res->err, sizeof(res->err),
				 "init: rank 0 did not confirm that every rank connected: %s",
				 strerror(-err));
			return err;
		}
		return confirm_verdict(res, &v);
	}

	reply_init(&v, status, failed_rank, msg);
	for (i = 1; i < res->nconns; i++) {
		err = io_full(res->conns[i], &r, sizeof(r), deadline, false);
		if (!err && (ntohl(r.magic) != COLLX_BS_MAGIC ||
			     ntohl(r.version) != COLLX_BS_VERSION))
			err = -EPROTO;
		if (err && !ntohl(v.status)) {
			char m[COLLX_ERRLEN];

			snprintf(m, sizeof(m), "init: rank %d did not report its connections within %g s: %s",
				 i, wait_ms / 1000.0, strerror(-err));
			reply_init(&v, err, i, m);
		} else if (!err && r.status && !v.status) {
			v = r;
		}
	}
	for (i = 1; i < res->nconns; i++)
		io_full(res->conns[i], &v, sizeof(v), now_ms() + BS_IO_MS, true);
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
}

