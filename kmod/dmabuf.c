// SPDX-License-Identifier: GPL-2.0
/*
 * collx: dma-buf registrations, collectives straight from and into device
 * memory (GPU memory in production, udmabuf and test exporters in the lab).
 *
 * A registration attaches as a dynamic importer (with move_notify) where
 * the exporter allows, a static one otherwise, through a stand-in device
 * with a 64-bit DMA mask (a registration belongs to no RDMA device yet),
 * and maps the attachment: that keeps the memory where it is until
 * move_notify.  The pages themselves come from the exporter's own kernel
 * mapping (dma_buf_vmap()), never from the importer's sg table, whose pages
 * are the exporter's business (CONFIG_DMABUF_DEBUG scrambles them to catch
 * importers that look).  That mapping is dropped at once and the CPU, for
 * reductions and copies, goes through a vmap of our own: the dma-buf core
 * shares one exporter mapping among all its holders, and an exporter that
 * moves the buffer may leave it stale, so a registration made after a
 * move would inherit the old pages from one still held.  When an op runs,
 * the buffer is mapped for the comm's RDMA device in the one place that
 * chooses by device (collx_dmabuf_dmap()): a virtual-DMA device (rxe)
 * gets the pages' kernel addresses, a real NIC its own attachment's DMA
 * addresses.  From submit to release an op's buffer is inside
 * dma_buf_begin_cpu_access()/dma_buf_end_cpu_access(): the CPU reduces
 * and copies in it, and so does rxe.
 *
 * When the exporter moves or revokes the buffer (move_notify, with its
 * reservation lock held) the registration is marked revoked, ops in
 * flight on it fail with -EFAULT (their comm fails and drains its QPs),
 * later ones are refused with -EFAULT, and a fence is added to the
 * buffer's reservation that signals only when no op holds the buffer any
 * more: an exporter that waits for fences, as it must, never gets its
 * memory back while the NIC or the CPU may still write into it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "collx_loc.h"
#include "compat.h"

MODULE_IMPORT_NS(DMA_BUF);

static struct platform_device *collx_dmabuf_dev;
static u64 collx_fence_context;
static atomic64_t collx_fence_seqno;

/**
 * struct collx_dmabuf - what a dma-buf registration holds
 * @attach: the attachment through the stand-in device
 * @sgt: its mapping, NULL once the exporter moved the buffer
 * @nic_attach: an attachment for a real NIC, made at first use
 * @nic_sgt: its mapping
 * @nic: the device of @nic_attach
 * @fence: signalled when no op holds the buffer after a move, or NULL
 * @fence_lock: protects @fence and the fence's own state
 * @users: struct collx_buf of ops using it (move_notify kicks their comms)
 */
struct collx_dmabuf {
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	struct dma_buf_attachment *nic_attach;
	struct sg_table *nic_sgt;
	struct ib_device *nic;
	struct dma_fence *fence;
	spinlock_t fence_lock; /* see above */
	struct list_head users;
};

/**
 * struct collx_fence - a fence with a lock of its own
 * @base: the fence
 * @lock: its lock; the reservation may keep the fence beyond the
 *	registration
 */
struct collx_fence {
	struct dma_fence base;
	spinlock_t lock; /* see above */
};

static const char *collx_fence_name(struct dma_fence *f)
{
	return "collx";
}

static const struct dma_fence_ops collx_fence_ops = {
	.get_driver_name = collx_fence_name,
	.get_timeline_name = collx_fence_name,
};

static struct collx_dmabuf *collx_dmabuf_of(struct collx_mr *mr)
{
	return mr->dmabuf_priv;
}

/* Signal the pending fence: nothing holds the buffer any more. */
static void collx_dmabuf_signal(struct collx_dmabuf *d)
{
	struct dma_fence *f;
	unsigned long flags;

	spin_lock_irqsave(&d->fence_lock, flags);
	f = d->fence;
	d->fence = NULL;
	spin_unlock_irqrestore(&d->fence_lock, flags);
	if (f) {
		dma_fence_signal(f);
		dma_fence_put(f);
	}
}

