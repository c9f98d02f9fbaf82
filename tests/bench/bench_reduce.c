// SPDX-License-Identifier: GPL-2.0
/*
 * bench-reduce: throughput of the collx reduction kernels on the host,
 * beside a STREAM-style add over the same buffers (the memory-bandwidth
 * ceiling for dst = dst + src) and Open MPI's MPI_Reduce_local on the same
 * buffers.  Not a test: it prints a table and the ratios.
 *
 * GB/s counts the bytes a reduction must move, 3 per byte of dst (read dst,
 * read src, write dst), for every contender alike; the figure is the best
 * of several timed repetitions.
 *
 * Usage: bench_reduce [-q] [-s MiB] [-t TYPE]
 *   -q: quick (largest size 256 MiB); -s: largest size; -t: one type only
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../kmod/core/reduce.h"

#ifdef HAVE_MPI
#include <mpi.h>
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * STREAM "add" in its in-place form a[i] = a[i] + b[i] on doubles: 2 reads
 * and 1 write per element like a reduction, vectorized as well as the
 * compiler can for this CPU (AVX2 when present).
 */
__attribute__((target("avx2"), optimize("O3", "tree-vectorize")))
static void stream_add_avx2(double *restrict a, const double *restrict b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = a[i] + b[i];
}

__attribute__((optimize("O3", "tree-vectorize")))
static void stream_add_sse2(double *restrict a, const double *restrict b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = a[i] + b[i];
}

static int have_avx2;

typedef int (*bench_fn)(void *d, const void *s, size_t count, int dt, int op,
			int impl);

static int run_collx(void *d, const void *s, size_t count, int dt, int op, int impl)
{
	return collx_reduce_with(impl, d, s, count, dt, op);
}

/*
 * STREAM runs on buffers of its own, as doubles that stay normal: the
 * reduction buffers, seen as doubles, would hold subnormals (slow on x86).
 */
static double *stream_a, *stream_b;

static int run_stream(void *d, const void *s, size_t count, int dt, int op,
		      int impl)
{
	size_t n = count * collx_dtype_size(dt) / sizeof(double);

	if (have_avx2)
		stream_add_avx2(stream_a, stream_b, n);
	else
		stream_add_sse2(stream_a, stream_b, n);
	return 0;
}

#ifdef HAVE_MPI
static MPI_Datatype mpi_type(int dt)
{
	switch (dt) {
	case COLLX_INT8: return MPI_INT8_T;
	case COLLX_UINT8: return MPI_UINT8_T;
	case COLLX_INT32: return MPI_INT32_T;
	case COLLX_UINT32: return MPI_UINT32_T;
	case COLLX_INT64: return MPI_INT64_T;
	case COLLX_UINT64: return MPI_UINT64_T;
	case COLLX_FP32: return MPI_FLOAT;
	case COLLX_FP64: return MPI_DOUBLE;
	default: return MPI_DATATYPE_NULL;	/* no fp16/bf16 in MPI 3.1 */
	}
}

static MPI_Op mpi_op(int op)
{
	switch (op) {
	case COLLX_OP_SUM: return MPI_SUM;
	case COLLX_OP_PROD: return MPI_PROD;
	case COLLX_OP_MAX: return MPI_MAX;
	default: return MPI_MIN;
	}
}

static int run_mpi(void *d, const void *s, size_t count, int dt, int op, int impl)
{
	/* MPI_Reduce_local(in, inout): inout = in op inout */
	return MPI_Reduce_local(s, d, (int)count, mpi_type(dt), mpi_op(op)) ==
		MPI_SUCCESS ? 0 : -1;
}
#endif

static void fill(void *buf, size_t count, int dt)
{
	/* values that stay finite and normal under repeated sum and prod */
	static const unsigned long long one[] = {
		[COLLX_INT8] = 1, [COLLX_UINT8] = 1, [COLLX_INT32] = 1,
		[COLLX_UINT32] = 1, [COLLX_INT64] = 1, [COLLX_UINT64] = 1,
		[COLLX_FP16] = 0x3c00, [COLLX_FP32] = 0x3f800000,
		[COLLX_FP64] = 0x3ff0000000000000ULL, [COLLX_BF16] = 0x3f80,
	};
	size_t es = collx_dtype_size(dt), i;
	unsigned long long v = one[dt];

	for (i = 0; i < count; i++)
		memcpy((char *)buf + i * es, &v, es);
}

/*
 * Contenders are timed in turn within each repetition, so drift in the
 * machine's load or clock hits them alike; each keeps its best repetition.
 * A repetition runs each enough times to last about 20 ms.
 */
#define NCONT	3

static void measure(bench_fn *fns, void *d, const void *s, size_t bytes,
		    int dt, int op, int impl, double *best)
{
	size_t count = bytes / collx_dtype_size(dt);
	int iters[NCONT], rep, i, c;
	double t0, t;

	for (c = 0; c < NCONT; c++) {
		best[c] = -1;
		iters[c] = 1;
		if (!fns[c] || fns[c](d, s, count, dt, op, impl))
			continue;	/* absent, or fails: n/a */
		t0 = now();
		fns[c](d, s, count, dt, op, impl);
		t = now() - t0;
		if (t < 0.02)
			iters[c] = (int)(0.02 / (t > 1e-7 ? t : 1e-7)) + 1;
		best[c] = 0;
	}
	for (rep = 0; rep < 5; rep++) {
		for (c = 0; c < NCONT; c++) {
			if (best[c] < 0)
				continue;
			t0 = now();
			for (i = 0; i < iters[c]; i++)
				fns[c](d, s, count, dt, op, impl);
			t = (now() - t0) / iters[c];
			if (3.0 * bytes / t / 1e9 > best[c])
				best[c] = 3.0 * bytes / t / 1e9;
		}
	}
}

