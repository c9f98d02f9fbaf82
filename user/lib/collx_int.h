/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx internals, shared by the library's files and its unit tests
 * (tests/unit/lib builds the sources and calls these directly).
 * Prototypes are grouped by the file that defines them, as rxe_loc.h does.
 */
#ifndef COLLX_INT_H
#define COLLX_INT_H

#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "collx.h"

#define COLLX_ERRLEN	256
#define COLLX_SECRET_BYTES	32

/* ---- log.c: COLLX_DEBUG, COLLX_DEBUG_SUBSYS, COLLX_DEBUG_FILE ---------- */

enum collx_log_level {
	COLLX_LOG_NONE = 0,
	COLLX_LOG_VERSION = 1,
	COLLX_LOG_WARN = 2,
	COLLX_LOG_INFO = 3,
	COLLX_LOG_TRACE = 4,
};

/* Subsystems, as NCCL_DEBUG_SUBSYS names them. */
enum collx_subsys {
	COLLX_SUB_INIT = 1u << 0,
	COLLX_SUB_COLL = 1u << 1,
	COLLX_SUB_P2P = 1u << 2,
	COLLX_SUB_BOOTSTRAP = 1u << 3,
	COLLX_SUB_ENV = 1u << 4,
	COLLX_SUB_NET = 1u << 5,
	COLLX_SUB_REG = 1u << 6,
	COLLX_SUB_ALL = (1u << 7) - 1,
};

extern int collx_log_level_cur;
extern unsigned int collx_log_mask;
void collx_log_init(void);
/* Read the environment again (tests change it between cases). */
void collx_log_reinit(void);
void collx_log(enum collx_log_level lvl, int rank, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "WARN", "info"...; -1 if unknown. */
int collx_log_parse_level(const char *s);
/*
 * "INIT,COLL", "^ENV", "ALL".  NCCL's other names (GRAPH, TUNING, ...) are
 * accepted and select nothing.  An unknown name is skipped, the rest still
 * counts (ALL when nothing known is left): -EINVAL with the first unknown
 * name in @unknown.
 */
int collx_log_parse_subsys(const char *s, unsigned int *mask, char *unknown, size_t len);
/* Expand %h (host) and %p (pid) of a COLLX_DEBUG_FILE pattern. */
int collx_log_expand_path(const char *pattern, char *out, size_t outlen);
/* COLLX_DEBUG=VERSION (and above): the library's and module's versions,
 * once per process; @v NULL when no module answered. */
void collx_log_version(const struct collx_version *v);

#define COLLX_LOG(lvl, sub, rank, ...) do {				\
	collx_log_init();						\
	if (collx_log_level_cur >= (lvl) && (collx_log_mask & (sub)))	\
		collx_log((lvl), (rank), __VA_ARGS__);			\
} while (0)
/* Warnings ignore COLLX_DEBUG_SUBSYS, as NCCL's do. */
#define WARN(rank, ...)	COLLX_LOG(COLLX_LOG_WARN, COLLX_SUB_ALL, rank, __VA_ARGS__)
#define INFO(sub, rank, ...)	COLLX_LOG(COLLX_LOG_INFO, sub, rank, __VA_ARGS__)
#define TRACE(sub, rank, ...)	COLLX_LOG(COLLX_LOG_TRACE, sub, rank, __VA_ARGS__)

/* ---- env.c: variables and strict parsing ------------------------------ */

/* getenv() that logs "NAME set by environment to VALUE" once (ENV). */
const char *collx_getenv(const char *name);
/* Whole-string integer in [min, max]; -EINVAL otherwise. */
int collx_parse_long(const char *s, long min, long max, long *out);
/* An environment integer; @def when unset; -EINVAL when malformed. */
int collx_env_long(const char *name, long def, long min, long max, long *out);
/* "host:port" (host may be [v6] or a name); port 0 if absent. */
int collx_parse_hostport(const char *s, char *host, size_t hostlen,
			 uint16_t *port);
/* "ring", "tree", "rd", "pairwise", "p2p", "auto"; -EINVAL otherwise. */
int collx_parse_algo(const char *s, enum collx_algo *algo);

