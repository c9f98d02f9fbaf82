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
 * must be zero unless a flag is defined for them (a bit this kernel does
 * not define is EOPNOTSUPP, on every ioctl); ``__reserved`` fields must be
 * zero (EINVAL).
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
 * @COLLX_FP8_E4M3: OCP 8-bit float E4M3 (bias 7, no infinities, one NaN
 *	pattern per sign, largest finite 448); ABI 1.1
 * @COLLX_FP8_E5M2: OCP 8-bit float E5M2 (bias 15, IEEE-like with
 *	infinities and NaNs, largest finite 57344); ABI 1.1
 * @COLLX_DTYPE_COUNT: number of types; not a type
 *
 * The values are NCCL's (ncclDataType_t, ncclFloat8e4m3 and ncclFloat8e5m2
 * included), so code moving between the two keeps its numbers.  FP8 sums
 * are computed in binary32 and rounded to nearest even once per
 * reduction step, saturating to the largest finite value (E4M3) or
 * rounding to infinity (E5M2) as the OCP 8-bit floating point
 * specification says.
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
	COLLX_FP8_E4M3 = 10,
	COLLX_FP8_E5M2 = 11,
	COLLX_DTYPE_COUNT,
};

/**
 * enum collx_redop - reduction operation
 * @COLLX_OP_SUM: sum
 * @COLLX_OP_PROD: product
 * @COLLX_OP_MAX: maximum
 * @COLLX_OP_MIN: minimum
 * @COLLX_OP_AVG: sum divided by the number of ranks (integers truncate);
 *	on a communicator of one rank the input itself, bit for bit
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
#define COLLX_ABI_MINOR	1

enum {
	COLLX_CMD_BASE = 0x80,
	COLLX_CMD_VERSION = COLLX_CMD_BASE,
	COLLX_CMD_COMM_CREATE,
	COLLX_CMD_COMM_DESTROY,
	COLLX_CMD_MR_REG,
	COLLX_CMD_MR_DEREG,
	COLLX_CMD_SUBMIT,
	COLLX_CMD_WAIT,
	COLLX_CMD_SUBMIT_GROUP,
	COLLX_CMD_COMM_QUERY,
};

/* "No rank": a failed_rank when no single peer is to blame. */
#define COLLX_RANK_NONE		0xffffffffU
/* Most ranks in a communicator. */
#define COLLX_MAX_RANKS		1024

/**
 * DOC: Limits
 *
 * Every resource a caller can make the kernel hold is bounded per fd or
 * per call; exceeding a bound fails the call with the errno given here and
 * changes nothing.
 *
 * - COLLX_MAX_COMMS_PER_FD communicators per open file (EMFILE).
 * - COLLX_MAX_MRS_PER_FD registrations per open file (EMFILE).
 * - COLLX_MAX_OPS_PER_FD collectives per open file that are queued,
 *   running, or complete with their record not yet read (EAGAIN: read some
 *   records first).
 * - COLLX_MAX_GROUP entries per COLLX_IOC_SUBMIT_GROUP (EINVAL), each of
 *   at most COLLX_MAX_ENTRY_SIZE bytes (EINVAL): the size-first rules
 *   read every entry's tail, so the stride is bounded like the count.
 * - COLLX_MAX_TIMEOUT_MS for a communicator's timeout (EINVAL).
 * - COLLX_MAX_ADDR_SIZE for struct collx_rank_addr as the caller knows it
 *   (EINVAL).
 * - COLLX_MAX_BYTES for any one buffer of a collective (EINVAL).
 * - Pinned pages, of registrations and of bounced buffers alike, count
 *   against RLIMIT_MEMLOCK (ENOMEM beyond it, unless CAP_IPC_LOCK), and
 *   kernel allocations made for a caller are charged to its memory cgroup.
 */
