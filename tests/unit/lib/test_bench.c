// SPDX-License-Identifier: GPL-2.0
/*
 * The bench helpers: fp16/bf16/fp8 conversions, data exact for every dtype
 * x op in any reduction order, every collective's fill and check against
 * a simulation of it, nccl-tests' sizes, bus bandwidth and table format,
 * the JSON document (json-c), CPU accounting and strict number parsing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "benchcoll.h"
#include "benchdata.h"
#include "benchfmt.h"
#include "benchjson.h"
#include "cpustat.h"
#include "unit_lib.h"

static int test_half(void)
{
	int i;

	for (i = -2048; i <= 2048; i++) {
		CHECK(bench_f16_to_f32(bench_f32_to_f16((float)i)) == (float)i, "fp16 %d", i);
		if (i >= -256 && i <= 256)
			CHECK(bench_bf16_to_f32(bench_f32_to_bf16((float)i)) == (float)i, "bf16 %d", i);
	}
	CHECK(bench_f32_to_f16(1.0f) == 0x3c00, "1.0");
	CHECK(bench_f32_to_f16(65504.0f) == 0x7bff, "max");
	CHECK(bench_f32_to_f16(1e6f) == 0x7c00, "inf");
	CHECK(bench_f32_to_f16(2049.0f) == 0x6800, "tie to even: %x", bench_f32_to_f16(2049.0f));
	CHECK(bench_f32_to_f16(5.960464477539063e-08f) == 0x0001, "subnormal");
	CHECK(bench_f16_to_f32(0x0001) == 5.960464477539063e-08f, "subnormal back");
	CHECK(bench_f32_to_bf16(1.0f) == 0x3f80, "bf16 1.0");
	return 0;
}

static int test_fp8(void)
{
	int b;

	/* every finite pattern survives the round trip */
	for (b = 0; b < 256; b++) {
		float e4 = bench_e4m3_to_f32((uint8_t)b), e5 = bench_e5m2_to_f32((uint8_t)b);

		if (!isnan(e4))
			CHECK(bench_f32_to_e4m3(e4) == b || (e4 == 0 && (b & 0x7f) == 0),
			      "e4m3 %02x -> %g -> %02x", b, e4, bench_f32_to_e4m3(e4));
		if (!isnan(e5) && !isinf(e5))
			CHECK(bench_f32_to_e5m2(e5) == b || (e5 == 0 && (b & 0x7f) == 0),
			      "e5m2 %02x -> %g -> %02x", b, e5, bench_f32_to_e5m2(e5));
	}
	CHECK(bench_e4m3_to_f32(0x7e) == 448 && isnan(bench_e4m3_to_f32(0x7f)), "e4m3 max, NaN");
	CHECK(bench_e5m2_to_f32(0x7b) == 57344 && isinf(bench_e5m2_to_f32(0x7c)), "e5m2 max, inf");
	CHECK(bench_e4m3_to_f32(0x01) == ldexpf(1, -9) && bench_e5m2_to_f32(0x01) == ldexpf(1, -16),
	      "smallest subnormals");
	CHECK(bench_f32_to_e4m3(1000) == 0x7e && bench_f32_to_e4m3(-1e9f) == 0xfe, "e4m3 saturates");
	CHECK(bench_f32_to_e5m2(1e6f) == 0x7c, "e5m2 overflows to inf");
	/* ties to even: 17 is between 16 (even mantissa) and 18; 19 -> 20 */
	CHECK(bench_e4m3_to_f32(bench_f32_to_e4m3(17)) == 16 &&
	      bench_e4m3_to_f32(bench_f32_to_e4m3(19)) == 20, "e4m3 ties");
	CHECK(bench_e5m2_to_f32(bench_f32_to_e5m2(9)) == 8 &&
	      bench_e5m2_to_f32(bench_f32_to_e5m2(11)) == 12, "e5m2 ties");
	for (b = -16; b <= 16; b++)
		CHECK(bench_e4m3_to_f32(bench_f32_to_e4m3((float)b)) == b, "e4m3 %d", b);
	for (b = -8; b <= 8; b++)
		CHECK(bench_e5m2_to_f32(bench_f32_to_e5m2((float)b)) == b, "e5m2 %d", b);
	return 0;
}