/* What a communicator reads from the environment at init. */
struct collx_env_comm {
	int bs_timeout_ms;	/* COLLX_BOOTSTRAP_TIMEOUT, seconds */
	int timeout_ms;		/* COLLX_TIMEOUT_MS (0: the module's) */
	int tos;		/* COLLX_IB_TC */
	enum collx_algo algo;	/* COLLX_ALGO (AUTO when unset) */
};

int collx_env_comm_read(struct collx_env_comm *e, char *err, size_t errlen);

/* ---- launch.c: rank, size and rendezvous from the launcher ------------ */

struct collx_env_cfg {
	int rank;
	int nranks;
	char host[256];		/* rank 0's address or name */
	uint16_t port;
	char source[64];	/* which variable gave the rendezvous */
	char launcher[64];	/* which variables gave rank and size */
};

/*
 * Fill @cfg from the environment (see collx_comm_init_all()); on failure
 * -EINVAL with the reason in @err.
 */
int collx_env_parse(struct collx_env_cfg *cfg, char *err, size_t errlen);
/* Host @n (0-based) of a Slurm host list ("node[01-04,07],login"): 0,
 * -ENOENT past the end, -EINVAL malformed, -ENAMETOOLONG. */
int collx_hostlist_nth(const char *list, long n, char *out, size_t outlen);
/* Number of hosts in a Slurm host list, or -EINVAL. */
long collx_hostlist_count(const char *list);

/* ---- hca.c: NCCL_IB_HCA / NCCL_SOCKET_IFNAME list syntax ------------- */

#define COLLX_NLIST_MAX	32

/*
 * "[^][=]name[:port],name[:port],...": '^' excludes the names, '=' wants
 * exact names instead of prefixes; both apply to the whole list.
 */
struct collx_nlist {
	bool exclude;
	bool exact;
	int n;
	struct {
		char name[64];
		int port;	/* 0: any */
	} e[COLLX_NLIST_MAX];
};

/* @ports: whether ":port" is allowed.  NULL or "" gives an empty list. */
int collx_nlist_parse(const char *spec, bool ports, struct collx_nlist *l);
/* An empty list matches everything; @port 0 matches any entry's port. */
bool collx_nlist_match(const struct collx_nlist *l, const char *name, int port);

/* ---- sock.c: TCP for the rendezvous ---------------------------------- */

int64_t collx_now_ms(void);
/* Move all @len bytes by @deadline: 0, -ETIMEDOUT, -ECONNRESET (EOF). */
int collx_sock_io(int fd, void *buf, size_t len, int64_t deadline, bool wr);
/* Listen on @sa (port 0: any); returns the fd and fills the bound port. */
int collx_sock_listen(struct sockaddr_in *sa);
/* One bounded connect, from @src when not INADDR_ANY. */
int collx_sock_connect(const struct sockaddr_in *dst, struct in_addr src,
		       int64_t deadline, int *fdp);
/* Resolve a name or dotted quad to IPv4. */
int collx_resolve_ipv4(const char *host, struct in_addr *out);
/* "10.77.0.13" */
void collx_addr_str(const struct collx_rank_addr *a, char *out, size_t len);
void collx_host_name(char *out, size_t len);
/* First non-loopback IPv4 address of an interface that is up. */
int collx_first_ipv4(struct in_addr *out);
/* COLLX_SOCKET_IFNAME: the IPv4 address of the first interface that is up
 * and matches; -ENODEV with the reason in @err. */
int collx_sock_ifaddr(const struct collx_nlist *l, struct in_addr *out,
		      char *ifname, size_t iflen, char *err, size_t errlen);
/* The bootstrap's own address from COLLX_SOCKET_IFNAME: 0 and INADDR_ANY
 * when unset. */
int collx_sock_bind_addr(struct in_addr *out, char *err, size_t errlen);

/* ---- hmac.c: SHA-256 and HMAC-SHA256 for the rendezvous --------------- */

#define COLLX_SHA256_BYTES	32

struct collx_sha256 {
	uint32_t h[8];
	uint64_t len;			/* bytes hashed so far */
	uint8_t buf[64];
	size_t n;			/* bytes waiting in buf */
};

struct collx_hmac {
	struct collx_sha256 in, out;
};

