/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * collx: collective communication as a kernel service.
 *
 * User-space ABI of /dev/collx.
 */
#ifndef _UAPI_LINUX_COLLX_H
#define _UAPI_LINUX_COLLX_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define COLLX_TYPE	'X'

/**
 * DOC: General ioctl format
 *
 * Every ioctl takes a pointer to a struct whose first field is ``__u32 size``,
 * the number of bytes user space passes.  The kernel reads
 * min(size, sizeof(kernel struct)) bytes, treats missing trailing bytes as
 * zero and, when user space is newer, requires every byte it does not know
 * to be zero (copy_struct_from_user() semantics).  Fields called ``flags``
 * must be zero unless a flag is defined for them; ``__reserved`` fields
 * must be zero.
 *
 * The ioctl number does not encode the size, so a struct may grow at its end
 * without a new number.  Output is written back up to the size user space
 * passed.
 *
 * Errors:
 *
 * - ENOTTY: unknown ioctl number.
 * - E2BIG: user space passed bytes, beyond what this kernel knows, that are
 *   not zero.
 * - EOPNOTSUPP: a flag, dtype, operation or other value this kernel does not
 *   support (it may be valid in a newer ABI).
 * - EINVAL: ``size`` is smaller than the struct's mandatory part, a reserved
 *   field is not zero, or a field's value is out of its range.
 * - EFAULT: a user pointer could not be read or written.
 * - ENOMEM: the kernel could not allocate what the request needs.
 */

/**
 * enum collx_dtype - element type of a collective's buffers
 * @COLLX_INT8: signed 8-bit integer
 * @COLLX_UINT8: unsigned 8-bit integer
 * @COLLX_INT32: signed 32-bit integer
 * @COLLX_UINT32: unsigned 32-bit integer
 * @COLLX_INT64: signed 64-bit integer
 * @COLLX_UINT64: unsigned 64-bit integer
 * @COLLX_FP16: IEEE 754 binary16
 * @COLLX_FP32: IEEE 754 binary32
 * @COLLX_FP64: IEEE 754 binary64
 * @COLLX_BF16: bfloat16 (the upper half of a binary32)
 * @COLLX_DTYPE_COUNT: number of types; not a type
 *
 * The values are NCCL's (ncclDataType_t), so code moving between the two
 * keeps its numbers.
 */
enum collx_dtype {
	COLLX_INT8 = 0,
	COLLX_UINT8 = 1,
	COLLX_INT32 = 2,
	COLLX_UINT32 = 3,
	COLLX_INT64 = 4,
	COLLX_UINT64 = 5,
	COLLX_FP16 = 6,
	COLLX_FP32 = 7,
	COLLX_FP64 = 8,
	COLLX_BF16 = 9,
	COLLX_DTYPE_COUNT,
};

/**
 * enum collx_redop - reduction operation
 * @COLLX_OP_SUM: sum
 * @COLLX_OP_PROD: product
 * @COLLX_OP_MAX: maximum
 * @COLLX_OP_MIN: minimum
 * @COLLX_OP_AVG: sum divided by the number of ranks (integers truncate)
 * @COLLX_OP_COUNT: number of operations; not an operation
 *
 * The values are NCCL's (ncclRedOp_t).
 */
enum collx_redop {
	COLLX_OP_SUM = 0,
	COLLX_OP_PROD = 1,
	COLLX_OP_MAX = 2,
	COLLX_OP_MIN = 3,
	COLLX_OP_AVG = 4,
	COLLX_OP_COUNT,
};

/* ABI version reported by COLLX_IOC_VERSION. */
#define COLLX_ABI_MAJOR	1
#define COLLX_ABI_MINOR	0

enum {
	COLLX_CMD_BASE = 0x80,
	COLLX_CMD_VERSION = COLLX_CMD_BASE,
	COLLX_CMD_COMM_CREATE,
	COLLX_CMD_COMM_DESTROY,
	COLLX_CMD_MR_REG,
	COLLX_CMD_MR_DEREG,
	COLLX_CMD_SUBMIT,
	COLLX_CMD_WAIT,
};

/* "No rank": a failed_rank when no single peer is to blame. */
#define COLLX_RANK_NONE		0xffffffffU
/* Most ranks in a communicator. */
#define COLLX_MAX_RANKS		1024

/**
 * struct collx_version - COLLX_IOC_VERSION
 * @size: sizeof(struct collx_version)
 * @flags: must be 0
 * @abi_major: out, COLLX_ABI_MAJOR of the loaded module; a library built
 *	for another major must not talk to it
 * @abi_minor: out, COLLX_ABI_MINOR of the loaded module; newer minors only
 *	add ioctls and fields
 * @nr_devices: out, number of RDMA devices the module currently serves
 * @__reserved: must be 0
 * @features: out, bit mask of COLLX_FEATURE_* the module supports
 * @module_version: out, NUL-terminated version string of the module
 *
 * Tells user space which ABI the loaded module speaks.  Libraries call it
 * right after open() and refuse a major they do not know.
 */