static double apply(enum collx_redop op, double x, double y)
{
	return op == COLLX_OP_PROD ? x * y : op == COLLX_OP_MAX ? fmax(x, y) :
	       op == COLLX_OP_MIN ? fmin(x, y) : x + y;
}

/*
 * Reduce in the element type (rounding at every step, as the kernel
 * does through fp32), forward and backward, and compare with
 * bench_expected(): the data must be exact whatever the order.
 */
static int test_data_exact(void)
{
	int dt, op, n, r, rep;
	size_t i;
	char a[8], b[8], v[8];

	for (n = 1; n <= 8; n++)
		for (dt = 0; dt < COLLX_DTYPE_COUNT; dt++)
			for (op = 0; op < COLLX_OP_COUNT; op++)
				for (rep = 0; rep < 3; rep++)
					for (i = 0; i < 420; i++) {
						double ra, rb, want;

						bench_store(a, 0, dt, (double)bench_value(dt, op, n, 0, i, rep));
						bench_store(b, 0, dt, (double)bench_value(dt, op, n, n - 1, i, rep));
						for (r = 1; r < n; r++) {
							bench_store(v, 0, dt, (double)bench_value(dt, op, n, r, i, rep));
							bench_store(a, 0, dt, apply(op, bench_load(a, 0, dt),
										    bench_load(v, 0, dt)));
							bench_store(v, 0, dt, (double)bench_value(dt, op, n, n - 1 - r, i, rep));
							bench_store(b, 0, dt, apply(op, bench_load(b, 0, dt),
										    bench_load(v, 0, dt)));
						}
						ra = bench_load(a, 0, dt);
						rb = bench_load(b, 0, dt);
						if (op == COLLX_OP_AVG) {
							ra = bench_dtype_is_float(dt) ? ra / n : (double)((long long)ra / n);
							rb = bench_dtype_is_float(dt) ? rb / n : (double)((long long)rb / n);
						}
						want = bench_expected(dt, op, n, i, rep);
						CHECK(ra == want && rb == want,
						      "n %d %s %s i %zu: %g / %g, want %g", n,
						      collx_dtype_name(dt), collx_redop_name(op), i, ra, rb, want);
						bench_store(v, 0, dt, want);
						CHECK(bench_load(v, 0, dt) == want, "not representable");
					}
	return 0;
}

static int test_gen(void)
{
	int dt, src, distinct;
	size_t i, j;
	char v[8];

	for (dt = 0; dt < COLLX_DTYPE_COUNT; dt++) {
		for (src = 0; src < 8; src++)
			for (i = 0; i < 300; i++) {
				double x = (double)bench_gen(dt, src, i, 5);

				bench_store(v, 0, dt, x);
				CHECK(bench_load(v, 0, dt) == x, "%s: %g not exact", collx_dtype_name(dt), x);
			}
		/* neighbours differ, so a misplaced element shows */
		for (i = 0, distinct = 0; i < 64; i++)
			for (j = i + 1; j < 64; j++)
				distinct += bench_gen(dt, 0, i, 1) != bench_gen(dt, 0, j, 1);
		CHECK(distinct > 64 * 63 / 2 * 8 / 10, "%s: only %d distinct pairs",
		      collx_dtype_name(dt), distinct);
		CHECK(bench_gen(dt, 0, 3, 1) != bench_gen(dt, 1, 3, 1), "%s: ranks alike",
		      collx_dtype_name(dt));
	}
	return 0;
}

/* ---- every collective against a simulation of it ---- */

#define SIM_RANKS 5

static void reduce_into(const struct bench_op *o, char **in, size_t off, size_t count, int nin,
			char *out)
{
	size_t i;
	int q;

	for (i = 0; i < count; i++) {
		double acc = bench_load(in[0], off + i, o->dtype);
		char v[8];

		for (q = 1; q < nin; q++) {
			bench_store(v, 0, o->dtype, apply(o->redop, acc, bench_load(in[q], off + i, o->dtype)));
			acc = bench_load(v, 0, o->dtype);
		}
		if (o->redop == COLLX_OP_AVG)
			acc = bench_dtype_is_float(o->dtype) ? acc / nin : (double)((long long)acc / nin);
		bench_store(out, i, o->dtype, acc);
	}
}

