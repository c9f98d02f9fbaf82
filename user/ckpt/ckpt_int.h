/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx_ckpt internals, shared by the library, collx-ckptd and the host
 * unit tests.  Grouped by the file that defines them.
 */
#ifndef CKPT_INT_H
#define CKPT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/uio.h>

#include "collx_ckpt.h"

#define CKPT_ERRLEN	512
#define CKPT_PAGE	4096u
#define CKPT_ALIGN(x, a)	(((x) + (a) - 1) / (a) * (a))

/* ---- hash.c: XXH3-64 (libxxhash) per chunk -------------------------- */

uint64_t ckpt_hash(const void *buf, size_t len);

/* A byte range of a shard spread over regions. */
struct ckpt_iov {
	const struct collx_ckpt_region *r;
	int n;
};
/* Hash [@off, @off + @len) of the regions' concatenation. */
uint64_t ckpt_hash_regions(struct ckpt_iov v, uint64_t off, size_t len);
/* Copy between the regions' concatenation and a flat buffer. */
void ckpt_copy_from_regions(struct ckpt_iov v, uint64_t off, void *dst, size_t len);
void ckpt_copy_to_regions(struct ckpt_iov v, uint64_t off, const void *src, size_t len);
/* iovecs covering [@off, @off + @len); returns how many (at most @max). */
int ckpt_regions_iov(struct ckpt_iov v, uint64_t off, size_t len, struct iovec *iov, int max);
uint64_t ckpt_regions_bytes(struct ckpt_iov v);

/* ---- place.c: who holds whose replicas ------------------------------- */

/* Ranks per node for placement: COLLX_CKPT_STRIDE, the launcher's local
 * size, else 1. */
int ckpt_env_stride(long *stride, char *err, size_t errlen);
/* 0, or -EINVAL with the reason: k replicas on other nodes need
 * nranks % stride == 0 and k < nranks / stride. */
int ckpt_place_check(uint32_t nranks, uint32_t stride, uint32_t k, char *err, size_t errlen);
/* The j-th (1..k) holder of rank r's shard, and the source of r's j-th
 * replica entry. */
uint32_t ckpt_holder(uint32_t nranks, uint32_t stride, uint32_t r, uint32_t j);
uint32_t ckpt_source(uint32_t nranks, uint32_t stride, uint32_t r, uint32_t j);

/* ---- areafile.c: the area's file format ------------------------------ */

#define CKPT_AREA_MAGIC		0x41544b504358434cULL	/* "LCXCPKTA" */
#define CKPT_SHARD_MAGIC	0x53544b50u		/* "PKTS" */
#define CKPT_VERSION		2	/* 2: epochs, the global commit mark */
#define CKPT_NSLOTS		2

enum ckpt_state {
	CKPT_EMPTY = 0,		/* nothing, or being written */
	CKPT_COMPLETE = 0x434f4d50,	/* "COMP": data and header whole */
};

/* ckpt_shard_hdr.gstate: written by the save's progress thread only after
 * every rank acknowledged its shard and replicas (the global commit);
 * restore, latest and collx-ckptd take only copies marked so. */
#define CKPT_GCOMMIT		0x474c4f42u	/* "GLOB" */

struct ckpt_geom {
	uint32_t nranks, rank, k, stride;
	uint32_t chunk_bytes;
	uint32_t max_chunks;
	uint64_t shard_cap;	/* bytes_per_shard */
	uint64_t hdr_block;	/* bytes of one shard header, page-aligned */
	uint64_t data_cap;	/* shard_cap, page-aligned */
	uint64_t entry_bytes;	/* hdr_block + data_cap */
	uint64_t file_bytes;
};

/* Page 0 of the file. */
struct ckpt_area_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nranks, rank, k, stride;
	uint32_t chunk_bytes;
	uint64_t shard_cap;
	uint64_t hdr_block;
	uint64_t data_cap;
	uint64_t created_ns;
	/* below: not geometry; written by the library while it owns the file */
	uint64_t max_epoch;	/* greatest epoch saved or restored here */
	/* the last global commit (collx-ckptd --latest): set after the
	 * acknowledgement, seq last (release) */
	uint64_t commit_epoch, commit_tag, commit_seq;
	/* what the next save must not overwrite (ckpt_victim): the last
	 * restored or globally committed save; kept here so that a restarted
	 * process honours its predecessor's restore */
	uint64_t protect_epoch, protect_tag;
	/* the reader mark (collx-ckptd, while it drains a copy): the copy of
	 * entry pin_entry whose seq is pin_seq is no victim (ckpt_victim)
	 * while process pin_pid lives; pin_seq is written last, 0 clears */
	uint32_t pin_entry, pin_pid;
	uint64_t pin_seq;
};

