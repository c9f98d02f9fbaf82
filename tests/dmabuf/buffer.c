// SPDX-License-Identifier: GPL-2.0
/*
 * collx_test_exporter: buffers.  Generations of backing pages, export and
 * release, move and revoke, and the poison that catches writes into pages
 * the exporter took back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "texp.h"

#define TEXP_WORDS	(PAGE_SIZE / sizeof(u64))

static atomic_t texp_next_id = ATOMIC_INIT(0);

/* Positional, so that bytes copied from elsewhere show as well. */
static u64 texp_poison_word(u32 gen, unsigned long page, unsigned int word)
{
	return COLLX_TEXP_POISON ^ ((u64)gen << 48) ^
	       ((u64)page * TEXP_WORDS + word);
}

static void texp_pages_free(struct texp_pages *pg)
{
	unsigned long i;

	for (i = 0; i < pg->npages; i++)
		__free_page(pg->pages[i]);
	atomic_long_sub(pg->npages, &texp_counters.pages);
	kvfree(pg->pages);
	kfree(pg);
}

static struct texp_pages *texp_pages_alloc(unsigned long npages, u32 gen)
{
	struct texp_pages *pg;

	if (atomic_long_add_return(npages, &texp_counters.pages) >
	    texp_max_total_pages()) {
		atomic_long_sub(npages, &texp_counters.pages);
		return ERR_PTR(-ENOMEM);
	}
	pg = kzalloc(sizeof(*pg), GFP_KERNEL_ACCOUNT);
	if (!pg)
		goto out_uncharge;
	pg->pages = kvcalloc(npages, sizeof(*pg->pages), GFP_KERNEL_ACCOUNT);
	if (!pg->pages)
		goto out_free_pg;
	INIT_LIST_HEAD(&pg->node);
	pg->gen = gen;
	/* texp_pages_free() undoes exactly the pages allocated so far. */
	for (; pg->npages < npages; pg->npages++) {
		pg->pages[pg->npages] = alloc_page(GFP_KERNEL_ACCOUNT |
						   __GFP_ZERO | __GFP_NOWARN);
		if (!pg->pages[pg->npages] || fatal_signal_pending(current)) {
			if (pg->pages[pg->npages])
				__free_page(pg->pages[pg->npages]);
			atomic_long_sub(npages - pg->npages,
					&texp_counters.pages);
			texp_pages_free(pg);
			return ERR_PTR(-ENOMEM);
		}
		cond_resched();
	}
	return pg;

out_free_pg:
	kfree(pg);
out_uncharge:
	atomic_long_sub(npages, &texp_counters.pages);
	return ERR_PTR(-ENOMEM);
}

static void texp_poison(struct texp_pages *pg)
{
	unsigned long p;
	unsigned int w;
	u64 *v;

	for (p = 0; p < pg->npages; p++) {
		v = kmap_local_page(pg->pages[p]);
		for (w = 0; w < TEXP_WORDS; w++)
			v[w] = texp_poison_word(pg->gen, p, w);
		kunmap_local(v);
		cond_resched();
	}
}

/* Pages of @pg whose poison changed; the first changed byte in *@first. */
static unsigned long texp_poison_check(const struct texp_pages *pg,
				       u64 *first)
{
	unsigned long p, bad = 0;
	unsigned int w;
	u64 *v;

	for (p = 0; p < pg->npages; p++) {
		v = kmap_local_page(pg->pages[p]);
		for (w = 0; w < TEXP_WORDS; w++) {
			if (v[w] != texp_poison_word(pg->gen, p, w))
				break;
		}
		kunmap_local(v);
		if (w < TEXP_WORDS) {
			if (!bad)
				*first = (u64)p * PAGE_SIZE + w * sizeof(u64);
			bad++;
		}
		cond_resched();
	}
	return bad;
}

/* The buffer behind @dmabuf when this module exported it, else NULL. */
struct texp_buf *texp_buf_of(struct dma_buf *dmabuf)
{
	if (dmabuf->ops != &texp_dynamic_ops && dmabuf->ops != &texp_static_ops)
		return NULL;
	return dmabuf->priv;
}

static void texp_release(struct dma_buf *dmabuf)
{
	struct texp_buf *buf = dmabuf->priv;
	struct texp_pages *pg, *tmp;
	unsigned long bad;
	u64 first = 0;

	texp_maps_release(buf);
	list_for_each_entry_safe(pg, tmp, &buf->retired, node) {
		bad = texp_poison_check(pg, &first);
		if (bad) {
			pr_err("buffer %u: %lu pages written after generation %u was taken back (first at byte %llu)\n",
			       buf->id, bad, pg->gen, first);
			atomic64_add(bad, &texp_counters.late_write_pages);
		}
		list_del(&pg->node);
		texp_pages_free(pg);
	}
	if (buf->cur)
		texp_pages_free(buf->cur);
	mutex_destroy(&buf->lock);
	kfree(buf);
	atomic_dec(&texp_counters.buffers);
}

