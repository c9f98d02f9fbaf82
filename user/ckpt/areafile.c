// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The area's file: page 0 describes it; then two slots of k + 1 entries
 * (entry 0 this rank's shard, entry j the replica of rank
 * ckpt_source(.., j)), each a page-aligned header block and the data.
 * A header is marked empty before its data is overwritten and complete
 * only after the data and the rest of the header are in place, so a
 * reader that sees COMPLETE (acquire) sees the whole copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* XXH3_state_t on the stack */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "ckpt_int.h"

int ckpt_geom_make(struct ckpt_geom *g, uint32_t nranks, uint32_t rank, uint32_t k,
		   uint32_t stride, uint64_t shard_cap, uint32_t chunk_bytes,
		   char *err, size_t errlen)
{
	int rc;

	memset(g, 0, sizeof(*g));
	if (rank >= nranks) {
		snprintf(err, errlen, "rank %u of %u", rank, nranks);
		return -EINVAL;
	}
	if (!shard_cap || shard_cap > COLLX_MAX_BYTES) {
		snprintf(err, errlen, "bytes per shard %llu: must be 1..2^40",
			 (unsigned long long)shard_cap);
		return -EINVAL;
	}
	if (chunk_bytes < CKPT_PAGE || chunk_bytes % CKPT_PAGE || chunk_bytes > (1u << 30)) {
		snprintf(err, errlen, "chunk of %u bytes: must be a multiple of 4 KiB up to 1 GiB",
			 chunk_bytes);
		return -EINVAL;
	}
	rc = ckpt_place_check(nranks, stride, k, err, errlen);
	if (rc)
		return rc;
	g->nranks = nranks;
	g->rank = rank;
	g->k = k;
	g->stride = stride;
	g->chunk_bytes = chunk_bytes;
	g->shard_cap = shard_cap;
	if ((shard_cap + chunk_bytes - 1) / chunk_bytes > (1u << 24)) {
		snprintf(err, errlen, "%llu bytes in chunks of %u: over 2^24 chunks",
			 (unsigned long long)shard_cap, chunk_bytes);
		return -EINVAL;
	}
	g->max_chunks = (shard_cap + chunk_bytes - 1) / chunk_bytes;
	g->hdr_block = CKPT_ALIGN(sizeof(struct ckpt_shard_hdr) + 8ull * g->max_chunks, CKPT_PAGE);
	g->data_cap = CKPT_ALIGN(shard_cap, CKPT_PAGE);
	g->entry_bytes = g->hdr_block + g->data_cap;
	g->file_bytes = CKPT_PAGE + (uint64_t)CKPT_NSLOTS * (k + 1) * g->entry_bytes;
	return 0;
}

static void area_hdr_fill(struct ckpt_area_hdr *a, const struct ckpt_geom *g)
{
	memset(a, 0, sizeof(*a));
	a->magic = CKPT_AREA_MAGIC;
	a->version = CKPT_VERSION;
	a->nranks = g->nranks;
	a->rank = g->rank;
	a->k = g->k;
	a->stride = g->stride;
	a->chunk_bytes = g->chunk_bytes;
	a->shard_cap = g->shard_cap;
	a->hdr_block = g->hdr_block;
	a->data_cap = g->data_cap;
}

static bool area_hdr_same(const struct ckpt_area_hdr *a, const struct ckpt_area_hdr *b)
{
	return a->magic == b->magic && a->version == b->version && a->nranks == b->nranks &&
	       a->rank == b->rank && a->k == b->k && a->stride == b->stride &&
	       a->chunk_bytes == b->chunk_bytes && a->shard_cap == b->shard_cap &&
	       a->hdr_block == b->hdr_block && a->data_cap == b->data_cap;
}

static int map_file(struct ckpt_file *f, size_t len, bool writable, char *err, size_t errlen)
{
	f->map = mmap(NULL, len, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, f->fd, 0);
	if (f->map == MAP_FAILED) {
		int e = -errno;

		f->map = NULL;
		snprintf(err, errlen, "mmap %s (%zu bytes): %s", f->path, len, strerror(-e));
		return e;
	}
	f->len = len;
	f->writable = writable;
	return 0;
}

