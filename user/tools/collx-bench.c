// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * collx-bench: nccl-tests over collx.  One binary for every collective:
 * installed as all_reduce_perf, all_gather_perf, broadcast_perf,
 * reduce_perf, reduce_scatter_perf, alltoall_perf and sendrecv_perf it
 * runs that one (argv[0]), as collx-bench the one -t names.  Flags,
 * defaults, table, bus bandwidth, JSON and exit status are nccl-tests'
 * (2.19); Documentation/collx-bench.md lists what collx adds.
 *
 * Every rank runs it (rank and rendezvous from the environment, see
 * libcollx); rank 0 prints.  Exits 1 when any element of any rank came
 * out wrong, a collective failed or the bus bandwidth is below
 * NCCL_TESTS_MIN_BW; 2 on bad usage; 77 when -G 1 cannot run here.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "collx.h"
#include "benchcoll.h"
#include "benchdata.h"
#include "benchfmt.h"
#include "benchjson.h"
#include "cpustat.h"
#include "udmabuf.h"

#define MAX_COUNTS 64
#define DEV_SLOT 160

extern char **environ;

static struct {
	const struct bench_coll *coll;
	const char *program;
	size_t minbytes, maxbytes, stepbytes, stepfactor;
	int iters, agg, warmup, check, blocking, average, cputime, reg, dmabuf, timeout_s;
	int dtype, redop, root;		/* -1: all */
	enum collx_algo algo;
	bool cpu;
	const char *json;
	size_t counts[MAX_COUNTS];
	int ncounts;
} opt = {
	.minbytes = 32 << 20, .maxbytes = 32 << 20, .stepbytes = 1 << 20, .stepfactor = 1,
	.iters = 20, .agg = 1, .warmup = 1, .check = 1, .average = 1,
	.dtype = COLLX_FP32, .redop = COLLX_OP_SUM, .root = 0,
};

static struct collx_comm *comm;
static int rank, nranks;
static bool abi11;
static struct collx_version modver;
static bool have_module;
static void *sendbuf, *recvbuf;
static size_t bufbytes;
static json_object *doc;
static long long errors;
static double bw_sum;
static int bw_count, rep;

/* -T: the watchdog aborts a communicator that made no progress. */
static int64_t last_progress_ms;
static volatile int aborted, stop_watchdog;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"nccl-tests over collx: run one process per rank (rank and rendezvous from\n"
		"COLLX_RANK/COLLX_NRANKS/COLLX_MASTER_ADDR, torchrun, mpirun or srun).\n"
		"Installed as all_reduce_perf, all_gather_perf, broadcast_perf, reduce_perf,\n"
		"reduce_scatter_perf, alltoall_perf, sendrecv_perf: the name picks the test.\n\n"
		"  -t, --nthreads N|COLL    1, or the collective: allreduce allgather broadcast\n"
		"                           reduce reduce_scatter alltoall sendrecv\n"
		"  -g, --ngpus N            1 (one rank per process)\n"
		"  -b, --minbytes N         smallest size in bytes, K/M/G suffixes (32M)\n"
		"  -e, --maxbytes N         largest size (32M)\n"
		"  -i, --stepbytes N        add N bytes each step when -f is 1 (1M)\n"
		"  -f, --stepfactor N       multiply the size by N each step (1: use -i)\n"
		"  -n, --iters N            timed iterations per size (20)\n"
		"  -m, --agg_iters N        collectives per group (collx_group_start/end) (1)\n"
		"  -w, --warmup_iters N     warm-up iterations per size (1)\n"
		"  -c, --check N            check the result N times, exactly (1; 0: off)\n"
		"  -o, --op OP|all          sum prod max min avg (sum)\n"
		"  -d, --datatype T|all     int8 uint8 int32 uint32 int64 uint64 half float\n"
		"                           double bfloat16 f8e4m3 f8e5m2 (float)\n"
		"  -r, --root N             root of broadcast and reduce; -1: every rank (0)\n"
		"  -z, --blocking 0|1       wait for each collective before the next (0)\n"
		"  -a, --average N|ALGO     0 rank 0, 1 mean, 2 min, 3 max of the ranks' times (1);\n"
		"                           or the algorithm: auto ring tree rd pairwise p2p\n"
		"      --algo ALGO          the algorithm (auto)\n"
		"  -C, --report_cputime 0|1 the time column is the host time to issue them (0)\n"
		"  -R, --local_register 0|1 register the buffers (0: the kernel bounces them)\n"
		"  -G, --dmabuf 0|1         buffers in udmabuf memory, registered as dma-bufs (0)\n"
		"  -T, --timeout N          abort the communicator after N s without progress (0: off)\n"
		"  -J, --output_file F      also write the results as JSON to F\n"
		"      --counts LIST        element counts instead of -b/-e (1,7,1021)\n"
		"      --cpu                caller CPU and node busy columns (%% of wall time)\n"
		"  -h, --help               this text\n",
		opt.program);
}

