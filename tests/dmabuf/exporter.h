/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test helpers for dma-bufs: /dev/collx_test_exporter (create, move,
 * revoke, stats, the probe importer), its debugfs counters, and the
 * kernel's own exporters (udmabuf, the system DMA heap) for comparison.
 *
 * Every function returns 0 (or a new fd) or a negative errno.
 */
#ifndef COLLX_TEST_DMABUF_EXPORTER_H
#define COLLX_TEST_DMABUF_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "collx_test_exporter.h"

#define TEXP_DEVICE	"/dev/collx_test_exporter"
#define TEXP_COUNTERS	"/sys/kernel/debug/collx_test_exporter/stats"
#define TEXP_PARAMS	"/sys/module/collx_test_exporter/parameters"

/* The device, opened once per process. */
int texp_dev(void);

/* A dma-buf of @length bytes (page multiple), COLLX_TEXP_* @flags. */
int texp_create(uint64_t length, uint32_t flags);
/* @out may be NULL. */
int texp_move(int fd, uint32_t flags, uint32_t timeout_ms,
	      struct collx_texp_move *out);
int texp_revoke(int fd, struct collx_texp_move *out);
int texp_stats(int fd, struct collx_texp_stats *st);

/* The probe importer: returns its fd. */
int texp_import(int fd, uint32_t flags, uint32_t fence_ms);
int texp_imp_map(int imp, struct collx_texp_imp_map *out);
int texp_imp_unmap(int imp);
int texp_imp_vmap(int imp);
int texp_imp_vunmap(int imp);
int texp_imp_access(int imp, uint32_t flags, uint64_t offset, void *buf,
		    size_t length);
int texp_imp_status(int imp, struct collx_texp_imp_status *st);

/* A module-wide counter from debugfs ("buffers", "pages", ...). */
int texp_counter(const char *name, long long *value);
/* A module parameter ("max_buf_mib", "max_total_mib"). */
int texp_param(const char *name, long long *value);

/*
 * A dma-buf from one of the exporters tests compare, by name:
 *   dynamic   this module, COLLX_TEXP_DYNAMIC (moves, revokes)
 *   static    this module, COLLX_TEXP_STATIC (the core maps at attach)
 *   refuse    this module, static and refusing dynamic importers
 *   pinonly   this module, dynamic but refusing dynamic importers: every
 *             attachment is static and pinned by the core
 *   udmabuf   /dev/udmabuf over a sealed memfd
 *   heap      /dev/dma_heap/system
 * -ENOENT when that exporter is not there (udmabuf and heap on 6.1),
 * -EINVAL for an unknown name.
 */
int dmabuf_new(const char *kind, size_t length);
/* "dynamic|static|refuse|pinonly|udmabuf|heap" */
extern const char *const dmabuf_kinds;
/* 1 for kinds this module exports (COLLX_TEXP_IOC_* work on them). */
int dmabuf_kind_is_texp(const char *kind);

/* MAP_SHARED read-write mapping of @length bytes at @offset, or NULL. */
void *dmabuf_mmap(int fd, size_t length, size_t offset);
/* DMA_BUF_IOCTL_SYNC around CPU access: @start 1 begins, 0 ends. */
int dmabuf_sync(int fd, int start);
/* The length of a dma-buf, or a negative errno. */
long long dmabuf_length(int fd);

/* Test data: 64-bit word i of pattern @seed, fill, first wrong word (-1). */
uint64_t dmabuf_pattern(uint64_t seed, size_t i);
void dmabuf_fill(void *p, size_t len, uint64_t seed);
long dmabuf_check(const void *p, size_t len, uint64_t seed);

#endif /* COLLX_TEST_DMABUF_EXPORTER_H */
