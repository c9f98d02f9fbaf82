// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * collx-bench: allreduce bandwidth and correctness, in nccl-tests' table.
 *
 * Every rank runs it (rank and rendezvous from the environment, see
 * libcollx); rank 0 prints the table.  Exits non-zero when any element of
 * any rank came out wrong or a collective failed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collx.h"
#include "benchdata.h"

#define MAX_COUNTS 64
#define SLOT 128

static struct {
	size_t minbytes, maxbytes, stepbytes, stepfactor;
	int iters, warmup, check, blocking, reg;
	int dtype, redop;		/* -1: all */
	const char *json;
	size_t counts[MAX_COUNTS];
	int ncounts;
} opt = {
	.minbytes = 8, .maxbytes = 1 << 20, .stepbytes = 1 << 20, .stepfactor = 2,
	.iters = 20, .warmup = 5, .check = 1, .blocking = 0, .reg = 1,
	.dtype = COLLX_FP32, .redop = COLLX_OP_SUM,
};

static struct collx_comm *comm;
static int rank, nranks;
static void *sendbuf, *recvbuf;
static size_t bufbytes;
static int rep;
static FILE *jf;
static bool first_json_row = true;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: collx-bench [options]\n"
		"Allreduce bandwidth and correctness over collx, printed as nccl-tests does.\n"
		"Run one process per rank; rank and rendezvous come from COLLX_RANK,\n"
		"COLLX_NRANKS and COLLX_MASTER_ADDR (or COLLX_COMM_ID, or torchrun's\n"
		"RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT).  Rank 0 prints the table.\n\n"
		"  -b, --minbytes N     smallest size in bytes (K/M/G suffixes; default 8)\n"
		"  -e, --maxbytes N     largest size (default 1M)\n"
		"  -f, --stepfactor N   multiply the size by N each step (default 2)\n"
		"  -i, --stepbytes N    add N bytes each step when -f is 1 (default 1M)\n"
		"  -C, --counts LIST    element counts to run instead of -b/-e (e.g. 1,7,1021)\n"
		"  -n, --iters N        timed iterations per size (default 20)\n"
		"  -w, --warmup_iters N warm-up iterations per type and op (default 5)\n"
		"  -c, --check 0|1      check every result exactly (default 1)\n"
		"  -o, --op OP|all      sum, prod, max, min, avg (default sum)\n"
		"  -d, --datatype T|all int8 uint8 int32 uint32 int64 uint64 half float\n"
		"                       double bfloat16 (default float)\n"
		"  -r, --root N         accepted for nccl-tests compatibility; allreduce has none\n"
		"  -z, --blocking 0|1   wait for each collective before the next (default 0)\n"
		"  -R, --local_register 0|1  register the buffers (default 1); 0 bounces\n"
		"  -J, --output_file F  also write the results as JSON to F ('-': stdout)\n"
		"  -h, --help           this text\n");
}