static void write_json(const char *error);

static void die(const char *what, int err)
{
	char msg[512];

	/* After -T aborted the communicator it is gone: do not touch it. */
	snprintf(msg, sizeof(msg), "rank %d: %s: %s%s%s", rank, what, collx_strerror(err),
		 !aborted && comm && collx_comm_last_error(comm)[0] ? ": " : "",
		 !aborted && comm ? collx_comm_last_error(comm) : "");
	fprintf(stderr, "%s: %s\n", opt.program, msg);
	if (doc)
		write_json(msg);
	exit(1);
}

static void *watchdog(void *arg)
{
	(void)arg;
	while (!stop_watchdog) {
		usleep(100000);
		if (now_ms() - __atomic_load_n(&last_progress_ms, __ATOMIC_RELAXED) <
		    opt.timeout_s * 1000LL)
			continue;
		fprintf(stderr, "%s: rank %d: no collective completed for %d s (-T): aborting the communicator\n",
			opt.program, rank, opt.timeout_s);
		aborted = 1;
		collx_comm_abort(comm);
		/* The waits in the main thread end with ECANCELED. */
		_exit(1);
	}
	return NULL;
}

static void progress(void)
{
	__atomic_store_n(&last_progress_ms, now_ms(), __ATOMIC_RELAXED);
}

static void wait_op(struct collx_op *op, const char *what)
{
	int err = collx_wait(op, NULL);

	if (err)
		die(what, err);
	progress();
}

/* A barrier every module has: a one-element allreduce. */
static void barrier(void)
{
	int32_t v = 0;
	int err = collx_allreduce(comm, &v, &v, 1, COLLX_INT32, COLLX_OP_SUM);

	if (err)
		die("barrier", err);
	progress();
}

/* @v over the ranks as -a says: 0 rank 0's, 1 mean, 2 min, 3 max. */
static double combine(double v)
{
	double x = opt.average == 0 ? (rank == 0 ? v : 0) : v;
	enum collx_redop op = opt.average == 2 ? COLLX_OP_MIN :
			      opt.average == 3 ? COLLX_OP_MAX : COLLX_OP_SUM;
	int err = collx_allreduce(comm, &x, &x, 1, COLLX_FP64, op);

	if (err)
		die("allreduce of the times", err);
	return opt.average == 1 ? x / nranks : x;
}

static double sum_ranks(double v)
{
	int err = collx_allreduce(comm, &v, &v, 1, COLLX_FP64, COLLX_OP_SUM);

	if (err)
		die("allreduce of the results", err);
	return v;
}

/* ---- one half of a row ---- */

struct ring {
	struct collx_op **ops;
	int head, tail, cap;
};

static void ring_push(struct ring *q, struct collx_op *op)
{
	q->ops[q->tail++ % q->cap] = op;
}

static void ring_drain(struct ring *q, int keep)
{
	while (q->tail - q->head > keep)
		wait_op(q->ops[q->head++ % q->cap], "collective");
}

