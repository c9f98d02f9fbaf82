// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Checkpoint metrics for Prometheus, as a node_exporter textfile-collector
 * file (Documentation/checkpoint.md): the process that ran a phase keeps
 * its histogram and replaces <dir>/collx_ckpt_<role>_r<rank>.prom
 * atomically (temp file + rename: the collector never reads half a file;
 * it ignores names not ending in .prom).  A histogram of each phase's
 * durations (quantiles and rates over many checkpoints), plus gauges of
 * the last one for the per-checkpoint panel: a textfile may carry no
 * timestamps, so the last one's end time is a gauge too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_int.h"

static const double bounds[] = {
	0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
};
#define NB (sizeof(bounds) / sizeof(bounds[0]))

static const char *const phase_names[CKPT_NPHASES] = { "dump", "archive", "restore", "pause",
							 "replicate" };
static const char *const state_names[CKPT_NSTATES] = { "in_memory", "archiving", "archived",
						       "failed" };

struct phase_stat {
	uint64_t count;
	uint64_t bucket[NB];
	double sum;
	uint64_t bytes_total;
	double last_seconds;
	uint64_t last_bytes;
	uint64_t last_tag;
	double last_end;	/* unix seconds */
	char last_source[16];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct phase_stat st[CKPT_NPHASES];
/* beside the phases: the last global commit (the library), the archive's
 * per-checkpoint states and incremental savings (collx-ckptd) */
static struct {
	bool committed, states, saved;
	uint64_t commit_epoch, commit_tag;
	uint32_t state[CKPT_NSTATES];
	uint64_t saved_total, saved_last, failures;
} ex;

void ckpt_metrics_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(st, 0, sizeof(st));
	memset(&ex, 0, sizeof(ex));
	pthread_mutex_unlock(&lock);
}

void ckpt_metrics_commit(uint64_t epoch, uint64_t tag)
{
	pthread_mutex_lock(&lock);
	ex.committed = true;
	ex.commit_epoch = epoch;
	ex.commit_tag = tag;
	pthread_mutex_unlock(&lock);
}

void ckpt_metrics_archive_states(const uint32_t count[CKPT_NSTATES])
{
	pthread_mutex_lock(&lock);
	ex.states = true;
	memcpy(ex.state, count, sizeof(ex.state));
	pthread_mutex_unlock(&lock);
}

void ckpt_metrics_archive_saved(uint64_t bytes)
{
	pthread_mutex_lock(&lock);
	ex.saved = true;
	ex.saved_total += bytes;
	ex.saved_last = bytes;
	pthread_mutex_unlock(&lock);
}

void ckpt_metrics_archive_failed(void)
{
	pthread_mutex_lock(&lock);
	ex.saved = true;
	ex.failures++;
	pthread_mutex_unlock(&lock);
}

