// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_COMM_CREATE and COLLX_IOC_COMM_DESTROY.  Communicators are
 * cheap ones: one rank (no network: the rank table holds this node's own
 * address), a rank of a bigger one that nobody else joins (it connects
 * to this node's own listener under a timeout of a few ms), and bad ones:
 * every field at its edges, one at a time (the errno is then known) or
 * several at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"

#define SENTINEL_RANK	0xfffffffeU

/* What a valid create may meet when other threads hold comms. */
static const int busy_errs[] = { EEXIST, 0 };
/* What a valid destroy may meet when another thread destroys by number. */
static const int gone_errs[] = { ENOENT, 0 };

enum create_bad {
	B_NRANKS0, B_NRANKS_MAX, B_NRANKS_HUGE, B_RANK_EQ, B_KEY0, B_ADDRS_NULL,
	B_ADDRS_BAD, B_ADDRS_CROSS, B_ASIZE_SHORT, B_ASIZE_MAX, B_ASIZE_HUGE,
	B_ASIZE_DIRTY, B_TIMEOUT, B_FLAGS, B_FAMILY, B_RESERVED, B_V4TAIL,
	B_TOS, B_NR
};

/* What each defect alone must give (alt: the other acceptable one). */
static const struct {
	const char *name;
	int err, alt;
} bad_info[B_NR] = {
	[B_NRANKS0] = { "nranks=0", EINVAL, -1 },
	[B_NRANKS_MAX] = { "nranks=MAX_RANKS+1", EINVAL, -1 },
	[B_NRANKS_HUGE] = { "nranks=huge", EINVAL, -1 },
	[B_RANK_EQ] = { "rank=nranks", EINVAL, -1 },
	[B_KEY0] = { "comm_key=0", EINVAL, -1 },
	[B_ADDRS_NULL] = { "addrs=NULL", EINVAL, EFAULT },
	[B_ADDRS_BAD] = { "addrs=bad", EFAULT, EINVAL },
	[B_ADDRS_CROSS] = { "addrs into an unmapped page", EFAULT, -1 },
	[B_ASIZE_SHORT] = { "addr_size short", EINVAL, -1 },
	[B_ASIZE_MAX] = { "addr_size=MAX_ADDR_SIZE+1", EINVAL, -1 },
	[B_ASIZE_HUGE] = { "addr_size=huge", EINVAL, -1 },
	[B_ASIZE_DIRTY] = { "addr_size longer, dirty tail", E2BIG, -1 },
	[B_TIMEOUT] = { "timeout_ms>MAX_TIMEOUT_MS", EINVAL, -1 },
	[B_FLAGS] = { "flags!=0", EOPNOTSUPP, EINVAL },
	[B_FAMILY] = { "family bad", EINVAL, EOPNOTSUPP },
	[B_RESERVED] = { "addr.__reserved!=0", EINVAL, -1 },
	[B_V4TAIL] = { "IPv4 with addr[4..15]!=0", EINVAL, -1 },
	[B_TOS] = { "tos>255", EINVAL, -1 },
};

static uint64_t comm_key(struct fz_rng *r)
{
	return ((uint64_t)getpid() << 32) ^ fz_key(r) ^ ((uint64_t)1 << 63);
}

/* The rank table: @n entries of @asize bytes, each this node's address. */
static uint8_t *rank_table(struct fz_thread *t, uint32_t n, uint32_t asize,
			   bool at_end)
{
	uint64_t bytes = (uint64_t)n * asize;
	struct collx_rank_addr a = { .family = AF_INET };
	uint8_t *p;
	uint32_t i;

	if (bytes > t->big_len)
		return NULL;
	p = at_end ? t->big + t->big_len - bytes : t->big;
	memset(p, 0, bytes);
	memcpy(a.addr, &fz_opt.node_addr, 4);
	for (i = 0; i < n; i++)
		memcpy(p + (uint64_t)i * asize, &a,
		       asize < sizeof(a) ? asize : sizeof(a));
	return p;
}

static void valid_1rank(struct fz_thread *t, struct collx_comm_create *cc)
{
	static const uint32_t timeouts[] = { 0, 1, 100, 1000, 30000,
					     COLLX_MAX_TIMEOUT_MS };
	struct fz_rng *r = &t->rng;
	uint32_t asize = sizeof(struct collx_rank_addr);

	if (fz_pm(r, 100))
		asize += (uint32_t)fz_below(r, COLLX_MAX_ADDR_SIZE - asize + 1);
	cc->nranks = 1;
	cc->rank = 0;
	cc->comm_key = comm_key(r);
	cc->addr_size = asize;
	cc->addrs = (uint64_t)(uintptr_t)rank_table(t, 1, asize, false);
	cc->timeout_ms = timeouts[fz_below(r, FZ_ARRAY_SIZE(timeouts))];
	cc->failed_rank = SENTINEL_RANK;
	if (fz_pm(r, 500))
		for (unsigned int i = 0; i < sizeof(cc->secret); i++)
			cc->secret[i] = (uint8_t)fz_next(r);
	if (fz_pm(r, 200))
		cc->tos = (uint32_t)fz_below(r, 64) << 2;
}

static enum create_bad apply_bad(struct fz_thread *t,
				  struct collx_comm_create *cc,
				  enum create_bad b)
{
	struct fz_rng *r = &t->rng;
	struct collx_rank_addr *a = (void *)t->big;
	const char *what;
	uint8_t *p;

	/* The table's fields only while addrs is still the table. */
	if ((b == B_FAMILY || b == B_RESERVED || b == B_V4TAIL) &&
	    (cc->addrs != (uint64_t)(uintptr_t)t->big ||
	     cc->addr_size < sizeof(*a)))
		b = B_TOS;
	switch (b) {
	case B_NRANKS0:
		cc->nranks = 0;
		break;
	case B_NRANKS_MAX:
		cc->nranks = COLLX_MAX_RANKS + 1;
		break;
	case B_NRANKS_HUGE:
		cc->nranks = 0x80000000U | fz_u32(r);
		break;
	case B_RANK_EQ:
		cc->rank = cc->nranks;
		break;
	case B_KEY0:
		cc->comm_key = 0;
		break;
	case B_ADDRS_NULL:
		cc->addrs = 0;
		break;
	case B_ADDRS_BAD:
		cc->addrs = fz_ptr_bad(r, &what);
		if (!cc->addrs)
			cc->addrs = 1;
		break;
	case B_ADDRS_CROSS:
		p = rank_table(t, 1, cc->addr_size, true);
		cc->addrs = (uint64_t)(uintptr_t)p + 1 +
			    fz_below(r, cc->addr_size);
		break;
	case B_ASIZE_SHORT:
		cc->addr_size = (uint32_t)fz_below(r, sizeof(*a));
		break;
	case B_ASIZE_MAX:
		cc->addr_size = COLLX_MAX_ADDR_SIZE + 1;
		rank_table(t, 1, cc->addr_size, false);
		break;
	case B_ASIZE_HUGE:
		cc->addr_size = 0x10000U << fz_below(r, 16);
		break;
	case B_ASIZE_DIRTY:
		cc->addr_size = sizeof(*a) + 1 +
				(uint32_t)fz_below(r, COLLX_MAX_ADDR_SIZE - sizeof(*a));
		p = rank_table(t, 1, cc->addr_size, false);
		p[sizeof(*a) + fz_below(r, cc->addr_size - sizeof(*a))] = 0x5a;
		cc->addrs = (uint64_t)(uintptr_t)p;
		break;
	case B_TIMEOUT:
		cc->timeout_ms = COLLX_MAX_TIMEOUT_MS + 1 +
				 (uint32_t)fz_below(r, 0xffffffffU - COLLX_MAX_TIMEOUT_MS);
		break;
	case B_FLAGS:
		cc->flags = fz_u32(r) | 1U << fz_below(r, 32);
		break;
	case B_FAMILY:
		a->family = fz_pm(r, 500) ? AF_UNIX : (uint16_t)fz_u32(r);
		if (a->family == AF_INET || a->family == AF_INET6)
			a->family = 0;
		break;
	case B_RESERVED:
		a->__reserved = fz_u32(r) | 1;
		break;
	case B_V4TAIL:
		a->addr[4 + fz_below(r, 12)] = (uint8_t)(1 + fz_below(r, 255));
		break;
	default:
		cc->tos = 256 + (uint32_t)fz_below(r, 0xffffff00U);
		break;
	}
	return b;
}

/*
 * Handles destroyed by number (forget_id()) that no comm of the model
 * had: another thread's create handed them out and has not recorded its
 * comm yet.  That comm is gone already, and its handle and global id
 * may be handed out again: created() must not record it.  With fz_lock.
 */
#define MAX_UNSEEN	64
static struct {
	int fdi;
	uint32_t id;
} unseen[MAX_UNSEEN];
static unsigned int nunseen;

/*
 * Destroys by number in flight, fz_comm_doom_id() to fz_comm_doomed().
 * A comm a create records meanwhile with the handle one names may be the
 * one it destroys (the create returned before the destroy, and recorded
 * its comm after the destroy looked for it): it is recorded dying, and
 * only once no such destroy is in flight does it turn live again, or
 * gone (when one succeeded without a comm of the model to name).
 */
#define MAX_BYNUM	(2 * FZ_MAX_THREADS)
static struct fz_key bynum[MAX_BYNUM];
static unsigned int nbynum;

static bool bynum_pending(int fdi, uint32_t id)
{
	return fz_key_has(bynum, nbynum, fdi, id);
}

/* The destroy by number of @id on @fdi ended: live again what it spared. */
static void bynum_end(int fdi, uint32_t id)
{
	unsigned int i;

	fz_key_take(bynum, &nbynum, fdi, id);
	if (bynum_pending(fdi, id))
		return;
	for (i = 0; i < FZ_MAX_COMMS; i++) {
		struct fz_comm *c = &fz_comms[i];

		if (c->used && c->bynum && c->fdi == fdi && c->id == id) {
			c->bynum = false;
			c->dying = false;
		}
	}
}

static bool unseen_take(int fdi, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < nunseen; i++) {
		if (unseen[i].fdi != fdi || unseen[i].id != id)
			continue;
		unseen[i] = unseen[--nunseen];
		return true;
	}
	return false;
}

