// SPDX-License-Identifier: GPL-2.0
/*
 * collx: /dev/collx and its ioctl dispatch.
 *
 * Every ioctl struct starts with its size; the dispatch table knows each
 * struct's full and mandatory size and reads the user's copy with
 * copy_struct_from_user(), so older and newer callers both work (see the
 * DOC block in include/uapi/linux/collx.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/collx.h>

#include "collx_loc.h"

/**
 * struct collx_file - per-open state of /dev/collx
 * @lock: serialises the ioctls issued on this file
 *
 * Everything a process creates through the fd (comms, registrations,
 * ops) hangs off this struct and is released with it.
 */
struct collx_file {
	struct mutex lock; /* held around each ioctl handler */
};

/**
 * struct collx_ucmd - one ioctl call being executed
 * @cf: the file it came in on
 * @ubuffer: the user's struct
 * @user_size: the size user space said it passed
 * @cmd: kernel copy of the struct, zero-extended
 */
struct collx_ucmd {
	struct collx_file *cf;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/* Copy a struct back to user space, no more than the user passed. */
static int collx_ucmd_respond(struct collx_ucmd *ucmd, size_t cmd_len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, cmd_len)))
		return -EFAULT;
	return 0;
}

static int collx_ioctl_version(struct collx_ucmd *ucmd)
{
	struct collx_version *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;

	cmd->abi_major = COLLX_ABI_MAJOR;
	cmd->abi_minor = COLLX_ABI_MINOR;
	cmd->nr_devices = collx_device_count();
	cmd->features = 0;
	strscpy(cmd->module_version, COLLX_MODULE_VERSION,
		sizeof(cmd->module_version));
	return collx_ucmd_respond(ucmd, sizeof(*cmd));
}

union collx_ucmd_buffer {
	struct collx_version version;
};

struct collx_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	int (*execute)(struct collx_ucmd *ucmd);
};

#define COLLX_IOCTL_OP(_name, _fn, _struct, _last)                        \
	[COLLX_CMD_##_name - COLLX_CMD_BASE] = {                          \
		.size = sizeof(_struct) +                                 \
			BUILD_BUG_ON_ZERO(sizeof(union collx_ucmd_buffer) < \
					  sizeof(_struct)),               \
		.min_size = offsetofend(_struct, _last),                  \
		.ioctl_num = COLLX_IOC_##_name,                           \
		.execute = _fn,                                           \
	}

static const struct collx_ioctl_op collx_ioctl_ops[] = {
	COLLX_IOCTL_OP(VERSION, collx_ioctl_version,
		       struct collx_version, __reserved),
};

static long collx_fops_ioctl(struct file *filp, unsigned int cmd,
			     unsigned long arg)
{
	const struct collx_ioctl_op *op;
	struct collx_ucmd ucmd = {};
	union collx_ucmd_buffer buf;
	unsigned int nr;
	int ret;

	nr = _IOC_NR(cmd);
	if (_IOC_TYPE(cmd) != COLLX_TYPE || nr < COLLX_CMD_BASE ||
	    nr - COLLX_CMD_BASE >= ARRAY_SIZE(collx_ioctl_ops))
		return -ENOTTY;
	op = &collx_ioctl_ops[nr - COLLX_CMD_BASE];
	if (op->ioctl_num != cmd)
		return -ENOTTY;

	ucmd.cf = filp->private_data;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;

	ucmd.cmd = &buf;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;

	mutex_lock(&ucmd.cf->lock);
	ret = op->execute(&ucmd);
	mutex_unlock(&ucmd.cf->lock);
	return ret;
}

static int collx_fops_open(struct inode *inode, struct file *filp)
{
	struct collx_file *cf;

	cf = kzalloc(sizeof(*cf), GFP_KERNEL);
	if (!cf)
		return -ENOMEM;
	mutex_init(&cf->lock);
	filp->private_data = cf;
	return nonseekable_open(inode, filp);
}

static int collx_fops_release(struct inode *inode, struct file *filp)
{
	struct collx_file *cf = filp->private_data;

	mutex_destroy(&cf->lock);
	kfree(cf);
	return 0;
}

static const struct file_operations collx_fops = {
	.owner = THIS_MODULE,
	.open = collx_fops_open,
	.release = collx_fops_release,
	.unlocked_ioctl = collx_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * Like /dev/infiniband/uverbs*, any user may open the device: what a
 * process can do is bounded by its own RLIMIT_MEMLOCK and its own fds.
 */
static struct miscdevice collx_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "collx",
	.fops = &collx_fops,
	.mode = 0666,
};

/**
 * collx_chardev_init() - register /dev/collx
 *
 * Context: module init.
 * Return: 0 or a negative errno from misc_register().
 */
int collx_chardev_init(void)
{
	return misc_register(&collx_misc);
}

/**
 * collx_chardev_exit() - remove /dev/collx
 *
 * Context: module exit; no file can be open (the module is pinned by
 * every open file through .owner).
 */
void collx_chardev_exit(void)
{
	misc_deregister(&collx_misc);
}
