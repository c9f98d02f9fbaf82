// SPDX-License-Identifier: GPL-2.0
/*
 * collx_forge: a hostile peer on the wire, one TAP line per forged message.
 *
 * For each message a fresh 2-rank comm is made whose rank 1 is real (this
 * node's module, through /dev/collx) and whose rank 0 is this program,
 * over librdmacm and verbs: it knows the comm's secret (it chose it), so
 * it passes the handshake like any rank 0 would, says READY, and waits
 * until rank 1 has an allreduce in flight.  Then it sends the one message
 * (kmod/wire.h's layouts, or a chunk or credit that breaks the flow
 * control).  Rank 1's allreduce must end at once with the errno and rank
 * the contract names (never hang, never an undocumented errno), and its
 * comm must destroy cleanly.  The lab case (tests/lab/cases/42-forged-
 * wire.sh) checks the module's counters and the kernel log around it.
 *
 * The layouts below are the wire's (big-endian); a change to kmod/wire.h
 * changes COLLX_WIRE_MAGIC, and then every case here fails loudly.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <linux/collx.h>

#include "node.h"

#define WIRE_MAGIC	0x434c5805
#define CTRL_READY	1
#define CTRL_DEST	2
#define CTRL_ABORT	3
#define CTRL_ASK	4
#define CTRL_TELL	5
#define CTRL_SIZE	64
#define NRECV		256
#define COUNT		(64 * 1024)	/* fp32 elements of rank 1's allreduce */

struct wire_req {
	uint32_t magic, nranks, src_rank, dst_rank;
	uint64_t lookup;
	uint8_t nonce[16];
} __attribute__((packed));

struct wire_rep {
	uint32_t magic, pad;
	uint8_t nonce[16];
	uint8_t proof[32];
} __attribute__((packed));

struct wire_ready {
	uint32_t magic, type, nslots, slot_bytes, rkey, pad;
	uint64_t iova;
	uint8_t proof[32];
} __attribute__((packed));

struct wire_dest {
	uint32_t magic, type;
	uint64_t seq;
	uint32_t ordinal, window, rkey, pad;
	uint64_t iova, bytes;
} __attribute__((packed));

struct wire_abort {
	uint32_t magic, type, err, rank, phase, step;
	uint64_t arrived;
} __attribute__((packed));

struct wire_tell {
	uint32_t magic, type, rank, kind, phase, step, idle_ms, pad;
	uint64_t written, arrived;
} __attribute__((packed));

enum kind {
	K_ABORT, K_CTRL_RAW, K_READY_AGAIN, K_CREDITS, K_CHUNK, K_CHUNKS,
	K_TELL,
};

struct forgery {
	const char *name;
	enum kind kind;
	int32_t err;		/* ABORT: its errno */
	uint32_t rank;		/* ABORT, TELL: whom it names */
	uint64_t arrived;	/* ABORT: its count */
	uint32_t len;		/* bytes sent (0: the whole struct) */
	uint32_t word0, word1;	/* K_CTRL_RAW: magic and type */
	uint32_t imm;		/* K_CREDITS: the count; K_TELL: the kind */
	int want;		/* the allreduce's status */
};

