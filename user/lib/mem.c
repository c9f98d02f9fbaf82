// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: registrations: user memory pinned once (COLLX_IOC_MR_REG), and
 * dma-bufs (GPU memory, udmabuf, DMA heaps) attached by fd.  Collectives on
 * buffers inside a registration run zero copy; others are bounced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collx_int.h"

bool collx_mem_lookup(struct collx_comm *comm, const void *p, size_t len)
{
	uintptr_t s = (uintptr_t)p, e = s + len;
	struct collx_mr *mr;

	for (mr = comm->mrs; mr; mr = mr->next)
		if (s >= mr->start && e <= mr->end)
			return true;
	return false;
}

static int mr_reg(struct collx_comm *comm, struct collx_mr_reg *r, void *map, size_t maplen,
		  void **handle)
{
	struct collx_mr *mr = calloc(1, sizeof(*mr));
	int err, fd;

	if (!mr)
		return -ENOMEM;
	pthread_mutex_lock(&comm->lock);
	if (comm->dead) {
		pthread_mutex_unlock(&comm->lock);
		free(mr);
		return -ECANCELED;
	}
	collx_comm_fd_get(comm);
	fd = comm->fd;
	pthread_mutex_unlock(&comm->lock);
	/* Pinning may take a while: not under the lock. */
	err = collx_ioctl(fd, COLLX_IOC_MR_REG, r);
	pthread_mutex_lock(&comm->lock);
	collx_comm_fd_put(comm);
	if (!err && comm->dead) {
		/* destroyed meanwhile: closing its fd drops the registration */
		err = -ECANCELED;
	} else if (!err) {
		mr->mr_id = r->mr_id;
		mr->start = (uintptr_t)r->addr;
		mr->end = (uintptr_t)r->addr + r->length;
		mr->dmabuf = r->flags & COLLX_MR_F_DMABUF;
		mr->map = map;
		mr->maplen = maplen;
		mr->next = comm->mrs;
		comm->mrs = mr;
		*handle = mr;
	}
	pthread_mutex_unlock(&comm->lock);
	if (err)
		free(mr);
	return err;
}

int collx_mem_register(struct collx_comm *comm, void *buf, size_t size, void **handle)
{
	struct collx_mr_reg r = { .size = sizeof(r) };
	int err;

	if (!comm || !buf || !size || !handle)
		return -EINVAL;
	r.addr = (uintptr_t)buf;
	r.length = size;
	err = mr_reg(comm, &r, NULL, 0, handle);
	if (err) {
		collx_set_error(comm, "register %zu bytes at %p: %s%s", size, buf, strerror(-err),
				err == -ENOMEM ? " (over RLIMIT_MEMLOCK? see ulimit -l)" : "");
		return err;
	}
	INFO(COLLX_SUB_REG, comm->rank, "comm %u: registered %zu bytes at %p (mr %u): collectives inside it run in place",
	     comm->global_id, size, buf, ((struct collx_mr *)*handle)->mr_id);
	return 0;
}

static int reg_dmabuf(struct collx_comm *comm, int fd, uint64_t offset, size_t size,
		      void *addr, void *map, size_t maplen, void **handle)
{
	struct collx_mr_reg r = { .size = sizeof(r), .flags = COLLX_MR_F_DMABUF };
	int err;

	if (!comm->abi11) {
		collx_set_error(comm, "register dma-buf: the module speaks ABI 1.0, dma-buf registration needs 1.1");
		return -EOPNOTSUPP;
	}
	r.addr = (uintptr_t)addr;
	r.length = size;
	r.dmabuf_fd = fd;
	r.dmabuf_offset = offset;
	err = mr_reg(comm, &r, map, maplen, handle);
	if (err) {
		collx_set_error(comm, "register dma-buf fd %d, %zu bytes at offset %llu: %s", fd, size,
				(unsigned long long)offset, collx_strerror(err));
		return err;
	}
	INFO(COLLX_SUB_REG, comm->rank, "comm %u: registered dma-buf fd %d, %zu bytes at offset %llu as %p (mr %u)%s",
	     comm->global_id, fd, size, (unsigned long long)offset, addr,
	     ((struct collx_mr *)*handle)->mr_id, map ? ", mapped here" : "");
	return 0;
}

int collx_mem_register_dmabuf_at(struct collx_comm *comm, int fd, uint64_t offset,
				 size_t size, void *addr, void **handle)
{
	if (!comm || fd < 0 || !size || !handle)
		return -EINVAL;
	return reg_dmabuf(comm, fd, offset, size, addr, NULL, 0, handle);
}

int collx_mem_register_dmabuf(struct collx_comm *comm, int fd, uint64_t offset,
			      size_t size, void **addr, void **handle)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), delta, len;
	void *map;
	int err;

	if (!comm || fd < 0 || !size || !addr || !handle)
		return -EINVAL;
	/* mmap wants a page-aligned offset: map from the page before. */
	delta = offset % page;
	len = size + delta;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(offset - delta));
	if (map == MAP_FAILED) {
		err = -errno;
		collx_set_error(comm, "register dma-buf fd %d: mmap of %zu bytes at offset %llu: %s",
				fd, size, (unsigned long long)offset, strerror(-err));
		return err;
	}
	err = reg_dmabuf(comm, fd, offset, size, (char *)map + delta, map, len, handle);
	if (err) {
		munmap(map, len);
		return err;
	}
	*addr = (char *)map + delta;
	return 0;
}

/* With the lock held. */
static void mr_drop(struct collx_comm *comm, struct collx_mr *mr)
{
	struct collx_mr_dereg d = { .size = sizeof(d), .mr_id = mr->mr_id };

	if (comm->fd >= 0)
		collx_ioctl(comm->fd, COLLX_IOC_MR_DEREG, &d);
	if (mr->map)
		munmap(mr->map, mr->maplen);
	free(mr);
}

int collx_mem_deregister(struct collx_comm *comm, void *handle)
{
	struct collx_mr_dereg d = { .size = sizeof(d) };
	struct collx_mr *mr = handle, **pp;
	int err = -ENOENT;

	if (!comm || !mr)
		return -EINVAL;
	pthread_mutex_lock(&comm->lock);
	for (pp = &comm->mrs; *pp; pp = &(*pp)->next) {
		if (*pp != mr)
			continue;
		d.mr_id = mr->mr_id;
		err = comm->dead ? -ECANCELED : collx_ioctl(comm->fd, COLLX_IOC_MR_DEREG, &d);
		if (err)
			break;
		*pp = mr->next;
		if (mr->map)
			munmap(mr->map, mr->maplen);
		free(mr);
		break;
	}
	pthread_mutex_unlock(&comm->lock);
	if (err)
		collx_set_error(comm, "deregister: %s%s", strerror(-err),
				err == -EBUSY ? " (a collective in flight uses it, or one on it failed: destroy the communicator)" : "");
	return err;
}

void collx_mem_release_all(struct collx_comm *comm)
{
	struct collx_mr *mr, *next;

	for (mr = comm->mrs; mr; mr = next) {
		next = mr->next;
		mr_drop(comm, mr);
	}
	comm->mrs = NULL;
}
