// SPDX-License-Identifier: GPL-2.0
/*
 * collx: user memory.
 *
 * A registration pins a buffer's pages with FOLL_LONGTERM, counts them in
 * the mm's pinned_vm against RLIMIT_MEMLOCK (as ib_umem does), charged
 * before anything is allocated for them, and maps them into the kernel,
 * so collectives on buffers inside it work in place (and zero copy,
 * direct.c).  A registration belongs to the mm that made it.  A buffer
 * outside every registration of its mm is bounced: its pages are pinned
 * and charged the same way for one collective.  File-backed shared
 * mappings other than shmem and hugetlbfs are refused: long-term pins and
 * page-cache writeback do not mix.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <uapi/linux/magic.h>

#include "collx_loc.h"
#include "core/uapi_check.h"

/**
 * collx_memlock_limit() - the caller's RLIMIT_MEMLOCK in pages
 *
 * Context: process context of the task that will pay.
 * Return: the limit, ULONG_MAX with CAP_IPC_LOCK.
 */
unsigned long collx_memlock_limit(void)
{
	if (capable(CAP_IPC_LOCK))
		return ULONG_MAX;
	return rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
}

/**
 * collx_memlock_charge() - count pages against an mm's pinned_vm
 * @mm: the mm that pays
 * @npages: pages
 * @limit: its limit in pages (collx_memlock_limit() of the task)
 *
 * Context: any.
 * Return: 0, or -ENOMEM beyond @limit (nothing charged).
 */
int collx_memlock_charge(struct mm_struct *mm, unsigned long npages,
			 unsigned long limit)
{
	u64 locked = atomic64_add_return(npages, &mm->pinned_vm);

	if (locked > limit || locked < npages) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	atomic64_add(npages, &collx_stats.pinned_pages);
	return 0;
}

/**
 * collx_memlock_uncharge() - undo collx_memlock_charge()
 * @mm: the mm
 * @npages: pages
 *
 * Context: any.
 */
void collx_memlock_uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
	atomic64_sub(npages, &collx_stats.pinned_pages);
}

/* Only anonymous memory, shmem and hugetlbfs may be pinned long-term. */
static int collx_check_vmas(unsigned long start, unsigned long end)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long addr = start;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			ret = -EFAULT;
			break;
		}
		/* tmpfs (shm, memfd) by its magic: shmem_mapping() is not
		 * exported on every kernel we build for.
		 */
		if (vma->vm_file && (vma->vm_flags & VM_SHARED) &&
		    !(vma->vm_flags & VM_HUGETLB) &&
		    file_inode(vma->vm_file)->i_sb->s_magic != TMPFS_MAGIC) {
			ret = -EOPNOTSUPP;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

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
		cond_resched();
	}
	return 0;
}

static void *collx_map_pages(struct page **pages, unsigned long npages)
{
	if (npages > UINT_MAX)
		return NULL;
	return vmap(pages, npages, VM_MAP, PAGE_KERNEL);
}

/*
 * Pin, charge and map the user range [@addr, @addr + @len) for the
 * current task: the common part of registrations and bounced buffers.
 */
static int collx_pin_range(u64 addr, u64 len, bool write, struct page ***pagesp,
			   unsigned long *npagesp, void **mapp)
{
	unsigned long start = addr & PAGE_MASK, npages;
	struct page **pages;
	void *map;
	int ret;

	npages = (PAGE_ALIGN(addr + len) - start) >> PAGE_SHIFT;
	/* The page array must stay a sane kvmalloc(). */
	if (npages > INT_MAX / sizeof(*pages))
		return -ENOMEM;
	ret = collx_memlock_charge(current->mm, npages, collx_memlock_limit());
	if (ret)
		return ret;
	ret = collx_check_vmas(start, start + npages * PAGE_SIZE);
	if (ret)
		goto out_uncharge;
	pages = kvcalloc(npages, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages) {
		ret = -ENOMEM;
		goto out_uncharge;
	}
	ret = collx_pin(start, npages, FOLL_LONGTERM | (write ? FOLL_WRITE : 0),
			pages);
	if (ret)
		goto out_free;
	map = collx_map_pages(pages, npages);
	if (!map) {
		ret = -ENOMEM;
		goto out_unpin;
	}
	*pagesp = pages;
	*npagesp = npages;
	*mapp = map;
	return 0;

out_unpin:
	unpin_user_pages(pages, npages);
out_free:
	kvfree(pages);
out_uncharge:
	collx_memlock_uncharge(current->mm, npages);
	return ret;
}

