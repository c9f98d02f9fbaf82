// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * collx-ckptd: phase 2 of collx checkpoints.  Maps a rank's area
 * read-only and drains its newest complete checkpoint (with --replicas,
 * also the replicas whose owner has not archived them, e.g. because its
 * node died) to the archive directory; see Documentation/checkpoint.md.
 *
 *   collx-ckptd --area FILE --dir DIR [--incremental] [--replicas]
 *               [--grace-s S] [--keep N] [--once [--tag T]]
 *               [--interval-ms MS] [--no-direct] [--metrics-dir DIR]
 *   collx-ckptd --area FILE --latest
 *   collx-ckptd --area FILE --dir DIR --status
 *
 * Only globally committed checkpoints are archived (every rank
 * acknowledged them), and every daemon archives the same one: the area's
 * global commit record, (epoch, tag), into DIR/ckpt-<epoch>-<tag>/.  While
 * it drains a copy it pins it (a reader mark in the area's header that the
 * next save's victim choice honours).  Whichever daemon finds every rank's
 * manifest there writes the checkpoint's COMMITTED marker (link(): one
 * writer wins); restore from the archive takes only checkpoints with it.
 * --replicas: a holder archives a replica only when the owner's manifest
 * is still missing --grace-s (default 60) after the save.  --keep N: the
 * newest N complete archives stay, older ones go unless a kept one takes
 * chunks from them.  --status: each checkpoint in the area or the archive
 * and its state (in memory, archiving, archived, failed).  --latest prints what this one area can
 * restore: the area's last global commit record, and per entry (the own
 * shard, each replica held) the newest globally committed copy, as
 * "epoch E tag T"; exit 1 when the own shard has none.  It is this rank's
 * view only: the checkpoint every rank can restore is
 * collx_ckpt_latest()'s answer, which asks all ranks.
 *
 * --once: one pass, then exit (0: done or nothing new; 1: a failure or
 * the --tag asked for is not complete in the area).  Otherwise it polls
 * the area every --interval-ms (default 1000) until SIGTERM/SIGINT or
 * until the area's file is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_int.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct opts {
	const char *area, *metrics_dir;
	struct ckpt_archive_opts a;
	bool replicas, once, latest, status;
	uint64_t tag;
	long interval_ms;
	long grace_s;
	uint32_t keep;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: collx-ckptd --area FILE --dir DIR [--incremental] [--replicas]\n"
		"                   [--grace-s S] [--keep N] [--once [--tag T]]\n"
		"                   [--interval-ms MS] [--no-direct] [--metrics-dir DIR]\n"
		"       collx-ckptd --area FILE --latest\n"
		"       collx-ckptd --area FILE --dir DIR --status\n");
	exit(2);
}

static bool have(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank, const char *what)
{
	char path[4096];
	struct stat st;

	return !ckpt_archive_path(path, sizeof(path), dir, epoch, tag, rank, what) &&
	       stat(path, &st) == 0;
}

/* The failure of (epoch, tag, rank)'s drain, for --status: rank-R.failed. */
static void mark_failed(const char *dir, uint64_t epoch, uint64_t tag, uint32_t rank,
			const char *why)
{
	char path[4096], tmp[4096];
	int fd;

	if (ckpt_archive_path(path, sizeof(path), dir, epoch, tag, rank, "failed") ||
	    ckpt_tmp_name(tmp, sizeof(tmp), path))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (ckpt_write_all(fd, why, strlen(why)) || ckpt_write_all(fd, "\n", 1) ||
	    close(fd) < 0 || rename(tmp, path) < 0)
		unlink(tmp);
}

/* Write the COMMITTED marker when the set is complete; retention after. */
static void complete(const struct ckpt_file *f, const struct opts *o, uint64_t epoch,
		     uint64_t tag)
{
	char err[CKPT_ERRLEN];
	uint32_t removed;
	int rc;

	if (have(o->a.dir, epoch, tag, 0, "COMMITTED"))
		return;
	rc = ckpt_commit_archive(o->a.dir, epoch, tag, f->g.nranks, err, sizeof(err));
	if (rc == -EAGAIN || rc == -EEXIST)
		return;		/* a rank still missing, or another daemon wrote it */
	if (rc) {
		fprintf(stderr, "collx-ckptd: epoch %" PRIu64 " tag %" PRIu64 ": %s\n", epoch, tag,
			err);
		return;
	}
	printf("collx-ckptd: epoch %" PRIu64 " tag %" PRIu64 ": all %u ranks' manifests are there: wrote its COMMITTED marker\n",
	       epoch, tag, f->g.nranks);
	/* retention by the marker's one writer: one removal per checkpoint */
	if (o->keep) {
		if (ckpt_archive_gc(o->a.dir, o->keep, &removed, err, sizeof(err)))
			fprintf(stderr, "collx-ckptd: %s\n", err);
		else if (removed)
			printf("collx-ckptd: --keep %u: removed %u older archive(s)\n", o->keep,
			       removed);
	}
	fflush(stdout);
}

