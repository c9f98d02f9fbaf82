/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx_fuzz: what its files share.  contract.h has the uapi's errno sets;
 * this header the run's options, the memory the calls point into, the
 * objects the kernel handed out (fds, comms, registrations, ops), the
 * calls themselves and the findings.
 */
#ifndef FUZZ_FUZZ_H
#define FUZZ_FUZZ_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "contract.h"
#include "rng.h"

#define FZ_PAGE			4096UL
#define FZ_MAX_THREADS		16
#define FZ_MAX_FDS		32
#define FZ_MAX_COMMS		1024
#define FZ_MAX_MRS		512
#define FZ_MAX_OPS		16384
/* Registrations the fuzzer keeps per fd before it prefers deregistering. */
#define FZ_MRS_SOFT		48
/* Buffers of one collective, at most (elements * size). */
#define FZ_MAX_BUF		(1UL << 20)

/* ---- options (collx_fuzz.c) ------------------------------------------ */

/* What a call of the main loop can be (-x excludes some by name). */
enum fz_kind {
	K_VERSION, K_CREATE, K_DESTROY, K_REG, K_DEREG, K_SUBMIT, K_GROUP,
	K_WAIT, K_READ, K_POLL, K_BADNR, K_RACE, K_FORK, K_PROCS, K_NR_KINDS,
};

struct fz_opts {
	uint64_t seed;
	uint64_t calls;		/* -n, over all threads */
	unsigned int threads;	/* -t */
	unsigned int seconds;	/* -T */
	unsigned int nfds;	/* fds of the main loop */
	unsigned int procs;	/* -P: child processes sharing an fd */
	unsigned int exclude;	/* -x: bit per enum fz_kind */
	int shared_fd;		/* -F: inherited fd to share (children) */
	bool verbose;		/* -v: every call on stderr */
	uint64_t print;		/* -p: findings printed in full */
	bool child;		/* started by another collx_fuzz */
	uint32_t node_addr;	/* -a: this node's IPv4, network order */
};

extern struct fz_opts fz_opt;
extern const char *const fz_kind_names[K_NR_KINDS];
extern uint32_t fz_abi_minor;	/* from COLLX_IOC_VERSION at start */
extern uint64_t fz_features;	/* COLLX_FEATURE_* from it */
double fz_now(void);		/* CLOCK_MONOTONIC seconds */
uint64_t fz_now_ns(void);
bool fz_time_up(void);		/* -T reached, or the run is stopping */
void fz_request_stop(void);	/* end the run early (a hang) */

/* ---- memory (mem.c) -------------------------------------------------- */

/*
 * The data arena (buffers of collectives, registrations), ending in an
 * unmapped page; a read-only region with content and one never written
 * (the zero page); a large PROT_NONE reservation ("unmapped" pointers
 * that are surely unmapped); a shared memfd mapping for registrations.
 */
struct fz_mem {
	uint8_t *data;
	size_t data_len;	/* slots, then the end zone, then a guard */
	size_t slot_len;	/* bytes handed out as slots */
	uint8_t *ro;
	uint8_t *ro_zero;
	size_t ro_len;
	uint8_t *none;
	size_t none_len;
	uint8_t *shm;
	size_t shm_len;
};

extern struct fz_mem fz_mem;
int fz_mem_init(size_t data_bytes);
/* Page-aligned slot of at least @bytes (NULL when full); free with put. */
uint8_t *fz_slot_get(size_t bytes, size_t *pages);
void fz_slot_put(uint8_t *p, size_t pages);
/* A pointer the kernel cannot use: NULL, unmapped, kernel, non-canonical. */
uint64_t fz_ptr_bad(struct fz_rng *r, const char **what);
/* @len bytes ending right before the data arena's guard page. */
uint64_t fz_ptr_end(size_t len);
/* Fill @p with the byte pattern of seed @s; check it (first bad offset). */
void fz_fill(uint8_t *p, uint64_t len, uint32_t s);
int64_t fz_check_fill(const uint8_t *p, uint64_t len, uint32_t s);

/* ---- threads --------------------------------------------------------- */