static void collx_mr_release(struct kref *ref)
{
	struct collx_mr *mr = container_of(ref, struct collx_mr, ref);

	if (mr->dmabuf) {
		collx_dmabuf_release(mr);
	} else {
		vunmap(mr->map);
		unpin_user_pages_dirty_lock(mr->pages, mr->npages, true);
		collx_memlock_uncharge(mr->mm, mr->npages);
		kvfree(mr->pages);
	}
	mmdrop(mr->mm);
	kfree(mr);
	atomic_dec(&collx_stats.mrs);
}

/**
 * collx_mr_put() - drop a reference to a registration
 * @mr: the registration
 *
 * Context: process context.
 */
void collx_mr_put(struct collx_mr *mr)
{
	kref_put(&mr->ref, collx_mr_release);
}

/**
 * collx_mr_reg() - COLLX_IOC_MR_REG
 * @cf: the file
 * @cmd: the request; mr_id is filled in
 *
 * Context: process context of the registering task.
 * Return: 0 or a negative errno (see the uapi header).
 */
int collx_mr_reg(struct collx_file *cf, struct collx_mr_reg *cmd)
{
	struct collx_mr *mr;
	u32 id;
	int ret;

	if (cmd->flags & ~COLLX_MR_F_DMABUF)
		return -EOPNOTSUPP;
	if (cmd->__reserved || cmd->__reserved2 || !cmd->length ||
	    cmd->length > COLLX_MAX_BYTES)
		return -EINVAL;
	if (!(cmd->flags & COLLX_MR_F_DMABUF) &&
	    (cmd->dmabuf_fd || cmd->dmabuf_offset))
		return -EINVAL;
	ret = collx_uapi_check_range(cmd->addr, cmd->length,
				     cmd->flags & COLLX_MR_F_DMABUF ? U64_MAX :
				     TASK_SIZE);
	if (ret)
		return ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return -ENOMEM;
	kref_init(&mr->ref);
	mr->addr = cmd->addr;
	mr->length = cmd->length;
	mr->mm = current->mm;
	mmgrab(mr->mm);

	ret = collx_obj_reserve(&cf->mrs, &cf->nmrs, COLLX_MAX_MRS_PER_FD, &id,
				NULL, -EMFILE);
	if (ret)
		goto out_free;

	if (cmd->flags & COLLX_MR_F_DMABUF) {
		ret = collx_dmabuf_reg(mr, cmd->dmabuf_fd, cmd->dmabuf_offset);
	} else {
		ret = collx_pin_range(cmd->addr, cmd->length, true, &mr->pages,
				      &mr->npages, &mr->map);
		if (!ret)
			mr->kva = mr->map + offset_in_page(cmd->addr);
	}
	if (ret)
		goto out_abort;

	mr->id = id;
	atomic_inc(&collx_stats.mrs);
	cmd->mr_id = id;
	collx_obj_finalize(&cf->mrs, id, mr);
	return 0;

out_abort:
	collx_obj_abort(&cf->mrs, &cf->nmrs, id);
out_free:
	mmdrop(mr->mm);
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

	xa_lock(&cf->mrs);
	mr = xa_load(&cf->mrs, id);
	if (mr && atomic_read(&mr->busy)) {
		xa_unlock(&cf->mrs);
		return -EBUSY;
	}
	if (mr)
		__xa_erase(&cf->mrs, id);
	xa_unlock(&cf->mrs);
	if (!mr)
		return -ENOENT;
	atomic_dec(&cf->nmrs);
	collx_mr_put(mr);
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
		mr = collx_obj_remove(&cf->mrs, &cf->nmrs, id);
		if (mr)
			collx_mr_put(mr);
	}
}

/* The registration of the current mm holding [@addr, @addr + @len), busy. */
static struct collx_mr *collx_mr_find(struct collx_file *cf, u64 addr, u64 len)
{
	struct collx_mr *mr, *found = NULL;
	unsigned long id;