static const struct forgery forgeries[] = {
	{ "ABORT counting more arrivals than were ever written", K_ABORT,
	  -ETIMEDOUT, 0, 1ULL << 40, 0, 0, 0, 0, -EPROTO },
	{ "ABORT shorter than its struct", K_ABORT,
	  -ETIMEDOUT, 0, 0, 16, 0, 0, 0, -EPROTO },
	{ "ABORT with an errno no completion may carry (-ENOMEM)", K_ABORT,
	  -ENOMEM, 0, 0, 0, 0, 0, 0, -ECONNRESET },
	{ "ABORT with a positive errno", K_ABORT,
	  5, 0, 0, 0, 0, 0, 0, -ECONNRESET },
	{ "ABORT with -ECANCELED (a destroy says ECONNRESET)", K_ABORT,
	  -ECANCELED, 0, 0, 0, 0, 0, 0, -ECONNRESET },
	{ "ABORT naming rank 7 of 2", K_ABORT,
	  -ETIMEDOUT, 7, 0, 0, 0, 0, 0, -ETIMEDOUT },
	{ "ABORT, well formed", K_ABORT,
	  -ETIMEDOUT, 0, 0, 0, 0, 0, 0, -ETIMEDOUT },
	{ "control message with a wrong magic", K_CTRL_RAW,
	  0, 0, 0, 0, 0x12345678, CTRL_ABORT, 0, -EPROTO },
	{ "control message of an unknown type", K_CTRL_RAW,
	  0, 0, 0, 0, WIRE_MAGIC, 99, 0, -EPROTO },
	{ "control message of 4 bytes", K_CTRL_RAW,
	  0, 0, 0, 4, WIRE_MAGIC, CTRL_ABORT, 0, -EPROTO },
	{ "ASK shorter than its struct", K_CTRL_RAW,
	  0, 0, 0, 8, WIRE_MAGIC, CTRL_ASK, 0, -EPROTO },
	{ "TELL shorter than its struct", K_TELL,
	  0, 1, 0, 16, 0, 0, 1, -EPROTO },
	{ "TELL naming rank 7 of 2", K_TELL,
	  0, 7, 0, 0, 0, 0, 1, -EPROTO },
	{ "TELL of an unknown kind of wait", K_TELL,
	  0, 1, 0, 0, 0, 0, 9, -EPROTO },
	{ "DEST for a window that does not exist", K_CTRL_RAW,
	  0, 0, 0, 0, WIRE_MAGIC, CTRL_DEST, 0, -EPROTO },
	{ "a second READY", K_READY_AGAIN,
	  0, 0, 0, 0, 0, 0, 0, -EPROTO },
	{ "credits beyond the slots", K_CREDITS,
	  0, 0, 0, 0, 0, 0, 1000, -EPROTO },
	{ "credits of zero", K_CREDITS,
	  0, 0, 0, 0, 0, 0, 0, -EPROTO },
	{ "a chunk the collective did not expect", K_CHUNK,
	  0, 0, 0, 0, 0, 0, 0, -EPROTO },
	{ "more chunks than credits", K_CHUNKS,
	  0, 0, 0, 0, 0, 0, 0, -EPROTO },
};

static uint32_t node_addr;
static bool debug;

#define DBG(...) do { if (debug) fprintf(stderr, "forge: " __VA_ARGS__); } while (0)
static uint32_t listen_port, nslots, slot_bytes;
static unsigned int failed, tap_n;

/* One connection to forge on, and the real rank's comm it reaches. */
struct conn {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *ctrl_mr, *stage_mr, *send_mr;
	uint8_t *ctrl, *stage, *send;
	uint8_t secret[32], nonce_a[16], nonce_p[16];
	uint64_t key;
	uint64_t peer_iova;	/* the real rank's rx staging */
	uint32_t peer_rkey;
	/* rank 1, made by a thread: COMM_CREATE returns once connected */
	int fd, create_err;
	uint32_t comm_id;
	pthread_t th;
};

static void tap(bool ok, const char *fmt, const char *name, const char *why)
{
	tap_n++;
	if (!ok)
		failed++;
	printf("%s %u - ", ok ? "ok" : "not ok", tap_n);
	printf(fmt, name);
	if (!ok && why)
		printf(" # %s", why);
	printf("\n");
	fflush(stdout);
}

static uint32_t read_param(const char *name, uint32_t dflt)
{
	char path[128];
	unsigned int v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/collx/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%u", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/* HMAC-SHA256(secret, label with its NUL | data), as kmod/auth.c. */
static void mac(const uint8_t *secret, const char *label, const void *data,
		size_t len, uint8_t out[32])
{
	uint8_t buf[128];
	size_t l = strlen(label) + 1;
	unsigned int olen = 32;

	memcpy(buf, label, l);
	memcpy(buf + l, data, len);
	HMAC(EVP_sha256(), secret, 32, buf, l + len, out, &olen);
}

static uint64_t lookup_id(const uint8_t *secret, uint64_t key, uint32_t nranks)
{
	struct {
		uint64_t key;
		uint32_t nranks;
	} __attribute__((packed)) in = { htobe64(key), htonl(nranks) };
	uint8_t m[32];
	uint64_t id;

	mac(secret, "collx lookup", &in, sizeof(in), m);
	memcpy(&id, m, sizeof(id));
	return id | 1;
}

static void *create_rank1(void *arg)
{
	struct conn *c = arg;
	struct collx_rank_addr addrs[2] = {};
	struct collx_comm_create cc = { .size = sizeof(cc) };
	int i;

	for (i = 0; i < 2; i++) {
		addrs[i].family = AF_INET;
		memcpy(addrs[i].addr, &node_addr, 4);
	}
	cc.nranks = 2;
	cc.rank = 1;
	cc.comm_key = c->key;
	cc.addrs = (uint64_t)(uintptr_t)addrs;
	cc.addr_size = sizeof(addrs[0]);
	cc.timeout_ms = 8000;
	memcpy(cc.secret, c->secret, sizeof(cc.secret));
	c->create_err = ioctl(c->fd, COLLX_IOC_COMM_CREATE, &cc) ? errno : 0;
	c->comm_id = cc.comm_id;
	return NULL;
}

static int cm_wait(struct conn *c, enum rdma_cm_event_type want,
		   struct rdma_cm_event *copy, struct wire_rep *rep)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = c->ec->fd, .events = POLLIN };
	int type;

	if (poll(&p, 1, 10000) != 1 || rdma_get_cm_event(c->ec, &ev))
		return -ETIMEDOUT;
	type = ev->event;
	if (copy)
		*copy = *ev;
	if (rep && type == RDMA_CM_EVENT_ESTABLISHED &&
	    ev->param.conn.private_data_len >= sizeof(*rep))
		memcpy(rep, ev->param.conn.private_data, sizeof(*rep));
	rdma_ack_cm_event(ev);
	return type == (int)want ? 0 : -type - 1000;
}