struct fz_thread {
	unsigned int idx;
	struct fz_rng rng;
	pid_t tid;
	uint64_t calls;		/* syscalls this thread made */
	uint64_t budget;	/* calls it should make */
	uint8_t *arg;		/* 3 read-write pages, then a guard page */
	uint8_t *arg_ro;	/* a page kept read-only, then a guard page */
	uint8_t *big;		/* tables: group entries, rank addresses */
	size_t big_len;		/* read-write, then a guard page */
	timer_t timer;		/* interrupts this thread's blocking calls */
	bool has_timer;
	char cur[200];		/* the call in progress, for the watchdog */
	volatile double cur_since;
	uint64_t cur_no;
	struct fz_thread *helper;	/* a second thread of race scenarios */
};

void fz_thread_init(struct fz_thread *t, unsigned int idx, uint64_t seed);
/* Bind @t to the calling thread (its interrupting timer); and undo it. */
void fz_thread_attach(struct fz_thread *t);
void fz_thread_detach(struct fz_thread *t);
/* Arm (ms > 0) or disarm (0) @t's interrupting timer. */
void fz_timer(struct fz_thread *t, unsigned int ms);

/* ---- the kernel's objects (state.c) ---------------------------------- */

struct fz_fd {
	bool used;
	bool shared;		/* another process uses it too */
	bool scenario;		/* a race scenario's own: not the main loop's */
	bool blocking;		/* opened without O_NONBLOCK */
	int fd;
	uint64_t maybe_queued;	/* SUBMITs whose fate could not be known */
	uint64_t max_op_id;
	uint64_t done_ids[64];	/* ids whose record was read, a ring */
	unsigned int done_n;
	uint64_t *seen;		/* every op id ever returned, a hash set */
	size_t seen_cap, seen_n;
	unsigned int live_ops, live_comms, live_mrs;
	uint32_t gen;		/* bumped each time the slot is reused */
};

struct fz_comm {
	bool used;
	bool dying;		/* destroyed or being destroyed */
	bool tainted;		/* ops on it need not succeed (lone p2p, ...) */
	bool bynum;		/* recorded while a destroy by number of its
				 * handle was in flight: dying until that ends */
	int fdi;
	uint32_t id, gid, nranks;
	uint32_t timeout_ms;	/* as created (0: the module's default) */
	uint64_t key;
	uint32_t gen;
};

struct fz_mr {
	bool used;
	bool busy;		/* a thread is deregistering it */
	bool bynum;		/* busy: a dereg by number of its id was in
				 * flight when it was recorded */
	int fdi;
	uint32_t id;
	uint64_t addr, len;
};

struct fz_op {
	bool used;
	int fdi;
	int ci;			/* its comm's index, and that slot's gen */
	uint32_t cgen;
	uint32_t comm_id, nranks, coll;
	uint64_t id;
	uint64_t in_bytes, out_bytes;
	uint8_t *send, *recv;	/* as submitted */
	uint8_t *send_buf, *recv_buf;	/* the buffers in its slots */
	uint8_t *send_slot, *recv_slot;
	size_t send_pages, recv_pages;
	uint32_t pat;		/* the send buffer's pattern seed */
	const uint8_t *ro_src;	/* the send buffer was read-only memory */
	bool in_place;
	bool checkable;		/* its output can be checked */
	bool expect_ok;		/* must complete with status 0 */
	bool wait_efault;	/* a WAIT for it returned EFAULT */
	uint64_t t_submit;
	uint64_t callno;
	int next;		/* hash chain */
};

extern pthread_mutex_t fz_lock;
extern struct fz_fd fz_fds[FZ_MAX_FDS];
extern struct fz_comm fz_comms[FZ_MAX_COMMS];
extern struct fz_mr fz_mrs[FZ_MAX_MRS];
extern struct fz_op fz_ops[FZ_MAX_OPS];

/* A small set of (fd, id) pairs: removals by number in flight, and such. */
struct fz_key {
	int fdi;
	uint32_t id;
};
bool fz_key_has(const struct fz_key *set, unsigned int n, int fdi, uint32_t id);
/* Take one (@fdi, @id) out of @set; false if none is there. */
bool fz_key_take(struct fz_key *set, unsigned int *n, int fdi, uint32_t id);

