// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The manifest of one archived shard: a short text file, one field a line,
 * every chunk with its hash and where its bytes are (this archive's data
 * file, or an older one's for a chunk an incremental archive kept), and a
 * last line hashing all before it.  It is written after the data, to a
 * temporary name, fsync'ed and renamed, so a manifest exists only whole
 * and only for data already on disk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_int.h"

#define MAGIC_LINE "collx-ckpt-manifest 2\n"
#define COMMITTED_MAGIC "collx-ckpt-committed 1\n"
#define MAX_MANIFEST (64u << 20)

int ckpt_archive_path(char *out, size_t len, const char *dir, uint64_t epoch, uint64_t tag,
		      uint32_t rank, const char *what)
{
	int n;

	if (what && !strcmp(what, "COMMITTED"))
		n = snprintf(out, len, "%s/ckpt-%020" PRIu64 "-%020" PRIu64 "/COMMITTED", dir, epoch,
			     tag);
	else if (what)
		n = snprintf(out, len, "%s/ckpt-%020" PRIu64 "-%020" PRIu64 "/rank-%u.%s", dir, epoch,
			     tag, rank, what);
	else
		n = snprintf(out, len, "%s/ckpt-%020" PRIu64 "-%020" PRIu64, dir, epoch, tag);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

char *ckpt_manifest_format(const struct ckpt_manifest *m, size_t *lenp)
{
	size_t cap = 512 + 24ull * m->nregions + 80ull * m->nchunks, n = 0;
	char *s = malloc(cap);
	uint32_t i;

	if (!s)
		return NULL;
#define PUT(...) (n += snprintf(s + n, cap - n, __VA_ARGS__))
	PUT(MAGIC_LINE);
	PUT("tag %" PRIu64 "\nrank %u\nnranks %u\nseq %" PRIu64 "\nepoch %" PRIu64
	    "\nbytes %" PRIu64 "\nchunk %u\nhash xxh3-64\nregions %u", m->tag, m->rank,
	    m->nranks, m->seq, m->epoch, m->bytes, m->chunk_bytes, m->nregions);
	for (i = 0; i < m->nregions; i++)
		PUT(" %" PRIu64, m->region_bytes[i]);
	PUT("\nchunks %u\n", m->nchunks);
	for (i = 0; i < m->nchunks; i++) {
		const struct ckpt_mchunk *c = &m->chunks[i];

		PUT("c %u %016" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", i, c->hash,
		    c->src_epoch, c->src_tag, c->offset, c->len);
	}
	PUT("end %016" PRIx64 "\n", ckpt_hash(s, n));
#undef PUT
	*lenp = n;
	return s;
}

void ckpt_manifest_free(struct ckpt_manifest *m)
{
	free(m->chunks);
	m->chunks = NULL;
}

/* The next line of [*p, end) without its newline; NULL at the end or if
 * the last line has none (a torn file). */
static const char *next_line(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', end - s);
	if (!nl)
		return NULL;
	*len = nl - s;
	*p = nl + 1;
	return s;
}

static int u64_field(const char *s, size_t len, const char *key, uint64_t max, uint64_t *out)
{
	size_t kl = strlen(key);
	char buf[32], *e;
	unsigned long long v;

	if (len <= kl + 1 || len - kl - 1 >= sizeof(buf) || memcmp(s, key, kl) || s[kl] != ' ')
		return -1;
	memcpy(buf, s + kl + 1, len - kl - 1);
	buf[len - kl - 1] = 0;
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(buf, &e, 10);
	if (errno || *e || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Whole-token unsigned numbers of a line after its key. */
static int u64_list(const char *s, size_t len, uint64_t *v, int max, int base)
{
	char buf[1024], *p, *e, *save = NULL;
	int n = 0;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	for (p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
		if (n >= max || !((*p >= '0' && *p <= '9') || (base == 16 && *p >= 'a' && *p <= 'f')))
			return -1;
		errno = 0;
		v[n++] = strtoull(p, &e, base);
		if (errno || *e)
			return -1;
	}
	return n;
}

int ckpt_manifest_parse(const char *text, size_t len, struct ckpt_manifest *m,
			char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *l, *endline;
	size_t ll;
	uint64_t v, sum = 0, want_hash;
	uint64_t nums[COLLX_CKPT_MAX_REGIONS + 2];
	int line = 1, n;
	uint32_t i;

	memset(m, 0, sizeof(*m));
#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); goto bad; } while (0)
#define FIELD(key, max, dst) do {						\
		line++;							\
		l = next_line(&p, end, &ll);				\
		if (!l || u64_field(l, ll, key, max, &v))		\
			BAD("manifest line %d: expected '%s <number up to %llu>'", line, key, \
			    (unsigned long long)(max));			\
		dst = v;						\
	} while (0)
	l = next_line(&p, end, &ll);
	if (!l || ll + 1 != strlen(MAGIC_LINE) || memcmp(l, MAGIC_LINE, ll))
		BAD("not a collx checkpoint manifest (line 1)");
	FIELD("tag", UINT64_MAX, m->tag);
	FIELD("rank", COLLX_MAX_RANKS - 1, m->rank);
	FIELD("nranks", COLLX_MAX_RANKS, m->nranks);
	FIELD("seq", UINT64_MAX, m->seq);
	FIELD("epoch", UINT64_MAX, m->epoch);
	FIELD("bytes", COLLX_MAX_BYTES, m->bytes);
	FIELD("chunk", 1u << 30, m->chunk_bytes);
	if (!m->tag || m->rank >= m->nranks || m->chunk_bytes < CKPT_PAGE ||
	    m->chunk_bytes % CKPT_PAGE)
		BAD("manifest: tag %" PRIu64 ", rank %u of %u, chunk %u: out of range", m->tag,
		    m->rank, m->nranks, m->chunk_bytes);
	line++;
	l = next_line(&p, end, &ll);
	if (!l || ll != strlen("hash xxh3-64") || memcmp(l, "hash xxh3-64", ll))
		BAD("manifest line %d: expected 'hash xxh3-64'", line);
	line++;
	l = next_line(&p, end, &ll);
	if (!l || ll < 9 || memcmp(l, "regions ", 8))
		BAD("manifest line %d: expected 'regions N SIZE...'", line);
	n = u64_list(l + 8, ll - 8, nums, COLLX_CKPT_MAX_REGIONS + 1, 10);
	if (n < 1 || nums[0] > COLLX_CKPT_MAX_REGIONS || (uint64_t)n != nums[0] + 1)
		BAD("manifest line %d: region count and sizes disagree", line);
	m->nregions = nums[0];
	for (i = 0; i < m->nregions; i++) {
		m->region_bytes[i] = nums[i + 1];
		sum += nums[i + 1];
	}
	if (sum != m->bytes)
		BAD("manifest line %d: regions add up to %" PRIu64 " bytes, not %" PRIu64, line, sum,
		    m->bytes);
	FIELD("chunks", 1u << 24, m->nchunks);
	if (m->nchunks != (m->bytes + m->chunk_bytes - 1) / m->chunk_bytes)
		BAD("manifest line %d: %u chunks for %" PRIu64 " bytes of %u", line, m->nchunks,
		    m->bytes, m->chunk_bytes);
	m->chunks = calloc(m->nchunks ? m->nchunks : 1, sizeof(*m->chunks));
	if (!m->chunks) {
		snprintf(err, errlen, "manifest: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < m->nchunks; i++) {
		uint64_t want_len = i + 1 < m->nchunks ? m->chunk_bytes :
				    m->bytes - (uint64_t)i * m->chunk_bytes;
		uint64_t f[6];

		line++;
		l = next_line(&p, end, &ll);
		if (!l || ll < 3 || memcmp(l, "c ", 2))
			BAD("manifest line %d: expected chunk %u", line, i);
		/* "c IDX HASH SRCEPOCH SRCTAG OFFSET LEN": the hash is hex */
		{
			char hx[17];
			const char *sp = memchr(l + 2, ' ', ll - 2), *sp2;

			if (!sp || u64_list(l + 2, sp - l - 2, f, 1, 10) != 1 || f[0] != i)
				BAD("manifest line %d: expected chunk %u", line, i);
			sp2 = memchr(sp + 1, ' ', l + ll - sp - 1);
			if (!sp2 || sp2 - sp - 1 != 16)
				BAD("manifest line %d: chunk %u: bad hash", line, i);
			memcpy(hx, sp + 1, 16);
			hx[16] = 0;
			if (u64_list(hx, 16, f + 1, 1, 16) != 1)
				BAD("manifest line %d: chunk %u: bad hash", line, i);
			if (u64_list(sp2 + 1, l + ll - sp2 - 1, f + 2, 4, 10) != 4)
				BAD("manifest line %d: chunk %u: expected 'SRCEPOCH SRCTAG OFFSET LEN'",
				    line, i);
		}
		/* the bytes are in this archive or an older one: (epoch, tag)
		 * no greater than this manifest's */
		if (f[5] != want_len || !f[3] || f[2] > m->epoch ||
		    (f[2] == m->epoch && f[3] > m->tag) || f[4] > COLLX_MAX_BYTES)
			BAD("manifest line %d: chunk %u: length %" PRIu64 " (want %" PRIu64
			    "), source epoch %" PRIu64 " tag %" PRIu64 ", offset %" PRIu64, line, i,
			    f[5], want_len, f[2], f[3], f[4]);
		m->chunks[i].hash = f[1];
		m->chunks[i].src_epoch = f[2];
		m->chunks[i].src_tag = f[3];
		m->chunks[i].offset = f[4];
		m->chunks[i].len = f[5];
	}
	endline = p;
	line++;
	l = next_line(&p, end, &ll);
	if (!l || ll != 20 || memcmp(l, "end ", 4) || u64_list(l + 4, 16, &want_hash, 1, 16) != 1)
		BAD("manifest line %d: expected 'end HASH' (torn or truncated file)", line);
	if (p != end)
		BAD("manifest: bytes after the end line");
	if (ckpt_hash(text, endline - text) != want_hash)
		BAD("manifest: its end hash does not match its text (corrupted)");
	return 0;
bad:
	ckpt_manifest_free(m);
	return -EBADMSG;
#undef FIELD
#undef BAD
}

int ckpt_manifest_load(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen)
{
	char path[4096], e2[CKPT_ERRLEN];
	struct stat st;
	char *buf;
	int fd, rc;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	rc = ckpt_archive_path(path, sizeof(path), dir, epoch, tag, rank, "manifest");
	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) < 0 || st.st_size > MAX_MANIFEST) {
		close(fd);
		snprintf(err, errlen, "%s: unreadable or over %u bytes", path, MAX_MANIFEST);
		return -EBADMSG;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, st.st_size, 0);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		snprintf(err, errlen, "%s: short read", path);
		return -EIO;
	}
	rc = ckpt_manifest_parse(buf, n, m, e2, sizeof(e2));
	free(buf);
	if (!rc && (m->tag != tag || m->rank != rank || m->epoch != epoch)) {
		snprintf(e2, sizeof(e2), "it names epoch %" PRIu64 " tag %" PRIu64 " rank %u",
			 m->epoch, m->tag, m->rank);
		ckpt_manifest_free(m);
		rc = -EBADMSG;
	}
	if (rc)
		snprintf(err, errlen, "%s: %s", path, e2);
	return rc;
}

int ckpt_tmp_name(char *out, size_t len, const char *final)
{
	static unsigned int ctr;
	int n = snprintf(out, len, "%s.%d.%u.%llx.tmp", final, (int)getpid(),
			 __atomic_fetch_add(&ctr, 1, __ATOMIC_RELAXED),
			 (unsigned long long)ckpt_realtime_ns());

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ckpt_publish(const char *tmp, const char *final)
{
	int rc = link(tmp, final) < 0 ? -errno : 0;

	unlink(tmp);
	return rc;
}

/* Write @text to a unique temp name beside @final, fsync, link to @final
 * (-EEXIST: another writer published it first), fsync @sub. */
static int store_excl(const char *sub, const char *final, const char *text, size_t len)
{
	char tmp[4096];
	int fd, rc;

	rc = ckpt_tmp_name(tmp, sizeof(tmp), final);
	if (rc)
		return rc;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = ckpt_write_all(fd, text, len);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return rc;
	}
	rc = ckpt_publish(tmp, final);
	if (!rc)
		rc = ckpt_fsync_dir(sub);
	return rc;
}

int ckpt_manifest_store(const char *dir, const struct ckpt_manifest *m, char *err, size_t errlen)
{
	char path[4096], sub[4096];
	size_t len;
	char *text;
	int rc;

	if (ckpt_archive_path(path, sizeof(path), dir, m->epoch, m->tag, m->rank, "manifest") ||
	    ckpt_archive_path(sub, sizeof(sub), dir, m->epoch, m->tag, 0, NULL))
		return -ENAMETOOLONG;
	text = ckpt_manifest_format(m, &len);
	if (!text)
		return -ENOMEM;
	rc = store_excl(sub, path, text, len);
	free(text);
	if (rc)
		snprintf(err, errlen, "writing %s: %s", path,
			 rc == -EEXIST ? "another collx-ckptd published it first" : strerror(-rc));
	return rc;
}

static int id_cmp(const void *a, const void *b)
{
	const struct ckpt_id *x = a, *y = b;

	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

int ckpt_archive_list(const char *dir, struct ckpt_id **ids, size_t *n)
{
	struct ckpt_id *v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *d;
	DIR *dp;

	*ids = NULL;
	*n = 0;
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dp))) {
		uint64_t e, t;
		char *x;

		/* ckpt-<20 digits>-<20 digits> */
		if (strncmp(d->d_name, "ckpt-", 5) || strlen(d->d_name) != 46 || d->d_name[25] != '-')
			continue;
		e = strtoull(d->d_name + 5, &x, 10);
		if (x != d->d_name + 25)
			continue;
		t = strtoull(d->d_name + 26, &x, 10);
		if (*x || !t)
			continue;
		if (cnt == cap) {
			struct ckpt_id *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(dp);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt].epoch = e;
		v[cnt].tag = t;
		cnt++;
	}
	closedir(dp);
	if (cnt)
		qsort(v, cnt, sizeof(*v), id_cmp);
	*ids = v;
	*n = cnt;
	return 0;
}