/* What the collective does to every rank's buffers. */
static void simulate(struct bench_op *os, char **sp, char **rp, char **tmp)
{
	const struct bench_op *o = &os[0];
	size_t c = o->count, esz = collx_dtype_size(o->dtype);
	int n = o->nranks, r, j;

	for (r = 0; r < n; r++) {
		char *out = tmp[r];

		switch (o->kind) {
		case BENCH_ALLREDUCE:
		case BENCH_REDUCE:
			reduce_into(o, sp, 0, c, n, out);
			break;
		case BENCH_REDUCE_SCATTER:
			reduce_into(o, sp, r * c, c, n, out);
			break;
		case BENCH_ALLGATHER:
			for (j = 0; j < n; j++)
				memcpy(out + j * c * esz, sp[j], c * esz);
			break;
		case BENCH_BROADCAST:
			memcpy(out, sp[o->root], c * esz);
			break;
		case BENCH_ALLTOALL:
			for (j = 0; j < n; j++)
				memcpy(out + j * c * esz, sp[j] + r * c * esz, c * esz);
			break;
		case BENCH_SENDRECV:
			memcpy(out, sp[(r + n - 1) % n], c * esz);
			break;
		default:
			break;
		}
	}
	for (r = 0; r < n; r++) {
		size_t s, rv;

		if (o->kind == BENCH_REDUCE && r != o->root)
			continue;
		bench_op_elems(&os[r], &s, &rv);
		memcpy(rp[r], tmp[r], rv * esz);
	}
}

static int sim_one(enum bench_kind k, int n, enum collx_dtype dt, enum collx_redop op, int root,
		   size_t count, bool inplace)
{
	struct bench_op os[SIM_RANKS];
	char *send[SIM_RANKS], *recv[SIM_RANKS], *sp[SIM_RANKS], *rp[SIM_RANKS], *tmp[SIM_RANKS];
	size_t bytes = count * 8 * SIM_RANKS + 64, wrong;
	char why[160];
	int r, bad = 0;

	for (r = 0; r < n; r++) {
		os[r] = (struct bench_op){ .kind = k, .dtype = dt, .redop = op, .root = root,
					   .count = count, .inplace = inplace, .nranks = n,
					   .rank = r, .rep = 3 };
		send[r] = calloc(1, bytes);
		recv[r] = calloc(1, bytes);
		tmp[r] = calloc(1, bytes);
		bench_op_fill(&os[r], send[r], recv[r]);
		bench_op_bufs(&os[r], send[r], recv[r], (void **)&sp[r], (void **)&rp[r]);
	}
	simulate(os, sp, rp, tmp);
	for (r = 0; r < n && !bad; r++) {
		wrong = bench_op_check(&os[r], send[r], recv[r], why, sizeof(why));
		if (wrong) {
			printf("#   %s n %d %s %s root %d count %zu %s rank %d: %zu wrong, %s\n",
			       bench_coll_get(k)->name, n, collx_dtype_name(dt), collx_redop_name(op),
			       root, count, inplace ? "in place" : "out of place", r, wrong, why);
			bad = 1;
		}
	}
	/* and the check sees a wrong element, and a changed input */
	if (!bad && count && (k != BENCH_REDUCE || root == 0)) {
		/* the lowest bit of the first element: a neighbouring value */
		((unsigned char *)rp[0])[0] ^= 1;
		if (!bench_op_check(&os[0], send[0], recv[0], why, sizeof(why))) {
			printf("#   %s: a wrong output element went unseen\n", bench_coll_get(k)->name);
			bad = 1;
		}
	}
	if (!bad && count && !inplace && (k != BENCH_BROADCAST || root == 1 % n) && n > 1) {
		int q = k == BENCH_BROADCAST ? root : 1;

		bench_op_fill(&os[q], send[q], recv[q]);
		((unsigned char *)sp[q])[0] ^= 1;
		if (!bench_op_check(&os[q], send[q], recv[q], why, sizeof(why))) {
			printf("#   %s: a changed send buffer went unseen\n", bench_coll_get(k)->name);
			bad = 1;
		}
	}
	for (r = 0; r < n; r++) {
		free(send[r]);
		free(recv[r]);
		free(tmp[r]);
	}
	return bad;
}

