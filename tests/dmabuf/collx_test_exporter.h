/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * collx_test_exporter: a dma-buf exporter for tests, and a probe importer.
 *
 * User-space ABI of /dev/collx_test_exporter.  Lab use only.
 */
#ifndef _UAPI_COLLX_TEST_EXPORTER_H
#define _UAPI_COLLX_TEST_EXPORTER_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define COLLX_TEXP_TYPE	'X'

/**
 * DOC: General ioctl format
 *
 * As /dev/collx (include/uapi/linux/collx.h): every struct begins with
 * ``__u32 size``; the kernel reads min(size, its own size) bytes with
 * copy_struct_from_user() semantics and writes back up to @size bytes.
 *
 * Errors common to every ioctl:
 *
 * - ENOTTY: unknown ioctl number.
 * - E2BIG: non-zero bytes beyond the struct this module knows.
 * - EOPNOTSUPP: an unknown flag.
 * - EINVAL: @size below the mandatory part, a reserved field not zero, a
 *   value out of range, or an fd that is not a dma-buf of this module
 *   where one is required.
 * - EBADF: an fd that is not open.
 * - EFAULT: a user pointer could not be read or written.
 * - ENOMEM: out of memory, or over the module's page budget
 *   (``max_total_mib``).
 */

enum {
	COLLX_TEXP_CMD_BASE = 0xc0,
	COLLX_TEXP_CMD_CREATE = COLLX_TEXP_CMD_BASE,
	COLLX_TEXP_CMD_MOVE,
	COLLX_TEXP_CMD_REVOKE,
	COLLX_TEXP_CMD_STATS,
	COLLX_TEXP_CMD_IMPORT,
	/* On a probe importer's fd. */
	COLLX_TEXP_CMD_IMP_MAP,
	COLLX_TEXP_CMD_IMP_UNMAP,
	COLLX_TEXP_CMD_IMP_VMAP,
	COLLX_TEXP_CMD_IMP_VUNMAP,
	COLLX_TEXP_CMD_IMP_ACCESS,
	COLLX_TEXP_CMD_IMP_STATUS,
};

/* Largest buffer: the module parameter max_buf_mib (default 64 MiB). */

/* &collx_texp_create.flags: pin/unpin, moves announced by move_notify. */
#define COLLX_TEXP_DYNAMIC		0x1U
/* ... no pin/unpin: the dma-buf core maps at attach; never moves. */
#define COLLX_TEXP_STATIC		0x2U
/* ... attach() fails with EOPNOTSUPP for importers with move_notify. */
#define COLLX_TEXP_REFUSE_DYNAMIC	0x4U

/**
 * struct collx_texp_create - COLLX_TEXP_IOC_CREATE
 * @size: sizeof(struct collx_texp_create)
 * @flags: COLLX_TEXP_DYNAMIC or COLLX_TEXP_STATIC (exactly one), and
 *	optionally COLLX_TEXP_REFUSE_DYNAMIC
 * @length: bytes, a non-zero multiple of the page size, at most
 *	``max_buf_mib``
 * @fd: out, the dma-buf (O_RDWR, close-on-exec); mmap() it MAP_SHARED
 * @id: out, the buffer's id in this module's log lines
 *
 * Exports @length bytes of zeroed system pages.  The buffer supports
 * mmap(), vmap() and map_dma_buf() for any device with a DMA mask (others
 * are refused at attach with EINVAL).
 */
struct collx_texp_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 length;
	__s32 fd;
	__u32 id;
};

#define COLLX_TEXP_IOC_CREATE	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_CREATE)

/* &collx_texp_move.flags: fail with EBUSY while pinned or vmapped. */
#define COLLX_TEXP_MOVE_IF_UNPINNED	0x1U

/* Default and largest &collx_texp_move.timeout_ms. */
#define COLLX_TEXP_MOVE_TIMEOUT_MS	10000U
#define COLLX_TEXP_MOVE_MAX_TIMEOUT_MS	60000U
/* Moves and revokes per buffer: every old generation is kept poisoned. */
#define COLLX_TEXP_MAX_MOVES		16

