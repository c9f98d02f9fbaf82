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
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "collx_loc.h"

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

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;

	cmd->abi_major = COLLX_ABI_MAJOR;
	cmd->abi_minor = COLLX_ABI_MINOR;
	cmd->nr_devices = collx_device_count();
	cmd->features = COLLX_FEATURE_COLLECTIVES | COLLX_FEATURE_GROUP |
			COLLX_FEATURE_AUTH | COLLX_FEATURE_TOS |
			COLLX_FEATURE_FP8 | COLLX_FEATURE_DMABUF;
	strscpy(cmd->module_version, COLLX_MODULE_VERSION,
		sizeof(cmd->module_version));
	return collx_ucmd_respond(ucmd, sizeof(*cmd));
}

static int collx_ioctl_comm_create(struct collx_ucmd *ucmd)
{
	struct collx_comm_create *cmd = ucmd->cmd;
	int ret, ret2;

	ret = collx_comm_create(ucmd->cf, cmd);
	/* Out fields (failed_rank) go back on failure too. */
	ret2 = collx_ucmd_respond(ucmd, sizeof(*cmd));
	if (!ret && ret2)
		collx_comm_destroy(ucmd->cf, cmd->comm_id);
	return ret ? ret : ret2;
}

static int collx_ioctl_comm_destroy(struct collx_ucmd *ucmd)
{
	struct collx_comm_destroy *cmd = ucmd->cmd;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	return collx_comm_destroy(ucmd->cf, cmd->comm_id);
}

static int collx_ioctl_mr_reg(struct collx_ucmd *ucmd)
{
	struct collx_mr_reg *cmd = ucmd->cmd;
	int ret;

	ret = collx_mr_reg(ucmd->cf, cmd);
	if (ret)
		return ret;
	ret = collx_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret)
		collx_mr_dereg(ucmd->cf, cmd->mr_id);
	return ret;
}

static int collx_ioctl_mr_dereg(struct collx_ucmd *ucmd)
{
	struct collx_mr_dereg *cmd = ucmd->cmd;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	return collx_mr_dereg(ucmd->cf, cmd->mr_id);
}

/*
 * Write back @len bytes of the user's own struct at @off (what it passed):
 * a struct the kernel cannot write fails before anything is done, as a
 * call that fails must change nothing.
 */
static int collx_ucmd_probe(struct collx_ucmd *ucmd, size_t off, size_t len)
{
	if (copy_to_user(ucmd->ubuffer + off, (u8 *)ucmd->cmd + off, len))
		return -EFAULT;
	return 0;
}

static int collx_ioctl_submit(struct collx_ucmd *ucmd)
{
	struct collx_submit *cmd = ucmd->cmd;
	int ret;

	ret = collx_ucmd_probe(ucmd, offsetof(struct collx_submit, op_id),
			       sizeof(cmd->op_id));
	if (!ret)
		ret = collx_op_submit(ucmd->cf, cmd);
	if (ret)
		return ret;
	/*
	 * Only if the struct was unmapped or made read-only meanwhile: the
	 * op runs, and its record still arrives through read().
	 */
	return collx_ucmd_respond(ucmd, sizeof(*cmd));
}

static int collx_ioctl_submit_group(struct collx_ucmd *ucmd)
{
	struct collx_submit_group *cmd = ucmd->cmd;
	int ret, ret2;

	/* All or nothing: error_index must be writable before anything. */
	ret = collx_ucmd_probe(ucmd,
			       offsetof(struct collx_submit_group, error_index),
			       sizeof(cmd->error_index));
	if (ret)
		return ret;
	ret = collx_op_submit_group(ucmd->cf, cmd);
	/* error_index goes back on failure too. */
	ret2 = collx_ucmd_respond(ucmd, sizeof(*cmd));
	return ret ? ret : ret2;
}