struct collx_version {
	__u32 size;
	__u32 flags;
	__u32 abi_major;
	__u32 abi_minor;
	__u32 nr_devices;
	__u32 __reserved;
	__aligned_u64 features;
	char module_version[32];
};

#define COLLX_IOC_VERSION	_IO(COLLX_TYPE, COLLX_CMD_VERSION)

/**
 * struct collx_rank_addr - where one rank's module listens
 * @family: AF_INET or AF_INET6
 * @port: rdma_cm port in host byte order; 0 means the module's
 *	``listen_port`` parameter
 * @__reserved: must be 0
 * @addr: the address of the rank's RDMA netdev, network byte order; an
 *	IPv4 address takes the first 4 bytes, the rest must be 0
 */
struct collx_rank_addr {
	__u16 family;
	__u16 port;
	__u32 __reserved;
	__u8 addr[16];
};

/**
 * struct collx_comm_create - COLLX_IOC_COMM_CREATE
 * @size: sizeof(struct collx_comm_create)
 * @flags: must be 0
 * @nranks: ranks in the communicator, 1..COLLX_MAX_RANKS
 * @rank: this caller's rank, below @nranks
 * @comm_key: the same non-zero value on every rank (libcollx derives it
 *	from the bootstrap's nonce); tells this communicator's connections
 *	from every other one's
 * @addrs: user pointer to @nranks struct collx_rank_addr, by rank
 * @addr_size: sizeof(struct collx_rank_addr) as the caller knows it
 * @timeout_ms: bound on connecting and on every collective's progress;
 *	0 means the module's ``comm_timeout_ms`` parameter (30 s)
 * @comm_id: out, the communicator's handle on this fd
 * @failed_rank: out, on failure the rank that could not be reached or
 *	refused, else COLLX_RANK_NONE
 *
 * Connects this rank to the peers its algorithms need (rdma_cm RC
 * connections to and from its ring neighbours) and returns when they are
 * up, or fails.  Errors beyond the general ones: ETIMEDOUT (a peer did not
 * answer within @timeout_ms; @failed_rank names it), ECONNREFUSED (a peer
 * refused, e.g. another @comm_key), EHOSTUNREACH (no route to a peer's
 * address), ENODEV (no RDMA device serves the route), EINTR (a signal).
 */
struct collx_comm_create {
	__u32 size;
	__u32 flags;
	__u32 nranks;
	__u32 rank;
	__aligned_u64 comm_key;
	__aligned_u64 addrs;
	__u32 addr_size;
	__u32 timeout_ms;
	__u32 comm_id;
	__u32 failed_rank;
};

#define COLLX_IOC_COMM_CREATE	_IO(COLLX_TYPE, COLLX_CMD_COMM_CREATE)

/**
 * struct collx_comm_destroy - COLLX_IOC_COMM_DESTROY
 * @size: sizeof(struct collx_comm_destroy)
 * @flags: must be 0
 * @comm_id: the communicator
 * @__reserved: must be 0
 *
 * Disconnects and frees a communicator.  Collectives still in flight on it
 * complete with ECANCELED.  ENOENT: no such communicator on this fd.
 */
struct collx_comm_destroy {
	__u32 size;
	__u32 flags;
	__u32 comm_id;
	__u32 __reserved;
};

#define COLLX_IOC_COMM_DESTROY	_IO(COLLX_TYPE, COLLX_CMD_COMM_DESTROY)

/**
 * struct collx_mr_reg - COLLX_IOC_MR_REG
 * @size: sizeof(struct collx_mr_reg)
 * @flags: must be 0
 * @addr: start of the user buffer
 * @length: its length in bytes, non-zero
 * @mr_id: out, the registration's handle on this fd
 * @__reserved: must be 0
 *
 * Pins the buffer's pages for as long as the registration lives (they
 * count against RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK), so
 * collectives on buffers inside it run without bouncing: the NIC reads
 * the output directly, and the ring predecessor writes all-gather data
 * straight into it through fast registrations made per collective and
 * invalidated before the collective completes.  Errors: ENOMEM
 * (over RLIMIT_MEMLOCK, or out of memory), EFAULT (not mapped writable).
 */
struct collx_mr_reg {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_id;
	__u32 __reserved;
};

#define COLLX_IOC_MR_REG	_IO(COLLX_TYPE, COLLX_CMD_MR_REG)

/**
 * struct collx_mr_dereg - COLLX_IOC_MR_DEREG
 * @size: sizeof(struct collx_mr_dereg)
 * @flags: must be 0
 * @mr_id: the registration
 * @__reserved: must be 0
 *
 * Drops a registration.  EBUSY while a collective in flight uses it, and
 * after a collective on it failed, until its communicator is destroyed
 * (the NIC may still touch the pages until the connections are drained);
 * ENOENT: no such registration on this fd.
 */
struct collx_mr_dereg {
	__u32 size;
	__u32 flags;
	__u32 mr_id;
	__u32 __reserved;
};

#define COLLX_IOC_MR_DEREG	_IO(COLLX_TYPE, COLLX_CMD_MR_DEREG)

/**
 * enum collx_coll - collective operation
 * @COLLX_COLL_ALLREDUCE: every rank ends with the reduction of all ranks'
 *	send buffers
 */
