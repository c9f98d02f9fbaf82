/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: what differs between the supported kernels, in one place.
 * Kbuild sets COLLX_HAVE_* from what the headers being built against
 * declare.
 */
#ifndef COLLX_COMPAT_H
#define COLLX_COMPAT_H

#include <linux/dma-buf.h>

#ifdef COLLX_HAVE_DMA_BUF_VMAP_UNLOCKED
/* 6.2+: dma_buf_vmap() wants the reservation lock; these take it. */
#define collx_dma_buf_vmap	dma_buf_vmap_unlocked
#define collx_dma_buf_vunmap	dma_buf_vunmap_unlocked
#else
/* 6.1: dma_buf_vmap() serialises on dmabuf->lock, not the reservation. */
#define collx_dma_buf_vmap	dma_buf_vmap
#define collx_dma_buf_vunmap	dma_buf_vunmap
#endif

#endif /* COLLX_COMPAT_H */
