// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * ckpt_lab: the lab cases' (tests/lab/cases/9[1-4]-ckpt*.sh) and the
 * benchmark's driver of libcollx_ckpt.  One communicator
 * (collx_comm_init_all), one area, and the steps given, in order:
 *
 *   save:TAG:PAT        fill the shard with PAT, save it
 *   asave:TAG:PAT       the same with collx_ckpt_save_async: as soon as it
 *                       returns the regions are overwritten (they are free
 *                       after the snapshot), then it is polled with
 *                       collx_ckpt_test; a later load:TAG must give PAT
 *   atrain:TAG:PAT:N    save_async, regions overwritten, then N allreduces
 *                       on the training comm while the replication runs
 *                       (each sum checked), then wait
 *   die:TAG:PAT         start an async save and SIGKILL this process right
 *                       after the snapshot, its replication in flight
 *   latest:TAG          collx_ckpt_latest must name TAG
 *   savefail:TAG:PAT    a save that must fail (a peer died)
 *   saveerr:TAG:PAT:ERR[,ERR][:BYTES]  a save that must fail with one of
 *                       these errnos; with BYTES, passing one region of
 *                       BYTES (more than the area takes: bad input)
 *   load:TAG:SRC:PAT    load, SRC local|peer|archive must have served it, and
 *                       every byte must be PAT's
 *   loadfail:TAG:ERR[,ERR]  a load that must fail with one of these errnos
 *   loadsize:TAG:BYTES:ERR  a load into a shard of BYTES that must fail with ERR
 *   loadany:TAG:PAT     a load that either fails cleanly (ENOENT, EREMOTEIO)
 *                       or gives PAT's bytes exactly
 *   show                print the area's entries (state, tag, seq, epoch,
 *                       global commit)
 *   dropown             forget this rank's own copies (a lost local copy;
 *                       replicas it holds stay)
 *   wipe                remove the area's file and make a new, empty one
 *   write:PATH          write(2) the shard to PATH and fsync (benchmark)
 *   flip:TAG:OFF        flip a bit of byte OFF of this rank's archived data
 *                       file of TAG in $COLLX_CKPT_DIR (a corrupted archive)
 *   barrier
 *
 * PAT is SEED, or SEED/SEED2@C1,C2,...: chunks C1, C2 of SEED2.  Every
 * rank's bytes differ.  Options: --bytes N (shard, default 4 MiB),
 * --regions R (default 3, uneven), --k K, --unregistered.  Lines starting
 * "time " give seconds for the benchmark.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include "ckpt_int.h"

static struct collx_comm *comm;
static struct collx_ckpt_area *area;
static struct collx_ckpt_region reg[COLLX_CKPT_MAX_REGIONS];
static int nreg = 3, k = -1, rank;
static size_t bytes = 4 << 20;
static uint8_t *shard;
static void *mr;
static bool unregistered;

static void die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "ckpt_lab rank %d: ", rank);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	exit(1);
}

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Word i of seed s on this rank. */
static uint64_t word(uint64_t s, uint64_t i)
{
	return mix(s * 0x9e3779b97f4a7c15ULL + ((uint64_t)rank << 40) + i);
}

struct pat {
	uint64_t seed, seed2;
	int nc;
	uint64_t chunks[64];
};

static void parse_pat(const char *s, struct pat *p)
{
	char *e;

	memset(p, 0, sizeof(*p));
	p->seed = strtoull(s, &e, 10);
	if (*e == '/') {
		p->seed2 = strtoull(e + 1, &e, 10);
		if (*e != '@')
			die("bad pattern %s%s", s, "");
		do {
			p->chunks[p->nc++] = strtoull(e + 1, &e, 10);
		} while (*e == ',' && p->nc < 64);
	}
	if (*e)
		die("bad pattern %s%s", s, "");
}

static uint64_t chunk_bytes(void)
{
	return area->f.g.chunk_bytes;
}

/* Seed of the word at byte @off. */
static uint64_t seed_at(const struct pat *p, uint64_t off)
{
	int i;

	for (i = 0; i < p->nc; i++)
		if (off / chunk_bytes() == p->chunks[i])
			return p->seed2;
	return p->seed;
}

static void fill(const struct pat *p)
{
	uint64_t *w = (uint64_t *)shard, i, n = bytes / 8;

	for (i = 0; i < n; i++)
		w[i] = word(seed_at(p, i * 8), i);
	for (i = n * 8; i < bytes; i++)
		shard[i] = (uint8_t)word(seed_at(p, i), i);
}

