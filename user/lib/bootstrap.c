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
 *
 * With a job token (COLLX_JOB_TOKEN, token.c) the rendezvous is
 * authenticated (version 3), since plaintext TCP let any host that reached
 * rank 0's port first take a rank and read the secret.  On connect rank 0
 * sends a challenge nonce and the joiner its own nonce; the hello carries
 * an HMAC-SHA256, keyed with the job key, over both nonces and all its
 * fields, and rank 0's reply one over both nonces, the reply and the
 * table.  Fresh nonces on both sides make a recorded message useless
 * later.  The secret never travels: every rank derives it from the job key,
 * the comm key and a nonce rank 0 draws per rendezvous.  Rank 0 takes a
 * joiner's RDMA address only when it is the address its TCP connection
 * came from (unless COLLX_SEPARATE_RDMA_NET=1).  A hello that does not
 * verify is dropped without taking the rank it names.
 *
 * Each side sends first and reads the other's header, so a rank with a
 * token and one without learn it at once: the joiner fails at once, rank 0
 * (which cannot let an unauthenticated stranger end the job) names the
 * mismatch when its deadline passes.
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

#define BS_NONCE_BYTES	32

/*
 * Rank 0's answer (then the table on success; version 3: then the MAC).
 * Both versions have this one layout; they differ in what the 32 bytes
 * after the header are.
 */
struct bs_reply {
	uint32_t magic;
	uint32_t version;
	int32_t status;
	uint32_t failed_rank;
	uint64_t comm_key;
	uint32_t nranks;
	uint32_t __pad;
	union {
		/* Version 2: the comm's secret itself. */
		uint8_t secret[COLLX_SECRET_BYTES];
		/* Version 3: drawn by rank 0 per rendezvous; every rank
		 * derives the secret from it (derive_secret()). */
		uint8_t session[BS_NONCE_BYTES];
	};
	char msg[COLLX_ERRLEN];
};
_Static_assert(COLLX_SECRET_BYTES == BS_NONCE_BYTES,
	       "both versions' replies have one layout");

struct bs_entry {
	struct collx_rank_addr addr;
	char host[64];
};

/* Version 3: each side's first message. */
struct bs_auth_nonce {
	uint32_t magic;
	uint32_t version;
	uint8_t nonce[BS_NONCE_BYTES];
};

