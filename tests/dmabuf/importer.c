// SPDX-License-Identifier: GPL-2.0
/*
 * collx_test_exporter: the probe importer.  Attaches any dma-buf as an
 * in-kernel importer would and lets a test map, vmap and touch it through
 * an fd, so the self-test sees what importers see, on each kernel, with
 * this exporter and with others (udmabuf, DMA heaps).
 *
 * The mapping state is under the reservation lock, as move_notify runs
 * with it held; &texp_imp.lock only serialises the fd's ioctls and is
 * taken before it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/iosys-map.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "texp.h"

/* A fence is the importer saying "DMA on the old mapping still runs". */
struct texp_fence {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's own, as dma_fence_init() wants */
};

/**
 * struct texp_imp - a probe importer (its fd's private data)
 * @dmabuf: the imported buffer (a reference)
 * @attach: its attachment
 * @flags: COLLX_TEXP_IMP_*
 * @fence_ms: on each move_notify, fence the buffer for this long
 * @lock: one ioctl at a time; taken before the reservation lock
 * @sgt: the mapping (reservation lock)
 * @sgt_gen: @gen when @sgt was made (reservation lock)
 * @gen: move_notify calls so far (written under the reservation lock)
 * @pinned: a pin is held (reservation lock)
 * @fences: fences added (reservation lock)
 * @fence_errors: fences that could not be added (reservation lock)
 * @vmap: the vmap (@lock)
 * @vmapped: @vmap is held (@lock)
 * @vmap_gen: @gen before @vmap was made (@lock)
 * @fence_lock: protects @fence
 * @fence: the fence not yet signalled, if any
 * @fence_ctx: the fences' context
 * @fence_seqno: the last fence's sequence number (reservation lock)
 * @fence_work: signals @fence
 */
struct texp_imp {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	u32 flags;
	u32 fence_ms;
	struct mutex lock;	/* see above */
	struct sg_table *sgt;
	u32 sgt_gen;
	u32 gen;
	bool pinned;
	u32 fences;
	u32 fence_errors;
	struct iosys_map vmap;
	bool vmapped;
	u32 vmap_gen;
	spinlock_t fence_lock;	/* protects @fence */
	struct texp_fence *fence;
	u64 fence_ctx;
	u64 fence_seqno;
	struct delayed_work fence_work;
};

static const char *texp_fence_name(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static void texp_fence_free(struct rcu_head *rcu)
{
	struct dma_fence *f = container_of(rcu, struct dma_fence, rcu);

	kfree(container_of(f, struct texp_fence, base));
	module_put(THIS_MODULE);
}

/*
 * A fence can outlive its buffer (a sync_file exported from it): each one
 * holds the module, dropped after an RCU grace period; exit waits for
 * those callbacks (rcu_barrier()).
 */
static void texp_fence_release(struct dma_fence *fence)
{
	call_rcu(&fence->rcu, texp_fence_free);
}

static const struct dma_fence_ops texp_fence_ops = {
	.get_driver_name = texp_fence_name,
	.get_timeline_name = texp_fence_name,
	.release = texp_fence_release,
};

static void texp_imp_signal(struct texp_imp *imp)
{
	struct texp_fence *f;

	spin_lock(&imp->fence_lock);
	f = imp->fence;
	imp->fence = NULL;
	spin_unlock(&imp->fence_lock);
	if (f) {
		dma_fence_signal(&f->base);
		dma_fence_put(&f->base);
	}
}

static void texp_imp_fence_work(struct work_struct *work)
{
	texp_imp_signal(container_of(to_delayed_work(work), struct texp_imp,
				     fence_work));
}

/* Reservation lock held; one fence at a time is enough to hold a move. */
static void texp_imp_add_fence(struct texp_imp *imp)
{
	struct dma_resv *resv = imp->dmabuf->resv;
	struct texp_fence *f;
	bool busy;

	spin_lock(&imp->fence_lock);
	busy = imp->fence;
	spin_unlock(&imp->fence_lock);
	if (busy)
		return;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		imp->fence_errors++;
		return;
	}
	__module_get(THIS_MODULE);
	spin_lock_init(&f->lock);
	dma_fence_init(&f->base, &texp_fence_ops, &f->lock, imp->fence_ctx,
		       ++imp->fence_seqno);
	if (dma_resv_reserve_fences(resv, 1)) {
		imp->fence_errors++;
		dma_fence_signal(&f->base);
		dma_fence_put(&f->base);
		return;
	}
	dma_resv_add_fence(resv, &f->base, DMA_RESV_USAGE_BOOKKEEP);
	imp->fences++;
	spin_lock(&imp->fence_lock);
	imp->fence = f;
	spin_unlock(&imp->fence_lock);
	schedule_delayed_work(&imp->fence_work,
			      msecs_to_jiffies(imp->fence_ms));
}

