// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * An area file and phase 2 on the host: slots alternate and a torn save
 * leaves the last complete copy; archives read back exactly; incremental
 * archives write only changed chunks (byte counts checked); corruption,
 * unknown tags and wrong sizes are refused with their reason.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ckpt_int.h"
#include "tap.h"

#define CHUNK	65536u
#define BYTES	(10 * CHUNK + 1000)	/* a short last chunk */

static uint8_t *state;
static struct collx_ckpt_region reg[2];
static struct ckpt_iov v = { reg, 2 };

static void fill(unsigned long long seed)
{
	uint64_t i;

	for (i = 0; i < BYTES; i++)
		state[i] = (uint8_t)tap_rand(&seed);
}

/* What collx_ckpt_save does to the own entry, without the network:
 * snapshot, hash, local commit, and (every rank acknowledged) the global
 * commit. */
static int save(struct ckpt_file *f, uint64_t tag, uint64_t seq)
{
	int slot = ckpt_victim(f, 0, 0, 0);
	struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, 0);

	ckpt_hdr_invalidate(h);
	ckpt_hdr_begin(h, &f->g, v, tag);
	ckpt_snapshot_copy(v, ckpt_data(f, slot, 0), 2);
	ckpt_hdr_hash_data(h, &f->g, ckpt_data(f, slot, 0), 1);
	ckpt_hdr_commit(h, seq);
	ckpt_hdr_gcommit(h);
	return slot;
}

static off_t fsize(const char *dir, uint64_t tag)
{
	char p[4096];
	struct stat st;

	ckpt_archive_path(p, sizeof(p), dir, 1, tag, 0, "data");
	return stat(p, &st) == 0 ? st.st_size : -1;
}

static int read_back(const char *dir, uint64_t tag, uint8_t *out, char *err)
{
	/* the sizes saved, into other buffers */
	struct collx_ckpt_region r[2] = { { out, reg[0].bytes }, { out + reg[0].bytes, reg[1].bytes } };
	struct ckpt_iov w = { r, 2 };

	return ckpt_archive_read(dir, tag, 0, 2, 0, w, NULL, err, CKPT_ERRLEN);
}

/* The checkpoint-level marker, as if rank 1's manifest were there too
 * (the area is rank 0 of 2). */
static void mark(const char *dir, uint64_t tag)
{
	char p[4096];
	FILE *fp;

	ckpt_archive_path(p, sizeof(p), dir, 1, tag, 0, "COMMITTED");
	fp = fopen(p, "w");
	if (fp) {
		fprintf(fp, "collx-ckpt-committed 1\nepoch 1\ntag %" PRIu64 "\nnranks 2\n", tag);
		fclose(fp);
	}
}

/* No file of @sub's name ends in .tmp. */
static int tmp_left(const char *dir, uint64_t tag)
{
	char cmd[4096 + 64];

	ckpt_archive_path(cmd, sizeof(cmd), dir, 1, tag, 0, NULL);
	memmove(cmd + 7, cmd, strlen(cmd) + 1);
	memcpy(cmd, "ls -a '", 7);
	strcat(cmd, "' | grep -q tmp");
	return system(cmd) == 0;
}

