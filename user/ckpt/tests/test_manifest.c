// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Manifests: round trip, every truncation and corruption refused, bad
 * fields named, atomic store, the previous archive found. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_int.h"
#include "tap.h"

static void sample(struct ckpt_manifest *m, uint64_t tag, uint32_t rank)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	m->tag = tag;
	m->rank = rank;
	m->nranks = 4;
	m->seq = 9;
	m->epoch = 5;
	m->chunk_bytes = 65536;
	m->bytes = 3 * 65536 + 100;
	m->nregions = 2;
	m->region_bytes[0] = 65536;
	m->region_bytes[1] = 2 * 65536 + 100;
	m->nchunks = 4;
	m->chunks = calloc(4, sizeof(*m->chunks));
	for (i = 0; i < 4; i++) {
		m->chunks[i].hash = 0x0123456789abcdefULL * (i + 1);
		m->chunks[i].src_tag = i == 2 ? tag - 1 : tag;
		m->chunks[i].offset = (uint64_t)i * 65536;
		m->chunks[i].len = i < 3 ? 65536 : 100;
	}
}

/* @text with line @from replaced by @to and a correct end line: the
 * field checks, not the end hash, must refuse it. */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from), *endl = strstr(text, "end ");
	size_t n = 0, cap = strlen(text) + strlen(to) + 64;
	char *s;

	if (!p || !endl)
		return NULL;
	s = malloc(cap);
	n += snprintf(s + n, cap - n, "%.*s%s", (int)(p - text), text, to);
	n += snprintf(s + n, cap - n, "%.*s", (int)(endl - p - strlen(from)), p + strlen(from));
	snprintf(s + n, cap - n, "end %016" PRIx64 "\n", ckpt_hash(s, n));
	return s;
}

static int parse(const char *s, char *err, size_t errlen)
{
	struct ckpt_manifest m;
	int rc = ckpt_manifest_parse(s, strlen(s), &m, err, errlen);

	if (!rc)
		ckpt_manifest_free(&m);
	return rc;
}