/* What one authenticated connection proved: both sides' nonces. */
struct bs_nonces {
	uint8_t root[BS_NONCE_BYTES];
	uint8_t peer[BS_NONCE_BYTES];
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

static bool header_is(uint32_t magic, uint32_t version, uint32_t want)
{
	return ntohl(magic) == COLLX_BS_MAGIC && ntohl(version) == want;
}

static bool header_ok(uint32_t magic, uint32_t version)
{
	return header_is(magic, version, COLLX_BS_VERSION);
}

/* ---- MACs and the derived secret (version 3) ---- */

static const char hello_label[] = "collx hello v3";
static const char reply_label[] = "collx reply v3";
static const char secret_label[] = "collx comm secret v3";

static void mac_start(struct collx_hmac *h, const uint8_t *key, const char *label,
		      const struct bs_nonces *nc)
{
	collx_hmac_init(h, key, COLLX_JOB_KEY_BYTES);
	collx_hmac_update(h, label, strlen(label));
	collx_hmac_update(h, nc->root, sizeof(nc->root));
	collx_hmac_update(h, nc->peer, sizeof(nc->peer));
}

static void hello_mac(const uint8_t *key, const struct bs_nonces *nc,
		      const struct bs_hello *h, uint8_t mac[COLLX_SHA256_BYTES])
{
	struct collx_hmac m;

	mac_start(&m, key, hello_label, nc);
	collx_hmac_update(&m, h, sizeof(*h));
	collx_hmac_final(&m, mac);
}

/* @tab NULL when the reply carries no table (a failure). */
static void reply_mac(const uint8_t *key, const struct bs_nonces *nc,
		      const struct bs_reply *r, const struct bs_entry *tab, int n,
		      uint8_t mac[COLLX_SHA256_BYTES])
{
	struct collx_hmac m;

	mac_start(&m, key, reply_label, nc);
	collx_hmac_update(&m, r, sizeof(*r));
	if (tab)
		collx_hmac_update(&m, tab, sizeof(*tab) * n);
	collx_hmac_final(&m, mac);
}

/* The same on every rank that holds the job key; never on the wire. */
static void derive_secret(const uint8_t *key, uint64_t comm_key,
			  const uint8_t session[BS_NONCE_BYTES],
			  uint8_t secret[COLLX_SECRET_BYTES])
{
	uint64_t be = htobe64(comm_key);
	struct collx_hmac m;

	collx_hmac_init(&m, key, COLLX_JOB_KEY_BYTES);
	collx_hmac_update(&m, secret_label, strlen(secret_label));
	collx_hmac_update(&m, &be, sizeof(be));
	collx_hmac_update(&m, session, BS_NONCE_BYTES);
	collx_hmac_final(&m, secret);
}

static int send_nonce(int fd, const uint8_t nonce[BS_NONCE_BYTES])
{
	struct bs_auth_nonce a = {
		.magic = htonl(COLLX_BS_MAGIC),
		.version = htonl(COLLX_BS_VERSION_AUTH),
	};

	memcpy(a.nonce, nonce, sizeof(a.nonce));
	return collx_sock_io(fd, &a, sizeof(a), collx_now_ms() + BS_IO_MS, true);
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

static void reply_auth_init(struct bs_reply *r, int status, int failed_rank,
			    const char *msg)
{
	reply_init(r, status, failed_rank, msg);
	r->version = htonl(COLLX_BS_VERSION_AUTH);
}

/* Reply, table (when @tab), MAC over both, as one connection's nonces. */
static void reply_auth_to(int fd, const uint8_t *key, const struct bs_nonces *nc,
			  const struct bs_reply *r, const struct bs_entry *tab, int n)
{
	int64_t dl = collx_now_ms() + BS_IO_MS;
	uint8_t mac[COLLX_SHA256_BYTES];

	reply_mac(key, nc, r, tab, n, mac);
	if (collx_sock_io(fd, (void *)r, sizeof(*r), dl, true))
		return;
	if (tab && collx_sock_io(fd, (void *)tab, sizeof(*tab) * n, dl, true))
		return;
	collx_sock_io(fd, mac, sizeof(mac), dl, true);
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
	/* With a job token: each rank's connection's nonces, and the
	 * rendezvous' own nonce the secret is derived from. */
	struct bs_nonces *nonces;
	uint8_t session[BS_NONCE_BYTES];
	int nrefused;			/* connections not taken */
	char refused[160];		/* why the first was not */
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
	r->nonces = calloc(r->n, sizeof(*r->nonces));
	if (!r->tab || !r->conns || !r->nonces) {
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

/*
 * A connection rank 0 did not take: logged at 1, 2, 4, 8... refusals, so
 * that strangers cannot flood the log, and the first reason kept for the
 * message every rank gets if the rendezvous times out.
 */
static void root_refused(struct bs_root *r, const char *why)
{
	r->nrefused++;
	if (!r->refused[0])
		snprintf(r->refused, sizeof(r->refused), "%s", why);
	if (r->nrefused & (r->nrefused - 1))
		return;
	WARN(0, "bootstrap: refused %s (%d refused so far)", why, r->nrefused);
}

/* Tell a joiner it was not taken (as its connection's version) and close. */
static void root_send_refusal(struct bs_root *r, int c, const struct bs_nonces *nc,
			      int status, uint32_t rank, const char *msg)
{
	struct bs_reply rep;

	if (nc) {
		reply_auth_init(&rep, status, (int)rank, msg);
		reply_auth_to(c, r->p->job_key, nc, &rep, NULL, 0);
	} else {
		reply_init(&rep, status, (int)rank, msg);
		reply_to(c, &rep, NULL, 0);
	}
	close(c);
}

/* A hello rank 0 trusts (@nc: what its connection proved): a rank joins,
 * is refused, or is told to retry. */
static void root_take(struct bs_root *r, int c, const struct bs_hello *h,
		      const struct bs_nonces *nc)
{
	const struct collx_bs_params *p = r->p;
	char why[COLLX_ERRLEN];
	uint32_t hr = ntohl(h->rank);

	if (p->nonce && be64toh(h->nonce) != p->nonce) {
		WARN(0, "bootstrap: %s (rank %u) came with another job's id", h->host, hr);
		root_send_refusal(r, c, nc, -EPROTO, hr,
				  "bootstrap: rank 0 at this address serves another unique id (stale id or another job)");
		return;
	}
	if (!p->nonce && ntohl(h->seq) != p->seq) {
		/* Its n-th init against our m-th: it retries. */
		TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank %u is at init #%u, rank 0 at #%u; it retries",
		      hr, ntohl(h->seq), p->seq);
		close(c);
		return;
	}
	if (root_bad_rank(r, h, why, sizeof(why))) {
		WARN(0, "%s", why);
		root_fail(r, -EINVAL, hr, why);
		if (hr > 0 && hr < (uint32_t)r->n && r->conns[hr] < 0) {
			r->conns[hr] = c;	/* hears the verdict with the rest */
			if (nc)
				r->nonces[hr] = *nc;
			memcpy(r->tab[hr].host, h->host, sizeof(h->host));
			r->njoined++;
		} else {
			root_send_refusal(r, c, nc, -EINVAL, hr, why);
		}
		return;
	}
	r->conns[hr] = c;
	if (nc)
		r->nonces[hr] = *nc;
	r->tab[hr].addr = h->addr;
	memcpy(r->tab[hr].host, h->host, sizeof(h->host));
	r->njoined++;
	TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank %u (%s) joined, %d of %d", hr, h->host,
	      r->njoined, r->n);
	if (ntohl(h->status)) {
		snprintf(why, sizeof(why), "rank %u (%s): %s", hr, h->host, h->msg);
		root_fail(r, -(int)ntohl(h->status), hr, why);
	}
}

static void hello_terminate(struct bs_hello *h)
{
	h->host[sizeof(h->host) - 1] = 0;
	h->msg[sizeof(h->msg) - 1] = 0;
}

/* No job token here: version 2, as before; a joiner with one is told. */
static void root_accept_plain(struct bs_root *r, int c, const char *ip)
{
	int64_t dl = collx_now_ms() + BS_IO_MS;
	char why[COLLX_ERRLEN];
	struct bs_hello h;

	if (collx_sock_io(c, &h, 8, dl, false))
		goto drop;
	if (header_is(h.magic, h.version, COLLX_BS_VERSION_AUTH)) {
		snprintf(why, sizeof(why), "a joiner at %s with a job token: rank 0 has none; set COLLX_JOB_TOKEN on every rank or on none",
			 ip);
		root_refused(r, why);
		root_send_refusal(r, c, NULL, -EACCES, COLLX_RANK_NONE, why);
		return;
	}
	if (!header_ok(h.magic, h.version) ||
	    collx_sock_io(c, (char *)&h + 8, sizeof(h) - 8, dl, false))
		goto drop;
	hello_terminate(&h);
	root_take(r, c, &h, NULL);
	return;
drop:
	WARN(0, "bootstrap: dropped a connection from %s that is not a libcollx v%d hello",
	     ip, COLLX_BS_VERSION);
	close(c);
}

static bool addr_is_peer(const struct collx_rank_addr *a, const struct sockaddr_in *peer)
{
	return a->family == AF_INET && !memcmp(a->addr, &peer->sin_addr, 4);
}

/*
 * With a job token: challenge, then the joiner's nonce, hello and MAC.
 * Only a hello that verifies, and whose RDMA address is where it came
 * from, may take a rank: anything else is dropped and the rank stays free.
 */
static void root_accept_auth(struct bs_root *r, int c, const struct sockaddr_in *peer,
			     const char *ip)
{
	int64_t dl = collx_now_ms() + BS_IO_MS;
	uint8_t mac[COLLX_SHA256_BYTES], want[COLLX_SHA256_BYTES];
	char why[COLLX_ERRLEN], claim[INET6_ADDRSTRLEN];
	struct bs_auth_nonce a;
	struct bs_nonces nc;
	struct bs_hello h;

	if (collx_random_bytes(nc.root, sizeof(nc.root)) || send_nonce(c, nc.root) ||
	    collx_sock_io(c, &a, 8, dl, false))
		goto drop;
	if (header_ok(a.magic, a.version)) {
		/* A version-2 hello: it read our challenge and fails too. */
		snprintf(why, sizeof(why), "a hello without the job token from %s: set COLLX_JOB_TOKEN on every rank",
			 ip);
		root_refused(r, why);
		close(c);
		return;
	}
	if (!header_is(a.magic, a.version, COLLX_BS_VERSION_AUTH) ||
	    collx_sock_io(c, (char *)&a + 8, sizeof(a) - 8, dl, false) ||
	    collx_sock_io(c, &h, sizeof(h), dl, false) ||
	    collx_sock_io(c, mac, sizeof(mac), dl, false))
		goto drop;
	memcpy(nc.peer, a.nonce, sizeof(nc.peer));
	hello_mac(r->p->job_key, &nc, &h, want);
	if (!header_is(h.magic, h.version, COLLX_BS_VERSION_AUTH) ||
	    !collx_mac_equal(mac, want, sizeof(mac))) {
		/* Nothing in it is trusted, not even the host name. */
		snprintf(why, sizeof(why), "a hello from %s (as rank %u) that does not verify: another job's token?",
			 ip, ntohl(h.rank));
		root_refused(r, why);
		root_send_refusal(r, c, &nc, -EACCES, COLLX_RANK_NONE,
				  "bootstrap: rank 0 refused this hello: its MAC does not verify with rank 0's job key");
		return;
	}
	hello_terminate(&h);
	/* A rank whose own setup failed has no address: it joins only so
	 * that every rank hears why, and the rendezvous fails. */
	if (!h.status && !r->p->any_rdma_addr && !addr_is_peer(&h.addr, peer)) {
		collx_addr_str(&h.addr, claim, sizeof(claim));
		snprintf(why, sizeof(why), "rank %u claims RDMA address %s but came from %s (COLLX_SEPARATE_RDMA_NET=1 if they differ)",
			 ntohl(h.rank), claim, ip);
		root_refused(r, why);
		root_send_refusal(r, c, &nc, -EADDRNOTAVAIL, ntohl(h.rank), why);
		return;
	}
	root_take(r, c, &h, &nc);
	return;
drop:
	snprintf(why, sizeof(why), "a connection from %s that is not a libcollx v%d hello",
		 ip, COLLX_BS_VERSION_AUTH);
	root_refused(r, why);
	close(c);
}

static void root_accept(struct bs_root *r, int c, const struct sockaddr_in *peer)
{
	char ip[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof(ip)))
		snprintf(ip, sizeof(ip), "?");
	if (r->p->auth)
		root_accept_auth(r, c, peer, ip);
	else
		root_accept_plain(r, c, ip);
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
	o = snprintf(r->msg, sizeof(r->msg),
		     "bootstrap: rank%s %.100s never joined within %g s (rank 0 %.40s waited on port %u)",
		     missing > 1 ? "s" : "", list, r->p->timeout_ms / 1000.0, r->tab[0].host,
		     ntohs(r->p->root.sin_port));
	/* The likely why: a rank with the wrong token, or none. */
	if (r->nrefused && o < sizeof(r->msg))
		snprintf(r->msg + o, sizeof(r->msg) - o, "; refused %d: %s", r->nrefused,
			 r->refused);
}

/* The key and the secret for a rendezvous that worked. */
static void root_secrets(struct bs_root *r, struct collx_bs_result *res)
{
	char m[COLLX_ERRLEN];
	int err;

	res->comm_key = r->p->nonce;
	if (r->p->auth)
		err = collx_random_bytes(r->session, sizeof(r->session));
	else
		err = collx_random_bytes(res->secret, sizeof(res->secret));
	while (!err && !res->comm_key)
		err = collx_random_bytes(&res->comm_key, sizeof(res->comm_key));
	if (!err && r->p->auth)
		derive_secret(r->p->job_key, res->comm_key, r->session, res->secret);
	if (err) {
		snprintf(m, sizeof(m), "bootstrap: rank 0 (%s) cannot take %zu random bytes from getrandom(): %s",
			 r->tab[0].host, sizeof(res->secret), strerror(-err));
		root_fail(r, err, 0, m);
	}
}

/*
 * Every joined rank's answer: version 2 carries the secret, version 3 the
 * session nonce it is derived from and a MAC per connection.
 */
static void root_send_replies(struct bs_root *r, const struct collx_bs_result *res)
{
	const int failed = r->failed == COLLX_RANK_NONE ? -1 : (int)r->failed;
	const char *msg = r->status ? r->msg : NULL;
	struct bs_reply rep;
	int i;

	if (r->p->auth)
		reply_auth_init(&rep, r->status, failed, msg);
	else
		reply_init(&rep, r->status, failed, msg);
	rep.nranks = htonl(r->n);
	if (!r->status) {
		rep.comm_key = htobe64(res->comm_key);
		if (r->p->auth)
			memcpy(rep.session, r->session, sizeof(rep.session));
		else
			memcpy(rep.secret, res->secret, sizeof(rep.secret));
	}
	for (i = 1; i < r->n; i++) {
		if (r->conns[i] < 0)
			continue;
		if (r->p->auth)
			reply_auth_to(r->conns[i], r->p->job_key, &r->nonces[i], &rep,
				      r->status ? NULL : r->tab, r->n);
		else
			reply_to(r->conns[i], &rep, r->status ? NULL : r->tab, r->n);
		if (r->status)
			close(r->conns[i]);
	}
	wipe(&rep, sizeof(rep));
}

static int root_answer(struct bs_root *r, struct collx_bs_result *res)
{
	int err;

	if (!r->status)
		root_secrets(r, res);
	root_send_replies(r, res);
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
		free(r.nonces);
		return err;
	}
	TRACE(COLLX_SUB_BOOTSTRAP, 0, "bootstrap: rank 0 listening on port %u for %d ranks",
	      ntohs(p->root.sin_port), r.n - 1);
	while (r.njoined < r.n) {
		struct pollfd pfd = { .fd = r.fd, .events = POLLIN };
		int64_t rem = deadline - collx_now_ms();
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		int c;

		if (rem <= 0)
			break;
		if (poll(&pfd, 1, rem > 1000000 ? 1000000 : (int)rem) <= 0)
			continue;
		c = accept4(r.fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c >= 0)
			root_accept(&r, c, &peer);
	}
	close(r.fd);
	if (r.njoined < r.n)
		root_missing(&r);
	err = root_answer(&r, res);
	free(r.tab);
	free(r.nonces);
	wipe(r.session, sizeof(r.session));
	return err;
}

