// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Restore, collective: each rank takes its shard from its own area when a
 * complete copy of the tag is there and every chunk matches its hash;
 * then the ranks tell each other what they need and which replicas they
 * hold; a holder pushes each replica it is chosen for (grouped send/recv:
 * the kernel's RDMA WRITE from the holder's registered area, straight into
 * the restorer's registered regions), and the restorer checks the header
 * and every chunk; whoever is still without a copy reads the archive.
 * Last, an allgather of the outcomes, so no rank resumes training while
 * another could not restore.
 *
 * Only globally committed copies count (ckpt_find).  Of the copies of the
 * tag that any rank has in memory, the newest epoch is the one restored:
 * a rank whose own copy is of an older epoch (an abandoned timeline) takes
 * a replica of the newest instead, and the outcomes carry the epoch, so
 * ranks that restored different timelines all fail.  Success starts a new
 * epoch at the next save and protects the restored copies from it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"

struct ldesc {
	uint64_t tag;
	int32_t status;
	uint32_t need;
	uint64_t bytes;			/* of the regions passed */
	uint32_t nregions, __pad;
	uint64_t sizes[COLLX_CKPT_MAX_REGIONS];
	uint64_t held_bytes[COLLX_CKPT_MAX_K + 1];	/* 0: no replica of the tag */
	uint64_t held_epoch[COLLX_CKPT_MAX_K + 1];
	uint64_t own_epoch;		/* of the own copy restored, 0: none */
	uint64_t max_epoch;
};

struct outcome {
	int32_t status;
	uint32_t __pad;
	uint64_t epoch;			/* restored; 0: unknown (the archive) */
	uint64_t max_epoch;
};

/* From the own entry: 0 (restored), -ENOENT, -EBADMSG, -EINVAL (sizes). */
static int from_local(struct collx_ckpt_area *a, struct ckpt_iov v, uint64_t tag, int slot)
{
	const struct ckpt_geom *g = &a->f.g;
	const struct ckpt_shard_hdr *h;
	const uint8_t *d;
	char e[CKPT_ERRLEN];
	uint64_t off;
	uint32_t c;
	int rc;

	if (slot < 0)
		return -ENOENT;
	h = ckpt_hdr(&a->f, slot, 0);
	d = ckpt_data(&a->f, slot, 0);
	rc = ckpt_hdr_match_regions(h, v, e, sizeof(e));
	if (rc) {
		ckpt_seterr(a, "load: %s", e);
		return rc;
	}
	for (c = 0, off = 0; c < h->nchunks; c++, off += g->chunk_bytes) {
		size_t len = h->bytes - off < g->chunk_bytes ? h->bytes - off : g->chunk_bytes;

		if (ckpt_hash(d + off, len) != h->chunk_hash[c]) {
			ckpt_seterr(a, "load tag %llu: own area %s chunk %u does not match its hash",
				    (unsigned long long)tag, a->f.path, c);
			return -EBADMSG;
		}
		ckpt_copy_to_regions(v, off, d + off, len);
	}
	return 0;
}

/* A replica pushed by its holder: header and every chunk as saved. */
static int check_pushed(struct collx_ckpt_area *a, const struct ckpt_shard_hdr *h,
			struct ckpt_iov v, uint64_t tag, uint64_t epoch, uint32_t holder)
{
	const struct ckpt_geom *g = &a->f.g;
	char e[CKPT_ERRLEN];
	uint64_t off;
	uint32_t c;

	if (ckpt_hdr_check(&a->f, h) || h->src_rank != g->rank || h->tag != tag ||
	    h->epoch != epoch) {
		ckpt_seterr(a, "load tag %llu: the header rank %u pushed is not valid",
			    (unsigned long long)tag, holder);
		return -EBADMSG;
	}
	if (ckpt_hdr_match_regions(h, v, e, sizeof(e))) {
		ckpt_seterr(a, "load: %s", e);
		return -EINVAL;
	}
	for (c = 0, off = 0; c < h->nchunks; c++, off += g->chunk_bytes) {
		size_t len = h->bytes - off < g->chunk_bytes ? h->bytes - off : g->chunk_bytes;

		if (ckpt_hash_regions(v, off, len) != h->chunk_hash[c]) {
			ckpt_seterr(a, "load tag %llu: chunk %u of the replica rank %u pushed does not match its hash",
				    (unsigned long long)tag, c, holder);
			return -EBADMSG;
		}
	}
	return 0;
}

/* A copy that was there but corrupt is -EBADMSG; none at all -ENOENT. */
static int bad_or_missing(const char *why)
{
	return strstr(why, "does not match") || strstr(why, "not valid") ? -EBADMSG : -ENOENT;
}

/* "1,2": the ranks that would hold this rank's replicas. */
static const char *holders_str(const struct ckpt_geom *g)
{
	static __thread char buf[128];
	size_t n = 0;
	uint32_t j;

	buf[0] = 0;
	for (j = 1; j <= g->k && n < sizeof(buf) - 12; j++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%u", j > 1 ? "," : "",
			      ckpt_holder(g->nranks, g->stride, g->rank, j));
	return g->k ? buf : "(none: k = 0)";
}

/* Post this rank's part of the pushes (lock-step group on every rank). */
static int push_group(struct collx_ckpt_area *a, struct collx_comm *comm, const struct ldesc *all,
		      const uint32_t *holder_of, struct ckpt_iov v, struct ckpt_shard_hdr *pushed,
		      uint64_t tag, struct collx_ckpt_stats *st, uint32_t *mem)
{
	const struct ckpt_geom *g = &a->f.g;
	struct collx_op **ops;
	int n = 0, rc, rc2, i, maxops = 2 * (COLLX_CKPT_MAX_REGIONS + 1) * (g->k + 1);
	uint32_t q, r;

	ops = calloc(maxops, sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	collx_group_start();
	for (q = 0; q < g->nranks; q++) {
		uint32_t h, j = holder_of[q];

		if (!j)
			continue;
		h = ckpt_holder(g->nranks, g->stride, q, j);
		if (h == g->rank && n + all[q].nregions + 1 <= (uint32_t)maxops) {
			int s = ckpt_find(&a->f, j, tag);
			const uint8_t *d = ckpt_data(&a->f, s, j);

			collx_send_async(comm, ckpt_hdr(&a->f, s, j), g->hdr_block, COLLX_UINT8, q,
					 &ops[n++]);
			/* cut as the restorer's regions are: each send meets one recv */
			for (r = 0; r < all[q].nregions; r++) {
				if (!all[q].sizes[r])
					continue;
				collx_send_async(comm, d, all[q].sizes[r], COLLX_UINT8, q, &ops[n++]);
				d += all[q].sizes[r];
			}
			st->bytes_sent += all[q].bytes;
		}
		if (q == g->rank) {
			collx_recv_async(comm, pushed, g->hdr_block, COLLX_UINT8, h, &ops[n++]);
			for (i = 0; i < v.n; i++)
				if (v.r[i].bytes)
					collx_recv_async(comm, v.r[i].buf, v.r[i].bytes, COLLX_UINT8, h,
							 &ops[n++]);
			st->bytes_received += all[q].bytes;
		}
	}
	rc = collx_group_end();
	for (i = 0; i < n; i++) {
		struct collx_completion c = { 0 };

		if (!ops[i])
			continue;
		rc2 = collx_wait(ops[i], &c);
		*mem |= c.mem;
		if (rc2 && !rc)
			rc = rc2;
	}
	free(ops);
	return rc;
}

int collx_ckpt_load_stats(struct collx_comm *comm, struct collx_ckpt_area *a,
			  const struct collx_ckpt_region *regions, int nregions,
			  uint64_t tag, enum collx_ckpt_source *source,
			  struct collx_ckpt_stats *stp)
{
	const struct ckpt_geom *g;
	struct collx_ckpt_stats st = { .tag = tag };
	struct ckpt_iov v = { 0 };
	struct ldesc me = { 0 }, *all = NULL;
	struct ckpt_shard_hdr *pushed = NULL;
	struct outcome *outcome = NULL, mine = { 0 };
	uint64_t want = 0, max_epoch = 0, got = 0, arch_epoch = 0;
	uint32_t *holder_of = NULL;	/* per rank: the replica entry j of its holder, 0 none */
	enum collx_ckpt_source src = COLLX_CKPT_SRC_NONE;
	double t0 = ckpt_now();
	uint32_t q, j, nr, h;
	int rc, status = 0, i;
	char why[1024] = "";

	if (!comm || !a || a->comm != comm || !source) {
		if (a)
			ckpt_seterr(a, "load: bad arguments (communicator, area or source)");
		return -EINVAL;
	}
	*source = COLLX_CKPT_SRC_NONE;
	/* a save still replicating ends first (every rank's does) */
	ckpt_wait_idle(a);
	g = &a->f.g;
	nr = g->nranks;
	a->err[0] = 0;
	all = calloc(nr, sizeof(*all));
	outcome = calloc(nr, sizeof(*outcome));
	holder_of = calloc(nr, sizeof(*holder_of));
	pushed = calloc(1, g->hdr_block);
	if (!all || !outcome || !holder_of || !pushed) {
		rc = -ENOMEM;
		goto out;
	}
	/* 1: the own area */
	status = tag ? 0 : -EINVAL;
	if (status)
		ckpt_seterr(a, "load: tag 0 is reserved");
	if (!status) {
		status = ckpt_check_regions(a, regions, nregions, &v);
		if (status) {
			char e[CKPT_ERRLEN];

			snprintf(e, sizeof(e), "%s", a->err);
			ckpt_seterr(a, "load tag %llu: %s", (unsigned long long)tag, e);
		}
	}
	if (!status) {
		int slot = ckpt_find(&a->f, 0, tag);

		rc = from_local(a, v, tag, slot);
		if (!rc) {
			src = COLLX_CKPT_SRC_LOCAL;
			me.own_epoch = ckpt_hdr(&a->f, slot, 0)->epoch;
		}
		else if (rc == -EBADMSG)
			snprintf(why, sizeof(why), "%.400s; ", a->err);
		else if (rc != -ENOENT)
			status = rc;
	}
	/* 2: what each rank needs and holds */
	me.tag = tag;
	me.status = status;
	me.need = !status && src == COLLX_CKPT_SRC_NONE;
	if (v.n) {
		me.bytes = ckpt_regions_bytes(v);
		me.nregions = v.n;
		for (i = 0; i < v.n; i++)
			me.sizes[i] = v.r[i].bytes;
	}
	for (j = 1; j <= g->k; j++) {
		int s = ckpt_find(&a->f, j, tag);

		if (s >= 0) {
			me.held_bytes[j] = ckpt_hdr(&a->f, s, j)->bytes;
			me.held_epoch[j] = ckpt_hdr(&a->f, s, j)->epoch;
		}
	}
	me.max_epoch = a->max_epoch;
	rc = collx_allgather(comm, &me, all, sizeof(me), COLLX_UINT8);
	if (rc) {
		ckpt_seterr(a, "load tag %llu: exchanging what each rank has: %s (%s)",
			    (unsigned long long)tag, collx_strerror(rc), collx_comm_last_error(comm));
		goto out;
	}
	for (q = 0; q < nr; q++)
		if (all[q].tag != tag || all[q].nregions > COLLX_CKPT_MAX_REGIONS) {
			rc = -EINVAL;
			ckpt_seterr(a, "load: rank %u loads tag %llu, this rank %llu", q,
				    (unsigned long long)all[q].tag, (unsigned long long)tag);
			goto out;
		}
	/* 3: the same choice on every rank: the newest epoch of the tag in
	 * anyone's memory; then for each rank without it, the first holder
	 * with that epoch and the size asked for */
	for (q = 0; q < nr; q++) {
		if (all[q].own_epoch > want)
			want = all[q].own_epoch;
		for (j = 1; j <= g->k; j++)
			if (all[q].held_epoch[j] > want)
				want = all[q].held_epoch[j];
		if (all[q].max_epoch > max_epoch)
			max_epoch = all[q].max_epoch;
	}
	for (q = 0; q < nr; q++)
		if (!all[q].status && all[q].own_epoch != want)
			all[q].need = 1;
	if (me.own_epoch && me.own_epoch != want) {
		/* an abandoned timeline's copy: not this one */
		src = COLLX_CKPT_SRC_NONE;
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "own copy is of epoch %llu, another rank's of %llu; ",
			 (unsigned long long)me.own_epoch, (unsigned long long)want);
	}
	me.need = all[g->rank].need;
	for (q = 0; q < nr; q++) {
		if (!all[q].need)
			continue;
		for (j = 1; j <= g->k && !holder_of[q]; j++) {
			h = ckpt_holder(nr, g->stride, q, j);
			if (all[h].held_bytes[j] && all[h].held_bytes[j] == all[q].bytes &&
			    all[h].held_epoch[j] == want)
				holder_of[q] = j;
			else if (q == g->rank && all[h].held_bytes[j])
				snprintf(why + strlen(why), sizeof(why) - strlen(why),
					 "rank %u holds tag %llu as %llu bytes, not %llu; ", h,
					 (unsigned long long)tag,
					 (unsigned long long)all[h].held_bytes[j],
					 (unsigned long long)all[q].bytes);
		}
	}
	rc = push_group(a, comm, all, holder_of, v, pushed, tag, &st, &st.mem);
	if (rc) {
		ckpt_seterr(a, "load tag %llu: pushing replicas: %s (%s)", (unsigned long long)tag,
			    collx_strerror(rc), collx_comm_last_error(comm));
		goto out;
	}
	if (me.need && holder_of[g->rank]) {
		h = ckpt_holder(nr, g->stride, g->rank, holder_of[g->rank]);
		rc = check_pushed(a, pushed, v, tag, want, h);
		if (!rc)
			src = COLLX_CKPT_SRC_PEER;
		else if (rc == -EINVAL)
			status = rc;
		else
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%.400s; ", a->err);
	}
	/* 4: the archive */
	if (!status && src == COLLX_CKPT_SRC_NONE) {
		char e[CKPT_ERRLEN];

		if (!a->archive_dir[0]) {
			status = bad_or_missing(why);
			ckpt_seterr(a, "load tag %llu: %sno copy in the area, none held by rank(s) %s, and no archive (COLLX_CKPT_DIR unset)",
				    (unsigned long long)tag, why, holders_str(g));
		} else {
			rc = ckpt_archive_read(a->archive_dir, tag, g->rank, g->nranks, 0, v,
					       &arch_epoch, e, sizeof(e));
			if (!rc) {
				src = COLLX_CKPT_SRC_ARCHIVE;
			} else {
				status = rc == -ENOENT ? bad_or_missing(why) : rc;
				ckpt_seterr(a, "load tag %llu: %sno copy in the area, none held by rank(s) %s; archive: %s",
					    (unsigned long long)tag, why, holders_str(g),
					    strncmp(e, "archive ", 8) ? e : e + 8);
			}
		}
	}
	/* 5: every rank's outcome and the timeline it restored */
	got = src == COLLX_CKPT_SRC_LOCAL || src == COLLX_CKPT_SRC_PEER ? want :
	      src == COLLX_CKPT_SRC_ARCHIVE ? arch_epoch : 0;
	mine.status = status;
	mine.epoch = got;
	rc = collx_allgather(comm, &mine, outcome, sizeof(mine), COLLX_UINT8);
	if (rc) {
		ckpt_seterr(a, "load tag %llu: exchanging outcomes: %s (%s)", (unsigned long long)tag,
			    collx_strerror(rc), collx_comm_last_error(comm));
		goto out;
	}
	rc = status;
	for (q = 0; q < nr && !rc; q++)
		if (outcome[q].status) {
			ckpt_seterr(a, "load: rank %u failed: %s", q, collx_strerror(outcome[q].status));
			rc = -EREMOTEIO;
		}
	/* an archive older than epochs says 0: unknown, not compared */
	for (q = 0; q < nr && !rc; q++)
		if (outcome[q].epoch && got && outcome[q].epoch != got) {
			ckpt_seterr(a, "load tag %llu: rank %u restored epoch %llu, this rank epoch %llu: two timelines, refused",
				    (unsigned long long)tag, q, (unsigned long long)outcome[q].epoch,
				    (unsigned long long)got);
			rc = -ESTALE;
		}
	if (!rc) {
		/* a new timeline from here: the next save starts a new epoch
		 * and never overwrites what was restored */
		a->epoch = 0;
		if (got > want)
			want = got;	/* restored from the archive */
		if (want > max_epoch)
			max_epoch = want;
		if (max_epoch > a->max_epoch)
			a->max_epoch = max_epoch;
		ckpt_area_record_epoch(&a->f, a->max_epoch);
		a->protect_epoch = want;
		a->protect_tag = tag;
		ckpt_area_record_protect(&a->f, want, tag);
		st.epoch = want;
	}
out:
	st.seconds = ckpt_now() - t0;
	st.bytes_local = v.n ? ckpt_regions_bytes(v) : 0;
	if (!rc)
		ckpt_metrics_observe(NULL, "rank", g->rank, CKPT_PHASE_RESTORE, st.seconds,
				     st.bytes_local, tag, collx_ckpt_source_name(src));
	free(all);
	free(outcome);
	free(holder_of);
	free(pushed);
	if (stp)
		*stp = st;
	*source = rc ? COLLX_CKPT_SRC_NONE : src;
	return rc;
}

int collx_ckpt_load(struct collx_comm *comm, struct collx_ckpt_area *a,
		    const struct collx_ckpt_region *regions, int nregions,
		    uint64_t tag, enum collx_ckpt_source *source)
{
	return collx_ckpt_load_stats(comm, a, regions, nregions, tag, source, NULL);
}

/* What a rank can restore from memory: its own globally committed copies
 * and the replicas of its shard that its holders have. */
struct lid {
	uint64_t epoch, tag;
};

struct latest_desc {
	int32_t status;
	uint32_t __pad;
	struct lid own[CKPT_NSLOTS];
	struct lid held[COLLX_CKPT_MAX_K + 1][CKPT_NSLOTS];
};

static void ids_of(const struct ckpt_file *f, int entry, struct lid *out)
{
	int s;

	for (s = 0; s < CKPT_NSLOTS; s++) {
		const struct ckpt_shard_hdr *h = ckpt_hdr(f, s, entry);

		out[s].epoch = out[s].tag = 0;
		if (ckpt_find_id(f, entry, h->epoch, h->tag) == s) {
			out[s].epoch = h->epoch;
			out[s].tag = h->tag;
		}
	}
}

static bool has_id(const struct lid *l, int n, struct lid id)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i].tag && l[i].epoch == id.epoch && l[i].tag == id.tag)
			return true;
	return false;
}

