// SPDX-License-Identifier: GPL-2.0
/*
 * collx: user memory.
 *
 * A registration pins a buffer's pages with FOLL_LONGTERM, counts them in
 * the mm's pinned_vm against RLIMIT_MEMLOCK (as ib_umem does) and maps
 * them into the kernel, so collectives on buffers inside it reduce and
 * copy in place.  A buffer outside any registration is bounced: its pages
 * are pinned (short-term) for one collective and mapped the same way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "collx_loc.h"
#include "core/uapi_check.h"

/* Pin @npages pages from @start; all or nothing. */
static int collx_pin(unsigned long start, unsigned long npages,
		     unsigned int gup_flags, struct page **pages)
{
	unsigned long got = 0;
	int ret;

	while (got < npages) {
		ret = pin_user_pages_fast(start + got * PAGE_SIZE,
					  min_t(unsigned long, npages - got,
						INT_MAX / 2),
					  gup_flags, pages + got);
		if (ret <= 0) {
			if (got)
				unpin_user_pages(pages, got);
			return ret ? ret : -EFAULT;
		}
		got += ret;
	}
	return 0;
}

static void *collx_map_pages(struct page **pages, unsigned long npages)
{
	if (npages > UINT_MAX)
		return NULL;
	return vmap(pages, npages, VM_MAP, PAGE_KERNEL);
}

static void collx_mr_free(struct collx_mr *mr)
{
	vunmap((void *)((unsigned long)mr->kva & PAGE_MASK));
	unpin_user_pages_dirty_lock(mr->pages, mr->npages, true);
	atomic64_sub(mr->npages, &mr->mm->pinned_vm);
	atomic64_sub(mr->npages, &collx_stats.pinned_pages);
	mmdrop(mr->mm);
	kvfree(mr->pages);
	kfree(mr);
	atomic_dec(&collx_stats.mrs);
}

/**
 * collx_mr_reg() - COLLX_IOC_MR_REG
 * @cf: the file
 * @cmd: the request; mr_id is filled in
 *
 * Context: process context of the registering task.
 * Return: 0, -EINVAL, -EOVERFLOW, -ENOMEM (including RLIMIT_MEMLOCK),
 * -EFAULT.
 */
int collx_mr_reg(struct collx_file *cf, struct collx_mr_reg *cmd)
{
	unsigned long start, npages, locked, limit;
	struct collx_mr *mr;
	int ret;

	if (cmd->flags || cmd->__reserved || !cmd->length)
		return -EINVAL;
	ret = collx_uapi_check_range(cmd->addr, cmd->length, TASK_SIZE);
	if (ret)
		return ret;
	start = cmd->addr & PAGE_MASK;
	npages = (PAGE_ALIGN(cmd->addr + cmd->length) - start) >> PAGE_SHIFT;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->addr = cmd->addr;
	mr->length = cmd->length;
	mr->npages = npages;
	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ret = -ENOMEM;
		goto out_free;
	}

	mr->mm = current->mm;
	mmgrab(mr->mm);
	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	locked = atomic64_add_return(npages, &mr->mm->pinned_vm);
	if (locked > limit && !capable(CAP_IPC_LOCK)) {
		pr_debug("registration of %lu pages over RLIMIT_MEMLOCK (%lu)\n",
			 npages, limit);
		ret = -ENOMEM;
		goto out_unaccount;
	}

	ret = collx_pin(start, npages, FOLL_WRITE | FOLL_LONGTERM, mr->pages);
	if (ret)
		goto out_unaccount;
	mr->kva = collx_map_pages(mr->pages, npages);
	if (!mr->kva) {
		ret = -ENOMEM;
		goto out_unpin;
	}
	mr->kva += offset_in_page(cmd->addr);

	ret = xa_alloc(&cf->mrs, &mr->id, mr, xa_limit_31b, GFP_KERNEL);
	if (ret)
		goto out_unmap;
	atomic_inc(&collx_stats.mrs);
	atomic64_add(npages, &collx_stats.pinned_pages);
	cmd->mr_id = mr->id;
	return 0;

out_unmap:
	vunmap((void *)((unsigned long)mr->kva & PAGE_MASK));
out_unpin:
	unpin_user_pages(mr->pages, npages);
