// SPDX-License-Identifier: GPL-2.0
/*
 * collx_test_exporter: module init and exit, /dev/collx_test_exporter and
 * its size-first ioctls, the probe importer's DMA device, and the debugfs
 * counters tests check for leaks.  Loaded only in the lab.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "texp.h"

static unsigned int max_buf_mib = 64;
module_param(max_buf_mib, uint, 0444);
MODULE_PARM_DESC(max_buf_mib, "largest buffer, MiB (default 64)");

static unsigned int max_total_mib = 256;
module_param(max_total_mib, uint, 0444);
MODULE_PARM_DESC(max_total_mib,
		 "pages of all buffers, old generations included, MiB (default 256)");

struct texp_counters texp_counters;
static struct platform_device *texp_pdev;
static struct dentry *texp_debugfs;

unsigned long texp_max_buf_pages(void)
{
	return (unsigned long)max_buf_mib << (20 - PAGE_SHIFT);
}

unsigned long texp_max_total_pages(void)
{
	return (unsigned long)max_total_mib << (20 - PAGE_SHIFT);
}

/* What the probe importer attaches with: any DMA-capable device would do. */
struct device *texp_dma_device(void)
{
	return &texp_pdev->dev;
}

/**
 * texp_respond() - write an ioctl's answer back
 * @uarg: the caller's struct
 * @cmd: the kernel's copy, whose first field is the caller's size
 * @size: sizeof the kernel's struct
 *
 * Return: 0 or -EFAULT.
 */
int texp_respond(void __user *uarg, const void *cmd, size_t size)
{
	u32 usize = *(const u32 *)cmd;

	if (copy_to_user(uarg, cmd, min_t(size_t, usize, size)))
		return -EFAULT;
	return 0;
}

static int texp_ioctl_create(void *ctx, void *cmd, void __user *uarg)
{
	const u32 kinds = COLLX_TEXP_DYNAMIC | COLLX_TEXP_STATIC;
	struct collx_texp_create *c = cmd;
	struct dma_buf *dmabuf;
	int fd, ret;

	if (c->flags & ~(kinds | COLLX_TEXP_REFUSE_DYNAMIC))
		return -EOPNOTSUPP;
	if ((c->flags & kinds) != COLLX_TEXP_DYNAMIC &&
	    (c->flags & kinds) != COLLX_TEXP_STATIC)
		return -EINVAL;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	dmabuf = texp_buf_create(c->length, c->flags, &c->id);
	if (IS_ERR(dmabuf)) {
		put_unused_fd(fd);
		return PTR_ERR(dmabuf);
	}
	c->fd = fd;
	ret = texp_respond(uarg, c, sizeof(*c));
	if (ret) {
		put_unused_fd(fd);
		dma_buf_put(dmabuf);
		return ret;
	}
	fd_install(fd, dmabuf->file);
	return 0;
}

/* A dma-buf of this module by fd, with a reference, or an ERR_PTR. */
static struct dma_buf *texp_get_own(int fd)
{
	struct dma_buf *dmabuf = dma_buf_get(fd);

	if (!IS_ERR(dmabuf) && !texp_buf_of(dmabuf)) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return dmabuf;
}