/**
 * struct collx_texp_move - COLLX_TEXP_IOC_MOVE and COLLX_TEXP_IOC_REVOKE
 * @size: sizeof(struct collx_texp_move)
 * @flags: COLLX_TEXP_MOVE_IF_UNPINNED or 0
 * @fd: a COLLX_TEXP_DYNAMIC dma-buf of this module
 * @timeout_ms: how long to wait for the importers' fences; 0 means
 *	COLLX_TEXP_MOVE_TIMEOUT_MS, at most COLLX_TEXP_MOVE_MAX_TIMEOUT_MS
 * @notified: out, attachments told through move_notify
 * @unnotified: out, attachments without move_notify (static importers,
 *	whose mapping the core made at attach): they were not told
 * @pins: out, pins held when the buffer moved
 * @mappings: out, mappings that existed when it moved (all now stale)
 * @vmaps: out, 1 when a kernel vmap existed when it moved (now stale)
 * @__reserved: must be 0
 * @wait_ns: out, time spent waiting for the importers' fences
 *
 * MOVE replaces the backing pages by new ones holding the same bytes;
 * REVOKE takes them away for good.  Under the reservation lock: every
 * importer is told (dma_buf_move_notify()), the fences in the
 * reservation object (any usage) are waited for, user mappings are
 * zapped (they fault in the new pages; after a revoke they get SIGBUS),
 * the content is copied and the old pages are filled with a poison
 * pattern and kept until the buffer is released, so a later write into
 * them shows in COLLX_TEXP_IOC_STATS.  Mappings and vmaps taken before
 * stay valid memory but must not be used.  A move does not wait for
 * pins (it models an exporter that moves what importers map, as a kernel
 * with CONFIG_DMABUF_MOVE_NOTIFY does); COLLX_TEXP_MOVE_IF_UNPINNED does.
 *
 * After a revoke, attach, pin, map_dma_buf, vmap and mmap fail with
 * ENODEV.  Errors: EOPNOTSUPP (a COLLX_TEXP_STATIC buffer), ENODEV
 * (already revoked), EBUSY (COLLX_TEXP_MOVE_IF_UNPINNED and pinned or
 * vmapped), ENOSPC (COLLX_TEXP_MAX_MOVES reached), ETIMEDOUT (a fence
 * did not signal in time: importers were told, nothing moved), EINTR.
 */
struct collx_texp_move {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 timeout_ms;
	__u32 notified;
	__u32 unnotified;
	__u32 pins;
	__u32 mappings;
	__u32 vmaps;
	__u32 __reserved;
	__aligned_u64 wait_ns;
};

#define COLLX_TEXP_IOC_MOVE	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_MOVE)
#define COLLX_TEXP_IOC_REVOKE	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_REVOKE)

/* Poison of taken-back pages: 64-bit word i holds this ^ (gen << 48) ^ i. */
#define COLLX_TEXP_POISON	0x7e57deadc011b0f0ULL

/**
 * struct collx_texp_stats - COLLX_TEXP_IOC_STATS
 * @size: sizeof(struct collx_texp_stats)
 * @flags: must be 0
 * @fd: a dma-buf of this module
 * @generation: out, moves so far (the current pages' generation)
 * @length: out, the buffer's length
 * @attachments: out, attachments now
 * @dynamic_attachments: out, of them with move_notify
 * @mappings: out, map_dma_buf() results not yet unmapped
 * @stale_mappings: out, of them of pages taken back (a move or revoke
 *	came after them)
 * @pins: out, pins held
 * @vmaps: out, 1 while a kernel vmap exists
 * @stale_vmaps: out, 1 when that vmap is of pages taken back
 * @mmaps: out, user mappings (VMAs) now
 * @moves: out, moves and revokes so far
 * @revoked: out, 1 once revoked
 * @notified: out, move_notify calls made to attachments so far
 * @retired_pages: out, pages taken back and kept poisoned
 * @late_write_pages: out, of them whose poison changed: something wrote
 *	into memory the exporter had taken back
 * @late_write_gen: out, the generation of the first such page
 * @late_write_offset: out, byte offset in the buffer of the first changed
 *	word
 */
struct collx_texp_stats {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 generation;
	__aligned_u64 length;
	__u32 attachments;
	__u32 dynamic_attachments;
	__u32 mappings;
	__u32 stale_mappings;
	__u32 pins;
	__u32 vmaps;
	__u32 stale_vmaps;
	__u32 mmaps;
	__u32 moves;
	__u32 revoked;
	__u32 notified;
	__u32 retired_pages;
	__u32 late_write_pages;
	__u32 late_write_gen;
	__aligned_u64 late_write_offset;
};

#define COLLX_TEXP_IOC_STATS	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_STATS)

/* &collx_texp_import.flags: attach with move_notify (a dynamic importer). */
#define COLLX_TEXP_IMP_DYNAMIC		0x1U
/* ... and dma_buf_pin() the attachment (needs COLLX_TEXP_IMP_DYNAMIC). */
#define COLLX_TEXP_IMP_PIN		0x2U
/* ... on move_notify keep using the mapping: a broken importer. */
#define COLLX_TEXP_IMP_KEEP_STALE	0x4U

/* Longest &collx_texp_import.fence_ms. */
#define COLLX_TEXP_MAX_FENCE_MS		10000U

/**
 * struct collx_texp_import - COLLX_TEXP_IOC_IMPORT
 * @size: sizeof(struct collx_texp_import)
 * @flags: COLLX_TEXP_IMP_*
 * @fd: any dma-buf (this module's, udmabuf, a DMA heap's)
 * @fence_ms: with a dma-buf of this module: on each move_notify add a
 *	fence to its reservation object that signals @fence_ms later (an
 *	importer finishing DMA in flight), at most COLLX_TEXP_MAX_FENCE_MS
 * @imp_fd: out, the probe importer: COLLX_TEXP_IOC_IMP_* on it; closing
 *	it unmaps, unpins and detaches
 * @__reserved: must be 0
 *
 * Attaches the dma-buf as an in-kernel importer would, for a platform
 * device with a 64-bit DMA mask, so tests can watch what an importer
 * sees.  The attach error is returned as is (EOPNOTSUPP from an exporter
 * refusing dynamic importers, ENODEV after a revoke).
 */
