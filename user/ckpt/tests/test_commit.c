// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The global commit, epochs and the area file's checks on the host: a
 * copy committed locally but not globally is never restored; the newest
 * epoch wins; the next save never overwrites the protected (restored)
 * checkpoint, even after a reopen; the area's commit record; the snapshot
 * copy with threads; symlinks, foreign owners and loose modes refused.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_int.h"
#include "tap.h"

#define CHUNK	65536u
#define BYTES	(6 * CHUNK + 77)

static uint8_t *state;
static struct collx_ckpt_region reg[2];
static struct ckpt_iov v = { reg, 2 };

/* The own entry's share of a save: snapshot, hash, local commit and, with
 * @global, the mark every rank's acknowledgement allows. */
static int save(struct ckpt_file *f, uint64_t epoch, uint64_t tag, uint64_t seq, bool global,
		uint64_t pe, uint64_t pt)
{
	int slot = ckpt_victim(f, 0, pe, pt);
	struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, 0);

	memset(state, (int)(tag * 7 + epoch), BYTES);
	ckpt_hdr_invalidate(h);
	ckpt_hdr_begin(h, &f->g, v, tag);
	ckpt_snapshot_copy(v, ckpt_data(f, slot, 0), 2);
	ckpt_hdr_hash_data(h, &f->g, ckpt_data(f, slot, 0), epoch);
	ckpt_hdr_commit(h, seq);
	if (global)
		ckpt_hdr_gcommit(h);
	return slot;
}

static void snapshot_threads(void)
{
	size_t n = (8u << 20) + 12345, i;
	uint8_t *src = malloc(n), *dst = malloc(n);
	struct collx_ckpt_region r[3] = {
		{ src, 1000 }, { src + 1000, (4u << 20) + 3 }, { src + 1000 + (4u << 20) + 3, 0 },
	};
	struct ckpt_iov w = { r, 3 };
	unsigned long long seed = 5;

	r[2].bytes = n - r[0].bytes - r[1].bytes;
	for (i = 0; i < n; i++)
		src[i] = (uint8_t)tap_rand(&seed);
	memset(dst, 0, n);
	ckpt_snapshot_copy(w, dst, 2);
	ok(!memcmp(src, dst, n), "a snapshot of 8 MiB + 12345 bytes in 3 regions, 2 threads, is exact");
	memset(dst, 0, n);
	ckpt_snapshot_copy(w, dst, 5);
	ok(!memcmp(src, dst, n), "and with 5 threads");
	free(src);
	free(dst);
}

static void file_checks(const char *tmp, const struct ckpt_geom *g)
{
	char p[4096], l[4096], err[CKPT_ERRLEN];
	struct ckpt_file f;
	int rc, fd;

	snprintf(p, sizeof(p), "%s/loose", tmp);
	fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600);
	ok(fd >= 0 && fchmod(fd, 0644) == 0, "a file of mode 0644");
	close(fd);
	rc = ckpt_file_create(&f, p, g, err, sizeof(err));
	ok(rc == -EPERM && strstr(err, "mode 644"), "refused as an area: %s", err);
	rc = ckpt_file_open(&f, p, false, err, sizeof(err));
	ok(rc == -EPERM && strstr(err, "mode 644"), "refused by collx-ckptd's open: %s", err);

	snprintf(l, sizeof(l), "%s/link", tmp);
	snprintf(p, sizeof(p), "%s/target", tmp);
	ok(symlink(p, l) == 0, "a symlink to a file that does not exist yet");
	rc = ckpt_file_create(&f, l, g, err, sizeof(err));
	ok(rc == -EPERM && strstr(err, "symbolic link"), "not followed: %s", err);
	ok(access(p, F_OK) != 0, "and nothing was created through it");

	snprintf(p, sizeof(p), "%s/foreign", tmp);
	fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600);
	close(fd);
	if (geteuid() == 0 && chown(p, 65534, 65534) == 0) {
		rc = ckpt_file_create(&f, p, g, err, sizeof(err));
		ok(rc == -EPERM && strstr(err, "belongs to uid 65534"), "another user's file: %s", err);
	} else {
		ok(1, "# SKIP another user's file: not root, cannot chown");
	}
	snprintf(p, sizeof(p), "%s/dir", tmp);
	ok(mkdir(p, 0700) == 0, "a directory");
	rc = ckpt_file_open(&f, p, false, err, sizeof(err));
	ok(rc == -EPERM && strstr(err, "not a regular file"), "is not an area: %s", err);
}

