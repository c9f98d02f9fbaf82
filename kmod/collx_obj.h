/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: the module's objects and how they hang together.
 *
 *   collx_file (one per open fd)
 *     ├─ comms   (xarray comm_id → collx_comm)
 *     ├─ mrs     (xarray mr_id → collx_mr: pinned, accounted user pages)
 *     └─ ops     (xarray op_id → collx_op, until its completion is read)
 *
 *   collx_comm ── next: collx_peer (we connected, we WRITE into its slots)
 *              └─ prev: collx_peer (it connected, it WRITEs into ours)
 *   collx_peer ── rdma_cm id, RC QP, CQ from the device's pool,
 *                 a staging area registered with FRWR, control buffers;
 *                 (prev) an FRWR MR re-registered over each op's output
 *   collx_op   ── its buffers; when they lie in a registration, a DMA
 *                 mapping of the output (struct collx_dmap): zero copy
 *   collx_dev  ── ib_device, PD; the comms on it
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

/**
 * struct collx_dev - an RDMA device collx serves
 * @ibdev: the device
 * @pd: protection domain of every QP and MR collx makes on it
 * @list: entry in the module's device list
 * @comms: communicators whose QPs live on this device
 * @ref: held by each communicator on the device
 * @removed: set once the device is going away; no new comm may use it
 */
struct collx_dev {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct list_head list;
	struct list_head comms;
	struct kref ref;
	bool removed;
};

/**
 * struct collx_staging - a buffer the NIC reads or writes, FRWR-registered
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
 * @COLLX_PEER_IDLE: nothing yet
 * @COLLX_PEER_CONNECTING: address/route resolution or CM handshake
 * @COLLX_PEER_HANDSHAKE: RC connected; staging descriptor not yet exchanged
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
 * struct collx_recv - one posted receive and its 64-byte control buffer
 * @cqe: completion entry
 * @peer: owning connection
 * @idx: index in the peer's control area
 */
struct collx_recv {
	struct ib_cqe cqe;
	struct collx_peer *peer;
	u32 idx;
};

#define COLLX_CTRL_SIZE		64
/* Gather entries of a zero-copy write: a 64 KiB slot over 4 KiB pages. */
#define COLLX_MAX_SGE		32
/*
 * The predecessor writes an output directly through up to
 * COLLX_DEST_WINDOWS fast registrations of up to COLLX_DEST_MAX_PAGES
 * pages each (fewer where the device allows fewer: rxe 512).  Windows
 * overlap by a slot, so every chunk lies wholly inside one.
 */
#define COLLX_DEST_MAX_PAGES	4096
#define COLLX_DEST_WINDOWS	32

/**
 * struct collx_arrival - a chunk written into our staging area
 * @imm: its immediate data
 * @bytes: its length
 */
struct collx_arrival {
	u32 imm;
	u32 bytes;
};

/**
 * enum collx_dest_state - the incoming side's output registration
 * @COLLX_DEST_FREE: not registered; may be mapped for the next op
 * @COLLX_DEST_POSTED: registration and DEST message posted
 * @COLLX_DEST_INVALIDATING: the op is over; invalidation posted
 *
 * Ops run one at a time per comm, and each op's end waits for the
 * invalidation: no peer can write into an output after its op completed.
 */
enum collx_dest_state {
	COLLX_DEST_FREE,
	COLLX_DEST_POSTED,
	COLLX_DEST_INVALIDATING,
};

/**
 * struct collx_dest_win - one window of the successor's output
 * @start: its first byte in the output
 * @len: its length in bytes (0: no DEST for it)
 * @iova: the address of @start in the registration
 * @rkey: the registration's key
 */
struct collx_dest_win {
	u64 start;
	u64 len;
	u64 iova;
	u32 rkey;
};

/**
 * struct collx_dest - where the successor lets us write an op's all-gather
 * @seq: the op's sequence number
 * @stride: bytes between window starts (window k starts at k * @stride);
 *	0 while no DEST arrived
 * @win: the windows, each registered on its own
 */
struct collx_dest {
	u64 seq;
	u64 stride;
	struct collx_dest_win win[COLLX_DEST_WINDOWS];
};