struct collx_texp_import {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 fence_ms;
	__s32 imp_fd;
	__u32 __reserved;
};

#define COLLX_TEXP_IOC_IMPORT	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMPORT)

/**
 * struct collx_texp_imp_cmd - COLLX_TEXP_IOC_IMP_UNMAP, _VMAP, _VUNMAP
 * @size: sizeof(struct collx_texp_imp_cmd)
 * @flags: must be 0
 *
 * UNMAP: dma_buf_unmap_attachment() of the mapping (ENXIO: none).  VMAP:
 * dma_buf_vmap() (EBUSY: already; the exporter's error as is, and note
 * that the dma-buf core WARNs once when an exporter's vmap fails).
 * VUNMAP: dma_buf_vunmap() (ENXIO: none).
 */
struct collx_texp_imp_cmd {
	__u32 size;
	__u32 flags;
};

/**
 * struct collx_texp_imp_map - COLLX_TEXP_IOC_IMP_MAP
 * @size: sizeof(struct collx_texp_imp_map)
 * @flags: must be 0
 * @nents: out, DMA segments of the mapping
 * @__reserved: must be 0
 * @bytes: out, their total length
 *
 * dma_buf_map_attachment(DMA_BIDIRECTIONAL) under the reservation lock;
 * the exporter's error as is (ENODEV after a revoke).  EBUSY: mapped.
 */
struct collx_texp_imp_map {
	__u32 size;
	__u32 flags;
	__u32 nents;
	__u32 __reserved;
	__aligned_u64 bytes;
};

#define COLLX_TEXP_IOC_IMP_MAP	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_MAP)
#define COLLX_TEXP_IOC_IMP_UNMAP \
	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_UNMAP)
#define COLLX_TEXP_IOC_IMP_VMAP	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_VMAP)
#define COLLX_TEXP_IOC_IMP_VUNMAP \
	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_VUNMAP)

/* &collx_texp_imp_access.flags: write (else read). */
#define COLLX_TEXP_ACCESS_WRITE		0x1U
/* ... through the vmap (else through the mapping's pages). */
#define COLLX_TEXP_ACCESS_VMAP		0x2U

/* Longest &collx_texp_imp_access.length. */
#define COLLX_TEXP_MAX_ACCESS		0x100000U

/**
 * struct collx_texp_imp_access - COLLX_TEXP_IOC_IMP_ACCESS
 * @size: sizeof(struct collx_texp_imp_access)
 * @flags: COLLX_TEXP_ACCESS_*
 * @offset: byte offset in the dma-buf
 * @length: bytes, 1..COLLX_TEXP_MAX_ACCESS, within the dma-buf
 * @ptr: user buffer to read from (write) or into (read)
 *
 * The CPU touches the memory as the importer sees it: the pages its
 * mapping maps (only for dma-bufs of this module, which remembers them per
 * mapping: an importer must not read pages out of a scatterlist, which
 * CONFIG_DMABUF_DEBUG scrambles) or through its vmap.  ENXIO: not
 * mapped (vmapped); ESTALE: a move_notify came after the mapping (vmap)
 * was made, unless COLLX_TEXP_IMP_KEEP_STALE.
 */
struct collx_texp_imp_access {
	__u32 size;
	__u32 flags;
	__aligned_u64 offset;
	__aligned_u64 length;
	__aligned_u64 ptr;
};

#define COLLX_TEXP_IOC_IMP_ACCESS \
	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_ACCESS)

/**
 * struct collx_texp_imp_status - COLLX_TEXP_IOC_IMP_STATUS
 * @size: sizeof(struct collx_texp_imp_status)
 * @flags: must be 0
 * @dynamic: out, 1: the attachment has move_notify
 * @exporter_dynamic: out, 1: the exporter has pin/unpin
 * @premapped: out, 1: the core mapped at attach and caches that mapping
 *	(exactly one of importer and exporter is dynamic)
 * @pinned: out, 1: COLLX_TEXP_IMP_PIN holds a pin
 * @mapped: out, 1: a mapping is held
 * @map_stale: out, 1: a move_notify came after it was made
 * @vmapped: out, 1: a vmap is held
 * @vmap_stale: out, 1: a move_notify came after it was made
 * @notified: out, move_notify calls received
 * @fences: out, fences added on move_notify
 * @fence_errors: out, fences that could not be added
 * @__reserved: must be 0
 */
struct collx_texp_imp_status {
	__u32 size;
	__u32 flags;
	__u32 dynamic;
	__u32 exporter_dynamic;
	__u32 premapped;
	__u32 pinned;
	__u32 mapped;
	__u32 map_stale;
	__u32 vmapped;
	__u32 vmap_stale;
	__u32 notified;
	__u32 fences;
	__u32 fence_errors;
	__u32 __reserved;
};

#define COLLX_TEXP_IOC_IMP_STATUS \
	_IO(COLLX_TEXP_TYPE, COLLX_TEXP_CMD_IMP_STATUS)

#endif /* _UAPI_COLLX_TEST_EXPORTER_H */