static int test_colls(void)
{
	static const size_t counts[] = { 0, 1, 3, 7 };
	int k, n, dt, op, ip, ci, root, runs = 0;

	for (k = 0; k < BENCH_BARRIER; k++)
		for (n = 1; n <= SIM_RANKS; n++)
			for (dt = 0; dt < COLLX_DTYPE_COUNT; dt++)
				for (op = 0; op < (bench_coll_get(k)->has_op ? COLLX_OP_COUNT : 1); op++)
					for (root = 0; root < (bench_coll_get(k)->has_root ? n : 1); root++)
						for (ip = 0; ip < (bench_coll_get(k)->inplace ? 2 : 1); ip++)
							for (ci = 0; ci < 4; ci++) {
								CHECK(!sim_one(k, n, dt, op, root, counts[ci], ip),
								      "see above");
								runs++;
							}
	printf("#   %d simulated collectives checked\n", runs);
	return 0;
}

static int test_coll_table(void)
{
	struct bench_op o = { .kind = BENCH_ALLREDUCE, .dtype = COLLX_FP32, .nranks = 4,
			      .count = 262144 };
	enum collx_algo algos[8];
	double alg, bus;

	CHECK(bench_coll_find("all_reduce_perf") == bench_coll_get(BENCH_ALLREDUCE) &&
	      bench_coll_find("allreduce") == bench_coll_get(BENCH_ALLREDUCE) &&
	      bench_coll_find("reducescatter") == bench_coll_get(BENCH_REDUCE_SCATTER) &&
	      bench_coll_find("sendrecv_perf") == bench_coll_get(BENCH_SENDRECV) &&
	      !bench_coll_find("all_to_all_perf_x"), "names");
	bench_op_bw(&o, 0.001, &alg, &bus);
	CHECK(fabs(alg - 1.048576) < 1e-9 && fabs(bus - 1.572864) < 1e-9, "allreduce %g %g", alg, bus);
	o.kind = BENCH_ALLGATHER;
	o.count = 1000;
	bench_op_bw(&o, 0.001, &alg, &bus);
	CHECK(fabs(alg - 0.016) < 1e-12 && fabs(bus - 0.012) < 1e-12, "allgather %g %g", alg, bus);
	CHECK(bench_op_bytes(&o) == 16000, "allgather size %zu", bench_op_bytes(&o));
	o.kind = BENCH_REDUCE;
	bench_op_bw(&o, 0.001, &alg, &bus);
	CHECK(alg == bus, "reduce factor 1");
	CHECK(bench_busbw_factor(BENCH_BROADCAST, 8) == 1 && bench_busbw_factor(BENCH_SENDRECV, 8) == 1 &&
	      bench_busbw_factor(BENCH_ALLTOALL, 8) == 7.0 / 8 &&
	      bench_busbw_factor(BENCH_REDUCE_SCATTER, 8) == 7.0 / 8, "factors");
	CHECK(bench_count_from_bytes(BENCH_ALLGATHER, 1 << 20, 4, 3) == 87380 &&
	      bench_count_from_bytes(BENCH_ALLTOALL, 1 << 20, 1, 3) == 349520 &&
	      bench_count_from_bytes(BENCH_ALLREDUCE, 1 << 20, 2, 3) == 524288,
	      "counts from sizes");
	CHECK(bench_coll_algos(BENCH_ALLREDUCE, algos) == 4 && algos[0] == COLLX_ALGO_AUTO &&
	      algos[3] == COLLX_ALGO_RD, "allreduce algos");
	CHECK(bench_coll_algos(BENCH_ALLTOALL, algos) == 3 && algos[2] == COLLX_ALGO_PAIRWISE,
	      "alltoall algos");
	return 0;
}

