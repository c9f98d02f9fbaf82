/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx internals, shared by the library's files and its unit tests
 * (tests/unit/lib links libcollx.a and calls these directly).
 */
#ifndef COLLX_INT_H
#define COLLX_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "collx.h"

#define COLLX_ERRLEN	256

/* ---- debug.c: COLLX_DEBUG, COLLX_DEBUG_FILE -------------------------- */

enum collx_log_level {
	COLLX_LOG_NONE = 0,
	COLLX_LOG_WARN = 1,
	COLLX_LOG_INFO = 2,
	COLLX_LOG_TRACE = 3,
};

extern int collx_log_level_cur;
void collx_log_init(void);
void collx_log(enum collx_log_level lvl, int rank, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Parse "WARN", "info"...; -1 if unknown. */
int collx_log_parse_level(const char *s);
/* Expand %h (host) and %p (pid) of a COLLX_DEBUG_FILE pattern. */
int collx_log_expand_path(const char *pattern, char *out, size_t outlen);

#define COLLX_LOG(lvl, rank, ...) do {				\
	collx_log_init();					\
	if (collx_log_level_cur >= (lvl))			\
		collx_log((lvl), (rank), __VA_ARGS__);		\
} while (0)
#define WARN(rank, ...)		COLLX_LOG(COLLX_LOG_WARN, rank, __VA_ARGS__)
#define INFO(rank, ...)		COLLX_LOG(COLLX_LOG_INFO, rank, __VA_ARGS__)
#define TRACE(rank, ...)	COLLX_LOG(COLLX_LOG_TRACE, rank, __VA_ARGS__)

/* ---- env.c: what collx_comm_init_all() reads ---------------------------- */

struct collx_env_cfg {
	int rank;
	int nranks;
	char host[256];		/* rank 0's address or name */
	uint16_t port;
	char source[64];	/* which variables gave it, for messages */
};

/*
 * Fill @cfg from the environment (see collx_comm_init_all()); on failure
 * -EINVAL with the reason in @err.
 */
int collx_env_parse(struct collx_env_cfg *cfg, char *err, size_t errlen);
/* "host:port" (host may be [v6] or a name); port 0 if absent. */
int collx_parse_hostport(const char *s, char *host, size_t hostlen,
			 uint16_t *port);
/* An environment integer; @def when unset; -EINVAL when malformed. */
int collx_env_long(const char *name, long def, long min, long max, long *out);

/* ---- bootstrap.c: the TCP rendezvous ------------------------------------ */

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
#define COLLX_BS_VERSION	1

struct collx_bs_params {
	int rank;
	int nranks;
	/* Rank 0's rendezvous address. */
	struct sockaddr_in root;
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
};

struct collx_bs_result {
	uint64_t comm_key;
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
void collx_bs_result_free(struct collx_bs_result *res);
/* Listen on @sa (port 0: any); returns the fd and fills the bound port. */
int collx_bs_listen(struct sockaddr_in *sa);
/* Unique id made on this process: keeps its listening socket by nonce. */
int collx_bs_take_listener(uint64_t nonce);
void collx_bs_keep_listener(uint64_t nonce, int fd);
uint64_t collx_random_u64(void);
/* "10.77.0.13" */
void collx_addr_str(const struct collx_rank_addr *a, char *out, size_t len);
/* Resolve a name or dotted quad to IPv4. */
int collx_resolve_ipv4(const char *host, struct in_addr *out);

/* ---- ibdev.c: which RDMA device and address ------------------------------ */

struct collx_ibdev_info {
	char name[64];
	int port;
	char netdev[64];
	struct in_addr addr;
	int gid_index;
	char gid[64];
	int mtu;		/* bytes */
	const char *how;	/* how the address was found */
};

/* COLLX_IB_HCA / COLLX_RDMA_ADDR / first ACTIVE port; text in @err. */
int collx_ibdev_select(struct collx_ibdev_info *info, char *err, size_t errlen);
/* "rxe0", "rxe0:1", "=mlx5_0:1,mlx5_1" (first entry) */
int collx_parse_hca(const char *spec, char *name, size_t namelen, int *port);
/* First non-loopback IPv4 address of an interface that is up. */
int collx_first_ipv4(struct in_addr *out);

/* ---- comm.c ---------------------------------------------------------- */

struct collx_mr {
	struct collx_mr *next;
	uintptr_t start, end;
	uint32_t mr_id;
};

struct collx_op {
	struct collx_op *next;		/* on comm->ops while pending */
	struct collx_comm *comm;	/* NULL once the comm is gone */
	uint64_t op_id;
	bool done;
	struct collx_completion c;
};

struct collx_comm {
	int fd;
	int rank, nranks;
	uint32_t comm_id;
	uint64_t comm_key;
	pthread_mutex_t lock;
	struct collx_op *ops;
	struct collx_mr *mrs;
	struct collx_ibdev_info dev;
	struct collx_rank_addr *addrs;
	char (*hosts)[64];
	int timeout_ms;
	uint64_t nr_ops;
	char last_error[COLLX_ERRLEN];
};

void collx_set_error(struct collx_comm *comm, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Text for a failed rank: "rank 3 (node3, 10.77.0.13)". */
void collx_rank_desc(const struct collx_comm *comm, uint32_t rank,
		     char *out, size_t outlen);

#endif /* COLLX_INT_H */