/* Record a created comm, after checking what came back; its index. */
static int created(struct fz_thread *t, struct fz_call *c, uint32_t nranks)
{
	struct collx_comm_create *cc = &c->st.create;
	int i, ci;

	if (!c->out_ok)
		return -1;	/* its handle never reached us */
	pthread_mutex_lock(&fz_lock);
	if (!fz_fds[c->fdi].used || fz_fds[c->fdi].gen != c->fd_gen ||
	    unseen_take(c->fdi, cc->comm_id)) {
		/*
		 * The fd was closed while the create ran (the comm went
		 * with it), or another thread destroyed it by number
		 * before we got here.
		 */
		pthread_mutex_unlock(&fz_lock);
		return -1;
	}
	pthread_mutex_unlock(&fz_lock);
	if (c->size >= offsetofend(struct collx_comm_create, failed_rank) &&
	    cc->failed_rank != COLLX_RANK_NONE)
		fz_finding(t, F_ORACLE, "COMM_CREATE ok but failed_rank=%u",
			   cc->failed_rank);
	pthread_mutex_lock(&fz_lock);
	for (i = 0; i < FZ_MAX_COMMS; i++) {
		const struct fz_comm *o = &fz_comms[i];

		if (!o->used || o->dying)
			continue;
		if (o->fdi == c->fdi && o->id == cc->comm_id &&
		    !fz_fds[c->fdi].shared)
			fz_finding(t, F_IDS, "COMM_CREATE returned comm_id %u, already a live comm of fd%d",
				   cc->comm_id, c->fdi);
		/* Another process may have destroyed a shared fd's comm. */
		if (fz_abi_minor >= 1 && c->size >= sizeof(*cc) && o->gid &&
		    o->gid == cc->global_id && !fz_fds[o->fdi].shared)
			fz_finding(t, F_IDS, "COMM_CREATE returned global_id %u, already a live comm's",
				   cc->global_id);
	}
	ci = fz_comm_add(c->fdi, cc->comm_id,
			 c->size >= sizeof(*cc) ? cc->global_id : 0, nranks,
			 cc->comm_key, cc->timeout_ms);
	if (ci >= 0 && bynum_pending(c->fdi, cc->comm_id)) {
		fz_comms[ci].bynum = true;
		fz_comms[ci].dying = true;
	}
	pthread_mutex_unlock(&fz_lock);
	return ci;
}

