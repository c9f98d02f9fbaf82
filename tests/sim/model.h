/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx cost model: alpha-beta-gamma time of each algorithm of each
 * collective, the choice it makes, and what an algorithm costs a rank in
 * connections (QPs) and memory.  Constants come from a file
 * (tests/sim/fabric-lab.conf; tests/sim/calibrate.py writes one from
 * `make bench` output).  Documentation/schedules.md, "Cost model and
 * simulator at scale".
 */
#ifndef COLLX_SIM_MODEL_H
#define COLLX_SIM_MODEL_H

#include <stdint.h>
#include <stdbool.h>

/* One path (profile) of the constants file. */
struct model_consts {
	char name[64];
	double alpha;		/* s per message (one hop of one transfer) */
	double beta;		/* s per byte on the link, one direction */
	double gamma;		/* s per byte reduced on the CPU */
	double slot;		/* bytes per staging slot: the pipeline's slice */
	double staging;		/* bytes of staging per connection */
	double qp_bytes;	/* other pinned bytes per connection (QP, MRs) */
};

#define MODEL_MAX_PROFILES 8

struct model_file {
	struct model_consts p[MODEL_MAX_PROFILES];
	int n;
};

/* 0, or -1 with a message on stderr. */
int model_load(const char *path, struct model_file *f);
const struct model_consts *model_profile(const struct model_file *f,
					 const char *name);

/*
 * Time of @algo (enum collx_algo) running @coll for @bytes (the
 * collective's largest buffer on one rank, as collx_algo_choose() takes
 * it) on @n ranks; a negative value if @algo cannot run @coll.
 */
double model_time(const struct model_consts *c, uint32_t coll, uint32_t algo,
		  double bytes, uint32_t n);

/* The algorithm of least model_time(); *@t gets its time. */
uint32_t model_choose(const struct model_consts *c, uint32_t coll,
		      double bytes, uint32_t n, double *t);

#endif