/* One shard's header: written after its data, state last. */
struct ckpt_shard_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t state;		/* enum ckpt_state */
	uint32_t src_rank;	/* whose shard */
	uint32_t nranks;
	uint32_t chunk_bytes;
	uint64_t tag;
	uint64_t seq;		/* order of commits in this area */
	uint64_t bytes;
	uint64_t saved_ns;	/* CLOCK_REALTIME of the save */
	uint64_t epoch;		/* the run's timeline: (epoch, tag) names a save */
	uint32_t gstate;	/* CKPT_GCOMMIT once globally committed */
	uint32_t __pad2;
	uint32_t nchunks;
	uint32_t nregions;
	uint64_t region_bytes[COLLX_CKPT_MAX_REGIONS];
	uint64_t hdr_hash;	/* of everything here but state and itself */
	uint64_t chunk_hash[];
};

struct ckpt_file {
	int fd;
	uint8_t *map;
	size_t len;
	bool writable;
	struct ckpt_geom g;
	char path[256];
};

int ckpt_geom_make(struct ckpt_geom *g, uint32_t nranks, uint32_t rank, uint32_t k,
		   uint32_t stride, uint64_t shard_cap, uint32_t chunk_bytes,
		   char *err, size_t errlen);
/* Create (O_EXCL|O_NOFOLLOW, 0600) or reopen (O_NOFOLLOW, when
 * ckpt_file_check passes and the geometry matches) and map read-write, its
 * pages reserved; flock'ed so one process owns it. */
int ckpt_file_create(struct ckpt_file *f, const char *path, const struct ckpt_geom *g,
		     char *err, size_t errlen);
/* An area file may be trusted: a regular file of this user, no group or
 * other permissions; else -EPERM naming what is wrong. */
int ckpt_file_check(int fd, const char *path, char *err, size_t errlen);
/* Map an existing area (collx-ckptd: read-only; O_NOFOLLOW and
 * ckpt_file_check as for create). */
int ckpt_file_open(struct ckpt_file *f, const char *path, bool writable,
		   char *err, size_t errlen);
void ckpt_file_close(struct ckpt_file *f);
/* Entry 0 is the own shard, entry j the replica of ckpt_source(.., j). */
struct ckpt_shard_hdr *ckpt_hdr(const struct ckpt_file *f, int slot, int entry);
uint8_t *ckpt_data(const struct ckpt_file *f, int slot, int entry);
uint32_t ckpt_entry_src(const struct ckpt_geom *g, int entry);
uint64_t ckpt_hdr_hash(const struct ckpt_shard_hdr *h);
/* Header intact (magic, geometry, hash), whatever its state: 0 or -EBADMSG. */
int ckpt_hdr_check(const struct ckpt_file *f, const struct ckpt_shard_hdr *h);
/* ckpt_hdr_check() and COMPLETE: 0 or -EBADMSG/-ENOENT. */
int ckpt_hdr_valid(const struct ckpt_file *f, const struct ckpt_shard_hdr *h);
/* Slot of the newest (greatest epoch, then seq) globally committed copy
 * of @entry with @tag (0: any tag), or -1. */
int ckpt_find(const struct ckpt_file *f, int entry, uint64_t tag);
/* The same for a copy of exactly (@epoch, @tag). */
int ckpt_find_id(const struct ckpt_file *f, int entry, uint64_t epoch, uint64_t tag);
/* Slot of the newest complete copy, committed globally or not, or -1. */
int ckpt_find_complete(const struct ckpt_file *f, int entry);
/* The slot a new save of @entry overwrites: never the one holding the
 * protected identity (@pepoch, @ptag: the last restored or globally
 * committed save; 0, 0 for none), else never the newest globally
 * committed, else never the newest complete. */