/* ---- every other rank ---- */

/* One rank's side of the rendezvous, across its attempts. */
struct bs_peer {
	struct bs_hello h;
	struct bs_reply r;		/* version 2 */
	struct bs_reply ra;	/* version 3 */
	struct bs_nonces nc;		/* version 3: this attempt's */
	char where[INET_ADDRSTRLEN + 8];	/* rank 0's "ip:port" */
};

static void peer_hello(const struct collx_bs_params *p, struct bs_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = htonl(COLLX_BS_MAGIC);
	h->version = htonl(p->auth ? COLLX_BS_VERSION_AUTH : COLLX_BS_VERSION);
	h->rank = htonl(p->rank);
	h->nranks = htonl(p->nranks);
	h->nonce = htobe64(p->nonce);
	h->seq = htonl(p->seq);
	h->status = htonl(-p->local_status);
	h->addr = p->self;
	collx_host_name(h->host, sizeof(h->host));
	snprintf(h->msg, sizeof(h->msg), "%s", p->local_msg);
}

/* Version 2: hello, then the reply; a challenge means rank 0 has a token. */
static int peer_plain(const struct collx_bs_params *p, int fd, struct bs_peer *pc,
		      int64_t deadline, struct collx_bs_result *res, bool *fatal)
{
	int err;

	err = collx_sock_io(fd, &pc->h, sizeof(pc->h), collx_now_ms() + BS_IO_MS, true);
	if (!err)
		err = collx_sock_io(fd, &pc->r, 8, deadline + BS_GRACE_MS, false);
	if (err)
		return err;
	if (header_is(pc->r.magic, pc->r.version, COLLX_BS_VERSION_AUTH)) {
		*fatal = true;
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 at %s wants a job token and rank %d has none: set COLLX_JOB_TOKEN or COLLX_JOB_TOKEN_FILE on every rank",
			 pc->where, p->rank);
		return -EACCES;
	}
	return collx_sock_io(fd, (char *)&pc->r + 8, sizeof(pc->r) - 8, deadline + BS_GRACE_MS,
			     false);
}

