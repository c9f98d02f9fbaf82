/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: prototypes shared between the module's files, grouped by the file
 * that defines them, in the order the layers call each other:
 *
 *   chardev → file, op, comm, mr → engine → cm → peer (xfer, dest,
 *   staging, auth) → device;  core, trace, debugfs and stats are leaves.
 *
 * Lower layers report upward through return values and ops tables
 * (struct collx_peer_ops, struct collx_cm_entry, struct collx_dev_user).
 */
#ifndef COLLX_LOC_H
#define COLLX_LOC_H

#include "collx_obj.h"

#define COLLX_MODULE_VERSION	"0.1.0"

struct seq_file;

/* main.c */
extern struct workqueue_struct *collx_wq;

/* chardev.c */
int collx_chardev_init(void);
void collx_chardev_exit(void);

/* file.c */
struct collx_file *collx_file_alloc(void);
void collx_file_free(struct collx_file *cf);
void collx_file_post(struct collx_file *cf, struct collx_op *op);
int collx_file_wait(struct collx_file *cf, struct collx_wait *cmd);
bool collx_file_ready(struct collx_file *cf);
ssize_t collx_file_read(struct collx_file *cf, char __user *buf, size_t len,
			bool nonblock);
void collx_op_release_all(struct collx_file *cf);

/* object.c */
int collx_obj_reserve(struct xarray *xa, atomic_t *count, u32 max, u32 *id,
		      u32 *next, int full);
void collx_obj_finalize(struct xarray *xa, u32 id, void *obj);
void collx_obj_abort(struct xarray *xa, atomic_t *count, u32 id);
void *collx_obj_remove(struct xarray *xa, atomic_t *count, u32 id);

/* op.c */
int collx_op_submit(struct collx_file *cf, struct collx_submit *cmd);
int collx_op_submit_group(struct collx_file *cf,
			  struct collx_submit_group *cmd);
void collx_op_complete(struct collx_op *op, int status, u32 rank, u32 phase,
		       u32 step, bool hold);
void collx_op_release_bufs(struct collx_op *op);
void collx_op_release_held(struct collx_comm *comm);
void collx_op_put(struct collx_op *op);

/* comm.c */
int collx_comm_create(struct collx_file *cf, struct collx_comm_create *cmd);
int collx_comm_destroy(struct collx_file *cf, u32 handle);
int collx_comm_query(struct collx_file *cf, struct collx_comm_query *cmd);
void collx_comm_teardown(struct collx_comm *comm, int err);
void collx_comm_fail(struct collx_comm *comm, const struct collx_blame *b);
struct collx_comm *collx_comm_get_handle(struct collx_file *cf, u32 handle);
void collx_comm_put(struct collx_comm *comm);
void collx_comm_release_all(struct collx_file *cf);
struct collx_peer *collx_comm_peer(struct collx_comm *comm, u32 rank,
				   bool want);
int collx_comm_want_peers(struct collx_comm *comm, struct collx_op *op);
void collx_comm_work(struct work_struct *work);
void collx_comm_timeout_work(struct work_struct *work);
int collx_comm_show(struct seq_file *m, void *data);

/* mr.c */
int collx_mr_reg(struct collx_file *cf, struct collx_mr_reg *cmd);
int collx_mr_dereg(struct collx_file *cf, u32 id);
void collx_mr_put(struct collx_mr *mr);
void collx_mr_release_all(struct collx_file *cf);
int collx_buf_map(struct collx_file *cf, struct collx_buf *b, u64 addr,
		  u64 bytes, bool write);
int collx_buf_alloc(struct collx_buf *b, u64 bytes);
void collx_buf_unmap(struct collx_buf *b);
unsigned long collx_memlock_limit(void);
int collx_memlock_charge(struct mm_struct *mm, unsigned long npages,
			 unsigned long limit);
void collx_memlock_uncharge(struct mm_struct *mm, unsigned long npages);

/* dmabuf.c */
int collx_dmabuf_reg(struct collx_mr *mr, int fd, u64 offset);
void collx_dmabuf_release(struct collx_mr *mr);
int collx_dmabuf_dmap(struct collx_buf *b, struct ib_device *ibdev, u64 pos);
void collx_dmabuf_use(struct collx_buf *b, bool use);
int collx_dmabuf_cpu_begin(struct collx_buf *b);
void collx_dmabuf_cpu_end(struct collx_buf *b);
void collx_dmabuf_idle(struct collx_mr *mr);
void collx_dmabuf_init(void);
void collx_dmabuf_exit(void);

/* direct.c */
int collx_dmap_pages(struct collx_dmap *dm, struct ib_device *ibdev,
		     struct page **pages, unsigned long npages,
		     unsigned int first, u64 bytes);