/* With the lock held. */
static char *text_locked(uint32_t rank)
{
	size_t cap = 16384, n = 0;
	char *s = malloc(cap);
	int p;
	unsigned int b;

	if (!s)
		return NULL;
#define PUT(...) (n += (size_t)snprintf(s + n, n < cap ? cap - n : 0, __VA_ARGS__))
#define EACH for (p = 0; p < CKPT_NPHASES; p++) if (st[p].count)
#define LBL "phase=\"%s\",rank=\"%u\""
	PUT("# HELP collx_ckpt_phase_seconds Duration of checkpoint phases: pause (the snapshot a save stops training for), dump (phase 1, call to global commit), archive (phase 2, to the archive directory), restore.\n");
	PUT("# TYPE collx_ckpt_phase_seconds histogram\n");
	EACH {
		for (b = 0; b < NB; b++)
			PUT("collx_ckpt_phase_seconds_bucket{" LBL ",le=\"%g\"} %" PRIu64 "\n",
			    phase_names[p], rank, bounds[b], st[p].bucket[b]);
		PUT("collx_ckpt_phase_seconds_bucket{" LBL ",le=\"+Inf\"} %" PRIu64 "\n",
		    phase_names[p], rank, st[p].count);
		PUT("collx_ckpt_phase_seconds_sum{" LBL "} %.6f\n", phase_names[p], rank, st[p].sum);
		PUT("collx_ckpt_phase_seconds_count{" LBL "} %" PRIu64 "\n", phase_names[p], rank,
		    st[p].count);
	}
	PUT("# HELP collx_ckpt_bytes_total Bytes moved by checkpoint phases.\n");
	PUT("# TYPE collx_ckpt_bytes_total counter\n");
	EACH PUT("collx_ckpt_bytes_total{" LBL "} %" PRIu64 "\n", phase_names[p], rank,
		 st[p].bytes_total);
	PUT("# HELP collx_ckpt_last_phase_seconds Duration of the last checkpoint's phase.\n");
	PUT("# TYPE collx_ckpt_last_phase_seconds gauge\n");
	EACH PUT("collx_ckpt_last_phase_seconds{" LBL "} %.6f\n", phase_names[p], rank,
		 st[p].last_seconds);
	PUT("# HELP collx_ckpt_last_bytes Bytes of the last checkpoint's phase.\n");
	PUT("# TYPE collx_ckpt_last_bytes gauge\n");
	EACH PUT("collx_ckpt_last_bytes{" LBL "} %" PRIu64 "\n", phase_names[p], rank,
		 st[p].last_bytes);
	PUT("# HELP collx_ckpt_last_tag Tag (training step) of the last checkpoint's phase.\n");
	PUT("# TYPE collx_ckpt_last_tag gauge\n");
	EACH PUT("collx_ckpt_last_tag{" LBL "} %" PRIu64 "\n", phase_names[p], rank,
		 st[p].last_tag);
	PUT("# HELP collx_ckpt_last_end_timestamp_seconds When the last checkpoint's phase ended (unix time).\n");
	PUT("# TYPE collx_ckpt_last_end_timestamp_seconds gauge\n");
	EACH PUT("collx_ckpt_last_end_timestamp_seconds{" LBL "} %.3f\n", phase_names[p], rank,
		 st[p].last_end);
	if (st[CKPT_PHASE_RESTORE].count) {
		PUT("# HELP collx_ckpt_last_restore_source Where the last restore came from (1 for the source that served it).\n");
		PUT("# TYPE collx_ckpt_last_restore_source gauge\n");
		PUT("collx_ckpt_last_restore_source{rank=\"%u\",source=\"%s\"} 1\n", rank,
		    st[CKPT_PHASE_RESTORE].last_source);
	}
	if (ex.committed) {
		PUT("# HELP collx_ckpt_committed_step Tag (training step) of the last globally committed checkpoint.\n");
		PUT("# TYPE collx_ckpt_committed_step gauge\n");
		PUT("collx_ckpt_committed_step{rank=\"%u\"} %" PRIu64 "\n", rank, ex.commit_tag);
		PUT("# HELP collx_ckpt_committed_epoch Run epoch (timeline) of the last globally committed checkpoint.\n");
		PUT("# TYPE collx_ckpt_committed_epoch gauge\n");
		PUT("collx_ckpt_committed_epoch{rank=\"%u\"} %" PRIu64 "\n", rank, ex.commit_epoch);
	}
	if (ex.states) {
		PUT("# HELP collx_ckpt_archive_checkpoints Checkpoints by archive state, as this rank's collx-ckptd sees them (in_memory: in the area only; archiving: not every rank's manifest yet; archived: the COMMITTED marker is there; failed).\n");
		PUT("# TYPE collx_ckpt_archive_checkpoints gauge\n");
		for (p = 0; p < CKPT_NSTATES; p++)
			PUT("collx_ckpt_archive_checkpoints{rank=\"%u\",state=\"%s\"} %u\n", rank,
			    state_names[p], ex.state[p]);
	}
	if (ex.saved) {
		PUT("# HELP collx_ckpt_archive_saved_bytes_total Bytes an incremental archive did not write (chunks reused from an older archive).\n");
		PUT("# TYPE collx_ckpt_archive_saved_bytes_total counter\n");
		PUT("collx_ckpt_archive_saved_bytes_total{rank=\"%u\"} %" PRIu64 "\n", rank,
		    ex.saved_total);
		PUT("# HELP collx_ckpt_last_archive_saved_bytes Bytes the last archive reused instead of writing.\n");
		PUT("# TYPE collx_ckpt_last_archive_saved_bytes gauge\n");
		PUT("collx_ckpt_last_archive_saved_bytes{rank=\"%u\"} %" PRIu64 "\n", rank,
		    ex.saved_last);
		PUT("# HELP collx_ckpt_archive_failures_total Archive drains that failed (not counting a shard another daemon archived).\n");
		PUT("# TYPE collx_ckpt_archive_failures_total counter\n");
		PUT("collx_ckpt_archive_failures_total{rank=\"%u\"} %" PRIu64 "\n", rank,
		    ex.failures);
	}
#undef LBL
#undef EACH
#undef PUT
	if (n >= cap) {
		free(s);
		return NULL;
	}
	return s;
}

char *ckpt_metrics_text(uint32_t rank)
{
	char *s;

	pthread_mutex_lock(&lock);
	s = text_locked(rank);
	pthread_mutex_unlock(&lock);
	return s;
}

int ckpt_metrics_observe(const char *dir, const char *role, uint32_t rank,
			 enum ckpt_phase phase, double seconds, uint64_t bytes,
			 uint64_t tag, const char *source)
{
	struct phase_stat *p;
	unsigned int b;

	if ((unsigned int)phase >= CKPT_NPHASES)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	p = &st[phase];
	p->count++;
	for (b = 0; b < NB; b++)
		if (seconds <= bounds[b])
			p->bucket[b]++;
	p->sum += seconds;
	p->bytes_total += bytes;
	p->last_seconds = seconds;
	p->last_bytes = bytes;
	p->last_tag = tag;
	p->last_end = ckpt_realtime_ns() / 1e9;
	snprintf(p->last_source, sizeof(p->last_source), "%s", source ? source : "");
	pthread_mutex_unlock(&lock);
	return ckpt_metrics_flush(dir, role, rank);
}

int ckpt_metrics_flush(const char *dir, const char *role, uint32_t rank)
{
	char path[4096], tmp[4096];
	char *text;
	int fd, rc;

	if (!dir)
		dir = getenv("COLLX_CKPT_METRICS_DIR");
	if (!dir || !*dir)
		return 0;
	text = ckpt_metrics_text(rank);
	if (!text)
		return -ENOMEM;
	if (snprintf(path, sizeof(path), "%s/collx_ckpt_%s_r%u.prom", dir, role, rank) >= 2048 ||
	    snprintf(tmp, sizeof(tmp), "%.2048s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		free(text);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	rc = ckpt_write_all(fd, text, strlen(text));
	free(text);
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
