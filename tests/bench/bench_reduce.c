// SPDX-License-Identifier: GPL-2.0
/*
 * bench-reduce: throughput of the collx reduction kernels on the host,
 * beside a STREAM-style add over buffers of the same size (the
 * memory-bandwidth ceiling for dst = dst + src) and Open MPI's
 * MPI_Reduce_local on the same buffers.  Not a test: it prints a table,
 * the ratios, and the worst ratio of each column.
 *
 * GB/s counts the bytes a reduction must move, 3 per byte of dst (read dst,
 * read src, write dst), for every contender alike; the figure is the best
 * of several timed repetitions, the contenders taking turns within each.
 *
 * Usage: bench_reduce [-q] [-s MiB] [-t TYPE] [-o OP] [-i IMPL] [-r REPS]
 *   -q: quick (largest size 256 MiB)  -s: largest size (default 1024)
 *   -t: one type (int8 ... e5m2)  -o: one op (sum, prod, max, min)
 *   -i: an implementation instead of the fastest (scalar, avx2, avx512,
 *       avx512bf16, neon); "all" adds a row for each one this CPU has
 *   -r: timed repetitions (default 5)
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
 * and 1 write per element like a reduction, vectorized by the compiler for
 * the widest vectors this CPU has.
 */
#define STREAM_BODY					\
	size_t i;					\
							\
	for (i = 0; i < n; i++)				\
		a[i] = a[i] + b[i]

#ifdef __x86_64__
__attribute__((target("avx512f,prefer-vector-width=512"),
	       optimize("O3", "tree-vectorize")))
static void stream_add_avx512(double *restrict a, const double *restrict b,
			      size_t n)
{
	STREAM_BODY;
}

__attribute__((target("avx2"), optimize("O3", "tree-vectorize")))
static void stream_add_avx2(double *restrict a, const double *restrict b, size_t n)
{
	STREAM_BODY;
}
#endif

__attribute__((optimize("O3", "tree-vectorize")))
static void stream_add_base(double *restrict a, const double *restrict b, size_t n)
{
	STREAM_BODY;
}

static void (*stream_add)(double *restrict, const double *restrict, size_t) =
	stream_add_base;
