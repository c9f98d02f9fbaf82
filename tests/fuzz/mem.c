// SPDX-License-Identifier: GPL-2.0
/*
 * The memory collx_fuzz points the kernel at: slots for collectives'
 * buffers (a page allocator over one arena that ends in an unmapped page,
 * with an end zone before it for "last bytes before an unmapped page"),
 * read-only regions, a PROT_NONE reservation and a shared memfd mapping.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#define END_ZONE	(64 * FZ_PAGE)

struct fz_mem fz_mem;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *slot_map;	/* one byte per page: 1 in use */
static size_t slot_pages, slot_cursor;

static void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* @len bytes read-write (or shared with @fd), then one PROT_NONE page. */
static uint8_t *map_guarded(size_t len, int fd)
{
	uint8_t *p = map(len + FZ_PAGE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);

	if (!p)
		return NULL;
	if (fd >= 0) {
		if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 fd, 0) == MAP_FAILED)
			return NULL;
	} else if (mprotect(p, len, PROT_READ | PROT_WRITE)) {
		return NULL;
	}
	return p;
}

int fz_mem_init(size_t data_bytes)
{
	struct fz_mem *m = &fz_mem;
	int fd;

	m->slot_len = data_bytes;
	m->data_len = data_bytes + END_ZONE;
	m->data = map_guarded(m->data_len, -1);
	m->ro_len = 16 * FZ_PAGE;
	m->ro = map_guarded(m->ro_len, -1);
	m->ro_zero = map_guarded(m->ro_len, -1);
	m->none_len = 1UL << 30;
	m->none = map(m->none_len, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	m->shm_len = 256 * FZ_PAGE;
	fd = memfd_create("collx_fuzz", 0);
	if (fd < 0 || ftruncate(fd, m->shm_len))
		return errno;
	m->shm = map_guarded(m->shm_len, fd);
	close(fd);
	if (!m->data || !m->ro || !m->ro_zero || !m->none || !m->shm)
		return ENOMEM;
	/* Touched once, so that pinning never waits for a page fault. */
	memset(m->data, 0x11, m->data_len);
	memset(m->shm, 0x22, m->shm_len);
	fz_fill(m->ro, m->ro_len, 0x0d0d);
	if (mprotect(m->ro, m->ro_len, PROT_READ) ||
	    mprotect(m->ro_zero, m->ro_len, PROT_READ))
		return errno;
	slot_pages = data_bytes / FZ_PAGE;
	slot_map = calloc(slot_pages, 1);
	return slot_map ? 0 : ENOMEM;
}

uint8_t *fz_slot_get(size_t bytes, size_t *pages)
{
	size_t n = (bytes + FZ_PAGE - 1) / FZ_PAGE, tried, run, i;
	uint8_t *p = NULL;

	if (!n)
		n = 1;
	pthread_mutex_lock(&slot_lock);
	for (tried = 0, run = 0, i = slot_cursor; tried < slot_pages;
	     tried++, i++) {
		if (i == slot_pages) {
			i = 0;
			run = 0;
		}
		run = slot_map[i] ? 0 : run + 1;
		if (run == n) {
			i = i + 1 - n;
			memset(slot_map + i, 1, n);
			slot_cursor = i + n;
			p = fz_mem.data + i * FZ_PAGE;
			break;
		}
	}
	pthread_mutex_unlock(&slot_lock);
	*pages = p ? n : 0;
	return p;
}

void fz_slot_put(uint8_t *p, size_t pages)
{
	if (!p)
		return;
	pthread_mutex_lock(&slot_lock);
	memset(slot_map + (p - fz_mem.data) / FZ_PAGE, 0, pages);
	pthread_mutex_unlock(&slot_lock);
}

uint64_t fz_ptr_bad(struct fz_rng *r, const char **what)
{
	static const uint64_t kernel[] = {
		0xffff888000000000ULL,	/* direct map */
		0xffffffff81000000ULL,	/* kernel text */
		0xffffc90000000000ULL,	/* vmalloc */
		0xffffea0000000000ULL,	/* struct pages */
		0xffffffffff600000ULL,	/* vsyscall page */
	};
	static const uint64_t noncanon[] = {
		0x0000800000000000ULL, 0x7fffffffffffffffULL,
		0x8000000000000000ULL, 0xfffffffffffff000ULL,
		0xffffffffffffffffULL,
	};

	switch (fz_below(r, 5)) {
	case 0:
		*what = "NULL";
		return fz_pm(r, 800) ? 0 : 1 + fz_below(r, FZ_PAGE);
	case 1:
	case 2:
		*what = "unmapped";
		return (uint64_t)(uintptr_t)fz_mem.none +
		       fz_below(r, fz_mem.none_len - FZ_PAGE);
	case 3:
		*what = "kernel";
		return kernel[fz_below(r, FZ_ARRAY_SIZE(kernel))] +
		       (fz_pm(r, 500) ? 0 : fz_below(r, 1 << 20));
	default:
		*what = "non-canonical";
		return noncanon[fz_below(r, FZ_ARRAY_SIZE(noncanon))];
	}
}

uint64_t fz_ptr_end(size_t len)
{
	return (uint64_t)(uintptr_t)(fz_mem.data + fz_mem.data_len - len);
}

static inline uint64_t pattern_word(uint32_t s, uint64_t w)
{
	uint64_t x = w * 0x9e3779b97f4a7c15ULL + s;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 32);
}

/*
 * The pattern: word w (bytes 8w..8w+7 from the buffer's start) is
 * pattern_word(s, w), little-endian.
 */
void fz_fill(uint8_t *p, uint64_t len, uint32_t s)
{
	uint64_t w, x, n;

	for (w = 0; w * 8 < len; w++) {
		x = pattern_word(s, w);
		n = len - w * 8 < 8 ? len - w * 8 : 8;
		memcpy(p + w * 8, &x, n);
	}
}

int64_t fz_check_fill(const uint8_t *p, uint64_t len, uint32_t s)
{
	uint64_t w, x, n, i;

	for (w = 0; w * 8 < len; w++) {
		x = pattern_word(s, w);
		n = len - w * 8 < 8 ? len - w * 8 : 8;
		if (!memcmp(p + w * 8, &x, n))
			continue;
		for (i = 0; i < n; i++)
			if (p[w * 8 + i] != ((const uint8_t *)&x)[i])
				return (int64_t)(w * 8 + i);
	}
	return -1;
}