/**
 * struct collx_peer - an RC connection to a neighbour rank
 * @comm: owner
 * @rank: the remote rank
 * @outgoing: true if we connected (towards @comm's next rank)
 * @cm_id: rdma_cm id, NULL when none
 * @qp: the RC QP (@cm_id->qp)
 * @cq: CQ from the device's pool
 * @cq_size: CQ entries asked of the pool
 * @state: enum collx_peer_state
 * @err: first error on the connection (negative errno)
 * @staging: outgoing: where chunks are copied before they are written;
 *	incoming: where the neighbour writes them
 * @ctrl: control buffers (one per receive, READY's, one DEST per window),
 *	DMA-mapped
 * @ctrl_dma: DMA address of @ctrl
 * @recvs: receive contexts, @nrecv of them
 * @nrecv: receives kept posted
 * @send_cqe: completion entry of control sends and registrations
 * @write_cqe: completion entry of data writes
 * @inv_cqe: (incoming) completion entry of @dest_mrs' invalidations
 * @max_sge: gather entries a data write may have
 * @dest_mrs: (incoming) FRWR MRs, one per window of the running op's output
 * @ndest_mrs: (incoming) how many were allocated (0: no direct placement)
 * @dest_pages: (incoming) pages each of @dest_mrs can map
 * @dest_state: (incoming) enum collx_dest_state of @dest_mrs
 * @dest_posted: (incoming) windows registered for the running op
 * @inv_pending: (incoming) invalidations not yet completed
 * @dest: (outgoing) the successor's last DEST messages, by seq & 1
 * @remote_iova: (outgoing) the neighbour's staging address
 * @remote_rkey: (outgoing) and its key
 * @credits: (outgoing) staging slots the neighbour has free
 * @posted: (outgoing) data writes posted, ever
 * @write_done: (outgoing) data writes completed, ever
 * @write_errs: (outgoing) data writes that completed in error (flushed)
 * @rq_flushed: a receive completed in error: every earlier arrival has
 *	been seen, none will follow
 * @arrivals: (incoming) chunks that arrived, not yet consumed
 * @arr_head: (incoming) next arrival to consume
 * @arr_tail: (incoming) next free place in @arrivals
 * @consumed: (incoming) chunks consumed, ever
 * @retry_work: (outgoing) reconnect after a refusal
 * @attempts: (outgoing) connection attempts made
 * @lock: protects the counters the CQ and CM handlers update
 * @mutex: serialises the rdma_cm handlers with setup and release
 * @closing: the connection is being released; handlers leave it alone
 * @draining: its QP is being drained; flushed completions are expected
 * @ctrl_mapped: @ctrl_dma is a live mapping
 * @established: (outgoing) connected, staging registration posted
 * @remote_ready: (outgoing) the neighbour's READY arrived
 */