/*
 * Dynamic: the core calls pin/unpin, and with CONFIG_DMABUF_MOVE_NOTIFY
 * unset (Debian's 6.1 and 6.12) it pins for every dynamic mapping too.
 */
const struct dma_buf_ops texp_dynamic_ops = {
	.attach = texp_attach,
	.detach = texp_detach,
	.pin = texp_pin,
	.unpin = texp_unpin,
	.map_dma_buf = texp_map_dma_buf,
	.unmap_dma_buf = texp_unmap_dma_buf,
	.release = texp_release,
	.mmap = texp_mmap,
	.vmap = texp_vmap,
	.vunmap = texp_vunmap,
	.begin_cpu_access = texp_begin_cpu_access,
	.end_cpu_access = texp_end_cpu_access,
};

/* Static: without pin/unpin the core maps once at attach and caches it. */
const struct dma_buf_ops texp_static_ops = {
	.attach = texp_attach,
	.detach = texp_detach,
	.map_dma_buf = texp_map_dma_buf,
	.unmap_dma_buf = texp_unmap_dma_buf,
	.release = texp_release,
	.mmap = texp_mmap,
	.vmap = texp_vmap,
	.vunmap = texp_vunmap,
	.begin_cpu_access = texp_begin_cpu_access,
	.end_cpu_access = texp_end_cpu_access,
};

struct dma_buf *texp_buf_create(u64 length, u32 flags, u32 *id)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct dma_buf *dmabuf;
	struct texp_buf *buf;

	if (!length || !PAGE_ALIGNED(length) ||
	    length >> PAGE_SHIFT > texp_max_buf_pages())
		return ERR_PTR(-EINVAL);
	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->npages = length >> PAGE_SHIFT;
	buf->flags = flags;
	buf->id = atomic_inc_return(&texp_next_id);
	mutex_init(&buf->lock);
	INIT_LIST_HEAD(&buf->retired);
	INIT_LIST_HEAD(&buf->maps);
	buf->cur = texp_pages_alloc(buf->npages, 0);
	if (IS_ERR(buf->cur)) {
		dmabuf = ERR_CAST(buf->cur);
		goto out_free_buf;
	}

	exp.ops = flags & COLLX_TEXP_DYNAMIC ? &texp_dynamic_ops :
					       &texp_static_ops;
	exp.size = length;
	exp.flags = O_RDWR;
	exp.priv = buf;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf))
		goto out_free_pages;
	buf->dmabuf = dmabuf;
	atomic_inc(&texp_counters.buffers);
	atomic64_inc(&texp_counters.created);
	*id = buf->id;
	return dmabuf;

out_free_pages:
	texp_pages_free(buf->cur);
out_free_buf:
	mutex_destroy(&buf->lock);
	kfree(buf);
	return dmabuf;
}

/* Under both locks: zap user mappings, copy, poison, switch generations. */
static void texp_buf_switch(struct texp_buf *buf, struct texp_pages *next)
{
	struct texp_pages *old = buf->cur;
	unsigned long i;

	/* Faults take buf->lock, so nothing maps @old again after this. */
	unmap_mapping_range(buf->dmabuf->file->f_mapping, 0, 0, 1);
	if (next) {
		next->gen = old->gen + 1;
		for (i = 0; i < old->npages; i++)
			copy_highpage(next->pages[i], old->pages[i]);
	}
	texp_poison(old);
	list_add_tail(&old->node, &buf->retired);
	buf->cur = next;
	buf->moves++;
}

/* Counts what the move will meet; fails when it must not happen. */
static int texp_buf_move_check(struct texp_buf *buf,
			       struct collx_texp_move *arg)
{
	struct texp_map *m;
	int ret = 0;

	mutex_lock(&buf->lock);
	if (!buf->cur)
		ret = -ENODEV;
	else if (buf->moves >= COLLX_TEXP_MAX_MOVES)
		ret = -ENOSPC;
	else if ((arg->flags & COLLX_TEXP_MOVE_IF_UNPINNED) &&
		 (buf->pins || buf->vaddr))
		ret = -EBUSY;
	arg->pins = buf->pins;
	arg->vmaps = !!buf->vaddr;
	arg->mappings = 0;
	list_for_each_entry(m, &buf->maps, node)
		arg->mappings++;
	mutex_unlock(&buf->lock);
	return ret;
}