#define COLLX_MAX_COMMS_PER_FD	64
#define COLLX_MAX_MRS_PER_FD	4096
#define COLLX_MAX_OPS_PER_FD	4096
#define COLLX_MAX_GROUP		2048
#define COLLX_MAX_ENTRY_SIZE	4096
#define COLLX_MAX_TIMEOUT_MS	3600000U
/* How long past its timeout a failing COLLX_IOC_COMM_CREATE may take. */
#define COLLX_CREATE_SLACK_MS	2500U
#define COLLX_MAX_ADDR_SIZE	256
#define COLLX_MAX_BYTES		(1ULL << 40)

/* Every collective of enum collx_coll and the algorithms of COLLX_ALGO_*. */
#define COLLX_FEATURE_COLLECTIVES	(1ULL << 0)
/* COLLX_IOC_SUBMIT_GROUP. */
#define COLLX_FEATURE_GROUP		(1ULL << 1)
/* Connections authenticated with &collx_comm_create.secret. */
#define COLLX_FEATURE_AUTH		(1ULL << 2)
/* &collx_comm_create.tos. */
#define COLLX_FEATURE_TOS		(1ULL << 3)
/* COLLX_FP8_E4M3 and COLLX_FP8_E5M2. */
#define COLLX_FEATURE_FP8		(1ULL << 4)
/* COLLX_MR_F_DMABUF registrations. */
#define COLLX_FEATURE_DMABUF		(1ULL << 5)

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
 * @timeout_ms: bound on connecting and on every collective's progress,
 *	at most COLLX_MAX_TIMEOUT_MS; 0 means the module's
 *	``comm_timeout_ms`` parameter (30 s)
 * @comm_id: out, the communicator's handle on this fd
 * @failed_rank: out, on failure the rank that could not be reached or
 *	refused, else COLLX_RANK_NONE
 * @secret: (ABI 1.1) the same random bytes on every rank, shared through
 *	the job's own bootstrap and known to nobody else.  Connections of the
 *	communicator prove knowledge of it to each other (HMAC-SHA256 over
 *	both sides' fresh nonces) before any memory is exposed, and it never
 *	travels on the fabric; the kernel never prints it.  All zero (an ABI
 *	1.0 caller) leaves only @comm_key and the peers' addresses to tell
 *	this communicator's connections apart: do not use that on a shared
 *	fabric.
 * @tos: (ABI 1.1) IP type of service (DSCP << 2) of the communicator's
 *	RoCE packets, as rdma_set_service_type() takes it (NCCL_IB_TC); 0
 *	keeps the device's default.  Every rank must pass the same value.
 * @global_id: (ABI 1.1) out, the module-wide id of the communicator, as
 *	debugfs (/sys/kernel/debug/collx/<global_id>), the collx:*
 *	tracepoints and collx-netmon name it
 *
 * Joins the communicator: connects this rank to the peers its algorithms
 * use first (ring neighbours, recursive-doubling partners, tree parent
 * and children; any other peer is connected when a collective first needs
 * it, under the same timeout) and returns when they are up, or fails.  The
 * connections are made from the caller's network namespace, to the
 * module's listener in the peer's.  Only a connection from the address
 * the table gives for its rank, proving @secret, is accepted; every
 * refusal looks the same to the connecting side.  Errors beyond the
 * general ones: ETIMEDOUT (a peer did not answer, or refused, within
 * @timeout_ms; @failed_rank names it), EHOSTUNREACH (no route to a peer's
 * address), ENODEV (no RDMA device serves the route), EXDEV (peers reached
 * through different RDMA devices), EACCES (a peer failed to prove
 * @secret), EEXIST (this rank of this communicator, of more than one rank,
 * already exists on this node: @comm_key tells connections apart, and a
 * communicator of one rank makes none, so its key may be in use), EMFILE
 * (COLLX_MAX_COMMS_PER_FD), ERESTARTSYS/EINTR (a signal).
 *
 * @timeout_ms counts from the call: a create that cannot connect fails
 * within it, plus at most COLLX_CREATE_SLACK_MS to hang up (peers it did
 * connect to are told why, and their acknowledgment is awaited up to
 * 2 s, so that they name the missing rank too).
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
	__u8 secret[32];
	__u32 tos;
	__u32 global_id;
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

/* struct collx_mr_reg flags: the memory is a dma-buf (ABI 1.1). */
#define COLLX_MR_F_DMABUF	(1U << 0)

/**
 * struct collx_mr_reg - COLLX_IOC_MR_REG
 * @size: sizeof(struct collx_mr_reg)
 * @flags: 0, or COLLX_MR_F_DMABUF
 * @addr: start of the user buffer.  With COLLX_MR_F_DMABUF, the address
 *	collectives use for the first registered byte of the dma-buf (any
 *	value, e.g. the device pointer of GPU memory: as the iova of
 *	ibv_reg_dmabuf_mr()); a collective's buffer lies in the registration
 *	when its address range does
 * @length: its length in bytes, non-zero
 * @mr_id: out, the registration's handle on this fd
 * @__reserved: must be 0
 * @dmabuf_fd: (ABI 1.1) with COLLX_MR_F_DMABUF, the dma-buf's fd; the
 *	registration holds its own reference, so the fd may be closed
 * @__reserved2: must be 0
 * @dmabuf_offset: (ABI 1.1) with COLLX_MR_F_DMABUF, offset in the dma-buf
 *	of the first registered byte
 *
 * dma-buf errors: EBADF (@dmabuf_fd is not an open fd), EINVAL (not a
 * dma-buf, or the range lies outside it), EOPNOTSUPP (the exporter or the
 * RDMA device cannot do it), ENOMEM.  When the exporter moves or revokes
 * the buffer, collectives in flight on it fail with EFAULT and so does
 * every later one on it: deregister and register again.
 *
 * Pins the buffer's pages for as long as the registration lives (they
 * count against RLIMIT_MEMLOCK unless the caller has CAP_IPC_LOCK), so
 * collectives on buffers inside it run without bouncing: the NIC reads
 * the output directly, and the ring predecessor writes all-gather data
 * straight into it through fast registrations made per collective and
 * invalidated before the collective completes.  A registration belongs
 * to the address space (mm) that made it: a collective submitted from
 * another process (a forked child, an fd passed over a socket) does not
 * find it and bounces its own pages instead.  Errors: ENOMEM (over
 * RLIMIT_MEMLOCK, or out of memory), EFAULT (not mapped writable), EMFILE
 * (COLLX_MAX_MRS_PER_FD).
 */
struct collx_mr_reg {
	__u32 size;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_id;
	__u32 __reserved;
	__s32 dmabuf_fd;
	__u32 __reserved2;
	__aligned_u64 dmabuf_offset;
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
 * briefly after a collective on it failed, until its communicator's
 * connections are drained (the NIC may touch the pages until then; a
 * failed communicator drains them at once, so try again);
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
 *	send buffers; @count elements in each buffer
 * @COLLX_COLL_BROADCAST: @count elements of the root's @sendbuf end in
 *	every rank's @recvbuf (the root's too; @sendbuf is ignored elsewhere
 *	and may be 0)
 * @COLLX_COLL_REDUCE: the reduction of every rank's @count elements ends
 *	in the root's @recvbuf (ignored elsewhere, may be 0)
 * @COLLX_COLL_ALLGATHER: @count elements from each rank; @recvbuf holds
 *	nranks * @count, rank i's at i * @count.  In place when @sendbuf is
 *	@recvbuf + rank * @count elements
 * @COLLX_COLL_REDUCE_SCATTER: @sendbuf holds nranks * @count; rank i ends
 *	with the reduction of every rank's part i in its @recvbuf of @count.
 *	In place when @recvbuf is @sendbuf + rank * @count elements
 * @COLLX_COLL_ALLTOALL: @sendbuf and @recvbuf hold nranks * @count; part j
 *	of rank i's @sendbuf ends in part i of rank j's @recvbuf.  The two
 *	buffers must not overlap
 * @COLLX_COLL_BARRIER: no rank's op completes before every rank has
 *	submitted it; @count, @sendbuf and @recvbuf must be 0
 * @COLLX_COLL_SEND: @count elements of @sendbuf to rank @root (the peer),
 *	matched with that rank's COLLX_COLL_RECV from this rank, in order
 * @COLLX_COLL_RECV: @count elements from rank @root into @recvbuf
 * @COLLX_COLL_COUNT: number of collectives; not a collective
 *
 * Count, root and buffers mean what they mean in NCCL (ncclAllGather's
 * sendcount, ncclReduceScatter's recvcount, ncclAllToAll's count per
 * peer).  Send and recv between two ranks that each do both must be
 * submitted in one COLLX_IOC_SUBMIT_GROUP, or they may wait for each other.
 */
enum collx_coll {
	COLLX_COLL_ALLREDUCE = 0,
	COLLX_COLL_BROADCAST = 1,
	COLLX_COLL_REDUCE = 2,
	COLLX_COLL_ALLGATHER = 3,
	COLLX_COLL_REDUCE_SCATTER = 4,
	COLLX_COLL_ALLTOALL = 5,
	COLLX_COLL_BARRIER = 6,
	COLLX_COLL_SEND = 7,
	COLLX_COLL_RECV = 8,
	COLLX_COLL_COUNT,
};

/**
 * enum collx_algo - how a collective moves (&collx_submit.flags, bits
 *	COLLX_SUBMIT_ALGO_MASK; &collx_completion.algo says which one ran)
 * @COLLX_ALGO_AUTO: the module chooses by collective, size and rank count
 *	(Documentation/engine.md gives the thresholds)
 * @COLLX_ALGO_RING: ring: every collective but send and recv (a barrier
 *	passes a token around it; alltoall is the shifted ring)
 * @COLLX_ALGO_TREE: double binary tree: allreduce, reduce, broadcast
 * @COLLX_ALGO_RD: recursive doubling, or halving-doubling where the data
 *	is cut: allreduce, allgather, reduce-scatter, barrier
 * @COLLX_ALGO_PAIRWISE: pairwise exchange: alltoall
 * @COLLX_ALGO_P2P: a single transfer: send and recv (and what any
 *	collective of one rank becomes: a local copy)
 * @COLLX_ALGO_COUNT: number of algorithms; not an algorithm
 *
 * Forcing an algorithm that cannot run the collective fails the submit
 * with EOPNOTSUPP, whatever the communicator's rank count, before the
 * collective's root, count and buffers are checked (COLLX_ALGO_P2P forced
 * runs only send and recv).  On one rank, a collective the forced
 * algorithm can run is still a local copy, and &collx_completion.algo
 * says COLLX_ALGO_P2P.
 */
enum collx_algo {
	COLLX_ALGO_AUTO = 0,
	COLLX_ALGO_RING = 1,
	COLLX_ALGO_TREE = 2,
	COLLX_ALGO_RD = 3,
	COLLX_ALGO_PAIRWISE = 4,
	COLLX_ALGO_P2P = 5,
	COLLX_ALGO_COUNT,
};

/* &collx_submit.flags: the algorithm to use, enum collx_algo. */
#define COLLX_SUBMIT_ALGO_MASK	0xfU

/**
 * enum collx_phase - where a collective was when it ended
 * @COLLX_PHASE_NONE: not started, or finished
 * @COLLX_PHASE_CONNECT: connecting the communicator, or a peer the
 *	collective needed
 * @COLLX_PHASE_REDUCE_SCATTER: ring (or halving) reduce-scatter
 * @COLLX_PHASE_ALLGATHER: ring (or doubling) all-gather
 * @COLLX_PHASE_REDUCE: data flowing up a tree towards the root
 * @COLLX_PHASE_BROADCAST: data flowing down a tree, or along a ring, from
 *	the root
 * @COLLX_PHASE_EXCHANGE: recursive doubling: exchanging with the partner
 *	of a step, or folding the ranks beyond a power of two in and out
 * @COLLX_PHASE_ALLTOALL: pairwise exchange
 * @COLLX_PHASE_P2P: a send or recv
 * @COLLX_PHASE_COUNT: number of phases; not a phase
 *
 * With &collx_completion.step (the step of that phase, 0-based) and
 * &collx_completion.failed_rank it says what a failed collective waited
 * for.
 */
enum collx_phase {
	COLLX_PHASE_NONE = 0,
	COLLX_PHASE_CONNECT = 1,
	COLLX_PHASE_REDUCE_SCATTER = 2,
	COLLX_PHASE_ALLGATHER = 3,
	COLLX_PHASE_REDUCE = 4,
	COLLX_PHASE_BROADCAST = 5,
	COLLX_PHASE_EXCHANGE = 6,
	COLLX_PHASE_ALLTOALL = 7,
	COLLX_PHASE_P2P = 8,
	COLLX_PHASE_COUNT,
};

/**
 * struct collx_submit - COLLX_IOC_SUBMIT
 * @size: sizeof(struct collx_submit)
 * @flags: the algorithm (COLLX_SUBMIT_ALGO_MASK, enum collx_algo); other
 *	bits must be 0
 * @comm_id: the communicator
 * @coll: enum collx_coll
 * @dtype: enum collx_dtype (the element type of every collective; any
 *	valid type for a barrier)
 * @redop: enum collx_redop; only allreduce, reduce and reduce-scatter
 *	read it, the others require it to be a valid value (0)
 * @root: the root rank of broadcast and reduce, the peer of send and
 *	recv, below nranks; must be 0 for the others
 * @__reserved: must be 0
 * @count: elements, as enum collx_coll says per collective; 0 is a valid
 *	collective that moves nothing (0 for a barrier)
 * @sendbuf: user pointer to the input
 * @recvbuf: user pointer to the output
 * @op_id: out, the collective's id, unique on this fd
 *
 * Queues a collective and returns at once.  Every rank of the
 * communicator must submit the same collectives in the same order (send
 * and recv: the two ranks involved, in matching order).  The collective
 * completes through read()/poll() or COLLX_IOC_WAIT.  Buffers inside a
 * registration are used in place, zero copy; others are bounced (their
 * pages are pinned, against RLIMIT_MEMLOCK, for the collective's lifetime
 * and data moves through the connection's staging slots).  Errors: ENOENT
 * (no such communicator), EPIPE (the communicator is in its error state:
 * destroy it), EOPNOTSUPP (a flag, coll, dtype, redop or algorithm
 * unknown, or the forced algorithm cannot run the collective, on any
 * number of ranks), EINVAL (root out of range, a send or recv naming
 * this rank - libcollx turns a matched pair in a group into a copy - a
 * buffer missing or overlapping where it must not, or one beyond the
 * user address space that no dma-buf registration holds), EFAULT (a
 * buffer is not mapped as needed, a dma-buf registration's buffer is
 * revoked or its exporter refuses CPU access, or @op_id cannot be
 * written: checked first, and nothing is queued), ENOMEM (RLIMIT_MEMLOCK
 * for bounced pages, or no kernel memory for the scratch a reduction's
 * schedule may need, up to the size of its input), EAGAIN
 * (COLLX_MAX_OPS_PER_FD), ERESTARTSYS/EINTR (a signal while the pending
 * device work on a dma-buf buffer was waited for: nothing is queued).
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
 *	communicator was destroyed), -EPROTO (a peer sent what this
 *	collective did not expect: ranks submitted different collectives),
 *	-EFAULT (a dma-buf was moved or revoked under it)
 * @failed_rank: the peer that timed out or failed, else COLLX_RANK_NONE
 * @phase: enum collx_phase the collective was in when it ended
 * @step: step within @phase (0-based) when it ended
 * @algo: (ABI 1.1) enum collx_algo that ran (0 with ABI 1.0 modules)
 * @bytes: bytes of this rank's output buffer (for send: of its input);
 *	0 where this rank writes none (a reduce's non-root, a barrier)
 * @start_ns: CLOCK_MONOTONIC time the collective started moving data
 * @end_ns: CLOCK_MONOTONIC time it ended
 * @mem: (ABI 1.1) COLLX_MEM_* bits: the memory paths this rank's data took
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
	__u32 algo;
	__aligned_u64 bytes;
	__aligned_u64 start_ns;
	__aligned_u64 end_ns;
	__u32 mem;
	__u32 __reserved2;
};

/* &collx_completion.mem: some data was copied through staging slots. */
#define COLLX_MEM_STAGED	(1U << 0)
/* ... was gathered by the NIC straight from a registered buffer. */
#define COLLX_MEM_ZERO_COPY	(1U << 1)
/* ... was written by a peer straight into a registered output. */
#define COLLX_MEM_PLACED	(1U << 2)
/* ... lay in a dma-buf registration. */
#define COLLX_MEM_DMABUF	(1U << 3)
/* ... was bounced: pinned for this collective only. */
#define COLLX_MEM_BOUNCED	(1U << 4)

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
 * read), ERESTARTSYS/EINTR (a signal), EFAULT (the struct cannot be
 * written; checked before anything else, so a record is never consumed
 * that cannot be returned: it stays queued for read()).
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

