// SPDX-License-Identifier: GPL-2.0
/*
 * collx cost model (model.h).  Each algorithm's time is a sum of
 * alpha (per message), beta (per byte on the busiest link of a rank) and
 * gamma (per byte reduced) terms over the rounds of its schedule; the
 * shape of the rounds (tree depth, recursive doubling's power of two and
 * fold) comes from the schedules' own functions in kmod/core/sched.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <ctype.h>

#include "coll.h"
#include "sched.h"
#include "model.h"

/* the element size of the model's sizes: fp32, as make bench runs */
#define MODEL_ESIZE 4.0

static void trim(char *s)
{
	char *e = s + strlen(s);

	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	while (isspace((unsigned char)*s))
		memmove(s, s + 1, strlen(s));
}

int model_load(const char *path, struct model_file *f)
{
	FILE *fp = fopen(path, "r");
	struct model_consts *c = NULL;
	char line[512], *eq, *hash;
	int lineno = 0;

	memset(f, 0, sizeof(*f));
	if (!fp) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		trim(line);
		if (!line[0])
			continue;
		if (line[0] == '[') {
			char *end = strchr(line, ']');

			if (!end || f->n == MODEL_MAX_PROFILES) {
				fprintf(stderr, "%s:%d: bad section\n", path, lineno);
				fclose(fp);
				return -1;
			}
			*end = 0;
			c = &f->p[f->n++];
			snprintf(c->name, sizeof(c->name), "%.63s", line + 1);
			continue;
		}
		eq = strchr(line, '=');
		if (!eq || !c) {
			fprintf(stderr, "%s:%d: expected key = value in a [section]\n",
				path, lineno);
			fclose(fp);
			return -1;
		}
		*eq = 0;
		trim(line);
		{
			char *v = eq + 1, *endp;
			double d;

			trim(v);
			d = strtod(v, &endp);
			if (endp == v || *endp) {
				fprintf(stderr, "%s:%d: not a number: %s\n", path, lineno, v);
				fclose(fp);
				return -1;
			}
			if (!strcmp(line, "alpha"))
				c->alpha = d;
			else if (!strcmp(line, "beta"))
				c->beta = d;
			else if (!strcmp(line, "gamma"))
				c->gamma = d;
			else if (!strcmp(line, "slot"))
				c->slot = d;
			else if (!strcmp(line, "staging"))
				c->staging = d;
			else if (!strcmp(line, "qp_bytes"))
				c->qp_bytes = d;
			else {
				fprintf(stderr, "%s:%d: unknown key %s\n", path, lineno, line);
				fclose(fp);
				return -1;
			}
		}
	}
	fclose(fp);
	for (int i = 0; i < f->n; i++) {
		c = &f->p[i];
		if (c->alpha <= 0 || c->beta <= 0 || c->gamma < 0 || c->slot < 1) {
			fprintf(stderr, "%s: [%s] needs alpha, beta > 0, gamma >= 0, slot >= 1\n",
				path, c->name);
			return -1;
		}
	}
	if (!f->n) {
		fprintf(stderr, "%s: no [profile]\n", path);
		return -1;
	}
	return 0;
}

const struct model_consts *model_profile(const struct model_file *f,
					 const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (!name || !strcmp(f->p[i].name, name))
			return &f->p[i];
	return NULL;
}

/* Hops from the deepest rank to the root, the deeper of the two trees. */
static uint32_t tree_depth(uint32_t n)
{
	static uint32_t cached_n, cached_d;
	struct collx_tree_node nd;
	uint32_t r, t, d, best = 0;
	s32 p;

	if (n == cached_n)
		return cached_d;
	for (t = 0; t < 2; t++)
		for (r = 0; r < n; r++) {
			d = 0;
			p = (s32)r;
			while (!collx_dtree(n, (u32)p, t, &nd) && nd.parent >= 0 &&
			       d <= n) {
				p = nd.parent;
				d++;
			}
			if (d > best)
				best = d;
		}
	cached_n = n;
	cached_d = best;
	return best;
}