static void collx_dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	struct collx_mr *mr = attach->importer_priv;
	struct collx_dmabuf *d = collx_dmabuf_of(mr);
	struct dma_fence *f = NULL;
	struct collx_fence *cf;
	struct collx_buf *b;
	unsigned long flags;

	dma_resv_assert_held(attach->dmabuf->resv);
	WRITE_ONCE(mr->revoked, true);
	/* Drop the mapping of this attachment; nothing maps it again. */
	if (attach == d->attach && d->sgt) {
		dma_buf_unmap_attachment(attach, d->sgt, DMA_BIDIRECTIONAL);
		d->sgt = NULL;
	} else if (attach == d->nic_attach && d->nic_sgt) {
		dma_buf_unmap_attachment(attach, d->nic_sgt, DMA_BIDIRECTIONAL);
		d->nic_sgt = NULL;
	}

	spin_lock_irqsave(&d->fence_lock, flags);
	if (!d->fence && atomic_read(&mr->busy)) {
		cf = kzalloc(sizeof(*cf), GFP_ATOMIC);
		if (cf) {
			spin_lock_init(&cf->lock);
			dma_fence_init(&cf->base, &collx_fence_ops, &cf->lock,
				       collx_fence_context,
				       atomic64_inc_return(&collx_fence_seqno));
			d->fence = &cf->base;
		}
	}
	if (d->fence)
		f = dma_fence_get(d->fence);
	list_for_each_entry(b, &d->users, mr_entry)
		queue_work(collx_wq, &b->op->comm->work);
	spin_unlock_irqrestore(&d->fence_lock, flags);
	if (!f)
		return;
	/* The exporter waits for it before the memory goes. */
	if (!dma_resv_reserve_fences(attach->dmabuf->resv, 1))
		dma_resv_add_fence(attach->dmabuf->resv, f,
				   DMA_RESV_USAGE_BOOKKEEP);
	else
		pr_warn_ratelimited("mr %u: cannot fence a moving dma-buf\n",
				    mr->id);
	dma_fence_put(f);
	/* The last user may have gone in between. */
	if (!atomic_read(&mr->busy))
		collx_dmabuf_signal(d);
}

static const struct dma_buf_attach_ops collx_dmabuf_attach_ops = {
	.allow_peer2peer = true,
	.move_notify = collx_dmabuf_move_notify,
};

/*
 * The pages behind bytes [@off, @off + @len) of @dmabuf, read off the
 * exporter's kernel mapping: vmap() and vm_map_ram() areas, or the linear
 * map.  I/O memory, or anything else, has no struct pages to give.
 */