/* Start @o, waiting for older ones while the kernel's queue is full. */
static void start(const struct bench_op *o, struct ring *q)
{
	struct collx_op *ops[2];
	int n, err, i;

	for (;;) {
		err = bench_op_start(comm, o, sendbuf, recvbuf, ops, &n);
		if (!err)
			break;
		/* refused ops (a group's) end with the error: drop them */
		for (i = 0; i < n; i++)
			collx_wait(ops[i], NULL);
		if (err != -EAGAIN || q->tail == q->head)
			die("submit", err);
		/* COLLX_MAX_OPS_PER_FD records outstanding: reap the oldest */
		ring_drain(q, q->tail - q->head - 1);
	}
	for (i = 0; i < n; i++)
		ring_push(q, ops[i]);
}

struct half {
	double time_us, algbw, busbw, caller_pct, node_pct;
	long long wrong;		/* < 0: not checked */
};

static void run_timed(const struct bench_op *o, struct half *h)
{
	int total = opt.iters * opt.agg, i, j;
	struct bench_cpu ca, cb;
	struct ring q;
	double t0, tsub, t1, sec;

	h->caller_pct = h->node_pct = 0;
	if (opt.iters <= 0) {
		h->time_us = 0;
		return;
	}
	q.cap = total + 2;
	q.head = q.tail = 0;
	q.ops = calloc(q.cap, sizeof(*q.ops));
	if (!q.ops)
		die("allocate", -ENOMEM);
	/* nccl-tests: one collective to sync, then a barrier */
	start(o, &q);
	ring_drain(&q, 0);
	barrier();
	bench_cpu_sample(&ca);
	t0 = now_s();
	for (i = 0; i < opt.iters; i++) {
		if (opt.agg > 1)
			collx_group_start();
		for (j = 0; j < opt.agg; j++)
			start(o, &q);
		if (opt.agg > 1 && collx_group_end())
			die("group", -EIO);
		if (opt.blocking)
			ring_drain(&q, 0);
	}
	tsub = now_s();
	ring_drain(&q, 0);
	t1 = now_s();
	bench_cpu_sample(&cb);
	free(q.ops);
	bench_cpu_delta(&ca, &cb, &h->caller_pct, &h->node_pct);
	sec = combine((opt.cputime ? tsub - t0 : t1 - t0) / total);
	h->time_us = sec * 1e6;
	if (opt.cpu) {
		h->caller_pct = combine(h->caller_pct);
		h->node_pct = combine(h->node_pct);
	}
}

static void run_check(struct bench_op *o, struct half *h)
{
	struct ring q;
	struct collx_op *ops[2];
	char why[160];
	int c;

	h->wrong = -1;
	q.cap = 2;
	q.ops = ops;
	for (c = 0; c < opt.check; c++) {
		double wrong;

		o->rep = ++rep;
		q.head = q.tail = 0;
		bench_op_fill(o, sendbuf, recvbuf);
		start(o, &q);
		ring_drain(&q, 0);
		wrong = (double)bench_op_check(o, sendbuf, recvbuf, why, sizeof(why));
		if (wrong)
			fprintf(stderr, "%s: rank %d: %s %zu x %s %s root %d %s: %.0f wrong, %s\n",
				opt.program, rank, o->kind == BENCH_SENDRECV ? "sendrecv" :
				bench_coll_get(o->kind)->name, o->count, collx_dtype_name(o->dtype),
				collx_redop_name(o->redop), o->root,
				o->inplace ? "in-place" : "out-of-place", wrong, why);
		h->wrong = (long long)sum_ranks(wrong);
		if (h->wrong)
			break;
	}
	if (h->wrong > 0)
		errors++;
}

static void run_half(struct bench_op *o, struct half *h)
{
	if (opt.check) {
		/* Valid data for the timed runs too, as nccl-tests has. */
		o->rep = 99;
		bench_op_fill(o, sendbuf, recvbuf);
	}
	run_timed(o, h);
	bench_op_bw(o, h->time_us / 1e6, &h->algbw, &h->busbw);
	run_check(o, h);
	bw_sum += h->busbw;
	bw_count++;
}

/* ---- rows ---- */