static void texp_imp_move_notify(struct dma_buf_attachment *attach)
{
	struct texp_imp *imp = attach->importer_priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	WRITE_ONCE(imp->gen, imp->gen + 1);
	/* A correct importer drops its mapping; the lock it needs is held. */
	if (imp->sgt && !(imp->flags & COLLX_TEXP_IMP_KEEP_STALE)) {
		dma_buf_unmap_attachment(attach, imp->sgt, DMA_BIDIRECTIONAL);
		imp->sgt = NULL;
	}
	if (imp->fence_ms)
		texp_imp_add_fence(imp);
}

static const struct dma_buf_attach_ops texp_imp_attach_ops = {
	.allow_peer2peer = false,
	.move_notify = texp_imp_move_notify,
};

static void texp_imp_destroy(struct texp_imp *imp)
{
	struct dma_resv *resv = imp->dmabuf->resv;

	if (imp->vmapped)
		texp_dma_buf_vunmap(imp->dmabuf, &imp->vmap);
	dma_resv_lock(resv, NULL);
	if (imp->sgt)
		dma_buf_unmap_attachment(imp->attach, imp->sgt,
					 DMA_BIDIRECTIONAL);
	imp->sgt = NULL;
	if (imp->pinned)
		dma_buf_unpin(imp->attach);
	dma_resv_unlock(resv);
	/* No move_notify after detach, so no fence work is queued again. */
	dma_buf_detach(imp->dmabuf, imp->attach);
	cancel_delayed_work_sync(&imp->fence_work);
	texp_imp_signal(imp);
	dma_buf_put(imp->dmabuf);
	mutex_destroy(&imp->lock);
	kfree(imp);
	atomic_dec(&texp_counters.importers);
}

static long texp_imp_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return texp_ioctl_dispatch(cmd, (void __user *)arg, file->private_data,
				   true);
}

static int texp_imp_release(struct inode *inode, struct file *file)
{
	texp_imp_destroy(file->private_data);
	return 0;
}

static const struct file_operations texp_imp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = texp_imp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.release = texp_imp_release,
	.llseek = noop_llseek,
};

/**
 * texp_import() - attach a dma-buf to a new probe importer
 * @arg: &struct collx_texp_import
 * @uarg: where it came from, for the answer
 *
 * Context: process.
 * Return: 0 with the importer's fd installed, or a negative errno.
 */