/**
 * struct collx_submit_group - COLLX_IOC_SUBMIT_GROUP (ABI 1.1)
 * @size: sizeof(struct collx_submit_group)
 * @flags: must be 0
 * @count: entries, 1..COLLX_MAX_GROUP
 * @entry_size: sizeof(struct collx_submit) as the caller knows it (the
 *	size-first rules apply to each entry, and each entry's own @size
 *	must equal it), at most COLLX_MAX_ENTRY_SIZE
 * @entries: user pointer to @count struct collx_submit, all on one
 *	communicator; each one's op_id is filled in (EFAULT when they cannot
 *	be read, NULL included, or their op_ids cannot be written)
 * @error_index: out, on failure the entry that failed, else @count
 * @__reserved: must be 0
 *
 * Queues several collectives that start together, as NCCL's
 * ncclGroupStart()/ncclGroupEnd(): sends and recvs in one group never
 * wait for each other whatever their order, and many small collectives
 * cost one call.  All or nothing: when the call fails no entry was
 * queued.  Each entry completes with its own record.  Entries are
 * checked in order, each as COLLX_IOC_SUBMIT checks it (its errors
 * apply), and the first bad one fails the call; EINVAL also for an entry
 * whose size is not @entry_size or whose comm_id is not the first
 * entry's.  A struct whose @error_index cannot be written is EFAULT
 * before anything else.
 */