/* A failed create's failed_rank: COLLX_RANK_NONE, a rank, or untouched. */
static void check_failed_rank(struct fz_thread *t, struct fz_call *c,
			      uint32_t nranks)
{
	uint32_t fr = c->st.create.failed_rank;

	if (!c->out_ok ||
	    c->size < offsetofend(struct collx_comm_create, failed_rank) ||
	    !nranks || nranks > COLLX_MAX_RANKS)
		return;
	if (fr != SENTINEL_RANK && fr != COLLX_RANK_NONE && fr >= nranks)
		fz_finding(t, F_ORACLE, "COMM_CREATE failed with failed_rank=%u of %u ranks",
			   fr, nranks);
}

int fz_create_1rank(struct fz_thread *t, int fdi, uint32_t timeout_ms,
		    int *errp)
{
	struct fz_call c;
	int ci = -1;

	fz_call_init(&c, FZ_COMM_CREATE, fdi);
	valid_1rank(t, &c.st.create);
	if (timeout_ms != UINT32_MAX)
		c.st.create.timeout_ms = timeout_ms;
	c.tolerate = fz_opt.threads > 1 ? busy_errs : NULL;
	c.fixed = true;
	c.size = sizeof(c.st.create);
	c.place = P_NORMAL;
	c.valid = true;
	snprintf(c.desc, sizeof(c.desc), "1-rank key=%#llx",
		 (unsigned long long)c.st.create.comm_key);
	*errp = fz_ioctl(t, &c);
	if (!*errp)
		ci = created(t, &c, 1);
	return ci;
}

