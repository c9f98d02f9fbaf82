/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * dma-buf memory for tests: a memfd sealed against shrinking, turned into
 * a dma-buf by /dev/udmabuf (CONFIG_UDMABUF).
 */
#ifndef COLLX_UDMABUF_H
#define COLLX_UDMABUF_H

#include <stddef.h>

/* A dma-buf fd of @size bytes (a multiple of the page size); -ENOENT when
 * the kernel has no /dev/udmabuf, else a negative errno, with the reason
 * in @err. */
int bench_udmabuf(size_t size, char *err, size_t errlen);

#endif
