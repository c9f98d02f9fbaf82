// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot of the BPF maps (sorted rows) and of the hardware counters,
 * taken once per report; the previous one gives the live view its rates.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "netmon.skel.h"
#include "main.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int dump_map(int fd, size_t ksz, size_t voff, size_t rowsz, void **out)
{
	char key[64], next[64];
	char *rows = NULL;
	int n = 0, cap = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (n == cap) {
			void *p;

			cap = cap ? cap * 2 : 64;
			p = realloc(rows, cap * rowsz);
			if (!p)
				break;
			rows = p;
		}
		memcpy(rows + n * rowsz, next, ksz);
		if (!bpf_map_lookup_elem(fd, next, rows + n * rowsz + voff))
			n++;
		memcpy(key, next, ksz);
		prev = key;
	}
	*out = rows;
	return n;
}

static int pfc_cmp(const void *a, const void *b)
{
	const struct pfc_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir - y->dir;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->prio - y->prio;
}

static int roce_cmp(const void *a, const void *b)
{
	const struct roce_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir - y->dir;
	if (memcmp(x->peer, y->peer, 16))
		return memcmp(x->peer, y->peer, 16);
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

static int drop_cmp(const void *a, const void *b)
{
	const struct drop_key *x = a, *y = b;

	if (x->ifindex != y->ifindex)
		return x->ifindex < y->ifindex ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	if (x->location != y->location)
		return x->location < y->location ? -1 : 1;
	return x->roce - y->roce;
}

static int lat_cmp(const void *a, const void *b)
{
	const struct lat_key *x = a, *y = b;

	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	return x->coll < y->coll ? -1 : x->coll > y->coll;
}

void snapshot_free(struct snapshot *s)
{
	free(s->pfc);
	free(s->roce);
	free(s->drop);
	free(s->lat);
	free(s->hw.c);
	memset(s, 0, sizeof(*s));
}

void snapshot_rotate(struct snapshot *prev, struct snapshot *cur)
{
	snapshot_free(prev);
	*prev = *cur;
	memset(cur, 0, sizeof(*cur));
}

void snapshot_take(struct netmon_bpf *skel, struct snapshot *s)
{
	__u32 idx;
	int i;

	free(s->pfc);
	free(s->roce);
	free(s->drop);
	free(s->lat);
	s->mono = now_ns();
	s->npfc = dump_map(bpf_map__fd(skel->maps.pfc), sizeof(struct pfc_key),
			   offsetof(struct pfc_row, v), sizeof(struct pfc_row), (void **)&s->pfc);
	s->nroce = dump_map(bpf_map__fd(skel->maps.roce), sizeof(struct roce_key),
			    offsetof(struct roce_row, v), sizeof(struct roce_row), (void **)&s->roce);
	s->ndrop = dump_map(bpf_map__fd(skel->maps.drops), sizeof(struct drop_key),
			    offsetof(struct drop_row, v), sizeof(struct drop_row), (void **)&s->drop);
	s->nlat = dump_map(bpf_map__fd(skel->maps.op_lat), sizeof(struct lat_key),
			   offsetof(struct lat_row, v), sizeof(struct lat_row), (void **)&s->lat);
	qsort(s->pfc, s->npfc, sizeof(*s->pfc), pfc_cmp);
	qsort(s->roce, s->nroce, sizeof(*s->roce), roce_cmp);
	qsort(s->drop, s->ndrop, sizeof(*s->drop), drop_cmp);
	qsort(s->lat, s->nlat, sizeof(*s->lat), lat_cmp);
	idx = 0;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, &s->lost);
	idx = 1;
	bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &idx, &s->kfree_shape);
	hw_reset(&s->hw);
	for (i = 0; i < opt.ndevs; i++)
		hw_collect(&s->hw, opt.devs[i].name, opt.hw_all);
}

const struct pfc_val *snapshot_pfc(const struct snapshot *s, const struct pfc_key *k)
{
	const struct pfc_row *r = bsearch(k, s->pfc, s->npfc, sizeof(*r), pfc_cmp);

	return r ? &r->v : NULL;
}

const struct roce_val *snapshot_roce(const struct snapshot *s, const struct roce_key *k)
{
	const struct roce_row *r = bsearch(k, s->roce, s->nroce, sizeof(*r), roce_cmp);

	return r ? &r->v : NULL;
}

const struct drop_val *snapshot_drop(const struct snapshot *s, const struct drop_key *k)
{
	const struct drop_row *r = bsearch(k, s->drop, s->ndrop, sizeof(*r), drop_cmp);

	return r ? &r->v : NULL;
}

const struct lat_val *snapshot_lat(const struct snapshot *s, const struct lat_key *k)
{
	const struct lat_row *r = bsearch(k, s->lat, s->nlat, sizeof(*r), lat_cmp);

	return r ? &r->v : NULL;
}

/* Paused time so far: the running pause is cut at the snapshot's time. */
uint64_t pfc_paused_now(const struct pfc_val *v, uint64_t now)
{
	if (v->paused_until > now)
		return v->paused_ns - (v->paused_until - now);
	return v->paused_ns;
}

/* The upper bound of the bucket holding quantile @q (log2 buckets). */
uint64_t hist_quantile(const struct lat_val *v, double q)
{
	uint64_t want = (uint64_t)(q * v->ops + 0.999999), seen = 0;
	int b;

	for (b = 0; b < NETMON_HIST_BUCKETS; b++) {
		seen += v->hist[b];
		if (seen >= want && v->hist[b])
			return 1ULL << (b + 1);
	}
	return v->max_ns;
}