int ckpt_victim(const struct ckpt_file *f, int entry, uint64_t pepoch, uint64_t ptag);
/* Whether (@slot, @entry) holds the copy collx-ckptd has pinned (its
 * process alive). */
bool ckpt_pinned(const struct ckpt_file *f, int slot, int entry);
/* ckpt_victim, honouring the pin: the slot, or -EBUSY when the only slot
 * it could take is pinned (*@pin_tag, *@pin_epoch say what is drained). */
int ckpt_victim_pinned(const struct ckpt_file *f, int entry, uint64_t pepoch, uint64_t ptag,
		       uint64_t *pin_epoch, uint64_t *pin_tag);
/* collx-ckptd's writable view of page 0 (the pin), its own mapping. */
struct ckpt_area_hdr *ckpt_pin_map(const char *path, char *err, size_t errlen);
void ckpt_pin_unmap(struct ckpt_area_hdr *a);
/* Pin (@entry, @seq), or clear with @seq 0. */
void ckpt_pin_set(struct ckpt_area_hdr *a, uint32_t entry, uint64_t seq);
uint64_t ckpt_next_seq(const struct ckpt_file *f);
/* Greatest epoch in the area's header and in any header. */
uint64_t ckpt_max_epoch(const struct ckpt_file *f);
/* Mark empty before data arrives; commit after (seq set, hash, state). */
void ckpt_hdr_invalidate(struct ckpt_shard_hdr *h);
void ckpt_hdr_commit(struct ckpt_shard_hdr *h, uint64_t seq);
/* The global commit mark, after every rank's acknowledgement. */
void ckpt_hdr_gcommit(struct ckpt_shard_hdr *h);
/* The area's record of the last global commit (page 0). */
void ckpt_area_record_commit(const struct ckpt_file *f, uint64_t epoch, uint64_t tag,
			     uint64_t seq);
void ckpt_area_record_epoch(const struct ckpt_file *f, uint64_t max_epoch);
void ckpt_area_record_protect(const struct ckpt_file *f, uint64_t epoch, uint64_t tag);
const struct ckpt_area_hdr *ckpt_area_hdr(const struct ckpt_file *f);
/* The header of the own shard of @bytes (no hashes yet). */
void ckpt_hdr_begin(struct ckpt_shard_hdr *h, const struct ckpt_geom *g, struct ckpt_iov v,
		    uint64_t tag);
/* Chunk hashes of @data (the header's bytes), then the header's hash. */
void ckpt_hdr_hash_data(struct ckpt_shard_hdr *h, const struct ckpt_geom *g,
			const uint8_t *data, uint64_t epoch);
/* ckpt_hdr_begin + copy + ckpt_hdr_hash_data in one pass (unit tests). */
void ckpt_copy_and_hash(struct ckpt_shard_hdr *h, const struct ckpt_geom *g,
			struct ckpt_iov v, uint8_t *dst, uint64_t tag);
/* Copy the regions into @dst with @nthreads threads (the snapshot). */
int ckpt_snapshot_copy(struct ckpt_iov v, uint8_t *dst, int nthreads);
/* Sizes of @v as a header's region table. */
void ckpt_hdr_set_regions(struct ckpt_shard_hdr *h, struct ckpt_iov v);
/* Whether @h was saved with the sizes of @v; the reason otherwise. */
int ckpt_hdr_match_regions(const struct ckpt_shard_hdr *h, struct ckpt_iov v,
			   char *err, size_t errlen);
/* The area file of @name and @rank in $COLLX_CKPT_SHM_DIR (or /dev/shm). */
int ckpt_area_path(char *out, size_t len, const char *name, uint32_t rank);

/* ---- manifest.c: an archived shard ------------------------------------ */

struct ckpt_mchunk {
	uint64_t hash;
	uint64_t src_epoch, src_tag;	/* archive holding the bytes */
	uint64_t offset;	/* in that archive's data file */
	uint32_t len;
};

struct ckpt_manifest {
	uint64_t tag;
	uint32_t rank, nranks;
	uint64_t seq;
	uint64_t epoch;		/* the save's; 0: unknown (written before epochs) */
	uint64_t bytes;
	uint32_t chunk_bytes;
	uint32_t nregions;
	uint64_t region_bytes[COLLX_CKPT_MAX_REGIONS];
	uint32_t nchunks;
	struct ckpt_mchunk *chunks;
};