void collx_sha256_init(struct collx_sha256 *s);
void collx_sha256_update(struct collx_sha256 *s, const void *data, size_t len);
/* Writes the digest and wipes @s. */
void collx_sha256_final(struct collx_sha256 *s, uint8_t out[COLLX_SHA256_BYTES]);
void collx_sha256(const void *data, size_t len, uint8_t out[COLLX_SHA256_BYTES]);
void collx_hmac_init(struct collx_hmac *h, const void *key, size_t keylen);
void collx_hmac_update(struct collx_hmac *h, const void *data, size_t len);
void collx_hmac_final(struct collx_hmac *h, uint8_t out[COLLX_SHA256_BYTES]);
void collx_hmac_sha256(const void *key, size_t keylen, const void *data,
		       size_t len, uint8_t out[COLLX_SHA256_BYTES]);
/* Constant time in the position of the first difference. */
bool collx_mac_equal(const void *a, const void *b, size_t len);

/* ---- token.c: the job's token, from the launcher ---------------------- */

#define COLLX_JOB_KEY_BYTES	COLLX_SHA256_BYTES
/* The shortest token taken: 16 bytes, 128 bits when they are random. */
#define COLLX_JOB_TOKEN_MIN	16

/*
 * COLLX_JOB_TOKEN, or the file COLLX_JOB_TOKEN_FILE names (owned by the
 * caller, no group or other permission bits): 1 with the key derived from
 * it in @key, 0 when neither is set, else a negative errno with the reason
 * in @err.  Never logs the token or the key.
 */
int collx_job_key(uint8_t key[COLLX_JOB_KEY_BYTES], char *err, size_t errlen);
/* The key a token gives (HMAC-SHA256 of a fixed label keyed by it). */
void collx_job_key_derive(const void *token, size_t len,
			  uint8_t key[COLLX_JOB_KEY_BYTES]);
/* Once per process: the rendezvous on @port is not authenticated. */
void collx_warn_unauthenticated(uint16_t port);

/* ---- bootstrap.c: the TCP rendezvous ---------------------------------- */

struct collx_id_int {
	uint32_t magic;
	uint16_t version;
	uint16_t family;
	uint32_t addr;		/* network order */
	uint16_t port;		/* network order */
	uint16_t __pad;
	uint64_t nonce;
};

#define COLLX_BS_MAGIC		0x42584c43u	/* "CLXB" */
#define COLLX_BS_VERSION	2
/* The authenticated rendezvous (a job token): challenge, MACs, a derived
 * secret.  Version 2 stays as it was for jobs without a token. */
#define COLLX_BS_VERSION_AUTH	3

struct collx_bs_params {
	int rank;
	int nranks;
	/* Rank 0's rendezvous address. */
	struct sockaddr_in root;
	/* Where this rank's sockets bind (COLLX_SOCKET_IFNAME), or any. */
	struct in_addr bind_addr;
	/* Non-zero: the unique id's nonce, checked on both sides. */
	uint64_t nonce;
	/* collx_comm_init_all() call number, so repeated inits pair up. */
	uint32_t seq;
	/* Rank 0 only: an already-listening socket, or -1 to bind root. */
	int listen_fd;
	int timeout_ms;
	/* This rank's own setup outcome: 0, or a negative errno and text
	 * the root spreads to everyone. */
	int local_status;
	char local_msg[128];
	struct collx_rank_addr self;
	/* A job token: the rendezvous is authenticated with this key. */
	bool auth;
	uint8_t job_key[COLLX_JOB_KEY_BYTES];
	/* Rank 0, with @auth: take a joiner's RDMA address even when it is
	 * not the address its TCP connection came from
	 * (COLLX_SEPARATE_RDMA_NET=1). */
	bool any_rdma_addr;
};

struct collx_bs_result {
	uint64_t comm_key;
	/* The same on every rank: rank 0's getrandom() bytes, or with a job
	 * token derived on each rank from the key and rank 0's nonce. */
	uint8_t secret[COLLX_SECRET_BYTES];
	struct collx_rank_addr *addrs;	/* nranks, malloc'd */
	char (*hosts)[64];		/* nranks host names, malloc'd */
	/* After a successful rendezvous, until collx_bs_confirm(): rank 0's
	 * socket to each rank (conns[0] unused), another rank's to rank 0. */
	int *conns;
	int nconns;
	int fd;
	int failed_rank;		/* on failure, or -1 */
	char err[COLLX_ERRLEN];
};