void fz_gen_create(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_comm_create *cc;
	struct fz_call c;
	enum create_bad b = B_NR;
	unsigned int k = (unsigned int)fz_below(r, 1000), nbad = 0, i, n;
	uint32_t nranks, timeout;
	uint64_t t0;
	int ci;

	fz_call_init(&c, FZ_COMM_CREATE, fdi);
	cc = &c.st.create;
	valid_1rank(t, cc);
	if (k < 620) {
		c.valid = true;
		snprintf(c.desc, sizeof(c.desc), "1-rank timeout=%u addr_size=%u",
			 cc->timeout_ms, cc->addr_size);
	} else if (k < 670) {
		/*
		 * A live 1-rank comm's key: the key tells connections
		 * apart and a 1-rank comm makes none, so it is no EEXIST
		 * (only ranks of bigger comms are).
		 */
		pthread_mutex_lock(&fz_lock);
		ci = fz_comm_pick(r, fdi);
		if (ci >= 0 && fz_comms[ci].nranks == 1)
			cc->comm_key = fz_comms[ci].key;
		pthread_mutex_unlock(&fz_lock);
		if (ci >= 0 && cc->comm_key == fz_comms[ci].key) {
			c.valid = true;
			snprintf(c.desc, sizeof(c.desc), "1-rank, key of live comm %u",
				 fz_comms[ci].id);
		} else {
			c.valid = true;
			snprintf(c.desc, sizeof(c.desc), "1-rank");
		}
	} else if (k < 690) {
		/*
		 * One rank of 2..4 (or up to COLLX_MAX_RANKS) that nobody else
		 * joins: the peers' address is this node's, whose listener
		 * refuses, so it ends in ETIMEDOUT after a few ms.
		 */
		n = fz_pm(r, 900) ? 2 + (uint32_t)fz_below(r, 3) :
				    1 + (uint32_t)fz_below(r, COLLX_MAX_RANKS);
		cc->nranks = n;
		cc->rank = (uint32_t)fz_below(r, n);
		cc->addr_size = sizeof(struct collx_rank_addr);
		cc->addrs = (uint64_t)(uintptr_t)rank_table(t, n, cc->addr_size,
							    false);
		cc->timeout_ms = 1 + (uint32_t)fz_below(r, 30);
		if (n > 1) {
			c.expect = ETIMEDOUT;
			c.alt = EINTR;
		} else {
			c.valid = true;
		}
		c.timer_ms = 3000;
		snprintf(c.desc, sizeof(c.desc), "rank %u of %u alone, timeout=%u",
			 cc->rank, n, cc->timeout_ms);
	} else {
		nbad = fz_pm(r, 700) ? 1 : 2 + (unsigned int)fz_below(r, 2);
		for (i = 0; i < nbad; i++) {
			b = apply_bad(t, cc, (enum create_bad)fz_below(r, B_NR));
		}
		if (nbad == 1) {
			c.expect = bad_info[b].err;
			c.alt = bad_info[b].alt;
		}
		snprintf(c.desc, sizeof(c.desc), "1-rank with %s%s",
			 bad_info[b].name, nbad > 1 ? " and more" : "");
	}
	if (fz_pm(r, 300)) {
		/* Junk in the out fields: they are not inputs. */
		cc->comm_id = fz_u32(r);
		cc->global_id = fz_u32(r);
	}
	/* A connecting comm must not wait for the default 30 s. */
	if (cc->nranks > 1 && (!cc->timeout_ms || cc->timeout_ms > 100))
		cc->timeout_ms = 1 + (uint32_t)fz_below(r, 30);
	if (cc->nranks > 1)
		c.timer_ms = 3000;
	nranks = cc->nranks;
	timeout = cc->timeout_ms;
	t0 = fz_now_ns();
	if (!fz_ioctl(t, &c)) {
		created(t, &c, nranks);
		return;
	}
	check_failed_rank(t, &c, nranks);
	/* Interrupted (the timer, a stop) ends early; the bound is for the rest. */
	if (nranks > 1 && c.delivered && c.err != EINTR)
		fz_create_failed(t, timeout, fz_now_ns() - t0);
}

