// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Phase 2: drain one complete shard copy of an area to the archive
 * directory, and read an archived shard back.
 *
 * DIR/ckpt-<tag>/rank-<r>.data holds the chunks this archive wrote, back
 * to back, in large sequential writes through io_uring (O_DIRECT when the
 * filesystem takes it); rank-<r>.manifest, written last and atomically,
 * says where every chunk is.  Incremental: a chunk whose hash equals the
 * previous archive's is not written; the manifest points at the older
 * bytes.  The slot may be reused by a later save while we drain it: its
 * header is read again at the end and nothing is published if it changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_int.h"

#define QD	8

struct wreq {
	const uint8_t *src;
	uint64_t off;		/* in the data file */
	size_t len;
};

/* pwrite fallback when io_uring cannot be set up (seccomp'ed hosts). */
static int write_pwrite(int fd, const struct wreq *w, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t done = 0;

		while (done < w[i].len) {
			ssize_t r = pwrite(fd, w[i].src + done, w[i].len - done, w[i].off + done);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				return -EIO;
			done += r;
		}
	}
	return fsync(fd) < 0 ? -errno : 0;
}

/* QD writes in flight, short completions resubmitted, then an fsync. */
static int write_uring(struct io_uring *ring, int fd, const struct wreq *w, int n)
{
	size_t *done = calloc(n ? n : 1, sizeof(*done));
	int next = 0, inflight = 0, err = 0, i;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	if (!done)
		return -ENOMEM;
	while ((next < n && !err) || inflight) {
		while (next < n && !err && inflight < QD) {
			sqe = io_uring_get_sqe(ring);
			if (!sqe)
				break;
			io_uring_prep_write(sqe, fd, w[next].src, w[next].len, w[next].off);
			io_uring_sqe_set_data64(sqe, next);
			next++;
			inflight++;
		}
		if (io_uring_submit_and_wait(ring, 1) < 0 && !err)
			err = -EIO;
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			int idx = (int)io_uring_cqe_get_data64(cqe);
			int res = cqe->res;

			io_uring_cqe_seen(ring, cqe);
			inflight--;
			if (res < 0) {
				if (!err)
					err = res;
				continue;
			}
			if (res == 0 && !err)
				err = -EIO;
			done[idx] += res;
			if (!err && done[idx] < w[idx].len) {
				sqe = io_uring_get_sqe(ring);
				if (!sqe) {
					err = -EBUSY;
					continue;
				}
				io_uring_prep_write(sqe, fd, w[idx].src + done[idx],
						    w[idx].len - done[idx], w[idx].off + done[idx]);
				io_uring_sqe_set_data64(sqe, idx);
				inflight++;
			}
		}
	}
	free(done);
	if (err)
		return err;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_fsync(sqe, fd, 0);
	if (io_uring_submit_and_wait(ring, 1) < 0)
		return -EIO;
	if (io_uring_wait_cqe(ring, &cqe) < 0)
		return -EIO;
	i = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return i < 0 ? i : 0;
}

