// SPDX-License-Identifier: GPL-2.0
/*
 * collx: the RDMA device layer.
 *
 * An ib_client learns of every RDMA device, present at load time or added
 * later, and of its removal.  Users (comms) bind to the device their
 * connections resolved to; removal calls each user's removed() callback,
 * which must release everything the user made on the device, before the
 * client's remove returns.  Each connection has its own PD (peer.c), so
 * the device layer keeps no verbs objects of its own.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "collx_loc.h"

static LIST_HEAD(collx_devs);
/* Protects collx_devs, each device's users and collx_nr_devs. */
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
	INIT_LIST_HEAD(&cdev->users);

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
	struct collx_dev_user *user;
	unsigned int nusers = 0;

	mutex_lock(&collx_devs_lock);
	cdev->removed = true;
	list_del(&cdev->list);
	collx_nr_devs--;
	mutex_unlock(&collx_devs_lock);

	/* removed() unbinds the user, so take them one at a time. */
	for (;;) {
		mutex_lock(&collx_devs_lock);
		user = list_first_entry_or_null(&cdev->users,
						struct collx_dev_user, entry);
		if (user) {
			list_del_init(&user->entry);
			user->get(user);
		}
		mutex_unlock(&collx_devs_lock);
		if (!user)
			break;
		user->removed(user);
		user->put(user);
		nusers++;
	}

	pr_info("%s: removed%s\n", dev_name(&ibdev->dev),
		nusers ? " (its communicators failed with ENODEV)" : "");
	/*
	 * ib_get_client_data() no longer returns it: the core cleared it
	 * before calling remove, and collx_device_bind() checks @removed
	 * under the lock for a lookup that raced.
	 */
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
 * collx_device_bind() - tie a user to the device of a connection
 * @user: the user
 * @cur: the device it is bound to already, or NULL
 * @ibdev: the device its connection resolved to
 * @dev: out: the device bound
 *
 * All of a comm's connections use one device.
 *
 * Context: process context; takes collx_devs_lock.
 * Return: 0, -ENODEV if collx does not serve @ibdev (or it is going
 * away), -EXDEV if the user is bound to another device.
 */
int collx_device_bind(struct collx_dev_user *user, struct collx_dev *cur,
		      struct ib_device *ibdev, struct collx_dev **dev)
{
	struct collx_dev *cdev;
	int ret = 0;

	mutex_lock(&collx_devs_lock);
	cdev = NULL;
	list_for_each_entry(cdev, &collx_devs, list)
		if (cdev->ibdev == ibdev)
			break;
	if (list_entry_is_head(cdev, &collx_devs, list) || cdev->removed) {
		ret = -ENODEV;
	} else if (cur && cur != cdev) {
		ret = -EXDEV;
	} else if (!cur) {
		list_add_tail(&user->entry, &cdev->users);
		*dev = cdev;
	}
	mutex_unlock(&collx_devs_lock);
	return ret;
}

/**
 * collx_device_unbind() - undo collx_device_bind()
 * @user: the user (bound or not)
 *
 * Context: process context; takes collx_devs_lock.
 */
void collx_device_unbind(struct collx_dev_user *user)
{
	mutex_lock(&collx_devs_lock);
	list_del_init(&user->entry);
	mutex_unlock(&collx_devs_lock);
}

/**
 * collx_device_name() - a device's name, for messages
 * @dev: the device, or NULL
 *
 * Context: any.
 * Return: its name, or "-".
 */
const char *collx_device_name(const struct collx_dev *dev)
{
	return dev ? dev_name(&dev->ibdev->dev) : "-";
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