int ckpt_file_check(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int rc = -errno;

		snprintf(err, errlen, "stat %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file: refused", path);
		return -EPERM;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to uid %u, not to this user (uid %u): refused (another user could read or forge its checkpoints)",
			 path, (unsigned int)st.st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s has mode %03o: group or others may access it: refused (want 0600)",
			 path, (unsigned int)(st.st_mode & 0777));
		return -EPERM;
	}
	return 0;
}

/* open(2) that refuses a symlink at @path with a clear error. */
static int open_nofollow(const char *path, int flags, char *err, size_t errlen)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 && errno == ELOOP) {
		snprintf(err, errlen, "%s is a symbolic link: refused", path);
		return -EPERM;
	}
	if (fd < 0) {
		int rc = -errno;

		snprintf(err, errlen, "open %s: %s%s", path, strerror(-rc),
			 rc == -ENOENT ? " (its directory does not exist: mount a tmpfs there or set COLLX_CKPT_SHM_DIR)" : "");
		return rc;
	}
	return fd;
}

int ckpt_file_create(struct ckpt_file *f, const char *path, const struct ckpt_geom *g,
		     char *err, size_t errlen)
{
	struct ckpt_area_hdr want, have;
	struct stat st;
	bool created = true;
	int rc;

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	/* ours alone: a new file, or an existing one that passes the checks */
	f->fd = open_nofollow(path, O_RDWR | O_CREAT | O_EXCL, err, errlen);
	if (f->fd == -EEXIST) {
		created = false;
		f->fd = open_nofollow(path, O_RDWR, err, errlen);
	}
	if (f->fd < 0) {
		rc = f->fd;
		f->fd = -1;
		return rc;
	}
	rc = ckpt_file_check(f->fd, path, err, errlen);
	if (rc)
		goto fail;
	/* one owner: two trainers writing one area would interleave saves */
	if (flock(f->fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errlen, "%s is in use by another process", path);
		goto fail;
	}
	if (fstat(f->fd, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "stat %s: %s", path, strerror(-rc));
		goto fail;
	}
	area_hdr_fill(&want, g);
	if (st.st_size == 0) {
		/* reserve every page now: a full tmpfs is ENOSPC here, not
		 * SIGBUS in the middle of a save */
		rc = -posix_fallocate(f->fd, 0, g->file_bytes);
		if (rc) {
			snprintf(err, errlen, "reserving %llu bytes for %s: %s",
				 (unsigned long long)g->file_bytes, path, strerror(-rc));
			if (created && ftruncate(f->fd, 0) == 0)
				unlink(path);
			goto fail;
		}
		want.created_ns = ckpt_realtime_ns();
		rc = map_file(f, g->file_bytes, true, err, errlen);
		if (rc)
			goto fail;
		memcpy(f->map, &want, sizeof(want));
	} else {
		if (pread(f->fd, &have, sizeof(have), 0) != (ssize_t)sizeof(have) ||
		    (uint64_t)st.st_size != g->file_bytes || !area_hdr_same(&have, &want)) {
			snprintf(err, errlen,
				 "%s holds an area of another geometry (ranks, k, stride, chunk or shard size); remove it or set COLLX_CKPT_NAME",
				 path);
			rc = -EEXIST;
			goto fail;
		}
		rc = map_file(f, g->file_bytes, true, err, errlen);
		if (rc)
			goto fail;
	}
	f->g = *g;
	return 0;
fail:
	close(f->fd);
	f->fd = -1;
	return rc;
}

