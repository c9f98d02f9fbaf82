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
	text = ckpt_metrics_text(3);
	ok(text != NULL, "text made");
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
	ok(!strstr(text, "phase=\"archive\""), "no series for a phase this process never ran");
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
	snprintf(path, sizeof(path), "rm -rf %s", tmp);
	ok(system(path) == 0, "cleaned up");
	return done();
}
