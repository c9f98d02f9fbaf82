// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel handed out, as the fuzzer knows it: fds, communicators,
 * registrations, collectives in flight and every op id ever returned.
 * Calls pick their handles here (live ones mostly), and records are
 * checked against what was submitted.  Everything under fz_lock.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

pthread_mutex_t fz_lock = PTHREAD_MUTEX_INITIALIZER;
struct fz_fd fz_fds[FZ_MAX_FDS];
struct fz_comm fz_comms[FZ_MAX_COMMS];
struct fz_mr fz_mrs[FZ_MAX_MRS];
struct fz_op fz_ops[FZ_MAX_OPS];

#define NBUCKETS 4096
static int buckets[NBUCKETS];
static bool buckets_ready;
/* One past the highest comm and registration slot ever used. */
static int comms_hw, mrs_hw;
/* Indices of the ops in use, in no order, for picking one at random. */
static int live[FZ_MAX_OPS], live_pos[FZ_MAX_OPS], nlive;

int fz_fd_add(int fd, bool shared, bool scenario, bool blocking)
{
	int i;

	for (i = 0; i < FZ_MAX_FDS; i++) {
		if (!fz_fds[i].used) {
			uint32_t gen = fz_fds[i].gen;

			memset(&fz_fds[i], 0, sizeof(fz_fds[i]));
			fz_fds[i].gen = gen + 1;
			fz_fds[i].used = true;
			fz_fds[i].fd = fd;
			fz_fds[i].shared = shared;
			fz_fds[i].scenario = scenario;
			fz_fds[i].blocking = blocking;
			return i;
		}
	}
	return -1;
}

void fz_fd_forget(int fdi)
{
	uint32_t gen;
	int i;

	for (i = 0; i < FZ_MAX_OPS; i++)
		if (fz_ops[i].used && fz_ops[i].fdi == fdi)
			fz_op_remove(i);
	for (i = 0; i < FZ_MAX_COMMS; i++)
		if (fz_comms[i].used && fz_comms[i].fdi == fdi)
			fz_comm_gone(i);
	for (i = 0; i < FZ_MAX_MRS; i++)
		if (fz_mrs[i].used && fz_mrs[i].fdi == fdi)
			fz_mr_gone(i);
	fz_limbo_forget(fdi);
	free(fz_fds[fdi].seen);
	gen = fz_fds[fdi].gen;
	memset(&fz_fds[fdi], 0, sizeof(fz_fds[fdi]));
	fz_fds[fdi].gen = gen;	/* fz_fd_add() bumps it */
}

/*
 * Closing the fd destroys its comms, and their global ids may be handed
 * out again (to another fd's create) before fz_fd_forget() runs.
 */
void fz_fd_closing(int fdi)
{
	int i;

	for (i = 0; i < FZ_MAX_COMMS; i++)
		if (fz_comms[i].used && fz_comms[i].fdi == fdi)
			fz_comms[i].dying = true;
}

int fz_comm_add(int fdi, uint32_t id, uint32_t gid, uint32_t nranks,
		uint64_t key, uint32_t timeout_ms)
{
	int i;

	for (i = 0; i < FZ_MAX_COMMS; i++) {
		struct fz_comm *c = &fz_comms[i];

		if (c->used)
			continue;
		c->gen++;
		c->used = true;
		c->dying = false;
		c->tainted = false;
		c->bynum = false;
		c->fdi = fdi;
		c->id = id;
		c->gid = gid;
		c->nranks = nranks;
		c->key = key;
		c->timeout_ms = timeout_ms;
		fz_fds[fdi].live_comms++;
		if (i >= comms_hw)
			comms_hw = i + 1;
		return i;
	}
	return -1;
}

int fz_comm_pick(struct fz_rng *r, int fdi)
{
	int cand[FZ_MAX_COMMS], n = 0, i;

	for (i = 0; i < comms_hw; i++)
		if (fz_comms[i].used && !fz_comms[i].dying &&
		    fz_comms[i].fdi == fdi)
			cand[n++] = i;
	return n ? cand[fz_below(r, n)] : -1;
}

void fz_comm_gone(int ci)
{
	if (!fz_comms[ci].used)
		return;
	fz_comms[ci].used = false;
	fz_fds[fz_comms[ci].fdi].live_comms--;
}

void fz_mr_gone(int mi)
{
	if (!fz_mrs[mi].used)
		return;
	fz_mrs[mi].used = false;
	fz_fds[fz_mrs[mi].fdi].live_mrs--;
}

bool fz_comm_dead(int ci, uint32_t gen)
{
	const struct fz_comm *c = &fz_comms[ci];

	return !c->used || c->gen != gen || c->dying;
}

int fz_mr_add(int fdi, uint32_t id, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < FZ_MAX_MRS; i++) {
		if (!fz_mrs[i].used) {
			fz_mrs[i] = (struct fz_mr){ .used = true, .fdi = fdi,
						    .id = id, .addr = addr,
						    .len = len };
			fz_fds[fdi].live_mrs++;
			if (i >= mrs_hw)
				mrs_hw = i + 1;
			return i;
		}
	}
	return -1;
}