int ckpt_file_open(struct ckpt_file *f, const char *path, bool writable, char *err, size_t errlen)
{
	struct ckpt_area_hdr a;
	struct stat st;
	int rc;

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->fd = open_nofollow(path, writable ? O_RDWR : O_RDONLY, err, errlen);
	if (f->fd < 0) {
		rc = f->fd;
		f->fd = -1;
		return rc;
	}
	rc = ckpt_file_check(f->fd, path, err, errlen);
	if (rc)
		goto fail;
	if (fstat(f->fd, &st) < 0 || pread(f->fd, &a, sizeof(a), 0) != (ssize_t)sizeof(a) ||
	    a.magic != CKPT_AREA_MAGIC || a.version != CKPT_VERSION) {
		snprintf(err, errlen, "%s is not a collx checkpoint area", path);
		rc = -EINVAL;
		goto fail;
	}
	rc = ckpt_geom_make(&f->g, a.nranks, a.rank, a.k, a.stride, a.shard_cap, a.chunk_bytes,
			    err, errlen);
	if (rc)
		goto fail;
	if ((uint64_t)st.st_size != f->g.file_bytes || a.hdr_block != f->g.hdr_block) {
		snprintf(err, errlen, "%s: %lld bytes, its header says %llu", path,
			 (long long)st.st_size, (unsigned long long)f->g.file_bytes);
		rc = -EINVAL;
		goto fail;
	}
	rc = map_file(f, f->g.file_bytes, writable, err, errlen);
	if (rc)
		goto fail;
	return 0;
fail:
	close(f->fd);
	f->fd = -1;
	return rc;
}

void ckpt_file_close(struct ckpt_file *f)
{
	if (f->map)
		munmap(f->map, f->len);
	if (f->fd >= 0)
		close(f->fd);
	f->map = NULL;
	f->fd = -1;
}

static uint8_t *entry_base(const struct ckpt_file *f, int slot, int entry)
{
	return f->map + CKPT_PAGE + ((uint64_t)slot * (f->g.k + 1) + entry) * f->g.entry_bytes;
}

struct ckpt_shard_hdr *ckpt_hdr(const struct ckpt_file *f, int slot, int entry)
{
	return (struct ckpt_shard_hdr *)entry_base(f, slot, entry);
}

uint8_t *ckpt_data(const struct ckpt_file *f, int slot, int entry)
{
	return entry_base(f, slot, entry) + f->g.hdr_block;
}

uint32_t ckpt_entry_src(const struct ckpt_geom *g, int entry)
{
	return entry ? ckpt_source(g->nranks, g->stride, g->rank, entry) : g->rank;
}

uint64_t ckpt_hdr_hash(const struct ckpt_shard_hdr *h)
{
	struct ckpt_shard_hdr fixed;
	XXH3_state_t st;

	memcpy(&fixed, h, sizeof(fixed));
	/* state and gstate change after the hash: committed locally, then
	 * globally */
	fixed.state = 0;
	fixed.gstate = 0;
	fixed.hdr_hash = 0;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, &fixed, sizeof(fixed));
	XXH3_64bits_update(&st, h->chunk_hash, 8ull * fixed.nchunks);
	return XXH3_64bits_digest(&st);
}

int ckpt_hdr_valid(const struct ckpt_file *f, const struct ckpt_shard_hdr *h)
{
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != CKPT_COMPLETE)
		return -ENOENT;
	return ckpt_hdr_check(f, h);
}

int ckpt_hdr_check(const struct ckpt_file *f, const struct ckpt_shard_hdr *h)
{
	uint64_t sum = 0;
	uint32_t i;

	if (h->magic != CKPT_SHARD_MAGIC || h->version != CKPT_VERSION ||
	    h->chunk_bytes != f->g.chunk_bytes || h->bytes > f->g.shard_cap ||
	    h->nchunks > f->g.max_chunks || h->nregions > COLLX_CKPT_MAX_REGIONS ||
	    h->nchunks != (h->bytes + h->chunk_bytes - 1) / h->chunk_bytes)
		return -EBADMSG;
	for (i = 0; i < h->nregions; i++)
		sum += h->region_bytes[i];
	if (sum != h->bytes || h->hdr_hash != ckpt_hdr_hash(h))
		return -EBADMSG;
	return 0;
}

/* Whether (e1, s1) is newer than (e2, s2): epochs first (a restore starts
 * a greater one), then the order of commits in this area. */
static bool newer(uint64_t e1, uint64_t s1, uint64_t e2, uint64_t s2)
{
	return e1 != e2 ? e1 > e2 : s1 > s2;
}