static void run_row(struct bench_op *o)
{
	const struct bench_coll *bc = bench_coll_get(o->kind);
	const char *opname = bc->has_op ? collx_redop_name(o->redop) : "none";
	int root = bc->has_root ? o->root : -1;
	struct half h[2];
	char line[512];
	json_object *row = NULL;
	int p, n;

	for (p = 0; p < 2; p++) {
		o->inplace = p;
		if (p && !bc->inplace)
			continue;
		run_half(o, &h[p]);
	}
	if (rank != 0)
		return;
	n = bench_fmt_lead(line, sizeof(line), bench_op_bytes(o), o->count,
			   collx_dtype_name(o->dtype), opname, root);
	if (doc)
		row = bench_json_row(doc, bench_op_bytes(o), o->count, collx_dtype_name(o->dtype),
				     opname, root);
	for (p = 0; p < 2; p++) {
		if (p && !bc->inplace) {
			n += bench_fmt_null_half(line + n, sizeof(line) - n);
			if (row)
				bench_json_null_half(row, true);
			continue;
		}
		n += bench_fmt_half(line + n, sizeof(line) - n, h[p].time_us, h[p].algbw,
				    h[p].busbw, h[p].wrong);
		if (row)
			bench_json_half(row, p, opt.cputime, h[p].time_us, h[p].algbw, h[p].busbw,
					h[p].wrong, opt.cpu, h[p].caller_pct, h[p].node_pct);
	}
	for (p = 0; opt.cpu && p < 2; p++)
		n += bench_fmt_cpu(line + n, sizeof(line) - n, p && !bc->inplace ? 0 : h[p].caller_pct,
				   p && !bc->inplace ? 0 : h[p].node_pct);
	printf("%s\n", line);
	if (row)
		bench_json_row_end(row, opt.iters);
}

static void warm_up(struct bench_op *o, size_t count)
{
	struct ring q;
	int i;

	if (opt.warmup <= 0 || opt.iters <= 0)
		return;
	q.cap = opt.warmup + 2;
	q.head = q.tail = 0;
	q.ops = calloc(q.cap, sizeof(*q.ops));
	if (!q.ops)
		die("allocate", -ENOMEM);
	o->count = count;
	o->inplace = false;
	for (i = 0; i < opt.warmup; i++)
		start(o, &q);
	ring_drain(&q, 0);
	free(q.ops);
}

static void run_sizes(struct bench_op *o)
{
	size_t esz = collx_dtype_size(o->dtype), size;
	int i;

	if (opt.ncounts) {
		for (i = 0; i < opt.ncounts; i++)
			warm_up(o, opt.counts[i]);
		for (i = 0; i < opt.ncounts; i++) {
			o->count = opt.counts[i];
			run_row(o);
		}
		return;
	}
	/* nccl-tests warms up every size of a x2 sweep */
	for (size = opt.minbytes; size <= opt.maxbytes; size = size ? size * 2 : 1)
		warm_up(o, bench_count_from_bytes(o->kind, size, esz, nranks));
	for (size = opt.minbytes; size <= opt.maxbytes;
	     size = opt.stepfactor > 1 ? size * opt.stepfactor : size + opt.stepbytes) {
		o->count = bench_count_from_bytes(o->kind, size, esz, nranks);
		run_row(o);
		if (size == 0 && opt.stepfactor > 1)
			break;
	}
}

static void run_all(void)
{
	const struct bench_coll *bc = opt.coll;
	int d0 = opt.dtype < 0 ? 0 : opt.dtype;
	int d1 = opt.dtype < 0 ? (abi11 ? COLLX_DTYPE_COUNT : COLLX_FP8_E4M3) - 1 : opt.dtype;
	int o0 = !bc->has_op ? 0 : opt.redop < 0 ? 0 : opt.redop;
	int o1 = !bc->has_op ? 0 : opt.redop < 0 ? COLLX_OP_COUNT - 1 : opt.redop;
	int r0 = !bc->has_root ? 0 : opt.root < 0 ? 0 : opt.root;
	int r1 = !bc->has_root ? 0 : opt.root < 0 ? nranks - 1 : opt.root;
	struct bench_op o = { .kind = bc->kind, .nranks = nranks, .rank = rank, .algo = opt.algo };
	int d, p, r;

	for (d = d0; d <= d1; d++)
		for (p = o0; p <= o1; p++)
			for (r = r0; r <= r1; r++) {
				o.dtype = d;
				o.redop = p;
				o.root = r;
				run_sizes(&o);
			}
}