/* A destroy by number of @id on @fdi succeeded: with fz_lock. */
static void forget_id(int fdi, uint32_t id)
{
	bool found = false;
	int i;

	for (i = 0; i < FZ_MAX_COMMS; i++) {
		if (fz_comms[i].used && fz_comms[i].fdi == fdi &&
		    fz_comms[i].id == id) {
			fz_comm_gone(i);
			found = true;
		}
	}
	if (!found) {
		/* A create in flight made it: see unseen[]. */
		if (nunseen == MAX_UNSEEN)
			memmove(unseen, unseen + 1,
				--nunseen * sizeof(unseen[0]));
		unseen[nunseen].fdi = fdi;
		unseen[nunseen++].id = id;
	}
}

/*
 * Before a destroy by number: the live comm of the model it names, marked
 * dying (so a create that gets its handle back meanwhile finds no live
 * comm of that handle), or -1.  Every call has its fz_comm_doomed().
 */
int fz_comm_doom_id(int fdi, uint32_t id)
{
	int i, ci = -1;

	pthread_mutex_lock(&fz_lock);
	for (i = 0; i < FZ_MAX_COMMS && ci < 0; i++) {
		if (fz_comms[i].used && !fz_comms[i].dying &&
		    fz_comms[i].fdi == fdi && fz_comms[i].id == id) {
			fz_comms[i].dying = true;
			ci = i;
		}
	}
	if (nbynum == MAX_BYNUM)
		abort();	/* more destroys at once than threads */
	bynum[nbynum].fdi = fdi;
	bynum[nbynum++].id = id;
	pthread_mutex_unlock(&fz_lock);
	return ci;
}

