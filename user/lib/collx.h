/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx: user-space API of collx, collective communication driven by the
 * kernel over RDMA.
 *
 * Shaped after NCCL: rank 0 makes a unique id (collx_get_unique_id()), the
 * job hands it to every rank, and each rank calls collx_comm_init_rank();
 * or every rank calls collx_comm_init_all(), which reads the rendezvous
 * from the environment (COLLX_COMM_ID, COLLX_MASTER_ADDR/COLLX_RANK/
 * COLLX_NRANKS, torchrun's MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE).
 *
 * Every call returns 0 or a negative errno; collx_strerror() turns one into
 * text, and collx_comm_last_error() tells what a communicator's last
 * failure was (which rank, which phase).  The library has no threads: the
 * kernel drives the collectives.  See Documentation/libcollx.md.
 */
#ifndef COLLX_H
#define COLLX_H

#include <stddef.h>
#include <stdint.h>
#include <linux/collx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this library's API (not of the kernel ABI). */
#define COLLX_LIB_MAJOR	1
#define COLLX_LIB_MINOR	1

/* Default TCP port of the rendezvous with COLLX_MASTER_ADDR. */
#define COLLX_DEFAULT_PORT	29511

/* ---- the device ---------------------------------------------------- */

/* An open /dev/collx. */
struct collx_dev;

/*
 * Open the collx device (/dev/collx, or $COLLX_DEVICE) and check that the
 * module speaks an ABI major this library knows.  Returns 0 or a negative
 * errno: -ENOENT (module not loaded), -EPROTO (ABI major mismatch), or the
 * errno of open()/ioctl().
 */
int collx_dev_open(struct collx_dev **devp);
void collx_dev_close(struct collx_dev *dev);

/* The module's answer to COLLX_IOC_VERSION, as read at open. */
const struct collx_version *collx_dev_version(const struct collx_dev *dev);

/* The fd, for callers that issue ioctls themselves. */
int collx_dev_fd(const struct collx_dev *dev);

/* ---- communicators --------------------------------------------------- */

/* What rank 0 hands to every rank: its address and a nonce.  Opaque. */
#define COLLX_UNIQUE_ID_BYTES	128
struct collx_unique_id {
	char internal[COLLX_UNIQUE_ID_BYTES];
};

struct collx_comm;

/*
 * Make a new unique id and start listening for the ranks on it.  Called
 * by rank 0 only, once per communicator, in the process that will be
 * rank 0.  The address is COLLX_COMM_ID's when set, else the IPv4 address
 * of the chosen RDMA device (COLLX_IB_HCA), else of the first interface up.
 */
int collx_get_unique_id(struct collx_unique_id *id);

/*
 * Create a communicator of @nranks ranks, this process being @rank, with
 * rank 0's @id.  Blocks until every rank has joined the rendezvous and the
 * kernel has connected this rank to its peers, or fails: -ETIMEDOUT (a rank
 * never joined, or a peer never answered the kernel: collx_comm_last_error()
 * names it), -ECONNREFUSED, -EHOSTUNREACH, -ENODEV, -EPROTO (a peer speaks
 * another protocol or belongs to another job), -EINVAL (bad arguments or
 * ranks that disagree on @nranks), -ENOENT (no /dev/collx), -ENODEV (no
 * usable RDMA device).  On failure *@comm is NULL and
 * collx_comm_last_error(NULL) tells, in this thread, what failed.
 */
int collx_comm_init_rank(struct collx_comm **comm, int nranks,
			 const struct collx_unique_id *id, int rank);

/*
 * collx_comm_init_rank() with rank, size and rendezvous from the
 * environment: COLLX_RANK/COLLX_NRANKS (else RANK/WORLD_SIZE) and
 * COLLX_COMM_ID=ip:port (else COLLX_MASTER_ADDR[:COLLX_MASTER_PORT],
 * else MASTER_ADDR with port MASTER_PORT+1, because torchrun's store
 * holds MASTER_PORT itself).  Every process may call it more than once:
 * the n-th call of every rank makes the same communicator.
 */
int collx_comm_init_all(struct collx_comm **comm);

/*
 * Disconnect and free a communicator.  Collectives still in flight end
 * with -ECANCELED; their handles stay valid until collx_wait()/
 * collx_test() report that and free them.  Registrations are dropped.
 */
int collx_comm_destroy(struct collx_comm *comm);

int collx_comm_rank(const struct collx_comm *comm);
int collx_comm_size(const struct collx_comm *comm);

/* "rxe0:1 10.77.0.10 MTU 4096": this rank's RDMA device, for reports. */
const char *collx_comm_device(const struct collx_comm *comm);

/*
 * Text of the communicator's last failure: what failed, the rank to blame
 * and the phase ("connect: rank 3 (10.77.0.13) did not answer within
 * 30000 ms"), or "" when nothing failed.  Valid until the next call on
 * @comm.  Accepts NULL (returns the last failure of an init that did not
 * return a communicator, in this thread).
 */
const char *collx_comm_last_error(const struct collx_comm *comm);

/* ---- memory ------------------------------------------------------------ */

/*
 * Register (pin) [@buf, @buf + @size) with @comm's kernel context so
 * collectives on buffers inside it run in place instead of bouncing.  The
 * pages count against RLIMIT_MEMLOCK (-ENOMEM beyond it).  Registration is
 * never required.
 */
int collx_mem_register(struct collx_comm *comm, void *buf, size_t size,
		       void **handle);
/* -EBUSY while a collective in flight uses it. */
int collx_mem_deregister(struct collx_comm *comm, void *handle);

/* ---- collectives --------------------------------------------------------- */

/* An allreduce in flight. */
struct collx_op;

/*
 * @count elements of @dtype in @sendbuf on every rank, reduced with @redop;
 * every rank gets the result in @recvbuf (@sendbuf == @recvbuf: in place).
 * Every rank must issue the same collectives in the same order.  Blocks
 * until done.  A failed collective returns its errno (-ETIMEDOUT,
 * -ECONNRESET, -ENODEV, -ECANCELED, -EIO, -EPIPE once the communicator is
 * in its error state) and collx_comm_last_error() names the peer and phase.
 */
int collx_allreduce(struct collx_comm *comm, const void *sendbuf,
		    void *recvbuf, size_t count, enum collx_dtype dtype,
		    enum collx_redop redop);

/*
 * Start the same allreduce and return at once; the kernel moves the data
 * while the caller computes.  Buffers must not be touched until the op
 * has completed.
 */
int collx_allreduce_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t count, enum collx_dtype dtype,
			  enum collx_redop redop, struct collx_op **op);

