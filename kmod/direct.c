// SPDX-License-Identifier: GPL-2.0
/*
 * collx: zero copy for buffers inside a registration.
 *
 * When a collective's buffer lies in a registration, its pages are
 * already pinned (or imported from a dma-buf); at the op's start they are
 * DMA-mapped on the comm's device.  Then every chunk sent from it is
 * gathered by the NIC straight from the buffer, and receive transfers
 * into it may be written by the peer straight into it (dest.c).  A failed
 * op's mapping is kept until its comm's connections are drained, because
 * the NIC may still be reading or writing those pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "collx_loc.h"

/**
 * collx_dmap_index() - index the DMA segments of a mapping
 * @dm: the mapping, @dm->sgt mapped
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int collx_dmap_index(struct collx_dmap *dm)
{
	struct scatterlist *sg;
	unsigned int i;
	u64 off = 0;

	dm->segs = kvcalloc(dm->sgt.nents, sizeof(*dm->segs),
			    GFP_KERNEL_ACCOUNT);
	if (!dm->segs)
		return -ENOMEM;
	for_each_sgtable_dma_sg(&dm->sgt, sg, i) {
		dm->segs[i].off = off;
		dm->segs[i].addr = sg_dma_address(sg);
		off += sg_dma_len(sg);
	}
	dm->nsegs = dm->sgt.nents;
	return 0;
}

/**
 * collx_dmap_pages() - DMA-map a run of pages as a buffer
 * @dm: out
 * @ibdev: the device
 * @pages: the pages holding the buffer
 * @npages: how many
 * @first: offset of the buffer's first byte in the first page
 * @bytes: the buffer's length
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int collx_dmap_pages(struct collx_dmap *dm, struct ib_device *ibdev,
		     struct page **pages, unsigned long npages,
		     unsigned int first, u64 bytes)
{
	int ret;

	if (npages > UINT_MAX)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages(&dm->sgt, pages, npages, first, bytes,
					GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(ibdev, &dm->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto out_free;
	ret = collx_dmap_index(dm);
	if (ret)
		goto out_unmap;
	dm->bytes = bytes;
	dm->ibdev = ibdev;
	return 0;

out_unmap:
	ib_dma_unmap_sgtable_attrs(ibdev, &dm->sgt, DMA_BIDIRECTIONAL, 0);
out_free:
	sg_free_table(&dm->sgt);
	return ret;
}

/**
 * collx_dmap_map() - DMA-map an op's registered buffer on a device
 * @b: the buffer, lying in a registration
 * @ibdev: the comm's device
 *
 * Context: process context.
 * Return: 0, -EOPNOTSUPP if the buffer is not registered, or another
 * negative errno; on failure the op simply uses staging.
 */
int collx_dmap_map(struct collx_buf *b, struct ib_device *ibdev)
{
	struct collx_mr *mr = b->mr;
	unsigned long first, npages;
	u64 pos;

	if (!mr || !b->bytes)
		return -EOPNOTSUPP;
	pos = (b->kva - mr->kva) + (mr->dmabuf ? 0 : offset_in_page(mr->addr));
	if (mr->dmabuf)
		return collx_dmabuf_dmap(b, ibdev, pos);
	first = pos >> PAGE_SHIFT;
	npages = DIV_ROUND_UP(offset_in_page(pos) + b->bytes, PAGE_SIZE);
	return collx_dmap_pages(&b->dmap, ibdev, mr->pages + first, npages,
				offset_in_page(pos), b->bytes);
}

/**
 * collx_dmap_unmap() - undo collx_dmap_map()
 * @dm: the mapping; nothing happens if it is not mapped
 *
 * Context: process context; the NIC no longer touches the pages.
 */
void collx_dmap_unmap(struct collx_dmap *dm)
{
	if (!dm->ibdev)
		return;
	if (!dm->premapped)
		ib_dma_unmap_sgtable_attrs(dm->ibdev, &dm->sgt,
					   DMA_BIDIRECTIONAL, 0);
	sg_free_table(&dm->sgt);
	kvfree(dm->segs);
	memset(dm, 0, sizeof(*dm));
}

/**
 * collx_dmap_find() - index of the segment that holds byte @off
 * @dm: the mapping
 * @off: a byte within it
 *
 * Context: any.
 * Return: the index.
 */
unsigned int collx_dmap_find(const struct collx_dmap *dm, u64 off)
{
	unsigned int lo = 0, hi = dm->nsegs, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (dm->segs[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The part of bytes [@off, @off + @len) inside segment @i, which holds
 * @off: its DMA address in @addr, its length returned.
 */
static u64 collx_dmap_piece(const struct collx_dmap *dm, unsigned int i,
			    u64 off, u64 len, dma_addr_t *addr)
{
	u64 end = i + 1 < dm->nsegs ? dm->segs[i + 1].off : dm->bytes;

	*addr = dm->segs[i].addr + (off - dm->segs[i].off);
	return min(len, end - off);
}

/**
 * collx_dmap_sges() - the gather list of a byte range of the buffer
 * @dm: the mapping
 * @off: first byte
 * @len: bytes, non-zero, within the buffer
 * @lkey: local key (the connection PD's local DMA key)
 * @sge: out
 * @max: room in @sge
 *
 * Also hands the range to the device (dma sync), as the CPU may have
 * written it last.
 *
 * Context: any.
 * Return: entries used, or 0 if the range needs more than @max.
 */
u32 collx_dmap_sges(const struct collx_dmap *dm, u64 off, u32 len, u32 lkey,
		    struct ib_sge *sge, u32 max)
{
	unsigned int i = collx_dmap_find(dm, off);
	dma_addr_t addr;
	u32 n = 0, take;

	for (; len; i++, n++) {
		if (n == max || i >= dm->nsegs)
			return 0;
		take = collx_dmap_piece(dm, i, off, len, &addr);
		sge[n].addr = addr;
		sge[n].length = take;
		sge[n].lkey = lkey;
		off += take;
		len -= take;
	}
	for (i = 0; i < n; i++)
		ib_dma_sync_single_for_device(dm->ibdev, sge[i].addr,
					      sge[i].length, DMA_BIDIRECTIONAL);
	return n;
}

/**
 * collx_dmap_sync_for_cpu() - the NIC wrote a byte range; the CPU reads it
 * @dm: the mapping
 * @off: first byte
 * @len: bytes within the buffer
 *
 * Context: any.
 */
void collx_dmap_sync_for_cpu(const struct collx_dmap *dm, u64 off, u64 len)
{
	unsigned int i = collx_dmap_find(dm, off);
	dma_addr_t addr;
	u64 take;

	for (; len && i < dm->nsegs; i++) {
		take = collx_dmap_piece(dm, i, off, len, &addr);
		ib_dma_sync_single_for_cpu(dm->ibdev, addr, take,
					   DMA_BIDIRECTIONAL);
		off += take;
		len -= take;
	}
}