/* The row and header text, column for column as nccl-tests prints them. */
static int test_format(void)
{
	char line[256], hdr[2048], s[16];
	FILE *f;
	size_t got;
	int n;

	n = bench_fmt_lead(line, sizeof(line), 8, 2, "float", "sum", -1);
	n += bench_fmt_half(line + n, sizeof(line) - n, 17.39, 0.0, 0.0, 0);
	bench_fmt_half(line + n, sizeof(line) - n, 16.26, 0.0, 0.0, 0);
	CHECK(!strcmp(line, "           8             2     float     sum      -1    17.39    0.00    0.00       0    16.26    0.00    0.00       0"),
	      "'%s'", line);
	n = bench_fmt_lead(line, sizeof(line), 1073741824, 268435456, "float", "sum", -1);
	bench_fmt_half(line + n, sizeof(line) - n, 44023, 24.39, 45.73, 0);
	CHECK(!strcmp(line, "  1073741824     268435456     float     sum      -1  44023.0   24.39   45.73       0"),
	      "'%s'", line);
	bench_fmt_half(line, sizeof(line), 583.4, 1.80, 1.80, -1);
	CHECK(!strcmp(line, "   583.40    1.80    1.80    N/A"), "'%s'", line);
	bench_float_str(123456.7, 6, s);
	CHECK(!strcmp(s, "123457"), "'%s'", s);
	bench_float_str(12345678901.0, 7, s);
	CHECK(!strcmp(s, "1.2e+10"), "'%s'", s);
	CHECK(bench_fmt_null_half(line, sizeof(line)) == 32, "null half");
	f = tmpfile();
	bench_print_header(f, false, false);
	bench_print_footer(f, 0, 1.5, -1, "all_reduce_perf");
	rewind(f);
	got = fread(hdr, 1, sizeof(hdr) - 1, f);
	hdr[got] = 0;
	fclose(f);
	CHECK(strstr(hdr, "\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"),
	      "'%s'", hdr);
	CHECK(strstr(hdr, "\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"),
	      "'%s'", hdr);
	CHECK(strstr(hdr, "\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.5 \n#\n# Collective test concluded: all_reduce_perf\n"),
	      "'%s'", hdr);
	f = tmpfile();
	bench_print_header(f, true, true);
	bench_print_footer(f, 3, 1.0, 2.0, "x");
	rewind(f);
	got = fread(hdr, 1, sizeof(hdr) - 1, f);
	hdr[got] = 0;
	fclose(f);
	CHECK(strstr(hdr, " cputime ") && strstr(hdr, " caller    node  caller    node\n"), "'%s'", hdr);
	CHECK(strstr(hdr, ": 3 FAILED\n") && strstr(hdr, ": 1 FAILED\n"), "'%s'", hdr);
	bench_fmt_cpu(line, sizeof(line), 0.5, 67.25);
	CHECK(!strcmp(line, "    0.50   67.25"), "'%s'", line);
	return 0;
}

static json_object *get(json_object *o, const char *path)
{
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, atoi(tok));
		else if (!json_object_object_get_ex(o, tok, &o))
			return NULL;
	}
	return o;
}

