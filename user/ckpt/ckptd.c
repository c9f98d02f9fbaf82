// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * collx-ckptd: phase 2 of collx checkpoints.  Maps a rank's area
 * read-only and drains its newest complete checkpoint (with --replicas,
 * also the replicas whose owner has not archived them, e.g. because its
 * node died) to the archive directory; see Documentation/checkpoint.md.
 *
 *   collx-ckptd --area FILE --dir DIR [--incremental] [--replicas]
 *               [--once [--tag T]] [--interval-ms MS] [--no-direct]
 *               [--metrics-dir DIR]
 *   collx-ckptd --area FILE --latest
 *
 * Only globally committed checkpoints are archived (every rank
 * acknowledged them: ckpt_find).  --latest prints what this one area can
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
	bool replicas, once, latest;
	uint64_t tag;
	long interval_ms;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: collx-ckptd --area FILE --dir DIR [--incremental] [--replicas]\n"
		"                   [--once [--tag T]] [--interval-ms MS] [--no-direct]\n"
		"                   [--metrics-dir DIR]\n"
		"       collx-ckptd --area FILE --latest\n");
	exit(2);
}

static int archive_one(const struct ckpt_file *f, const struct opts *o, int slot, int entry)
{
	struct ckpt_archive_res r;
	char err[CKPT_ERRLEN];
	int rc = ckpt_archive_entry(f, slot, entry, &o->a, &r, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "collx-ckptd: %s\n", err);
		return rc;
	}
	printf("collx-ckptd: archived tag %" PRIu64 " rank %u%s: %u chunks, %u written (%" PRIu64
	       " bytes), %u reused; %s, %s; %.3f s\n", r.tag, r.rank, entry ? " (replica)" : "",
	       r.chunks, r.written_chunks, r.written_bytes, r.reused_chunks,
	       r.direct ? "O_DIRECT" : o->a.no_direct ? "buffered (--no-direct)" :
	       "buffered (the filesystem refused O_DIRECT)",
	       r.uring ? "io_uring" : "pwrite (io_uring unavailable)", r.seconds);
	fflush(stdout);
	/* one file per daemon, labelled with its area's rank: the replicas
	 * it archives count there too (the shard's rank is in its output) */
	ckpt_metrics_observe(o->metrics_dir, "ckptd", f->g.rank, CKPT_PHASE_ARCHIVE, r.seconds,
			     r.written_bytes, r.tag, NULL);
	return 0;
}

static bool archived(const struct opts *o, uint64_t tag, uint32_t rank)
{
	char path[4096];
	struct stat st;

	return !ckpt_archive_path(path, sizeof(path), o->a.dir, tag, rank, "manifest") &&
	       stat(path, &st) == 0;
}

/* One pass: 0, or -ENOENT when --tag is not complete, or the first error. */
static int pass(const struct ckpt_file *f, const struct opts *o)
{
	uint32_t e;
	int rc = 0, slot, r;

	slot = ckpt_find(f, 0, o->tag);
	if (slot < 0 && o->tag) {
		fprintf(stderr, "collx-ckptd: %s has no complete checkpoint of tag %" PRIu64 "\n",
			f->path, o->tag);
		return -ENOENT;
	}
	if (slot >= 0 && !archived(o, ckpt_hdr(f, slot, 0)->tag, f->g.rank))
		rc = archive_one(f, o, slot, 0);
	for (e = 1; o->replicas && e <= f->g.k; e++) {
		slot = ckpt_find(f, e, o->tag);
		if (slot < 0 || archived(o, ckpt_hdr(f, slot, e)->tag, ckpt_entry_src(&f->g, e)))
			continue;
		r = archive_one(f, o, slot, e);
		if (r && !rc)
			rc = r;
	}
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
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .interval_ms = 1000 };
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
		default: usage();
		}
	}
	if (!o.area || optind != argc || (o.latest ? !!o.a.dir || o.once : !o.a.dir) ||
	    (o.tag && !o.once))
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
	if (o.once) {
		rc = pass(&f, &o);
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
		pass(&f, &o);
		if (fstat(f.fd, &st) == 0 && st.st_nlink == 0) {
			fprintf(stderr, "collx-ckptd: %s was removed; exiting\n", o.area);
			break;
		}
		nanosleep(&ts, NULL);
	}
	ckpt_file_close(&f);
	return 0;
}