static int archive_one(const struct ckpt_file *f, struct ckpt_area_hdr *pin,
		       const struct opts *o, int slot, int entry)
{
	const struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, entry);
	uint64_t epoch = h->epoch, tag = h->tag, seq = h->seq;
	uint32_t src = ckpt_entry_src(&f->g, entry);
	struct ckpt_archive_res r;
	char err[CKPT_ERRLEN];
	int rc;

	/* the reader mark, then check the copy is still the one pinned */
	if (pin)
		ckpt_pin_set(pin, entry, seq);
	if (ckpt_hdr_valid(f, h) || h->seq != seq) {
		if (pin)
			ckpt_pin_set(pin, 0, 0);
		return -EAGAIN;
	}
	rc = ckpt_archive_entry(f, slot, entry, &o->a, &r, err, sizeof(err));
	if (pin)
		ckpt_pin_set(pin, 0, 0);
	if (rc == -EEXIST) {
		/* the owner (or a holder) archives it: not this daemon's job */
		printf("collx-ckptd: epoch %" PRIu64 " tag %" PRIu64 " rank %u: %s\n", epoch, tag,
		       src, err);
		fflush(stdout);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "collx-ckptd: %s\n", err);
		if (rc != -EAGAIN) {
			mark_failed(o->a.dir, epoch, tag, src, err);
			ckpt_metrics_archive_failed();
			ckpt_metrics_flush(o->metrics_dir, "ckptd", f->g.rank);
		}
		return rc;
	}
	printf("collx-ckptd: archived tag %" PRIu64 " rank %u%s: %u chunks, %u written (%" PRIu64
	       " bytes), %u reused; %s, %s; %.3f s; epoch %" PRIu64 "\n", r.tag, r.rank,
	       entry ? " (replica)" : "",
	       r.chunks, r.written_chunks, r.written_bytes, r.reused_chunks,
	       r.direct ? "O_DIRECT" : o->a.no_direct ? "buffered (--no-direct)" :
	       "buffered (the filesystem refused O_DIRECT)",
	       r.uring ? "io_uring" : "pwrite (io_uring unavailable)", r.seconds, epoch);
	fflush(stdout);
	/* one file per daemon, labelled with its area's rank: the replicas
	 * it archives count there too (the shard's rank is in its output) */
	ckpt_metrics_archive_saved(h->bytes - r.written_bytes);
	ckpt_metrics_observe(o->metrics_dir, "ckptd", f->g.rank, CKPT_PHASE_ARCHIVE, r.seconds,
			     r.written_bytes, r.tag, NULL);
	complete(f, o, epoch, tag);
	return 0;
}

/* The copy of @entry this pass archives: the area's global commit record
 * (every daemon the same), else with --tag the newest committed of it. */
static int target(const struct ckpt_file *f, const struct opts *o, int entry)
{
	const struct ckpt_area_hdr *a = ckpt_area_hdr(f);
	int slot;

	if (o->tag)
		return ckpt_find(f, entry, o->tag);
	if (__atomic_load_n(&a->commit_seq, __ATOMIC_ACQUIRE)) {
		slot = ckpt_find_id(f, entry, a->commit_epoch, a->commit_tag);
		if (slot >= 0)
			return slot;
	}
	return ckpt_find(f, entry, 0);
}

/* Per checkpoint known here (the area's committed copies, the archive's
 * folders): its state; counts into @count, lines to @out when not NULL. */