static int collx_dmabuf_pages(struct collx_mr *mr, struct dma_buf *dmabuf,
			      u64 off, u64 len)
{
	u64 first = off >> PAGE_SHIFT, n, i;
	struct iosys_map map;
	void *va;
	int ret;

	n = (PAGE_ALIGN(off + len) >> PAGE_SHIFT) - first;
	if (n > INT_MAX / sizeof(*mr->pages))
		return -ENOMEM;
	mr->pages = kvcalloc(n, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	ret = collx_dma_buf_vmap(dmabuf, &map);
	if (ret)	/* -EINVAL: the exporter has no kernel mapping */
		return ret == -EINVAL ? -EOPNOTSUPP : ret;
	if (map.is_iomem || !PAGE_ALIGNED(map.vaddr))
		ret = -EOPNOTSUPP;
	for (i = 0; i < n && !ret; i++) {
		va = map.vaddr + ((first + i) << PAGE_SHIFT);
		if (is_vmalloc_addr(va))
			mr->pages[i] = vmalloc_to_page(va);
		else if (virt_addr_valid(va))
			mr->pages[i] = virt_to_page(va);
		if (!mr->pages[i])
			ret = -EOPNOTSUPP;
	}
	collx_dma_buf_vunmap(dmabuf, &map);
	if (!ret)
		mr->npages = n;
	return ret;
}

/**
 * collx_dmabuf_reg() - register a dma-buf
 * @mr: the registration, with @mr->length and @mr->addr set
 * @fd: the dma-buf's fd
 * @offset: the first registered byte in the dma-buf
 *
 * Context: process context.
 * Return: 0, -EBADF, -EINVAL (not a dma-buf, range outside it),
 * -EOPNOTSUPP (the exporter or its memory cannot be used), -ENODEV (the
 * exporter revoked it), -ENOMEM.
 */
int collx_dmabuf_reg(struct collx_mr *mr, int fd, u64 offset)
{
	struct collx_dmabuf *d;
	struct dma_buf *dmabuf;
	u64 end;
	int ret;

	if (!collx_dmabuf_dev)
		return -EOPNOTSUPP;
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf) == -EBADF ? -EBADF : -EINVAL;
	ret = -EINVAL;
	if (check_add_overflow(offset, mr->length, &end) || end > dmabuf->size)
		goto out_put;
	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!d)
		goto out_put;
	spin_lock_init(&d->fence_lock);
	INIT_LIST_HEAD(&d->users);
	mr->dmabuf = dmabuf;
	mr->dmabuf_priv = d;
	mr->dmabuf_off = offset;

	d->attach = dma_buf_dynamic_attach(dmabuf, &collx_dmabuf_dev->dev,
					   &collx_dmabuf_attach_ops, mr);
	if (IS_ERR(d->attach))	/* the exporter refuses dynamic importers */
		d->attach = dma_buf_attach(dmabuf, &collx_dmabuf_dev->dev);
	if (IS_ERR(d->attach)) {
		ret = PTR_ERR(d->attach);
		d->attach = NULL;
		goto out_release;
	}
	d->sgt = dma_buf_map_attachment_unlocked(d->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(d->sgt)) {
		ret = PTR_ERR(d->sgt);
		d->sgt = NULL;
		goto out_release;
	}
	ret = collx_dmabuf_pages(mr, dmabuf, offset, mr->length);
	if (ret)
		goto out_release;
	/* Our own mapping of its pages: no exporter vmap state to share. */
	mr->map = vmap(mr->pages, mr->npages, VM_MAP, PAGE_KERNEL);
	ret = -ENOMEM;
	if (!mr->map)
		goto out_release;
	mr->kva = mr->map + offset_in_page(offset);
	return 0;

out_release:
	collx_dmabuf_release(mr);
	return ret == -ENODEV || ret == -ENOMEM || ret == -EINVAL ? ret :
	       -EOPNOTSUPP;

out_put:
	dma_buf_put(dmabuf);
	return ret;
}

/**
 * collx_dmabuf_release() - let go of a dma-buf registration
 * @mr: the registration; no op uses it
 *
 * Context: process context, not with the buffer's reservation lock.
 */
void collx_dmabuf_release(struct collx_mr *mr)
{
	struct collx_dmabuf *d = collx_dmabuf_of(mr);

	if (mr->map)
		vunmap(mr->map);
	mr->map = NULL;
	mr->kva = NULL;
	kvfree(mr->pages);
	mr->pages = NULL;
	if (d) {
		if (d->nic_sgt)
			dma_buf_unmap_attachment_unlocked(d->nic_attach,
							  d->nic_sgt,
							  DMA_BIDIRECTIONAL);
		if (d->nic_attach)
			dma_buf_detach(mr->dmabuf, d->nic_attach);
		if (d->sgt)
			dma_buf_unmap_attachment_unlocked(d->attach, d->sgt,
							  DMA_BIDIRECTIONAL);
		if (d->attach)
			dma_buf_detach(mr->dmabuf, d->attach);
		collx_dmabuf_signal(d);
		kfree(d);
	}
	mr->dmabuf_priv = NULL;
	if (mr->dmabuf)
		dma_buf_put(mr->dmabuf);
	mr->dmabuf = NULL;
}