/* @global: only copies with the global commit mark; @epoch 0: any. */
static int find(const struct ckpt_file *f, int entry, uint64_t epoch, uint64_t tag, bool global)
{
	int s, best = -1;
	uint64_t seq = 0, ep = 0;

	for (s = 0; s < CKPT_NSLOTS; s++) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(f, s, entry);

		if (ckpt_hdr_valid(f, h) || h->src_rank != ckpt_entry_src(&f->g, entry))
			continue;
		if (global && __atomic_load_n(&h->gstate, __ATOMIC_ACQUIRE) != CKPT_GCOMMIT)
			continue;
		if ((tag && h->tag != tag) || (epoch && h->epoch != epoch))
			continue;
		if (best < 0 || newer(h->epoch, h->seq, ep, seq)) {
			best = s;
			seq = h->seq;
			ep = h->epoch;
		}
	}
	return best;
}

int ckpt_find(const struct ckpt_file *f, int entry, uint64_t tag)
{
	return find(f, entry, 0, tag, true);
}

int ckpt_find_id(const struct ckpt_file *f, int entry, uint64_t epoch, uint64_t tag)
{
	return epoch ? find(f, entry, epoch, tag, true) : -1;
}

int ckpt_find_complete(const struct ckpt_file *f, int entry)
{
	return find(f, entry, 0, 0, false);
}

int ckpt_victim(const struct ckpt_file *f, int entry, uint64_t pepoch, uint64_t ptag)
{
	int keep = pepoch && ptag ? find(f, entry, pepoch, ptag, false) : -1;

	if (keep < 0)
		keep = ckpt_find(f, entry, 0);
	if (keep < 0)
		keep = ckpt_find_complete(f, entry);
	return keep < 0 ? 0 : !keep;
}

bool ckpt_pinned(const struct ckpt_file *f, int slot, int entry)
{
	const struct ckpt_area_hdr *a = ckpt_area_hdr(f);
	uint64_t seq = __atomic_load_n(&a->pin_seq, __ATOMIC_ACQUIRE);
	const struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, entry);
	uint32_t pid = a->pin_pid;

	if (!seq || a->pin_entry != (uint32_t)entry || h->seq != seq ||
	    __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != CKPT_COMPLETE)
		return false;
	/* a daemon that died mid-drain pins nothing */
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

int ckpt_victim_pinned(const struct ckpt_file *f, int entry, uint64_t pepoch, uint64_t ptag,
		       uint64_t *pin_epoch, uint64_t *pin_tag)
{
	int v = ckpt_victim(f, entry, pepoch, ptag);
	const struct ckpt_shard_hdr *h = ckpt_hdr(f, v, entry);

	/* the other slot is the one ckpt_victim keeps (protected, or the
	 * newest committed): with the victim pinned there is none to take */
	if (!ckpt_pinned(f, v, entry))
		return v;
	*pin_epoch = h->epoch;
	*pin_tag = h->tag;
	return -EBUSY;
}

struct ckpt_area_hdr *ckpt_pin_map(const char *path, char *err, size_t errlen)
{
	int fd = open_nofollow(path, O_RDWR, err, errlen);
	void *p;

	if (fd < 0)
		return NULL;
	if (ckpt_file_check(fd, path, err, errlen)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, CKPT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: map for the pin: %s", path, strerror(errno));
		return NULL;
	}
	return p;
}

void ckpt_pin_unmap(struct ckpt_area_hdr *a)
{
	if (a) {
		ckpt_pin_set(a, 0, 0);
		munmap(a, CKPT_PAGE);
	}
}