static const char *const dt_name[] = {
	"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"fp16", "fp32", "fp64", "bf16",
};

static const char *const op_name[] = { "sum", "prod", "max", "min", "avg" };

static const char *size_str(size_t b, char *buf)
{
	if (b >= 1 << 20)
		sprintf(buf, "%zuM", b >> 20);
	else
		sprintf(buf, "%zuK", b >> 10);
	return buf;
}

int main(int argc, char **argv)
{
	static const int dts[] = {
		COLLX_FP32, COLLX_FP64, COLLX_INT32, COLLX_INT64, COLLX_INT8,
		COLLX_UINT8, COLLX_UINT32, COLLX_UINT64, COLLX_FP16, COLLX_BF16,
	};
	size_t sizes[] = { 32 << 10, 1 << 20, 16 << 20, 256 << 20, 1024 << 20 };
	int nsizes = 5, quick = 0, opt, di, si, op, impl;
	const char *only = NULL;
	bench_fn fns[NCONT] = { run_collx, run_stream, NULL };
	double r[NCONT];
	size_t maxb;
	char sb[32];
	void *d, *s;

	while ((opt = getopt(argc, argv, "qs:t:")) != -1) {
		if (opt == 't')
			only = optarg;
		else if (opt == 'q')
			quick = 1;
		else if (opt == 's')
			sizes[nsizes - 1] = (size_t)atoi(optarg) << 20;
	}
	if (quick)
		nsizes = 4;
	maxb = sizes[nsizes - 1];
#ifdef HAVE_MPI
	MPI_Init(&argc, &argv);
#endif
	have_avx2 = __builtin_cpu_supports("avx2");
	d = aligned_alloc(64, maxb);
	s = aligned_alloc(64, maxb);
	stream_a = aligned_alloc(64, maxb);
	stream_b = aligned_alloc(64, maxb);
	if (!d || !s || !stream_a || !stream_b)
		return 1;
	memset(d, 0, maxb);
	memset(s, 0, maxb);
	for (size_t i = 0; i < maxb / sizeof(double); i++) {
		stream_a[i] = 1.0;
		stream_b[i] = 0.5;
	}

	printf("# collx reduce benchmark: implementation %s, STREAM add on %s\n",
	       collx_reduce_impl_name(COLLX_REDUCE_AUTO), have_avx2 ? "avx2" : "sse2");
	printf("# GB/s = 3 x bytes of dst / time (read dst, read src, write dst)\n");
	printf("%-22s %6s %9s %9s %7s %9s %7s\n", "kernel", "size", "GB/s",
	       "STREAM", "ratio", "MPI", "ratio");

	for (di = 0; di < (int)(sizeof(dts) / sizeof(dts[0])); di++) {
		int dt = dts[di];

		if (only && strcmp(only, dt_name[dt]))
			continue;

		for (op = COLLX_OP_SUM; op <= COLLX_OP_MIN; op++) {
			/* every dtype's sum; prod/max/min for fp32 and int32 */
			if (op != COLLX_OP_SUM && dt != COLLX_FP32 && dt != COLLX_INT32)
				continue;
			for (impl = COLLX_REDUCE_AUTO; impl <= COLLX_REDUCE_SCALAR; impl++) {
				/* scalar rows only for sum, as a reference */
				if (impl == COLLX_REDUCE_SCALAR && op != COLLX_OP_SUM)
					continue;
				for (si = 0; si < nsizes; si++) {
					size_t b = sizes[si];
					double g, st, mp;
					char name[40];

					/* the scalar fp16/bf16 code is slow: skip the biggest */
					if (impl == COLLX_REDUCE_SCALAR && b > (256 << 20))
						continue;
					snprintf(name, sizeof(name), "%s.%s.%s", dt_name[dt],
						 op_name[op], collx_reduce_impl_name(impl));
					fill(d, b / collx_dtype_size(dt), dt);
					fill(s, b / collx_dtype_size(dt), dt);
					fns[2] = NULL;
#ifdef HAVE_MPI
					if (mpi_type(dt) != MPI_DATATYPE_NULL)
						fns[2] = run_mpi;
#endif
					measure(fns, d, s, b, dt, op, impl, r);
					g = r[0];
					st = r[1];
					mp = r[2];
					if (mp > 0)
						printf("%-22s %6s %9.2f %9.2f %7.2f %9.2f %7.2f\n",
						       name, size_str(b, sb), g, st, g / st, mp,
						       g / mp);
					else
						printf("%-22s %6s %9.2f %9.2f %7.2f %9s %7s\n",
						       name, size_str(b, sb), g, st, g / st,
						       "n/a", "n/a");
					fflush(stdout);
				}
			}
		}
	}
#ifdef HAVE_MPI
	MPI_Finalize();
#endif
	free(d);
	free(s);
	free(stream_a);
	free(stream_b);
	return 0;
}