/* Text of @m; malloc'd, NUL-terminated; NULL without memory. */
char *ckpt_manifest_format(const struct ckpt_manifest *m, size_t *len);
/* Parse and check; -EBADMSG naming the line on anything wrong. */
int ckpt_manifest_parse(const char *text, size_t len, struct ckpt_manifest *m,
			char *err, size_t errlen);
void ckpt_manifest_free(struct ckpt_manifest *m);
/* DIR/ckpt-<epoch>-<tag>/rank-<r>.{manifest,data}, .../COMMITTED (what
 * "COMMITTED"), the folder (what NULL); both numbers 20 digits. */
int ckpt_archive_path(char *out, size_t len, const char *dir, uint64_t epoch, uint64_t tag,
		      uint32_t rank, const char *what);
/* Read DIR's manifest of (epoch, tag, rank): -ENOENT, -EBADMSG. */
int ckpt_manifest_load(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen);
/* Write exclusively: a unique temp file, fsync, link() to its name
 * (-EEXIST when another writer was first), fsync the directory. */
int ckpt_manifest_store(const char *dir, const struct ckpt_manifest *m,
			char *err, size_t errlen);
/* The manifest of @rank with the greatest (epoch, tag) below the given. */
int ckpt_manifest_prev(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen);
/* "<final>.<pid>.<counter>.<ns>.tmp": no two writers share it. */
int ckpt_tmp_name(char *out, size_t len, const char *final);
/* link(@tmp, @final), then unlink @tmp: -EEXIST when @final was there. */
int ckpt_publish(const char *tmp, const char *final);

struct ckpt_id {
	uint64_t epoch, tag;
};
/* The archive folders of DIR, oldest (epoch, tag) first; malloc'd. */
int ckpt_archive_list(const char *dir, struct ckpt_id **ids, size_t *n);
/* The checkpoint-level marker ckpt-E-T/COMMITTED: 0 and its world size,
 * -ENOENT, -EBADMSG. */
int ckpt_committed_read(const char *dir, uint64_t epoch, uint64_t tag, uint32_t *nranks);
/* Write COMMITTED when all @nranks manifests are there and check: 0 (this
 * caller wrote it), -EEXIST (there already: someone else did), -EAGAIN
 * (a rank's manifest is missing), -EBADMSG. */
int ckpt_commit_archive(const char *dir, uint64_t epoch, uint64_t tag, uint32_t nranks,
			char *err, size_t errlen);
/* Retention: remove the archives older than the newest @keep complete
 * ones, except those a kept manifest takes chunks from (0: keep all). */
int ckpt_archive_gc(const char *dir, uint32_t keep, uint32_t *removed, char *err, size_t errlen);

/* ---- archive.c: phase 2 and reading back -------------------------------- */

struct ckpt_archive_opts {
	const char *dir;
	bool incremental;
	bool no_direct;		/* never O_DIRECT */
	bool no_uring;		/* pwrite instead of io_uring (tests) */
	uint32_t hold_ms;	/* sleep before publishing (tests: a long drain) */
	uint32_t write_max;	/* bytes per write, default 8 MiB */
};

struct ckpt_archive_res {
	uint64_t tag;
	uint32_t rank;
	uint32_t chunks, written_chunks, reused_chunks;
	uint64_t written_bytes;
	bool direct;		/* O_DIRECT ran */
	bool uring;		/* io_uring ran */
	double seconds;
};

/* A data file without its manifest this long (seconds) was left by a
 * writer that died between the two: the next drain replaces it. */
#define CKPT_STALE_S	60
/* Archive the complete copy in (@slot, @entry) of @f.  -EAGAIN: the slot
 * was reused while being drained (nothing was published); -EEXIST:
 * another collx-ckptd published (or is writing) this shard. */
int ckpt_archive_entry(const struct ckpt_file *f, int slot, int entry,
		       const struct ckpt_archive_opts *o, struct ckpt_archive_res *res,
		       char *err, size_t errlen);
/* Restore (tag, rank) from DIR into @v, every chunk checked: from the
 * archive of @tag with the greatest epoch (@want_epoch when not 0) that
 * has its COMMITTED marker, of @nranks ranks (0: not checked); *@epoch
 * (may be NULL) the archived save's epoch. */