void ckpt_pin_set(struct ckpt_area_hdr *a, uint32_t entry, uint64_t seq)
{
	__atomic_store_n(&a->pin_seq, 0, __ATOMIC_RELEASE);
	if (!seq)
		return;
	a->pin_entry = entry;
	a->pin_pid = (uint32_t)getpid();
	__atomic_store_n(&a->pin_seq, seq, __ATOMIC_RELEASE);
	/* before the drainer checks the copy is still there (a save checks
	 * the pin before it invalidates) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint64_t ckpt_next_seq(const struct ckpt_file *f)
{
	uint64_t max = 0;
	uint32_t s, e;

	for (s = 0; s < CKPT_NSLOTS; s++)
		for (e = 0; e <= f->g.k; e++) {
			const struct ckpt_shard_hdr *h = ckpt_hdr(f, s, e);

			if (!ckpt_hdr_valid(f, h) && h->seq > max)
				max = h->seq;
		}
	return max + 1;
}

void ckpt_hdr_invalidate(struct ckpt_shard_hdr *h)
{
	__atomic_store_n(&h->state, CKPT_EMPTY, __ATOMIC_RELEASE);
	__atomic_store_n(&h->gstate, 0, __ATOMIC_RELEASE);
	/* before any byte of the new copy lands (the submit ioctl that
	 * follows orders the NIC's writes after this) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void ckpt_hdr_gcommit(struct ckpt_shard_hdr *h)
{
	__atomic_store_n(&h->gstate, CKPT_GCOMMIT, __ATOMIC_RELEASE);
}

const struct ckpt_area_hdr *ckpt_area_hdr(const struct ckpt_file *f)
{
	return (const struct ckpt_area_hdr *)f->map;
}

void ckpt_area_record_commit(const struct ckpt_file *f, uint64_t epoch, uint64_t tag,
			     uint64_t seq)
{
	struct ckpt_area_hdr *a = (struct ckpt_area_hdr *)f->map;

	/* a reader takes epoch and tag after seq (acquire): seq 0 first, so
	 * a torn record is never read as a whole one */
	__atomic_store_n(&a->commit_seq, 0, __ATOMIC_RELEASE);
	a->commit_epoch = epoch;
	a->commit_tag = tag;
	__atomic_store_n(&a->commit_seq, seq, __ATOMIC_RELEASE);
	if (epoch > a->max_epoch)
		a->max_epoch = epoch;
}

void ckpt_area_record_epoch(const struct ckpt_file *f, uint64_t max_epoch)
{
	struct ckpt_area_hdr *a = (struct ckpt_area_hdr *)f->map;

	if (max_epoch > a->max_epoch)
		a->max_epoch = max_epoch;
}

void ckpt_area_record_protect(const struct ckpt_file *f, uint64_t epoch, uint64_t tag)
{
	struct ckpt_area_hdr *a = (struct ckpt_area_hdr *)f->map;

	a->protect_epoch = epoch;
	a->protect_tag = tag;
}

uint64_t ckpt_max_epoch(const struct ckpt_file *f)
{
	uint64_t max = ckpt_area_hdr(f)->max_epoch;
	uint32_t s, e;

	for (s = 0; s < CKPT_NSLOTS; s++)
		for (e = 0; e <= f->g.k; e++) {
			const struct ckpt_shard_hdr *h = ckpt_hdr(f, s, e);

			if (!ckpt_hdr_check(f, h) && h->epoch > max)
				max = h->epoch;
		}
	return max;
}

void ckpt_hdr_commit(struct ckpt_shard_hdr *h, uint64_t seq)
{
	h->seq = seq;
	h->hdr_hash = ckpt_hdr_hash(h);
	__atomic_store_n(&h->state, CKPT_COMPLETE, __ATOMIC_RELEASE);
}

void ckpt_hdr_set_regions(struct ckpt_shard_hdr *h, struct ckpt_iov v)
{
	int i;

	h->nregions = v.n;
	memset(h->region_bytes, 0, sizeof(h->region_bytes));
	for (i = 0; i < v.n; i++)
		h->region_bytes[i] = v.r[i].bytes;
}

int ckpt_hdr_match_regions(const struct ckpt_shard_hdr *h, struct ckpt_iov v,
			   char *err, size_t errlen)
{
	int i;
	bool same = h->nregions == (uint32_t)v.n;

	for (i = 0; same && i < v.n; i++)
		same = h->region_bytes[i] == v.r[i].bytes;
	if (same)
		return 0;
	snprintf(err, errlen,
		 "tag %llu was saved as %u region(s) of %llu bytes in all; this load passes %d region(s) of %llu bytes%s",
		 (unsigned long long)h->tag, h->nregions, (unsigned long long)h->bytes, v.n,
		 (unsigned long long)ckpt_regions_bytes(v),
		 ckpt_regions_bytes(v) == h->bytes ? " (cut differently)" : "");
	return -EINVAL;
}

