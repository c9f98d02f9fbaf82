// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: rank, size and rendezvous from whatever launched the job.
 *
 *   rank, size: the first pair that is set of
 *               COLLX_RANK/COLLX_NRANKS, RANK/WORLD_SIZE (torchrun),
 *               OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE (Open MPI),
 *               PMI_RANK/PMI_SIZE (MPICH, Intel MPI, srun --mpi=pmi2),
 *               SLURM_PROCID/SLURM_NTASKS (srun)
 *   rank 0:     COLLX_COMM_ID=host:port (as NCCL_COMM_ID), else
 *               COLLX_MASTER_ADDR[:port] with COLLX_MASTER_PORT (default
 *               29511), else MASTER_ADDR with COLLX_MASTER_PORT, else
 *               MASTER_PORT + 1 (torchrun's own store listens on
 *               MASTER_PORT), else the first host of SLURM_STEP_NODELIST
 *               (or SLURM_JOB_NODELIST, SLURM_NODELIST), where srun starts
 *               task 0: only when rank and size are srun's
 *               SLURM_PROCID/SLURM_NTASKS (directly, or as PMI's under
 *               srun --mpi=pmi2)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collx_int.h"

/* ---- Slurm host lists: "gpu[01-04,07],login-[1-2]x[a,b]" ---- */

#define HL_MAX_GROUPS	8
#define HL_MAX_RANGES	64

struct hl_range {
	long lo, hi;
	int width;		/* zero padding, from the written low bound */
};

struct hl_group {
	const char *pre;	/* literal text before the bracket */
	size_t prelen;
	int nr;
	struct hl_range r[HL_MAX_RANGES];
	long count;
};

struct hl_item {
	int ng;
	struct hl_group g[HL_MAX_GROUPS];
	const char *tail;	/* literal text after the last bracket */
	size_t taillen;
	long count;
};

static int hl_parse_range(const char *s, const char *end, struct hl_range *r)
{
	const char *dash = memchr(s, '-', end - s);
	const char *p;
	char *e;

	for (p = s; p < end; p++)
		if ((*p < '0' || *p > '9') && p != dash)
			return -EINVAL;
	if (s == end || dash == s || dash == end - 1)
		return -EINVAL;
	r->width = (int)((dash ? dash : end) - s);
	errno = 0;
	r->lo = strtol(s, &e, 10);
	r->hi = dash ? strtol(dash + 1, &e, 10) : r->lo;
	if (errno || r->hi < r->lo || r->hi - r->lo > 1000000)
		return -EINVAL;	/* overflowed, backwards or huge */
	return 0;
}

/* One top-level item, [s, end). */
static int hl_parse_item(const char *s, const char *end, struct hl_item *it)
{
	const char *p = s;

	memset(it, 0, sizeof(*it));
	it->count = 1;
	while (p < end) {
		const char *open = memchr(p, '[', end - p), *close, *q;
		struct hl_group *g;

		if (!open)
			break;
		close = memchr(open, ']', end - open);
		if (!close || it->ng == HL_MAX_GROUPS)
			return -EINVAL;
		g = &it->g[it->ng++];
		g->pre = p;
		g->prelen = open - p;
		for (q = open + 1; q <= close; ) {
			const char *c = memchr(q, ',', close - q);

			if (!c)
				c = close;
			if (g->nr == HL_MAX_RANGES || hl_parse_range(q, c, &g->r[g->nr]))
				return -EINVAL;
			g->count += g->r[g->nr].hi - g->r[g->nr].lo + 1;
			g->nr++;
			q = c + 1;
		}
		if (it->count > 100000000 / g->count)
			return -EINVAL;
		it->count *= g->count;
		p = close + 1;
	}
	if (memchr(p, ']', end - p) || (it->ng == 0 && p == end))
		return -EINVAL;
	it->tail = p;
	it->taillen = end - p;
	return 0;
}

/* Calls @fn on each top-level item; stops when it returns non-zero. */
static int hl_walk(const char *list, int (*fn)(struct hl_item *, void *), void *arg)
{
	const char *p = list, *s = list;
	struct hl_item it;
	int depth = 0, rc;

	if (!list || !*list)
		return -EINVAL;
	for (;; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']' && --depth < 0)
			return -EINVAL;
		if ((*p == ',' && depth == 0) || !*p) {
			if (depth || hl_parse_item(s, p, &it))
				return -EINVAL;
			rc = fn(&it, arg);
			if (rc)
				return rc;
			if (!*p)
				return 0;
			s = p + 1;
		}
	}
}

static int hl_count_fn(struct hl_item *it, void *arg)
{
	*(long *)arg += it->count;
	return 0;
}

