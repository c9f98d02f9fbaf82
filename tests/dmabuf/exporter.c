// SPDX-License-Identifier: GPL-2.0
/*
 * Test helpers for dma-bufs (see exporter.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "exporter.h"

const char *const dmabuf_kinds = "dynamic|static|refuse|pinonly|udmabuf|heap";

static int texp_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int texp_dev(void)
{
	static int fd = -1;

	if (fd < 0) {
		fd = open(TEXP_DEVICE, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	return fd;
}

int texp_create(uint64_t length, uint32_t flags)
{
	struct collx_texp_create c = {
		.size = sizeof(c), .flags = flags, .length = length,
	};
	int dev = texp_dev(), ret;

	if (dev < 0)
		return dev;
	ret = texp_ioctl(dev, COLLX_TEXP_IOC_CREATE, &c);
	return ret ? ret : c.fd;
}

static int texp_move_or_revoke(unsigned long cmd, int fd, uint32_t flags,
			       uint32_t timeout_ms, struct collx_texp_move *out)
{
	struct collx_texp_move m = {
		.size = sizeof(m), .flags = flags, .fd = fd,
		.timeout_ms = timeout_ms,
	};
	int dev = texp_dev(), ret;

	if (dev < 0)
		return dev;
	ret = texp_ioctl(dev, cmd, &m);
	if (!ret && out)
		*out = m;
	return ret;
}

int texp_move(int fd, uint32_t flags, uint32_t timeout_ms,
	      struct collx_texp_move *out)
{
	return texp_move_or_revoke(COLLX_TEXP_IOC_MOVE, fd, flags, timeout_ms,
				   out);
}

int texp_revoke(int fd, struct collx_texp_move *out)
{
	return texp_move_or_revoke(COLLX_TEXP_IOC_REVOKE, fd, 0, 0, out);
}

int texp_stats(int fd, struct collx_texp_stats *st)
{
	int dev = texp_dev();

	if (dev < 0)
		return dev;
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->fd = fd;
	return texp_ioctl(dev, COLLX_TEXP_IOC_STATS, st);
}

int texp_import(int fd, uint32_t flags, uint32_t fence_ms)
{
	struct collx_texp_import im = {
		.size = sizeof(im), .flags = flags, .fd = fd,
		.fence_ms = fence_ms,
	};
	int dev = texp_dev(), ret;

	if (dev < 0)
		return dev;
	ret = texp_ioctl(dev, COLLX_TEXP_IOC_IMPORT, &im);
	return ret ? ret : im.imp_fd;
}

int texp_imp_map(int imp, struct collx_texp_imp_map *out)
{
	struct collx_texp_imp_map m = { .size = sizeof(m) };
	int ret = texp_ioctl(imp, COLLX_TEXP_IOC_IMP_MAP, &m);

	if (!ret && out)
		*out = m;
	return ret;
}

static int texp_imp_cmd(int imp, unsigned long cmd)
{
	struct collx_texp_imp_cmd c = { .size = sizeof(c) };

	return texp_ioctl(imp, cmd, &c);
}

int texp_imp_unmap(int imp)
{
	return texp_imp_cmd(imp, COLLX_TEXP_IOC_IMP_UNMAP);
}

int texp_imp_vmap(int imp)
{
	return texp_imp_cmd(imp, COLLX_TEXP_IOC_IMP_VMAP);
}

int texp_imp_vunmap(int imp)
{
	return texp_imp_cmd(imp, COLLX_TEXP_IOC_IMP_VUNMAP);
}

int texp_imp_access(int imp, uint32_t flags, uint64_t offset, void *buf,
		    size_t length)
{
	struct collx_texp_imp_access a = {
		.size = sizeof(a), .flags = flags, .offset = offset,
		.length = length, .ptr = (uintptr_t)buf,
	};

	return texp_ioctl(imp, COLLX_TEXP_IOC_IMP_ACCESS, &a);
}

int texp_imp_status(int imp, struct collx_texp_imp_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return texp_ioctl(imp, COLLX_TEXP_IOC_IMP_STATUS, st);
}

/* "name value" lines of @path. */
static int read_named(const char *path, const char *name, long long *value)
{
	char key[64];
	long long v;
	FILE *f = fopen(path, "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, name)) {
			*value = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int texp_counter(const char *name, long long *value)
{
	return read_named(TEXP_COUNTERS, name, value);
}

int texp_param(const char *name, long long *value)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", TEXP_PARAMS, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ret = fscanf(f, "%lld", value) == 1 ? 0 : -EIO;
	fclose(f);
	return ret;
}

static int udmabuf_new(size_t length)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC };
	int dev, memfd, fd;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	memfd = memfd_create("collx-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, length) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		fd = -errno;
		goto out;
	}
	c.memfd = memfd;
	c.size = length;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (fd < 0)
		fd = -errno;
out:
	if (memfd >= 0)
		close(memfd);
	close(dev);
	return fd;
}

static int heap_new(size_t length)
{
	struct dma_heap_allocation_data a = {
		.len = length, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap, ret;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0)
		return -errno;
	ret = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) ? -errno : (int)a.fd;
	close(heap);
	return ret;
}

static const struct {
	const char *name;
	uint32_t flags;
} texp_kinds[] = {
	{ "dynamic", COLLX_TEXP_DYNAMIC },
	{ "static", COLLX_TEXP_STATIC },
	{ "refuse", COLLX_TEXP_STATIC | COLLX_TEXP_REFUSE_DYNAMIC },
	{ "pinonly", COLLX_TEXP_DYNAMIC | COLLX_TEXP_REFUSE_DYNAMIC },
};

int dmabuf_kind_is_texp(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(texp_kinds) / sizeof(texp_kinds[0]); i++)
		if (!strcmp(kind, texp_kinds[i].name))
			return 1;
	return 0;
}

int dmabuf_new(const char *kind, size_t length)
{
	size_t i;

	for (i = 0; i < sizeof(texp_kinds) / sizeof(texp_kinds[0]); i++)
		if (!strcmp(kind, texp_kinds[i].name))
			return texp_create(length, texp_kinds[i].flags);
	if (!strcmp(kind, "udmabuf"))
		return udmabuf_new(length);
	if (!strcmp(kind, "heap"))
		return heap_new(length);
	return -EINVAL;
}

void *dmabuf_mmap(int fd, size_t length, size_t offset)
{
	void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       offset);

	return p == MAP_FAILED ? NULL : p;
}

int dmabuf_sync(int fd, int start)
{
	struct dma_buf_sync s = {
		.flags = DMA_BUF_SYNC_RW |
			 (start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END),
	};

	return texp_ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
}

long long dmabuf_length(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	return end < 0 ? -errno : (long long)end;
}

uint64_t dmabuf_pattern(uint64_t seed, size_t i)
{
	return (seed + 1) * 0x9e3779b97f4a7c15ULL ^ i;
}

void dmabuf_fill(void *p, size_t len, uint64_t seed)
{
	uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = dmabuf_pattern(seed, i);
}

long dmabuf_check(const void *p, size_t len, uint64_t seed)
{
	const uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != dmabuf_pattern(seed, i))
			return i;
	return -1;
}
