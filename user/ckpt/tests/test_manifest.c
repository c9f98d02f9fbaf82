// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Manifests: round trip, every truncation and corruption refused, bad
 * fields named, atomic store, the previous archive found. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
		m->chunks[i].src_epoch = 5;
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
	/* version 2 (keyed by epoch): the epoch line is required */
	copy = edit(text, "epoch 5\n", "");
	rc = copy ? parse(copy, err, sizeof(err)) : -1;
	ok(rc == -EBADMSG && strstr(err, "epoch"), "no epoch line: %s", err);
	free(copy);
	copy = edit(text, "epoch 5\n", "epoch 4\n");
	rc = copy ? parse(copy, err, sizeof(err)) : -1;
	ok(rc == -EBADMSG && strstr(err, "source epoch 5"), "a chunk from a later epoch: %s", err);
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

	/* store, exclusively, and find the previous one */
	ok(mkdtemp(dir) != NULL, "temp dir %s", dir);
	for (i = 0; i < 3; i++) {
		struct ckpt_manifest s;
		uint64_t tags[3] = { 3, 5, 9 };

		sample(&s, tags[i], i == 1 ? 1 : 2);
		ckpt_archive_path(path, sizeof(path), dir, 5, tags[i], 0, NULL);
		mkdir(path, 0755);
		rc = ckpt_manifest_store(dir, &s, err, sizeof(err));
		ok(rc == 0, "stored tag %" PRIu64 ": %s", tags[i], rc ? err : "");
		if (i == 2) {
			rc = ckpt_manifest_store(dir, &s, err, sizeof(err));
			ok(rc == -EEXIST && strstr(err, "another collx-ckptd"),
			   "a second writer of one manifest is refused: %s", err);
		}
		ckpt_manifest_free(&s);
	}
	ckpt_archive_path(path, sizeof(path), dir, 5, 9, 0, NULL);
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "ls -a %s | grep -q tmp", path);
		ok(system(cmd) != 0, "no temporary file left");
	}
	rc = ckpt_manifest_load(dir, 5, 9, 2, &p, err, sizeof(err));
	ok(rc == 0 && p.tag == 9, "loaded tag 9 rank 2");
	if (!rc)
		ckpt_manifest_free(&p);
	ok(ckpt_manifest_load(dir, 5, 8, 2, &p, err, sizeof(err)) == -ENOENT, "unknown tag: %s", err);
	ok(ckpt_manifest_load(dir, 4, 9, 2, &p, err, sizeof(err)) == -ENOENT,
	   "the same tag of another epoch is another archive: %s", err);
	rc = ckpt_manifest_prev(dir, 5, 9, 2, &p, err, sizeof(err));
	ok(rc == 0 && p.tag == 3, "previous of tag 9 for rank 2 skips tag 5 (rank 1 only): %" PRIu64,
	   rc ? 0 : p.tag);
	if (!rc)
		ckpt_manifest_free(&p);
	ok(ckpt_manifest_prev(dir, 5, 3, 2, &p, err, sizeof(err)) == -ENOENT, "nothing before the first");
	rc = ckpt_manifest_prev(dir, 6, 1, 2, &p, err, sizeof(err));
	ok(rc == 0 && p.epoch == 5 && p.tag == 9,
	   "a later epoch's tag 1 comes after epoch 5's tag 9: (%" PRIu64 ", %" PRIu64 ")",
	   rc ? 0 : p.epoch, rc ? 0 : p.tag);
	if (!rc)
		ckpt_manifest_free(&p);

	/* the checkpoint-level marker: only with every rank's manifest, and
	 * exactly one writer among many */
	{
		uint32_t nr = 0, r;
		int wins, lost, other, k;
		pid_t pid[8];

		ok(ckpt_commit_archive(dir, 5, 9, 4, err, sizeof(err)) == -EAGAIN,
		   "ranks 0, 1, 3 missing: no COMMITTED");
		for (r = 0; r < 4; r++) {
			struct ckpt_manifest s;

			if (r == 2)
				continue;
			sample(&s, 9, r);
			ckpt_manifest_store(dir, &s, err, sizeof(err));
			ckpt_manifest_free(&s);
		}
		for (k = 0; k < 8; k++) {
			pid[k] = fork();
			if (pid[k] == 0) {
				char e[CKPT_ERRLEN];
				int x = ckpt_commit_archive(dir, 5, 9, 4, e, sizeof(e));

				_exit(x == 0 ? 0 : x == -EEXIST ? 1 : 2);
			}
		}
		tap_reap_race(pid, 8, &wins, &lost, &other);
		ok(wins == 1 && lost == 7 && !other,
		   "eight daemons complete the set at once: %d wrote COMMITTED, %d found it there, %d else",
		   wins, lost, other);
		ok(ckpt_committed_read(dir, 5, 9, &nr) == 0 && nr == 4, "COMMITTED names 4 ranks");
		{
			struct ckpt_manifest s;

			sample(&s, 5, 0);
			ckpt_manifest_store(dir, &s, err, sizeof(err));
			ckpt_manifest_free(&s);
		}
		ok(ckpt_commit_archive(dir, 5, 5, 2, err, sizeof(err)) == -EBADMSG,
		   "a set whose manifests name another world size: %s", err);
	}

	/* retention follows the references: archives of one rank */
	{
		struct ckpt_id want[6] = { { 1, 1 }, { 1, 2 }, { 1, 3 }, { 2, 4 }, { 2, 5 }, { 2, 6 } };
		/* each chunk's source: (1,2) from (1,1), (2,4) from (1,2) */
		struct ckpt_id src[6] = { { 1, 1 }, { 1, 1 }, { 1, 3 }, { 1, 2 }, { 2, 5 }, { 2, 6 } };
		bool committed[6] = { true, true, false, true, true, false };
		char gdir[4200], p2[4300];
		struct stat sb;
		uint32_t removed = 0, nr;
		int k, q;

		snprintf(gdir, sizeof(gdir), "%s/gc", dir);
		mkdir(gdir, 0700);
		for (k = 0; k < 6; k++) {
			struct ckpt_manifest s;

			sample(&s, want[k].tag, 0);
			s.epoch = want[k].epoch;
			s.nranks = 1;
			for (q = 0; q < 4; q++) {
				s.chunks[q].src_epoch = q ? want[k].epoch : src[k].epoch;
				s.chunks[q].src_tag = q ? want[k].tag : src[k].tag;
			}
			ckpt_archive_path(p2, sizeof(p2), gdir, s.epoch, s.tag, 0, NULL);
			mkdir(p2, 0700);
			rc = ckpt_manifest_store(gdir, &s, err, sizeof(err));
			if (!rc && committed[k])
				rc = ckpt_commit_archive(gdir, s.epoch, s.tag, 1, err, sizeof(err));
			ok(rc == 0, "archive (%" PRIu64 ", %" PRIu64 ")%s: %s", s.epoch, s.tag,
			   committed[k] ? " complete" : "", rc ? err : "");
			ckpt_manifest_free(&s);
		}
		rc = ckpt_archive_gc(gdir, 2, &removed, err, sizeof(err));
		ok(rc == 0 && removed == 2, "--keep 2: removed %u (want (1,1) and (1,3))", removed);
		for (k = 0; k < 6; k++) {
			bool gone = k == 0 || k == 2;

			ckpt_archive_path(p2, sizeof(p2), gdir, want[k].epoch, want[k].tag, 0, NULL);
			ok((stat(p2, &sb) < 0) == gone, "(%" PRIu64 ", %" PRIu64 ") %s", want[k].epoch,
			   want[k].tag, gone ? "removed" : "kept");
		}
		ok(ckpt_committed_read(gdir, 1, 2, &nr) == -ENOENT,
		   "(1,2), kept for (2,4)'s chunks, is no longer restorable (its own source went)");
		ok(ckpt_committed_read(gdir, 2, 4, &nr) == 0 && ckpt_committed_read(gdir, 2, 5, &nr) == 0,
		   "the newest two complete stay restorable");
		rc = ckpt_archive_gc(gdir, 2, &removed, err, sizeof(err));
		ok(rc == 0 && removed == 0, "a second pass removes nothing (%u)", removed);
		rc = ckpt_archive_gc(gdir, 1, &removed, err, sizeof(err));
		ok(rc == 0 && removed == 2, "--keep 1: (1,2) and (2,4) go, (2,5) takes nothing from them (%u)",
		   removed);
	}
	/* a corrupt manifest on disk is named */
	ckpt_archive_path(path, sizeof(path), dir, 5, 9, 2, "manifest");
	{
		FILE *f = fopen(path, "r+");

		fseek(f, 12, SEEK_SET);
		fputc('X', f);
		fclose(f);
	}
	rc = ckpt_manifest_load(dir, 5, 9, 2, &p, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, path), "corrupt on disk: %s", err);
	ckpt_manifest_free(&m);
	free(text);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	ok(system(path) == 0, "cleaned up");
	return done();
}