/**
 * texp_buf_move() - move a buffer to new pages, or revoke it
 * @buf: a COLLX_TEXP_DYNAMIC buffer
 * @revoke: take the pages away instead of replacing them
 * @arg: flags and timeout in, counts out (&struct collx_texp_move)
 *
 * Context: process; takes the reservation lock, then &texp_buf.lock.
 * Return: 0 or a negative errno (see &struct collx_texp_move).
 */
int texp_buf_move(struct texp_buf *buf, bool revoke,
		  struct collx_texp_move *arg)
{
	struct dma_buf *dmabuf = buf->dmabuf;
	struct dma_buf_attachment *attach;
	struct texp_pages *next = NULL;
	unsigned int timeout_ms;
	ktime_t start;
	long left;
	int ret;

	if (!(buf->flags & COLLX_TEXP_DYNAMIC))
		return -EOPNOTSUPP;
	timeout_ms = arg->timeout_ms ?: COLLX_TEXP_MOVE_TIMEOUT_MS;
	if (timeout_ms > COLLX_TEXP_MOVE_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (!revoke) {
		next = texp_pages_alloc(buf->npages, 0);
		if (IS_ERR(next))
			return PTR_ERR(next);
	}

	ret = dma_resv_lock_interruptible(dmabuf->resv, NULL);
	if (ret)
		goto out_free;
	ret = texp_buf_move_check(buf, arg);
	if (ret)
		goto out_unlock;

	arg->notified = 0;
	arg->unnotified = 0;
	list_for_each_entry(attach, &dmabuf->attachments, node) {
		if (attach->importer_ops)
			arg->notified++;
		else
			arg->unnotified++;
	}
	dma_buf_move_notify(dmabuf);
	mutex_lock(&buf->lock);
	buf->notified += arg->notified;
	mutex_unlock(&buf->lock);
	atomic64_add(arg->notified, &texp_counters.notified);

	/* Importers that still have DMA in flight hold fences: wait. */
	start = ktime_get();
	left = dma_resv_wait_timeout(dmabuf->resv, DMA_RESV_USAGE_BOOKKEEP,
				     true, msecs_to_jiffies(timeout_ms));
	arg->wait_ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	if (left <= 0) {
		ret = left ? (int)left : -ETIMEDOUT;
		goto out_unlock;
	}

	mutex_lock(&buf->lock);
	texp_buf_switch(buf, next);
	mutex_unlock(&buf->lock);
	next = NULL;
	atomic64_inc(revoke ? &texp_counters.revokes : &texp_counters.moves);
	pr_debug("buffer %u %s: %u notified, %u not, %u mappings now stale\n",
		 buf->id, revoke ? "revoked" : "moved", arg->notified,
		 arg->unnotified, arg->mappings);

out_unlock:
	dma_resv_unlock(dmabuf->resv);
out_free:
	if (!IS_ERR_OR_NULL(next))
		texp_pages_free(next);
	return ret;
}

/**
 * texp_buf_stats() - what a buffer holds now
 * @buf: the buffer
 * @st: filled in (&struct collx_texp_stats)
 *
 * Context: process; takes &texp_buf.lock and reads every retired page.
 */
void texp_buf_stats(struct texp_buf *buf, struct collx_texp_stats *st)
{
	struct texp_pages *pg;
	struct texp_map *m;
	unsigned long bad;
	u64 first = 0;

	mutex_lock(&buf->lock);
	st->length = (u64)buf->npages << PAGE_SHIFT;
	st->generation = buf->moves;
	st->revoked = !buf->cur;
	st->attachments = buf->attachments;
	st->dynamic_attachments = buf->dynamic_attachments;
	st->pins = buf->pins;
	st->mappings = 0;
	st->stale_mappings = 0;
	list_for_each_entry(m, &buf->maps, node) {
		st->mappings++;
		if (m->pages != buf->cur)
			st->stale_mappings++;
	}
	st->vmaps = !!buf->vaddr;
	st->stale_vmaps = buf->vaddr && buf->vmap_pages != buf->cur;
	st->mmaps = atomic_read(&buf->mmaps);
	st->moves = buf->moves;
	st->notified = buf->notified;
	st->retired_pages = 0;
	st->late_write_pages = 0;
	st->late_write_gen = 0;
	st->late_write_offset = 0;
	list_for_each_entry(pg, &buf->retired, node) {
		st->retired_pages += pg->npages;
		bad = texp_poison_check(pg, &first);
		if (bad && !st->late_write_pages) {
			st->late_write_gen = pg->gen;
			st->late_write_offset = first;
		}
		st->late_write_pages += bad;
	}
	mutex_unlock(&buf->lock);
}