static int post_recv(struct conn *c, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->ctrl + (size_t)i * CTRL_SIZE),
		.length = CTRL_SIZE,
		.lkey = c->ctrl_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

static int post_send(struct conn *c, const void *msg, uint32_t len,
		     enum ibv_wr_opcode opcode, uint32_t imm, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = opcode, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
	};
	struct ibv_send_wr *bad;

	if (len > 4096)
		return -EINVAL;
	if (len)
		memcpy(c->send, msg, len);
	sge.addr = (uintptr_t)c->send;
	sge.length = len;
	sge.lkey = c->send_mr->lkey;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(c->id->qp, &wr, &bad);
}

/* Poll until a receive of the peer's READY: 0, or a negative errno. */
static int wait_ready(struct conn *c)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			return -EIO;
		if (n == 1) {
			const struct wire_ready *r;

			DBG("wc status %d opcode %d len %u\n", wc.status,
			    wc.opcode, wc.byte_len);
			if (wc.status != IBV_WC_SUCCESS)
				return -ECONNRESET;
			if (wc.opcode != IBV_WC_RECV)
				continue;
			r = (const void *)(c->ctrl + wc.wr_id * CTRL_SIZE);
			post_recv(c, (unsigned int)wc.wr_id);
			if (wc.byte_len >= sizeof(*r) &&
			    ntohl(r->magic) == WIRE_MAGIC &&
			    ntohl(r->type) == CTRL_READY) {
				c->peer_iova = be64toh(r->iova);
				c->peer_rkey = ntohl(r->rkey);
				return 0;
			}
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

/* Free one attempt's id, QP, CQ, PD, MRs and buffers (any may be unset). */
static void conn_drop(struct conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->ctrl_mr)
		ibv_dereg_mr(c->ctrl_mr);
	if (c->stage_mr)
		ibv_dereg_mr(c->stage_mr);
	if (c->send_mr)
		ibv_dereg_mr(c->send_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	free(c->ctrl);
	free(c->stage);
	free(c->send);
	c->ctrl_mr = c->stage_mr = c->send_mr = NULL;
	c->cq = NULL;
	c->pd = NULL;
	c->id = NULL;
	c->ctrl = c->stage = c->send = NULL;
}

/* Rank 0 by hand: connect, prove, READY; rank 1 made meanwhile. */
static int forge_connect(struct conn *c)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst;
	struct ibv_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	struct wire_req req = {};
	struct wire_rep rep = {};
	struct wire_ready ready = {};
	struct {
		uint32_t active, passive;
		uint8_t na[16], np[16];
	} __attribute__((packed)) in;
	int ret, tries, i;

	src.sin_addr.s_addr = node_addr;
	dst = src;
	dst.sin_port = htons((uint16_t)listen_port);
	if (getrandom(c->secret, sizeof(c->secret), 0) != sizeof(c->secret) ||
	    getrandom(&c->key, sizeof(c->key), 0) != sizeof(c->key) ||
	    getrandom(c->nonce_a, sizeof(c->nonce_a), 0) != sizeof(c->nonce_a))
		return -EIO;
	c->key |= 1;
	c->fd = open("/dev/collx", O_RDWR | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	if (pthread_create(&c->th, NULL, create_rank1, c))
		return -EAGAIN;
	c->ec = rdma_create_event_channel();
	if (!c->ec)
		return -errno;
	req.magic = htonl(WIRE_MAGIC);
	req.nranks = htonl(2);
	req.src_rank = htonl(0);
	req.dst_rank = htonl(1);
	req.lookup = htobe64(lookup_id(c->secret, c->key, 2));
	memcpy(req.nonce, c->nonce_a, sizeof(req.nonce));
	/* Rank 1 may not be listening yet: a refusal means try again. */
	for (tries = 0; tries < 50; tries++) {
		if (rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP))
			return -errno;
		if (rdma_resolve_addr(c->id, (struct sockaddr *)&src,
				      (struct sockaddr *)&dst, 2000) ||
		    cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL) ||
		    rdma_resolve_route(c->id, 2000) ||
		    cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL))
			return -EHOSTUNREACH;
		c->pd = ibv_alloc_pd(c->id->verbs);
		c->cq = c->pd ? ibv_create_cq(c->id->verbs, 2 * NRECV, NULL, NULL, 0) : NULL;
		if (!c->cq)
			return -ENOMEM;
		qa.send_cq = qa.recv_cq = c->cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = 64;
		qa.cap.max_recv_wr = NRECV;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		if (rdma_create_qp(c->id, c->pd, &qa))
			return -errno;
		c->ctrl = calloc(NRECV, CTRL_SIZE);
		c->stage = aligned_alloc(4096, (size_t)nslots * slot_bytes);
		c->send = aligned_alloc(4096, 4096);
		if (!c->ctrl || !c->stage || !c->send)
			return -ENOMEM;
		c->send_mr = ibv_reg_mr(c->pd, c->send, 4096,
					IBV_ACCESS_LOCAL_WRITE);
		c->ctrl_mr = ibv_reg_mr(c->pd, c->ctrl, NRECV * CTRL_SIZE,
					IBV_ACCESS_LOCAL_WRITE);
		c->stage_mr = ibv_reg_mr(c->pd, c->stage, (size_t)nslots * slot_bytes,
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE);
		if (!c->ctrl_mr || !c->stage_mr || !c->send_mr)
			return -ENOMEM;
		for (i = 0; i < NRECV; i++)
			if (post_recv(c, (unsigned int)i))
				return -EIO;
		cp.private_data = &req;
		cp.private_data_len = sizeof(req);
		cp.responder_resources = cp.initiator_depth = 1;
		cp.retry_count = 7;
		cp.rnr_retry_count = 7;
		if (rdma_connect(c->id, &cp))
			return -errno;
		ret = cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL, &rep);
		DBG("try %d: connect -> %d\n", tries, ret);
		if (!ret)
			break;
		/* Refused: start over on a fresh id. */
		conn_drop(c);
		usleep(100000);
	}
	if (!c->id)
		return -ECONNREFUSED;
	memcpy(c->nonce_p, rep.nonce, sizeof(c->nonce_p));
	in.active = htonl(0);
	in.passive = htonl(1);
	memcpy(in.na, c->nonce_a, 16);
	memcpy(in.np, c->nonce_p, 16);
	ready.magic = htonl(WIRE_MAGIC);
	ready.type = htonl(CTRL_READY);
	ready.nslots = htonl(nslots);
	ready.slot_bytes = htonl(slot_bytes);
	ready.rkey = htonl(c->stage_mr->rkey);
	ready.iova = htobe64((uint64_t)(uintptr_t)c->stage);
	mac(c->secret, "collx connector", &in, sizeof(in), ready.proof);
	if (post_send(c, &ready, sizeof(ready), IBV_WR_SEND, 0, 0, 0))
		return -EIO;
	ret = wait_ready(c);
	DBG("READY exchange -> %d\n", ret);
	return ret;
}