/*
 * A pipelined path of @hops hops carrying @m bytes in slices of at most
 * one staging slot: the latency is paid once per hop, the slices stream
 * behind each other, so (hops + slices - 1) stages of one slice's bytes
 * at @per_byte each.
 */
static double pipe_time(const struct model_consts *c, double hops, double m,
			double per_byte)
{
	double k = m > c->slot ? ceil(m / c->slot) : 1, s = m / k;

	return hops * c->alpha + (hops + k - 1) * s * per_byte;
}

double model_time(const struct model_consts *c, uint32_t coll, uint32_t algo,
		  double bytes, uint32_t n)
{
	double a = c->alpha, be = c->beta, g = c->gamma, m = bytes, b = bytes / n;
	struct collx_rd_info ri;
	double L, p, fold, d;

	if (n < 2 || collx_coll_supported(coll, algo))
		return -1;
	collx_rd_info(n, 0, &ri);
	L = ri.nsteps;
	p = ri.pof2;
	fold = ri.rem ? 1 : 0;
	switch (algo) {
	case COLLX_ALGO_RING:
		switch (coll) {
		case COLLX_COLL_ALLREDUCE:
			return 2 * (n - 1) * (a + b * be) + (n - 1) * b * g;
		case COLLX_COLL_ALLGATHER:
			return (n - 1) * (a + b * be);
		case COLLX_COLL_REDUCE_SCATTER:
			return (n - 1) * (a + b * (be + g));
		case COLLX_COLL_BROADCAST:
			return pipe_time(c, n - 1, m, be);
		case COLLX_COLL_REDUCE:
			return pipe_time(c, n - 1, m, be + g);
		case COLLX_COLL_ALLTOALL:
			return (n - 1) * (a + b * be);
		case COLLX_COLL_BARRIER:
			return (2.0 * n - 1) * a;
		}
		break;
	case COLLX_ALGO_TREE:
		/*
		 * Each half on its own tree; an inner rank takes two children's
		 * slices per stage going up and gives two going down.
		 */
		d = tree_depth(n);
		switch (coll) {
		case COLLX_COLL_ALLREDUCE:
			return pipe_time(c, d, m / 2, 2 * (be + g)) +
			       pipe_time(c, d, m / 2, 2 * be);
		case COLLX_COLL_BROADCAST:
			return pipe_time(c, d + 1, m / 2, 2 * be);
		case COLLX_COLL_REDUCE:
			return pipe_time(c, d + 1, m / 2, 2 * (be + g));
		}
		break;
	case COLLX_ALGO_RD:
		switch (coll) {
		case COLLX_COLL_ALLREDUCE:
			if (m / MODEL_ESIZE < p)	/* whole vector each step */
				return L * (a + m * (be + g)) +
				       fold * (2 * (a + m * be) + m * g);
			return 2 * L * a + 2 * (p - 1) / p * m * be +
			       (p - 1) / p * m * g +
			       fold * (2 * (a + m * be) + m * g);
		case COLLX_COLL_ALLGATHER:
			return L * a + (p - 1) / p * m * be +
			       fold * (2 * a + b * be + (m - b) * be);
		case COLLX_COLL_REDUCE_SCATTER:
			return L * a + (p - 1) / p * m * (be + g) +
			       fold * (2 * a + m * (be + g) + b * be);
		case COLLX_COLL_BARRIER:
			return (L + 2 * fold) * a;
		}
		break;
	case COLLX_ALGO_PAIRWISE:
		if (coll == COLLX_COLL_ALLTOALL)
			return (n - 1) * (a + b * be);
		break;
	}
	return -1;
}

uint32_t model_choose(const struct model_consts *c, uint32_t coll,
		      double bytes, uint32_t n, double *t)
{
	uint32_t algo, best = COLLX_ALGO_P2P;
	double bt = -1, x;

	for (algo = COLLX_ALGO_RING; algo <= COLLX_ALGO_PAIRWISE; algo++) {
		x = model_time(c, coll, algo, bytes, n);
		if (x >= 0 && (bt < 0 || x < bt)) {
			bt = x;
			best = algo;
		}
	}
	if (t)
		*t = bt;
	return best;
}