enum collx_coll {
	COLLX_COLL_ALLREDUCE = 0,
};

/**
 * enum collx_phase - where a collective was when it ended
 * @COLLX_PHASE_NONE: not started, or finished
 * @COLLX_PHASE_CONNECT: connecting the communicator
 * @COLLX_PHASE_REDUCE_SCATTER: ring reduce-scatter
 * @COLLX_PHASE_ALLGATHER: ring all-gather
 */
enum collx_phase {
	COLLX_PHASE_NONE = 0,
	COLLX_PHASE_CONNECT = 1,
	COLLX_PHASE_REDUCE_SCATTER = 2,
	COLLX_PHASE_ALLGATHER = 3,
};

/**
 * struct collx_submit - COLLX_IOC_SUBMIT
 * @size: sizeof(struct collx_submit)
 * @flags: must be 0
 * @comm_id: the communicator
 * @coll: enum collx_coll
 * @dtype: enum collx_dtype
 * @redop: enum collx_redop
 * @root: root rank of rooted collectives; must be 0 for the others
 * @__reserved: must be 0
 * @count: elements per rank, non-zero; count times the element size must
 *	fit the address space
 * @sendbuf: user pointer to the input; equal to @recvbuf for in-place
 * @recvbuf: user pointer to the output
 * @op_id: out, the collective's id, unique on this fd
 *
 * Queues a collective and returns at once.  Every rank of the
 * communicator must submit the same collectives in the same order.  The
 * collective completes through read()/poll() or COLLX_IOC_WAIT.  Buffers
 * inside a registration are used in place, zero copy; others are bounced
 * (their pages are pinned for the collective's lifetime and data moves
 * through the connection's staging slots).  Errors: ENOENT (no such
 * communicator), EPIPE (the communicator is in its error state: destroy
 * it), EOPNOTSUPP (coll, dtype or redop unknown), EFAULT (a buffer is not
 * mapped as needed).
 */
struct collx_submit {
	__u32 size;
	__u32 flags;
	__u32 comm_id;
	__u32 coll;
	__u32 dtype;
	__u32 redop;
	__u32 root;
	__u32 __reserved;
	__aligned_u64 count;
	__aligned_u64 sendbuf;
	__aligned_u64 recvbuf;
	__aligned_u64 op_id;
};

#define COLLX_IOC_SUBMIT	_IO(COLLX_TYPE, COLLX_CMD_SUBMIT)

/**
 * struct collx_completion - how a collective ended; read() returns these
 * @op_id: the collective
 * @comm_id: its communicator
 * @status: 0, or a negative errno: -ETIMEDOUT (no progress within the
 *	communicator's timeout), -ECONNRESET (a peer disconnected or its
 *	QP failed), -ENODEV (the RDMA device went away), -ECANCELED (the
 *	communicator was destroyed), -EIO (a protocol error)
 * @failed_rank: the peer that timed out or failed, else COLLX_RANK_NONE
 * @phase: enum collx_phase the collective was in when it ended
 * @step: ring step within @phase (0-based) when it ended
 * @__reserved: 0
 * @bytes: bytes of this rank's output buffer
 * @start_ns: CLOCK_MONOTONIC time the collective started moving data
 * @end_ns: CLOCK_MONOTONIC time it ended
 * @__reserved2: 0
 *
 * read() on the fd returns whole records (a short buffer gets EINVAL),
 * blocks unless O_NONBLOCK (EAGAIN), and poll() reports EPOLLIN while one
 * is queued.  A collective's record is returned once: by read() or by
 * COLLX_IOC_WAIT, whichever comes first.
 */
struct collx_completion {
	__aligned_u64 op_id;
	__u32 comm_id;
	__s32 status;
	__u32 failed_rank;
	__u32 phase;
	__u32 step;
	__u32 __reserved;
	__aligned_u64 bytes;
	__aligned_u64 start_ns;
	__aligned_u64 end_ns;
	__aligned_u64 __reserved2;
};

/* COLLX_IOC_WAIT timeout_ms that never expires. */
#define COLLX_WAIT_FOREVER	0xffffffffU

/**
 * struct collx_wait - COLLX_IOC_WAIT
 * @size: sizeof(struct collx_wait)
 * @flags: must be 0
 * @op_id: the collective to wait for
 * @timeout_ms: how long to block; 0 only tests, COLLX_WAIT_FOREVER has no
 *	bound (the communicator's own timeout still ends the collective)
 * @__reserved: must be 0
 * @completion: out, the collective's record when it has ended
 *
 * Returns 0 with @completion filled once the collective has ended (its
 * own outcome is in @completion.status).  Errors: EAGAIN (still running
 * after @timeout_ms), ENOENT (unknown id, or its record was already
 * read), EINTR (a signal).
 */
struct collx_wait {
	__u32 size;
	__u32 flags;
	__aligned_u64 op_id;
	__u32 timeout_ms;
	__u32 __reserved;
	struct collx_completion completion;
};

#define COLLX_IOC_WAIT		_IO(COLLX_TYPE, COLLX_CMD_WAIT)

#endif /* _UAPI_LINUX_COLLX_H */
