// SPDX-License-Identifier: GPL-2.0
/*
 * Gloo's ring allreduce over its ibverbs transport, timed like collx-bench
 * (fp32 sum, sizes doubling from MIN to MAX bytes, out of place), so that
 * tests/lab/demo.sh can print collx's bus bandwidth against Gloo's on the
 * same nodes in the same run.  Ranks meet through a FileStore in a folder
 * every node sees.  The result is checked exactly; a wrong element makes
 * the exit status 1.
 *
 *   gloo_allreduce RANK NRANKS STORE_DIR IBDEV GID_INDEX MIN MAX ITERS
 */
#include <gloo/allreduce_ring.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/ibverbs/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unistd.h>
#include <vector>

static double now_us()
{
	using namespace std::chrono;
	return duration_cast<duration<double, std::micro>>(
		steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: %s RANK NRANKS STORE_DIR IBDEV GID_INDEX MIN MAX ITERS\n",
			argv[0]);
		return 2;
	}
	int rank = atoi(argv[1]), n = atoi(argv[2]), iters = atoi(argv[8]);
	size_t min = strtoull(argv[6], nullptr, 0), max = strtoull(argv[7], nullptr, 0);
	gloo::transport::ibverbs::attr attr = { argv[4], 1, atoi(argv[5]) };
	auto dev = gloo::transport::ibverbs::CreateDevice(attr);
	gloo::rendezvous::FileStore store(argv[3]);
	gloo::rendezvous::PrefixStore prefix("gloo-bench", store);
	auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
	long wrong = 0;

	ctx->setTimeout(std::chrono::seconds(60));
	ctx->connectFullMesh(prefix, dev);
	if (rank == 0)
		printf("# gloo allreduce_ring, ibverbs %s gid %s, nRanks %d, fp32 sum, iters %d\n"
		       "#%12s %12s %8s %10s %8s %8s %7s\n", argv[4], argv[5], n, iters,
		       "size", "count", "type", "time(us)", "algbw", "busbw", "#wrong");
	/*
	 * Every size keeps its buffer and algorithm (its registered memory and
	 * pair slots) to the end: Gloo's ibverbs buffers refuse to be
	 * destroyed while a send completion is still unpolled, so the process
	 * leaves with _exit() instead of running the destructors.
	 */
	std::vector<std::unique_ptr<std::vector<float>>> bufs;
	std::vector<std::unique_ptr<gloo::AllreduceRing<float>>> rings;

	for (size_t bytes = min; bytes <= max; bytes *= 2) {
		size_t count = bytes / sizeof(float);
		double t0, us;
		long bad = 0;

		bufs.emplace_back(new std::vector<float>(count));
		std::vector<float> &buf = *bufs.back();
		std::vector<float *> ptrs = { buf.data() };
		rings.emplace_back(new gloo::AllreduceRing<float>(ctx, ptrs, count));
		gloo::AllreduceRing<float> &ring = *rings.back();

		for (size_t i = 0; i < count; i++)
			buf[i] = (float)(rank + 1 + i % 7);
		ring.run();	/* warm-up, checked */
		for (size_t i = 0; i < count; i++)
			bad += buf[i] != (float)(n * (n + 1) / 2 + n * (i % 7));
		t0 = now_us();
		for (int it = 0; it < iters; it++)
			ring.run();
		us = (now_us() - t0) / iters;
		wrong += bad;
		if (rank == 0) {
			double algbw = bytes / us / 1e3;

			printf(" %12zu %12zu %8s %10.1f %8.4f %8.4f %7ld\n", bytes, count,
			       "float", us, algbw, algbw * 2 * (n - 1) / n, bad);
		}
	}
	if (rank == 0)
		printf("# gloo wrong elements: %ld\n", wrong);
	fflush(stdout);
	_exit(wrong ? 1 : 0);
}