/* After it: @ci from fz_comm_doom_id(), @err the destroy's result. */
void fz_comm_doomed(int fdi, uint32_t id, int ci, int err)
{
	pthread_mutex_lock(&fz_lock);
	/* Before it ends: what it destroyed must not turn live. */
	if (ci < 0 && !err)
		forget_id(fdi, id);
	else if (ci >= 0 && (!err || (err == ENOENT && fz_fds[fdi].shared)))
		fz_comm_gone(ci);
	else if (ci >= 0)
		fz_comms[ci].dying = false;
	bynum_end(fdi, id);
	pthread_mutex_unlock(&fz_lock);
}

int fz_destroy(struct fz_thread *t, int fdi, int ci)
{
	struct fz_call c;
	int err;

	fz_call_init(&c, FZ_COMM_DESTROY, fdi);
	pthread_mutex_lock(&fz_lock);
	/* Its handle and global id may come back before we mark it gone. */
	fz_comms[ci].dying = true;
	c.st.destroy.comm_id = fz_comms[ci].id;
	pthread_mutex_unlock(&fz_lock);
	c.fixed = true;
	c.size = sizeof(c.st.destroy);
	c.place = P_NORMAL;
	c.valid = !fz_fds[fdi].shared;
	c.tolerate = fz_opt.threads > 1 ? gone_errs : NULL;
	snprintf(c.desc, sizeof(c.desc), "comm=%u", c.st.destroy.comm_id);
	err = fz_ioctl(t, &c);
	pthread_mutex_lock(&fz_lock);
	if (!err || err == ENOENT)
		fz_comm_gone(ci);
	else
		fz_comms[ci].dying = false;
	pthread_mutex_unlock(&fz_lock);
	return err;
}

void fz_gen_destroy(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_comm_destroy *d;
	struct fz_call c;
	int ci = -1, err;
	bool bynumber;

	fz_call_init(&c, FZ_COMM_DESTROY, fdi);
	d = &c.st.destroy;
	pthread_mutex_lock(&fz_lock);
	if (fz_pm(r, 800))
		ci = fz_comm_pick(r, fdi);
	if (ci >= 0) {
		fz_comms[ci].dying = true;
		d->comm_id = fz_comms[ci].id;
	} else {
		d->comm_id = fz_pm(r, 500) ? fz_u32(r) :
			     (uint32_t)fz_below(r, 16);
	}
	pthread_mutex_unlock(&fz_lock);
	bynumber = ci < 0;
	if (bynumber)
		ci = fz_comm_doom_id(fdi, d->comm_id);
	if (fz_pm(r, 80)) {
		d->flags = fz_u32(r) | 1;
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
	} else if (fz_pm(r, 80)) {
		d->__reserved = fz_u32(r) | 1;
		c.expect = EINVAL;
	} else {
		c.valid = ci >= 0 && !fz_fds[fdi].shared;
		c.tolerate = fz_opt.threads > 1 ? gone_errs : NULL;
	}
	snprintf(c.desc, sizeof(c.desc), "comm=%u%s flags=%#x reserved=%#x",
		 d->comm_id, ci >= 0 ? " (live)" : "", d->flags, d->__reserved);
	err = fz_ioctl(t, &c);
	if (bynumber) {
		fz_comm_doomed(fdi, d->comm_id, ci, err);
		return;
	}
	pthread_mutex_lock(&fz_lock);
	if (!err)
		fz_comm_gone(ci);	/* its ops end with ECANCELED */
	else if (err == ENOENT && fz_fds[fdi].shared)
		fz_comm_gone(ci);
	else
		fz_comms[ci].dying = false;
	pthread_mutex_unlock(&fz_lock);
}