static void check(const struct pat *p, const char *what)
{
	uint64_t *w = (uint64_t *)shard, i, n = bytes / 8, bad = 0, first = 0;

	for (i = 0; i < n; i++)
		if (w[i] != word(seed_at(p, i * 8), i) && !bad++)
			first = i * 8;
	for (i = n * 8; i < bytes; i++)
		if (shard[i] != (uint8_t)word(seed_at(p, i), i) && !bad++)
			first = i;
	if (bad) {
		char b[96];

		snprintf(b, sizeof(b), "%llu words wrong, the first at byte %llu",
			 (unsigned long long)bad, (unsigned long long)first);
		die("%s: %s", what, b);
	}
}

static void setup_regions(void)
{
	size_t off = 0;
	int i;

	shard = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (shard == MAP_FAILED)
		die("mmap %s%s", "shard", "");
	/* uneven: region i gets (i + 1) parts; the chunks straddle them */
	for (i = 0; i < nreg; i++) {
		size_t part = bytes / ((size_t)nreg * (nreg + 1) / 2) * (i + 1);

		reg[i].buf = shard + off;
		reg[i].bytes = i + 1 == nreg ? bytes - off : part;
		off += reg[i].bytes;
	}
	if (!unregistered) {
		int rc = collx_mem_register(comm, shard, bytes, &mr);

		if (rc)
			die("register the shard: %s%s", collx_strerror(rc), "");
	}
}

static int errno_of(const char *name)
{
	static const struct { const char *n; int e; } t[] = {
		{ "ENOENT", ENOENT }, { "EINVAL", EINVAL }, { "EBADMSG", EBADMSG },
		{ "EREMOTEIO", EREMOTEIO }, { "ECONNRESET", ECONNRESET }, { "ETIMEDOUT", ETIMEDOUT },
		{ "EPIPE", EPIPE }, { "ECANCELED", ECANCELED },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].e;
	die("unknown errno name %s%s", name, "");
	return 0;
}

/* "ENOENT (No such file or directory)" for a negative errno */
static const char *ename(int rc)
{
	static const char *const names[] = {
		"ENOENT", "EINVAL", "EBADMSG", "EREMOTEIO", "ECONNRESET", "ETIMEDOUT",
		"EPIPE", "ECANCELED",
	};
	static char b[128];
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (-rc == errno_of(names[i])) {
			snprintf(b, sizeof(b), "%s (%s)", names[i], strerror(-rc));
			return b;
		}
	snprintf(b, sizeof(b), "errno %d (%s)", -rc, strerror(-rc));
	return b;
}

static bool err_in(int rc, const char *list)
{
	char buf[128], *p, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (-rc == errno_of(p))
			return true;
	return false;
}

static const char *mem_str(uint32_t m)
{
	static char b[80];

	snprintf(b, sizeof(b), "%s%s%s%s", m & COLLX_MEM_ZERO_COPY ? "zero-copy " : "",
		 m & COLLX_MEM_PLACED ? "placed " : "", m & COLLX_MEM_STAGED ? "staged " : "",
		 m & COLLX_MEM_BOUNCED ? "bounced " : "");
	return m ? b : "- ";
}

/* Overwrite the regions with garbage: the saved bytes must not change. */
static void scribble(void)
{
	memset(shard, 0x5a, bytes);
}

/* N allreduces of one int64 per rank on the training comm, each checked. */
static int train_steps(int n)
{
	int64_t v, i;
	int rc, s;

	for (s = 0; s < n; s++) {
		v = rank + s;
		rc = collx_allreduce(comm, &v, &v, 1, COLLX_INT64, COLLX_OP_SUM);
		if (rc)
			return rc;
		for (i = 0, rc = 0; i < collx_comm_size(comm); i++)
			rc += i + s;
		if (v != rc)
			die("training allreduce %s: wrong sum%s", "", "");
	}
	return 0;
}