static int texp_ioctl_move_or_revoke(void *cmd, void __user *uarg,
				     bool revoke)
{
	struct collx_texp_move *mv = cmd;
	struct dma_buf *dmabuf;
	int ret;

	if (mv->flags & ~COLLX_TEXP_MOVE_IF_UNPINNED)
		return -EOPNOTSUPP;
	if (mv->__reserved)
		return -EINVAL;
	dmabuf = texp_get_own(mv->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	ret = texp_buf_move(texp_buf_of(dmabuf), revoke, mv);
	dma_buf_put(dmabuf);
	return ret ? ret : texp_respond(uarg, mv, sizeof(*mv));
}

static int texp_ioctl_move(void *ctx, void *cmd, void __user *uarg)
{
	return texp_ioctl_move_or_revoke(cmd, uarg, false);
}

static int texp_ioctl_revoke(void *ctx, void *cmd, void __user *uarg)
{
	return texp_ioctl_move_or_revoke(cmd, uarg, true);
}

static int texp_ioctl_stats(void *ctx, void *cmd, void __user *uarg)
{
	struct collx_texp_stats *st = cmd;
	struct dma_buf *dmabuf;

	if (st->flags)
		return -EINVAL;
	dmabuf = texp_get_own(st->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	texp_buf_stats(texp_buf_of(dmabuf), st);
	dma_buf_put(dmabuf);
	return texp_respond(uarg, st, sizeof(*st));
}

static int texp_ioctl_import(void *ctx, void *cmd, void __user *uarg)
{
	return texp_import(cmd, uarg);
}

static int texp_ioctl_imp_map(void *ctx, void *cmd, void __user *uarg)
{
	int ret = texp_imp_map(ctx, cmd);

	return ret ? ret : texp_respond(uarg, cmd,
					sizeof(struct collx_texp_imp_map));
}

static int texp_ioctl_imp_cmd(void *cmd, int (*fn)(struct texp_imp *imp),
			      void *ctx)
{
	struct collx_texp_imp_cmd *c = cmd;

	return c->flags ? -EINVAL : fn(ctx);
}

static int texp_ioctl_imp_unmap(void *ctx, void *cmd, void __user *uarg)
{
	return texp_ioctl_imp_cmd(cmd, texp_imp_unmap, ctx);
}

static int texp_ioctl_imp_vmap(void *ctx, void *cmd, void __user *uarg)
{
	return texp_ioctl_imp_cmd(cmd, texp_imp_vmap, ctx);
}

static int texp_ioctl_imp_vunmap(void *ctx, void *cmd, void __user *uarg)
{
	return texp_ioctl_imp_cmd(cmd, texp_imp_vunmap, ctx);
}

static int texp_ioctl_imp_access(void *ctx, void *cmd, void __user *uarg)
{
	return texp_imp_access(ctx, cmd);
}

static int texp_ioctl_imp_status(void *ctx, void *cmd, void __user *uarg)
{
	struct collx_texp_imp_status *st = cmd;

	if (st->flags)
		return -EINVAL;
	texp_imp_status(ctx, st);
	return texp_respond(uarg, st, sizeof(*st));
}

union texp_ucmd_buffer {
	struct collx_texp_create create;
	struct collx_texp_move move;
	struct collx_texp_stats stats;
	struct collx_texp_import import;
	struct collx_texp_imp_cmd imp_cmd;
	struct collx_texp_imp_map imp_map;
	struct collx_texp_imp_access imp_access;
	struct collx_texp_imp_status imp_status;
};

struct texp_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	bool importer;
	int (*execute)(void *ctx, void *cmd, void __user *uarg);
};

#define TEXP_IOCTL_OP(_name, _fn, _struct, _last, _imp)                   \
	[COLLX_TEXP_CMD_##_name - COLLX_TEXP_CMD_BASE] = {                \
		.size = sizeof(_struct) +                                 \
			BUILD_BUG_ON_ZERO(sizeof(union texp_ucmd_buffer) < \
					  sizeof(_struct)),               \
		.min_size = offsetofend(_struct, _last),                  \
		.ioctl_num = COLLX_TEXP_IOC_##_name,                      \
		.importer = _imp,                                         \
		.execute = _fn,                                           \
	}

static const struct texp_ioctl_op texp_ioctl_ops[] = {
	TEXP_IOCTL_OP(CREATE, texp_ioctl_create, struct collx_texp_create,
		      length, false),
	TEXP_IOCTL_OP(MOVE, texp_ioctl_move, struct collx_texp_move,
		      timeout_ms, false),
	TEXP_IOCTL_OP(REVOKE, texp_ioctl_revoke, struct collx_texp_move,
		      timeout_ms, false),
	TEXP_IOCTL_OP(STATS, texp_ioctl_stats, struct collx_texp_stats,
		      fd, false),
	TEXP_IOCTL_OP(IMPORT, texp_ioctl_import, struct collx_texp_import,
		      fence_ms, false),
	TEXP_IOCTL_OP(IMP_MAP, texp_ioctl_imp_map, struct collx_texp_imp_map,
		      flags, true),
	TEXP_IOCTL_OP(IMP_UNMAP, texp_ioctl_imp_unmap,
		      struct collx_texp_imp_cmd, flags, true),
	TEXP_IOCTL_OP(IMP_VMAP, texp_ioctl_imp_vmap,
		      struct collx_texp_imp_cmd, flags, true),
	TEXP_IOCTL_OP(IMP_VUNMAP, texp_ioctl_imp_vunmap,
		      struct collx_texp_imp_cmd, flags, true),
	TEXP_IOCTL_OP(IMP_ACCESS, texp_ioctl_imp_access,
		      struct collx_texp_imp_access, ptr, true),
	TEXP_IOCTL_OP(IMP_STATUS, texp_ioctl_imp_status,
		      struct collx_texp_imp_status, flags, true),
};

/**
 * texp_ioctl_dispatch() - run one ioctl of the device or of an importer
 * @cmd: the ioctl number
 * @uarg: its size-first struct
 * @ctx: the importer (for an importer's fd), else NULL
 * @importer: the call came on an importer's fd
 *
 * Context: process.
 * Return: 0 (a new fd, if any, is in the struct written back) or a
 * negative errno; ENOTTY for a number not known on this kind of fd.
 */
long texp_ioctl_dispatch(unsigned int cmd, void __user *uarg, void *ctx,
			 bool importer)
{
	const struct texp_ioctl_op *op;
	union texp_ucmd_buffer buf;
	unsigned int nr = _IOC_NR(cmd);
	u32 usize;
	int ret;

	if (_IOC_TYPE(cmd) != COLLX_TEXP_TYPE || nr < COLLX_TEXP_CMD_BASE ||
	    nr - COLLX_TEXP_CMD_BASE >= ARRAY_SIZE(texp_ioctl_ops))
		return -ENOTTY;
	op = &texp_ioctl_ops[nr - COLLX_TEXP_CMD_BASE];
	if (op->ioctl_num != cmd || op->importer != importer)
		return -ENOTTY;
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;
	return op->execute(ctx, &buf, uarg);
}

static long texp_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return texp_ioctl_dispatch(cmd, (void __user *)arg, NULL, false);
}