int ckpt_manifest_prev(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen)
{
	struct ckpt_id *ids, me = { epoch, tag };
	char e2[CKPT_ERRLEN];
	size_t n, i;
	int rc = -ENOENT;

	memset(m, 0, sizeof(*m));
	if (ckpt_archive_list(dir, &ids, &n) == 0) {
		/* newest first, below (epoch, tag); past archives without
		 * this rank's manifest */
		for (i = n; i-- > 0 && rc;)
			if (id_cmp(&ids[i], &me) < 0 &&
			    !ckpt_manifest_load(dir, ids[i].epoch, ids[i].tag, rank, m, e2, sizeof(e2)))
				rc = 0;
		free(ids);
	}
	if (rc)
		snprintf(err, errlen, "no archive of rank %u before epoch %" PRIu64 " tag %" PRIu64
			 " in %s", rank, epoch, tag, dir);
	return rc;
}

int ckpt_committed_read(const char *dir, uint64_t epoch, uint64_t tag, uint32_t *nranks)
{
	char path[4096], buf[256], want[128];
	ssize_t r;
	int fd, n;

	if (ckpt_archive_path(path, sizeof(path), dir, epoch, tag, 0, "COMMITTED"))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -EBADMSG;
	buf[r] = 0;
	n = snprintf(want, sizeof(want), COMMITTED_MAGIC "epoch %" PRIu64 "\ntag %" PRIu64
		     "\nnranks ", epoch, tag);
	if (strncmp(buf, want, n) || sscanf(buf + n, "%u\n", nranks) != 1 || !*nranks)
		return -EBADMSG;
	return 0;
}