static void do_save(uint64_t tag, const char *pat, int mode, int steps)
{
	struct collx_ckpt_stats st;
	struct collx_ckpt_op *op;
	struct pat p;
	double t0, t_ret = 0;
	int rc, done = 0, polls = 0;

	parse_pat(pat, &p);
	fill(&p);
	t0 = ckpt_now();
	if (mode == 0) {
		rc = collx_ckpt_save_async(comm, area, reg, nreg, tag, &op);
		if (!rc)
			rc = collx_ckpt_wait(op, &st);
	} else {
		rc = collx_ckpt_save_async(comm, area, reg, nreg, tag, &op);
		t_ret = ckpt_now() - t0;
		if (!rc && mode == 2) {
			printf("rank %d: killing myself mid-save of tag %llu\n", rank,
			       (unsigned long long)tag);
			fflush(stdout);
			kill(getpid(), SIGKILL);
		}
		if (!rc && mode != 3)
			scribble();
		if (!rc && mode == 4) {
			int dn = 0;

			/* the first allreduce goes out while the save replicates */
			rc = collx_ckpt_test(op, &dn, &st);
			if (rc || dn)
				die("the save was over before the first training allreduce%s%s", "", "");
			printf("rank %d: still replicating when the first training allreduce was issued\n",
			       rank);
			rc = train_steps(steps);
			if (rc)
				die("a training allreduce during the replication failed: %s: %s",
				    collx_strerror(rc), collx_comm_last_error(comm));
			rc = collx_ckpt_test(op, &dn, &st);
			printf("rank %d: %d training allreduces ran during the replication (%s when they ended)\n",
			       rank, steps, dn ? "done" : "still replicating");
			if (!rc && !dn)
				rc = collx_ckpt_wait(op, &st);
			done = 1;
		}
		/* bounded: the comm's timeout ends a stuck save long before */
		while (!rc && !done && polls < 100000) {
			usleep(10000);
			rc = collx_ckpt_test(op, &done, &st);
			polls++;
		}
		if (!rc && !done)
			die("async save of tag %s never completed%s", pat, "");
	}
	if (mode == 3) {
		if (!rc)
			die("save of tag %s succeeded but a peer is dead%s", pat, "");
		printf("rank %d: save tag %llu failed as expected: %s: %s\n", rank,
		       (unsigned long long)tag, ename(rc), collx_ckpt_last_error(area));
		return;
	}
	if (rc)
		die("save failed: %s: %s", ename(rc), collx_ckpt_last_error(area));
	printf("rank %d: save tag %llu%s: %.3f s (%.3f s in the call), pause %.3f s, replication %.3f s, queued %.3f s, epoch %llu, %llu local, %llu sent, %llu received, mem %s\n",
	       rank, (unsigned long long)tag, mode ? " async" : "", st.seconds,
	       mode ? t_ret : ckpt_now() - t0, st.pause_seconds, st.replicate_seconds,
	       st.queued_seconds, (unsigned long long)st.epoch, (unsigned long long)st.bytes_local,
	       (unsigned long long)st.bytes_sent, (unsigned long long)st.bytes_received,
	       mem_str(st.mem));
	printf("time save %.6f\n", ckpt_now() - t0);
	printf("time pause %.6f\n", st.pause_seconds);
	printf("time replicate %.6f\n", st.replicate_seconds);
}

static void do_latest(uint64_t want)
{
	uint64_t tag = 0, epoch = 0;
	int rc = collx_ckpt_latest(comm, area, &tag, &epoch);

	if (rc)
		die("latest: %s: %s", ename(rc), collx_ckpt_last_error(area));
	printf("rank %d: latest restorable: tag %llu epoch %llu\n", rank, (unsigned long long)tag,
	       (unsigned long long)epoch);
	if (tag != want) {
		char b[64];

		snprintf(b, sizeof(b), "%llu, expected %llu", (unsigned long long)tag,
			 (unsigned long long)want);
		die("latest says tag %s%s", b, "");
	}
}

static void do_saveerr(uint64_t tag, const char *pat, const char *errs, size_t nbytes)
{
	/* never read: the size check refuses it before any byte moves */
	struct collx_ckpt_region one = { shard, nbytes };
	struct pat p;
	int rc;

	parse_pat(pat, &p);
	fill(&p);
	if (nbytes)
		rc = collx_ckpt_save(comm, area, &one, 1, tag);
	else
		rc = collx_ckpt_save(comm, area, reg, nreg, tag);
	if (!rc)
		die("save of tag %s succeeded; expected %s", pat, errs);
	if (!err_in(rc, errs))
		die("save failed with %s; expected %s", ename(rc), errs);
	printf("rank %d: save tag %llu failed as expected: %s: %s\n", rank,
	       (unsigned long long)tag, ename(rc), collx_ckpt_last_error(area));
}

static void do_load(uint64_t tag, const char *want, const char *pat)
{
	enum collx_ckpt_source src;
	struct collx_ckpt_stats st;
	struct pat p;
	double t0;
	int rc;

	parse_pat(pat, &p);
	memset(shard, 0xa5, bytes);
	t0 = ckpt_now();
	rc = collx_ckpt_load_stats(comm, area, reg, nreg, tag, &src, &st);
	if (rc)
		die("load failed: %s: %s", ename(rc), collx_ckpt_last_error(area));
	printf("rank %d: load tag %llu from %s: %.3f s, %llu received, %llu sent, mem %s\n", rank,
	       (unsigned long long)tag, collx_ckpt_source_name(src), st.seconds,
	       (unsigned long long)st.bytes_received, (unsigned long long)st.bytes_sent,
	       mem_str(st.mem));
	printf("time load-%s %.6f\n", collx_ckpt_source_name(src), ckpt_now() - t0);
	if (strcmp(want, "any") && strcmp(want, collx_ckpt_source_name(src)))
		die("served by %s, expected %s", collx_ckpt_source_name(src), want);
	check(&p, "restored shard");
	printf("rank %d: all %zu bytes of tag %llu are right\n", rank, bytes, (unsigned long long)tag);
}