/* All of these with fz_lock held. */
int fz_fd_add(int fd, bool shared, bool scenario, bool blocking);
void fz_fd_forget(int fdi);	/* its objects; the fd is closed already */
void fz_fd_closing(int fdi);	/* before close(): its comms are dying */
int fz_comm_add(int fdi, uint32_t id, uint32_t gid, uint32_t nranks,
		uint64_t key, uint32_t timeout_ms);
int fz_comm_pick(struct fz_rng *r, int fdi);	/* a live comm or -1 */
bool fz_comm_dead(int ci, uint32_t gen);
void fz_comm_gone(int ci);	/* destroyed: forget it */
int fz_mr_add(int fdi, uint32_t id, uint64_t addr, uint64_t len);
int fz_mr_pick(struct fz_rng *r, int fdi);
void fz_mr_gone(int mi);
int fz_op_alloc(void);			/* a free fz_ops index or -1 */
void fz_op_insert(int oi);		/* with fdi and id set */
int fz_op_find(int fdi, uint64_t id);
void fz_op_remove(int oi);		/* releases its slots */
int fz_op_pick(struct fz_rng *r, int fdi);
/* Remember @id as returned on @fdi: false if it was returned before. */
bool fz_id_seen_add(int fdi, uint64_t id);
bool fz_id_seen(int fdi, uint64_t id);

/* ---- calls (args.c) -------------------------------------------------- */

enum fz_place {
	P_NORMAL,	/* read-write memory with canaries around */
	P_END,		/* its last byte right before an unmapped page */
	P_CROSS,	/* running into an unmapped page */
	P_RO,		/* a read-only page */
	P_BAD,		/* NULL, unmapped, kernel or non-canonical */
};

enum fz_tail {
	T_NONE,		/* size is the struct's, or less */
	T_ZERO,		/* longer, zero tail */
	T_DIRTY,	/* longer, a non-zero byte in the tail */
	T_HUGE,		/* far longer than any memory behind it */
};

/*
 * One ioctl.  A generator fills @st (the struct as this uapi has it),
 * @desc and @valid, then fz_ioctl() chooses the size and the placement
 * (unless the generator fixed them), makes the call, checks the result
 * and copies back what the kernel wrote.
 */
struct fz_call {
	enum fz_entry e;
	int fdi, fd;
	uint32_t fd_gen;	/* fz_fds[fdi].gen when the call was built */
	unsigned long nr;
	union {
		struct collx_version version;
		struct collx_comm_create create;
		struct collx_comm_destroy destroy;
		struct collx_mr_reg reg;
		struct collx_mr_dereg dereg;
		struct collx_submit submit;
		struct collx_wait wait;
		struct collx_submit_group group;
		uint8_t bytes[256];
	} st;
	bool fixed;		/* size and place set by the generator */
	uint32_t size;
	enum fz_place place;
	enum fz_tail tail;
	bool valid;		/* well formed for any size >= the mandatory */
	int expect;		/* the content's precise errno, or -1 */
	int alt;		/* an acceptable alternative to it, or -1 */
	const int *tolerate;	/* more errnos a valid call may meet (0-ended) */
	unsigned int timer_ms;	/* interrupt it after this long (0: none) */
	char desc[240];
	/* Results. */
	int err;
	bool delivered;		/* the kernel saw @st as built (size >= ksize) */
	bool out_ok;		/* @st holds what the kernel wrote back */
};

void fz_call_init(struct fz_call *c, enum fz_entry e, int fdi);
/* Choose the size and the placement now (the generator looks at them). */
void fz_choose(struct fz_thread *t, struct fz_call *c);
/* Could the call do something: its struct read whole and well placed. */
bool fz_can_act(const struct fz_call *c);
/* Make the call; returns the errno (0: success). */
int fz_ioctl(struct fz_thread *t, struct fz_call *c);
/* Count a call of a non-ioctl entry and check its errno. */
void fz_count(struct fz_thread *t, enum fz_entry e, int err,
	      const char *desc);
void fz_begin(struct fz_thread *t, const char *what);
void fz_end(struct fz_thread *t);

/* ---- values (values.c) ----------------------------------------------- */

uint32_t fz_u32(struct fz_rng *r);	/* edge-biased */
uint64_t fz_u64(struct fz_rng *r);
uint64_t fz_count_small(struct fz_rng *r, size_t esize, uint64_t max_bytes);
uint32_t fz_key(struct fz_rng *r);