int texp_import(struct collx_texp_import *arg, void __user *uarg)
{
	const u32 known = COLLX_TEXP_IMP_DYNAMIC | COLLX_TEXP_IMP_PIN |
			  COLLX_TEXP_IMP_KEEP_STALE;
	const struct dma_buf_attach_ops *ops;
	struct texp_imp *imp;
	struct file *file;
	int fd, ret;

	if (arg->flags & ~known)
		return -EOPNOTSUPP;
	if (arg->__reserved || arg->fence_ms > COLLX_TEXP_MAX_FENCE_MS ||
	    ((arg->flags & COLLX_TEXP_IMP_PIN) &&
	     !(arg->flags & COLLX_TEXP_IMP_DYNAMIC)))
		return -EINVAL;
	imp = kzalloc(sizeof(*imp), GFP_KERNEL_ACCOUNT);
	if (!imp)
		return -ENOMEM;
	imp->flags = arg->flags;
	imp->fence_ms = arg->fence_ms;
	mutex_init(&imp->lock);
	spin_lock_init(&imp->fence_lock);
	INIT_DELAYED_WORK(&imp->fence_work, texp_imp_fence_work);
	imp->fence_ctx = dma_fence_context_alloc(1);

	imp->dmabuf = dma_buf_get(arg->fd);
	if (IS_ERR(imp->dmabuf)) {
		ret = PTR_ERR(imp->dmabuf);
		goto out_free;
	}
	/* Fence ops live here: only buffers that keep this module loaded. */
	if (imp->fence_ms && !texp_buf_of(imp->dmabuf)) {
		ret = -EINVAL;
		goto out_put;
	}
	ops = arg->flags & COLLX_TEXP_IMP_DYNAMIC ? &texp_imp_attach_ops : NULL;
	imp->attach = dma_buf_dynamic_attach(imp->dmabuf, texp_dma_device(),
					     ops, imp);
	if (IS_ERR(imp->attach)) {
		ret = PTR_ERR(imp->attach);
		goto out_put;
	}
	atomic_inc(&texp_counters.importers);
	if (arg->flags & COLLX_TEXP_IMP_PIN) {
		dma_resv_lock(imp->dmabuf->resv, NULL);
		ret = dma_buf_pin(imp->attach);
		imp->pinned = !ret;
		dma_resv_unlock(imp->dmabuf->resv);
		if (ret)
			goto out_destroy;
	}

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out_destroy;
	}
	file = anon_inode_getfile("[collx_texp_importer]", &texp_imp_fops, imp,
				  O_RDWR);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		ret = PTR_ERR(file);
		goto out_destroy;
	}
	arg->imp_fd = fd;
	ret = texp_respond(uarg, arg, sizeof(*arg));
	if (ret) {
		put_unused_fd(fd);
		fput(file);	/* releases the importer */
		return ret;
	}
	fd_install(fd, file);
	return 0;

out_destroy:
	texp_imp_destroy(imp);
	return ret;
out_put:
	dma_buf_put(imp->dmabuf);
out_free:
	mutex_destroy(&imp->lock);
	kfree(imp);
	return ret;
}

int texp_imp_map(struct texp_imp *imp, struct collx_texp_imp_map *arg)
{
	struct dma_resv *resv = imp->dmabuf->resv;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int i;
	int ret;

	if (arg->flags || arg->__reserved)
		return -EINVAL;
	mutex_lock(&imp->lock);
	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret)
		goto out;
	if (imp->sgt) {
		ret = -EBUSY;
		goto out_unlock;
	}
	sgt = dma_buf_map_attachment(imp->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_unlock;
	}
	imp->sgt = sgt;
	imp->sgt_gen = imp->gen;
	arg->nents = sgt->nents;
	arg->bytes = 0;
	for_each_sgtable_dma_sg(sgt, sg, i)
		arg->bytes += sg_dma_len(sg);
out_unlock:
	dma_resv_unlock(resv);
out:
	mutex_unlock(&imp->lock);
	return ret;
}

int texp_imp_unmap(struct texp_imp *imp)
{
	struct dma_resv *resv = imp->dmabuf->resv;
	int ret;

	mutex_lock(&imp->lock);
	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret)
		goto out;
	if (imp->sgt)
		dma_buf_unmap_attachment(imp->attach, imp->sgt,
					 DMA_BIDIRECTIONAL);
	else
		ret = -ENXIO;
	imp->sgt = NULL;
	dma_resv_unlock(resv);
out:
	mutex_unlock(&imp->lock);
	return ret;
}

int texp_imp_vmap(struct texp_imp *imp)
{
	u32 gen;
	int ret;

	mutex_lock(&imp->lock);
	if (imp->vmapped) {
		ret = -EBUSY;
		goto out;
	}
	/* Read before: a notify during the vmap makes it stale, not lost. */
	gen = READ_ONCE(imp->gen);
	ret = texp_dma_buf_vmap(imp->dmabuf, &imp->vmap);
	if (!ret) {
		imp->vmapped = true;
		imp->vmap_gen = gen;
	}
out:
	mutex_unlock(&imp->lock);
	return ret;
}