/* Version 3: nonces both ways, the hello with its MAC, then the reply. */
static int peer_auth(const struct collx_bs_params *p, int fd, struct bs_peer *pc,
		     int64_t deadline, struct collx_bs_result *res, bool *fatal)
{
	uint8_t mac[COLLX_SHA256_BYTES];
	struct bs_auth_nonce a;
	int err;

	err = collx_random_bytes(pc->nc.peer, sizeof(pc->nc.peer));
	if (err) {
		*fatal = true;
		snprintf(res->err, sizeof(res->err), "bootstrap: rank %d cannot take random bytes from getrandom(): %s",
			 p->rank, strerror(-err));
		return err;
	}
	/* Rank 0 takes connections one at a time: the challenge may wait
	 * for those before ours, as a version-2 reply waits for all ranks. */
	err = send_nonce(fd, pc->nc.peer);
	if (!err)
		err = collx_sock_io(fd, &a, sizeof(a), deadline + BS_GRACE_MS, false);
	if (err)
		return err;
	if (header_ok(a.magic, a.version)) {
		/* Rank 0 has no token: it refused us with a version-2 reply. */
		*fatal = true;
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 at %s has no job token and rank %d has one: set COLLX_JOB_TOKEN or COLLX_JOB_TOKEN_FILE on every rank, or on none",
			 pc->where, p->rank);
		return -EACCES;
	}
	if (!header_is(a.magic, a.version, COLLX_BS_VERSION_AUTH))
		return -EPROTO;
	memcpy(pc->nc.root, a.nonce, sizeof(pc->nc.root));
	hello_mac(p->job_key, &pc->nc, &pc->h, mac);
	err = collx_sock_io(fd, &pc->h, sizeof(pc->h), collx_now_ms() + BS_IO_MS, true);
	if (!err)
		err = collx_sock_io(fd, mac, sizeof(mac), collx_now_ms() + BS_IO_MS, true);
	if (!err)
		err = collx_sock_io(fd, &pc->ra, sizeof(pc->ra), deadline + BS_GRACE_MS, false);
	return err;
}