/* ---- setup ---- */

/* The largest buffer any row needs. */
static size_t buffer_bytes(void)
{
	size_t most = opt.maxbytes, s, r;
	struct bench_op o = { .kind = opt.coll->kind, .nranks = nranks, .dtype = COLLX_FP64 };
	int i;

	for (i = 0; i < opt.ncounts; i++) {
		o.count = opt.counts[i];
		bench_op_elems(&o, &s, &r);
		s = (s > r ? s : r) * 8;
		most = i == 0 || s > most ? s : most;
	}
	return (most + 4095) & ~(size_t)4095;
}

static void *dmabuf_buffer(size_t bytes, void **handle)
{
	char err[256];
	void *addr;
	int fd, rc;

	fd = bench_udmabuf(bytes, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "%s: rank %d: -G 1: %s\n", opt.program, rank, err);
		exit(fd == -ENOENT ? 77 : 1);
	}
	rc = collx_mem_register_dmabuf(comm, fd, 0, bytes, &addr, handle);
	close(fd);	/* the registration holds its own reference */
	if (rc)
		die("register the dma-buf", rc);
	return addr;
}

static void setup_buffers(void **hs, void **hr)
{
	int err;

	bufbytes = buffer_bytes();
	if (opt.dmabuf) {
		sendbuf = dmabuf_buffer(bufbytes, hs);
		recvbuf = dmabuf_buffer(bufbytes, hr);
		return;
	}
	if (posix_memalign(&sendbuf, 4096, bufbytes) || posix_memalign(&recvbuf, 4096, bufbytes))
		die("allocate buffers", -ENOMEM);
	memset(sendbuf, 0, bufbytes);
	memset(recvbuf, 0, bufbytes);
	if (opt.reg) {
		err = collx_mem_register(comm, sendbuf, bufbytes, hs);
		if (!err)
			err = collx_mem_register(comm, recvbuf, bufbytes, hr);
		if (err)
			die("register", err);
	}
}

/* Rank 0 prints one line per rank, gathered with an allreduce (every
 * module has one). */
static json_object *print_devices(void)
{
	char *all = calloc(nranks, DEV_SLOT), host[64], *line;
	json_object *devs = rank == 0 && opt.json ? json_object_new_array() : NULL;
	int err, r;

	if (!all)
		die("allocate", -ENOMEM);
	if (gethostname(host, sizeof(host)))
		strcpy(host, "?");
	host[sizeof(host) - 1] = 0;
	snprintf(all + rank * DEV_SLOT, DEV_SLOT, "%d %s %s", (int)getpid(), host,
		 collx_comm_device(comm));
	err = collx_allreduce(comm, all, all, (size_t)nranks * DEV_SLOT, COLLX_UINT8, COLLX_OP_SUM);
	if (err)
		die("allreduce of the device list", err);
	if (rank == 0)
		printf("# Using devices\n");
	for (r = 0; rank == 0 && r < nranks; r++) {
		int pid = 0, off = 0;
		char h[64] = "?";

		line = all + r * DEV_SLOT;
		line[DEV_SLOT - 1] = 0;
		if (sscanf(line, "%d %63s %n", &pid, h, &off) < 2)
			off = 0;
		printf("#  Rank %2d Group  0 Pid %6d on %10s device %s\n", r, pid, h, line + off);
		if (devs)
			json_object_array_add(devs, bench_json_device(r, pid, h, line + off));
	}
	free(all);
	return devs;
}

