/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx_ckpt: two-phase checkpoints over collx (Documentation/checkpoint.md).
 *
 * Phase 1 (collx_ckpt_save): every rank copies its shard into its own
 * area and sends it, with grouped send/recv on the communicator's
 * connections, into the areas of k other ranks; the kernel places each
 * replica straight into the holder's registered area (zero copy) under the
 * comm's timeouts and blame.  Phase 2 (collx-ckptd) drains an area to an
 * archive directory.  collx_ckpt_load restores a shard from the rank's own
 * area, else from a replica pushed by its holder (an RDMA WRITE from the
 * holder, not a READ by the restorer: the kernel has no one-sided get),
 * else from the archive.
 *
 * Save and load are collective: every rank of the communicator calls them
 * with the same tag, in the same order as its other collectives.  Every
 * call returns 0 or a negative errno; collx_ckpt_last_error() says why.
 *
 * A save's pause is a local snapshot: the shard is copied into the rank's
 * own area entry and collx_ckpt_save_async() returns; the replication
 * runs behind it on a communicator of its own (see
 * collx_ckpt_area_create()), driven by a thread of the library, so
 * training collectives never queue behind it or interleave with it.  A
 * checkpoint is restorable only once every rank acknowledged its shard and
 * replicas (the global commit, marked last).  Each save is named
 * (epoch, tag); a load starts a new epoch.
 */
#ifndef COLLX_CKPT_H
#define COLLX_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include <collx.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLX_CKPT_MAJOR	1
#define COLLX_CKPT_MINOR	1	/* 1: snapshot-first saves, epochs, latest */

/* Most regions in one shard, most replicas per shard. */
#define COLLX_CKPT_MAX_REGIONS	64
#define COLLX_CKPT_MAX_K	8

/* One piece of a rank's shard (register it with collx_mem_register() for
 * zero copy; unregistered memory is bounced by the kernel). */
struct collx_ckpt_region {
	void *buf;
	size_t bytes;
};

struct collx_ckpt_area;
struct collx_ckpt_op;

/*
 * The reserved area of this rank: two slots (checkpoints alternate, so a
 * crash during a save never destroys the last complete one), each holding
 * this rank's own shard and the replicas of k other ranks' shards, of at
 * most @bytes_per_shard each.  It lives in a file on tmpfs
 * ($COLLX_CKPT_SHM_DIR, default /dev/shm, named
 * collx-ckpt-<name>-r<rank>) so that it outlives a crashed
 * process and collx-ckptd can map it; its pages are reserved at once and
 * registered with @comm and with the checkpoint comm (pinned, counted
 * against RLIMIT_MEMLOCK once per registration: twice).  An
 * existing area of the same geometry is reopened with its checkpoints
 * (O_NOFOLLOW; it must be a regular file of this user with no group or
 * other permissions, else -EPERM).  The default name is a job id from the
 * launcher: $TORCHELASTIC_RUN_ID, else $SLURM_JOB_ID, else "job".
 * The replication runs on a second communicator made here with
 * collx_comm_init_all() (every rank must create its area at the same
 * point, as any init_all); collx_ckpt_area_create_comm() takes one the
 * caller made instead.
 * @k < 0 takes $COLLX_CKPT_K, else 1.  Replicas of rank r go to ranks
 * r + j * stride (mod nranks), j = 1..k; stride is $COLLX_CKPT_STRIDE, else
 * the launcher's ranks per node (LOCAL_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE,
 * MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE), else 1.
 * Errors: -EINVAL (geometry: k >= number of nodes, nranks not a multiple of
 * the stride...), -EEXIST (an area of another geometry is there), -EBUSY
 * (another process has it open), -EPERM (the file fails the checks above),
 * -ENOSPC (tmpfs full), -ENOMEM (memlock).
 */
int collx_ckpt_area_create(struct collx_comm *comm, size_t bytes_per_shard,
			   int k, struct collx_ckpt_area **area);
/* The same with @ckpt_comm (same ranks as @comm, used for nothing else
 * while the area exists; the caller destroys it after the area). */
int collx_ckpt_area_create_comm(struct collx_comm *comm, struct collx_comm *ckpt_comm,
				size_t bytes_per_shard, int k, struct collx_ckpt_area **area);

/* Close the area (deregisters it) after the save in flight, if any, ended;
 * COLLX_CKPT_UNLINK also removes its file. */
#define COLLX_CKPT_UNLINK	(1U << 0)
int collx_ckpt_area_destroy(struct collx_ckpt_area *area, unsigned int flags);

/* The area's file, for collx-ckptd --area. */
const char *collx_ckpt_area_path(const struct collx_ckpt_area *area);

/* Why the last call on @area failed ("" if it did not). */
const char *collx_ckpt_last_error(const struct collx_ckpt_area *area);