static void die(const char *what, int err)
{
	fprintf(stderr, "collx-bench: rank %d: %s: %s%s%s\n", rank, what, collx_strerror(err),
		comm && collx_comm_last_error(comm)[0] ? ": " : "",
		comm ? collx_comm_last_error(comm) : "");
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run @iters allreduces, keeping up to all of them in flight unless -z 1. */
static void run_iters(void *s, void *r, size_t count, int dt, int op, int iters)
{
	struct collx_op **ops = calloc(iters, sizeof(*ops));
	int i, head = 0, err;

	if (!ops)
		die("calloc", -ENOMEM);
	for (i = 0; i < iters; i++) {
		for (;;) {
			err = collx_allreduce_async(comm, s, r, count, dt, op, &ops[i]);
			if (!err)
				break;
			if ((err == -EAGAIN || err == -EBUSY || err == -ENOSPC) && head < i) {
				err = collx_wait(ops[head++], NULL);
				if (err)
					die("allreduce", err);
				continue;
			}
			die("allreduce submit", err);
		}
		if (opt.blocking) {
			err = collx_wait(ops[head++], NULL);
			if (err)
				die("allreduce", err);
		}
	}
	while (head < iters) {
		err = collx_wait(ops[head++], NULL);
		if (err)
			die("allreduce", err);
	}
	free(ops);
}

static long long check_half(size_t count, int dt, int op, bool inplace)
{
	size_t esz = collx_dtype_size(dt), first = 0, wrong;
	int err;

	rep++;
	if (inplace) {
		bench_fill(recvbuf, count, dt, op, nranks, rank, rep);
		err = collx_allreduce(comm, recvbuf, recvbuf, count, dt, op);
	} else {
		bench_fill(sendbuf, count, dt, op, nranks, rank, rep);
		memset(recvbuf, 0xa5, count * esz);
		err = collx_allreduce(comm, sendbuf, recvbuf, count, dt, op);
	}
	if (err)
		die("allreduce", err);
	wrong = bench_check(recvbuf, count, dt, op, nranks, rep, &first);
	if (wrong)
		fprintf(stderr, "collx-bench: rank %d: %zu x %s %s %s: %zu wrong, first at %zu: %g, want %g\n",
			rank, count, collx_dtype_name(dt), collx_redop_name(op),
			inplace ? "in-place" : "out-of-place", wrong, first,
			bench_load(recvbuf, first, dt),
			bench_expected(dt, op, nranks, first, rep));
	if (!inplace) {
		size_t i, bad = 0;

		for (i = 0; i < count; i++)
			if (bench_load(sendbuf, i, dt) !=
			    (double)bench_value(dt, op, nranks, rank, i, rep))
				bad++;
		if (bad)
			fprintf(stderr, "collx-bench: rank %d: out-of-place allreduce changed %zu element(s) of the send buffer\n",
				rank, bad);
		wrong += bad;
	}
	return (long long)wrong;
}

static void json_row(size_t bytes, size_t count, int dt, int op, const double *t,
		     const double *alg, const double *bus, const long long *wrong)
{
	int h;

	if (!jf)
		return;
	fprintf(jf, "%s\n    {\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", \"root\": -1",
		first_json_row ? "" : ",", bytes, count, collx_dtype_name(dt), collx_redop_name(op));
	for (h = 0; h < 2; h++) {
		fprintf(jf, ", \"%s\": {\"time_us\": %.3f, \"algbw\": %.6f, \"busbw\": %.6f, \"wrong\": ",
			h ? "in_place" : "out_of_place", t[h], alg[h], bus[h]);
		if (wrong[h] < 0)
			fprintf(jf, "null}");
		else
			fprintf(jf, "%lld}", wrong[h]);
	}
	fprintf(jf, "}");
	first_json_row = false;
}

static long long total_wrong;
static double bw_sum;
static int bw_count;

static void run_row(size_t count, int dt, int op)
{
	size_t bytes = count * collx_dtype_size(dt);
	double t[2], alg[2], bus[2], stats[4];
	long long wrong[2] = { -1, -1 };
	char line[256];
	int h, err, n;

	for (h = 0; h < 2; h++) {
		void *s = h ? recvbuf : sendbuf;
		double t0;

		t0 = now_s();
		if (opt.iters > 0)
			run_iters(s, recvbuf, count, dt, op, opt.iters);
		t[h] = opt.iters > 0 ? (now_s() - t0) / opt.iters : 0;
		if (opt.check)
			wrong[h] = check_half(count, dt, op, h);
	}
	/* Average time and total wrong over the ranks, as nccl-tests does. */
	stats[0] = t[0];
	stats[1] = t[1];
	stats[2] = wrong[0] < 0 ? 0 : (double)wrong[0];
	stats[3] = wrong[1] < 0 ? 0 : (double)wrong[1];
	err = collx_allreduce(comm, stats, stats, 4, COLLX_FP64, COLLX_OP_SUM);
	if (err)
		die("allreduce of the results", err);
	for (h = 0; h < 2; h++) {
		t[h] = stats[h] / nranks;
		if (wrong[h] >= 0)
			wrong[h] = (long long)stats[2 + h];
		bench_bw(bytes, t[h], nranks, &alg[h], &bus[h]);
		if (wrong[h] > 0)
			total_wrong += wrong[h];
		bw_sum += bus[h];
		bw_count++;
	}
	if (rank != 0)
		return;
	n = bench_fmt_lead(line, sizeof(line), bytes, count, collx_dtype_name(dt),
			   collx_redop_name(op), -1);
	for (h = 0; h < 2; h++)
		n += bench_fmt_half(line + n, sizeof(line) - n, t[h] * 1e6, alg[h], bus[h],
				    wrong[h]);
	printf("%s\n", line);
	fflush(stdout);
	for (h = 0; h < 2; h++)
		t[h] *= 1e6;
	json_row(bytes, count, dt, op, t, alg, bus, wrong);
}

static void run_type_op(int dt, int op)
{
	size_t esz = collx_dtype_size(dt), size, lo, hi;
	int i;

	lo = opt.ncounts ? opt.counts[0] : opt.minbytes / esz;
	hi = opt.ncounts ? opt.counts[0] : opt.maxbytes / esz;
	for (i = 0; i < opt.ncounts; i++) {
		lo = opt.counts[i] < lo ? opt.counts[i] : lo;
		hi = opt.counts[i] > hi ? opt.counts[i] : hi;
	}
	if (opt.warmup > 0) {
		if (hi)
			run_iters(sendbuf, recvbuf, hi, dt, op, opt.warmup);
		if (lo && lo != hi)
			run_iters(sendbuf, recvbuf, lo, dt, op, opt.warmup);
	}
	if (opt.ncounts) {
		for (i = 0; i < opt.ncounts; i++)
			run_row(opt.counts[i], dt, op);
		return;
	}
	for (size = opt.minbytes; size <= opt.maxbytes;
	     size = opt.stepfactor > 1 ? size * opt.stepfactor : size + opt.stepbytes) {
		if (size / esz)
			run_row(size / esz, dt, op);
		if (size == 0)
			break;
	}
}

/* rank 0 prints one line per rank: an allgather made of an allreduce. */
static void print_devices(void)
{
	char *all = calloc(nranks, SLOT), host[64];
	int err, r;

	if (!all)
		die("calloc", -ENOMEM);
	if (gethostname(host, sizeof(host)))
		strcpy(host, "?");
	host[sizeof(host) - 1] = 0;
	snprintf(all + rank * SLOT, SLOT, "#  Rank %2d Pid %6d on %10s device %s",
		 rank, (int)getpid(), host, collx_comm_device(comm));
	err = collx_allreduce(comm, all, all, (size_t)nranks * SLOT, COLLX_UINT8, COLLX_OP_SUM);
	if (err)
		die("allreduce of the device list", err);
	if (rank == 0) {
		printf("# Using devices\n");
		for (r = 0; r < nranks; r++) {
			all[r * SLOT + SLOT - 1] = 0;
			printf("%s\n", all + r * SLOT);
		}
		printf("#\n");
	}
	free(all);
}

static int parse_counts(const char *s)
{
	char *dup = strdup(s), *tok, *save;

	if (!dup)
		return -1;
	opt.ncounts = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t c = bench_parse_size(tok);

		if (!c || opt.ncounts == MAX_COUNTS) {
			free(dup);
			return -1;
		}
		opt.counts[opt.ncounts++] = c;
	}
	free(dup);
	return opt.ncounts ? 0 : -1;
}

