/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * collx-bench -J: the document nccl-tests writes (its JSON version 3:
 * args, env, config with devices, results with out_of_place/in_place,
 * out_of_bounds, average_bus_bandwidth, errors, start and end time), plus
 * collx's own: host, library and module versions, collective, algorithm,
 * memory and the CPU columns.  Built with json-c.
 */
#ifndef COLLX_BENCHJSON_H
#define COLLX_BENCHJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

struct bench_json_config {
	const char *program;		/* "all_reduce_perf" */
	const char *collective;		/* "allreduce" */
	const char *algorithm;		/* "auto", "ring", ... */
	const char *memory;		/* "host" or "udmabuf" */
	int nranks;
	size_t minbytes, maxbytes, stepbytes, stepfactor;
	int warmup, iters, agg, check, blocking, registered, average;
	const char *module_version;	/* NULL: no module */
	unsigned int abi_major, abi_minor;
};

/* Environment entries worth keeping: collx's, NCCL's and the launchers'
 * (never the whole environment: it may hold credentials). */
bool bench_json_env_kept(const char *entry);

json_object *bench_json_new(int argc, char **argv, char **envp);
void bench_json_config(json_object *doc, const struct bench_json_config *c,
		       json_object *devices);
/* One entry of config.devices. */
json_object *bench_json_device(int rank, int pid, const char *host, const char *device);
/* Append a result row; the halves and the end fill it. */
json_object *bench_json_row(json_object *doc, size_t bytes, size_t count,
			    const char *type, const char *redop, int root);
/* @wrong < 0: not checked (null).  @cpu: add the CPU figures. */
void bench_json_half(json_object *row, bool in_place, bool cputime, double time_us,
		     double algbw, double busbw, long long wrong, bool cpu,
		     double caller_pct, double node_pct);
void bench_json_null_half(json_object *row, bool in_place);
void bench_json_row_end(json_object *row, int iters);
/* @min_bw < 0: unchecked.  @error: a failure's text or NULL. */
void bench_json_finish(json_object *doc, long long errors, double avg_busbw,
		       double min_bw, const char *error);
/*
 * Write @doc as nccl-tests does: never over an existing file (PATH, else
 * PATH.0, PATH.1 ...).  The name used in @used.  0 or a negative errno.
 */
int bench_json_write(json_object *doc, const char *path, char *used, size_t len);

#endif