static const char *stream_isa = "baseline";

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
	stream_add(stream_a, stream_b, count * collx_dtype_size(dt) / sizeof(double));
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
	default: return MPI_DATATYPE_NULL;	/* no fp16/bf16/fp8 in MPI 3.1 */
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
	static const unsigned long long one[COLLX_DTYPE_COUNT] = {
		[COLLX_INT8] = 1, [COLLX_UINT8] = 1, [COLLX_INT32] = 1,
		[COLLX_UINT32] = 1, [COLLX_INT64] = 1, [COLLX_UINT64] = 1,
		[COLLX_FP16] = 0x3c00, [COLLX_FP32] = 0x3f800000,
		[COLLX_FP64] = 0x3ff0000000000000ULL, [COLLX_BF16] = 0x3f80,
		[COLLX_FP8_E4M3] = 0x38, [COLLX_FP8_E5M2] = 0x3c,
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

static int nreps = 5;

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
	for (rep = 0; rep < nreps; rep++) {
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

static const char *const dt_name[COLLX_DTYPE_COUNT] = {
	"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"fp16", "fp32", "fp64", "bf16", "e4m3", "e5m2",
};

static const char *const op_name[] = { "sum", "prod", "max", "min", "avg" };

static const char *const impl_names[COLLX_REDUCE_IMPL_COUNT] = {
	"auto", "scalar", "avx2", "avx512", "avx512bf16", "neon",
};

static const char *size_str(size_t b, char *buf)
{
	if (b >= 1 << 20)
		sprintf(buf, "%zuM", b >> 20);
	else
		sprintf(buf, "%zuK", b >> 10);
	return buf;
}

/* the worst ratio seen, per implementation and column, and where */
struct worst {
	double r;
	char where[48];
};

static struct worst worst_st[COLLX_REDUCE_IMPL_COUNT];
static struct worst worst_mpi[COLLX_REDUCE_IMPL_COUNT];

static void note(struct worst *w, double r, const char *name, const char *size)
{
	if (w->r == 0 || r < w->r) {
		w->r = r;
		snprintf(w->where, sizeof(w->where), "%s %s", name, size);
	}
}

static int lookup(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	fprintf(stderr, "bench_reduce: unknown name %s\n", s);
	exit(2);
}

int main(int argc, char **argv)
{
	static const int dts[] = {
		COLLX_FP32, COLLX_FP64, COLLX_FP16, COLLX_BF16,
		COLLX_FP8_E4M3, COLLX_FP8_E5M2, COLLX_INT8, COLLX_UINT8,
		COLLX_INT32, COLLX_UINT32, COLLX_INT64, COLLX_UINT64,
	};
	size_t sizes[] = { 32 << 10, 1 << 20, 16 << 20, 1024 << 20 };
	int nsizes = 4, opt, di, si, op, impl, k, nimpl = 0;
	int only_dt = -1, only_op = -1, want_impl = COLLX_REDUCE_AUTO, all = 0;
	int impls[COLLX_REDUCE_IMPL_COUNT];
	bench_fn fns[NCONT] = { run_collx, run_stream, NULL };
	double r[NCONT];
	size_t maxb;
	char sb[32];
	void *d, *s;

	while ((opt = getopt(argc, argv, "qs:t:o:i:r:")) != -1) {
		switch (opt) {
		case 'q':
			sizes[nsizes - 1] = 256 << 20;
			break;
		case 's':
			sizes[nsizes - 1] = (size_t)atoi(optarg) << 20;
			break;
		case 't':
			only_dt = lookup(dt_name, COLLX_DTYPE_COUNT, optarg);
			break;
		case 'o':
			only_op = lookup(op_name, 4, optarg);
			break;
		case 'i':
			if (!strcmp(optarg, "all"))
				all = 1;
			else
				want_impl = lookup(impl_names, COLLX_REDUCE_IMPL_COUNT,
						   optarg);
			break;
		case 'r':
			nreps = atoi(optarg) > 0 ? atoi(optarg) : 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-q] [-s MiB] [-t TYPE] [-o OP] "
				"[-i IMPL|all] [-r REPS]\n", argv[0]);
			return 2;
		}
	}
	if (all) {
		for (k = COLLX_REDUCE_SCALAR; k < COLLX_REDUCE_IMPL_COUNT; k++)
			if (collx_reduce_impl_available(k))
				impls[nimpl++] = k;
	} else {
		if (!collx_reduce_impl_available(want_impl)) {
			fprintf(stderr, "bench_reduce: %s not available here\n",
				impl_names[want_impl]);
			return 2;
		}
		impls[nimpl++] = want_impl;
	}
	maxb = sizes[nsizes - 1];
#ifdef HAVE_MPI
	MPI_Init(&argc, &argv);
#endif
#ifdef __x86_64__
	if (__builtin_cpu_supports("avx512f")) {
		stream_add = stream_add_avx512;
		stream_isa = "avx512";
	} else if (__builtin_cpu_supports("avx2")) {
		stream_add = stream_add_avx2;
		stream_isa = "avx2";
	}
#endif
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

	printf("# collx reduce benchmark: fastest implementation %s, STREAM add on %s\n",
	       collx_reduce_impl_name(COLLX_REDUCE_AUTO), stream_isa);
	printf("# GB/s = 3 x bytes of dst / time (read dst, read src, write dst); "
	       "best of %d\n", nreps);
	printf("%-24s %6s %9s %9s %7s %9s %7s\n", "kernel", "size", "GB/s",
	       "STREAM", "ratio", "MPI", "ratio");

	for (di = 0; di < (int)(sizeof(dts) / sizeof(dts[0])); di++) {
		int dt = dts[di];

		if (only_dt >= 0 && dt != only_dt)
			continue;
		for (op = COLLX_OP_SUM; op <= COLLX_OP_MIN; op++) {
			if (only_op >= 0 && op != only_op)
				continue;
			for (k = 0; k < nimpl; k++) {
				impl = impls[k];
				for (si = 0; si < nsizes; si++) {
					size_t b = sizes[si];
					double g, st, mp;
					char name[48];

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
					note(&worst_st[impl], g / st, name, size_str(b, sb));
					if (mp > 0) {
						note(&worst_mpi[impl], g / mp, name, sb);
						printf("%-24s %6s %9.2f %9.2f %7.2f %9.2f %7.2f\n",
						       name, sb, g, st, g / st, mp, g / mp);
					} else {
						printf("%-24s %6s %9.2f %9.2f %7.2f %9s %7s\n",
						       name, sb, g, st, g / st, "n/a", "n/a");
					}
					fflush(stdout);
				}
			}
		}
	}
	for (k = 0; k < nimpl; k++) {
		impl = impls[k];
		printf("# %s: worst x STREAM %.2f (%s)", collx_reduce_impl_name(impl),
		       worst_st[impl].r, worst_st[impl].where);
		if (worst_mpi[impl].r > 0)
			printf(", worst x MPI %.2f (%s)", worst_mpi[impl].r,
			       worst_mpi[impl].where);
		printf("\n");
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
