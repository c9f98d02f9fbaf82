// SPDX-License-Identifier: GPL-2.0
/*
 * collx: collective communication as a kernel service.
 *
 * Module entry and parameters.  The RDMA device layer and the rdma_cm
 * listener come up before the character device, so that an open() never
 * sees a half-initialised module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>

#include <net/net_namespace.h>

#include "collx_loc.h"

unsigned short collx_listen_port = 18888;
module_param_named(listen_port, collx_listen_port, ushort, 0444);
MODULE_PARM_DESC(listen_port, "rdma_cm port collx listens on (default 18888)");

unsigned int collx_comm_timeout_ms = 30000;
module_param_named(comm_timeout_ms, collx_comm_timeout_ms, uint, 0644);
MODULE_PARM_DESC(comm_timeout_ms,
		 "default bound on connecting and on a collective's progress (ms, default 30000)");

unsigned int collx_slot_kib = 64;
module_param_named(slot_kib, collx_slot_kib, uint, 0444);
MODULE_PARM_DESC(slot_kib, "staging slot size in KiB: one pipeline chunk (default 64)");

unsigned int collx_nslots = 4;
module_param_named(nslots, collx_nslots, uint, 0444);
MODULE_PARM_DESC(nslots, "staging slots per connection: chunks in flight (default 4)");

struct workqueue_struct *collx_wq;

static int __init collx_init(void)
{
	int ret;

	if (!collx_slot_kib || collx_slot_kib > COLLX_SLOT_KIB_MAX ||
	    !collx_nslots || collx_nslots > COLLX_NSLOTS_MAX ||
	    collx_slot_kib * collx_nslots > COLLX_STAGING_KIB_MAX) {
		pr_err("slot_kib must be 1..%u, nslots 1..%u, their product at most %u\n",
		       COLLX_SLOT_KIB_MAX, COLLX_NSLOTS_MAX,
		       COLLX_STAGING_KIB_MAX);
		return -EINVAL;
	}

	collx_wq = alloc_workqueue("collx", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!collx_wq)
		return -ENOMEM;
	collx_debugfs_init();
	collx_dmabuf_init();

	ret = collx_device_init();
	if (ret)
		goto out_debugfs;

	/* The initial namespace listens from load on, as before. */
	ret = collx_cm_listen_get(&init_net);
	if (ret)
		goto out_device_exit;

	ret = collx_chardev_init();
	if (ret)
		goto out_cm_stop;

	pr_info("version %s loaded\n", COLLX_MODULE_VERSION);
	return 0;

out_cm_stop:
	collx_cm_listen_put(&init_net);
	collx_cm_listen_flush();
out_device_exit:
	collx_device_exit();
out_debugfs:
	collx_dmabuf_exit();
	collx_debugfs_exit();
	destroy_workqueue(collx_wq);
	return ret;
}

static void __exit collx_exit(void)
{
	collx_chardev_exit();
	collx_cm_listen_put(&init_net);
	collx_cm_listen_flush();
	collx_device_exit();
	collx_dmabuf_exit();
	collx_debugfs_exit();
	destroy_workqueue(collx_wq);
	pr_info("unloaded\n");
}

module_init(collx_init);
module_exit(collx_exit);

MODULE_DESCRIPTION("collx: collective communication over RDMA");
MODULE_AUTHOR("The collx authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(COLLX_MODULE_VERSION);