int collx_bootstrap(const struct collx_bs_params *p,
		    struct collx_bs_result *res);
/* The end of init: report this rank's COMM_CREATE outcome, get everyone's. */
int collx_bs_confirm(const struct collx_bs_params *p, struct collx_bs_result *res,
		     int status, int failed_rank, const char *msg, int wait_ms);
/* Frees and wipes the secret. */
void collx_bs_result_free(struct collx_bs_result *res);
/* Unique id made on this process: keeps its listening socket by nonce. */
int collx_bs_take_listener(uint64_t nonce);
void collx_bs_keep_listener(uint64_t nonce, int fd);
/* getrandom() only (no weaker fallback): 0 or a negative errno. */
int collx_random_bytes(void *buf, size_t len);

/* ---- chardev.c: /dev/collx -------------------------------------------- */

struct collx_dev {
	int fd;
	struct collx_version version;
};

/* ioctl() as 0 or a negative errno, retried on EINTR. */
int collx_ioctl(int fd, unsigned long req, void *arg);
/* The module speaks ABI 1.1 (groups, algorithms, secret, tos, dma-buf). */
bool collx_dev_abi11(const struct collx_dev *dev);

/* ---- ibdev.c: which RDMA device and address --------------------------- */

struct collx_gid_entry {
	int index;
	int type;			/* enum ibv_gid_type */
	uint8_t raw[16];
	char netdev[IF_NAMESIZE];
};

struct collx_port_info {
	char dev[64];
	int port;
	int state;			/* enum ibv_port_state */
	int link_layer;			/* IBV_LINK_LAYER_* */
	int active_mtu;			/* bytes */
	int ngids, gid_cap;
	struct collx_gid_entry *gids;
	/* The device's netdev (IPoIB, or a GID table without IPv4). */
	char netdev[IF_NAMESIZE];
	bool netdev_ipv4;
	struct in_addr netdev_addr;
};

struct collx_ibdev_info {
	char name[64];
	int port;
	char netdev[IF_NAMESIZE];
	struct in_addr addr;
	int gid_index;			/* -1: not from a GID */
	int gid_type;
	char gid[64];
	int mtu;			/* bytes */
	const char *how;		/* how the address was found */
	int ncandidates;		/* ACTIVE ports that qualified */
};

/* the text of a collx_dev_open() error (not collx_strerror()'s) */
const char *collx_dev_strerror(int err);

/* Every port of every RDMA device, with its GID table. */
int collx_ibdev_scan(struct collx_port_info **ports, int *nports,
		     char *err, size_t errlen);
void collx_ibdev_scan_free(struct collx_port_info *ports, int nports);
/*
 * The port a communicator uses: the first ACTIVE one @hca matches that has
 * an IPv4 address, from GID @gid_index when >= 0, else from a RoCE v2 GID,
 * a RoCE v1 GID, then the netdev.  Pure, so the unit tests feed it tables.
 */
int collx_ibdev_choose(const struct collx_port_info *ports, int nports,
		       const struct collx_nlist *hca, int gid_index,
		       struct collx_ibdev_info *info, char *err, size_t errlen);
/* COLLX_RDMA_ADDR, or scan + choose with COLLX_IB_HCA, COLLX_IB_GID_INDEX. */
int collx_ibdev_select(struct collx_ibdev_info *info, char *err, size_t errlen);
/* "IB", "RoCE v1", "RoCE v2" */
const char *collx_gid_type_name(int type);
/* An IPv4-mapped GID (::ffff:a.b.c.d). */
bool collx_gid_ipv4(const uint8_t raw[16], struct in_addr *out);

/* ---- comm.c: communicators -------------------------------------------- */

struct collx_op;
struct collx_mr;

/*
 * Lifetime: @refs counts the caller's handle and every op not yet freed,
 * so an op's waiter may touch the comm after another thread destroyed it.
 * @fd_users counts the comm itself until it is destroyed and every thread
 * inside an ioctl on @dev: the fd closes when the last one leaves, never
 * under a thread still using it (or a reused number).
 */