int main(void)
{
	char tmp[] = "/tmp/ckpt-commit-XXXXXX", areap[4096], err[CKPT_ERRLEN], name[600];
	struct ckpt_geom g;
	struct ckpt_file f;
	struct stat st;
	int rc, s1, s2, s3, s4;

	state = malloc(BYTES);
	reg[0].buf = state;
	reg[0].bytes = 2 * CHUNK + 5;
	reg[1].buf = state + reg[0].bytes;
	reg[1].bytes = BYTES - reg[0].bytes;
	ok(mkdtemp(tmp) != NULL, "temp dir %s", tmp);
	snprintf(areap, sizeof(areap), "%s/area", tmp);
	rc = ckpt_geom_make(&g, 2, 0, 1, 1, BYTES, CHUNK, err, sizeof(err));
	ok(rc == 0, "geometry");
	rc = ckpt_file_create(&f, areap, &g, err, sizeof(err));
	ok(rc == 0 && stat(areap, &st) == 0 && (st.st_mode & 0777) == 0600,
	   "area created 0600: %s", rc ? err : "");
	ok(ckpt_max_epoch(&f) == 0, "a new area has seen no epoch");

	/* the global commit */
	s1 = save(&f, 1, 1, 1, true, 0, 0);
	s2 = save(&f, 1, 2, 2, false, 0, 0);
	ok(s1 != s2, "tags 1 and 2 in slots %d and %d", s1, s2);
	ok(ckpt_find(&f, 0, 2) == -1 && ckpt_find_complete(&f, 0) == s2,
	   "tag 2, committed locally only, is complete but never restored");
	ok(ckpt_find(&f, 0, 0) == s1, "tag 1 is the newest restorable");
	ok(ckpt_victim(&f, 0, 0, 0) == s2,
	   "the next save overwrites the abandoned tag 2, not the newest globally committed tag 1");
	ckpt_hdr_gcommit(ckpt_hdr(&f, s2, 0));
	ok(ckpt_hdr_valid(&f, ckpt_hdr(&f, s2, 0)) == 0 && ckpt_find(&f, 0, 0) == s2,
	   "the mark is outside the header's hash: tag 2 valid and newest once marked");
	ckpt_hdr_invalidate(ckpt_hdr(&f, s2, 0));
	ok(ckpt_hdr(&f, s2, 0)->gstate == 0 && ckpt_find(&f, 0, 2) == -1,
	   "invalidating clears the mark");

	/* epochs: the newest timeline wins, an old one stays addressable */
	s2 = save(&f, 1, 2, 2, true, 0, 0);
	s3 = save(&f, 2, 2, 3, true, 0, 0);	/* after a restore of tag 1 */
	ok(s3 == s1 && ckpt_find(&f, 0, 2) == s3, "tag 2 of epoch 2 wins over tag 2 of epoch 1");
	ok(ckpt_find_id(&f, 0, 1, 2) == s2 && ckpt_find_id(&f, 0, 3, 2) == -1,
	   "each (epoch, tag) found by its identity, an unknown one not");
	ok(ckpt_max_epoch(&f) == 2, "the greatest epoch seen is 2");

	/* protect: after a restore of the older checkpoint, the newer one
	 * is overwritten */
	s1 = save(&f, 3, 1, 4, true, 0, 0);	/* slots: (3,1) and (2,2) */
	s4 = ckpt_find(&f, 0, 2);
	ok(s4 >= 0 && s4 != s1 && ckpt_victim(&f, 0, 0, 0) == s4,
	   "two globally committed copies: with nothing protected, the older epoch's is taken");
	ok(ckpt_victim(&f, 0, 3, 1) == s4, "restored (3, 1): the next save takes (2, 2)'s slot");
	ok(ckpt_victim(&f, 0, 2, 2) == s1, "restored (2, 2): the next save takes (3, 1)'s slot");
	ckpt_area_record_protect(&f, 2, 2);
	ckpt_area_record_commit(&f, 3, 1, 4);
	ckpt_file_close(&f);
	rc = ckpt_file_create(&f, areap, &g, err, sizeof(err));
	ok(rc == 0 && ckpt_area_hdr(&f)->protect_epoch == 2 && ckpt_area_hdr(&f)->protect_tag == 2,
	   "the protected identity survives a reopen");
	ok(ckpt_area_hdr(&f)->commit_epoch == 3 && ckpt_area_hdr(&f)->commit_tag == 1 &&
	   ckpt_area_hdr(&f)->commit_seq == 4 && ckpt_max_epoch(&f) == 3,
	   "and the commit record: epoch 3, tag 1, seq 4");
	ckpt_file_close(&f);

	/* names */
	ok(ckpt_area_path(name, sizeof(name), "run-42", 3) == 0 && strstr(name, "collx-ckpt-run-42-r3"),
	   "a job id in the area's name: %s", name);
	ok(ckpt_area_path(name, sizeof(name), "../x", 0) == -EINVAL, "no path in a job id");

	snapshot_threads();
	file_checks(tmp, &g);
	free(state);
	return done();
}