/* ---- generators ------------------------------------------------------ */

void fz_gen_version(struct fz_thread *t, int fdi);
void fz_gen_badnr(struct fz_thread *t, int fdi);
void fz_gen_create(struct fz_thread *t, int fdi);
/* A valid 1-rank comm (@timeout_ms UINT32_MAX: any); index or -1. */
int fz_create_1rank(struct fz_thread *t, int fdi, uint32_t timeout_ms,
		    int *errp);
void fz_gen_destroy(struct fz_thread *t, int fdi);
int fz_destroy(struct fz_thread *t, int fdi, int ci);
/* Around a destroy by number of handle @id of @fdi: what it may hit. */
int fz_comm_doom_id(int fdi, uint32_t id);
void fz_comm_doomed(int fdi, uint32_t id, int ci, int err);
void fz_gen_reg(struct fz_thread *t, int fdi);
int fz_reg(struct fz_thread *t, int fdi, uint8_t *p, uint64_t len);
void fz_gen_dereg(struct fz_thread *t, int fdi);
int fz_dereg(struct fz_thread *t, int fdi, int mi);
void fz_gen_submit(struct fz_thread *t, int fdi);
/* A valid 1-rank collective on comm @ci (@coll UINT32_MAX: any); errno. */
int fz_submit_valid(struct fz_thread *t, int fdi, int ci, uint32_t coll,
		    uint64_t max_bytes, uint64_t *idp);
void fz_gen_group(struct fz_thread *t, int fdi);
void fz_gen_wait(struct fz_thread *t, int fdi);
int fz_wait(struct fz_thread *t, int fdi, uint64_t id, unsigned int ms);
void fz_gen_read(struct fz_thread *t, int fdi);
/* Read every record of @fdi for up to @ms; returns how many. */
unsigned int fz_drain(struct fz_thread *t, int fdi, unsigned int ms);
void fz_gen_poll(struct fz_thread *t);

/* ---- records (records.c) --------------------------------------------- */

/* A completion record read from @fdi (by read() or WAIT). */
void fz_record(struct fz_thread *t, int fdi, const struct collx_completion *c,
	       const char *via);
/* After an op was inserted: a record that arrived first is checked now. */
void fz_limbo_match(struct fz_thread *t, int fdi, uint64_t id);
/* End of run: records nobody could place, ops nobody got a record of. */
void fz_records_final(struct fz_thread *t);
/* Drop what @fdi left in limbo (its fd is gone). */
void fz_limbo_forget(int fdi);

/* ---- scenarios (races.c, procs.c) ------------------------------------ */

void fz_race(struct fz_thread *t);
void fz_fork_after_register(struct fz_thread *t);
int fz_procs_start(int shared_fd);
void fz_procs_finish(void);

/* ---- findings and counts (report.c) ---------------------------------- */

enum fz_class {
	F_ERRNO,	/* an errno the uapi does not document for the call */
	F_ORACLE,	/* a documented errno, but not the one the input implies */
	F_RECORD,	/* a malformed completion record */
	F_DATA,		/* wrong output, input or memory around it touched */
	F_LOST,		/* a record lost, duplicated or never queued */
	F_IDS,		/* an id handed out twice */
	F_HANG,		/* a call or a process that did not return */
	F_COUNTERS,	/* module counters not back after the fds closed */
	F_CHILD,	/* a child process reported findings */
	F_LATE,		/* a call that outlived its own bound (a create's timeout) */
	F_NR_CLASSES,
};

void fz_finding(struct fz_thread *t, enum fz_class cl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void fz_result(enum fz_entry e, int err);
uint64_t fz_total_calls(void);
uint64_t fz_total_findings(void);
void fz_report(double secs, const char *stop);
/*
 * A COMM_CREATE of more than one rank that failed after @took_ns with
 * @timeout_ms: the uapi bounds it by the timeout plus
 * COLLX_CREATE_SLACK_MS (times the lab's slowdown); later is a "late"
 * finding, and fz_report() prints the worst.
 */
void fz_create_failed(struct fz_thread *t, uint32_t timeout_ms,
		      uint64_t took_ns);

#endif /* FUZZ_FUZZ_H */