out_unaccount:
	atomic64_sub(npages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
	kvfree(mr->pages);
out_free:
	kfree(mr);
	return ret;
}

/**
 * collx_mr_dereg() - COLLX_IOC_MR_DEREG
 * @cf: the file
 * @id: mr_id
 *
 * Context: process context.
 * Return: 0, -ENOENT, or -EBUSY while a collective uses it.
 */
int collx_mr_dereg(struct collx_file *cf, u32 id)
{
	struct collx_mr *mr;

	mutex_lock(&cf->lock);
	mr = xa_load(&cf->mrs, id);
	if (!mr) {
		mutex_unlock(&cf->lock);
		return -ENOENT;
	}
	if (atomic_read(&mr->users)) {
		mutex_unlock(&cf->lock);
		return -EBUSY;
	}
	xa_erase(&cf->mrs, id);
	mutex_unlock(&cf->lock);
	collx_mr_free(mr);
	return 0;
}

/**
 * collx_mr_release_all() - drop every registration of a closing file
 * @cf: the file; no collective is in flight any more
 *
 * Context: process context (release; the task's mm may be gone, which is
 * why each registration keeps its own).
 */
void collx_mr_release_all(struct collx_file *cf)
{
	struct collx_mr *mr;
	unsigned long id;

	xa_for_each(&cf->mrs, id, mr) {
		WARN_ON(atomic_read(&mr->users));
		xa_erase(&cf->mrs, id);
		collx_mr_free(mr);
	}
}

/**
 * collx_ubuf_map() - make a user buffer usable by a collective
 * @cf: the file, whose registrations are searched
 * @ub: out
 * @addr: user address
 * @bytes: length, non-zero, range already checked
 * @write: the collective writes it
 *
 * Context: process context of the submitting task.
 * Return: 0, -EFAULT (not mapped as needed), -ENOMEM.
 */
int collx_ubuf_map(struct collx_file *cf, struct collx_ubuf *ub, u64 addr,
		   u64 bytes, bool write)
{
	unsigned long start, npages;
	struct collx_mr *mr;
	unsigned long id;
	int ret;

	memset(ub, 0, sizeof(*ub));
	ub->write = write;

	mutex_lock(&cf->lock);
	xa_for_each(&cf->mrs, id, mr) {
		if (addr >= mr->addr && addr + bytes <= mr->addr + mr->length) {
			atomic_inc(&mr->users);
			ub->mr = mr;
			ub->kva = mr->kva + (addr - mr->addr);
			break;
		}
	}
	mutex_unlock(&cf->lock);
	if (ub->mr)
		return 0;

	start = addr & PAGE_MASK;
	npages = (PAGE_ALIGN(addr + bytes) - start) >> PAGE_SHIFT;
	ub->pages = kvcalloc(npages, sizeof(*ub->pages), GFP_KERNEL);
	if (!ub->pages)
		return -ENOMEM;
	ret = collx_pin(start, npages, write ? FOLL_WRITE : 0, ub->pages);
	if (ret)
		goto out_free;
	ub->npages = npages;
	ub->map = collx_map_pages(ub->pages, npages);
	if (!ub->map) {
		ret = -ENOMEM;
		goto out_unpin;
	}
	ub->kva = ub->map + offset_in_page(addr);
	atomic64_add(npages, &collx_stats.pinned_pages);
	return 0;

out_unpin:
	unpin_user_pages(ub->pages, npages);
	ub->npages = 0;
out_free:
	kvfree(ub->pages);
	ub->pages = NULL;
	return ret;
}

/**
 * collx_ubuf_unmap() - release what collx_ubuf_map() took
 * @ub: the buffer
 *
 * Context: process context (any task: the pages, not the mm, are held).
 */
void collx_ubuf_unmap(struct collx_ubuf *ub)
{
	if (ub->mr) {
		atomic_dec(&ub->mr->users);
		ub->mr = NULL;
	}
	if (ub->map) {
		vunmap(ub->map);
		ub->map = NULL;
	}
	if (ub->npages) {
		unpin_user_pages_dirty_lock(ub->pages, ub->npages, ub->write);
		atomic64_sub(ub->npages, &collx_stats.pinned_pages);
		ub->npages = 0;
	}
	kvfree(ub->pages);
	ub->pages = NULL;
	ub->kva = NULL;
}