static int parse_01(const char *s, int *out)
{
	if (strcmp(s, "0") && strcmp(s, "1"))
		return -1;
	*out = s[0] == '1';
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "minbytes", required_argument, NULL, 'b' },
		{ "maxbytes", required_argument, NULL, 'e' },
		{ "stepbytes", required_argument, NULL, 'i' },
		{ "stepfactor", required_argument, NULL, 'f' },
		{ "counts", required_argument, NULL, 'C' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup_iters", required_argument, NULL, 'w' },
		{ "check", required_argument, NULL, 'c' },
		{ "op", required_argument, NULL, 'o' },
		{ "datatype", required_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "blocking", required_argument, NULL, 'z' },
		{ "local_register", required_argument, NULL, 'R' },
		{ "output_file", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	void *hs = NULL, *hr = NULL;
	int c, err, d, o, d0, d1, o0, o1;
	size_t maxcount_bytes;

	setlinebuf(stdout);
	while ((c = getopt_long(argc, argv, "b:e:i:f:C:n:w:c:o:d:r:z:R:J:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			opt.minbytes = bench_parse_size(optarg);
			break;
		case 'e':
			opt.maxbytes = bench_parse_size(optarg);
			if (!opt.maxbytes)
				goto bad;
			break;
		case 'i':
			opt.stepbytes = bench_parse_size(optarg);
			break;
		case 'f':
			opt.stepfactor = strtoul(optarg, NULL, 0);
			break;
		case 'C':
			if (parse_counts(optarg))
				goto bad;
			break;
		case 'n':
			opt.iters = atoi(optarg);
			break;
		case 'w':
			opt.warmup = atoi(optarg);
			break;
		case 'c':
			if (parse_01(optarg, &opt.check))
				goto bad;
			break;
		case 'z':
			if (parse_01(optarg, &opt.blocking))
				goto bad;
			break;
		case 'R':
			if (parse_01(optarg, &opt.reg))
				goto bad;
			break;
		case 'o':
			opt.redop = strcmp(optarg, "all") ? bench_parse_redop(optarg) : -1;
			if (opt.redop < 0 && strcmp(optarg, "all"))
				goto bad;
			break;
		case 'd':
			opt.dtype = strcmp(optarg, "all") ? bench_parse_dtype(optarg) : -1;
			if (opt.dtype < 0 && strcmp(optarg, "all"))
				goto bad;
			break;
		case 'r':
			break;
		case 'J':
			opt.json = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || opt.iters < 0 || opt.warmup < 0 ||
	    opt.minbytes > opt.maxbytes ||
	    (opt.stepfactor <= 1 && opt.stepbytes == 0)) {
bad:
		usage(stderr);
		return 2;
	}

	err = collx_comm_init_all(&comm);
	if (err) {
		fprintf(stderr, "collx-bench: init: %s: %s\n", collx_strerror(err),
			collx_comm_last_error(NULL));
		return 1;
	}
	rank = collx_comm_rank(comm);
	nranks = collx_comm_size(comm);

	maxcount_bytes = opt.ncounts ? 0 : opt.maxbytes;
	for (c = 0; c < opt.ncounts; c++)
		if (opt.counts[c] * 8 > maxcount_bytes)
			maxcount_bytes = opt.counts[c] * 8;
	bufbytes = (maxcount_bytes + 4095) & ~(size_t)4095;
	if (!bufbytes)
		bufbytes = 4096;
	if (posix_memalign(&sendbuf, 4096, bufbytes) || posix_memalign(&recvbuf, 4096, bufbytes))
		die("allocate buffers", -ENOMEM);
	memset(sendbuf, 0, bufbytes);
	memset(recvbuf, 0, bufbytes);
	if (opt.reg) {
		err = collx_mem_register(comm, sendbuf, bufbytes, &hs);
		if (!err)
			err = collx_mem_register(comm, recvbuf, bufbytes, &hr);
		if (err)
			die("register", err);
	}
	if (rank == 0 && opt.json) {
		jf = strcmp(opt.json, "-") ? fopen(opt.json, "w") : stdout;
		if (!jf) {
			perror(opt.json);
			return 1;
		}
	}

	if (rank == 0) {
		if (opt.ncounts)
			printf("# collx-bench allreduce: nRanks %d counts %d (%zu..%zu elements) warmup iters: %d iters: %d validation: %d blocking: %d registered: %d\n",
			       nranks, opt.ncounts, opt.counts[0], opt.counts[opt.ncounts - 1],
			       opt.warmup, opt.iters, opt.check, opt.blocking, opt.reg);
		else
			printf("# collx-bench allreduce: nRanks %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d validation: %d blocking: %d registered: %d\n",
			       nranks, opt.minbytes, opt.maxbytes,
			       opt.stepfactor > 1 ? opt.stepfactor : opt.stepbytes,
			       opt.stepfactor > 1 ? "factor" : "bytes", opt.warmup, opt.iters,
			       opt.check, opt.blocking, opt.reg);
		printf("#\n");
	}
	print_devices();
	if (rank == 0)
		bench_print_header(stdout);
	if (jf)
		fprintf(jf, "{\"collective\": \"allreduce\", \"nranks\": %d, \"registered\": %d, \"results\": [",
			nranks, opt.reg);

	d0 = opt.dtype < 0 ? 0 : opt.dtype;
	d1 = opt.dtype < 0 ? COLLX_DTYPE_COUNT - 1 : opt.dtype;
	o0 = opt.redop < 0 ? 0 : opt.redop;
	o1 = opt.redop < 0 ? COLLX_OP_COUNT - 1 : opt.redop;
	for (d = d0; d <= d1; d++)
		for (o = o0; o <= o1; o++)
			run_type_op(d, o);

	if (rank == 0) {
		printf("# Out of bounds values : %lld %s\n", total_wrong,
		       total_wrong ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %g \n", bw_count ? bw_sum / bw_count : 0.0);
		printf("#\n");
	}
	if (jf) {
		fprintf(jf, "\n  ], \"wrong\": %lld, \"avg_busbw\": %g}\n", total_wrong,
			bw_count ? bw_sum / bw_count : 0.0);
		if (jf != stdout)
			fclose(jf);
	}
	if (hs)
		collx_mem_deregister(comm, hs);
	if (hr)
		collx_mem_deregister(comm, hr);
	collx_comm_destroy(comm);
	free(sendbuf);
	free(recvbuf);
	return total_wrong ? 1 : 0;
}