int ckpt_commit_archive(const char *dir, uint64_t epoch, uint64_t tag, uint32_t nranks,
			char *err, size_t errlen)
{
	char path[4096], sub[4096], text[256], e2[CKPT_ERRLEN];
	struct ckpt_manifest m;
	uint32_t r, have;
	int rc, n;

	if (!ckpt_committed_read(dir, epoch, tag, &have))
		return -EEXIST;
	/* every rank's manifest there, whole, of this (epoch, tag) and size */
	for (r = 0; r < nranks; r++) {
		rc = ckpt_manifest_load(dir, epoch, tag, r, &m, e2, sizeof(e2));
		if (rc == -ENOENT)
			return -EAGAIN;
		if (!rc && m.nranks != nranks) {
			snprintf(e2, sizeof(e2), "rank %u's manifest says %u ranks, not %u", r,
				 m.nranks, nranks);
			rc = -EBADMSG;
		}
		ckpt_manifest_free(&m);
		if (rc) {
			snprintf(err, errlen, "%s", e2);
			return rc;
		}
	}
	if (ckpt_archive_path(path, sizeof(path), dir, epoch, tag, 0, "COMMITTED") ||
	    ckpt_archive_path(sub, sizeof(sub), dir, epoch, tag, 0, NULL))
		return -ENAMETOOLONG;
	n = snprintf(text, sizeof(text), COMMITTED_MAGIC "epoch %" PRIu64 "\ntag %" PRIu64
		     "\nnranks %u\n", epoch, tag, nranks);
	rc = store_excl(sub, path, text, n);
	if (rc && rc != -EEXIST)
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
	return rc;
}