static int mkdir_one(const char *p)
{
	return mkdir(p, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

int ckpt_archive_entry(const struct ckpt_file *f, int slot, int entry,
		       const struct ckpt_archive_opts *o, struct ckpt_archive_res *res,
		       char *err, size_t errlen)
{
	const struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, entry);
	const uint8_t *data = ckpt_data(f, slot, entry);
	uint32_t write_max = o->write_max ? o->write_max : 8u << 20;
	struct ckpt_manifest m = { 0 }, prev = { 0 };
	char sub[4096], path[4096], final[4096], e2[CKPT_ERRLEN];
	struct wreq *w = NULL;
	struct io_uring ring;
	bool have_prev = false, ring_ok = false, direct;
	uint64_t seq, fpos = 0, real_end;
	uint32_t i, nw = 0;
	size_t last_len;
	double t0 = ckpt_now();
	int fd = -1, rc;

	memset(res, 0, sizeof(*res));
	rc = ckpt_hdr_valid(f, h);
	if (rc) {
		snprintf(err, errlen, "%s slot %d entry %d: %s", f->path, slot, entry,
			 rc == -ENOENT ? "no complete copy" : "corrupt header");
		return rc;
	}
	seq = h->seq;
	m.tag = h->tag;
	m.rank = h->src_rank;
	m.nranks = h->nranks;
	m.seq = seq;
	m.epoch = h->epoch;
	m.bytes = h->bytes;
	m.chunk_bytes = h->chunk_bytes;
	m.nregions = h->nregions;
	memcpy(m.region_bytes, h->region_bytes, sizeof(m.region_bytes));
	m.nchunks = h->nchunks;
	m.chunks = calloc(m.nchunks ? m.nchunks : 1, sizeof(*m.chunks));
	w = calloc(m.nchunks ? m.nchunks * 2 + 1 : 1, sizeof(*w));
	if (!m.chunks || !w) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < m.nchunks; i++) {
		m.chunks[i].hash = h->chunk_hash[i];
		m.chunks[i].len = i + 1 < m.nchunks ? m.chunk_bytes :
				  m.bytes - (uint64_t)i * m.chunk_bytes;
	}
	res->tag = m.tag;
	res->rank = m.rank;
	res->chunks = m.nchunks;
	if (o->incremental &&
	    !ckpt_manifest_prev(o->dir, m.epoch, m.tag, m.rank, &prev, e2, sizeof(e2)) &&
	    prev.chunk_bytes == m.chunk_bytes)
		have_prev = true;
	/* which chunks to write, as runs cut into writes of <= write_max */
	for (i = 0; i < m.nchunks; i++) {
		struct ckpt_mchunk *c = &m.chunks[i];
		uint64_t src_off = (uint64_t)i * m.chunk_bytes;

		if (have_prev && i < prev.nchunks && prev.chunks[i].len == c->len &&
		    prev.chunks[i].hash == c->hash) {
			c->src_epoch = prev.chunks[i].src_epoch;
			c->src_tag = prev.chunks[i].src_tag;
			c->offset = prev.chunks[i].offset;
			res->reused_chunks++;
			continue;
		}
		/* what we write must be what the header describes */
		if (ckpt_hash(data + src_off, c->len) != c->hash) {
			rc = h->seq != seq || h->state != CKPT_COMPLETE ? -EAGAIN : -EBADMSG;
			snprintf(err, errlen, "%s slot %d entry %d chunk %u: %s", f->path, slot, entry,
				 i, rc == -EAGAIN ? "overwritten by a newer save while archiving" :
				 "data does not match its hash (corrupt area)");
			goto out;
		}
		c->src_epoch = m.epoch;
		c->src_tag = m.tag;
		c->offset = fpos;
		if (nw && w[nw - 1].src + w[nw - 1].len == data + src_off &&
		    w[nw - 1].off + w[nw - 1].len == fpos && w[nw - 1].len + c->len <= write_max) {
			w[nw - 1].len += c->len;
		} else {
			w[nw].src = data + src_off;
			w[nw].off = fpos;
			w[nw].len = c->len;
			nw++;
		}
		fpos += c->len;
		res->written_chunks++;
		res->written_bytes += c->len;
	}
	real_end = fpos;
	rc = mkdir_one(o->dir);
	if (!rc)
		rc = ckpt_archive_path(sub, sizeof(sub), o->dir, m.epoch, m.tag, 0, NULL);
	if (!rc)
		rc = mkdir_one(sub);
	if (!rc)
		rc = ckpt_fsync_dir(o->dir);
	if (!rc)
		rc = ckpt_archive_path(final, sizeof(final), o->dir, m.epoch, m.tag, m.rank, "data");
	if (!rc)
		rc = ckpt_tmp_name(path, sizeof(path), final);
	if (!rc) {
		struct stat st;
		char man[4096];

		/* another daemon's, published (its manifest follows within
		 * milliseconds) - unless its writer died between the two: a
		 * data file without a manifest for CKPT_STALE_S is removed */
		if (stat(final, &st) == 0) {
			rc = -EEXIST;
			if (!ckpt_archive_path(man, sizeof(man), o->dir, m.epoch, m.tag, m.rank,
					       "manifest") && access(man, F_OK) < 0 && errno == ENOENT &&
			    (uint64_t)st.st_mtime + CKPT_STALE_S < ckpt_realtime_ns() / 1000000000ull &&
			    unlink(final) == 0)
				rc = 0;
		}
	}
	if (rc == -EEXIST) {
		snprintf(err, errlen, "%s exists: another collx-ckptd archives this shard", final);
		goto out;
	}
	if (rc) {
		snprintf(err, errlen, "archive directory %s: %s", sub, strerror(-rc));
		goto out;
	}
	if (!o->no_uring) {
		rc = io_uring_queue_init(QD * 2, &ring, 0);
		ring_ok = rc == 0;
	}
	direct = !o->no_direct;
	last_len = nw ? w[nw - 1].len : 0;
	for (;;) {
		/* a name of our own: no other writer opens it */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC |
			  (direct ? O_DIRECT : 0), 0600);
		if (fd < 0 && direct && errno == EINVAL) {
			direct = false;
			continue;
		}
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "create %s: %s", path, strerror(-rc));
			goto out;
		}
		if (direct && nw) {
			/* O_DIRECT wants whole blocks: the short last chunk is
			 * written padded (the slot's data is page-aligned and
			 * mapped that far), the file cut back after */
			struct wreq *l = &w[nw - 1];

			l->len = CKPT_ALIGN(l->len, CKPT_PAGE);
		}
		rc = ring_ok ? write_uring(&ring, fd, w, nw) : write_pwrite(fd, w, nw);
		if (rc == -EINVAL && direct) {
			/* took O_DIRECT at open, not for these writes */
			close(fd);
			fd = -1;
			if (nw)
				w[nw - 1].len = last_len;
			direct = false;
			continue;
		}
		break;
	}
	if (!rc && direct && ftruncate(fd, real_end) < 0)
		rc = -errno;
	if (!rc && direct && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	fd = -1;
	if (rc) {
		unlink(path);
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
		goto out;
	}
	if (o->hold_ms) {
		struct timespec ts = { o->hold_ms / 1000, (o->hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);	/* tests: a long drain */
	}
	/* a save that reused the slot marks it empty before its data lands */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != CKPT_COMPLETE || h->seq != seq) {
		unlink(path);
		snprintf(err, errlen, "%s slot %d entry %d was overwritten by a newer save while archiving",
			 f->path, slot, entry);
		rc = -EAGAIN;
		goto out;
	}
	/* the data file under its name exclusively (link: the first writer
	 * wins, the other's is dropped), then the manifest the same way */
	rc = ckpt_publish(path, final);
	if (rc) {
		snprintf(err, errlen, "publishing %s: %s", final,
			 rc == -EEXIST ? "another collx-ckptd archived this shard first" :
			 strerror(-rc));
		goto out;
	}
	rc = ckpt_manifest_store(o->dir, &m, err, errlen);
	res->direct = direct;
	res->uring = ring_ok;
	res->seconds = ckpt_now() - t0;
out:
	if (ring_ok)
		io_uring_queue_exit(&ring);
	free(w);
	ckpt_manifest_free(&m);
	ckpt_manifest_free(&prev);
	return rc;
}