/*
 * Wait for @op, free it, and return its outcome (0 or a negative errno as
 * collx_allreduce()).  @c (may be NULL) receives the kernel's record:
 * failed rank, phase, step, bytes, start and end times.
 */
int collx_wait(struct collx_op *op, struct collx_completion *c);

/*
 * Like collx_wait() but never blocks: when @op is still running, returns 0
 * with *@done = 0 and @op stays valid; else *@done = 1, @op is freed and
 * its outcome returned.
 */
int collx_test(struct collx_op *op, int *done, struct collx_completion *c);

/* ---- every collective (API 1.1) -------------------------------------- */

/*
 * NCCL's collectives with NCCL's argument order and meaning of count, root
 * and buffers (enum collx_coll in <linux/collx.h> says which buffer holds
 * how many elements).  Each blocks until done and returns as
 * collx_allreduce(); the _async forms return at once with an op for
 * collx_wait()/collx_test().  Inside collx_group_start()/collx_group_end()
 * nothing is submitted until collx_group_end(): an _async op's handle is
 * valid from then on, and a blocking call returns 0 at once and is waited
 * for by collx_group_end().
 */
int collx_broadcast(struct collx_comm *comm, const void *sendbuf,
		    void *recvbuf, size_t count, enum collx_dtype dtype,
		    int root);
int collx_broadcast_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t count, enum collx_dtype dtype,
			  int root, struct collx_op **op);
int collx_reduce(struct collx_comm *comm, const void *sendbuf, void *recvbuf,
		 size_t count, enum collx_dtype dtype, enum collx_redop redop,
		 int root);
int collx_reduce_async(struct collx_comm *comm, const void *sendbuf,
		       void *recvbuf, size_t count, enum collx_dtype dtype,
		       enum collx_redop redop, int root, struct collx_op **op);
int collx_allgather(struct collx_comm *comm, const void *sendbuf,
		    void *recvbuf, size_t sendcount, enum collx_dtype dtype);
int collx_allgather_async(struct collx_comm *comm, const void *sendbuf,
			  void *recvbuf, size_t sendcount,
			  enum collx_dtype dtype, struct collx_op **op);
int collx_reduce_scatter(struct collx_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t recvcount,
			 enum collx_dtype dtype, enum collx_redop redop);
int collx_reduce_scatter_async(struct collx_comm *comm, const void *sendbuf,
			       void *recvbuf, size_t recvcount,
			       enum collx_dtype dtype, enum collx_redop redop,
			       struct collx_op **op);
int collx_alltoall(struct collx_comm *comm, const void *sendbuf,
		   void *recvbuf, size_t count, enum collx_dtype dtype);
int collx_alltoall_async(struct collx_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t count, enum collx_dtype dtype,
			 struct collx_op **op);