static int test_json(void)
{
	char *argv[] = { "all_reduce_perf", "-b", "8", NULL };
	char *envp[] = { "COLLX_ALGO=ring", "SLURM_JOB_ID=42", "AWS_SECRET_ACCESS_KEY=x",
			 "RANKS=1", "RANK=0", NULL };
	struct bench_json_config c = { .program = "all_reduce_perf", .collective = "allreduce",
				       .algorithm = "ring", .memory = "host", .nranks = 4,
				       .minbytes = 8, .maxbytes = 1024, .stepfactor = 2,
				       .iters = 20, .agg = 1, .warmup = 1, .check = 1,
				       .module_version = "0.2.0", .abi_major = 1, .abi_minor = 1 };
	char dir[] = "/tmp/collx-unit-json-XXXXXX", path[256], used[300], used2[300];
	json_object *doc, *devs, *row, *back, *e;
	size_t i;
	bool have_algo = false, have_slurm = false, have_rank = false;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/out.json", dir);
	doc = bench_json_new(3, argv, envp);
	devs = json_object_new_array();
	json_object_array_add(devs, bench_json_device(0, 123, "node0", "rxe0:1 10.77.0.10 MTU 4096"));
	bench_json_config(doc, &c, devs);
	row = bench_json_row(doc, 8, 2, "float", "sum", -1);
	bench_json_half(row, false, false, 17.5, 0.1, 0.15, 0, true, 0.5, 60);
	bench_json_half(row, true, false, 16.5, 0.1, 0.15, -1, true, 0.5, 60);
	bench_json_row_end(row, 20);
	row = bench_json_row(doc, 64, 16, "float", "none", -1);
	bench_json_half(row, false, true, 3, 1, 2, 5, false, 0, 0);
	bench_json_null_half(row, true);
	bench_json_row_end(row, 20);
	bench_json_finish(doc, 1, 0.5, -1, NULL);
	CHECK(bench_json_write(doc, path, used, sizeof(used)) == 0 && !strcmp(used, path), "%s", used);
	CHECK(bench_json_write(doc, path, used2, sizeof(used2)) == 0 &&
	      !strcmp(used2 + strlen(path), ".0"), "second file %s", used2);
	json_object_put(doc);
	back = json_object_from_file(path);
	unlink(used);
	unlink(used2);
	rmdir(dir);
	CHECK(back, "not JSON");
	CHECK(json_object_get_int(get(back, "version")) == 3, "version");
	CHECK(json_object_array_length(get(back, "args")) == 3 &&
	      !strcmp(json_object_get_string(get(back, "args.1")), "-b"), "args");
	e = get(back, "env");
	for (i = 0; e && i < json_object_array_length(e); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(e, i));

		CHECK(!strstr(s, "AWS") && strcmp(s, "RANKS=1"), "kept %s", s);
		have_algo |= !strcmp(s, "COLLX_ALGO=ring");
		have_slurm |= !strcmp(s, "SLURM_JOB_ID=42");
		have_rank |= !strcmp(s, "RANK=0");
	}
	CHECK(have_algo && have_slurm && have_rank, "env lost collx/launcher entries");
	CHECK(get(back, "host") && json_object_get_int(get(back, "collx_version")) == 10100 &&
	      !strcmp(json_object_get_string(get(back, "module_version")), "0.2.0") &&
	      !strcmp(json_object_get_string(get(back, "abi")), "1.1"), "versions");
	CHECK(json_object_get_int(get(back, "config.step_factor")) == 2 &&
	      !get(back, "config.step_bytes") &&
	      !strcmp(json_object_get_string(get(back, "config.devices.0.hostname")), "node0") &&
	      json_object_get_int(get(back, "config.devices.0.pid")) == 123, "config");
	CHECK(!strcmp(json_object_get_string(get(back, "results.0.root")), "    -1"), "root");
	CHECK(json_object_get_double(get(back, "results.0.out_of_place.time")) == 17.5 &&
	      json_object_get_double(get(back, "results.0.out_of_place.node_busy_pct")) == 60 &&
	      json_object_get_double(get(back, "results.0.out_of_place.nwrong")) == 0 &&
	      json_object_object_get_ex(get(back, "results.0.in_place"), "nwrong", &e) && !e,
	      "row 0");
	CHECK(json_object_get_double(get(back, "results.1.out_of_place.cpu_time")) == 3 &&
	      json_object_object_get_ex(get(back, "results.1"), "in_place", &e) && !e &&
	      json_object_get_int(get(back, "results.1.actual_iterations")) == 20, "row 1");
	CHECK(json_object_get_int(get(back, "out_of_bounds.count")) == 1 &&
	      !json_object_get_boolean(get(back, "out_of_bounds.okay")) &&
	      !strcmp(json_object_get_string(get(back, "average_bus_bandwidth.okay")), "unchecked") &&
	      json_object_array_length(get(back, "errors")) == 0 && get(back, "end_time"), "footer");
	json_object_put(back);
	return 0;
}

