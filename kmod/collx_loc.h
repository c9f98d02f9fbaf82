/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: prototypes shared between the module's files, grouped by the file
 * that defines them.
 */
#ifndef COLLX_LOC_H
#define COLLX_LOC_H

#include "collx_obj.h"

#define COLLX_MODULE_VERSION	"0.1.0"

/* main.c: module parameters */
extern unsigned short collx_listen_port;
extern unsigned int collx_comm_timeout_ms;
extern unsigned int collx_slot_kib;
extern unsigned int collx_nslots;
extern struct workqueue_struct *collx_wq;

/* chardev.c */
int collx_chardev_init(void);
void collx_chardev_exit(void);

/* device.c */
int collx_device_init(void);
void collx_device_exit(void);
u32 collx_device_count(void);
int collx_device_bind(struct collx_comm *comm, struct ib_device *ibdev);
void collx_device_unbind(struct collx_comm *comm);

/* cm.c */
int collx_cm_listen(void);
void collx_cm_stop(void);
int collx_cm_connect(struct collx_peer *peer);
void collx_cm_retry_work(struct work_struct *work);

/* peer.c */
void collx_peer_init(struct collx_peer *peer, struct collx_comm *comm,
		     u32 rank, bool outgoing);
int collx_peer_setup(struct collx_peer *peer, struct rdma_cm_id *cm_id);
void collx_peer_release(struct collx_peer *peer);
void collx_peer_release_rdma(struct collx_peer *peer, bool destroy_id);
void collx_peer_disconnect(struct collx_peer *peer);
int collx_peer_post_reg(struct collx_peer *peer);
int collx_peer_send_ready(struct collx_peer *peer);
int collx_peer_post_credit(struct collx_peer *peer, u32 slot);
void collx_peer_slot(struct collx_peer *peer, u32 slot, u32 bytes, void **kva,
		     struct ib_sge *sge, u64 *raddr, u32 *rkey);
bool collx_peer_dest(struct collx_peer *peer, u64 seq, u64 off, u32 len,
		     u64 *raddr, u32 *rkey);
int collx_peer_post_write(struct collx_peer *peer, struct ib_sge *sge,
			  u32 nsge, u64 raddr, u32 rkey, u32 imm);
int collx_peer_post_dest(struct collx_peer *peer, struct collx_dmap *dm,
			 u64 seq);
int collx_peer_dest_done(struct collx_peer *peer);
void collx_peer_broken(struct collx_peer *peer, int err);
void collx_peer_handshake(struct collx_peer *peer, bool established,
			  bool remote_ready);
void collx_peer_set_state(struct collx_peer *peer,
			  enum collx_peer_state state, int err);
const char *collx_peer_state_name(enum collx_peer_state state);

/* direct.c */
int collx_dmap_map(struct collx_op *op, struct ib_device *ibdev);
void collx_dmap_unmap(struct collx_dmap *dm);
u32 collx_dmap_sges(const struct collx_dmap *dm, u64 off, u32 len, u32 lkey,
		    struct ib_sge *sge, u32 max);
void collx_dmap_sync_for_cpu(const struct collx_dmap *dm, u64 off, u64 len);

/* comm.c */
int collx_comm_create(struct collx_file *cf, struct collx_comm_create *cmd);
int collx_comm_destroy(struct collx_file *cf, u32 handle);
void collx_comm_teardown(struct collx_comm *comm, int err);
void collx_comm_fail(struct collx_comm *comm, int err, u32 rank);
struct collx_comm *collx_comm_find(u64 key, u32 rank);
struct collx_comm *collx_comm_get_handle(struct collx_file *cf, u32 handle);
void collx_comm_put(struct collx_comm *comm);
void collx_comm_release_all(struct collx_file *cf);

/* engine.c */
void collx_engine_work(struct work_struct *work);
void collx_engine_timeout(struct work_struct *work);
void collx_engine_fail_ops(struct collx_comm *comm, int err, u32 rank);
void collx_engine_describe(struct collx_comm *comm, struct seq_file *m);

/* op.c */
int collx_op_submit(struct collx_file *cf, struct collx_submit *cmd);
void collx_op_complete(struct collx_op *op, int status, u32 rank,
		       u32 phase, u32 step);
int collx_op_wait(struct collx_file *cf, struct collx_wait *cmd);
ssize_t collx_op_read(struct collx_file *cf, char __user *buf, size_t len,
		      bool nonblock);
bool collx_op_ready(struct collx_file *cf);
void collx_op_release_held(struct collx_comm *comm);
void collx_op_release_all(struct collx_file *cf);

/* mr.c */
int collx_mr_reg(struct collx_file *cf, struct collx_mr_reg *cmd);
int collx_mr_dereg(struct collx_file *cf, u32 id);
void collx_mr_release_all(struct collx_file *cf);
int collx_ubuf_map(struct collx_file *cf, struct collx_ubuf *ub, u64 addr,
		   u64 bytes, bool write);
void collx_ubuf_unmap(struct collx_ubuf *ub);

/* debugfs.c */
struct collx_stats {
	atomic_t comms;
	atomic_t mrs;
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
void collx_debugfs_comm_add(struct collx_comm *comm);
void collx_debugfs_comm_remove(struct collx_comm *comm);

#endif /* COLLX_LOC_H */