long collx_hostlist_count(const char *list)
{
	long n = 0;
	int rc = hl_walk(list, hl_count_fn, &n);

	return rc ? rc : n;
}

struct hl_nth {
	long n;
	char *out;
	size_t outlen;
	int found;
};

static int hl_put(struct hl_nth *a, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int hl_put(struct hl_nth *a, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(a->out + *o, a->outlen - *o, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= a->outlen - *o)
		return -ENAMETOOLONG;
	*o += n;
	return 0;
}

static int hl_nth_fn(struct hl_item *it, void *arg)
{
	struct hl_nth *a = arg;
	long idx[HL_MAX_GROUPS], rem;
	size_t o = 0;
	int g;

	if (a->n >= it->count) {
		a->n -= it->count;
		return 0;
	}
	/* The last group varies fastest, as Slurm expands "a[1-2]b[1-2]". */
	rem = a->n;
	for (g = it->ng - 1; g >= 0; g--) {
		idx[g] = rem % it->g[g].count;
		rem /= it->g[g].count;
	}
	for (g = 0; g < it->ng; g++) {
		const struct hl_group *gr = &it->g[g];
		long k = idx[g];
		int r;

		for (r = 0; k > gr->r[r].hi - gr->r[r].lo; r++)
			k -= gr->r[r].hi - gr->r[r].lo + 1;
		if (hl_put(a, &o, "%.*s%0*ld", (int)gr->prelen, gr->pre, gr->r[r].width,
			   gr->r[r].lo + k))
			return -ENAMETOOLONG;
	}
	if (hl_put(a, &o, "%.*s", (int)it->taillen, it->tail))
		return -ENAMETOOLONG;
	a->found = 1;
	return 1;
}

int collx_hostlist_nth(const char *list, long n, char *out, size_t outlen)
{
	struct hl_nth a = { .n = n, .out = out, .outlen = outlen };
	int rc;

	if (n < 0 || !outlen || collx_hostlist_count(list) < 0)
		return -EINVAL;
	rc = hl_walk(list, hl_nth_fn, &a);
	if (rc < 0)
		return rc;
	return a.found ? 0 : -ENOENT;
}

/* ---- rank and size ---- */

static const struct {
	const char *rank, *size, *who;
} launchers[] = {
	{ "COLLX_RANK", "COLLX_NRANKS", "COLLX_RANK/COLLX_NRANKS" },
	{ "RANK", "WORLD_SIZE", "torchrun (RANK/WORLD_SIZE)" },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI (OMPI_COMM_WORLD_RANK/SIZE)" },
	{ "PMI_RANK", "PMI_SIZE", "PMI (PMI_RANK/PMI_SIZE)" },
	{ "SLURM_PROCID", "SLURM_NTASKS", "Slurm (SLURM_PROCID/SLURM_NTASKS)" },
};

static int parse_rank_size(struct collx_env_cfg *cfg, char *err, size_t errlen)
{
	size_t i;
	long r, n;

	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		const char *rs = collx_getenv(launchers[i].rank);
		const char *ns = collx_getenv(launchers[i].size);

		if (!rs || !*rs)
			continue;
		if (!ns || !*ns) {
			snprintf(err, errlen, "env: %s is set but %s is not", launchers[i].rank,
				 launchers[i].size);
			return -EINVAL;
		}
		if (collx_parse_long(ns, 1, COLLX_MAX_RANKS, &n)) {
			snprintf(err, errlen, "env: %s=%s is not a number of ranks in 1..%d",
				 launchers[i].size, ns, COLLX_MAX_RANKS);
			return -EINVAL;
		}
		if (collx_parse_long(rs, 0, n - 1, &r)) {
			snprintf(err, errlen, "env: %s=%s is not a rank below %s=%ld",
				 launchers[i].rank, rs, launchers[i].size, n);
			return -EINVAL;
		}
		cfg->rank = (int)r;
		cfg->nranks = (int)n;
		snprintf(cfg->launcher, sizeof(cfg->launcher), "%s", launchers[i].who);
		return 0;
	}
	snprintf(err, errlen, "env: no rank: set COLLX_RANK and COLLX_NRANKS, or launch with torchrun, mpirun or srun");
	return -EINVAL;
}

/* ---- the rendezvous ---- */

static const char *const slurm_lists[] = {
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
};

/*
 * srun starts task 0 on the first host of the step's node list, so that
 * host is rank 0's only when the ranks are srun's tasks: under mpirun or
 * mpiexec inside an allocation the daemons' steps have node lists of their
 * own, and ranks would disagree on rank 0.
 */
