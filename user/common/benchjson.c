// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* collx-bench's JSON; see benchjson.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collx.h"
#include "benchjson.h"

/* nccl-tests' JSON_FILE_VERSION and time format */
#define JSON_VERSION	3
#define TIME_FORMAT	"%Y-%m-%d %H:%M:%S"

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static void add_int(json_object *o, const char *k, long long v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_double(json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static void add_now(json_object *o, const char *k)
{
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), TIME_FORMAT, &tm);
	add_str(o, k, buf);
}

bool bench_json_env_kept(const char *e)
{
	static const char *const prefixes[] = {
		"COLLX_", "NCCL_", "SLURM_", "OMPI_COMM_WORLD_", "PMI_",
	};
	static const char *const names[] = {
		"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
		"MASTER_PORT",
	};
	size_t i, n = strcspn(e, "=");

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(e, prefixes[i], strlen(prefixes[i])))
			return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !strncmp(e, names[i], n))
			return true;
	return false;
}

json_object *bench_json_new(int argc, char **argv, char **envp)
{
	json_object *doc = json_object_new_object(), *a, *e;
	char host[256];
	int i;

	add_int(doc, "version", JSON_VERSION);
	add_now(doc, "start_time");
	a = json_object_new_array();
	for (i = 0; i < argc; i++)
		json_object_array_add(a, json_object_new_string(argv[i]));
	json_object_object_add(doc, "args", a);
	e = json_object_new_array();
	for (i = 0; envp && envp[i]; i++)
		if (bench_json_env_kept(envp[i]))
			json_object_array_add(e, json_object_new_string(envp[i]));
	json_object_object_add(doc, "env", e);
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = 0;
	add_str(doc, "host", host);
	add_int(doc, "collx_version", COLLX_LIB_MAJOR * 10000 + COLLX_LIB_MINOR * 100);
	return doc;
}

void bench_json_config(json_object *doc, const struct bench_json_config *c,
		       json_object *devices)
{
	json_object *o = json_object_new_object();
	char abi[16];

	if (c->module_version) {
		add_str(doc, "module_version", c->module_version);
		snprintf(abi, sizeof(abi), "%u.%u", c->abi_major, c->abi_minor);
		add_str(doc, "abi", abi);
	}
	add_str(o, "program", c->program);
	add_str(o, "collective", c->collective);
	add_int(o, "nthreads", 1);
	add_int(o, "ngpus", 1);
	add_int(o, "nranks", c->nranks);
	add_int(o, "minimum_bytes", (long long)c->minbytes);
	add_int(o, "maximum_bytes", (long long)c->maxbytes);
	if (c->stepfactor > 1)
		add_int(o, "step_factor", (long long)c->stepfactor);
	else
		add_int(o, "step_bytes", (long long)c->stepbytes);
	add_int(o, "warmup_iters", c->warmup);
	add_int(o, "iterations", c->iters);
	add_int(o, "aggregated_iterations", c->agg);
	add_int(o, "validation", c->check);
	add_int(o, "graph", 0);
	add_bool(o, "blocking_collectives", c->blocking);
	add_bool(o, "parallel_init", false);
	add_int(o, "average", c->average);
	add_str(o, "algorithm", c->algorithm);
	add_bool(o, "local_register", c->registered);
	add_str(o, "memory", c->memory);
	json_object_object_add(o, "devices", devices ? devices : json_object_new_array());
	json_object_object_add(doc, "config", o);
	json_object_object_add(doc, "results", json_object_new_array());
}

json_object *bench_json_device(int rank, int pid, const char *host, const char *device)
{
	json_object *d = json_object_new_object();

	add_int(d, "rank", rank);
	add_int(d, "group", 0);
	add_int(d, "pid", pid);
	add_str(d, "hostname", host);
	add_str(d, "device_info", device);
	return d;
}

json_object *bench_json_row(json_object *doc, size_t bytes, size_t count,
			    const char *type, const char *redop, int root)
{
	json_object *row = json_object_new_object(), *results;
	char r[16];

	add_int(row, "size", (long long)bytes);
	add_int(row, "count", (long long)count);
	add_str(row, "type", type);
	add_str(row, "redop", redop);
	/* nccl-tests writes the root as its table does, a string */
	snprintf(r, sizeof(r), "%6d", root);
	add_str(row, "root", r);
	if (json_object_object_get_ex(doc, "results", &results))
		json_object_array_add(results, row);
	return row;
}

void bench_json_half(json_object *row, bool in_place, bool cputime, double time_us,
		     double algbw, double busbw, long long wrong, bool cpu,
		     double caller_pct, double node_pct)
{
	json_object *h = json_object_new_object();

	add_double(h, cputime ? "cpu_time" : "time", time_us);
	add_double(h, "alg_bw", algbw);
	add_double(h, "bus_bw", busbw);
	json_object_object_add(h, "nwrong", wrong < 0 ? NULL : json_object_new_double((double)wrong));
	if (cpu) {
		add_double(h, "caller_cpu_pct", caller_pct);
		add_double(h, "node_busy_pct", node_pct);
	}
	json_object_object_add(row, in_place ? "in_place" : "out_of_place", h);
}

void bench_json_null_half(json_object *row, bool in_place)
{
	json_object_object_add(row, in_place ? "in_place" : "out_of_place", NULL);
}

void bench_json_row_end(json_object *row, int iters)
{
	add_int(row, "actual_iterations", iters);
	add_str(row, "experiment_name", "");
}

void bench_json_finish(json_object *doc, long long errors, double avg_busbw,
		       double min_bw, const char *error)
{
	json_object *o = json_object_new_object(), *b = json_object_new_object(), *e;

	add_int(o, "count", errors);
	add_bool(o, "okay", errors == 0);
	json_object_object_add(doc, "out_of_bounds", o);
	add_double(b, "bandwidth", avg_busbw);
	if (min_bw < 0)
		add_str(b, "okay", "unchecked");
	else
		add_bool(b, "okay", avg_busbw >= min_bw * 0.9);
	json_object_object_add(doc, "average_bus_bandwidth", b);
	e = json_object_new_array();
	if (error && *error)
		json_object_array_add(e, json_object_new_string(error));
	json_object_object_add(doc, "errors", e);
	add_now(doc, "end_time");
}

int bench_json_write(json_object *doc, const char *path, char *used, size_t len)
{
	const char *text;
	int fd = -1, i, err = 0;
	size_t n;

	snprintf(used, len, "%s", path);
	for (i = -1; i < 1000; i++) {
		if (i >= 0)
			snprintf(used, len, "%s.%d", path, i);
		fd = open(used, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return -errno;
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
						   JSON_C_TO_STRING_SPACED |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}