static void do_loadany(uint64_t tag, const char *pat)
{
	enum collx_ckpt_source src;
	struct pat p;
	int rc;

	parse_pat(pat, &p);
	memset(shard, 0xa5, bytes);
	rc = collx_ckpt_load(comm, area, reg, nreg, tag, &src);
	if (rc == -ENOENT || rc == -EREMOTEIO) {
		printf("rank %d: load tag %llu failed cleanly: %s: %s\n", rank,
		       (unsigned long long)tag, ename(rc), collx_ckpt_last_error(area));
		return;
	}
	if (rc)
		die("load failed: %s: %s", ename(rc), collx_ckpt_last_error(area));
	check(&p, "restored shard");
	printf("rank %d: load tag %llu from %s: all %zu bytes right\n", rank, (unsigned long long)tag,
	       collx_ckpt_source_name(src), bytes);
}

static void do_show(void)
{
	uint32_t s, e;

	for (s = 0; s < CKPT_NSLOTS; s++)
		for (e = 0; e <= area->f.g.k; e++) {
			const struct ckpt_shard_hdr *h = ckpt_hdr(&area->f, s, e);
			int v = ckpt_hdr_valid(&area->f, h);

			printf("rank %d: slot %u entry %u (rank %u's): %s, tag %llu, seq %llu, epoch %llu%s\n",
			       rank, s, e, ckpt_entry_src(&area->f.g, e),
			       v == 0 ? "complete" : v == -ENOENT ? "empty" : "corrupt",
			       (unsigned long long)h->tag, (unsigned long long)h->seq,
			       (unsigned long long)h->epoch,
			       v == 0 && h->gstate == CKPT_GCOMMIT ? ", globally committed" : "");
		}
}

static void do_loadfail(uint64_t tag, const char *errs, size_t nbytes)
{
	struct collx_ckpt_region one = { shard, nbytes };
	enum collx_ckpt_source src;
	int rc;

	if (nbytes)
		rc = collx_ckpt_load(comm, area, &one, 1, tag, &src);
	else
		rc = collx_ckpt_load(comm, area, reg, nreg, tag, &src);
	if (!rc)
		die("load of tag %s succeeded; expected %s", "?", errs);
	if (!err_in(rc, errs))
		die("load failed with %s; expected %s", ename(rc), errs);
	printf("rank %d: load tag %llu failed as expected: %s: %s\n", rank,
	       (unsigned long long)tag, ename(rc), collx_ckpt_last_error(area));
}

static void open_area(void)
{
	int rc = collx_ckpt_area_create(comm, bytes, k, &area);

	if (rc)
		die("area: %s: %s", strerror(-rc), collx_ckpt_last_error(NULL));
	printf("rank %d: area %s, %zu bytes, k %u, chunk %u\n", rank, collx_ckpt_area_path(area),
	       area->f.len, area->f.g.k, area->f.g.chunk_bytes);
}

static void do_write(const char *path)
{
	double t0 = ckpt_now();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), i;

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	for (i = 0; i < nreg; i++)
		if (ckpt_write_all(fd, reg[i].buf, reg[i].bytes))
			die("write %s: %s", path, strerror(errno));
	if (fsync(fd) || close(fd))
		die("fsync %s: %s", path, strerror(errno));
	printf("time write %.6f\n", ckpt_now() - t0);
}

static void do_flip(uint64_t tag, uint64_t off)
{
	const char *dir = getenv("COLLX_CKPT_DIR");
	char path[4096];
	struct ckpt_id *ids = NULL;
	uint64_t ep = 0;
	size_t n = 0, q;
	uint8_t b;
	int fd;

	/* the newest epoch's archive of the tag */
	if (dir && !ckpt_archive_list(dir, &ids, &n))
		for (q = 0; q < n; q++)
			if (ids[q].tag == tag)
				ep = ids[q].epoch;
	free(ids);
	if (!dir || !ep || ckpt_archive_path(path, sizeof(path), dir, ep, tag, rank, "data"))
		die("flip: no COLLX_CKPT_DIR or no archive of the tag%s%s", "", "");
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || pread(fd, &b, 1, off) != 1)
		die("flip: %s: %s", path, strerror(errno));
	b ^= 0x10;
	if (pwrite(fd, &b, 1, off) != 1 || fsync(fd) || close(fd))
		die("flip: %s: %s", path, strerror(errno));
	printf("rank %d: flipped a bit of byte %llu of %s\n", rank, (unsigned long long)off, path);
}