static int test_cpustat(void)
{
	unsigned long long busy, total;
	struct bench_cpu a, b;
	double caller, node;
	volatile double x = 1;
	int i;

	CHECK(bench_proc_stat_line("cpu  100 5 50 1000 20 1 2 3 0 0\n", &busy, &total) == 0 &&
	      total == 1181 && busy == 161, "%llu %llu", busy, total);
	CHECK(bench_proc_stat_line("cpu0 1 2 3 4\n", &busy, &total) == -1, "per-cpu line");
	/*
	 * A busy loop uses the caller's CPU, a sleep does not.  How much of a
	 * CPU the loop gets is the host's to say (make check runs this at
	 * nice 19 beside four emulated nodes: 0.7 % once), so it spins until
	 * it has used 0.1 s of CPU (10 s at most) and the check is that the
	 * accounting saw that time, within the wall time it took.
	 */
	bench_cpu_sample(&a);
	do {
		for (i = 0; i < 100000; i++)
			x = x * 1.0000001;
		bench_cpu_sample(&b);
	} while (b.self_s - a.self_s < 0.1 && b.wall_s - a.wall_s < 10);
	bench_cpu_delta(&a, &b, &caller, &node);
	CHECK(b.self_s - a.self_s >= 0.1 && caller > 0 && caller < 105,
	      "a busy loop: %.3f s of CPU in %.3f s, %.1f %% of a CPU",
	      b.self_s - a.self_s, b.wall_s - a.wall_s, caller);
	CHECK(node > 0 && node <= 100, "node %.1f %% busy while we spin", node);
	bench_cpu_sample(&a);
	usleep(200000);
	bench_cpu_sample(&b);
	bench_cpu_delta(&a, &b, &caller, &node);
	CHECK(caller < 5, "a sleep took %.1f %% of a CPU", caller);
	return 0;
}

static int test_parse(void)
{
	size_t s;
	long v;

	CHECK(bench_parse_dtype("float") == COLLX_FP32 && bench_parse_dtype("bf16") == COLLX_BF16 &&
	      bench_parse_dtype("half") == COLLX_FP16 && bench_parse_dtype("uint64") == COLLX_UINT64 &&
	      bench_parse_dtype("f8e4m3") == COLLX_FP8_E4M3 &&
	      bench_parse_dtype("fp8_e5m2") == COLLX_FP8_E5M2 && bench_parse_dtype("quad") == -1,
	      "dtypes");
	CHECK(bench_parse_redop("avg") == COLLX_OP_AVG && bench_parse_redop("xor") == -1, "ops");
	CHECK(!bench_parse_size("8", &s) && s == 8, "8");
	CHECK(!bench_parse_size("1K", &s) && s == 1024, "1K");
	CHECK(!bench_parse_size("64M", &s) && s == 64u << 20, "64M");
	CHECK(!bench_parse_size("1G", &s) && s == 1u << 30, "1G");
	CHECK(!bench_parse_size("1MB", &s) && s == 1u << 20, "1MB");
	CHECK(!bench_parse_size("1.5K", &s) && s == 1536, "1.5K");
	CHECK(!bench_parse_size("0", &s) && s == 0, "0");
	CHECK(bench_parse_size("x", &s) == -1 && bench_parse_size("8X", &s) == -1 &&
	      bench_parse_size("-8", &s) == -1 && bench_parse_size("", &s) == -1, "bad sizes");
	CHECK(!bench_parse_int("20", 0, 100, &v) && v == 20, "20");
	CHECK(!bench_parse_int("-1", -1, 100, &v) && v == -1, "-1");
	CHECK(bench_parse_int("abc", 0, 100, &v) == -1 && bench_parse_int("5x", 0, 100, &v) == -1 &&
	      bench_parse_int("", 0, 100, &v) == -1 && bench_parse_int("101", 0, 100, &v) == -1 &&
	      bench_parse_int(" 5", 0, 100, &v) == -1, "strict");
	return 0;
}

const struct unit_test bench_tests[] = {
	{ "bench: fp16/bf16 conversions", test_half },
	{ "bench: fp8 E4M3/E5M2 conversions (round to even, saturation, inf)", test_fp8 },
	{ "bench: reduction data exact for every dtype x op x 1..8 ranks, any order", test_data_exact },
	{ "bench: data-movement values exact and distinct in every dtype", test_gen },
	{ "bench: every collective's fill and check against a simulation", test_colls },
	{ "bench: nccl-tests names, sizes, bus bandwidth factors, algorithms", test_coll_table },
	{ "bench: nccl-tests row, header and footer format", test_format },
	{ "bench: -J document (json-c), filtered env, never overwrites", test_json },
	{ "bench: caller and node CPU accounting", test_cpustat },
	{ "bench: strict number parsing, type/op/size names", test_parse },
	{ NULL, NULL },
};