/* Connect and trade hello for reply, retrying until rank 0 answers. */
static int peer_join(const struct collx_bs_params *p, struct collx_bs_result *res,
		     struct bs_peer *pc, int *fdp)
{
	int64_t deadline = collx_now_ms() + p->timeout_ms;
	int backoff = 50, last = 0, err, attempts = 0;
	bool fatal = false;
	int64_t rem;

	peer_hello(p, &pc->h);
	for (;;) {
		rem = deadline - collx_now_ms();
		if (rem <= 0) {
			res->failed_rank = 0;
			snprintf(res->err, sizeof(res->err),
				 "bootstrap: rank %d cannot reach rank 0 at %s within %g s (%d attempts, last: %s)",
				 p->rank, pc->where, p->timeout_ms / 1000.0,
				 attempts, last ? strerror(-last) : "no answer");
			return -ETIMEDOUT;
		}
		attempts++;
		err = collx_sock_connect(&p->root, p->bind_addr, deadline, fdp);
		if (!err) {
			if (p->auth)
				err = peer_auth(p, *fdp, pc, deadline, res, &fatal);
			else
				err = peer_plain(p, *fdp, pc, deadline, res, &fatal);
			if (!err) {
				TRACE(COLLX_SUB_BOOTSTRAP, p->rank, "bootstrap: rank 0 at %s answered after %d attempt(s)",
				      pc->where, attempts);
				return 0;
			}
			close(*fdp);
			if (fatal) {
				res->failed_rank = 0;
				return err;
			}
			if (err == -ETIMEDOUT && collx_now_ms() >= deadline) {
				res->failed_rank = 0;
				snprintf(res->err, sizeof(res->err),
					 "bootstrap: rank 0 at %s took rank %d's hello but never answered within %g s",
					 pc->where, p->rank,
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

static int peer_table(int fd, uint32_t n, struct bs_entry **tabp,
		      struct collx_bs_result *res)
{
	struct bs_entry *tab = calloc(n, sizeof(*tab));
	int err;

	if (!tab)
		return -ENOMEM;
	err = collx_sock_io(fd, tab, sizeof(*tab) * n, collx_now_ms() + BS_IO_MS, false);
	if (err) {
		free(tab);
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 dropped the table: %s",
			 strerror(-err));
		return err;
	}
	*tabp = tab;
	return 0;
}

/* The rest of a version-2 answer: the secret as sent, then the table. */
static int peer_finish_plain(const struct collx_bs_params *p, struct bs_peer *pc, int fd,
			     struct collx_bs_result *res)
{
	struct bs_reply *r = &pc->r;
	struct bs_entry *tab = NULL;
	int err;
	uint32_t n;

	if (!header_ok(r->magic, r->version)) {
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 answered, but not as libcollx v%d", COLLX_BS_VERSION);
		return -EPROTO;
	}
	r->msg[sizeof(r->msg) - 1] = 0;
	if (r->status) {
		res->failed_rank = ntohl(r->failed_rank) == COLLX_RANK_NONE ? -1 :
				   (int)ntohl(r->failed_rank);
		snprintf(res->err, sizeof(res->err), "%s", r->msg);
		return -(int)ntohl(r->status);
	}
	n = ntohl(r->nranks);
	if (n != (uint32_t)p->nranks) {
		wipe(r, sizeof(*r));
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 sent %u ranks, not %d",
			 n, p->nranks);
		return -EPROTO;
	}
	res->comm_key = be64toh(r->comm_key);
	memcpy(res->secret, r->secret, sizeof(res->secret));
	wipe(r, sizeof(*r));
	err = peer_table(fd, n, &tab, res);
	if (!err)
		err = fill_result(res, tab, n);
	free(tab);
	return err;
}

/*
 * The rest of a version-3 answer: the table on success, then the MAC over
 * both.  Nothing in it counts before the MAC verifies; the secret is
 * derived here, from the job key and rank 0's session nonce.
 */
static int peer_finish_auth(const struct collx_bs_params *p, struct bs_peer *pc, int fd,
			    struct collx_bs_result *res)
{
	uint8_t mac[COLLX_SHA256_BYTES], want[COLLX_SHA256_BYTES];
	struct bs_reply *ra = &pc->ra;
	struct bs_entry *tab = NULL;
	uint32_t n = ntohl(ra->nranks);
	int status = -(int)ntohl(ra->status), err;

	if (!header_is(ra->magic, ra->version, COLLX_BS_VERSION_AUTH)) {
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 answered, but not as libcollx v%d", COLLX_BS_VERSION_AUTH);
		return -EPROTO;
	}
	if (!status && n != (uint32_t)p->nranks) {
		snprintf(res->err, sizeof(res->err), "bootstrap: rank 0 sent %u ranks, not %d",
			 n, p->nranks);
		return -EPROTO;
	}
	if (!status) {
		err = peer_table(fd, n, &tab, res);
		if (err)
			return err;
	}
	err = collx_sock_io(fd, mac, sizeof(mac), collx_now_ms() + BS_IO_MS, false);
	reply_mac(p->job_key, &pc->nc, ra, tab, n, want);
	if (err || !collx_mac_equal(mac, want, sizeof(mac))) {
		free(tab);
		res->failed_rank = 0;
		snprintf(res->err, sizeof(res->err),
			 "bootstrap: rank 0 at %s %s, but its answer does not verify with rank %d's job key: the ranks have different job tokens, or that is not this job's rank 0",
			 pc->where, status ? "refused this rank" : "answered", p->rank);
		return -EACCES;
	}
	if (status) {
		ra->msg[sizeof(ra->msg) - 1] = 0;
		res->failed_rank = ntohl(ra->failed_rank) == COLLX_RANK_NONE ? -1 :
				   (int)ntohl(ra->failed_rank);
		snprintf(res->err, sizeof(res->err), "%s", ra->msg);
		return status;
	}
	res->comm_key = be64toh(ra->comm_key);
	derive_secret(p->job_key, res->comm_key, ra->session, res->secret);
	err = fill_result(res, tab, n);
	free(tab);
	return err;
}

static int bootstrap_peer(const struct collx_bs_params *p, struct collx_bs_result *res)
{
	struct bs_peer pc;
	char ip[INET_ADDRSTRLEN];
	int fd = -1, err;

	memset(&pc, 0, sizeof(pc));
	inet_ntop(AF_INET, &p->root.sin_addr, ip, sizeof(ip));
	snprintf(pc.where, sizeof(pc.where), "%s:%u", ip, ntohs(p->root.sin_port));
	err = peer_join(p, res, &pc, &fd);
	if (err)
		return err;
	if (p->auth)
		err = peer_finish_auth(p, &pc, fd, res);
	else
		err = peer_finish_plain(p, &pc, fd, res);
	if (err) {
		close(fd);
		wipe(res->secret, sizeof(res->secret));
	} else {
		res->fd = fd;
	}
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