static const struct file_operations texp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = texp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice texp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "collx_test_exporter",
	.fops = &texp_fops,
	.mode = 0600,
};

static int texp_stats_show(struct seq_file *m, void *unused)
{
	struct texp_counters *c = &texp_counters;

	seq_printf(m, "buffers %d\n", atomic_read(&c->buffers));
	seq_printf(m, "pages %ld\n", atomic_long_read(&c->pages));
	seq_printf(m, "attachments %d\n", atomic_read(&c->attachments));
	seq_printf(m, "mappings %d\n", atomic_read(&c->mappings));
	seq_printf(m, "vmaps %d\n", atomic_read(&c->vmaps));
	seq_printf(m, "mmaps %d\n", atomic_read(&c->mmaps));
	seq_printf(m, "importers %d\n", atomic_read(&c->importers));
	seq_printf(m, "cpu_access %d\n", atomic_read(&c->cpu_access));
	seq_printf(m, "created %lld\n", (long long)atomic64_read(&c->created));
	seq_printf(m, "moves %lld\n", (long long)atomic64_read(&c->moves));
	seq_printf(m, "revokes %lld\n", (long long)atomic64_read(&c->revokes));
	seq_printf(m, "notified %lld\n",
		   (long long)atomic64_read(&c->notified));
	seq_printf(m, "late_write_pages %lld\n",
		   (long long)atomic64_read(&c->late_write_pages));
	seq_printf(m, "cpu_begins %lld\n",
		   (long long)atomic64_read(&c->cpu_begins));
	seq_printf(m, "cpu_unpaired %lld\n",
		   (long long)atomic64_read(&c->cpu_unpaired));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(texp_stats);

static int __init texp_init(void)
{
	const struct platform_device_info info = {
		.name = "collx_texp_importer",
		.id = PLATFORM_DEVID_NONE,
		.dma_mask = DMA_BIT_MASK(64),
	};
	int ret;

	if (!max_buf_mib || max_buf_mib > max_total_mib ||
	    max_total_mib > 65536)
		return -EINVAL;
	texp_pdev = platform_device_register_full(&info);
	if (IS_ERR(texp_pdev))
		return PTR_ERR(texp_pdev);
	ret = misc_register(&texp_misc);
	if (ret)
		goto out_unregister_pdev;
	texp_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, texp_debugfs, NULL,
			    &texp_stats_fops);
	pr_info("loaded: /dev/%s, buffers up to %u MiB, %u MiB in all\n",
		texp_misc.name, max_buf_mib, max_total_mib);
	return 0;

out_unregister_pdev:
	platform_device_unregister(texp_pdev);
	return ret;
}

/* Buffers, importer fds and fences hold module references: all gone. */
static void __exit texp_exit(void)
{
	rcu_barrier();	/* the last fence's free may still be running */
	debugfs_remove_recursive(texp_debugfs);
	misc_deregister(&texp_misc);
	platform_device_unregister(texp_pdev);
	pr_info("unloaded\n");
}

module_init(texp_init);
module_exit(texp_exit);

MODULE_DESCRIPTION("collx test dma-buf exporter: movable, revocable page buffers and a probe importer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