static void rm_archive(const char *dir, const struct ckpt_id *id)
{
	char sub[4096], p[4096 + 300];
	struct dirent *d;
	DIR *dp;

	if (ckpt_archive_path(sub, sizeof(sub), dir, id->epoch, id->tag, 0, NULL))
		return;
	/* the marker first: a half-removed archive is never restorable */
	snprintf(p, sizeof(p), "%s/COMMITTED", sub);
	unlink(p);
	dp = opendir(sub);
	if (!dp)
		return;
	while ((d = readdir(dp)))
		if (d->d_name[0] != '.' || (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))) {
			snprintf(p, sizeof(p), "%s/%s", sub, d->d_name);
			unlink(p);
		}
	closedir(dp);
	rmdir(sub);
}

int ckpt_archive_gc(const char *dir, uint32_t keep, uint32_t *removed, char *err, size_t errlen)
{
	struct ckpt_id *ids, *refs = NULL;
	size_t n, i, kept = 0, nrefs = 0, caprefs = 0, oldest = 0;
	uint32_t nr, r, c;
	int rc;

	*removed = 0;
	if (!keep)
		return 0;
	rc = ckpt_archive_list(dir, &ids, &n);
	if (rc) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	/* the newest @keep complete archives, and every archive their
	 * manifests take chunks from */
	for (i = n; i-- > 0 && kept < keep;) {
		if (ckpt_committed_read(dir, ids[i].epoch, ids[i].tag, &nr))
			continue;
		kept++;
		oldest = i;
		for (r = 0; r < nr; r++) {
			struct ckpt_manifest m;
			char e2[CKPT_ERRLEN];

			if (ckpt_manifest_load(dir, ids[i].epoch, ids[i].tag, r, &m, e2, sizeof(e2))) {
				/* unreadable: keep everything older, to be safe */
				free(refs);
				free(ids);
				snprintf(err, errlen, "retention: %s; nothing removed", e2);
				return -EBADMSG;
			}
			for (c = 0; c < m.nchunks; c++) {
				size_t q;

				for (q = 0; q < nrefs; q++)
					if (refs[q].epoch == m.chunks[c].src_epoch &&
					    refs[q].tag == m.chunks[c].src_tag)
						break;
				if (q < nrefs)
					continue;
				if (nrefs == caprefs) {
					struct ckpt_id *nv = realloc(refs, (caprefs = caprefs ? 2 * caprefs : 16) *
								     sizeof(*refs));
					if (!nv) {
						ckpt_manifest_free(&m);
						free(refs);
						free(ids);
						return -ENOMEM;
					}
					refs = nv;
				}
				refs[nrefs].epoch = m.chunks[c].src_epoch;
				refs[nrefs].tag = m.chunks[c].src_tag;
				nrefs++;
			}
			ckpt_manifest_free(&m);
		}
	}
	/* only what is older than the oldest kept: newer ones may be in
	 * progress */
	if (kept == keep)
		for (i = 0; i < oldest; i++) {
			size_t q;

			for (q = 0; q < nrefs; q++)
				if (refs[q].epoch == ids[i].epoch && refs[q].tag == ids[i].tag)
					break;
			if (q < nrefs) {
				char p[4096];

				/* kept for its data only: a kept archive takes
				 * chunks from it, but it is no longer restorable
				 * itself (its own older sources may go) */
				if (!ckpt_archive_path(p, sizeof(p), dir, ids[i].epoch, ids[i].tag, 0,
						       "COMMITTED"))
					unlink(p);
				continue;
			}
			rm_archive(dir, &ids[i]);
			(*removed)++;
		}
	if (*removed)
		ckpt_fsync_dir(dir);
	free(refs);
	free(ids);
	return 0;
}