/**
 * collx_dmabuf_use() - an op's buffer starts or stops using a registration
 * @b: the buffer, in a dma-buf registration
 * @use: true at map, false at unmap
 *
 * Context: any.
 */
void collx_dmabuf_use(struct collx_buf *b, bool use)
{
	struct collx_dmabuf *d = collx_dmabuf_of(b->mr);
	unsigned long flags;

	spin_lock_irqsave(&d->fence_lock, flags);
	if (use)
		list_add_tail(&b->mr_entry, &d->users);
	else
		list_del_init(&b->mr_entry);
	spin_unlock_irqrestore(&d->fence_lock, flags);
}

static enum dma_data_direction collx_dmabuf_dir(const struct collx_buf *b)
{
	return b->write ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE;
}

/**
 * collx_dmabuf_cpu_begin() - an op's buffer is about to be used by the CPU
 * @b: the buffer, in a dma-buf registration, @b->write set
 *
 * The engine reduces and copies on the CPU, and a virtual-DMA device's
 * (rxe's) transfers are CPU copies too: the exporter makes its memory
 * coherent for the CPU for the op's lifetime (a no-op on x86; cache
 * maintenance for non-coherent memory on arm64), and the core waits for
 * the buffer's pending device writes (and reads, when the op writes it).
 * collx_dmabuf_cpu_end() closes the bracket when the op lets go.
 *
 * Context: process context, no collx lock held.
 * Return: 0, -ERESTARTSYS (a signal while waiting), -EFAULT (the
 * exporter refused).
 */
int collx_dmabuf_cpu_begin(struct collx_buf *b)
{
	int ret = dma_buf_begin_cpu_access(b->mr->dmabuf, collx_dmabuf_dir(b));

	if (ret == -ERESTARTSYS || ret == -EINTR)
		return -ERESTARTSYS;
	if (ret)
		return -EFAULT;
	b->cpu_access = true;
	return 0;
}

/**
 * collx_dmabuf_cpu_end() - the CPU is done with an op's buffer
 * @b: the buffer, after a successful collx_dmabuf_cpu_begin()
 *
 * Context: process context; nothing touches the buffer any more.
 */
void collx_dmabuf_cpu_end(struct collx_buf *b)
{
	int ret = dma_buf_end_cpu_access(b->mr->dmabuf, collx_dmabuf_dir(b));

	if (ret)
		pr_warn_ratelimited("mr %u: the exporter failed to end CPU access: %d\n",
				    b->mr->id, ret);
	b->cpu_access = false;
}

/**
 * collx_dmabuf_idle() - the last op let go of a registration
 * @mr: the registration
 *
 * Signals the fence a move left, so the exporter may take the memory.
 *
 * Context: any.
 */
void collx_dmabuf_idle(struct collx_mr *mr)
{
	collx_dmabuf_signal(collx_dmabuf_of(mr));
}

