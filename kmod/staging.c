// SPDX-License-Identifier: GPL-2.0
/*
 * collx: staging areas, the slots chunks pass through when they cannot go
 * straight between the users' buffers.
 *
 * Each direction of a connection has one: rx, which the peer writes into
 * (registered for remote write only once the peer proved the comm's
 * secret), and tx, where chunks are copied before they are written.  The
 * pages are charged to the comm creator's RLIMIT_MEMLOCK like pinned user
 * pages, because they are just as unswappable.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "collx_loc.h"

/**
 * collx_staging_free() - release a staging area
 * @ibdev: the device it is mapped on
 * @st: the area; may be partly set up or empty
 *
 * Context: process context; the QP that used it is drained.
 */
void collx_staging_free(struct ib_device *ibdev, struct collx_staging *st)
{
	unsigned int i;

	if (st->mr)
		ib_dereg_mr(st->mr);
	if (st->sgt.nents)
		ib_dma_unmap_sgtable_attrs(ibdev, &st->sgt, DMA_BIDIRECTIONAL,
					   0);
	sg_free_table(&st->sgt);
	if (st->kva)
		vunmap(st->kva);
	for (i = 0; st->pages && i < st->npages; i++)
		if (st->pages[i])
			__free_page(st->pages[i]);
	kvfree(st->pages);
	memset(st, 0, sizeof(*st));
}

/**
 * collx_staging_alloc() - allocate, map and FRWR-map a staging area
 * @ibdev: the connection's device
 * @pd: the connection's PD
 * @st: out
 * @tag: what the area's address in the MR says it is (collx_iova())
 *
 * The MR is mapped but not yet registered: collx_peer_post_reg() posts
 * that, with the access the direction needs.
 *
 * Context: process context.
 * Return: 0, -ENOMEM, or -EINVAL if the device cannot map it in one MR.
 */
int collx_staging_alloc(struct ib_device *ibdev, struct ib_pd *pd,
			struct collx_staging *st, u32 tag)
{
	unsigned int i;
	int ret, n;

	st->bytes = collx_staging_bytes();
	st->npages = DIV_ROUND_UP(st->bytes, PAGE_SIZE);
	if (st->npages > ibdev->attrs.max_fast_reg_page_list_len)
		return -EINVAL;
	st->pages = kvcalloc(st->npages, sizeof(*st->pages), GFP_KERNEL);
	if (!st->pages)
		return -ENOMEM;
	for (i = 0; i < st->npages; i++) {
		st->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!st->pages[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
	}
	st->kva = vmap(st->pages, st->npages, VM_MAP, PAGE_KERNEL);
	if (!st->kva) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = sg_alloc_table_from_pages(&st->sgt, st->pages, st->npages, 0,
					st->bytes, GFP_KERNEL);
	if (ret)
		goto out_free;
	ret = ib_dma_map_sgtable_attrs(ibdev, &st->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		st->sgt.nents = 0;
		goto out_free;
	}
	st->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, st->npages);
	if (IS_ERR(st->mr)) {
		ret = PTR_ERR(st->mr);
		st->mr = NULL;
		goto out_free;
	}
	n = ib_map_mr_sg(st->mr, st->sgt.sgl, st->sgt.nents, NULL, PAGE_SIZE);
	if (n != st->sgt.nents) {
		ret = n < 0 ? n : -EINVAL;
		goto out_free;
	}
	st->mr->iova = collx_iova(st->mr->iova, tag);
	return 0;

out_free:
	collx_staging_free(ibdev, st);
	return ret;
}

/**
 * collx_iova() - the address an MR shows its peer
 * @iova: what ib_map_mr_sg() set: the DMA address of the first byte
 * @tag: which MR of the connection it is
 *
 * Peers see MR addresses; DMA (often physical) addresses are nobody's
 * business, so only the offset in the first page is kept, as the MR
 * needs it, and the rest names the MR (as xprtrdma rewrites its iova).
 *
 * Context: any.
 * Return: the address to register the MR with.
 */
u64 collx_iova(u64 iova, u32 tag)
{
	return (iova & ~PAGE_MASK) | ((u64)tag << 40);
}

/**
 * collx_staging_slot() - where slot @slot of a staging area is
 * @st: the area
 * @slot: the slot, below collx_slots()
 *
 * Context: any.
 * Return: its kernel address.
 */
void *collx_staging_slot(const struct collx_staging *st, u32 slot)
{
	return st->kva + (size_t)slot * collx_slot_bytes();
}

/**
 * collx_staging_sync() - hand bytes of a slot to the device or the CPU
 * @ibdev: the device
 * @st: the area
 * @slot: the slot
 * @bytes: how many from the slot's start
 * @to_device: true after the CPU wrote them, false before it reads them
 *
 * Context: any.
 */
void collx_staging_sync(struct ib_device *ibdev, const struct collx_staging *st,
			u32 slot, u32 bytes, bool to_device)
{
	u64 off = (u64)slot * collx_slot_bytes();
	struct scatterlist *sg;
	unsigned int i;
	u64 pos = 0, len;

	for_each_sgtable_dma_sg(&st->sgt, sg, i) {
		len = sg_dma_len(sg);
		if (bytes && off < pos + len && off + bytes > pos) {
			u64 a = max(off, pos), b = min(off + bytes, pos + len);
			u64 addr = sg_dma_address(sg) + (a - pos);

			enum dma_data_direction dir = DMA_BIDIRECTIONAL;

			if (to_device)
				ib_dma_sync_single_for_device(ibdev, addr,
							      b - a, dir);
			else
				ib_dma_sync_single_for_cpu(ibdev, addr, b - a,
							   dir);
		}
		pos += len;
	}
}