int main(void)
{
	struct ckpt_manifest m, p;
	char err[CKPT_ERRLEN], dir[] = "/tmp/ckpt-manifest-XXXXXX", path[4096];
	size_t len, i;
	char *text, *copy, *e;
	int bad, rc;
	struct stat st;

	sample(&m, 7, 2);
	text = ckpt_manifest_format(&m, &len);
	ok(text && len == strlen(text), "formatted (%zu bytes)", len);
	rc = ckpt_manifest_parse(text, len, &p, err, sizeof(err));
	ok(rc == 0, "parsed back: %s", rc ? err : "");
	ok(!rc && p.tag == 7 && p.rank == 2 && p.nranks == 4 && p.seq == 9 && p.epoch == 5 &&
	   p.bytes == m.bytes &&
	   p.nregions == 2 && p.region_bytes[1] == m.region_bytes[1] && p.nchunks == 4 &&
	   !memcmp(p.chunks, m.chunks, 4 * sizeof(*p.chunks)), "every field survives");
	if (!rc)
		ckpt_manifest_free(&p);
	/* a manifest written before epochs: no epoch line, epoch 0 */
	copy = edit(text, "epoch 5\n", "");
	rc = copy ? ckpt_manifest_parse(copy, strlen(copy), &p, err, sizeof(err)) : -1;
	ok(rc == 0 && p.epoch == 0 && p.bytes == m.bytes, "no epoch line: epoch 0 (unknown): %s",
	   rc ? err : "");
	if (!rc)
		ckpt_manifest_free(&p);
	free(copy);

	/* every prefix is a torn file */
	for (bad = 0, i = 0; i < len; i++)
		if (ckpt_manifest_parse(text, i, &p, err, sizeof(err)) != -EBADMSG)
			bad++;
	ok(!bad, "all %zu truncations refused (%d accepted)", len, bad);
	/* every single changed byte is corruption */
	copy = malloc(len);
	for (bad = 0, i = 0; i < len; i++) {
		memcpy(copy, text, len);
		copy[i] ^= 0x01;
		rc = ckpt_manifest_parse(copy, len, &p, err, sizeof(err));
		if (rc != -EBADMSG) {
			bad++;
			if (!rc)
				ckpt_manifest_free(&p);
		}
	}
	ok(!bad, "all %zu one-bit corruptions refused (%d accepted)", len, bad);
	free(copy);

	e = edit(text, "bytes 196708\n", "bytes 196709\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG && strstr(err, "regions add up"),
	   "sizes that disagree: %s", err);
	free(e);
	e = edit(text, "chunks 4\n", "chunks 5\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "wrong chunk count: %s", err);
	free(e);
	e = edit(text, "rank 2\n", "rank 4\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "rank beyond nranks: %s", err);
	free(e);
	e = edit(text, "bytes 196708\n", "bytes 99999999999999999999\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "number overflow: %s", err);
	free(e);
	e = edit(text, "chunk 65536\n", "chunk 1000\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "chunk not whole pages: %s", err);
	free(e);
	e = edit(text, " 196608 100\n", " 196608 99\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG && strstr(err, "chunk 3"),
	   "short last chunk: %s", err);
	free(e);
	e = edit(text, "hash xxh3-64\n", "hash crc32c\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "unknown hash: %s", err);
	free(e);
	e = edit(text, "tag 7\n", "tag 5\n");
	ok(e && parse(e, err, sizeof(err)) == -EBADMSG, "a chunk from a newer archive: %s", err);
	free(e);
	ok(parse("", err, sizeof(err)) == -EBADMSG, "empty: %s", err);
	ok(parse("hello\n", err, sizeof(err)) == -EBADMSG, "not a manifest: %s", err);

	/* store, atomically, and find the previous one */
	ok(mkdtemp(dir) != NULL, "temp dir %s", dir);
	for (i = 0; i < 3; i++) {
		struct ckpt_manifest s;
		uint64_t tags[3] = { 3, 5, 9 };

		sample(&s, tags[i], i == 1 ? 1 : 2);
		ckpt_archive_path(path, sizeof(path), dir, tags[i], 0, NULL);
		mkdir(path, 0755);
		rc = ckpt_manifest_store(dir, &s, err, sizeof(err));
		ok(rc == 0, "stored tag %" PRIu64 ": %s", tags[i], rc ? err : "");
		ckpt_manifest_free(&s);
	}
	snprintf(path, sizeof(path), "%s/ckpt-%020d/.rank-2.manifest.tmp", dir, 9);
	ok(stat(path, &st) < 0, "no temporary file left");
	rc = ckpt_manifest_load(dir, 9, 2, &p, err, sizeof(err));
	ok(rc == 0 && p.tag == 9, "loaded tag 9 rank 2");
	if (!rc)
		ckpt_manifest_free(&p);
	ok(ckpt_manifest_load(dir, 8, 2, &p, err, sizeof(err)) == -ENOENT, "unknown tag: %s", err);
	rc = ckpt_manifest_prev(dir, 9, 2, &p, err, sizeof(err));
	ok(rc == 0 && p.tag == 3, "previous of tag 9 for rank 2 skips tag 5 (rank 1 only): %" PRIu64,
	   rc ? 0 : p.tag);
	if (!rc)
		ckpt_manifest_free(&p);
	ok(ckpt_manifest_prev(dir, 3, 2, &p, err, sizeof(err)) == -ENOENT, "nothing before the first");
	/* a corrupt manifest on disk is named */
	ckpt_archive_path(path, sizeof(path), dir, 9, 2, "manifest");
	{
		FILE *f = fopen(path, "r+");

		fseek(f, 12, SEEK_SET);
		fputc('X', f);
		fclose(f);
	}
	rc = ckpt_manifest_load(dir, 9, 2, &p, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, path), "corrupt on disk: %s", err);
	ckpt_manifest_free(&m);
	free(text);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ok(system(path) == 0, "cleaned up");
	return done();
}