struct collx_peer {
	struct collx_comm *comm;
	u32 rank;
	bool outgoing;
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct ib_cq *cq;
	unsigned int cq_size;
	enum collx_peer_state state;
	int err;
	struct collx_staging staging;
	void *ctrl;
	u64 ctrl_dma;
	struct collx_recv *recvs;
	u32 nrecv;
	struct ib_cqe send_cqe;
	struct ib_cqe write_cqe;
	struct ib_cqe inv_cqe;
	u32 max_sge;
	struct ib_mr *dest_mrs[COLLX_DEST_WINDOWS];
	u32 ndest_mrs;
	u32 dest_pages;
	u32 dest_state;
	u32 dest_posted;
	u32 inv_pending;
	struct collx_dest dest[2];
	u64 remote_iova;
	u32 remote_rkey;
	u32 credits;
	u64 posted;
	u64 write_done;
	u64 write_errs;
	bool rq_flushed;
	struct collx_arrival *arrivals;
	u32 arr_head;
	u32 arr_tail;
	u64 consumed;
	struct delayed_work retry_work;
	u32 attempts;
	spinlock_t lock; /* see above */
	struct mutex mutex; /* see above */
	bool closing;
	bool draining;
	bool ctrl_mapped;
	bool established;
	bool remote_ready;
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
 * struct collx_comm - a communicator
 * @id: module-wide id (debugfs, tracepoints)
 * @handle: the fd's handle (comm_id in the uapi)
 * @cf: the file that owns it
 * @key: comm_key shared by all ranks
 * @rank: this rank
 * @nranks: ranks in the communicator
 * @addrs: every rank's address
 * @timeout_ms: connect and progress bound
 * @dev: the RDMA device; NULL until the first connection resolves it
 * @dev_entry: entry in @dev's comm list
 * @next: connection to rank + 1
 * @prev: connection from rank - 1
 * @state: enum collx_comm_state
 * @err: the error that failed the comm
 * @failed_rank: the peer blamed for @err
 * @connected: woken whenever a connection changes state
 * @elock: protects @state, @err and @failed_rank
 * @connect_deadline: jiffies by which COLLX_IOC_COMM_CREATE gives up
 * @lock: serialises the engine (ops, queue, progress)
 * @teardown_lock: serialises releasing the RDMA resources
 * @ops: submitted ops not yet complete, in order; the first is running
 * @nops: length of @ops
 * @op_seq: collectives started on this comm
 * @work: runs the engine
 * @timeout_work: fails the running op when it stops progressing
 * @progress_jiffies: when the running op last made progress
 * @held: failed ops whose zero-copy buffers the NIC may still touch; they
 *	are released once the connections are drained
 * @registry: entry in the module's comm list (for incoming connections)
 * @debugfs: its debugfs folder
 * @ref: lifetime
 */
struct collx_comm {
	u32 id;
	u32 handle;
	struct collx_file *cf;
	u64 key;
	u32 rank;
	u32 nranks;
	struct sockaddr_storage *addrs;
	u32 timeout_ms;
	struct collx_dev *dev;
	struct list_head dev_entry;
	struct collx_peer next;
	struct collx_peer prev;
	enum collx_comm_state state;
	int err;
	u32 failed_rank;
	wait_queue_head_t connected;
	spinlock_t elock; /* see above */
	unsigned long connect_deadline;
	struct mutex lock; /* see above */
	struct mutex teardown_lock; /* see above */
	struct list_head ops;
	u32 nops;
	u64 op_seq;
	struct work_struct work;
	struct delayed_work timeout_work;
	unsigned long progress_jiffies;
	struct list_head held;
	struct list_head registry;
	struct dentry *debugfs;
	struct kref ref;
};

/**
 * struct collx_mr - a registered user buffer
 * @id: handle on the fd
 * @addr: user address
 * @length: bytes
 * @pages: pinned pages (FOLL_LONGTERM)
 * @npages: how many
 * @kva: kernel mapping of @pages
 * @mm: the mm whose pinned_vm the pages are counted in
 * @users: collectives in flight using it
 */
struct collx_mr {
	u32 id;
	u64 addr;
	u64 length;
	struct page **pages;
	unsigned long npages;
	void *kva;
	struct mm_struct *mm;
	atomic_t users;
};

/**
 * struct collx_ubuf - a user buffer as a collective sees it
 * @kva: kernel address of its first byte
 * @mr: the registration it lies in, or NULL if bounced
 * @pages: (bounced) pages pinned for this collective
 * @npages: (bounced) how many
 * @map: (bounced) the vmap() of @pages
 * @write: the collective writes it
 */
struct collx_ubuf {
	void *kva;
	struct collx_mr *mr;
	struct page **pages;
	unsigned long npages;
	void *map;
	bool write;
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
 * struct collx_dmap - an op's output mapped for the NIC (zero copy)
 * @ibdev: the device it is mapped on; NULL when not mapped
 * @sgt: the output's pages, DMA-mapped on @ibdev
 * @segs: the DMA segments of @sgt, in buffer order
 * @nsegs: how many
 * @bytes: the output's length
 * @placed: the predecessor was sent a DEST for this op, so our output is
 *	registered for its writes until the op's end invalidates it
 */
struct collx_dmap {
	struct ib_device *ibdev;
	struct sg_table sgt;
	struct collx_dseg *segs;
	unsigned int nsegs;
	u64 bytes;
	bool placed;
};

/**
 * struct collx_op - one collective
 * @id: op_id, unique on the fd
 * @comm: the communicator while the op is queued or running
 * @cf: the fd it completes to
 * @entry: entry in @comm's ops
 * @done_entry: entry in @cf's completed list
 * @coll: enum collx_coll
 * @dtype: enum collx_dtype
 * @redop: enum collx_redop
 * @count: elements
 * @esize: bytes per element
 * @send: input buffer
 * @recv: output buffer
 * @inplace: @send and @recv are the same buffer
 * @dmap: @recv mapped for the NIC, when it lies in a registration
 * @seq: the comm's op sequence number
 * @slice_elems: elements per pipeline slice (one staging slot)
 * @nslices: slices per ring chunk
 * @units: slices this rank sends (and receives) in all
 * @sent: units handed to the QP (or skipped as empty)
 * @recvd: units received and reduced or copied (or skipped as empty)
 * @started: data movement began
 * @done: complete; @cmpl is final
 * @cmpl: the completion record
 * @ref: the fd's reference, plus one per waiter
 */
struct collx_op {
	u64 id;
	struct collx_comm *comm;
	struct collx_file *cf;
	struct list_head entry;
	struct list_head done_entry;
	u32 coll;
	u32 dtype;
	u32 redop;
	u64 count;
	u32 esize;
	struct collx_ubuf send;
	struct collx_ubuf recv;
	bool inplace;
	struct collx_dmap dmap;
	u64 seq;
	u64 slice_elems;
	u32 nslices;
	u32 units;
	u32 sent;
	u32 recvd;
	bool started;
	bool done;
	struct collx_completion cmpl;
	struct kref ref;
};

/**
 * struct collx_file - per-open state of /dev/collx
 * @lock: orders registration lookups against deregistration, and op ids
 * @comms: communicators by handle
 * @mrs: registrations by handle
 * @ops: collectives by id, until their completion is consumed
 * @next_op_id: the next op id
 * @done: completed ops whose record has not been read
 * @done_lock: protects @done
 * @wq: woken when an op completes
 */
struct collx_file {
	struct mutex lock; /* see above */
	struct xarray comms;
	struct xarray mrs;
	struct xarray ops;
	u64 next_op_id;
	struct list_head done;
	spinlock_t done_lock; /* see above */
	wait_queue_head_t wq;
};

#endif /* COLLX_OBJ_H */
