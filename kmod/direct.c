// SPDX-License-Identifier: GPL-2.0
/*
 * collx: zero copy for outputs inside a registration.
 *
 * When an op's output lies in a registration (COLLX_IOC_MR_REG), its pages
 * are already pinned; at the op's start they are DMA-mapped on the comm's
 * device.  Then every chunk this rank sends is gathered by the NIC
 * straight from the output (no copy into a staging slot), and the output
 * is registered with FRWR for the predecessor, which writes the op's
 * all-gather chunks straight into it (peer.c: DEST).  Reduce-scatter
 * chunks still land in staging slots: they must be combined with what
 * the output holds, not overwrite it.
 *
 * A failed op's mapping is kept until its comm's connections are drained
 * (op.c), because the NIC may still be reading or writing those pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "collx_loc.h"

/**
 * collx_dmap_map() - DMA-map an op's registered output on a device
 * @op: the op, whose output lies in a registration
 * @ibdev: the comm's device
 *
 * Context: process context.
 * Return: 0 or -ENOMEM; on failure the op simply uses staging.
 */
int collx_dmap_map(struct collx_op *op, struct ib_device *ibdev)
{
	struct collx_dmap *dm = &op->dmap;
	struct collx_mr *mr = op->recv.mr;
	unsigned long first, npages;
	struct scatterlist *sg;
	u64 pos, off = 0;
	unsigned int i;
	int ret;

	dm->bytes = op->count * op->esize;
	pos = offset_in_page(mr->addr) + (op->recv.kva - mr->kva);
	first = pos >> PAGE_SHIFT;
	npages = DIV_ROUND_UP(offset_in_page(pos) + dm->bytes, PAGE_SIZE);
	if (npages > UINT_MAX)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages(&dm->sgt, mr->pages + first, npages,
					offset_in_page(pos), dm->bytes,
					GFP_KERNEL);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(ibdev, &dm->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto out_free;
	dm->segs = kvcalloc(dm->sgt.nents, sizeof(*dm->segs), GFP_KERNEL);
	if (!dm->segs) {
		ret = -ENOMEM;
		goto out_unmap;
	}
	for_each_sgtable_dma_sg(&dm->sgt, sg, i) {
		dm->segs[i].off = off;
		dm->segs[i].addr = sg_dma_address(sg);
		off += sg_dma_len(sg);
	}
	dm->nsegs = dm->sgt.nents;
	dm->ibdev = ibdev;
	return 0;

out_unmap:
	ib_dma_unmap_sgtable_attrs(ibdev, &dm->sgt, DMA_BIDIRECTIONAL, 0);
out_free:
	sg_free_table(&dm->sgt);
	return ret;
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
	ib_dma_unmap_sgtable_attrs(dm->ibdev, &dm->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&dm->sgt);
	kvfree(dm->segs);
	memset(dm, 0, sizeof(*dm));
}

/* Index of the segment that holds byte @off. */
static unsigned int collx_dmap_find(const struct collx_dmap *dm, u64 off)
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
 * collx_dmap_sges() - the gather list of a byte range of the output
 * @dm: the mapping
 * @off: first byte
 * @len: bytes, non-zero, within the output
 * @lkey: local key (the PD's local DMA key)
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
		ib_dma_sync_single_for_device(dm->ibdev, addr, take,
					      DMA_BIDIRECTIONAL);
		off += take;
		len -= take;
	}
	return n;
}

/**
 * collx_dmap_sync_for_cpu() - the NIC wrote a byte range; the CPU reads it
 * @dm: the mapping
 * @off: first byte
 * @len: bytes within the output
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
