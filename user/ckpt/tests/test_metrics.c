// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The textfile: Prometheus' text format, cumulative buckets, atomic. */
#include <dirent.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"
#include "tap.h"

static double value_of(const char *text, const char *series)
{
	const char *p = strstr(text, series);

	return p && p[strlen(series)] == ' ' ? atof(p + strlen(series) + 1) : -1;
}

int main(void)
{
	char tmp[] = "/tmp/ckpt-metrics-XXXXXX", path[4096], *text, *line, *save = NULL;
	regex_t sample, comment;
	int bad = 0, n = 0, files = 0;
	struct dirent *d;
	DIR *dp;
	FILE *f;

	ok(mkdtemp(tmp) != NULL, "temp dir");
	ckpt_metrics_reset();
	ok(ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_DUMP, 0.2, 1000, 1, NULL) == 0, "dump 1");
	ok(ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_DUMP, 3.0, 1000, 2, NULL) == 0, "dump 2");
	ok(ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_RESTORE, 0.04, 500, 2, "peer") == 0,
	   "restore");
	/* the per-rank checkpoint gauges (item 6) */
	ok(ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_PAUSE, 0.01, 1000, 2, NULL) == 0 &&
	   ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_REPLICATE, 0.5, 1000, 2, NULL) == 0 &&
	   ckpt_metrics_observe(tmp, "rank", 3, CKPT_PHASE_ARCHIVE, 1.5, 300, 2, NULL) == 0,
	   "pause, replication, archive");
	ckpt_metrics_commit(4, 2);
	{
		uint32_t cnt[CKPT_NSTATES] = { 1, 2, 3, 0 };

		ckpt_metrics_archive_states(cnt);
	}
	ckpt_metrics_archive_saved(700);
	ckpt_metrics_archive_saved(100);
	ckpt_metrics_archive_failed();
	ok(ckpt_metrics_flush(tmp, "rank", 3) == 0, "flushed");
	text = ckpt_metrics_text(3);
	ok(text != NULL, "text made");
	ok(value_of(text, "collx_ckpt_last_phase_seconds{phase=\"pause\",rank=\"3\"}") == 0.01 &&
	   value_of(text, "collx_ckpt_last_phase_seconds{phase=\"replicate\",rank=\"3\"}") == 0.5 &&
	   value_of(text, "collx_ckpt_last_phase_seconds{phase=\"archive\",rank=\"3\"}") == 1.5,
	   "last pause, replication and archive seconds");
	ok(value_of(text, "collx_ckpt_committed_step{rank=\"3\"}") == 2 &&
	   value_of(text, "collx_ckpt_committed_epoch{rank=\"3\"}") == 4, "committed step and epoch");
	ok(value_of(text, "collx_ckpt_archive_checkpoints{rank=\"3\",state=\"in_memory\"}") == 1 &&
	   value_of(text, "collx_ckpt_archive_checkpoints{rank=\"3\",state=\"archiving\"}") == 2 &&
	   value_of(text, "collx_ckpt_archive_checkpoints{rank=\"3\",state=\"archived\"}") == 3 &&
	   value_of(text, "collx_ckpt_archive_checkpoints{rank=\"3\",state=\"failed\"}") == 0,
	   "archive state counts");
	ok(value_of(text, "collx_ckpt_archive_saved_bytes_total{rank=\"3\"}") == 800 &&
	   value_of(text, "collx_ckpt_last_archive_saved_bytes{rank=\"3\"}") == 100 &&
	   value_of(text, "collx_ckpt_archive_failures_total{rank=\"3\"}") == 1,
	   "incremental bytes saved, failures");
	/* promtool, where installed (Debian's prometheus package) */
	snprintf(path, sizeof(path),
		 "command -v promtool >/dev/null || exit 0; promtool check metrics < %s/collx_ckpt_rank_r3.prom",
		 tmp);
	ok(system(path) == 0, "promtool check metrics accepts the file");
	ok(value_of(text, "collx_ckpt_phase_seconds_count{phase=\"dump\",rank=\"3\"}") == 2,
	   "two dumps counted");
	ok(value_of(text, "collx_ckpt_phase_seconds_bucket{phase=\"dump\",rank=\"3\",le=\"0.25\"}") == 1 &&
	   value_of(text, "collx_ckpt_phase_seconds_bucket{phase=\"dump\",rank=\"3\",le=\"5\"}") == 2 &&
	   value_of(text, "collx_ckpt_phase_seconds_bucket{phase=\"dump\",rank=\"3\",le=\"+Inf\"}") == 2,
	   "buckets are cumulative");
	ok(value_of(text, "collx_ckpt_phase_seconds_sum{phase=\"dump\",rank=\"3\"}") == 3.2, "sum");
	ok(value_of(text, "collx_ckpt_last_phase_seconds{phase=\"dump\",rank=\"3\"}") == 3.0 &&
	   value_of(text, "collx_ckpt_last_tag{phase=\"dump\",rank=\"3\"}") == 2, "the last dump's gauges");
	ok(value_of(text, "collx_ckpt_bytes_total{phase=\"dump\",rank=\"3\"}") == 2000, "bytes counter");
	ok(value_of(text, "collx_ckpt_last_restore_source{rank=\"3\",source=\"peer\"}") == 1,
	   "restore source");
	/* every line is a comment (HELP/TYPE) or "name{labels} value" */
	regcomp(&sample, "^[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"[^\"]*\",?)*\\})? [-+0-9.eE]+$",
		REG_EXTENDED | REG_NOSUB);
	regcomp(&comment, "^# (HELP|TYPE) collx_ckpt_[a-z_]+ ", REG_EXTENDED | REG_NOSUB);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++)
		if (regexec(&sample, line, 0, NULL, 0) && regexec(&comment, line, 0, NULL, 0)) {
			diag("bad line: %s", line);
			bad++;
		}
	ok(!bad && n > 20, "%d lines in the text format (%d bad)", n, bad);
	free(text);
	snprintf(path, sizeof(path), "%s/collx_ckpt_rank_r3.prom", tmp);
	f = fopen(path, "r");
	ok(f != NULL, "file %s", path);
	if (f)
		fclose(f);
	dp = opendir(tmp);
	while (dp && (d = readdir(dp)))
		if (d->d_name[0] != '.')
			files++;
	if (dp)
		closedir(dp);
	ok(files == 1, "only the .prom file is left (%d files)", files);
	ok(ckpt_metrics_observe(tmp, "rank", 3, CKPT_NPHASES, 1, 1, 1, NULL) == -EINVAL, "bad phase");
	ok(ckpt_metrics_observe("/nonexistent/dir", "rank", 3, CKPT_PHASE_DUMP, 1, 1, 1, NULL) == -ENOENT,
	   "a missing directory is reported");
	regfree(&sample);
	regfree(&comment);
	ckpt_metrics_reset();
	ckpt_metrics_observe(NULL, "rank", 3, CKPT_PHASE_DUMP, 0.2, 1000, 1, NULL);
	text = ckpt_metrics_text(3);
	ok(text && !strstr(text, "phase=\"archive\"") && !strstr(text, "committed_step"),
	   "no series for a phase or gauge this process never ran");
	free(text);
	snprintf(path, sizeof(path), "rm -rf %s", tmp);
	ok(system(path) == 0, "cleaned up");
	return done();
}