/* Whether every rank of @all can restore @id (own copy or a holder's). */
static bool everyone_has(const struct ckpt_geom *g, const struct latest_desc *all, struct lid id)
{
	uint32_t q, j;

	for (q = 0; q < g->nranks; q++) {
		bool ok = has_id(all[q].own, CKPT_NSLOTS, id);

		for (j = 1; j <= g->k && !ok; j++)
			ok = has_id(all[ckpt_holder(g->nranks, g->stride, q, j)].held[j], CKPT_NSLOTS,
				    id);
		if (!ok)
			return false;
	}
	return true;
}

int collx_ckpt_latest(struct collx_comm *comm, struct collx_ckpt_area *a, uint64_t *tag,
		      uint64_t *epoch)
{
	struct latest_desc me = { 0 }, *all;
	struct lid best = { 0, 0 };
	const struct ckpt_geom *g;
	uint32_t q, j;
	int s, rc;

	if (!comm || !a || a->comm != comm || !tag) {
		if (a)
			ckpt_seterr(a, "latest: bad arguments (communicator, area or tag)");
		return -EINVAL;
	}
	ckpt_wait_idle(a);
	g = &a->f.g;
	all = calloc(g->nranks, sizeof(*all));
	if (!all)
		return -ENOMEM;
	ids_of(&a->f, 0, me.own);
	for (j = 1; j <= g->k; j++)
		ids_of(&a->f, j, me.held[j]);
	rc = collx_allgather(comm, &me, all, sizeof(me), COLLX_UINT8);
	if (rc) {
		ckpt_seterr(a, "latest: exchanging what each rank has: %s (%s)", collx_strerror(rc),
			    collx_comm_last_error(comm));
		free(all);
		return rc;
	}
	/* candidates: any identity anyone has; the greatest (epoch, then
	 * tag) that every rank can restore; the same on every rank */
	for (q = 0; q < g->nranks; q++)
		for (j = 0; j <= g->k; j++)
			for (s = 0; s < CKPT_NSLOTS; s++) {
				struct lid id = j ? all[q].held[j][s] : all[q].own[s];

				if (!id.tag || (id.epoch < best.epoch ||
						(id.epoch == best.epoch && id.tag <= best.tag)))
					continue;
				if (everyone_has(g, all, id))
					best = id;
			}
	free(all);
	if (!best.tag) {
		ckpt_seterr(a, "latest: no checkpoint that every rank can restore from memory");
		return -ENOENT;
	}
	*tag = best.tag;
	if (epoch)
		*epoch = best.epoch;
	return 0;
}