static void print_header(int argc, char **argv)
{
	struct bench_json_config jc = {
		.program = opt.program, .collective = opt.coll->name,
		.algorithm = collx_algo_name(opt.algo), .memory = opt.dmabuf ? "udmabuf" : "host",
		.nranks = nranks, .minbytes = opt.minbytes, .maxbytes = opt.maxbytes,
		.stepbytes = opt.stepbytes, .stepfactor = opt.stepfactor, .warmup = opt.warmup,
		.iters = opt.iters, .agg = opt.agg, .check = opt.check, .blocking = opt.blocking,
		.registered = opt.reg || opt.dmabuf, .average = opt.average,
		.module_version = have_module ? modver.module_version : NULL,
		.abi_major = modver.abi_major, .abi_minor = modver.abi_minor,
	};
	json_object *devs;

	if (rank == 0) {
		printf("# collx-bench (nccl-tests 2.19 format) libcollx %d.%d, module %s ABI %u.%u\n",
		       COLLX_LIB_MAJOR, COLLX_LIB_MINOR, modver.module_version, modver.abi_major,
		       modver.abi_minor);
		printf("# Collective test starting: %s\n", opt.program);
		if (opt.ncounts)
			printf("# nThread 1 nGpus 1 counts %d (%zu..%zu elements) warmup iters: %d iters: %d agg iters: %d validation: %d graph: 0\n",
			       opt.ncounts, opt.counts[0], opt.counts[opt.ncounts - 1], opt.warmup,
			       opt.iters, opt.agg, opt.check);
		else
			printf("# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d validation: %d graph: 0\n",
			       opt.minbytes, opt.maxbytes,
			       opt.stepfactor > 1 ? opt.stepfactor : opt.stepbytes,
			       opt.stepfactor > 1 ? "factor" : "bytes", opt.warmup, opt.iters,
			       opt.agg, opt.check);
		printf("# collx: nRanks %d collective %s algorithm %s registered %d memory %s%s\n",
		       nranks, opt.coll->name, collx_algo_name(opt.algo), opt.reg || opt.dmabuf,
		       opt.dmabuf ? "udmabuf" : "host",
		       opt.dtype < 0 && !abi11 ? " (no fp8: module ABI 1.0)" : "");
		if (opt.blocking)
			printf("# Blocking Enabled: wait after each collective\n");
		printf("#\n");
		if (opt.json)
			doc = bench_json_new(argc, argv, environ);
	}
	devs = print_devices();
	if (doc)
		bench_json_config(doc, &jc, devs);
	if (rank == 0)
		bench_print_header(stdout, opt.cputime, opt.cpu);
}

static void write_json(const char *error)
{
	const char *env = getenv("NCCL_TESTS_MIN_BW");
	char used[4096];
	int err;

	bench_json_finish(doc, errors, bw_count ? bw_sum / bw_count : 0,
			  env ? atof(env) : -1, error);
	err = bench_json_write(doc, opt.json, used, sizeof(used));
	if (err)
		printf("# skipping json output; %s not accessible: %s\n", opt.json, strerror(-err));
	else
		printf("# Writing JSON output to %s\n", used);
	json_object_put(doc);
	doc = NULL;
}

/* ---- options ---- */

static int parse_counts(const char *s)
{
	char *dup = strdup(s), *tok, *save;
	long c;

	if (!dup)
		return -1;
	opt.ncounts = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (bench_parse_int(tok, 0, 1L << 40, &c) || opt.ncounts == MAX_COUNTS) {
			free(dup);
			return -1;
		}
		opt.counts[opt.ncounts++] = (size_t)c;
	}
	free(dup);
	return opt.ncounts ? 0 : -1;
}

static int parse_algo(const char *s, enum collx_algo *out)
{
	int a;

	for (a = 0; a < COLLX_ALGO_COUNT; a++)
		if (!strcasecmp(s, collx_algo_name(a))) {
			*out = a;
			return 0;
		}
	return -1;
}

static int int_opt(const char *s, long min, long max, int *out)
{
	long v;

	if (bench_parse_int(s, min, max, &v))
		return -1;
	*out = (int)v;
	return 0;
}