int main(int argc, char **argv)
{
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			bytes = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--regions") && i + 1 < argc)
			nreg = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--k") && i + 1 < argc)
			k = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--unregistered"))
			unregistered = true;
		else
			die("unknown option %s%s", argv[i], "");
	}
	if (nreg < 1 || nreg > COLLX_CKPT_MAX_REGIONS || bytes < (size_t)nreg * 64)
		die("bad --regions or --bytes%s%s", "", "");
	rc = collx_comm_init_all(&comm);
	if (rc)
		die("init: %s: %s", collx_strerror(rc), collx_comm_last_error(NULL));
	rank = collx_comm_rank(comm);
	setup_regions();
	open_area();
	for (; i < argc; i++) {
		char s[256], *f[5] = { 0 }, *save = NULL, *t;
		int n = 0;

		snprintf(s, sizeof(s), "%s", argv[i]);
		for (t = strtok_r(s, ":", &save); t && n < 5; t = strtok_r(NULL, ":", &save))
			f[n++] = t;
		if (t)
			die("too many fields in %s%s", argv[i], "");
		printf("rank %d: step %s\n", rank, argv[i]);
		if (!strcmp(f[0], "save") && n == 3)
			do_save(strtoull(f[1], NULL, 10), f[2], 0, 0);
		else if (!strcmp(f[0], "asave") && n == 3)
			do_save(strtoull(f[1], NULL, 10), f[2], 1, 0);
		else if (!strcmp(f[0], "atrain") && n == 4)
			do_save(strtoull(f[1], NULL, 10), f[2], 4, atoi(f[3]));
		else if (!strcmp(f[0], "die") && n == 3)
			do_save(strtoull(f[1], NULL, 10), f[2], 2, 0);
		else if (!strcmp(f[0], "savefail") && n == 3)
			do_save(strtoull(f[1], NULL, 10), f[2], 3, 0);
		else if (!strcmp(f[0], "latest") && n == 2)
			do_latest(strtoull(f[1], NULL, 10));
		else if (!strcmp(f[0], "saveerr") && (n == 4 || n == 5))
			do_saveerr(strtoull(f[1], NULL, 10), f[2], f[3],
				   n == 5 ? strtoull(f[4], NULL, 0) : 0);
		else if (!strcmp(f[0], "load") && n == 4)
			do_load(strtoull(f[1], NULL, 10), f[2], f[3]);
		else if (!strcmp(f[0], "loadfail") && n == 3)
			do_loadfail(strtoull(f[1], NULL, 10), f[2], 0);
		else if (!strcmp(f[0], "loadsize") && n == 4)
			do_loadfail(strtoull(f[1], NULL, 10), f[3], strtoull(f[2], NULL, 0));
		else if (!strcmp(f[0], "loadany") && n == 3)
			do_loadany(strtoull(f[1], NULL, 10), f[2]);
		else if (!strcmp(f[0], "show") && n == 1)
			do_show();
		else if (!strcmp(f[0], "dropown") && n == 1) {
			int sl;

			for (sl = 0; sl < CKPT_NSLOTS; sl++)
				ckpt_hdr_invalidate(ckpt_hdr(&area->f, sl, 0));
		} else if (!strcmp(f[0], "wipe") && n == 1) {
			rc = collx_ckpt_area_destroy(area, COLLX_CKPT_UNLINK);
			if (rc)
				die("wipe: %s: %s", ename(rc), collx_ckpt_last_error(area));
			open_area();
		} else if (!strcmp(f[0], "flip") && n == 3) {
			do_flip(strtoull(f[1], NULL, 10), strtoull(f[2], NULL, 0));
		} else if (!strcmp(f[0], "write") && n == 2) {
			do_write(f[1]);
		} else if (!strcmp(f[0], "barrier") && n == 1) {
			rc = collx_barrier(comm);
			if (rc)
				die("barrier: %s%s", collx_strerror(rc), "");
		} else {
			die("unknown step %s%s", argv[i], "");
		}
	}
	collx_ckpt_area_destroy(area, 0);
	if (mr)
		collx_mem_deregister(comm, mr);
	collx_comm_destroy(comm);
	printf("rank %d: done\n", rank);
	return 0;
}