static void forge_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->id)
		rdma_disconnect(c->id);
	conn_drop(c);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
}

static int send_forgery(struct conn *c, const struct forgery *f)
{
	union {
		struct wire_abort a;
		struct wire_tell t;
		struct wire_dest d;
		struct wire_ready r;
		uint32_t w[16];
		uint8_t b[CTRL_SIZE];
	} m;
	uint32_t len = f->len, i;
	int ret = 0;

	memset(&m, 0, sizeof(m));
	switch (f->kind) {
	case K_ABORT:
		m.a.magic = htonl(WIRE_MAGIC);
		m.a.type = htonl(CTRL_ABORT);
		m.a.err = htonl((uint32_t)f->err);
		m.a.rank = htonl(f->rank);
		m.a.arrived = htobe64(f->arrived);
		return post_send(c, &m, len ? len : sizeof(m.a), IBV_WR_SEND,
				 0, 0, 0);
	case K_CTRL_RAW:
		m.w[0] = htonl(f->word0);
		m.w[1] = htonl(f->word1);
		if (f->word1 == CTRL_DEST)
			m.d.window = htonl(99);
		m.d.bytes = htobe64(4096);
		return post_send(c, &m, len ? len : sizeof(m.d), IBV_WR_SEND,
				 0, 0, 0);
	case K_TELL:
		m.t.magic = htonl(WIRE_MAGIC);
		m.t.type = htonl(CTRL_TELL);
		m.t.rank = htonl(f->rank);
		m.t.kind = htonl(f->imm);
		return post_send(c, &m, len ? len : sizeof(m.t), IBV_WR_SEND,
				 0, 0, 0);
	case K_READY_AGAIN:
		m.r.magic = htonl(WIRE_MAGIC);
		m.r.type = htonl(CTRL_READY);
		m.r.nslots = htonl(nslots);
		m.r.slot_bytes = htonl(slot_bytes);
		return post_send(c, &m, sizeof(m.r), IBV_WR_SEND, 0, 0, 0);
	case K_CREDITS:
		return post_send(c, NULL, 0, IBV_WR_SEND_WITH_IMM, f->imm, 0, 0);
	case K_CHUNK:
		return post_send(c, &m, 16, IBV_WR_RDMA_WRITE_WITH_IMM,
				 0xdeadbeef, c->peer_iova, c->peer_rkey);
	case K_CHUNKS:
		/* Into slot 0 each time: only the count matters here. */
		for (i = 0; i <= nslots && !ret; i++)
			ret = post_send(c, &m, 16, IBV_WR_RDMA_WRITE_WITH_IMM,
					0, c->peer_iova, c->peer_rkey);
		return ret;
	}
	return -EINVAL;
}