	xa_lock(&cf->mrs);
	xa_for_each(&cf->mrs, id, mr) {
		if (mr->mm == current->mm && addr >= mr->addr &&
		    addr + len <= mr->addr + mr->length) {
			kref_get(&mr->ref);
			atomic_inc(&mr->busy);
			found = mr;
			break;
		}
	}
	xa_unlock(&cf->mrs);
	return found;
}

/**
 * collx_buf_map() - make a user buffer usable by a collective
 * @cf: the file, whose registrations are searched
 * @b: out
 * @addr: user address
 * @bytes: length, non-zero; @addr + @bytes does not wrap
 * @write: the collective writes it
 *
 * Context: process context of the submitting task.
 * Return: 0, -EINVAL (beyond the user address space and in no dma-buf
 * registration), -EFAULT (not mapped as needed, or a dma-buf that was
 * revoked or whose exporter refuses CPU access), -ERESTARTSYS (a signal
 * while a dma-buf's pending device work was waited for), -EOPNOTSUPP (a
 * file mapping that cannot be pinned), -ENOMEM (including
 * RLIMIT_MEMLOCK).
 */
int collx_buf_map(struct collx_file *cf, struct collx_buf *b, u64 addr,
		  u64 bytes, bool write)
{
	struct collx_mr *mr;
	int ret;

	memset(b, 0, sizeof(*b));
	INIT_LIST_HEAD(&b->mr_entry);
	b->write = write;
	b->bytes = bytes;
	mr = collx_mr_find(cf, addr, bytes);
	if (mr) {
		b->mr = mr;
		if (READ_ONCE(mr->revoked) || !mr->kva) {
			collx_buf_unmap(b);
			return -EFAULT;
		}
		if (mr->dmabuf) {
			ret = collx_dmabuf_cpu_begin(b);
			if (ret) {
				collx_buf_unmap(b);
				return ret;
			}
		}
		b->kva = mr->kva + (addr - mr->addr);
		return 0;
	}
	/* Not in a registration: host memory, in the user address space. */
	ret = collx_uapi_check_range(addr, bytes, TASK_SIZE);
	if (ret)
		return ret;
	ret = collx_pin_range(addr, bytes, write, &b->pages, &b->npages,
			      &b->map);
	if (ret)
		return ret;
	b->pinned = b->npages;
	b->mm = current->mm;
	mmgrab(b->mm);
	b->kva = b->map + offset_in_page(addr);
	return 0;
}

/**
 * collx_buf_alloc() - kernel scratch for a collective
 * @b: out
 * @bytes: length, non-zero
 *
 * Charged to the caller's memory cgroup.
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int collx_buf_alloc(struct collx_buf *b, u64 bytes)
{
	memset(b, 0, sizeof(*b));
	INIT_LIST_HEAD(&b->mr_entry);
	/*
	 * Up to COLLX_MAX_BYTES: past INT_MAX kvmalloc() refuses, and must
	 * not WARN for what a caller asked (panic_on_warn).
	 */
	b->map = kvmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!b->map)
		return -ENOMEM;
	b->kva = b->map;
	b->bytes = bytes;
	b->write = true;
	return 0;
}

/**
 * collx_buf_unmap() - release what collx_buf_map() or collx_buf_alloc()
 *	took
 * @b: the buffer
 *
 * Context: process context (any task: the pages, not the mm, are held).
 */
void collx_buf_unmap(struct collx_buf *b)
{
	collx_dmap_unmap(&b->dmap);
	if (b->mr) {
		if (b->cpu_access)
			collx_dmabuf_cpu_end(b);
		if (b->mr->dmabuf && !list_empty(&b->mr_entry))
			collx_dmabuf_use(b, false);
		if (atomic_dec_and_test(&b->mr->busy) && b->mr->dmabuf)
			collx_dmabuf_idle(b->mr);
		collx_mr_put(b->mr);
		b->mr = NULL;
	} else if (b->npages) {
		vunmap(b->map);
		unpin_user_pages_dirty_lock(b->pages, b->npages, b->write);
		collx_memlock_uncharge(b->mm, b->pinned);
		mmdrop(b->mm);
		kvfree(b->pages);
	} else {
		kvfree(b->map);
	}
	memset(b, 0, sizeof(*b));
}