int texp_imp_vunmap(struct texp_imp *imp)
{
	int ret = 0;

	mutex_lock(&imp->lock);
	if (imp->vmapped) {
		texp_dma_buf_vunmap(imp->dmabuf, &imp->vmap);
		imp->vmapped = false;
	} else {
		ret = -ENXIO;
	}
	mutex_unlock(&imp->lock);
	return ret;
}

/* Through the pages the mapping maps, which this module's buffers know. */
static int texp_imp_access_pages(struct texp_imp *imp, u64 offset, u8 *kbuf,
				 size_t len, bool write)
{
	struct texp_buf *buf = texp_buf_of(imp->dmabuf);
	struct dma_resv *resv = imp->dmabuf->resv;
	int ret;

	if (!buf)
		return -EOPNOTSUPP;
	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret)
		return ret;
	if (!imp->sgt)
		ret = -ENXIO;
	else if (imp->gen != imp->sgt_gen &&
		 !(imp->flags & COLLX_TEXP_IMP_KEEP_STALE))
		ret = -ESTALE;
	else
		ret = texp_map_copy(buf, imp->sgt, offset, kbuf, len, write);
	dma_resv_unlock(resv);
	return ret;
}

static int texp_imp_access_vmap(struct texp_imp *imp, u64 offset, u8 *kbuf,
				size_t len, bool write)
{
	if (!imp->vmapped)
		return -ENXIO;
	if (READ_ONCE(imp->gen) != imp->vmap_gen &&
	    !(imp->flags & COLLX_TEXP_IMP_KEEP_STALE))
		return -ESTALE;
	if (imp->vmap.is_iomem)
		return -EOPNOTSUPP;
	if (write)
		memcpy(imp->vmap.vaddr + offset, kbuf, len);
	else
		memcpy(kbuf, imp->vmap.vaddr + offset, len);
	return 0;
}

int texp_imp_access(struct texp_imp *imp, struct collx_texp_imp_access *arg)
{
	const u32 known = COLLX_TEXP_ACCESS_WRITE | COLLX_TEXP_ACCESS_VMAP;
	void __user *uptr = u64_to_user_ptr(arg->ptr);
	bool write = arg->flags & COLLX_TEXP_ACCESS_WRITE;
	size_t len = arg->length;
	u8 *kbuf;
	int ret;

	if (arg->flags & ~known)
		return -EOPNOTSUPP;
	if (!arg->length || arg->length > COLLX_TEXP_MAX_ACCESS ||
	    arg->offset > imp->dmabuf->size ||
	    arg->length > imp->dmabuf->size - arg->offset)
		return -EINVAL;
	kbuf = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!kbuf)
		return -ENOMEM;
	if (write && copy_from_user(kbuf, uptr, len)) {
		ret = -EFAULT;
		goto out_free;
	}
	mutex_lock(&imp->lock);
	if (arg->flags & COLLX_TEXP_ACCESS_VMAP)
		ret = texp_imp_access_vmap(imp, arg->offset, kbuf, len, write);
	else
		ret = texp_imp_access_pages(imp, arg->offset, kbuf, len, write);
	mutex_unlock(&imp->lock);
	if (!ret && !write && copy_to_user(uptr, kbuf, len))
		ret = -EFAULT;
out_free:
	kvfree(kbuf);
	return ret;
}

void texp_imp_status(struct texp_imp *imp, struct collx_texp_imp_status *st)
{
	struct dma_resv *resv = imp->dmabuf->resv;

	mutex_lock(&imp->lock);
	dma_resv_lock(resv, NULL);
	st->dynamic = !!imp->attach->importer_ops;
	st->exporter_dynamic = dma_buf_is_dynamic(imp->dmabuf);
	st->premapped = !!imp->attach->sgt;
	st->pinned = imp->pinned;
	st->mapped = !!imp->sgt;
	st->map_stale = imp->sgt && imp->gen != imp->sgt_gen;
	st->notified = imp->gen;
	st->fences = imp->fences;
	st->fence_errors = imp->fence_errors;
	dma_resv_unlock(resv);
	st->vmapped = imp->vmapped;
	st->vmap_stale = imp->vmapped && READ_ONCE(imp->gen) != imp->vmap_gen;
	st->__reserved = 0;
	mutex_unlock(&imp->lock);
}
