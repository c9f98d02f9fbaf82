/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx_test_exporter: what differs between the supported kernels, in
 * one place.  Kbuild sets TEXP_HAVE_* from what the headers declare.
 */
#ifndef COLLX_TEXP_COMPAT_H
#define COLLX_TEXP_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/mm.h>

#ifndef TEXP_HAVE_VM_FLAGS_SET
/* Before 6.3 vm_flags is written directly (under the mmap lock). */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#ifdef TEXP_HAVE_DMA_BUF_VMAP_UNLOCKED
/* 6.2+: dma_buf_vmap() wants the reservation lock; these take it. */
#define texp_dma_buf_vmap	dma_buf_vmap_unlocked
#define texp_dma_buf_vunmap	dma_buf_vunmap_unlocked
#else
/* 6.1: dma_buf_vmap() serialises on dmabuf->lock, not the reservation. */
#define texp_dma_buf_vmap	dma_buf_vmap
#define texp_dma_buf_vunmap	dma_buf_vunmap
#endif

#endif /* COLLX_TEXP_COMPAT_H */
