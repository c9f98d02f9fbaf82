/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: the module's objects and how they hang together.
 *
 *   collx_file (one per open fd): three tables, one object model
 *     ├─ comms  (comm_id → collx_comm)
 *     ├─ mrs    (mr_id → collx_mr: pinned pages or a dma-buf)
 *     └─ ops    (op_id → collx_op, until its completion record is read)
 *   An id is reserved first (XA_ZERO_ENTRY: lookups do not see it), the
 *   object is built, and only then published; every table entry holds a
 *   reference of its own (iommufd's pattern).
 *
 *   collx_comm ── peers[rank]: collx_peer, made when first needed
 *              ── queue of collx_group (ops that start together), the
 *                 running one executed by engine.c from its schedules
 *   collx_peer ── one RC connection to one rank, used both ways: its own
 *                 PD, QP, CQ, staging for each direction (rx: the peer
 *                 writes into it; tx: we copy into it), control buffers,
 *                 and FRWR MRs through which the peer writes straight
 *                 into our outputs (DEST windows)
 *   collx_op   ── its buffers (IN, OUT, TMP), its schedule (core/coll.h)
 *                 and the executor's state of each transfer
 */
#ifndef COLLX_OBJ_H
#define COLLX_OBJ_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/collx.h>

#include "collx_param.h"
#include "core/coll.h"

struct collx_comm;
struct collx_peer;
struct dma_buf;
struct collx_dmabuf;
struct collx_debugfs_file;

/**
 * struct collx_dev_user - something that must let go of a device first
 * @entry: entry in the device's users
 * @removed: called when the device goes away, in process context, before
 *	ib_client remove returns; must release everything it made on it
 * @get: take a reference on the user (called with the device lock held,
 *	while the user is still bound)
 * @put: drop it
 */
struct collx_dev_user {
	struct list_head entry;
	void (*removed)(struct collx_dev_user *user);
	void (*get)(struct collx_dev_user *user);
	void (*put)(struct collx_dev_user *user);
};

/**
 * struct collx_dev - an RDMA device collx serves
 * @ibdev: the device
 * @list: entry in the module's device list
 * @users: struct collx_dev_user bound to it
 * @removed: set once the device is going away; no new user may bind
 */
struct collx_dev {
	struct ib_device *ibdev;
	struct list_head list;
	struct list_head users;
	bool removed;
};

/**
 * struct collx_staging - one direction's staging area of a connection
 * @pages: its pages
 * @npages: how many
 * @kva: contiguous kernel mapping of @pages
 * @sgt: @pages as a DMA-mapped scatterlist
 * @mr: fast-registration MR over @sgt (iova in @mr->iova)
 * @bytes: size in bytes
 */
struct collx_staging {
	struct page **pages;
	unsigned int npages;
	void *kva;
	struct sg_table sgt;
	struct ib_mr *mr;
	size_t bytes;
};

/**
 * enum collx_peer_state - one connection's life
 * @COLLX_PEER_IDLE: nothing yet (the passive side waits for a request)
 * @COLLX_PEER_CONNECTING: address/route resolution or the CM handshake
 * @COLLX_PEER_HANDSHAKE: RC connected; proofs and READY not yet exchanged
 * @COLLX_PEER_READY: data may flow
 * @COLLX_PEER_FAILED: connection lost or never made
 */
enum collx_peer_state {
	COLLX_PEER_IDLE,
	COLLX_PEER_CONNECTING,
	COLLX_PEER_HANDSHAKE,
	COLLX_PEER_READY,
	COLLX_PEER_FAILED,
};

/**
 * struct collx_recv - one posted receive and its control buffer
 * @cqe: completion entry
 * @peer: owning connection
 * @idx: index in the peer's control area
 */
struct collx_recv {
	struct ib_cqe cqe;
	struct collx_peer *peer;
	u32 idx;
};

/**
 * struct collx_arrival - a chunk the peer wrote, not yet consumed
 * @imm: its immediate data
 * @bytes: its length
 */
struct collx_arrival {
	u32 imm;
	u32 bytes;
};

/**
 * struct collx_remote_dest - a window of the peer's output it offered us
 * @seq: the peer's receive sequence of the group it belongs to
 * @ordinal: which of that group's receive transfers from us it is for
 * @iova: address of the transfer's first byte in the registration
 * @rkey: the registration's key
 * @bytes: the window's length
 * @valid: this entry holds a window
 */
struct collx_remote_dest {
	u64 seq;
	u32 ordinal;
	u64 iova;
	u32 rkey;
	u64 bytes;
	bool valid;
};

/**
 * enum collx_dest_state - one of our DEST MRs
 * @COLLX_DEST_FREE: unused
 * @COLLX_DEST_POSTED: registered, offered to the peer
 * @COLLX_DEST_INVALIDATING: LOCAL_INV posted, not yet complete
 */
enum collx_dest_state {
	COLLX_DEST_FREE,
	COLLX_DEST_POSTED,
	COLLX_DEST_INVALIDATING,
};

/**
 * struct collx_dest_mr - an FRWR MR over part of one of our outputs
 * @mr: the MR
 * @state: enum collx_dest_state
 * @cookie: the engine's name for the transfer it serves
 * @failed: its invalidation did not complete successfully
 */
struct collx_dest_mr {
	struct ib_mr *mr;
	u32 state;
	u64 cookie;
	bool failed;
};

/**
 * struct collx_peer_ops - how a connection reports upward
 * @kick: something the owner may be waiting for happened (data, credits,
 *	completions, a state change); any context
 * @bind: the connection resolved to @ibdev; the owner checks it is the
 *	device of all its connections (0, -ENODEV, -EXDEV); process context
 * @asked: the peer asks whom we wait for (answer with collx_peer_tell());
 *	any context
 */
struct collx_peer_ops {
	void (*kick)(struct collx_peer *peer);
	int (*bind)(struct collx_peer *peer, struct ib_device *ibdev);
	void (*asked)(struct collx_peer *peer);
};

/**
 * struct collx_blame - why something failed, and whom it names
 * @err: negative errno
 * @rank: the rank blamed, or COLLX_RANK_NONE
 * @phase: enum collx_phase
 * @step: step within @phase
 */
struct collx_blame {
	int err;
	u32 rank;
	u32 phase;
	u32 step;
};

/**
 * struct collx_tell - a TELL: whom a peer's running group waits for
 * @rank: that rank, or COLLX_RANK_NONE
 * @kind: 0 credits, 1 data, 2 connection, 3 acks; -1 nothing
 * @phase: enum collx_phase of the transfer waiting
 * @step: its step
 * @idle_ms: how long the group has made no progress (0: none runs)
 * @written: the teller's data writes to the asker that completed, ever
 * @arrived: the asker's data writes that arrived at the teller, ever
 */
struct collx_tell {
	u32 rank;
	int kind;
	u32 phase;
	u32 step;
	u32 idle_ms;
	u64 written;
	u64 arrived;
};

/**
 * struct collx_conn_params - what every connection of a comm shares
 * @net: network namespace the connections are made from
 * @log_id: the comm's module-wide id, for log lines
 * @rank: this rank
 * @nranks: ranks in the comm
 * @lookup: the id incoming requests name the comm by
 * @secret: the comm's secret (HMAC key of the proofs)
 * @shash: HMAC-SHA256 keyed with @secret
 * @addrs: every rank's address
 * @tos: type of service of outgoing connections (0: default)
 * @timeout_ms: the comm's timeout
 * @memlock_mm: the mm that pays for staging (RLIMIT_MEMLOCK)
 * @memlock_limit: its limit in pages when the comm was made (ULONG_MAX
 *	with CAP_IPC_LOCK)
 */
struct collx_conn_params {
	struct net *net;
	u32 log_id;
	u32 rank;
	u32 nranks;
	u64 lookup;
	u8 secret[32];
	struct crypto_shash *shash;
	struct sockaddr_storage *addrs;
	u8 tos;
	u32 timeout_ms;
	struct mm_struct *memlock_mm;
	unsigned long memlock_limit;
};

/**
 * struct collx_peer - an RC connection to one rank, used both ways
 * @ops: upward calls, supplied by the owner
 * @owner: the owner's cookie (its comm)
 * @params: the owner's connection parameters (outlive the peer)
 * @rank: the remote rank
 * @active: we connect (our rank is the lower), else we accept
 * @cm_id: rdma_cm id, NULL when none
 * @ibdev: the device of @cm_id
 * @pd: this connection's own protection domain
 * @qp: the RC QP
 * @cq: CQ from the device's pool
 * @cq_size: CQ entries asked of the pool
 * @state: enum collx_peer_state, under @lock
 * @err: first error on the connection (negative errno), under @lock
 * @since: jiffies of the last state change (stale handshakes)
 * @rx: the staging area the peer writes into
 * @tx: the staging area chunks are copied into before we write them
 * @ctrl: control buffers, DMA-mapped: receives first, then one send
 *	buffer per kind (READY, ABORT, ASK, TELL) and one per DEST MR
 * @ctrl_dma: DMA address of @ctrl
 * @ctrl_bytes: size of @ctrl
 * @recvs: receive contexts, @nrecv of them
 * @nrecv: receives kept posted
 * @send_cqe: completion of control sends and registrations
 * @abort_cqe: completion of the ABORT send
 * @ask_cqe: completion of the ASK send
 * @tell_cqe: completion of the TELL send
 * @write_cqe: completion of data writes
 * @inv_cqe: completion of DEST invalidations
 * @abort_done: the ABORT send completed (or flushed)
 * @max_sge: gather entries a data write may have
 * @dmrs: our DEST MRs (the peer writes into our outputs through them)
 * @ndmrs: how many were allocated (0: no direct placement)
 * @dmr_pages: pages each of @dmrs can map
 * @inv_order: which of @dmrs each posted invalidation is for, in order
 * @inv_posted: invalidations posted, ever
 * @inv_done: invalidations completed, ever
 * @rdest: windows the peer offered us, by the peer's DEST MR
 * @remote_iova: the peer's rx staging address
 * @remote_rkey: and its key
 * @credits: the peer's rx slots we may write into
 * @credit_msgs: credit messages received, ever (is the peer alive?)
 * @tx_posted: data writes posted, ever
 * @tx_done: data writes completed successfully, ever
 * @tx_errs: data writes that completed in error
 * @tx_cookies: the engine's cookie of each write in flight, by
 *	@tx_posted modulo 2 * nslots
 * @tx_reaped: completions the engine has taken (collx_peer_take_write())
 * @rx_arrivals: chunks that arrived, not yet consumed
 * @arr_head: next arrival to consume
 * @arr_tail: next free place in @rx_arrivals
 * @rx_consumed: chunks consumed, ever
 * @credits_owed: consumed chunks whose credit is not yet returned
 * @rq_flushed: a receive completed in error: every earlier arrival has
 *	been seen, none will follow
 * @abort: what the peer's ABORT said (valid when @aborted)
 * @abort_arrived: how many of our data writes the ABORT says arrived:
 *	those are delivered, whatever their completions say
 * @aborted: the peer sent an ABORT
 * @ask_busy: our ASK's send buffer is in flight
 * @awaiting: we asked; no TELL yet
 * @told: a TELL answered our ASK (in @tell)
 * @tell: what it said
 * @tell_busy: our TELL's send buffer is in flight
 * @asked: the peer's ASK is not yet answered
 * @tx_seq: groups that sent to this peer
 * @rx_seq: groups that received from this peer
 * @nonce: our handshake nonce
 * @peer_nonce: the peer's
 * @ever_ready: it has been READY once (a failure after that is final)
 * @established: RC connected (and, active side, the peer's proof checked)
 * @remote_ready: the peer's READY arrived (and, passive side, its proof
 *	checked)
 * @retry_work: (active) reconnect after a refusal; (passive) drop a stale
 *	handshake
 * @attempts: connection attempts made
 * @stalls: (active) attempts the handshake watchdog dropped
 * @attempt_end: (active) jiffies when this attempt's watchdog fires (0: none)
 * @deadline: jiffies by which connecting gives up
 * @lock: protects what CQ and CM handlers update
 * @mutex: serialises the rdma_cm handlers with setup and release
 * @closing: the connection is being released; handlers leave it alone
 * @draining: its QP is being drained; flushed completions are expected
 * @drained: its QP is drained (collx_peer_drain()): nothing is posted
 * @ctrl_mapped: @ctrl_dma is a live mapping
 * @charged: staging pages charged to @params->memlock_mm
 */
struct collx_peer {
	const struct collx_peer_ops *ops;
	void *owner;
	const struct collx_conn_params *params;
	u32 rank;
	bool active;
	struct rdma_cm_id *cm_id;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_qp *qp;
	struct ib_cq *cq;
	unsigned int cq_size;
	enum collx_peer_state state;
	int err;
	unsigned long since;
	struct collx_staging rx;
	struct collx_staging tx;
	void *ctrl;
	u64 ctrl_dma;
	size_t ctrl_bytes;
	struct collx_recv *recvs;
	u32 nrecv;
	struct ib_cqe send_cqe;
	struct ib_cqe abort_cqe;
	struct ib_cqe ask_cqe;
	struct ib_cqe tell_cqe;
	struct ib_cqe write_cqe;
	struct ib_cqe inv_cqe;
	struct completion abort_done;
	u32 max_sge;
	struct collx_dest_mr dmrs[COLLX_DEST_MRS];
	u32 ndmrs;
	u32 dmr_pages;
	u8 inv_order[COLLX_DEST_MRS];
	u64 inv_posted;
	u64 inv_done;
	struct collx_remote_dest rdest[COLLX_DEST_MRS];
	u64 remote_iova;
	u32 remote_rkey;
	u32 credits;
	u64 credit_msgs;
	u64 tx_posted;
	u64 tx_done;
	u64 tx_errs;
	u64 *tx_cookies;
	u64 tx_reaped;
	struct collx_arrival *rx_arrivals;
	u32 arr_head;
	u32 arr_tail;
	u64 rx_consumed;
	u32 credits_owed;
	bool rq_flushed;
	struct collx_blame abort;
	u64 abort_arrived;
	bool aborted;
	bool ask_busy;
	bool awaiting;
	bool told;
	struct collx_tell tell;
	bool tell_busy;
	bool asked;
	u64 tx_seq;
	u64 rx_seq;
	u8 nonce[16];
	u8 peer_nonce[16];
	bool ever_ready;
	bool established;
	bool remote_ready;
	struct delayed_work retry_work;
	u32 attempts;
	u32 stalls;
	unsigned long attempt_end;
	unsigned long deadline;
	spinlock_t lock; /* see above */
	struct mutex mutex; /* see above */
	bool closing;
	bool draining;
	bool drained;
	bool ctrl_mapped;
	unsigned long charged;
};

/**
 * enum collx_comm_state - a communicator's life
 * @COLLX_COMM_CONNECTING: COLLX_IOC_COMM_CREATE in progress
 * @COLLX_COMM_READY: collectives may run
 * @COLLX_COMM_ERROR: failed; every op completes with @err, new ones are
 *	refused with EPIPE
 * @COLLX_COMM_DEAD: RDMA resources released
 */
enum collx_comm_state {
	COLLX_COMM_CONNECTING,
	COLLX_COMM_READY,
	COLLX_COMM_ERROR,
	COLLX_COMM_DEAD,
};

/**
 * struct collx_cm_entry - a comm as the rdma_cm layer sees it
 * @list: entry in cm.c's registry
 * @params: the comm's connection parameters (net, lookup, ranks)
 * @accept: an authenticated-so-far request from @rank arrived: return the
 *	peer to set it up on (created if need be), with a reference on the
 *	owner taken, or NULL to refuse
 * @put: drop the reference @accept took
 */
struct collx_cm_entry {
	struct list_head list;
	const struct collx_conn_params *params;
	struct collx_peer *(*accept)(struct collx_cm_entry *e, u32 rank);
	void (*put)(struct collx_cm_entry *e);
};

/**
 * struct collx_comm - a communicator
 * @ref: lifetime; the fd's table entry holds one
 * @id: module-wide id (debugfs, tracepoints, log lines)
 * @handle: the fd's handle (comm_id in the uapi)
 * @cf: the file that owns it
 * @params: what its connections share
 * @peers: connection per rank, NULL until first needed (@nranks entries);
 *	entries are made under @peers_lock and never change afterwards
 * @peers_lock: serialises making peers and binding the device
 * @closing: no more peers may be made (teardown)
 * @listening: holds a reference on its namespace's listener
 * @dev: the RDMA device its connections use; NULL until the first one
 * @dev_user: its registration with @dev
 * @cm: its entry in cm.c's registry (incoming connections)
 * @state: enum collx_comm_state, under @elock
 * @err: the error that failed the comm, under @elock
 * @failed_rank: the rank blamed for @err, under @elock
 * @failed_phase: the phase it was blamed in, under @elock
 * @failed_step: and the step, under @elock
 * @elock: protects the failure state
 * @connected: woken whenever a connection changes state
 * @lock: serialises the engine: @queue, @run, progress
 * @teardown_lock: serialises releasing the RDMA resources
 * @queue: groups submitted, not yet started, in order
 * @npending: ops submitted and not yet complete, started or not (what
 *	COMM_QUERY reports as ops_queued), under @lock
 * @run: the running group, or NULL
 * @groups: groups started on this comm
 * @work: runs the engine
 * @timeout_work: fails the running group when it stops progressing
 * @progress_jiffies: when the running group last made progress
 * @ask_rank: the peer asked whom it waits for in this stall, or
 *	COLLX_RANK_NONE
 * @ask_stall: @progress_jiffies when it was asked (progress since makes
 *	the question stale)
 * @ask_jiffies: when it was asked
 * @asked: a peer's ASK waits for our answer
 * @held: failed ops whose buffers the NIC may still touch; released once
 *	the connections are drained
 * @aborted: its failure was handled: ops completed, peers told
 * @debugfs: its debugfs folder
 */
struct collx_comm {
	struct kref ref;
	u32 id;
	u32 handle;
	struct collx_file *cf;
	struct collx_conn_params params;
	struct collx_peer **peers;
	struct mutex peers_lock; /* see above */
	bool closing;
	bool listening;
	struct collx_dev *dev;
	struct collx_dev_user dev_user;
	struct collx_cm_entry cm;
	enum collx_comm_state state;
	int err;
	u32 failed_rank;
	u32 failed_phase;
	u32 failed_step;
	spinlock_t elock; /* see above */
	wait_queue_head_t connected;
	struct mutex lock; /* see above */
	struct mutex teardown_lock; /* see above */
	struct list_head queue;
	u32 npending;
	struct collx_group *run;
	u64 groups;
	struct work_struct work;
	struct delayed_work timeout_work;
	unsigned long progress_jiffies;
	u32 ask_rank;
	unsigned long ask_stall;
	unsigned long ask_jiffies;
	bool asked;
	struct list_head held;
	bool aborted;
	struct collx_debugfs_file *debugfs;
};

/**
 * struct collx_mr - a registered buffer
 * @ref: lifetime: the fd's table entry and each op using it
 * @id: handle on the fd
 * @addr: the address collectives name its first byte by
 * @length: bytes
 * @mm: the address space it belongs to (collectives from another one do
 *	not find it)
 * @pages: pinned pages (FOLL_LONGTERM), or the dma-buf's pages (as the
 *	exporter's kernel mapping shows them)
 * @npages: how many
 * @kva: kernel mapping of its first byte
 * @map: the vmap() of @pages
 * @pinned: pages charged to @mm's pinned_vm
 * @dmabuf: the dma-buf, or NULL for host pages
 * @dmabuf_priv: the importer's state (dmabuf.c)
 * @dmabuf_off: offset of the first byte in the dma-buf
 * @revoked: the exporter moved or revoked the buffer; collectives on it
 *	fail with -EFAULT
 * @busy: ops in flight use it (deregistration returns EBUSY)
 */
struct collx_mr {
	struct kref ref;
	u32 id;
	u64 addr;
	u64 length;
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	void *kva;
	void *map;
	unsigned long pinned;
	struct dma_buf *dmabuf;
	struct collx_dmabuf *dmabuf_priv;
	u64 dmabuf_off;
	bool revoked;
	atomic_t busy;
};

/**
 * struct collx_dseg - one DMA segment of a mapped buffer
 * @off: offset of its first byte in the buffer
 * @addr: its DMA address
 */
struct collx_dseg {
	u64 off;
	dma_addr_t addr;
};

/**
 * struct collx_dmap - a buffer mapped for the NIC (zero copy)
 * @ibdev: the device it is mapped on; NULL when not mapped
 * @sgt: the buffer's pages, DMA-mapped on @ibdev
 * @segs: the DMA segments of @sgt, in buffer order
 * @nsegs: how many
 * @bytes: the buffer's length
 * @premapped: @sgt only describes DMA addresses mapped elsewhere (a
 *	dma-buf attachment's): nothing to unmap
 */
struct collx_dmap {
	struct ib_device *ibdev;
	struct sg_table sgt;
	struct collx_dseg *segs;
	unsigned int nsegs;
	u64 bytes;
	bool premapped;
};

/**
 * struct collx_buf - one buffer of an op as the engine sees it
 * @kva: kernel address of its first byte
 * @bytes: its length
 * @mr: the registration it lies in (a reference held), or NULL
 * @pages: (bounced) pages pinned for this op
 * @npages: (bounced) how many
 * @pinned: (bounced) pages charged to @mm's pinned_vm
 * @mm: (bounced) the mm charged
 * @map: (bounced, TMP) what to vunmap/kvfree
 * @dmap: its mapping for the NIC, when it lies in a registration
 * @op: the op it belongs to
 * @mr_entry: entry in a dma-buf registration's users
 * @write: the op writes it
 * @cpu_access: (dma-buf) dma_buf_begin_cpu_access() made, to be ended
 */
struct collx_buf {
	void *kva;
	u64 bytes;
	struct collx_mr *mr;
	struct page **pages;
	unsigned long npages;
	unsigned long pinned;
	struct mm_struct *mm;
	void *map;
	struct collx_dmap dmap;
	struct collx_op *op;
	struct list_head mr_entry;
	bool write;
	bool cpu_access;
};

/**
 * struct collx_xstate - the executor's state of one transfer
 * @nslices: slices of the transfer
 * @done: slices complete (they complete in order)
 * @posted: (SEND) slices posted
 * @ordinal: (SEND, RECV) its index among the group's transfers on its
 *	channel in its direction
 * @dmr: (RECV) index+1 of the DEST MR offered for it, 0 if none (or once
 *	its invalidation is confirmed)
 * @offered: (RECV) a DEST offer was tried
 */
struct collx_xstate {
	u32 nslices;
	u32 done;
	u32 posted;
	u32 ordinal;
	u32 dmr;
	bool offered;
};

/**
 * struct collx_op - one collective
 * @ref: lifetime: the fd's table entry, the comm's queue, each waiter
 * @id: op_id
 * @cf: the fd it completes to
 * @comm: its communicator (a reference held until it completes)
 * @entry: entry in its group, or in the comm's held list
 * @done_entry: entry in @cf's completed list
 * @coll: enum collx_coll
 * @dtype: enum collx_dtype
 * @redop: enum collx_redop
 * @root: root or peer
 * @algo: enum collx_algo chosen
 * @count: elements (enum collx_coll's meaning)
 * @esize: bytes per element
 * @buf: its buffers, by enum collx_buf_id
 * @sched: its schedule
 * @xs: the executor's state of each transfer of @sched
 * @slice: elements per slice
 * @sig: signature of what the op is, carried by each of its chunks
 * @left: transfers not yet complete
 * @mem: COLLX_MEM_* paths taken
 * @started: data movement began
 * @done: complete; @cmpl is final
 * @cmpl: the completion record
 */
struct collx_op {
	struct kref ref;
	u32 id;
	struct collx_file *cf;
	struct collx_comm *comm;
	struct list_head entry;
	struct list_head done_entry;
	u32 coll;
	u32 dtype;
	u32 redop;
	u32 root;
	u32 algo;
	u64 count;
	u32 esize;
	struct collx_buf buf[4];
	struct collx_sched sched;
	struct collx_xstate *xs;
	u64 slice;
	u32 sig;
	u32 left;
	u32 mem;
	bool started;
	bool done;
	struct collx_completion cmpl;
};

/**
 * struct collx_chan - the running group's traffic with one peer
 * @peer: the connection
 * @rank: its rank
 * @tx: (op index << 32 | transfer index) of the SENDs to it, in order
 * @ntx: how many
 * @tx_cur: the one being posted
 * @tx_unit: slices posted to it in this group (immediate data)
 * @rx: the RECVs from it, in order
 * @nrx: how many
 * @rx_cur: the one being consumed
 * @rx_unit: slices consumed from it in this group
 * @tx_seq: our send sequence on this channel for the group
 * @rx_seq: our receive sequence on this channel for the group
 * @credit_mark: the peer's credit messages when the group started
 */
struct collx_chan {
	struct collx_peer *peer;
	u32 rank;
	u64 *tx;
	u32 ntx;
	u32 tx_cur;
	u32 tx_unit;
	u64 *rx;
	u32 nrx;
	u32 rx_cur;
	u32 rx_unit;
	u64 tx_seq;
	u64 rx_seq;
	u64 credit_mark;
};

/**
 * struct collx_group - ops that start together (one, or a SUBMIT_GROUP)
 * @entry: entry in the comm's queue
 * @ops: the ops, in submission order
 * @nops: how many
 * @left: ops not yet complete
 * @chans: one per peer the group talks to
 * @nchans: how many
 * @chan_of: index+1 into @chans by rank (0: none), nranks entries
 * @seq: the comm's group sequence number
 * @started: its channels are set up and its data may move
 */
struct collx_group {
	struct list_head entry;
	struct collx_op **ops;
	u32 nops;
	u32 left;
	struct collx_chan *chans;
	u32 nchans;
	u32 *chan_of;
	u64 seq;
	bool started;
};

/**
 * struct collx_file - per-open state of /dev/collx
 * @comms: communicators by handle
 * @mrs: registrations by handle
 * @ops: collectives by id, until their completion is consumed
 * @ncomms: entries of @comms, reserved ones included
 * @nmrs: entries of @mrs
 * @nops: entries of @ops
 * @next_op: where the cyclic op id allocation continues
 * @done: completed ops whose record has not been read
 * @done_lock: protects @done
 * @wq: woken when an op completes
 */
struct collx_file {
	struct xarray comms;
	struct xarray mrs;
	struct xarray ops;
	atomic_t ncomms;
	atomic_t nmrs;
	atomic_t nops;
	u32 next_op;
	struct list_head done;
	spinlock_t done_lock; /* see above */
	wait_queue_head_t wq;
};

#endif /* COLLX_OBJ_H */