int ckpt_archive_read(const char *dir, uint64_t tag, uint32_t rank, uint32_t nranks,
		      uint64_t want_epoch, struct ckpt_iov v, uint64_t *epoch,
		      char *err, size_t errlen);

/* ---- metrics.c: node_exporter textfile ---------------------------------- */

/* pause: the snapshot save_async returns after; dump: the whole save
 * (call to global commit) */
enum ckpt_phase { CKPT_PHASE_DUMP, CKPT_PHASE_ARCHIVE, CKPT_PHASE_RESTORE, CKPT_PHASE_PAUSE,
		  CKPT_PHASE_REPLICATE, CKPT_NPHASES };
/* a checkpoint's archive state (collx-ckptd --status, metrics) */
enum ckpt_astate { CKPT_ST_MEMORY, CKPT_ST_ARCHIVING, CKPT_ST_ARCHIVED, CKPT_ST_FAILED,
		   CKPT_NSTATES };

/* Record a phase and, when COLLX_CKPT_METRICS_DIR (or @dir) is set,
 * replace <dir>/collx_ckpt_<role>_r<rank>.prom atomically. */
int ckpt_metrics_observe(const char *dir, const char *role, uint32_t rank,
			 enum ckpt_phase phase, double seconds, uint64_t bytes,
			 uint64_t tag, const char *source);
/* Rewrite the file with what is recorded (after the setters below). */
int ckpt_metrics_flush(const char *dir, const char *role, uint32_t rank);
/* The last global commit: committed step (tag) and epoch gauges. */
void ckpt_metrics_commit(uint64_t epoch, uint64_t tag);
/* collx-ckptd: checkpoints per archive state; bytes an incremental
 * archive reused; a failed drain. */
void ckpt_metrics_archive_states(const uint32_t count[CKPT_NSTATES]);
void ckpt_metrics_archive_saved(uint64_t bytes);
void ckpt_metrics_archive_failed(void);
/* The exposition text of what was recorded (tests). */
char *ckpt_metrics_text(uint32_t rank);
void ckpt_metrics_reset(void);

/* ---- area.c, save.c, load.c: the library ------------------------------ */

struct collx_ckpt_area {
	struct collx_comm *comm;	/* the caller's: load, latest */
	struct collx_comm *xcomm;	/* the checkpoint's own: replication */
	bool own_xcomm;			/* made by area_create, destroyed with it */
	struct ckpt_file f;
	void *mr;			/* the area's registration with comm */
	void *xmr;			/* ... and with xcomm */
	uint64_t next_seq;
	uint64_t epoch;			/* this timeline's; 0: the next save starts one */
	uint64_t max_epoch;		/* greatest epoch seen here */
	uint64_t protect_epoch, protect_tag;	/* never a victim (ckpt_victim) */
	int copy_threads;		/* COLLX_CKPT_COPY_THREADS */
	/* the progress thread: runs one save's replication at a time */
	pthread_t thread;
	bool thread_up;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct collx_ckpt_op *job;	/* queued or running, NULL when idle */
	bool stop;
	bool busy;			/* a save is in flight (job != NULL) */
	char archive_dir[2048];		/* COLLX_CKPT_DIR, "" for none */
	char err[CKPT_ERRLEN];
};

void ckpt_seterr(struct collx_ckpt_area *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The regions as one iov; -EINVAL (reason in @a) when malformed. */
int ckpt_check_regions(struct collx_ckpt_area *a, const struct collx_ckpt_region *regions,
		       int nregions, struct ckpt_iov *v);
/* "rank 3: Connection reset by peer (...)" for statuses gathered from all. */
int ckpt_combine(struct collx_ckpt_area *a, const int32_t *st, int nranks, int mine,
		 const char *what);
/* save.c: the progress thread's body; block until no save is in flight
 * (returns the seconds waited). */
void *ckpt_progress_main(void *arg);
double ckpt_wait_idle(struct collx_ckpt_area *a);

/* ---- util.c -------------------------------------------------------------- */

double ckpt_now(void);		/* CLOCK_MONOTONIC seconds */
uint64_t ckpt_realtime_ns(void);
int ckpt_write_all(int fd, const void *buf, size_t len);
int ckpt_fsync_dir(const char *path);

#endif /* CKPT_INT_H */