static void states(const struct ckpt_file *f, const char *dir, uint32_t count[CKPT_NSTATES],
		   FILE *out)
{
	static const char *const nm[CKPT_NSTATES] = { "in memory", "archiving", "archived",
						      "failed" };
	struct ckpt_id *ids = NULL, mem[CKPT_NSLOTS];
	size_t n = 0, i, nmem = 0, k;
	uint32_t r, nr;

	memset(count, 0, sizeof(uint32_t) * CKPT_NSTATES);
	for (i = 0; i < CKPT_NSLOTS; i++) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(f, i, 0);

		if (!ckpt_hdr_valid(f, h) && h->gstate == CKPT_GCOMMIT) {
			mem[nmem].epoch = h->epoch;
			mem[nmem++].tag = h->tag;
		}
	}
	ckpt_archive_list(dir, &ids, &n);
	for (k = 0; k < nmem; k++) {
		for (i = 0; i < n; i++)
			if (ids[i].epoch == mem[k].epoch && ids[i].tag == mem[k].tag)
				break;
		if (i < n)
			continue;	/* listed with the archive's */
		count[CKPT_ST_MEMORY]++;
		if (out)
			fprintf(out, "epoch %" PRIu64 " tag %" PRIu64 ": in memory\n", mem[k].epoch,
				mem[k].tag);
	}
	for (i = 0; i < n; i++) {
		uint32_t got = 0, failed = 0;
		int s;

		if (!ckpt_committed_read(dir, ids[i].epoch, ids[i].tag, &nr)) {
			s = CKPT_ST_ARCHIVED;
		} else {
			for (r = 0; r < f->g.nranks; r++) {
				got += have(dir, ids[i].epoch, ids[i].tag, r, "manifest");
				failed += !have(dir, ids[i].epoch, ids[i].tag, r, "manifest") &&
					  have(dir, ids[i].epoch, ids[i].tag, r, "failed");
			}
			s = failed ? CKPT_ST_FAILED : CKPT_ST_ARCHIVING;
			if (!failed && got == f->g.nranks) {
				/* every manifest, no marker: retention took the
				 * marker of an archive kept for newer ones' chunks
				 * (or the marker's writer is a moment away) */
				if (out)
					fprintf(out, "epoch %" PRIu64 " tag %" PRIu64
						": data only (newer archives take chunks from it; not restorable)\n",
						ids[i].epoch, ids[i].tag);
				continue;
			}
		}
		count[s]++;
		if (!out)
			continue;
		fprintf(out, "epoch %" PRIu64 " tag %" PRIu64 ": %s", ids[i].epoch, ids[i].tag, nm[s]);
		for (k = 0; k < nmem; k++)
			if (ids[i].epoch == mem[k].epoch && ids[i].tag == mem[k].tag)
				fprintf(out, ", in memory");
		if (s == CKPT_ST_ARCHIVING || s == CKPT_ST_FAILED)
			fprintf(out, " (%u of %u ranks' manifests%s)", got, f->g.nranks,
				failed ? ", a drain failed: see rank-R.failed" : "");
		fprintf(out, "\n");
	}
	free(ids);
}

/* One pass: 0, or -ENOENT when --tag is not complete, or the first error. */
static int pass(const struct ckpt_file *f, struct ckpt_area_hdr *pin, const struct opts *o)
{
	uint32_t e, cnt[CKPT_NSTATES];
	int rc = 0, slot, r;

	slot = target(f, o, 0);
	if (slot < 0 && o->tag) {
		fprintf(stderr, "collx-ckptd: %s has no complete checkpoint of tag %" PRIu64 "\n",
			f->path, o->tag);
		return -ENOENT;
	}
	if (slot >= 0) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(f, slot, 0);
		uint64_t ep = h->epoch, tg = h->tag;

		if (!have(o->a.dir, ep, tg, f->g.rank, "manifest"))
			rc = archive_one(f, pin, o, slot, 0);
		else
			complete(f, o, ep, tg);
	}
	for (e = 1; o->replicas && e <= f->g.k; e++) {
		const struct ckpt_shard_hdr *h;
		uint32_t src = ckpt_entry_src(&f->g, e);

		slot = target(f, o, e);
		if (slot < 0)
			continue;
		h = ckpt_hdr(f, slot, e);
		if (have(o->a.dir, h->epoch, h->tag, src, "manifest"))
			continue;
		/* the owner's daemon first: a replica only after the grace */
		if (ckpt_realtime_ns() - h->saved_ns < (uint64_t)o->grace_s * 1000000000ull)
			continue;
		r = archive_one(f, pin, o, slot, e);
		if (r && !rc)
			rc = r;
	}
	states(f, o->a.dir, cnt, NULL);
	ckpt_metrics_archive_states(cnt);
	ckpt_metrics_flush(o->metrics_dir, "ckptd", f->g.rank);
	return rc;
}