/* A real NIC: DMA addresses of its own attachment, for bytes [pos, +len). */
static int collx_dmabuf_nic_dmap(struct collx_buf *b, struct ib_device *ibdev,
				 u64 pos)
{
	struct collx_mr *mr = b->mr;
	struct collx_dmabuf *d = collx_dmabuf_of(mr);
	struct collx_dmap *dm = &b->dmap;
	struct scatterlist *sg, *out;
	u64 start = mr->dmabuf_off + pos, end = start + b->bytes, at = 0;
	unsigned int i, n = 0;
	int ret;

	if (!d->nic_attach) {
		d->nic_attach = dma_buf_dynamic_attach(mr->dmabuf,
						       ibdev->dma_device,
						       &collx_dmabuf_attach_ops,
						       mr);
		if (IS_ERR(d->nic_attach)) {
			ret = PTR_ERR(d->nic_attach);
			d->nic_attach = NULL;
			return ret;
		}
		d->nic_sgt = dma_buf_map_attachment_unlocked(d->nic_attach,
							     DMA_BIDIRECTIONAL);
		if (IS_ERR(d->nic_sgt)) {
			ret = PTR_ERR(d->nic_sgt);
			d->nic_sgt = NULL;
			return ret;
		}
		d->nic = ibdev;
	}
	if (d->nic != ibdev || !d->nic_sgt)
		return -EOPNOTSUPP;
	/* Count, then copy, the DMA segments that cover the range. */
	for_each_sgtable_dma_sg(d->nic_sgt, sg, i) {
		if (at < end && at + sg_dma_len(sg) > start)
			n++;
		at += sg_dma_len(sg);
	}
	ret = sg_alloc_table(&dm->sgt, max(n, 1U), GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	out = dm->sgt.sgl;
	at = 0;
	for_each_sgtable_dma_sg(d->nic_sgt, sg, i) {
		u64 a = max(at, start), z = min(at + sg_dma_len(sg), end);

		if (a < z) {
			sg_dma_address(out) = sg_dma_address(sg) + (a - at);
			sg_dma_len(out) = z - a;
			out = sg_next(out);
		}
		at += sg_dma_len(sg);
	}
	dm->sgt.nents = n;
	dm->premapped = true;
	dm->bytes = b->bytes;
	dm->ibdev = ibdev;
	return collx_dmap_index(dm);
}

/**
 * collx_dmabuf_dmap() - map an op's dma-buf buffer for the comm's device
 * @b: the buffer, in a dma-buf registration
 * @ibdev: the device
 * @pos: the buffer's first byte within the registration
 *
 * The one place that chooses by device: a virtual-DMA device (rxe) takes
 * the pages' kernel addresses, as it does for host memory; a real NIC
 * maps the dma-buf through an attachment of its own.
 *
 * Context: process context.
 * Return: 0 or a negative errno (the op then copies through staging).
 */
int collx_dmabuf_dmap(struct collx_buf *b, struct ib_device *ibdev, u64 pos)
{
	struct collx_mr *mr = b->mr;
	u64 in_page = offset_in_page(mr->dmabuf_off) + pos;

	if (READ_ONCE(mr->revoked))
		return -EFAULT;
	if (ib_uses_virt_dma(ibdev))
		return collx_dmap_pages(&b->dmap, ibdev,
					mr->pages + (in_page >> PAGE_SHIFT),
					DIV_ROUND_UP(offset_in_page(in_page) +
						     b->bytes, PAGE_SIZE),
					offset_in_page(in_page), b->bytes);
	return collx_dmabuf_nic_dmap(b, ibdev, pos);
}

/**
 * collx_dmabuf_init() - the stand-in device dma-bufs are imported through
 *
 * Context: module init.  Failure only disables dma-buf registrations.
 */
void collx_dmabuf_init(void)
{
	struct platform_device *pdev;

	collx_fence_context = dma_fence_context_alloc(1);
	pdev = platform_device_register_simple("collx-dmabuf", -1, NULL, 0);
	if (IS_ERR(pdev)) {
		pr_warn("no device to import dma-bufs through: %ld\n",
			PTR_ERR(pdev));
		return;
	}
	if (dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64))) {
		platform_device_unregister(pdev);
		return;
	}
	collx_dmabuf_dev = pdev;
}

/**
 * collx_dmabuf_exit() - remove the stand-in device
 *
 * Context: module exit; no registration is left.
 */
void collx_dmabuf_exit(void)
{
	if (collx_dmabuf_dev)
		platform_device_unregister(collx_dmabuf_dev);
	collx_dmabuf_dev = NULL;
}