static void run(const struct forgery *f)
{
	struct collx_submit s = { .size = sizeof(s) };
	struct collx_wait w = { .size = sizeof(w) };
	struct collx_comm_destroy d = { .size = sizeof(d) };
	struct conn c = { .fd = -1 };
	static float *in, *out;
	char why[160];
	int ret;

	if (!in)
		in = calloc(COUNT, sizeof(*in));
	if (!out)
		out = calloc(COUNT, sizeof(*out));
	ret = forge_connect(&c);
	if (c.th)
		pthread_join(c.th, NULL);
	if (ret || c.create_err) {
		snprintf(why, sizeof(why), "no connection: %s, COMM_CREATE %s",
			 strerror(-ret), strerror(c.create_err));
		tap(false, "%s: connected", f->name, why);
		forge_close(&c);
		return;
	}
	s.comm_id = c.comm_id;
	s.coll = COLLX_COLL_ALLREDUCE;
	s.dtype = COLLX_FP32;
	s.redop = COLLX_OP_SUM;
	s.count = COUNT;
	s.sendbuf = (uintptr_t)in;
	s.recvbuf = (uintptr_t)out;
	if (ioctl(c.fd, COLLX_IOC_SUBMIT, &s)) {
		snprintf(why, sizeof(why), "SUBMIT: %s", strerror(errno));
		tap(false, "%s", f->name, why);
		forge_close(&c);
		return;
	}
	/* In flight: rank 1 waits for rank 0's half. */
	usleep(200000);
	ret = send_forgery(&c, f);
	w.op_id = s.op_id;
	w.timeout_ms = 6000;	/* the comm's own timeout is 8 s */
	if (!ret && ioctl(c.fd, COLLX_IOC_WAIT, &w))
		ret = -errno;
	snprintf(why, sizeof(why), "status %d, failed_rank %u, want %d naming rank 0 (post/wait %d)",
		 w.completion.status, w.completion.failed_rank, f->want, ret);
	tap(!ret && w.completion.status == f->want &&
	    w.completion.failed_rank == 0,
	    "%s: the allreduce ends with the contract's errno, naming the forger",
	    f->name, why);
	d.comm_id = c.comm_id;
	tap(!ioctl(c.fd, COLLX_IOC_COMM_DESTROY, &d),
	    "%s: the comm destroys cleanly", f->name, strerror(errno));
	forge_close(&c);
}

int main(int argc, char **argv)
{
	unsigned int i, n = sizeof(forgeries) / sizeof(forgeries[0]), first = 0;

	node_addr = fz_node_addr(argc > 1 ? argv[1] : NULL);
	if (!node_addr) {
		printf("1..0 # SKIP no IPv4 address for this node\n");
		return 0;
	}
	listen_port = read_param("listen_port", 18888);
	nslots = read_param("nslots", 4);
	slot_bytes = read_param("slot_kib", 64) * 1024;
	debug = getenv("FORGE_DEBUG");
	/* collx_forge [ADDR [N]]: only forgery N (0-based), to debug one */
	if (argc > 2 && (unsigned int)atoi(argv[2]) < n) {
		first = (unsigned int)atoi(argv[2]);
		n = first + 1;
	}
	printf("1..%u\n", 2 * (n - first));
	for (i = first; i < n; i++)
		run(&forgeries[i]);
	return failed ? 1 : 0;
}
