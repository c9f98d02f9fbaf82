// SPDX-License-Identifier: GPL-2.0
/*
 * collx: collective communication as a kernel service.
 *
 * Module entry: brings up the RDMA device layer before the character
 * device, so that an open() never sees a half-initialised module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "collx_loc.h"

static int __init collx_init(void)
{
	int ret;

	ret = collx_device_init();
	if (ret)
		return ret;

	ret = collx_chardev_init();
	if (ret)
		goto out_device_exit;

	pr_info("version %s loaded\n", COLLX_MODULE_VERSION);
	return 0;

out_device_exit:
	collx_device_exit();
	return ret;
}

static void __exit collx_exit(void)
{
	collx_chardev_exit();
	collx_device_exit();
	pr_info("unloaded\n");
}

module_init(collx_init);
module_exit(collx_exit);

MODULE_DESCRIPTION("collx: collective communication over RDMA");
MODULE_AUTHOR("The collx authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(COLLX_MODULE_VERSION);