struct collx_comm {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* an op's waiter left the kernel */
	int refs;
	int fd_users;
	bool dead;			/* destroyed or aborted */
	bool abi11;			/* the module speaks ABI 1.1 */
	struct collx_dev *dev;
	int fd;
	int rank, nranks;
	uint32_t comm_id;		/* handle on the fd */
	uint32_t global_id;		/* module-wide; comm_id on ABI 1.0 */
	uint64_t comm_key;
	struct collx_op *ops;		/* submitted, record not taken */
	struct collx_mr *mrs;
	struct collx_ibdev_info ibdev;
	struct collx_rank_addr *addrs;
	char (*hosts)[64];
	int timeout_ms;
	enum collx_algo env_algo;	/* COLLX_ALGO */
	int async_error;		/* first failure seen, 0 while fine */
	uint64_t nr_ops;
	char last_error[COLLX_ERRLEN];
};

/* With @comm->lock held. */
void collx_comm_ref(struct collx_comm *comm);
/* Without it; frees the comm on the last reference. */
void collx_comm_unref(struct collx_comm *comm);
/* With @comm->lock held: a thread enters or leaves an ioctl on the fd. */
void collx_comm_fd_get(struct collx_comm *comm);
void collx_comm_fd_put(struct collx_comm *comm);
void collx_set_error(struct collx_comm *comm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Text for a failed rank: "rank 3 (node3, 10.77.0.13)". */
void collx_rank_desc(const struct collx_comm *comm, uint32_t rank,
		     char *out, size_t outlen);

/* ---- mem.c: registrations --------------------------------------------- */

struct collx_mr {
	struct collx_mr *next;
	uintptr_t start, end;
	uint32_t mr_id;
	bool dmabuf;
	void *map;			/* our mmap of a dma-buf, or NULL */
	size_t maplen;
};

/* Whether [p, p + len) lies inside one registration (lock held). */
bool collx_mem_lookup(struct collx_comm *comm, const void *p, size_t len);
/* Drop every registration (lock held, at destroy). */
void collx_mem_release_all(struct collx_comm *comm);

/* ---- op.c: collectives in flight -------------------------------------- */

enum collx_op_state {
	COLLX_OP_QUEUED,		/* in a group, not yet submitted */
	COLLX_OP_SUBMITTED,
	COLLX_OP_DONE,			/* @c holds the record */
};

struct collx_op {
	struct collx_op *prev, *next;	/* on comm->ops while SUBMITTED */
	struct collx_op *gnext;		/* on the thread's group queue */
	struct collx_comm *comm;	/* holds a reference */
	enum collx_op_state state;
	bool waiting;			/* a thread is in COLLX_IOC_WAIT for it */
	bool reap_skip;			/* destroy left it to its waiter */
	bool blocking;			/* collx_group_end() waits and frees it */
	bool refused;			/* failed at submit, which said why */
	bool in_mr;			/* its buffers lie in registrations */
	struct collx_submit s;		/* as submitted: op_id, coll, ... */
	struct collx_completion c;
};

/* A new op for @s on @comm (takes a comm reference); NULL: no memory. */
struct collx_op *collx_op_new(struct collx_comm *comm,
			      const struct collx_submit *s);
void collx_op_free(struct collx_op *op);
/* Submit @n ops of one comm together (one COLLX_IOC_SUBMIT_GROUP on ABI
 * 1.1); on failure the ops not queued end with the error. */
int collx_op_submit(struct collx_comm *comm, struct collx_op **ops, int n);
/* Wait (@timeout_ms < 0: forever; 0: test) and, once done, free @op. */
int collx_op_finish(struct collx_op *op, int timeout_ms, int *done,
		    struct collx_completion *c);
/* Destroy: take every record still in the kernel (lock held). */
void collx_op_reap_all(struct collx_comm *comm, int budget_ms);
/* Non-blocking: records of ops that have ended (lock held). */
void collx_op_poll(struct collx_comm *comm);

/* ---- group.c: collx_group_start()/end() -------------------------------- */

/* Whether this thread is inside a group; if so queue @op there. */
bool collx_group_take(struct collx_op *op);

/* ---- names.c ------------------------------------------------------------ */

/* "zero-copy+placed", or "-" for none. */
void collx_mem_path_str(uint32_t mem, char *out, size_t len);

#endif /* COLLX_INT_H */