static int slurm_ranks_are_tasks(const struct collx_env_cfg *cfg, const char *which,
				 char *err, size_t errlen)
{
	const char *ps = collx_getenv("SLURM_PROCID"), *ns = collx_getenv("SLURM_NTASKS");
	long p, n;

	if (ps && *ps && ns && *ns && !collx_parse_long(ps, 0, COLLX_MAX_RANKS - 1, &p) &&
	    !collx_parse_long(ns, 1, COLLX_MAX_RANKS, &n) && p == cfg->rank && n == cfg->nranks)
		return 0;
	snprintf(err, errlen, "env: rank %d of %d from %s is not srun's task SLURM_PROCID=%s of SLURM_NTASKS=%s, so %s need not start with rank 0's host: set COLLX_MASTER_ADDR",
		 cfg->rank, cfg->nranks, cfg->launcher, ps && *ps ? ps : "(unset)",
		 ns && *ns ? ns : "(unset)", which);
	return -EINVAL;
}

/* 0: rank 0 is the first host of a Slurm node list; 1: no list is set. */
static int slurm_rendezvous(struct collx_env_cfg *cfg, long port, char *err, size_t errlen)
{
	const char *s = NULL, *which = NULL;
	size_t i;

	for (i = 0; i < sizeof(slurm_lists) / sizeof(slurm_lists[0]) && !(s && *s); i++) {
		which = slurm_lists[i];
		s = collx_getenv(which);
	}
	if (!s || !*s)
		return 1;
	if (slurm_ranks_are_tasks(cfg, which, err, errlen))
		return -EINVAL;
	if (collx_hostlist_nth(s, 0, cfg->host, sizeof(cfg->host))) {
		snprintf(err, errlen, "env: %s=%.150s is not a Slurm host list", which, s);
		return -EINVAL;
	}
	cfg->port = port ? port : COLLX_DEFAULT_PORT;
	snprintf(cfg->source, sizeof(cfg->source), "%s", which);
	return 0;
}

static int parse_rendezvous(struct collx_env_cfg *cfg, char *err, size_t errlen)
{
	const char *s;
	long port;
	uint16_t p;
	int rc;

	s = collx_getenv("COLLX_COMM_ID");
	if (s && *s) {
		if (collx_parse_hostport(s, cfg->host, sizeof(cfg->host), &p) || !p) {
			snprintf(err, errlen, "env: COLLX_COMM_ID=%s is not host:port", s);
			return -EINVAL;
		}
		cfg->port = p;
		snprintf(cfg->source, sizeof(cfg->source), "COLLX_COMM_ID");
		return 0;
	}
	if (collx_env_long("COLLX_MASTER_PORT", 0, 1, 65535, &port)) {
		snprintf(err, errlen, "env: COLLX_MASTER_PORT=%s is not a port",
			 getenv("COLLX_MASTER_PORT"));
		return -EINVAL;
	}
	s = collx_getenv("COLLX_MASTER_ADDR");
	if (s && *s) {
		if (collx_parse_hostport(s, cfg->host, sizeof(cfg->host), &p)) {
			snprintf(err, errlen, "env: COLLX_MASTER_ADDR=%s is not host[:port]", s);
			return -EINVAL;
		}
		cfg->port = p ? p : port ? port : COLLX_DEFAULT_PORT;
		snprintf(cfg->source, sizeof(cfg->source), "COLLX_MASTER_ADDR");
		return 0;
	}
	s = collx_getenv("MASTER_ADDR");
	if (s && *s) {
		if (strlen(s) >= sizeof(cfg->host)) {
			snprintf(err, errlen, "env: MASTER_ADDR too long");
			return -EINVAL;
		}
		strcpy(cfg->host, s);
		if (!port) {
			long mp;

			if (collx_env_long("MASTER_PORT", 0, 1, 65534, &mp)) {
				snprintf(err, errlen, "env: MASTER_PORT=%s is not a port below 65535",
					 getenv("MASTER_PORT"));
				return -EINVAL;
			}
			port = mp ? mp + 1 : COLLX_DEFAULT_PORT;
		}
		cfg->port = port;
		snprintf(cfg->source, sizeof(cfg->source), "MASTER_ADDR");
		return 0;
	}
	rc = slurm_rendezvous(cfg, port, err, errlen);
	if (rc <= 0)
		return rc;
	snprintf(err, errlen, "env: no rendezvous address: set COLLX_COMM_ID=host:port, COLLX_MASTER_ADDR or MASTER_ADDR");
	return -EINVAL;
}

int collx_env_parse(struct collx_env_cfg *cfg, char *err, size_t errlen)
{
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = parse_rank_size(cfg, err, errlen);
	if (!rc)
		rc = parse_rendezvous(cfg, err, errlen);
	return rc;
}