struct collx_submit_group {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 entry_size;
	__aligned_u64 entries;
	__u32 error_index;
	__u32 __reserved;
};

#define COLLX_IOC_SUBMIT_GROUP	_IO(COLLX_TYPE, COLLX_CMD_SUBMIT_GROUP)

/* &collx_comm_query.state */
#define COLLX_COMM_STATE_READY	0
#define COLLX_COMM_STATE_ERROR	1

/**
 * struct collx_comm_query - COLLX_IOC_COMM_QUERY (ABI 1.1)
 * @size: sizeof(struct collx_comm_query)
 * @flags: must be 0
 * @comm_id: the communicator
 * @state: out, COLLX_COMM_STATE_READY or COLLX_COMM_STATE_ERROR
 * @error: out, in the error state the negative errno that failed it
 *	(what its ops completed with), else 0
 * @failed_rank: out, the rank that failure names, else COLLX_RANK_NONE
 * @phase: out, enum collx_phase of the failure
 * @step: out, and its step
 * @global_id: out, the module-wide id (as &collx_comm_create.global_id)
 * @ops_queued: out, ops submitted and not yet complete: waiting behind
 *	others or running (an op leaves the count just after its record
 *	is queued, under the engine's lock: a query racing a completion may
 *	still count that op)
 *
 * Never blocks: what NCCL's ncclCommGetAsyncError() tells, and after an
 * EPIPE from SUBMIT the reason and the rank to blame.  ENOENT: no such
 * communicator.  The highest ioctl number: the next one is ENOTTY.
 */
struct collx_comm_query {
	__u32 size;
	__u32 flags;
	__u32 comm_id;
	__u32 state;
	__s32 error;
	__u32 failed_rank;
	__u32 phase;
	__u32 step;
	__u32 global_id;
	__u32 ops_queued;
};

#define COLLX_IOC_COMM_QUERY	_IO(COLLX_TYPE, COLLX_CMD_COMM_QUERY)

#endif /* _UAPI_LINUX_COLLX_H */
