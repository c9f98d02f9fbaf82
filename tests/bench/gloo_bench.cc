// SPDX-License-Identifier: GPL-2.0
/*
 * Gloo's collectives over its ibverbs transport, timed as collx-bench
 * times collx's (fp32, nccl-tests' sizes), for tests/bench/bench.sh: every
 * algorithm named, at every SIZE:ITERS given, in one process (one
 * full-mesh connection).  Each rank prints its own figures (bench_report.py
 * takes the mean over the ranks, as collx-bench -a 1 does):
 *
 *   gloo COLL BYTES COUNT ITERS TIME_US CALLER_PCT NODE_PCT WRONG
 *   gloo COLL unsupported MESSAGE
 *
 * BYTES is nccl-tests' S (the larger buffer: allgather's output,
 * reduce-scatter's input); COUNT its count (per rank for allgather,
 * reduce-scatter, alltoall).  TIME_US is the mean of ITERS runs, each
 * waited for (Gloo's run() blocks); CALLER_PCT the process's CPU time
 * (getrusage: every thread, Gloo's own included) and NODE_PCT the node's
 * busy CPU (/proc/stat), both in % of the timed loop's wall time, measured
 * by user/common/cpustat.c as collx-bench does.  WRONG counts elements
 * that differ from the exact result of one checked run before the timed
 * ones (reported, not an error: see the end of main()).  A collective Gloo cannot run on
 * this transport (its alltoall needs unbound buffers, which Gloo's
 * ibverbs transport does not have: its reduce and alltoall) prints
 * "unsupported" and Gloo's reason.
 *
 *   gloo_bench RANK NRANKS STORE_DIR IBDEV GID_INDEX COLL[,COLL...] SIZE:ITERS[,...]
 *
 * COLL: allreduce_ring allreduce_hd (halving-doubling) broadcast (one to
 * all, root 0) allgather (ring) reduce_scatter (halving-doubling) reduce
 * (root 0) alltoall.
 */
#include <gloo/allgather_ring.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/alltoall.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/ibverbs/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" {
#include "cpustat.h"
}