int collx_dmap_map(struct collx_buf *b, struct ib_device *ibdev);
int collx_dmap_index(struct collx_dmap *dm);
void collx_dmap_unmap(struct collx_dmap *dm);
unsigned int collx_dmap_find(const struct collx_dmap *dm, u64 off);
u32 collx_dmap_sges(const struct collx_dmap *dm, u64 off, u32 len, u32 lkey,
		    struct ib_sge *sge, u32 max);
void collx_dmap_sync_for_cpu(const struct collx_dmap *dm, u64 off, u64 len);

/* engine.c */
struct collx_group *collx_group_alloc(struct collx_comm *comm,
				      struct collx_op **ops, u32 nops);
void collx_group_free(struct collx_group *g);
void collx_engine_queue(struct collx_comm *comm, struct collx_group *g);
int collx_engine_progress(struct collx_comm *comm, struct collx_blame *b);
void collx_engine_fail_all(struct collx_comm *comm,
			   const struct collx_blame *b);
const char *collx_wait_kind_name(int kind);
int collx_engine_wait_kind(struct collx_comm *comm, struct collx_blame *b);
const char *collx_engine_waits_for(struct collx_comm *comm,
				   struct collx_blame *b);
void collx_engine_describe(struct collx_comm *comm, struct seq_file *m);
void collx_engine_log_state(struct collx_comm *comm);

/* cm.c */
int collx_cm_listen_get(struct net *net);
void collx_cm_listen_put(struct net *net);
void collx_cm_listen_flush(void);
int collx_cm_register(struct collx_cm_entry *e);
void collx_cm_unregister(struct collx_cm_entry *e);
int collx_cm_connect(struct collx_peer *peer);
void collx_cm_want(struct collx_peer *peer);
void collx_cm_retry_work(struct work_struct *work);
void collx_cm_peer_ready(struct collx_peer *peer, const u8 *proof);

/* peer.c */
void collx_peer_init(struct collx_peer *peer, const struct collx_peer_ops *ops,
		     void *owner, const struct collx_conn_params *params,
		     u32 rank);
int collx_peer_setup(struct collx_peer *peer, struct rdma_cm_id *cm_id);
void collx_peer_release_rdma(struct collx_peer *peer);
void collx_peer_release(struct collx_peer *peer);
void collx_peer_drain(struct collx_peer *peer);
bool collx_peer_abort(struct collx_peer *peer, int err, u32 rank, u32 phase,
		      u32 step);
void collx_peer_hangup(struct collx_peer *peer, bool wait,
		       unsigned long deadline);
void collx_peer_set_state(struct collx_peer *peer,
			  enum collx_peer_state state, int err);
void collx_peer_broken(struct collx_peer *peer, int err);
int collx_peer_failed(struct collx_peer *peer);
int collx_peer_drained(struct collx_peer *peer);
void collx_peer_blame(struct collx_peer *peer, struct collx_blame *b);
bool collx_peer_told(struct collx_peer *peer, struct collx_blame *b);
bool collx_peer_ready(struct collx_peer *peer);
void collx_peer_handshake(struct collx_peer *peer, bool established,
			  bool remote_ready);
const char *collx_peer_state_name(enum collx_peer_state state);
void collx_peer_format(struct collx_peer *peer, char *buf, size_t len);
#define COLLX_LINE_MAX	256	/* one line of collx_*_format() */

/* xfer.c */
/*
 * Control send buffers after the receive buffers, one per kind, then one
 * per DEST MR (their indices: not the wire's enum collx_wire_ctrl_type).
 */
#define COLLX_CTRL_READY_BUF	0
#define COLLX_CTRL_ABORT_BUF	1
#define COLLX_CTRL_ASK_BUF	2
#define COLLX_CTRL_TELL_BUF	3
#define COLLX_CTRL_SENDS	4
void collx_xfer_init(struct collx_peer *peer);
u32 collx_peer_ctrl_send_buf(struct collx_peer *peer, u32 which);
void *collx_peer_ctrl_buf(struct collx_peer *peer, u32 idx);
void collx_peer_ctrl_send(struct collx_peer *peer, u32 idx, u32 len,
			  struct ib_cqe *cqe, struct ib_sge *sge,
			  struct ib_send_wr *wr);
int collx_peer_post_locked(struct collx_peer *peer,
			   const struct ib_send_wr *wr);
int collx_peer_post_recv(struct collx_peer *peer, u32 idx);
int collx_peer_post_reg(struct collx_peer *peer);
int collx_peer_send_ready(struct collx_peer *peer, const u8 *proof);
int collx_peer_post_abort(struct collx_peer *peer, int err, u32 rank,
			  u32 phase, u32 step);