int fz_mr_pick(struct fz_rng *r, int fdi)
{
	int cand[FZ_MAX_MRS], n = 0, i;

	for (i = 0; i < mrs_hw; i++)
		if (fz_mrs[i].used && !fz_mrs[i].busy && fz_mrs[i].fdi == fdi)
			cand[n++] = i;
	return n ? cand[fz_below(r, n)] : -1;
}

static unsigned int bucket_of(int fdi, uint64_t id)
{
	uint64_t h = (id ^ ((uint64_t)fdi << 56)) * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> 52) % NBUCKETS;
}

static void buckets_init(void)
{
	int i;

	for (i = 0; i < NBUCKETS; i++)
		buckets[i] = -1;
	buckets_ready = true;
}

int fz_op_alloc(void)
{
	static int cursor;
	int i, k;

	for (k = 0; k < FZ_MAX_OPS; k++) {
		i = (cursor + k) % FZ_MAX_OPS;
		if (!fz_ops[i].used) {
			cursor = i + 1;
			memset(&fz_ops[i], 0, sizeof(fz_ops[i]));
			fz_ops[i].next = -1;
			return i;
		}
	}
	return -1;
}

void fz_op_insert(int oi)
{
	struct fz_op *op = &fz_ops[oi];
	unsigned int b;

	if (!buckets_ready)
		buckets_init();
	b = bucket_of(op->fdi, op->id);
	op->used = true;
	op->next = buckets[b];
	buckets[b] = oi;
	live_pos[oi] = nlive;
	live[nlive++] = oi;
	fz_fds[op->fdi].live_ops++;
}

int fz_op_find(int fdi, uint64_t id)
{
	int i;

	if (!buckets_ready)
		return -1;
	for (i = buckets[bucket_of(fdi, id)]; i >= 0; i = fz_ops[i].next)
		if (fz_ops[i].fdi == fdi && fz_ops[i].id == id)
			return i;
	return -1;
}

void fz_op_remove(int oi)
{
	struct fz_op *op = &fz_ops[oi];
	int *pp = &buckets[bucket_of(op->fdi, op->id)];

	while (*pp >= 0 && *pp != oi)
		pp = &fz_ops[*pp].next;
	if (*pp == oi)
		*pp = op->next;
	fz_slot_put(op->send_slot, op->send_pages);
	fz_slot_put(op->recv_slot, op->recv_pages);
	live[live_pos[oi]] = live[--nlive];
	live_pos[live[live_pos[oi]]] = live_pos[oi];
	fz_fds[op->fdi].live_ops--;
	op->used = false;
}

int fz_op_pick(struct fz_rng *r, int fdi)
{
	int k, i, start;

	if (!nlive || !fz_fds[fdi].live_ops)
		return -1;
	for (k = 0; k < 8; k++) {
		i = live[fz_below(r, nlive)];
		if (fz_ops[i].fdi == fdi)
			return i;
	}
	start = (int)fz_below(r, nlive);
	for (k = 0; k < nlive; k++) {
		i = live[(start + k) % nlive];
		if (fz_ops[i].fdi == fdi)
			return i;
	}
	return -1;
}

/* Open addressing over ids + 1 (0 marks a free slot). */
static bool seen_insert(struct fz_fd *f, uint64_t key)
{
	size_t i;

	for (i = (key * 0x9e3779b97f4a7c15ULL) & (f->seen_cap - 1);
	     f->seen[i]; i = (i + 1) & (f->seen_cap - 1))
		if (f->seen[i] == key)
			return false;
	f->seen[i] = key;
	f->seen_n++;
	return true;
}

bool fz_id_seen_add(int fdi, uint64_t id)
{
	struct fz_fd *f = &fz_fds[fdi];
	uint64_t *old = f->seen;
	size_t oldcap = f->seen_cap, i;

	if ((f->seen_n + 1) * 2 > f->seen_cap) {
		f->seen_cap = oldcap ? oldcap * 2 : 1024;
		f->seen = calloc(f->seen_cap, sizeof(*f->seen));
		if (!f->seen)
			abort();
		f->seen_n = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i])
				seen_insert(f, old[i]);
		free(old);
	}
	if (id > f->max_op_id)
		f->max_op_id = id;
	return seen_insert(f, id + 1);
}

bool fz_id_seen(int fdi, uint64_t id)
{
	const struct fz_fd *f = &fz_fds[fdi];
	uint64_t key = id + 1;
	size_t i;

	if (!f->seen_cap)
		return false;
	for (i = (key * 0x9e3779b97f4a7c15ULL) & (f->seen_cap - 1);
	     f->seen[i]; i = (i + 1) & (f->seen_cap - 1))
		if (f->seen[i] == key)
			return true;
	return false;
}

bool fz_key_has(const struct fz_key *set, unsigned int n, int fdi, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (set[i].fdi == fdi && set[i].id == id)
			return true;
	return false;
}

bool fz_key_take(struct fz_key *set, unsigned int *n, int fdi, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < *n; i++) {
		if (set[i].fdi == fdi && set[i].id == id) {
			set[i] = set[--*n];
			return true;
		}
	}
	return false;
}