static int collx_ioctl_comm_query(struct collx_ucmd *ucmd)
{
	struct collx_comm_query *cmd = ucmd->cmd;
	int ret;

	/* No flag is defined: an unknown one is EOPNOTSUPP, as everywhere. */
	if (cmd->flags)
		return -EOPNOTSUPP;
	ret = collx_comm_query(ucmd->cf, cmd);
	if (ret)
		return ret;
	return collx_ucmd_respond(ucmd, sizeof(*cmd));
}

static int collx_ioctl_wait(struct collx_ucmd *ucmd)
{
	struct collx_wait *cmd = ucmd->cmd;
	int ret;

	if (cmd->flags)
		return -EOPNOTSUPP;
	if (cmd->__reserved)
		return -EINVAL;
	/*
	 * Consuming the record is final: make sure it can be written back
	 * first (the mandatory part includes it), so a struct the kernel
	 * cannot write gets -EFAULT and leaves the record queued for read().
	 */
	ret = collx_ucmd_probe(ucmd, offsetof(struct collx_wait, completion),
			       sizeof(cmd->completion));
	if (!ret)
		ret = collx_file_wait(ucmd->cf, cmd);
	if (ret)
		return ret;
	return collx_ucmd_respond(ucmd, sizeof(*cmd));
}

union collx_ucmd_buffer {
	struct collx_version version;
	struct collx_comm_create comm_create;
	struct collx_comm_destroy comm_destroy;
	struct collx_mr_reg mr_reg;
	struct collx_mr_dereg mr_dereg;
	struct collx_submit submit;
	struct collx_wait wait;
	struct collx_submit_group submit_group;
	struct collx_comm_query comm_query;
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
	COLLX_IOCTL_OP(COMM_CREATE, collx_ioctl_comm_create,
		       struct collx_comm_create, failed_rank),
	COLLX_IOCTL_OP(COMM_DESTROY, collx_ioctl_comm_destroy,
		       struct collx_comm_destroy, __reserved),
	COLLX_IOCTL_OP(MR_REG, collx_ioctl_mr_reg,
		       struct collx_mr_reg, __reserved),
	COLLX_IOCTL_OP(MR_DEREG, collx_ioctl_mr_dereg,
		       struct collx_mr_dereg, __reserved),
	COLLX_IOCTL_OP(SUBMIT, collx_ioctl_submit,
		       struct collx_submit, op_id),
	COLLX_IOCTL_OP(WAIT, collx_ioctl_wait,
		       struct collx_wait, completion),
	COLLX_IOCTL_OP(SUBMIT_GROUP, collx_ioctl_submit_group,
		       struct collx_submit_group, __reserved),
	COLLX_IOCTL_OP(COMM_QUERY, collx_ioctl_comm_query,
		       struct collx_comm_query, ops_queued),
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
	return op->execute(&ucmd);
}

static int collx_fops_open(struct inode *inode, struct file *filp)
{
	struct collx_file *cf = collx_file_alloc();

	if (!cf)
		return -ENOMEM;
	filp->private_data = cf;
	return nonseekable_open(inode, filp);
}

static int collx_fops_release(struct inode *inode, struct file *filp)
{
	collx_file_free(filp->private_data);
	return 0;
}

static ssize_t collx_fops_read(struct file *filp, char __user *buf,
			       size_t len, loff_t *ppos)
{
	return collx_file_read(filp->private_data, buf, len,
			       filp->f_flags & O_NONBLOCK);
}

static __poll_t collx_fops_poll(struct file *filp, poll_table *wait)
{
	struct collx_file *cf = filp->private_data;

	poll_wait(filp, &cf->wq, wait);
	return collx_file_ready(cf) ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations collx_fops = {
	.owner = THIS_MODULE,
	.open = collx_fops_open,
	.release = collx_fops_release,
	.read = collx_fops_read,
	.poll = collx_fops_poll,
	.unlocked_ioctl = collx_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * Like /dev/infiniband/uverbs*, any user may open the device: what a
 * process can do is bounded by its own RLIMIT_MEMLOCK, its memory cgroup
 * and the per-fd limits of the uapi.  A site that wants fewer users gives
 * the node to a group with a udev rule (Documentation/security.md).
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