int collx_peer_post_credits(struct collx_peer *peer);
bool collx_peer_take_credit(struct collx_peer *peer, u32 *slot);
bool collx_peer_has_credit(struct collx_peer *peer);
int collx_peer_post_write(struct collx_peer *peer, struct ib_sge *sge,
			  u32 nsge, u64 raddr, u32 rkey, u32 imm, u64 cookie);
bool collx_peer_take_write(struct collx_peer *peer, u64 *cookie, bool *ok);
bool collx_peer_take_arrival(struct collx_peer *peer,
			     struct collx_arrival *arr, u32 *slot);
bool collx_peer_has_arrival(struct collx_peer *peer);
void collx_peer_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void collx_peer_qp_event(struct ib_event *event, void *ctx);

/* ask.c */
struct collx_wire_ask;
struct collx_wire_tell;
void collx_ask_init(struct collx_peer *peer);
bool collx_peer_ask(struct collx_peer *peer, u32 idle_ms);
bool collx_peer_take_tell(struct collx_peer *peer, struct collx_tell *t);
bool collx_peer_take_asked(struct collx_peer *peer);
int collx_peer_tell(struct collx_peer *peer, const struct collx_tell *t);
void collx_ask_recv(struct collx_peer *peer, const struct collx_wire_ask *msg,
		    u32 len);
void collx_tell_recv(struct collx_peer *peer,
		     const struct collx_wire_tell *msg, u32 len);

/* dest.c */
struct collx_wire_dest;
void collx_dest_setup(struct collx_peer *peer);
void collx_dest_release(struct collx_peer *peer);
int collx_dest_offer(struct collx_peer *peer, const struct collx_dmap *dm,
		     u64 off, u64 bytes, u64 seq, u32 ordinal, u64 cookie);
int collx_dest_retire(struct collx_peer *peer, u32 dmr, u64 cookie);
void collx_dest_inv_done(struct ib_cq *cq, struct ib_wc *wc);
void collx_dest_recv(struct collx_peer *peer, const struct collx_wire_dest *msg,
		     u32 len);
bool collx_dest_lookup(struct collx_peer *peer, u64 seq, u32 ordinal, u64 off,
		       u32 bytes, u64 *raddr, u32 *rkey);

/* staging.c */
int collx_staging_alloc(struct ib_device *ibdev, struct ib_pd *pd,
			struct collx_staging *st, u32 tag);
u64 collx_iova(u64 iova, u32 tag);
void collx_staging_free(struct ib_device *ibdev, struct collx_staging *st);
void *collx_staging_slot(const struct collx_staging *st, u32 slot);
void collx_staging_sync(struct ib_device *ibdev, const struct collx_staging *st,
			u32 slot, u32 bytes, bool to_device);

/* auth.c */
struct crypto_shash *collx_auth_alloc(const u8 *secret);
void collx_auth_free(struct crypto_shash *tfm);
int collx_auth_lookup(struct crypto_shash *tfm, u64 key, u32 nranks,
		      u64 *lookup);
int collx_auth_proof(struct crypto_shash *tfm, bool acceptor, u32 active_rank,
		     u32 passive_rank, const u8 *nonce_a, const u8 *nonce_p,
		     u8 *proof);
bool collx_auth_check(struct crypto_shash *tfm, bool acceptor, u32 active_rank,
		      u32 passive_rank, const u8 *nonce_a, const u8 *nonce_p,
		      const u8 *proof);

/* device.c */
int collx_device_init(void);
void collx_device_exit(void);
u32 collx_device_count(void);
int collx_device_bind(struct collx_dev_user *user, struct collx_dev *cur,
		      struct ib_device *ibdev, struct collx_dev **dev);
void collx_device_unbind(struct collx_dev_user *user);
const char *collx_device_name(const struct collx_dev *dev);

/* debugfs.c: the module's counters, and state files */
struct collx_stats {
	atomic_t comms;
	atomic_t mrs;
	atomic_t qps;
	atomic64_t pinned_pages;
	atomic_t ops;
	atomic64_t ops_done;
	atomic64_t ops_failed;
	atomic64_t bytes_written;
	atomic64_t bytes_zero_copy;
	atomic64_t bytes_placed;
};

extern struct collx_stats collx_stats;
void collx_debugfs_init(void);
void collx_debugfs_exit(void);
struct collx_debugfs_file *collx_debugfs_comm_add(u32 id, void *data,
						  int (*show)(struct seq_file *,
							      void *));
void collx_debugfs_comm_remove(struct collx_debugfs_file *f);

#endif /* COLLX_LOC_H */
