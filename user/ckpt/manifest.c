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

#define MAGIC_LINE "collx-ckpt-manifest 1\n"
#define MAX_MANIFEST (64u << 20)

int ckpt_archive_path(char *out, size_t len, const char *dir, uint64_t tag,
		      uint32_t rank, const char *what)
{
	int n;

	if (what)
		n = snprintf(out, len, "%s/ckpt-%020" PRIu64 "/rank-%u.%s", dir, tag, rank, what);
	else
		n = snprintf(out, len, "%s/ckpt-%020" PRIu64, dir, tag);
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

		PUT("c %u %016" PRIx64 " %" PRIu64 " %" PRIu64 " %u\n", i, c->hash, c->src_tag,
		    c->offset, c->len);
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
	/* the save's epoch; a manifest written before epochs has none (0) */
	{
		const char *q = p;
		size_t ql;
		const char *el = next_line(&q, end, &ql);

		if (el && ql > 6 && !memcmp(el, "epoch ", 6))
			FIELD("epoch", UINT64_MAX, m->epoch);
	}
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
		uint64_t f[5];

		line++;
		l = next_line(&p, end, &ll);
		if (!l || ll < 3 || memcmp(l, "c ", 2))
			BAD("manifest line %d: expected chunk %u", line, i);
		/* "c IDX HASH SRCTAG OFFSET LEN": the hash is hex */
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
			if (u64_list(sp2 + 1, l + ll - sp2 - 1, f + 2, 3, 10) != 3)
				BAD("manifest line %d: chunk %u: expected 'SRCTAG OFFSET LEN'", line, i);
		}
		if (f[4] != want_len || !f[2] || f[2] > m->tag || f[3] > COLLX_MAX_BYTES)
			BAD("manifest line %d: chunk %u: length %" PRIu64 " (want %" PRIu64
			    "), source tag %" PRIu64 ", offset %" PRIu64, line, i, f[4], want_len,
			    f[2], f[3]);
		m->chunks[i].hash = f[1];
		m->chunks[i].src_tag = f[2];
		m->chunks[i].offset = f[3];
		m->chunks[i].len = f[4];
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

int ckpt_manifest_load(const char *dir, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen)
{
	char path[4096], e2[CKPT_ERRLEN];
	struct stat st;
	char *buf;
	int fd, rc;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	rc = ckpt_archive_path(path, sizeof(path), dir, tag, rank, "manifest");
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
	if (!rc && (m->tag != tag || m->rank != rank)) {
		snprintf(e2, sizeof(e2), "it names tag %" PRIu64 " rank %u", m->tag, m->rank);
		ckpt_manifest_free(m);
		rc = -EBADMSG;
	}
	if (rc)
		snprintf(err, errlen, "%s: %s", path, e2);
	return rc;
}

int ckpt_manifest_store(const char *dir, const struct ckpt_manifest *m, char *err, size_t errlen)
{
	char path[4096], tmp[4096], sub[4096];
	size_t len;
	char *text;
	int fd, rc;

	if (ckpt_archive_path(path, sizeof(path), dir, m->tag, m->rank, "manifest") ||
	    ckpt_archive_path(sub, sizeof(sub), dir, m->tag, 0, NULL) ||
	    snprintf(tmp, sizeof(tmp), "%s/.rank-%u.manifest.tmp", sub, m->rank) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	text = ckpt_manifest_format(m, &len);
	if (!text)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "create %s: %s", tmp, strerror(-rc));
		free(text);
		return rc;
	}
	rc = ckpt_write_all(fd, text, len);
	free(text);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (!rc)
		rc = ckpt_fsync_dir(sub);
	if (rc) {
		snprintf(err, errlen, "writing %s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

int ckpt_manifest_prev(const char *dir, uint64_t tag, uint32_t rank,
		       struct ckpt_manifest *m, char *err, size_t errlen)
{
	uint64_t best = 0, t;
	struct dirent *d;
	char e2[CKPT_ERRLEN];
	DIR *dp;
	int rc = -ENOENT;

	memset(m, 0, sizeof(*m));
	dp = opendir(dir);
	if (!dp)
		return -ENOENT;
	/* newest first would need sorting: scan for the best candidate,
	 * and step down past tags whose manifest of this rank is missing */
	for (;;) {
		uint64_t cand = 0;

		rewinddir(dp);
		while ((d = readdir(dp))) {
			char *e;

			if (strncmp(d->d_name, "ckpt-", 5) || strlen(d->d_name) != 25)
				continue;
			t = strtoull(d->d_name + 5, &e, 10);
			if (*e || !t || t >= tag || (best && t >= best))
				continue;
			if (t > cand)
				cand = t;
		}
		if (!cand)
			break;
		best = cand;
		rc = ckpt_manifest_load(dir, cand, rank, m, e2, sizeof(e2));
		if (!rc)
			break;
		rc = -ENOENT;
	}
	closedir(dp);
	if (rc)
		snprintf(err, errlen, "no archive of rank %u before tag %" PRIu64 " in %s", rank,
			 tag, dir);
	return rc;
}