namespace {

struct size_iters {
	size_t bytes;
	int iters;
};

/* One collective at one size: its buffers and Gloo algorithm live until
 * _exit() (Gloo's ibverbs buffers refuse to be destroyed while a send
 * completion is unpolled, see gloo_allreduce.cc). */
struct instance {
	std::vector<float> a, b;
	std::unique_ptr<gloo::Algorithm> algo;
	std::function<void()> run;
	std::function<long()> check;
	size_t count;
};

std::vector<std::unique_ptr<instance>> keep;

/* Element i of rank r's input, and the sum of it over n ranks. */
float value(int r, size_t i)
{
	return (float)(r + 1 + i % 7);
}

float sum_of(int n, size_t i)
{
	return (float)(n * (n + 1) / 2 + n * (i % 7));
}

/* Distinct per source rank and index, exact in fp32. */
float tag(int r, size_t i)
{
	return (float)(r * 4096 + i % 4096);
}

/* allreduce, broadcast and reduce move the whole buffer; the rest a part
 * of it per rank, so S holds at least one fp32 per rank. */
bool whole_buffer(const std::string &coll)
{
	return coll == "allreduce_ring" || coll == "allreduce_hd" || coll == "broadcast" ||
	       coll == "reduce";
}

std::unique_ptr<instance> make(const std::string &coll, const std::shared_ptr<gloo::Context> &ctx,
			       size_t bytes)
{
	const int n = ctx->size, rank = ctx->rank;
	std::unique_ptr<instance> in(new instance);
	instance *p = in.get();
	size_t total = bytes / sizeof(float);

	if (coll == "allreduce_ring" || coll == "allreduce_hd") {
		p->count = total;
		p->a.resize(total);
		std::vector<float *> ptrs = { p->a.data() };
		if (coll == "allreduce_ring")
			p->algo.reset(new gloo::AllreduceRing<float>(ctx, ptrs, (int)total));
		else
			p->algo.reset(new gloo::AllreduceHalvingDoubling<float>(ctx, ptrs, (int)total));
		for (size_t i = 0; i < total; i++)
			p->a[i] = value(rank, i);
		p->check = [p, n]() {
			long bad = 0;

			for (size_t i = 0; i < p->a.size(); i++)
				bad += p->a[i] != sum_of(n, i);
			return bad;
		};
	} else if (coll == "broadcast") {
		p->count = total;
		p->a.resize(total);
		std::vector<float *> ptrs = { p->a.data() };
		p->algo.reset(new gloo::BroadcastOneToAll<float>(ctx, ptrs, total, 0));
		for (size_t i = 0; i < total; i++)
			p->a[i] = rank == 0 ? tag(0, i) : -1.0f;
		p->check = [p]() {
			long bad = 0;

			for (size_t i = 0; i < p->a.size(); i++)
				bad += p->a[i] != tag(0, i);
			return bad;
		};
	} else if (coll == "allgather") {
		size_t part = total / n;

		p->count = part;
		p->a.resize(part);
		p->b.assign(part * n, -1.0f);
		std::vector<const float *> in_ptrs = { p->a.data() };
		p->algo.reset(new gloo::AllgatherRing<float>(ctx, in_ptrs, p->b.data(), (int)part));
		for (size_t i = 0; i < part; i++)
			p->a[i] = tag(rank, i);
		p->check = [p, n, part]() {
			long bad = 0;

			for (int r = 0; r < n; r++)
				for (size_t i = 0; i < part; i++)
					bad += p->b[r * part + i] != tag(r, i);
			return bad;
		};
	} else if (coll == "reduce_scatter") {
		size_t part = total / n;
		std::vector<int> recv(n, (int)part);

		p->count = part;
		p->a.resize(part * n);
		std::vector<float *> ptrs = { p->a.data() };
		p->algo.reset(new gloo::ReduceScatterHalvingDoubling<float>(ctx, ptrs,
									     (int)(part * n), recv));
		for (size_t i = 0; i < part * n; i++)
			p->a[i] = value(rank, i);
		/* rank r's block (elements r*part...) lands at the front */
		p->check = [p, n, rank, part]() {
			long bad = 0;

			(void)n;
			for (size_t i = 0; i < part; i++)
				bad += p->a[i] != sum_of(n, rank * part + i);
			return bad;
		};
	} else if (coll == "reduce") {
		auto opts = std::make_shared<gloo::ReduceOptions>(ctx);

		p->count = total;
		p->a.resize(total);
		p->b.assign(total, -1.0f);
		for (size_t i = 0; i < total; i++)
			p->a[i] = value(rank, i);
		/* Gloo's ibverbs transport throws here (no unbound buffers). */
		opts->setInput(p->a.data(), total);
		opts->setOutput(p->b.data(), total);
		opts->setRoot(0);
		opts->setReduceFunction([](void *c, const void *x, const void *y, size_t k) {
			gloo::sum<float>(c, x, y, k);
		});
		p->run = [opts]() { gloo::reduce(*opts); };
		p->check = [p, n, rank]() {
			long bad = 0;

			for (size_t i = 0; rank == 0 && i < p->b.size(); i++)
				bad += p->b[i] != sum_of(n, i);
			return bad;
		};
	} else if (coll == "alltoall") {
		size_t part = total / n;
		auto opts = std::make_shared<gloo::AlltoallOptions>(ctx);

		p->count = part;
		p->a.resize(part * n);
		p->b.assign(part * n, -1.0f);
		for (int d = 0; d < n; d++)
			for (size_t i = 0; i < part; i++)
				p->a[d * part + i] = tag(rank, d * part + i);
		/* Gloo's ibverbs transport throws here (no unbound buffers). */
		opts->setInput(p->a.data(), p->a.size());
		opts->setOutput(p->b.data(), p->b.size());
		p->run = [opts]() { gloo::alltoall(*opts); };
		p->check = [p, n, rank, part]() {
			long bad = 0;

			for (int s = 0; s < n; s++)
				for (size_t i = 0; i < part; i++)
					bad += p->b[s * part + i] != tag(s, rank * part + i);
			return bad;
		};
	} else {
		throw std::invalid_argument("unknown collective " + coll);
	}
	if (!p->run) {
		gloo::Algorithm *a = p->algo.get();

		p->run = [a]() { a->run(); };
	}
	return in;
}

std::vector<std::string> split(const char *s)
{
	std::vector<std::string> out;
	std::stringstream ss(s);
	std::string item;

	while (std::getline(ss, item, ','))
		if (!item.empty())
			out.push_back(item);
	return out;
}

bool parse_sizes(const char *s, std::vector<size_iters> &out)
{
	for (const std::string &item : split(s)) {
		size_iters si;
		char *end;

		si.bytes = strtoull(item.c_str(), &end, 0);
		if (*end != ':' || si.bytes == 0)
			return false;
		si.iters = atoi(end + 1);
		if (si.iters < 1 || si.iters > 100000)
			return false;
		out.push_back(si);
	}
	return !out.empty();
}

/* Gloo's messages are several lines; one line for the table. */
std::string one_line(const char *what)
{
	std::string s(what);

	for (char &c : s)
		if (c == '\n' || c == '\r')
			c = ' ';
	return s;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr,
			"usage: %s RANK NRANKS STORE_DIR IBDEV GID_INDEX COLL[,COLL...] SIZE:ITERS[,...]\n",
			argv[0]);
		return 2;
	}
	int rank = atoi(argv[1]), n = atoi(argv[2]);
	std::vector<std::string> colls = split(argv[6]);
	std::vector<size_iters> sizes;

	if (!parse_sizes(argv[7], sizes) || colls.empty() || n < 1 || rank < 0 || rank >= n) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	gloo::transport::ibverbs::attr attr = { argv[4], 1, atoi(argv[5]) };
	auto dev = gloo::transport::ibverbs::CreateDevice(attr);
	gloo::rendezvous::FileStore store(argv[3]);
	gloo::rendezvous::PrefixStore prefix("gloo-bench", store);
	auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
	long wrong = 0;

	ctx->setTimeout(std::chrono::seconds(120));
	ctx->connectFullMesh(prefix, dev);
	gloo::BarrierAllToAll barrier(ctx);

	printf("# gloo-bench rank %d of %d, ibverbs %s gid %s, fp32, run() waited for each\n"
	       "#    coll bytes count iters time_us caller_pct node_pct wrong\n",
	       rank, n, argv[4], argv[5]);
	for (const std::string &coll : colls) {
		for (const size_iters &si : sizes) {
			std::unique_ptr<instance> in;
			struct bench_cpu ca, cb;
			double caller, node, us;
			long bad;

			/* Below one fp32 per rank Gloo would register a zero-length
			 * buffer (ibv_reg_mr: EINVAL) and the collective would read
			 * as unsupported at every size: skip the size instead. */
			if (!whole_buffer(coll) && si.bytes / sizeof(float) < (size_t)n) {
				printf("# gloo %s %zu: less than one fp32 per rank, skipped\n",
				       coll.c_str(), si.bytes);
				continue;
			}
			try {
				in = make(coll, ctx, si.bytes);
			} catch (const std::invalid_argument &e) {
				fprintf(stderr, "%s: %s\n", argv[0], e.what());
				fflush(stdout);
				_exit(2);
			} catch (const std::exception &e) {
				/* the same on every rank: nothing was sent yet */
				printf("gloo %s unsupported %s\n", coll.c_str(), one_line(e.what()).c_str());
				break;
			}
			in->run();	/* warm-up, checked */
			bad = in->check();
			barrier.run();
			bench_cpu_sample(&ca);
			for (int it = 0; it < si.iters; it++)
				in->run();
			bench_cpu_sample(&cb);
			bench_cpu_delta(&ca, &cb, &caller, &node);
			us = (cb.wall_s - ca.wall_s) * 1e6 / si.iters;
			wrong += bad;
			printf("gloo %s %zu %zu %d %.1f %.2f %.2f %ld\n", coll.c_str(),
			       in->count * sizeof(float) * (whole_buffer(coll) ? 1 : n),
			       in->count, si.iters, us, caller, node, bad);
			fflush(stdout);
			keep.push_back(std::move(in));
		}
	}
	/* Each line says how many elements came out wrong; bench_report.py
	 * reports them as Gloo's, not as a failed run: Gloo's
	 * ReduceScatterHalvingDoubling overwrites, in its distribution phase,
	 * the block it is still sending (no waitSend), and rank 0 can get
	 * wrong data at 1 MiB and more (Documentation/bench.md). */
	printf("# gloo wrong elements: %ld\n", wrong);
	fflush(stdout);
	_exit(0);
}
