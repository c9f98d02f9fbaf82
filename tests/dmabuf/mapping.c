// SPDX-License-Identifier: GPL-2.0
/*
 * collx_test_exporter: the importer-facing dma_buf_ops.  Attach, pin and
 * map_dma_buf hand out the current generation's pages; every mapping is
 * remembered with the generation it maps, so stale ones can be counted and
 * the probe importer can touch what its mapping maps (texp_map_copy()).
 *
 * The core calls pin, unpin, map and unmap with the reservation lock held
 * (6.12 always; 6.1 only for dynamic attachments or exporters), attach and
 * detach without it: these take only &texp_buf.lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/slab.h>

#include "texp.h"

int texp_attach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	struct texp_buf *buf = dmabuf->priv;
	int ret = 0;

	/* The DMA API WARNs on a device without a mask: refuse it here. */
	if (!attach->dev->dma_mask)
		return -EINVAL;
	if (attach->importer_ops && (buf->flags & COLLX_TEXP_REFUSE_DYNAMIC))
		return -EOPNOTSUPP;
	mutex_lock(&buf->lock);
	if (!buf->cur) {
		ret = -ENODEV;
	} else {
		buf->attachments++;
		if (attach->importer_ops)
			buf->dynamic_attachments++;
	}
	mutex_unlock(&buf->lock);
	if (!ret)
		atomic_inc(&texp_counters.attachments);
	return ret;
}

void texp_detach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach)
{
	struct texp_buf *buf = dmabuf->priv;

	mutex_lock(&buf->lock);
	buf->attachments--;
	if (attach->importer_ops)
		buf->dynamic_attachments--;
	mutex_unlock(&buf->lock);
	atomic_dec(&texp_counters.attachments);
}

int texp_pin(struct dma_buf_attachment *attach)
{
	struct texp_buf *buf = attach->dmabuf->priv;
	int ret = 0;

	mutex_lock(&buf->lock);
	if (buf->cur)
		buf->pins++;
	else
		ret = -ENODEV;
	mutex_unlock(&buf->lock);
	return ret;
}

void texp_unpin(struct dma_buf_attachment *attach)
{
	struct texp_buf *buf = attach->dmabuf->priv;

	mutex_lock(&buf->lock);
	if (buf->pins)
		buf->pins--;
	else
		pr_err("buffer %u: unpin without a pin\n", buf->id);
	mutex_unlock(&buf->lock);
}

struct sg_table *texp_map_dma_buf(struct dma_buf_attachment *attach,
				  enum dma_data_direction dir)
{
	struct texp_buf *buf = attach->dmabuf->priv;
	struct texp_map *m;
	int ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&buf->lock);
	if (!buf->cur) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = sg_alloc_table_from_pages(&m->sgt, buf->cur->pages, buf->npages,
					0, buf->npages << PAGE_SHIFT,
					GFP_KERNEL);
	if (ret)
		goto out_unlock;
	ret = dma_map_sgtable(attach->dev, &m->sgt, dir, 0);
	if (ret)
		goto out_free_table;
	m->pages = buf->cur;
	list_add_tail(&m->node, &buf->maps);
	mutex_unlock(&buf->lock);
	atomic_inc(&texp_counters.mappings);
	return &m->sgt;

out_free_table:
	sg_free_table(&m->sgt);
out_unlock:
	mutex_unlock(&buf->lock);
	kfree(m);
	return ERR_PTR(ret);
}

void texp_unmap_dma_buf(struct dma_buf_attachment *attach,
			struct sg_table *sgt, enum dma_data_direction dir)
{
	struct texp_buf *buf = attach->dmabuf->priv;
	struct texp_map *m = container_of(sgt, struct texp_map, sgt);

	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	mutex_lock(&buf->lock);
	list_del(&m->node);
	mutex_unlock(&buf->lock);
	sg_free_table(sgt);
	kfree(m);
	atomic_dec(&texp_counters.mappings);
}

/**
 * texp_map_copy() - copy to or from the pages a mapping of @buf maps
 * @buf: the buffer
 * @sgt: what map_dma_buf() gave an importer of it, current or stale
 * @offset: byte offset into the buffer
 * @kbuf: @len bytes, source or destination
 * @len: how many
 * @write: copy @kbuf into the pages
 *
 * The importer side must not take pages from @sgt: CONFIG_DMABUF_DEBUG
 * scrambles the page links of every table the core hands out (a KASAN oops
 * on the debug kernel).  This module's own importer asks the exporter side,
 * which remembers the generation each mapping maps; retired generations
 * live until the buffer does.
 *
 * Context: process; takes &texp_buf.lock (after the reservation lock).
 * Return: 0, -EOPNOTSUPP if @sgt is no mapping of @buf, or -EINVAL if the
 * range runs past the buffer.
 */
int texp_map_copy(struct texp_buf *buf, struct sg_table *sgt, u64 offset,
		  u8 *kbuf, size_t len, bool write)
{
	size_t off = offset & ~PAGE_MASK, n;
	unsigned long p = offset >> PAGE_SHIFT;
	struct texp_pages *pg = NULL;
	struct texp_map *m;
	int ret = 0;
	u8 *v;

	mutex_lock(&buf->lock);
	list_for_each_entry(m, &buf->maps, node) {
		if (&m->sgt == sgt) {
			pg = m->pages;
			break;
		}
	}
	if (!pg)
		ret = -EOPNOTSUPP;
	for (; pg && len; p++, off = 0) {
		if (p >= pg->npages) {
			ret = -EINVAL;
			break;
		}
		n = min_t(size_t, len, PAGE_SIZE - off);
		v = kmap_local_page(pg->pages[p]);
		if (write)
			memcpy(v + off, kbuf, n);
		else
			memcpy(kbuf, v + off, n);
		kunmap_local(v);
		kbuf += n;
		len -= n;
	}
	mutex_unlock(&buf->lock);
	return ret;
}

/*
 * At release every importer has detached, and detach unmaps what the core
 * cached; a mapping left now was leaked by its importer.  Its device may
 * be gone, so only the tables are freed.
 */
void texp_maps_release(struct texp_buf *buf)
{
	struct texp_map *m, *tmp;

	list_for_each_entry_safe(m, tmp, &buf->maps, node) {
		pr_err("buffer %u: released with a mapping its importer never unmapped\n",
		       buf->id);
		list_del(&m->node);
		sg_free_table(&m->sgt);
		kfree(m);
		atomic_dec(&texp_counters.mappings);
	}
}