int ckpt_archive_read(const char *dir, uint64_t tag, uint32_t rank, uint32_t nranks,
		      uint64_t want_epoch, struct ckpt_iov v, uint64_t *epoch,
		      char *err, size_t errlen)
{
	struct ckpt_manifest m;
	struct iovec iov[COLLX_CKPT_MAX_REGIONS + 1];
	char path[4096], e2[CKPT_ERRLEN];
	uint64_t fd_epoch = 0, fd_tag = 0, off = 0, aep = 0;
	struct ckpt_id *ids = NULL;
	uint32_t i, anr = 0, unmarked = 0;
	size_t nid = 0, q;
	int fd = -1, rc, n;

	/* the archive of this tag: the newest epoch whose checkpoint-level
	 * marker is there (every rank's manifest was, and checked) */
	rc = ckpt_archive_list(dir, &ids, &nid);
	if (rc) {
		snprintf(err, errlen, "archive %s: %s", dir, strerror(-rc));
		return rc;
	}
	for (q = nid; q-- > 0;) {
		if (ids[q].tag != tag || (want_epoch && ids[q].epoch != want_epoch))
			continue;
		if (ckpt_committed_read(dir, ids[q].epoch, tag, &anr)) {
			unmarked++;
			continue;
		}
		aep = ids[q].epoch;
		break;
	}
	free(ids);
	if (!aep) {
		snprintf(err, errlen, "archive %s: no complete archive of tag %" PRIu64 "%s", dir, tag,
			 unmarked ? " (only archives without their COMMITTED marker: not every rank's shard was archived)" : "");
		return -ENOENT;
	}
	if (nranks && anr != nranks) {
		snprintf(err, errlen, "archive %s: epoch %" PRIu64 " tag %" PRIu64
			 " was saved by %u ranks, this job has %u", dir, aep, tag, anr, nranks);
		return -EINVAL;
	}
	rc = ckpt_manifest_load(dir, aep, tag, rank, &m, err, errlen);
	if (rc)
		return rc == -ENOENT ? -EBADMSG : rc;	/* the marker says it is there */
	if (m.nranks != anr) {
		snprintf(err, errlen, "archive %s: rank %u's manifest says %u ranks, its marker %u",
			 dir, rank, m.nranks, anr);
		rc = -EBADMSG;
		goto out;
	}
	if (epoch)
		*epoch = m.epoch;
	{
		struct ckpt_shard_hdr h = { .tag = tag, .nregions = m.nregions, .bytes = m.bytes };

		memcpy(h.region_bytes, m.region_bytes, sizeof(h.region_bytes));
		rc = ckpt_hdr_match_regions(&h, v, e2, sizeof(e2));
		if (rc) {
			snprintf(err, errlen, "archive %s: %s", dir, e2);
			goto out;
		}
	}
	for (i = 0; i < m.nchunks; off += m.chunks[i].len, i++) {
		const struct ckpt_mchunk *c = &m.chunks[i];
		size_t got = 0;

		if (fd < 0 || fd_tag != c->src_tag || fd_epoch != c->src_epoch) {
			if (fd >= 0)
				close(fd);
			ckpt_archive_path(path, sizeof(path), dir, c->src_epoch, c->src_tag, rank,
					  "data");
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				int e = errno;

				/* a chunk the manifest names must be there */
				rc = e == ENOENT ? -EBADMSG : -e;
				snprintf(err, errlen, "archive %s (chunk %u of tag %" PRIu64 "): %s",
					 path, i, tag, strerror(e));
				goto out;
			}
			fd_tag = c->src_tag;
			fd_epoch = c->src_epoch;
		}
		n = ckpt_regions_iov(v, off, c->len, iov, COLLX_CKPT_MAX_REGIONS + 1);
		while (got < c->len) {
			struct iovec sub[COLLX_CKPT_MAX_REGIONS + 1];
			size_t skip = got;
			int j, k = 0;
			ssize_t r;

			for (j = 0; j < n; j++) {
				if (skip >= iov[j].iov_len) {
					skip -= iov[j].iov_len;
					continue;
				}
				sub[k].iov_base = (uint8_t *)iov[j].iov_base + skip;
				sub[k].iov_len = iov[j].iov_len - skip;
				skip = 0;
				k++;
			}
			r = preadv(fd, sub, k, c->offset + got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = r < 0 ? -errno : -EBADMSG;
				snprintf(err, errlen, "archive %s chunk %u: %s", path, i,
					 r < 0 ? strerror(errno) : "file too short (truncated)");
				goto out;
			}
			got += r;
		}
		if (ckpt_hash_regions(v, off, c->len) != c->hash) {
			rc = -EBADMSG;
			snprintf(err, errlen,
				 "archive %s chunk %u (bytes %" PRIu64 "..%" PRIu64 "): hash mismatch, the archive is corrupt",
				 path, i, c->offset, c->offset + c->len);
			goto out;
		}
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	ckpt_manifest_free(&m);
	return rc;
}