int main(void)
{
	char tmp[] = "/tmp/ckpt-archive-XXXXXX", areap[4096], dir[4096], err[CKPT_ERRLEN];
	struct ckpt_archive_opts o = { 0 };
	struct ckpt_archive_res r;
	struct ckpt_geom g, g2;
	struct ckpt_file f, f2;
	uint8_t *out = malloc(BYTES), *snap1 = malloc(BYTES);
	int rc, s1, s2, slot;

	state = malloc(BYTES);
	reg[0].buf = state;
	reg[0].bytes = 4 * CHUNK + 5;	/* chunks straddle the regions */
	reg[1].buf = state + reg[0].bytes;
	reg[1].bytes = BYTES - reg[0].bytes;
	ok(mkdtemp(tmp) != NULL, "temp dir %s", tmp);
	snprintf(areap, sizeof(areap), "%s/area", tmp);
	snprintf(dir, sizeof(dir), "%s/archive", tmp);
	o.dir = dir;

	rc = ckpt_geom_make(&g, 2, 0, 1, 1, BYTES + 5000, CHUNK, err, sizeof(err));
	ok(rc == 0 && g.max_chunks == 11 && g.hdr_block == 4096, "geometry: %u chunks, header %llu",
	   g.max_chunks, (unsigned long long)g.hdr_block);
	ok(ckpt_geom_make(&g2, 2, 0, 1, 1, BYTES, 1000, err, sizeof(err)) == -EINVAL,
	   "chunk not whole pages: %s", err);
	{
		char nodir[4096];

		snprintf(nodir, sizeof(nodir), "%s/no-such-dir/area", tmp);
		rc = ckpt_file_create(&f2, nodir, &g, err, sizeof(err));
		ok(rc == -ENOENT && strstr(err, "COLLX_CKPT_SHM_DIR"),
		   "an area in a missing directory says what to do: %s", err);
	}
	rc = ckpt_file_create(&f, areap, &g, err, sizeof(err));
	ok(rc == 0, "area created: %s", rc ? err : f.path);
	ok(ckpt_file_create(&f2, areap, &g, err, sizeof(err)) == -EBUSY, "a second owner: %s", err);
	ok(ckpt_find(&f, 0, 0) == -1 && ckpt_next_seq(&f) == 1, "a new area is empty");

	/* double buffering */
	fill(1);
	memcpy(snap1, state, BYTES);
	s1 = save(&f, 1, 1);
	fill(2);
	s2 = save(&f, 2, 2);
	ok(s1 != s2 && ckpt_find(&f, 0, 1) == s1 && ckpt_find(&f, 0, 2) == s2,
	   "tags 1 and 2 in slots %d and %d", s1, s2);
	ok(ckpt_victim(&f, 0, 0, 0) == s1 && ckpt_next_seq(&f) == 3, "the next save overwrites tag 1's slot");
	/* a save torn after its data started: tag 2 stays whole */
	ckpt_hdr_invalidate(ckpt_hdr(&f, s1, 0));
	memset(ckpt_data(&f, s1, 0), 0xee, 1000);
	ok(ckpt_find(&f, 0, 0) == s2 && ckpt_find(&f, 0, 1) == -1, "a torn save leaves tag 2 complete");
	ok(ckpt_victim(&f, 0, 0, 0) == s1, "and is overwritten next, not tag 2");
	/* a header corrupted in memory is not complete */
	ckpt_hdr(&f, s2, 0)->bytes ^= 1;
	ok(ckpt_find(&f, 0, 2) == -1, "a corrupt header is not taken");
	ckpt_hdr(&f, s2, 0)->bytes ^= 1;
	ok(ckpt_find(&f, 0, 2) == s2, "restored header is valid again");

	/* reopen: the checkpoints survive the process; another geometry not */
	ckpt_file_close(&f);
	rc = ckpt_file_create(&f, areap, &g, err, sizeof(err));
	ok(rc == 0 && ckpt_find(&f, 0, 2) == s2, "reopened with tag 2");
	ckpt_file_close(&f);
	ckpt_geom_make(&g2, 2, 0, 1, 1, BYTES + 9000, CHUNK, err, sizeof(err));
	ok(ckpt_file_create(&f2, areap, &g2, err, sizeof(err)) == -EEXIST, "other geometry: %s", err);
	rc = ckpt_file_open(&f, areap, false, err, sizeof(err));
	ok(rc == 0 && f.g.entry_bytes == g.entry_bytes && ckpt_find(&f, 0, 2) == s2,
	   "collx-ckptd's read-only view");
	ckpt_file_close(&f);
	rc = ckpt_file_create(&f, areap, &g, err, sizeof(err));

	/* full archive of tag 1 (saved again), read back exactly */
	memcpy(state, snap1, BYTES);
	slot = save(&f, 1, 3);
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == 0, "archived tag 1: %s", rc ? err : "");
	ok(r.chunks == 11 && r.written_chunks == 11 && r.written_bytes == BYTES && r.uring,
	   "full: %u of %u chunks, %" PRIu64 " bytes, %s, %s", r.written_chunks, r.chunks,
	   r.written_bytes, r.direct ? "O_DIRECT" : "buffered", r.uring ? "io_uring" : "pwrite");
	ok(fsize(dir, 1) == BYTES, "data file of %lld bytes (padding cut off)", (long long)fsize(dir, 1));
	memset(out, 0, BYTES);
	rc = read_back(dir, 1, out, err);
	ok(rc == -ENOENT && strstr(err, "COMMITTED"),
	   "without the checkpoint's COMMITTED marker the archive is not restorable: %s", err);
	mark(dir, 1);
	{
		struct collx_ckpt_region r2[2] = { { out, reg[0].bytes }, { out + reg[0].bytes, reg[1].bytes } };
		struct ckpt_iov w = { r2, 2 };

		rc = ckpt_archive_read(dir, 1, 0, 4, 0, w, NULL, err, sizeof(err));
		ok(rc == -EINVAL && strstr(err, "saved by 2 ranks, this job has 4"),
		   "another world size is refused: %s", err);
	}
	rc = read_back(dir, 1, out, err);
	ok(rc == 0 && !memcmp(out, snap1, BYTES), "tag 1 read back exactly");
	{
		struct collx_ckpt_region r2[2] = { { out, 3 * CHUNK }, { out + 3 * CHUNK, BYTES - 3 * CHUNK } };
		struct ckpt_iov w = { r2, 2 };

		rc = ckpt_archive_read(dir, 1, 0, 2, 0, w, NULL, err, sizeof(err));
		ok(rc == -EINVAL && strstr(err, "cut differently"), "same bytes cut otherwise: %s", err);
	}

	/* incremental: 2 chunks changed (one is the short last one) */
	memcpy(state, snap1, BYTES);
	state[5 * CHUNK + 3] ^= 0x5a;
	state[BYTES - 1] ^= 0x5a;
	slot = save(&f, 2, 4);
	o.incremental = true;
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == 0 && r.written_chunks == 2 && r.reused_chunks == 9 &&
	   r.written_bytes == CHUNK + 1000, "incremental tag 2: %u written (%" PRIu64 " bytes), %u reused",
	   r.written_chunks, r.written_bytes, r.reused_chunks);
	ok(fsize(dir, 2) == CHUNK + 1000, "its data file holds only those (%lld bytes)",
	   (long long)fsize(dir, 2));
	memcpy(snap1, state, BYTES);
	mark(dir, 2);
	rc = read_back(dir, 2, out, err);
	ok(rc == 0 && !memcmp(out, state, BYTES), "tag 2 read back exactly through tag 1's chunks");
	/* nothing changed: nothing written */
	slot = save(&f, 3, 5);
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == 0 && r.written_chunks == 0 && r.written_bytes == 0 && fsize(dir, 3) == 0,
	   "unchanged tag 3: 0 chunks written");
	mark(dir, 3);
	rc = read_back(dir, 3, out, err);
	ok(rc == 0 && !memcmp(out, state, BYTES), "tag 3 read back from tags 1 and 2");
	/* the buffered, pwrite path too */
	o.no_direct = true;
	o.no_uring = true;
	o.incremental = false;
	state[0] ^= 1;
	slot = save(&f, 4, 6);
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == 0 && !r.direct && !r.uring && r.written_bytes == BYTES, "buffered pwrite archive");
	mark(dir, 4);
	rc = read_back(dir, 4, out, err);
	ok(rc == 0 && !memcmp(out, state, BYTES), "tag 4 read back exactly");

	/* bad input */
	rc = read_back(dir, 99, out, err);
	ok(rc == -ENOENT, "unknown tag: %s", err);
	{
		struct collx_ckpt_region one = { out, BYTES - 1 };
		struct ckpt_iov w = { &one, 1 };

		rc = ckpt_archive_read(dir, 2, 0, 2, 0, w, NULL, err, sizeof(err));
		ok(rc == -EINVAL && strstr(err, "saved as 2 region"), "wrong sizes: %s", err);
	}
	{
		char p[4096];
		int fd;
		uint8_t b;

		/* one bit in the data tag 2 wrote (chunk 5) */
		ckpt_archive_path(p, sizeof(p), dir, 1, 2, 0, "data");
		fd = open(p, O_RDWR);
		pread(fd, &b, 1, 100);
		b ^= 0x10;
		pwrite(fd, &b, 1, 100);
		close(fd);
		rc = read_back(dir, 2, out, err);
		ok(rc == -EBADMSG && strstr(err, "chunk 5"), "corrupted chunk: %s", err);
		rc = read_back(dir, 3, out, err);
		ok(rc == -EBADMSG, "and tag 3, which references it: %s", err);
		rc = read_back(dir, 1, out, err);
		ok(rc == 0, "tag 1 does not reference it and still reads");
		/* a data file cut short */
		ckpt_archive_path(p, sizeof(p), dir, 1, 4, 0, "data");
		truncate(p, BYTES - 10);
		rc = read_back(dir, 4, out, err);
		ok(rc == -EBADMSG && strstr(err, "truncated"), "truncated data: %s", err);
		unlink(p);
		rc = read_back(dir, 4, out, err);
		ok(rc == -EBADMSG, "missing data file: %s", err);
	}
	/* data changed under a complete header: refused, nothing published */
	state[7] ^= 1;
	slot = save(&f, 5, 7);
	ckpt_data(&f, slot, 0)[CHUNK * 2] ^= 1;
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == -EBADMSG && strstr(err, "chunk 2"), "area data that lost its hash: %s", err);
	{
		char p[4096];
		struct stat st;

		ckpt_archive_path(p, sizeof(p), dir, 1, 5, 0, "manifest");
		ok(stat(p, &st) < 0, "no manifest for it");
	}
	ckpt_hdr_invalidate(ckpt_hdr(&f, slot, 0));
	rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
	ok(rc == -ENOENT, "an empty slot: %s", err);

	/* two writers of one shard (the owner's daemon and a holder's with
	 * --replicas): each writes a name of its own, link() publishes, one
	 * wins, the other is told and leaves nothing behind */
	{
		int i, wins, lost, other;
		pid_t pid[4];

		state[9] ^= 1;
		slot = save(&f, 6, 8);
		o.hold_ms = 300;	/* all four past the existence check first */
		for (i = 0; i < 4; i++) {
			pid[i] = fork();
			if (pid[i] == 0) {
				struct ckpt_archive_res rr;
				char e[CKPT_ERRLEN];
				int x = ckpt_archive_entry(&f, slot, 0, &o, &rr, e, sizeof(e));

				_exit(x == 0 ? 0 : x == -EEXIST ? 1 : 2);
			}
		}
		tap_reap_race(pid, 4, &wins, &lost, &other);
		o.hold_ms = 0;
		ok(wins == 1 && lost == 3 && !other,
		   "four concurrent writers of one shard: %d published, %d told another was first, %d else",
		   wins, lost, other);
		ok(!tmp_left(dir, 6), "no temporary data or manifest file left");
		rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
		ok(rc == -EEXIST && strstr(err, "another collx-ckptd"), "a later writer: %s", err);
		mark(dir, 6);
		rc = read_back(dir, 6, out, err);
		ok(rc == 0 && !memcmp(out, state, BYTES), "the winner's archive reads back exactly");
		/* a writer that died between its data and its manifest */
		{
			char p[4096];
			struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };

			state[13] ^= 1;
			slot = save(&f, 7, 9);
			ckpt_archive_path(p, sizeof(p), dir, 1, 7, 0, NULL);
			mkdir(dir, 0700);
			mkdir(p, 0700);
			ckpt_archive_path(p, sizeof(p), dir, 1, 7, 0, "data");
			close(open(p, O_WRONLY | O_CREAT, 0600));
			rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
			ok(rc == -EEXIST, "a fresh data file without a manifest: left to its writer");
			utimensat(AT_FDCWD, p, old, 0);
			rc = ckpt_archive_entry(&f, slot, 0, &o, &r, err, sizeof(err));
			mark(dir, 7);
			ok(rc == 0 && read_back(dir, 7, out, err) == 0 && !memcmp(out, state, BYTES),
			   "one older than %d s: its writer died, the drain replaces it", CKPT_STALE_S);
		}
	}

	/* the pin: collx-ckptd's reader mark on the copy it drains */
	{
		struct ckpt_area_hdr *pin = ckpt_pin_map(areap, err, sizeof(err));
		uint64_t pe = 0, pt = 0;
		int old, st;
		pid_t dead;

		ok(pin != NULL, "collx-ckptd maps the header page for the pin: %s", pin ? "" : err);
		state[11] ^= 1;
		s1 = save(&f, 10, 10);
		state[11] ^= 1;
		s2 = save(&f, 11, 11);
		old = ckpt_victim(&f, 0, 0, 0);
		ok(old == s1, "unpinned: the next save takes tag 10's slot");
		ckpt_pin_set(pin, 0, 10);	/* draining tag 10 */
		ok(ckpt_pinned(&f, s1, 0) && !ckpt_pinned(&f, s2, 0), "tag 10's copy is pinned");
		rc = ckpt_victim_pinned(&f, 0, 0, 0, &pe, &pt);
		ok(rc == -EBUSY && pt == 10 && pe == 1,
		   "pinned victim, the other slot the newest committed: -EBUSY naming tag %llu",
		   (unsigned long long)pt);
		ok(ckpt_victim_pinned(&f, 1, 0, 0, &pe, &pt) >= 0, "another entry is not pinned");
		ckpt_pin_set(pin, 0, 11);	/* draining the newest: no conflict */
		ok(ckpt_victim_pinned(&f, 0, 0, 0, &pe, &pt) == s1,
		   "the newest pinned: the save takes the other slot");
		/* a daemon that died mid-drain pins nothing */
		dead = fork();
		if (dead == 0)
			_exit(0);
		waitpid(dead, &st, 0);
		ckpt_pin_set(pin, 0, 10);
		pin->pin_pid = (uint32_t)dead;
		ok(ckpt_victim_pinned(&f, 0, 0, 0, &pe, &pt) == s1, "a dead daemon's pin is ignored");
		ckpt_pin_set(pin, 0, 0);
		ok(!ckpt_pinned(&f, s1, 0) && ckpt_victim_pinned(&f, 0, 0, 0, &pe, &pt) == s1,
		   "cleared: tag 10's slot is the victim again");
		/* pinned, a drain survives a save (the save waits or fails) */
		ckpt_pin_set(pin, 0, 10);
		rc = ckpt_archive_entry(&f, s1, 0, &o, &r, err, sizeof(err));
		ok(rc == 0 && ckpt_hdr(&f, s1, 0)->tag == 10, "the pinned copy drained whole: %s",
		   rc ? err : "");
		ckpt_pin_unmap(pin);
	}

	ckpt_file_close(&f);
	snprintf(areap, sizeof(areap), "rm -rf %s", tmp);
	ok(system(areap) == 0, "cleaned up");
	free(out);
	free(snap1);
	free(state);
	return done();
}
