// SPDX-License-Identifier: GPL-2.0
/*
 * collx: the RDMA device layer.
 *
 * An ib_client learns of every RDMA device, present at load time or added
 * later, and of its removal.  Each device the module serves gets a
 * struct collx_dev with a PD; communicators bind to the device their
 * connections resolved to.  Removal fails and tears down every comm bound
 * to the device (their ops complete with -ENODEV) before the PD goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "collx_loc.h"

static LIST_HEAD(collx_devs);
static DEFINE_MUTEX(collx_devs_lock);
static u32 collx_nr_devs;

static struct ib_client collx_ib_client;

static const char *collx_port_state_name(enum ib_port_state state)
{
	switch (state) {
	case IB_PORT_DOWN:
		return "DOWN";
	case IB_PORT_INIT:
		return "INIT";
	case IB_PORT_ARMED:
		return "ARMED";
	case IB_PORT_ACTIVE:
		return "ACTIVE";
	case IB_PORT_ACTIVE_DEFER:
		return "ACTIVE_DEFER";
	default:
		return "NOP";
	}
}

static void collx_dev_log_ports(struct ib_device *ibdev)
{
	struct ib_port_attr attr;
	u32 port;

	rdma_for_each_port(ibdev, port) {
		if (ib_query_port(ibdev, port, &attr))
			continue;
		pr_info("%s: port %u %s, %s, active MTU %d\n",
			dev_name(&ibdev->dev), port,
			collx_port_state_name(attr.state),
			rdma_protocol_roce(ibdev, port) ? "RoCE" :
			rdma_protocol_ib(ibdev, port) ? "InfiniBand" : "other",
			ib_mtu_enum_to_int(attr.active_mtu));
	}
}

static int collx_ib_add(struct ib_device *ibdev)
{
	struct collx_dev *cdev;

	/* collx needs RC QPs with RDMA WRITE: InfiniBand and RoCE. */
	if (rdma_node_get_transport(ibdev->node_type) != RDMA_TRANSPORT_IB) {
		pr_info("%s: not an IB/RoCE transport, ignored\n",
			dev_name(&ibdev->dev));
		return -EOPNOTSUPP;
	}

	cdev = kzalloc(sizeof(*cdev), GFP_KERNEL);
	if (!cdev)
		return -ENOMEM;
	cdev->ibdev = ibdev;
	INIT_LIST_HEAD(&cdev->comms);
	cdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(cdev->pd)) {
		int ret = PTR_ERR(cdev->pd);

		pr_err("%s: cannot allocate a PD: %d\n", dev_name(&ibdev->dev),
		       ret);
		kfree(cdev);
		return ret;
	}

	mutex_lock(&collx_devs_lock);
	list_add_tail(&cdev->list, &collx_devs);
	collx_nr_devs++;
	mutex_unlock(&collx_devs_lock);

	ib_set_client_data(ibdev, &collx_ib_client, cdev);
	pr_info("%s: added (%u port%s)\n", dev_name(&ibdev->dev),
		rdma_end_port(ibdev), rdma_end_port(ibdev) > 1 ? "s" : "");
	collx_dev_log_ports(ibdev);
	return 0;
}

static void collx_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct collx_dev *cdev = client_data;
	struct collx_comm *comm;
	unsigned int ncomms = 0;

	mutex_lock(&collx_devs_lock);
	cdev->removed = true;
	list_del(&cdev->list);
	collx_nr_devs--;
	mutex_unlock(&collx_devs_lock);

	/* Teardown unbinds each comm, so take them one at a time. */
	for (;;) {
		mutex_lock(&collx_devs_lock);
		comm = list_first_entry_or_null(&cdev->comms, struct collx_comm,
						dev_entry);
		if (comm)
			kref_get(&comm->ref);
		mutex_unlock(&collx_devs_lock);
		if (!comm)
			break;
		collx_comm_teardown(comm, -ENODEV);
		collx_comm_put(comm);
		ncomms++;
	}

	ib_dealloc_pd(cdev->pd);
	pr_info("%s: removed%s\n", dev_name(&ibdev->dev),
		ncomms ? " (its communicators failed with ENODEV)" : "");
	kfree(cdev);
}

static struct ib_client collx_ib_client = {
	.name = "collx",
	.add = collx_ib_add,
	.remove = collx_ib_remove,
};

/**
 * collx_device_count() - number of RDMA devices collx serves now
 *
 * Context: process context; takes collx_devs_lock.
 * Return: the count.
 */
u32 collx_device_count(void)
{
	u32 n;

	mutex_lock(&collx_devs_lock);
	n = collx_nr_devs;
	mutex_unlock(&collx_devs_lock);
	return n;
}

/**
 * collx_device_bind() - tie a communicator to the device of a connection
 * @comm: the communicator
 * @ibdev: the device its connection resolved to
 *
 * All of a communicator's connections must use one device (one PD).
 *
 * Context: process context; takes collx_devs_lock.
 * Return: 0, -ENODEV if collx does not serve @ibdev (or it is going
 * away), -EXDEV if @comm is already bound to another device.
 */
int collx_device_bind(struct collx_comm *comm, struct ib_device *ibdev)
{
	struct collx_dev *cdev;
	int ret = 0;

	mutex_lock(&collx_devs_lock);
	cdev = ib_get_client_data(ibdev, &collx_ib_client);
	if (!cdev || cdev->removed) {
		ret = -ENODEV;
	} else if (comm->dev && comm->dev != cdev) {
		ret = -EXDEV;
	} else if (!comm->dev) {
		comm->dev = cdev;
		list_add_tail(&comm->dev_entry, &cdev->comms);
	}
	mutex_unlock(&collx_devs_lock);
	return ret;
}

/**
 * collx_device_unbind() - undo collx_device_bind()
 * @comm: the communicator, whose RDMA resources are already released
 *
 * Context: process context; takes collx_devs_lock.
 */
void collx_device_unbind(struct collx_comm *comm)
{
	mutex_lock(&collx_devs_lock);
	if (comm->dev) {
		list_del_init(&comm->dev_entry);
		comm->dev = NULL;
	}
	mutex_unlock(&collx_devs_lock);
}

/**
 * collx_device_init() - register the ib_client
 *
 * Context: module init.
 * Return: 0 or a negative errno from ib_register_client().
 */
int collx_device_init(void)
{
	return ib_register_client(&collx_ib_client);
}

/**
 * collx_device_exit() - unregister the ib_client
 *
 * ib_unregister_client() calls collx_ib_remove() for every device still
 * attached, so nothing is left on the list afterwards.
 *
 * Context: module exit.
 */
void collx_device_exit(void)
{
	ib_unregister_client(&collx_ib_client);
	WARN_ON(!list_empty(&collx_devs));
}