enum { OPT_ALGO = 256, OPT_COUNTS, OPT_CPU };

static const struct option opts[] = {
	{ "nthreads", required_argument, NULL, 't' },
	{ "ngpus", required_argument, NULL, 'g' },
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "iters", required_argument, NULL, 'n' },
	{ "agg_iters", required_argument, NULL, 'm' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "check", required_argument, NULL, 'c' },
	{ "op", required_argument, NULL, 'o' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "root", required_argument, NULL, 'r' },
	{ "blocking", required_argument, NULL, 'z' },
	{ "average", required_argument, NULL, 'a' },
	{ "report_cputime", required_argument, NULL, 'C' },
	{ "local_register", required_argument, NULL, 'R' },
	{ "dmabuf", required_argument, NULL, 'G' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "output_file", required_argument, NULL, 'J' },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "counts", required_argument, NULL, OPT_COUNTS },
	{ "cpu", no_argument, NULL, OPT_CPU },
	{ "help", no_argument, NULL, 'h' },
	{}
};

static const char *opt_name(int c)
{
	int i;

	for (i = 0; opts[i].name; i++)
		if (opts[i].val == c)
			return opts[i].name;
	return "?";
}

/* One option's value: 0, or -1 when it is not one (strict: "-n abc"). */
static int parse_one(int c, const char *arg)
{
	int one;
	long f;

	switch (c) {
	case 't':
		if (bench_coll_find(arg) && bench_coll_find(arg)->perf)
			opt.coll = bench_coll_find(arg);
		else if (int_opt(arg, 1, 1, &one))
			return -1;
		break;
	case 'g':
		if (int_opt(arg, 1, 1, &one))
			return -1;
		break;
	case 'b':
		if (bench_parse_size(arg, &opt.minbytes))
			return -1;
		break;
	case 'e':
		if (bench_parse_size(arg, &opt.maxbytes))
			return -1;
		break;
	case 'i':
		if (bench_parse_size(arg, &opt.stepbytes))
			return -1;
		break;
	case 'f':
		if (bench_parse_int(arg, 1, 1 << 20, &f))
			return -1;
		opt.stepfactor = (size_t)f;
		break;
	case 'n':
		if (int_opt(arg, 0, 1 << 24, &opt.iters))
			return -1;
		break;
	case 'm':
		if (int_opt(arg, 1, 1024, &opt.agg))
			return -1;
		break;
	case 'w':
		if (int_opt(arg, 0, 1 << 24, &opt.warmup))
			return -1;
		break;
	case 'c':
		if (int_opt(arg, 0, 1 << 20, &opt.check))
			return -1;
		break;
	case 'o':
		opt.redop = strcmp(arg, "all") ? bench_parse_redop(arg) : -1;
		if (opt.redop < 0 && strcmp(arg, "all"))
			return -1;
		break;
	case 'd':
		opt.dtype = strcmp(arg, "all") ? bench_parse_dtype(arg) : -1;
		if (opt.dtype < 0 && strcmp(arg, "all"))
			return -1;
		break;
	case 'r':
		if (int_opt(arg, -1, COLLX_MAX_RANKS - 1, &opt.root))
			return -1;
		break;
	case 'z':
		if (int_opt(arg, 0, 1, &opt.blocking))
			return -1;
		break;
	case 'a':
		if (int_opt(arg, 0, 3, &opt.average) && parse_algo(arg, &opt.algo))
			return -1;
		break;
	case 'C':
		if (int_opt(arg, 0, 1, &opt.cputime))
			return -1;
		break;
	case 'R':
		if (int_opt(arg, 0, 1, &opt.reg))
			return -1;
		break;
	case 'G':
		if (int_opt(arg, 0, 1, &opt.dmabuf))
			return -1;
		break;
	case 'T':
		if (int_opt(arg, 0, 86400, &opt.timeout_s))
			return -1;
		break;
	case 'J':
		opt.json = arg;
		break;
	case OPT_ALGO:
		if (parse_algo(arg, &opt.algo))
			return -1;
		break;
	case OPT_COUNTS:
		if (parse_counts(arg))
			return -1;
		break;
	default:
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv)
{
	int c, idx = -1;

	while ((c = getopt_long(argc, argv, "t:g:b:e:i:f:n:m:w:c:o:d:r:z:a:C:R:G:T:J:h", opts,
				&idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == OPT_CPU) {
			opt.cpu = true;
			continue;
		}
		if (c == '?')
			return -1;
		if (parse_one(c, optarg)) {
			fprintf(stderr, "%s: invalid value '%s' for -%c/--%s\n", opt.program, optarg,
				c < 256 ? c : '-', opt_name(c));
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", opt.program, argv[optind]);
		return -1;
	}
	if (opt.minbytes > opt.maxbytes) {
		fprintf(stderr, "%s: invalid sizes for 'minbytes' and 'maxbytes': %zu > %zu\n",
			opt.program, opt.minbytes, opt.maxbytes);
		return -1;
	}
	if (opt.stepfactor <= 1 && opt.stepbytes == 0) {
		fprintf(stderr, "%s: -f 1 needs -i above 0\n", opt.program);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	struct collx_dev *dev;
	void *hs = NULL, *hr = NULL;
	pthread_t wd;
	double total;
	int err;

	setlinebuf(stdout);
	opt.program = base ? base + 1 : argv[0];
	opt.coll = bench_coll_find(opt.program);
	if (!opt.coll || !opt.coll->perf)
		opt.coll = bench_coll_get(BENCH_ALLREDUCE);
	if (parse_args(argc, argv)) {
		fprintf(stderr, "Try '%s -h' for the options.\n", opt.program);
		return 2;
	}
	opt.program = opt.coll->perf;

	/* The module's version for the header, and what it can run. */
	snprintf(modver.module_version, sizeof(modver.module_version), "not loaded");
	if (!collx_dev_open(&dev)) {
		modver = *collx_dev_version(dev);
		have_module = true;
		abi11 = modver.abi_minor >= 1;
		collx_dev_close(dev);
	}
	if (opt.dmabuf && access("/dev/udmabuf", F_OK)) {
		fprintf(stderr, "%s: -G 1: /dev/udmabuf: %s (this kernel has no CONFIG_UDMABUF): skipped\n",
			opt.program, strerror(errno));
		return 77;
	}
	err = collx_comm_init_all(&comm);
	if (err) {
		fprintf(stderr, "%s: init: %s: %s\n", opt.program, collx_strerror(err),
			collx_comm_last_error(NULL));
		return 1;
	}
	rank = collx_comm_rank(comm);
	nranks = collx_comm_size(comm);
	if (opt.coll->has_root && opt.root >= nranks) {
		fprintf(stderr, "%s: -r %d: there are only %d ranks\n", opt.program, opt.root, nranks);
		return 2;
	}
	progress();
	if (opt.timeout_s && pthread_create(&wd, NULL, watchdog, NULL))
		die("watchdog thread", -errno);
	setup_buffers(&hs, &hr);
	print_header(argc, argv);
	run_all();

	total = sum_ranks((double)errors);
	errors = (long long)total;
	if (rank == 0) {
		const char *env = getenv("NCCL_TESTS_MIN_BW");

		bench_print_footer(stdout, errors, bw_count ? bw_sum / bw_count : 0,
				   env ? atof(env) : -1, opt.program);
		if (doc)
			write_json(NULL);
		printf("#\n");
	}
	if (opt.timeout_s) {
		stop_watchdog = 1;
		pthread_join(wd, NULL);
	}
	if (hs)
		collx_mem_deregister(comm, hs);
	if (hr)
		collx_mem_deregister(comm, hr);
	collx_comm_destroy(comm);
	if (!opt.dmabuf) {
		free(sendbuf);
		free(recvbuf);
	}
	if (errors)
		return 1;
	if (getenv("NCCL_TESTS_MIN_BW") && bw_count &&
	    bw_sum / bw_count < atof(getenv("NCCL_TESTS_MIN_BW")) * 0.9)
		return 1;
	return 0;
}