int collx_barrier(struct collx_comm *comm);
int collx_barrier_async(struct collx_comm *comm, struct collx_op **op);
int collx_send(struct collx_comm *comm, const void *sendbuf, size_t count,
	       enum collx_dtype dtype, int peer);
int collx_send_async(struct collx_comm *comm, const void *sendbuf,
		     size_t count, enum collx_dtype dtype, int peer,
		     struct collx_op **op);
int collx_recv(struct collx_comm *comm, void *recvbuf, size_t count,
	       enum collx_dtype dtype, int peer);
int collx_recv_async(struct collx_comm *comm, void *recvbuf, size_t count,
		     enum collx_dtype dtype, int peer, struct collx_op **op);

/*
 * Any collective with every knob, the algorithm included (COLLX_ALGO_* of
 * <linux/collx.h>; COLLX_ALGO_AUTO lets the kernel choose, or
 * $COLLX_ALGO=ring|tree|rd|pairwise when set).  @op NULL: blocking.
 */
struct collx_args {
	enum collx_coll coll;
	enum collx_dtype dtype;
	enum collx_redop redop;
	int root;			/* or the peer of send/recv */
	size_t count;
	const void *sendbuf;
	void *recvbuf;
	enum collx_algo algo;
};
int collx_submit(struct collx_comm *comm, const struct collx_args *args,
		 struct collx_op **op);

/*
 * NCCL's group semantics, per thread and nestable: the ops issued between
 * the outermost start and end start together in the kernel (one
 * COLLX_IOC_SUBMIT_GROUP per communicator), so a send and a recv between
 * two ranks never wait for each other in any order.  collx_group_end()
 * returns 0 or the first error of the submission or of a blocking call in
 * the group.
 */
int collx_group_start(void);
int collx_group_end(void);

/*
 * Register a dma-buf (GPU memory exported by its driver, udmabuf, a DMA
 * heap) for zero-copy collectives.  _at: collectives name its first byte
 * @addr (e.g. the device pointer).  Without _at the library maps the
 * dma-buf into this process and collectives use that mapping's address,
 * which *@addr receives (the CPU may touch the memory there).  Errors as
 * COLLX_IOC_MR_REG documents: -EBADF, -EINVAL, -EOPNOTSUPP, -ENOMEM.
 */
int collx_mem_register_dmabuf(struct collx_comm *comm, int fd,
			      uint64_t offset, size_t size, void **addr,
			      void **handle);
int collx_mem_register_dmabuf_at(struct collx_comm *comm, int fd,
				 uint64_t offset, size_t size, void *addr,
				 void **handle);

/* ---- communicator state (API 1.1) --------------------------------------- */

/*
 * A file descriptor that polls readable when one of the communicator's ops
 * has completed (for epoll/asyncio loops); collx_test() then reaps it.
 */
int collx_comm_fd(const struct collx_comm *comm);

/*
 * The error that put the communicator in its error state (0 while it
 * works), like ncclCommGetAsyncError(); never blocks.
 */
int collx_comm_get_async_error(struct collx_comm *comm);

/*
 * Abort: like collx_comm_destroy() but safe to call from another thread
 * while this communicator's ops are being waited on (they end with
 * -ECANCELED); the memory is freed once the last waiter has returned.
 */
int collx_comm_abort(struct collx_comm *comm);

/* The module-wide id the kernel's debugfs, tracepoints and collx-netmon use. */
unsigned int collx_comm_global_id(const struct collx_comm *comm);

/* COLLX_LIB_MAJOR * 10000 + COLLX_LIB_MINOR * 100, at run time. */
int collx_get_version(int *version);

/* ---- names ----------------------------------------------------------- */

/* A message for a negative errno returned by a collx_* call. */
const char *collx_strerror(int err);

/* nccl-tests names: "int8" ... "float", "double", "half", "bfloat16". */
const char *collx_dtype_name(enum collx_dtype dtype);
/* "sum", "prod", "max", "min", "avg". */
const char *collx_redop_name(enum collx_redop redop);
/* "none", "connect", "reduce-scatter", "all-gather", "reduce",
 * "broadcast", "exchange", "alltoall", "p2p". */
const char *collx_phase_name(enum collx_phase phase);
/* "allreduce", "broadcast", ..., "send", "recv" (API 1.1). */
const char *collx_coll_name(enum collx_coll coll);
/* "auto", "ring", "tree", "rd", "pairwise", "p2p" (API 1.1). */
const char *collx_algo_name(enum collx_algo algo);
/* 1, 2, 4 or 8; 0 for an unknown type. */
size_t collx_dtype_size(enum collx_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* COLLX_H */