/* --latest: this area's view. */
static int latest(const struct ckpt_file *f)
{
	const struct ckpt_area_hdr *a = ckpt_area_hdr(f);
	uint64_t seq = __atomic_load_n(&a->commit_seq, __ATOMIC_ACQUIRE);
	int rc = 1;
	uint32_t e;

	printf("collx-ckptd: %s: rank %u of %u, k %u\n", f->path, f->g.rank, f->g.nranks, f->g.k);
	if (seq)
		printf("last global commit: epoch %" PRIu64 " tag %" PRIu64 " (seq %" PRIu64 ")\n",
		       a->commit_epoch, a->commit_tag, seq);
	else
		printf("last global commit: none\n");
	for (e = 0; e <= f->g.k; e++) {
		int s = ckpt_find(f, e, 0);
		const struct ckpt_shard_hdr *h = s >= 0 ? ckpt_hdr(f, s, e) : NULL;

		if (e)
			printf("replica of rank %u: ", ckpt_entry_src(&f->g, e));
		else
			printf("own shard (rank %u): ", f->g.rank);
		if (!h) {
			printf("none restorable\n");
			continue;
		}
		printf("epoch %" PRIu64 " tag %" PRIu64 ", %" PRIu64 " bytes\n", h->epoch, h->tag,
		       h->bytes);
		if (!e)
			rc = 0;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "area", required_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'd' },
		{ "incremental", no_argument, NULL, 'i' },
		{ "replicas", no_argument, NULL, 'r' },
		{ "once", no_argument, NULL, '1' },
		{ "tag", required_argument, NULL, 't' },
		{ "interval-ms", required_argument, NULL, 'n' },
		{ "no-direct", no_argument, NULL, 'D' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "latest", no_argument, NULL, 'L' },
		{ "status", no_argument, NULL, 'S' },
		{ "grace-s", required_argument, NULL, 'g' },
		{ "keep", required_argument, NULL, 'k' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .interval_ms = 1000, .grace_s = 60 };
	struct ckpt_area_hdr *pin = NULL;
	struct ckpt_file f;
	char err[CKPT_ERRLEN], *end;
	struct sigaction sa;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': o.area = optarg; break;
		case 'd': o.a.dir = optarg; break;
		case 'i': o.a.incremental = true; break;
		case 'r': o.replicas = true; break;
		case '1': o.once = true; break;
		case 't':
			o.tag = strtoull(optarg, &end, 10);
			if (*end || !o.tag)
				usage();
			break;
		case 'n':
			o.interval_ms = strtol(optarg, &end, 10);
			if (*end || o.interval_ms < 10 || o.interval_ms > 3600000)
				usage();
			break;
		case 'D': o.a.no_direct = true; break;
		case 'm': o.metrics_dir = optarg; break;
		case 'L': o.latest = true; break;
		case 'S': o.status = true; break;
		case 'g':
			o.grace_s = strtol(optarg, &end, 10);
			if (*end || o.grace_s < 0 || o.grace_s > 86400 * 30)
				usage();
			break;
		case 'k':
			o.keep = strtoul(optarg, &end, 10);
			if (*end || !o.keep || o.keep > 1000000)
				usage();
			break;
		case 'H':	/* tests: keep the drain (and its pin) this long */
			o.a.hold_ms = strtoul(optarg, &end, 10);
			if (*end || o.a.hold_ms > 600000)
				usage();
			break;
		default: usage();
		}
	}
	if (!o.area || optind != argc || (o.latest ? !!o.a.dir || o.once : !o.a.dir) ||
	    (o.tag && !o.once) || (o.status && (o.latest || o.once)))
		usage();
	rc = ckpt_file_open(&f, o.area, false, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "collx-ckptd: %s\n", err);
		return 1;
	}
	if (o.latest) {
		rc = latest(&f);
		ckpt_file_close(&f);
		return rc;
	}
	if (o.status) {
		uint32_t cnt[CKPT_NSTATES];

		printf("collx-ckptd: %s (rank %u of %u), archive %s:\n", f.path, f.g.rank,
		       f.g.nranks, o.a.dir);
		states(&f, o.a.dir, cnt, stdout);
		printf("in memory %u, archiving %u, archived %u, failed %u\n", cnt[CKPT_ST_MEMORY],
		       cnt[CKPT_ST_ARCHIVING], cnt[CKPT_ST_ARCHIVED], cnt[CKPT_ST_FAILED]);
		ckpt_file_close(&f);
		return 0;
	}
	/* the pin: a writable view of the header page (the daemon's own) */
	pin = ckpt_pin_map(o.area, err, sizeof(err));
	if (!pin)
		fprintf(stderr, "collx-ckptd: no pin (saves may abort a drain): %s\n", err);
	if (o.once) {
		rc = pass(&f, pin, &o);
		ckpt_pin_unmap(pin);
		ckpt_file_close(&f);
		return rc ? 1 : 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		struct timespec ts = { o.interval_ms / 1000, (o.interval_ms % 1000) * 1000000L };
		struct stat st;

		/* a slot reused mid-drain (-EAGAIN) is retried next round */
		pass(&f, pin, &o);
		if (fstat(f.fd, &st) == 0 && st.st_nlink == 0) {
			fprintf(stderr, "collx-ckptd: %s was removed; exiting\n", o.area);
			break;
		}
		nanosleep(&ts, NULL);
	}
	ckpt_pin_unmap(pin);
	ckpt_file_close(&f);
	return 0;
}