/* What a save or load did. */
struct collx_ckpt_stats {
	uint64_t tag;
	double seconds;		/* call (or submit) to last completion */
	uint64_t bytes_local;	/* this rank's shard */
	uint64_t bytes_sent;	/* to replica holders (or to a restorer) */
	uint64_t bytes_received;/* replicas held (or the shard restored) */
	uint32_t mem;		/* COLLX_MEM_* of the transfers, OR-ed */
	/* since minor 1 */
	double pause_seconds;	/* save: the snapshot, until save_async returned */
	double replicate_seconds;	/* save: the snapshot's end to the global commit */
	double queued_seconds;	/* save: waiting for the previous save's replication */
	uint64_t epoch;		/* the save's or the restored checkpoint's epoch */
};

/*
 * Phase 1: save @regions (at most bytes_per_shard in all) as checkpoint
 * @tag (non-zero; the training step, increasing: incremental archives
 * compare with the greatest older tag).  Returns once every rank's local
 * copy and replicas are complete, committed (headers written after the
 * data), acknowledged by all ranks and globally committed: the same as
 * collx_ckpt_save_async() + collx_ckpt_wait().  -EINVAL: bad arguments or
 * ranks that disagree on the tag; transfer failures as collx_wait() (the
 * checkpoint comm is then in its error state) — the previous checkpoint
 * stays complete and restorable.
 */
int collx_ckpt_save(struct collx_comm *comm, struct collx_ckpt_area *area,
		    const struct collx_ckpt_region *regions, int nregions,
		    uint64_t tag);

/*
 * The same, returning after the snapshot (the regions copied into this
 * rank's own area entry, with COLLX_CKPT_COPY_THREADS threads, default 2,
 * for shards of 8 MiB or more): the regions are free at once.  The
 * descriptor exchange, hashing, replication, acknowledgement and global
 * commit run in the library's progress thread on the checkpoint comm;
 * they need no further call.  A save while the previous one still
 * replicates first waits for it (stats: queued_seconds).  Bad input on
 * this rank is returned at once (and the other ranks' saves fail naming
 * it); every other outcome comes from collx_ckpt_wait()/collx_ckpt_test(),
 * one of which must be called to free @op.
 */
int collx_ckpt_save_async(struct collx_comm *comm, struct collx_ckpt_area *area,
			  const struct collx_ckpt_region *regions, int nregions,
			  uint64_t tag, struct collx_ckpt_op **op);
/* Wait for @op, free it, return its outcome; @st may be NULL. */
int collx_ckpt_wait(struct collx_ckpt_op *op, struct collx_ckpt_stats *st);
/* Never blocks and submits nothing: *@done = 0 while running (@op stays valid). */
int collx_ckpt_test(struct collx_ckpt_op *op, int *done, struct collx_ckpt_stats *st);

enum collx_ckpt_source {
	COLLX_CKPT_SRC_NONE = 0,
	COLLX_CKPT_SRC_LOCAL = 1,	/* this rank's own area */
	COLLX_CKPT_SRC_PEER = 2,	/* a replica pushed by its holder */
	COLLX_CKPT_SRC_ARCHIVE = 3,	/* $COLLX_CKPT_DIR, written by collx-ckptd */
};
/* "none", "local", "peer", "archive" */
const char *collx_ckpt_source_name(enum collx_ckpt_source src);

/*
 * Restore checkpoint @tag into @regions (the same sizes as saved), every
 * chunk checked against its hash.  *@source says which copy served it.
 * -ENOENT: no copy of @tag anywhere for this rank; -EINVAL: the sizes
 * differ from the saved ones; -EBADMSG: the only copy left is corrupt;
 * -EREMOTEIO: this rank restored but another could not (its rank and
 * reason are in collx_ckpt_last_error()).
 */
int collx_ckpt_load(struct collx_comm *comm, struct collx_ckpt_area *area,
		    const struct collx_ckpt_region *regions, int nregions,
		    uint64_t tag, enum collx_ckpt_source *source);
/*
 * Restoring also obeys the global commit and epochs: only globally
 * committed copies count; of several copies of @tag the newest epoch wins;
 * ranks that would restore different epochs' copies all fail (-ESTALE).
 * A successful load starts a new epoch: the next save never overwrites
 * the checkpoint just restored, and its shards never mix with the old
 * timeline's.
 */
/* collx_ckpt_load() with the transfer statistics. */
int collx_ckpt_load_stats(struct collx_comm *comm, struct collx_ckpt_area *area,
			  const struct collx_ckpt_region *regions, int nregions,
			  uint64_t tag, enum collx_ckpt_source *source,
			  struct collx_ckpt_stats *st);

/*
 * The newest checkpoint every rank can restore from memory (its own area
 * or its holders' replicas; the archive is not asked), collective on
 * @comm: *@tag and *@epoch, or -ENOENT when there is none.
 */
int collx_ckpt_latest(struct collx_comm *comm, struct collx_ckpt_area *area,
		      uint64_t *tag, uint64_t *epoch);

#ifdef __cplusplus
}
#endif

#endif /* COLLX_CKPT_H */