void ckpt_hdr_begin(struct ckpt_shard_hdr *h, const struct ckpt_geom *g, struct ckpt_iov v,
		    uint64_t tag)
{
	uint64_t bytes = ckpt_regions_bytes(v);

	h->magic = CKPT_SHARD_MAGIC;
	h->version = CKPT_VERSION;
	h->src_rank = g->rank;
	h->nranks = g->nranks;
	h->chunk_bytes = g->chunk_bytes;
	h->tag = tag;
	h->seq = 0;
	h->epoch = 0;
	h->bytes = bytes;
	h->saved_ns = ckpt_realtime_ns();
	h->nchunks = (bytes + g->chunk_bytes - 1) / g->chunk_bytes;
	ckpt_hdr_set_regions(h, v);
}

void ckpt_hdr_hash_data(struct ckpt_shard_hdr *h, const struct ckpt_geom *g,
			const uint8_t *data, uint64_t epoch)
{
	uint64_t off;
	uint32_t c = 0;

	for (off = 0; off < h->bytes; off += g->chunk_bytes, c++) {
		size_t len = h->bytes - off < g->chunk_bytes ? h->bytes - off : g->chunk_bytes;

		h->chunk_hash[c] = ckpt_hash(data + off, len);
	}
	h->epoch = epoch;
	h->hdr_hash = ckpt_hdr_hash(h);
}

void ckpt_copy_and_hash(struct ckpt_shard_hdr *h, const struct ckpt_geom *g,
			struct ckpt_iov v, uint8_t *dst, uint64_t tag)
{
	ckpt_hdr_begin(h, g, v, tag);
	ckpt_copy_from_regions(v, 0, dst, h->bytes);
	ckpt_hdr_hash_data(h, g, dst, 0);
}

struct copy_part {
	struct ckpt_iov v;
	uint8_t *dst;
	uint64_t off, len;
};

static void *copy_part_main(void *arg)
{
	struct copy_part *p = arg;

	ckpt_copy_from_regions(p->v, p->off, p->dst + p->off, p->len);
	return NULL;
}

int ckpt_snapshot_copy(struct ckpt_iov v, uint8_t *dst, int nthreads)
{
	uint64_t bytes = ckpt_regions_bytes(v), per, off = 0;
	struct copy_part part[16];
	pthread_t tid[16];
	bool up[16] = { false };
	int i, n = nthreads < 1 ? 1 : nthreads > 16 ? 16 : nthreads;

	/* below 8 MiB a thread's start costs more than it saves */
	if (bytes < (8u << 20))
		n = 1;
	/* page-aligned pieces: no two threads write one cache line */
	per = CKPT_ALIGN((bytes + n - 1) / n, CKPT_PAGE);
	for (i = 0; i < n; i++) {
		part[i].v = v;
		part[i].dst = dst;
		part[i].off = off;
		part[i].len = off >= bytes ? 0 : bytes - off < per ? bytes - off : per;
		off += part[i].len;
	}
	/* the caller copies piece 0; a thread that cannot start is done inline */
	for (i = 1; i < n; i++)
		up[i] = part[i].len && !pthread_create(&tid[i], NULL, copy_part_main, &part[i]);
	copy_part_main(&part[0]);
	for (i = 1; i < n; i++) {
		if (up[i])
			pthread_join(tid[i], NULL);
		else if (part[i].len)
			copy_part_main(&part[i]);
	}
	return 0;
}

int ckpt_area_path(char *out, size_t len, const char *name, uint32_t rank)
{
	const char *dir = getenv("COLLX_CKPT_SHM_DIR");
	const char *p;
	int n;

	if (!dir || !*dir)
		dir = "/dev/shm";
	if (!name || !*name)
		name = "job";
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return -EINVAL;
	if (p - name > 64)
		return -EINVAL;
	n = snprintf(out, len, "%s/collx-ckpt-%s-r%u", dir, name, rank);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
