// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The area of a rank, registered with its communicator: what
 * collx_ckpt_area_create() sets up from the environment, and the errors
 * and names every call shares.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_int.h"

/* Why the last collx_ckpt_area_create() of this thread failed. */
static __thread char create_err[CKPT_ERRLEN];

void ckpt_seterr(struct collx_ckpt_area *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a ? a->err : create_err, CKPT_ERRLEN, fmt, ap);
	va_end(ap);
	if (getenv("COLLX_CKPT_DEBUG"))
		fprintf(stderr, "collx-ckpt: %s\n", a ? a->err : create_err);
}

const char *collx_ckpt_last_error(const struct collx_ckpt_area *a)
{
	return a ? a->err : create_err;
}

const char *collx_ckpt_area_path(const struct collx_ckpt_area *a)
{
	return a ? a->f.path : "";
}

const char *collx_ckpt_source_name(enum collx_ckpt_source src)
{
	switch (src) {
	case COLLX_CKPT_SRC_NONE: return "none";
	case COLLX_CKPT_SRC_LOCAL: return "local";
	case COLLX_CKPT_SRC_PEER: return "peer";
	case COLLX_CKPT_SRC_ARCHIVE: return "archive";
	}
	return "unknown";
}

static int env_long(const char *name, long def, long min, long max, long *out, char *err,
		    size_t errlen)
{
	const char *s = getenv(name);
	char *e;
	long v;

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtol(s, &e, 10);
	if (errno || *e || v < min || v > max) {
		snprintf(err, errlen, "%s=%s: want an integer %ld..%ld", name, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* The area's name: COLLX_CKPT_NAME, else the launcher's job id (stable
 * across a job's restarts, distinct between jobs), else "job". */
static const char *area_name(void)
{
	static const char *const vars[] = { "COLLX_CKPT_NAME", "TORCHELASTIC_RUN_ID",
					    "SLURM_JOB_ID" };
	unsigned int i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *s = getenv(vars[i]);

		if (s && *s)
			return s;
	}
	return NULL;
}

static const char *area_name_source(void)
{
	const char *s = getenv("COLLX_CKPT_NAME");

	if (s && *s)
		return "COLLX_CKPT_NAME";
	s = getenv("TORCHELASTIC_RUN_ID");
	return s && *s ? "TORCHELASTIC_RUN_ID" : "SLURM_JOB_ID";
}

static int area_open(struct collx_comm *comm, struct collx_comm *xcomm, bool own_xcomm,
		     size_t bytes_per_shard, int k, struct collx_ckpt_area **areap)
{
	struct collx_ckpt_area *a;
	struct ckpt_geom g;
	char path[512], err[CKPT_ERRLEN];
	long stride, chunk_kib, kk = k, threads;
	int n, r, rc;
	const char *dir;

	n = collx_comm_size(comm);
	r = collx_comm_rank(comm);
	rc = ckpt_env_stride(&stride, err, sizeof(err));
	if (!rc)
		rc = env_long("COLLX_CKPT_CHUNK_KIB", 1024, 4, 1 << 20, &chunk_kib, err, sizeof(err));
	if (!rc)
		rc = env_long("COLLX_CKPT_COPY_THREADS", 2, 1, 16, &threads, err, sizeof(err));
	/* default: one replica, or none on a single node */
	if (!rc && k < 0)
		rc = env_long("COLLX_CKPT_K", n / stride > 1 ? 1 : 0, 0, COLLX_CKPT_MAX_K, &kk, err,
			      sizeof(err));
	if (!rc && chunk_kib % 4) {
		snprintf(err, sizeof(err), "COLLX_CKPT_CHUNK_KIB=%ld: want a multiple of 4", chunk_kib);
		rc = -EINVAL;
	}
	if (!rc && (collx_comm_size(xcomm) != n || collx_comm_rank(xcomm) != r || xcomm == comm)) {
		snprintf(err, sizeof(err),
			 "the checkpoint comm must be another communicator of the same ranks (rank %d of %d; training comm rank %d of %d)",
			 collx_comm_rank(xcomm), collx_comm_size(xcomm), r, n);
		rc = -EINVAL;
	}
	if (!rc)
		rc = ckpt_geom_make(&g, n, r, kk, stride, bytes_per_shard, chunk_kib * 1024, err,
				    sizeof(err));
	if (!rc && ckpt_area_path(path, sizeof(path), area_name(), r)) {
		snprintf(err, sizeof(err), "%s: letters, digits, '-', '_', '.', at most 64",
			 area_name_source());
		rc = -EINVAL;
	}
	if (rc) {
		ckpt_seterr(NULL, "area: %s", err);
		return rc;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->comm = comm;
	a->xcomm = xcomm;
	a->copy_threads = threads;
	rc = ckpt_file_create(&a->f, path, &g, err, sizeof(err));
	if (rc) {
		ckpt_seterr(NULL, "area: %s", err);
		free(a);
		return rc;
	}
	/* pinned for the area's life, with both comms: replicas land in it
	 * zero copy (checkpoint comm) and restores push from it (the
	 * caller's); its pages count against RLIMIT_MEMLOCK */
	rc = collx_mem_register(xcomm, a->f.map, a->f.len, &a->xmr);
	if (!rc) {
		rc = collx_mem_register(comm, a->f.map, a->f.len, &a->mr);
		if (rc)
			collx_mem_deregister(xcomm, a->xmr);
	}
	if (rc) {
		ckpt_seterr(NULL, "area: registering %zu bytes of %s: %s (%s)", a->f.len, path,
			    collx_strerror(rc), collx_comm_last_error(comm));
		ckpt_file_close(&a->f);
		free(a);
		return rc;
	}
	a->next_seq = ckpt_next_seq(&a->f);
	a->max_epoch = ckpt_max_epoch(&a->f);
	a->protect_epoch = ckpt_area_hdr(&a->f)->protect_epoch;
	a->protect_tag = ckpt_area_hdr(&a->f)->protect_tag;
	a->epoch = 0;	/* a new process starts a new timeline at its first save */
	dir = getenv("COLLX_CKPT_DIR");
	snprintf(a->archive_dir, sizeof(a->archive_dir), "%s", dir ? dir : "");
	if (a->archive_dir[0]) {
		struct ckpt_id *ids;
		size_t n;

		/* a job started afresh (its areas gone, nothing restored) must
		 * not reuse an epoch the archive has: its (epoch, tag) folders
		 * would mix two timelines.  Sorted: the last has the greatest. */
		if (!ckpt_archive_list(a->archive_dir, &ids, &n)) {
			if (n && ids[n - 1].epoch > a->max_epoch)
				a->max_epoch = ids[n - 1].epoch;
			free(ids);
		}
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	rc = -pthread_create(&a->thread, NULL, ckpt_progress_main, a);
	if (rc) {
		ckpt_seterr(NULL, "area: starting the progress thread: %s", strerror(-rc));
		collx_mem_deregister(comm, a->mr);
		collx_mem_deregister(xcomm, a->xmr);
		ckpt_file_close(&a->f);
		free(a);
		return rc;
	}
	a->thread_up = true;
	a->own_xcomm = own_xcomm;
	*areap = a;
	return 0;
}

int collx_ckpt_area_create_comm(struct collx_comm *comm, struct collx_comm *xcomm,
				size_t bytes_per_shard, int k, struct collx_ckpt_area **areap)
{
	if (!areap || !comm || !xcomm) {
		ckpt_seterr(NULL, "collx_ckpt_area_create_comm: NULL argument");
		return -EINVAL;
	}
	*areap = NULL;
	return area_open(comm, xcomm, false, bytes_per_shard, k, areap);
}

int collx_ckpt_area_create(struct collx_comm *comm, size_t bytes_per_shard, int k,
			   struct collx_ckpt_area **areap)
{
	struct collx_comm *xcomm;
	int rc;

	if (!areap || !comm) {
		ckpt_seterr(NULL, "collx_ckpt_area_create: NULL argument");
		return -EINVAL;
	}
	*areap = NULL;
	/* the n-th init_all of every rank pairs with the n-th of the others,
	 * on the same rendezvous port (user/lib/bootstrap.c: the hello
	 * carries the sequence number), so no second port is needed */
	rc = collx_comm_init_all(&xcomm);
	if (rc) {
		ckpt_seterr(NULL, "area: creating the checkpoint communicator (collx_comm_init_all, a second rendezvous): %s (%s)",
			    collx_strerror(rc), collx_comm_last_error(NULL));
		return rc;
	}
	rc = area_open(comm, xcomm, true, bytes_per_shard, k, areap);
	if (rc)
		collx_comm_destroy(xcomm);
	return rc;
}

int collx_ckpt_area_destroy(struct collx_ckpt_area *a, unsigned int flags)
{
	int rc = 0;

	if (!a)
		return -EINVAL;
	if (flags & ~COLLX_CKPT_UNLINK)
		return -EINVAL;
	/* the save in flight ends first (bounded by the comm's timeouts) */
	ckpt_wait_idle(a);
	if (a->thread_up) {
		pthread_mutex_lock(&a->lock);
		a->stop = true;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
		a->thread_up = false;
	}
	if (a->mr)
		rc = collx_mem_deregister(a->comm, a->mr);
	if (rc == -EBUSY) {
		ckpt_seterr(a, "the area is still in use by a collective");
		return rc;
	}
	a->mr = NULL;
	if (a->xmr)
		collx_mem_deregister(a->xcomm, a->xmr);
	a->xmr = NULL;
	if (a->own_xcomm)
		collx_comm_destroy(a->xcomm);
	if (flags & COLLX_CKPT_UNLINK)
		unlink(a->f.path);
	ckpt_file_close(&a->f);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a);
	return 0;
}

int ckpt_check_regions(struct collx_ckpt_area *a, const struct collx_ckpt_region *regions,
		       int nregions, struct ckpt_iov *v)
{
	uint64_t sum = 0;
	int i;

	if (nregions < 1 || nregions > COLLX_CKPT_MAX_REGIONS || !regions) {
		ckpt_seterr(a, "%d regions: want 1..%d", nregions, COLLX_CKPT_MAX_REGIONS);
		return -EINVAL;
	}
	for (i = 0; i < nregions; i++) {
		if (!regions[i].buf && regions[i].bytes) {
			ckpt_seterr(a, "region %d: NULL buffer of %zu bytes", i, regions[i].bytes);
			return -EINVAL;
		}
		sum += regions[i].bytes;
	}
	if (sum > a->f.g.shard_cap) {
		ckpt_seterr(a, "the regions hold %llu bytes; the area takes shards of at most %llu",
			    (unsigned long long)sum, (unsigned long long)a->f.g.shard_cap);
		return -EINVAL;
	}
	v->r = regions;
	v->n = nregions;
	return 0;
}

int ckpt_combine(struct collx_ckpt_area *a, const int32_t *st, int nranks, int mine,
		 const char *what)
{
	int i;

	if (mine)
		return mine;
	for (i = 0; i < nranks; i++)
		if (st[i]) {
			ckpt_seterr(a, "%s: rank %d failed: %s", what, i, collx_strerror(st[i]));
			return -EREMOTEIO;
		}
	return 0;
}
