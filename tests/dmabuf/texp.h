/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx_test_exporter: objects, counters and cross-file prototypes.
 *
 * Lock order: dmabuf->resv, then texp_buf.lock; faults take texp_buf.lock
 * under the mmap lock, so nothing copies from or to user space with
 * either held.
 */
#ifndef COLLX_TEXP_H
#define COLLX_TEXP_H

#include <linux/atomic.h>
#include <linux/dma-buf.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/types.h>

#include "collx_test_exporter.h"

/**
 * struct texp_pages - one generation of a buffer's backing pages
 * @node: in &texp_buf.retired once taken back
 * @pages: the pages, one per PAGE_SIZE of the buffer
 * @npages: how many
 * @gen: 0 for the first, one more per move
 */
struct texp_pages {
	struct list_head node;
	struct page **pages;
	unsigned long npages;
	u32 gen;
};

/**
 * struct texp_buf - an exported buffer (&dma_buf.priv)
 * @dmabuf: its dma-buf
 * @id: for log lines
 * @flags: COLLX_TEXP_DYNAMIC or _STATIC, and _REFUSE_DYNAMIC
 * @npages: its length in pages
 * @mmaps: user mappings (VMAs) now
 * @lock: protects everything below; nests inside @dmabuf->resv
 * @cur: the pages importers get now; NULL once revoked
 * @retired: generations taken back, kept poisoned until release
 * @maps: &struct texp_map of every mapping not yet unmapped
 * @attachments: attachments now
 * @dynamic_attachments: of them with move_notify
 * @pins: pins held
 * @vaddr: the kernel vmap, if any (the core shares one among its users)
 * @vmap_pages: the generation @vaddr maps
 * @moves: moves and revokes so far
 * @notified: move_notify calls made so far
 */
struct texp_buf {
	struct dma_buf *dmabuf;
	u32 id;
	u32 flags;
	unsigned long npages;
	atomic_t mmaps;
	struct mutex lock;	/* see above */
	struct texp_pages *cur;
	struct list_head retired;
	struct list_head maps;
	unsigned int attachments;
	unsigned int dynamic_attachments;
	unsigned int pins;
	void *vaddr;
	struct texp_pages *vmap_pages;
	u32 moves;
	u32 notified;
};

/**
 * struct texp_map - one map_dma_buf() result
 * @sgt: what the importer got
 * @node: in &texp_buf.maps
 * @pages: the generation it maps
 */
struct texp_map {
	struct sg_table sgt;
	struct list_head node;
	struct texp_pages *pages;
};

/* Module-wide, for debugfs: objects alive now and totals. */
struct texp_counters {
	atomic_t buffers;
	atomic_long_t pages;
	atomic_t attachments;
	atomic_t mappings;
	atomic_t vmaps;
	atomic_t mmaps;
	atomic_t importers;
	atomic_t cpu_access;
	atomic64_t created;
	atomic64_t moves;
	atomic64_t revokes;
	atomic64_t notified;
	atomic64_t late_write_pages;
	atomic64_t cpu_begins;
	atomic64_t cpu_unpaired;
};

extern struct texp_counters texp_counters;

/* main.c */
unsigned long texp_max_buf_pages(void);
unsigned long texp_max_total_pages(void);
struct device *texp_dma_device(void);
long texp_ioctl_dispatch(unsigned int cmd, void __user *uarg, void *ctx,
			 bool importer);
int texp_respond(void __user *uarg, const void *cmd, size_t size);

/* buffer.c */
extern const struct dma_buf_ops texp_dynamic_ops;
extern const struct dma_buf_ops texp_static_ops;
struct texp_buf *texp_buf_of(struct dma_buf *dmabuf);
struct dma_buf *texp_buf_create(u64 length, u32 flags, u32 *id);
int texp_buf_move(struct texp_buf *buf, bool revoke,
		  struct collx_texp_move *arg);
void texp_buf_stats(struct texp_buf *buf, struct collx_texp_stats *st);

/* mapping.c: attach, pin, map_dma_buf and their undoing */
int texp_attach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach);
void texp_detach(struct dma_buf *dmabuf, struct dma_buf_attachment *attach);
int texp_pin(struct dma_buf_attachment *attach);
void texp_unpin(struct dma_buf_attachment *attach);
struct sg_table *texp_map_dma_buf(struct dma_buf_attachment *attach,
				  enum dma_data_direction dir);
void texp_unmap_dma_buf(struct dma_buf_attachment *attach,
			struct sg_table *sgt, enum dma_data_direction dir);
void texp_maps_release(struct texp_buf *buf);
int texp_map_copy(struct texp_buf *buf, struct sg_table *sgt, u64 offset,
		  u8 *kbuf, size_t len, bool write);

/* cpu.c: user mappings and kernel vmaps */
int texp_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma);
int texp_vmap(struct dma_buf *dmabuf, struct iosys_map *map);
void texp_vunmap(struct dma_buf *dmabuf, struct iosys_map *map);
int texp_begin_cpu_access(struct dma_buf *dmabuf,
			  enum dma_data_direction dir);
int texp_end_cpu_access(struct dma_buf *dmabuf, enum dma_data_direction dir);

/* importer.c: the probe importer */
struct texp_imp;
int texp_import(struct collx_texp_import *arg, void __user *uarg);
int texp_imp_map(struct texp_imp *imp, struct collx_texp_imp_map *arg);
int texp_imp_unmap(struct texp_imp *imp);
int texp_imp_vmap(struct texp_imp *imp);
int texp_imp_vunmap(struct texp_imp *imp);
int texp_imp_access(struct texp_imp *imp, struct collx_texp_imp_access *arg);
void texp_imp_status(struct texp_imp *imp, struct collx_texp_imp_status *st);

#endif /* COLLX_TEXP_H */
