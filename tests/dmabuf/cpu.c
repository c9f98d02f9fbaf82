// SPDX-License-Identifier: GPL-2.0
/*
 * collx_test_exporter: CPU access.  User mappings fault in the current
 * generation's pages one at a time, under &texp_buf.lock, so a move only
 * has to zap them; the kernel vmap maps one generation and goes stale
 * when the buffer moves.  Importers' begin/end_cpu_access brackets are
 * counted (the pages are cached memory: nothing to flush), so the lab
 * sees that an importer opens them and closes every one it opened.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "texp.h"

static void texp_vm_open(struct vm_area_struct *vma)
{
	struct texp_buf *buf = vma->vm_private_data;

	atomic_inc(&buf->mmaps);
	atomic_inc(&texp_counters.mmaps);
}

static void texp_vm_close(struct vm_area_struct *vma)
{
	struct texp_buf *buf = vma->vm_private_data;

	atomic_dec(&buf->mmaps);
	atomic_dec(&texp_counters.mmaps);
}

static vm_fault_t texp_vm_fault(struct vm_fault *vmf)
{
	struct texp_buf *buf = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	/* Inserted before the lock drops: a move's zap cannot miss it. */
	mutex_lock(&buf->lock);
	if (buf->cur && vmf->pgoff < buf->npages)
		ret = vmf_insert_pfn(vmf->vma, vmf->address,
				     page_to_pfn(buf->cur->pages[vmf->pgoff]));
	mutex_unlock(&buf->lock);
	return ret;
}

static const struct vm_operations_struct texp_vm_ops = {
	.open = texp_vm_open,
	.close = texp_vm_close,
	.fault = texp_vm_fault,
};

int texp_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct texp_buf *buf = dmabuf->priv;
	bool revoked;

	/* A private (copy-on-write) mapping would outlive a move. */
	if (!(vma->vm_flags & (VM_SHARED | VM_MAYSHARE)))
		return -EINVAL;
	mutex_lock(&buf->lock);
	revoked = !buf->cur;
	mutex_unlock(&buf->lock);
	if (revoked)
		return -ENODEV;
	/* PFN mappings hold no page references: the VMA's file pins @buf. */
	vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &texp_vm_ops;
	vma->vm_private_data = buf;
	texp_vm_open(vma);
	return 0;
}

int texp_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct texp_buf *buf = dmabuf->priv;
	void *vaddr;
	int ret = 0;

	mutex_lock(&buf->lock);
	if (!buf->cur) {
		ret = -ENODEV;
		goto out_unlock;
	}
	/* The core shares one vmap among its callers. */
	if (buf->vaddr) {
		ret = -EBUSY;
		goto out_unlock;
	}
	vaddr = vmap(buf->cur->pages, buf->npages, VM_MAP, PAGE_KERNEL);
	if (!vaddr) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	buf->vaddr = vaddr;
	buf->vmap_pages = buf->cur;
	iosys_map_set_vaddr(map, vaddr);
	atomic_inc(&texp_counters.vmaps);
out_unlock:
	mutex_unlock(&buf->lock);
	return ret;
}

void texp_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct texp_buf *buf = dmabuf->priv;

	mutex_lock(&buf->lock);
	if (buf->vaddr && buf->vaddr == map->vaddr) {
		vunmap(buf->vaddr);
		buf->vaddr = NULL;
		buf->vmap_pages = NULL;
		atomic_dec(&texp_counters.vmaps);
	}
	mutex_unlock(&buf->lock);
}

int texp_begin_cpu_access(struct dma_buf *dmabuf,
			  enum dma_data_direction dir)
{
	struct texp_buf *buf = dmabuf->priv;
	bool revoked;

	mutex_lock(&buf->lock);
	revoked = !buf->cur;
	mutex_unlock(&buf->lock);
	if (revoked)
		return -ENODEV;
	atomic_inc(&texp_counters.cpu_access);
	atomic64_inc(&texp_counters.cpu_begins);
	return 0;
}

int texp_end_cpu_access(struct dma_buf *dmabuf, enum dma_data_direction dir)
{
	/* An end without its begin is an importer's bug: count it. */
	if (atomic_dec_if_positive(&texp_counters.cpu_access) < 0)
		atomic64_inc(&texp_counters.cpu_unpaired);
	return 0;
}
