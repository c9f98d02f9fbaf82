// SPDX-License-Identifier: GPL-2.0
/*
 * Planning collectives on 1-rank communicators, where every collective
 * is a local copy whose output can be checked byte for byte, and breaking
 * them one way at a time so that the errno is known.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

enum defect {
	D_ALGO_UNKNOWN, D_ALGO_CANT, D_FLAGS_HIGH, D_COLL, D_DTYPE, D_REDOP,
	D_ROOT, D_RESERVED, D_COUNT_HUGE, D_SEND_NULL, D_RECV_NULL,
	D_SEND_UNMAPPED, D_RECV_UNMAPPED, D_SEND_KERNEL, D_RECV_KERNEL,
	D_RECV_RO, D_SEND_END, D_RECV_END, D_OVERLAP, D_BARRIER_COUNT,
	D_BARRIER_BUF, D_NR
};

static const char *const defect_names[D_NR] = {
	"unknown algo", "algo that cannot run it", "unknown flag",
	"unknown coll", "unknown dtype", "unknown redop", "root>=nranks",
	"__reserved!=0", "count*esize too large", "sendbuf=NULL",
	"recvbuf=NULL", "sendbuf unmapped", "recvbuf unmapped",
	"sendbuf kernel", "recvbuf kernel", "recvbuf read-only",
	"sendbuf into a guard page", "recvbuf into a guard page",
	"overlapping alltoall buffers", "barrier with count",
	"barrier with a buffer",
};

static const int gone_errs[] = { ENOENT, EPIPE, 0 };
static const int pipe_errs[] = { EPIPE, 0 };

const int *fz_submit_tolerate(int fdi, int ci)
{
	if (fz_opt.threads > 1 || fz_fds[fdi].shared || fz_fds[fdi].scenario ||
	    ci < 0)
		return gone_errs;
	return fz_comms[ci].tainted ? pipe_errs : NULL;
}

static void taint(struct fz_plan *p)
{
	if (p->ci < 0)
		return;
	pthread_mutex_lock(&fz_lock);
	if (fz_comms[p->ci].gen == p->cgen)
		fz_comms[p->ci].tainted = true;
	pthread_mutex_unlock(&fz_lock);
}

/* A buffer of @bytes at a random offset in a slot, margins around it. */
static uint8_t *slot_buf(struct fz_rng *r, size_t esize, uint64_t bytes,
			 uint8_t **slot, size_t *pages)
{
	uint64_t off = 0;

	switch (fz_below(r, 10)) {
	case 0:
		off = 1 + fz_below(r, 7);		/* misaligned */
		break;
	case 1:
	case 2:
		off = esize * fz_below(r, 2048 / esize);
		break;
	}
	*slot = fz_slot_get(2 * FZ_MARGIN + off + bytes, pages);
	return *slot ? *slot + FZ_MARGIN + off : NULL;
}

static const char *const redop_names[COLLX_OP_COUNT] = {
	"sum", "prod", "max", "min", "avg",
};

bool fz_plan_valid(struct fz_thread *t, struct fz_plan *p, int ci,
		   uint32_t coll, uint64_t max_bytes, bool scratch)
{
	struct fz_rng *r = &t->rng;
	bool need_send, need_recv, tainted = true, slow_ok = false;
	uint32_t algo = COLLX_ALGO_AUTO, a;
	uint64_t inb, outb;
	int k;

	memset(p, 0, sizeof(*p));
	p->expect = p->alt = -1;
	p->ci = ci;
	p->nranks = 1;
	if (ci >= 0) {
		pthread_mutex_lock(&fz_lock);
		p->comm_id = fz_comms[ci].id;
		p->nranks = fz_comms[ci].nranks;
		p->cgen = fz_comms[ci].gen;
		tainted = fz_comms[ci].tainted;
		/* A timeout of a few ms may end even a local copy under TCG. */
		slow_ok = !fz_comms[ci].timeout_ms ||
			  fz_comms[ci].timeout_ms >= 1000;
		pthread_mutex_unlock(&fz_lock);
	} else {
		p->comm_id = fz_pm(r, 500) ? fz_u32(r) : (uint32_t)fz_below(r, 16);
	}
	if (scratch && max_bytes > 32768)
		max_bytes = 32768;
	p->coll = coll < COLLX_COLL_COUNT ? coll :
		  (uint32_t)fz_below(r, COLLX_COLL_COUNT);
	p->dtype = (uint32_t)fz_below(r, COLLX_DTYPE_COUNT);
	p->esize = fz_dtype_size(p->dtype);
	p->redop = fz_coll_reduces(p->coll) ?
		   (uint32_t)fz_below(r, COLLX_OP_COUNT) : 0;
	if (fz_pm(r, 150)) {
		for (k = 0; k < 8; k++) {
			a = 1 + (uint32_t)fz_below(r, COLLX_ALGO_COUNT - 1);
			if (fz_algo_runs(a, p->coll)) {
				algo = a;
				break;
			}
		}
	}
	p->flags = algo;
	p->p2p = p->coll == COLLX_COLL_SEND || p->coll == COLLX_COLL_RECV;
	p->count = p->coll == COLLX_COLL_BARRIER ? 0 :
		   fz_count_small(r, p->esize, max_bytes / p->nranks);
	fz_coll_bytes(p->coll, p->count, p->esize, p->nranks, &inb, &outb);
	p->in_bytes = inb;
	p->out_bytes = outb;
	need_send = p->coll != COLLX_COLL_BARRIER && p->coll != COLLX_COLL_RECV;
	need_recv = p->coll != COLLX_COLL_BARRIER && p->coll != COLLX_COLL_SEND;
	p->pat = (uint32_t)fz_next(r);
	p->scratch = scratch;
	if (scratch) {
		if (need_send)
			p->send = fz_mem.ro + fz_below(r, FZ_PAGE);
		if (need_recv)
			p->recv = (uint8_t *)(uintptr_t)fz_ptr_end(outb + 1 +
								   fz_below(r, FZ_PAGE));
	} else if (need_send && need_recv && p->nranks == 1 &&
		   (p->coll == COLLX_COLL_ALLREDUCE ||
		    p->coll == COLLX_COLL_ALLGATHER ||
		    p->coll == COLLX_COLL_REDUCE_SCATTER) && fz_pm(r, 250)) {
		/* In place: on one rank, sendbuf == recvbuf for all three. */
		p->in_place = true;
		p->send = slot_buf(r, p->esize, inb > outb ? inb : outb,
				   &p->send_slot, &p->send_pages);
		p->recv = p->send;
		if (!p->send)
			return false;
	} else {
		if (need_send && inb + FZ_PAGE <= fz_mem.ro_len && fz_pm(r, 100)) {
			p->send = fz_mem.ro + fz_below(r, FZ_PAGE);
			p->ro_src = p->send;
		} else if (need_send) {
			/* Room for an overlapping recvbuf, see D_OVERLAP. */
			p->send = slot_buf(r, p->esize, 2 * inb, &p->send_slot,
					   &p->send_pages);
			if (!p->send)
				return false;
		}
		if (need_recv) {
			p->recv = slot_buf(r, p->esize, outb, &p->recv_slot,
					   &p->recv_pages);
			if (!p->recv) {
				fz_plan_drop(p);
				return false;
			}
		}
	}
	if (p->send_slot)
		p->send_buf = p->send;
	if (p->recv_slot)
		p->recv_buf = p->recv;
	p->valid = !p->p2p && ci >= 0;
	p->checkable = !p->p2p && !scratch;
	p->expect_ok = p->valid && !tainted && slow_ok && p->nranks == 1;
	if (p->p2p)
		taint(p);
	snprintf(p->what, sizeof(p->what), "%s %s %s count=%llu algo=%u%s",
		 fz_coll_name(p->coll), fz_dtype_name(p->dtype),
		 fz_coll_reduces(p->coll) ? redop_names[p->redop] : "-",
		 (unsigned long long)p->count, algo,
		 p->in_place ? " in-place" : p->ro_src ? " from read-only" : "");
	return true;
}

static bool applicable(const struct fz_plan *p, enum defect d)
{
	bool send = p->coll != COLLX_COLL_BARRIER && p->coll != COLLX_COLL_RECV;
	bool recv = p->coll != COLLX_COLL_BARRIER && p->coll != COLLX_COLL_SEND;
	uint32_t a;

	if (p->coll >= COLLX_COLL_COUNT || p->dtype >= COLLX_DTYPE_COUNT)
		return d != D_ALGO_CANT && d != D_COUNT_HUGE && d != D_OVERLAP;
	switch (d) {
	case D_ALGO_CANT:
		for (a = 1; a < COLLX_ALGO_COUNT; a++)
			if (!fz_algo_runs(a, p->coll))
				return true;
		return false;
	case D_COUNT_HUGE:
		return p->coll != COLLX_COLL_BARRIER;
	case D_SEND_NULL:
	case D_SEND_UNMAPPED:
	case D_SEND_KERNEL:
		return send && p->count;
	case D_SEND_END:
		return send && p->in_bytes >= 2 && !p->in_place;
	case D_RECV_NULL:
	case D_RECV_UNMAPPED:
	case D_RECV_KERNEL:
		return recv && p->count;
	case D_RECV_RO:
		return recv && p->count && p->out_bytes <= fz_mem.ro_len &&
		       !p->in_place;
	case D_RECV_END:
		return recv && p->out_bytes >= 2 && !p->in_place;
	case D_OVERLAP:
		/* Only while the send buffer has room for it (2 * in_bytes). */
		return p->coll == COLLX_COLL_ALLTOALL && p->count &&
		       p->send_slot && p->count * p->esize == p->in_bytes;
	case D_BARRIER_COUNT:
	case D_BARRIER_BUF:
		return p->coll == COLLX_COLL_BARRIER;
	default:
		return true;
	}
}

/* Do the input and the output (not in place) share a byte? */
static bool overlap(const struct fz_plan *p)
{
	uintptr_t s = (uintptr_t)p->send, d = (uintptr_t)p->recv;

	return s && d && s != d && p->in_bytes && p->out_bytes &&
	       s < d + p->out_bytes && d < s + p->in_bytes;
}

void fz_plan_break(struct fz_thread *t, struct fz_plan *p)
{
	struct fz_rng *r = &t->rng;
	enum defect d = D_RESERVED;
	uint64_t k, zone = fz_mem.data_len - fz_mem.slot_len;
	const char *what;
	uint32_t a;
	int i;

	for (i = 0; i < 24; i++) {
		d = (enum defect)fz_below(r, D_NR);
		if (applicable(p, d))
			break;
		d = D_RESERVED;
	}
	p->alt = -1;
	p->expect = EINVAL;
	switch (d) {
	case D_ALGO_UNKNOWN:
		p->flags = COLLX_ALGO_COUNT +
			   (uint32_t)fz_below(r, COLLX_SUBMIT_ALGO_MASK + 1 -
						 COLLX_ALGO_COUNT);
		p->expect = EOPNOTSUPP;
		break;
	case D_ALGO_CANT:
		do {
			a = 1 + (uint32_t)fz_below(r, COLLX_ALGO_COUNT - 1);
		} while (fz_algo_runs(a, p->coll));
		p->flags = a;
		p->expect = EOPNOTSUPP;
		break;
	case D_FLAGS_HIGH:
		p->flags |= 1U << (4 + fz_below(r, 28));
		p->expect = EOPNOTSUPP;
		p->alt = EINVAL;
		break;
	case D_COLL:
		p->coll = fz_pm(r, 500) ? COLLX_COLL_COUNT + (uint32_t)fz_below(r, 8) :
			  0x80000000U | fz_u32(r);
		p->expect = EOPNOTSUPP;
		break;
	case D_DTYPE:
		p->dtype = fz_pm(r, 500) ? COLLX_DTYPE_COUNT + (uint32_t)fz_below(r, 8) :
			   0x80000000U | fz_u32(r);
		p->expect = EOPNOTSUPP;
		break;
	case D_REDOP:
		p->redop = COLLX_OP_COUNT + (uint32_t)fz_below(r, 1000);
		p->expect = EOPNOTSUPP;
		if (!fz_coll_reduces(p->coll))
			p->alt = EINVAL;
		break;
	case D_ROOT:
		p->root = p->nranks + (fz_pm(r, 500) ? 0 : (uint32_t)fz_below(r, 1U << 31));
		break;
	case D_RESERVED:
		p->reserved = fz_u32(r) | 1;
		break;
	case D_COUNT_HUGE:
		if (fz_pm(r, 500))
			p->count = COLLX_MAX_BYTES / p->esize + 1 + fz_below(r, 1000);
		else
			/* ~0 / esize + 1 wraps to 0 for 1-byte types */
			p->count = fz_pm(r, 500) ?
				   ~0ULL / p->esize + (p->esize > 1) :
				   (1ULL << 63) | fz_next(r);
		p->checkable = false;
		break;
	case D_SEND_NULL:
		p->send = NULL;
		break;
	case D_RECV_NULL:
		p->recv = NULL;
		break;
	case D_SEND_UNMAPPED:
		p->send = fz_mem.none + fz_below(r, fz_mem.none_len / 2);
		p->expect = EFAULT;
		break;
	case D_RECV_UNMAPPED:
		p->recv = fz_mem.none + fz_below(r, fz_mem.none_len / 2);
		p->expect = EFAULT;
		break;
	case D_SEND_KERNEL:
		do {
			p->send = (uint8_t *)(uintptr_t)fz_ptr_bad(r, &what);
		} while (!p->send);
		p->expect = EFAULT;
		p->alt = EINVAL;
		break;
	case D_RECV_KERNEL:
		do {
			p->recv = (uint8_t *)(uintptr_t)fz_ptr_bad(r, &what);
		} while (!p->recv);
		p->expect = EFAULT;
		p->alt = EINVAL;
		break;
	case D_RECV_RO:
		/* Not where a read-only input lies: they must not overlap. */
		p->recv = (fz_pm(r, 500) && !p->ro_src ? fz_mem.ro :
			   fz_mem.ro_zero) +
			  fz_below(r, fz_mem.ro_len - p->out_bytes + 1);
		p->expect = EFAULT;
		break;
	case D_SEND_END:
		k = 1 + fz_below(r, (p->in_bytes - 1 < zone ? p->in_bytes - 1 : zone));
		p->send = (uint8_t *)(uintptr_t)fz_ptr_end(k);
		p->expect = EFAULT;
		break;
	case D_RECV_END:
		k = 1 + fz_below(r, (p->out_bytes - 1 < zone ? p->out_bytes - 1 : zone));
		p->recv = (uint8_t *)(uintptr_t)fz_ptr_end(k);
		p->expect = EFAULT;
		break;
	case D_OVERLAP:
		p->recv = p->send + p->esize * fz_below(r, p->count);
		break;
	case D_BARRIER_COUNT:
		p->count = 1 + fz_below(r, 1000);
		break;
	default:	/* D_BARRIER_BUF */
		if (fz_pm(r, 500))
			p->send = fz_mem.ro;
		else
			p->recv = fz_mem.ro;
		break;
	}
	if (d != D_RESERVED && d != D_ALGO_UNKNOWN && d != D_ALGO_CANT &&
	    d != D_FLAGS_HIGH && d != D_ROOT && d != D_REDOP)
		p->checkable = false;
	/*
	 * A buffer moved to unmapped or read-only memory may now overlap
	 * the other one (a scratch plan's output lies at the end of the
	 * arena, its input in the read-only region): a second defect, and
	 * the kernel checks the shape before it touches memory.
	 */
	if (p->expect == EFAULT && p->alt < 0 && overlap(p))
		p->alt = EINVAL;
	/*
	 * Send and recv with root 0 may name this very rank (always, on one
	 * rank): already EINVAL, a second defect beside the one made here.
	 */
	if (p->p2p && p->expect != EINVAL && p->alt < 0)
		p->alt = EINVAL;
	p->valid = false;
	p->expect_ok = false;
	taint(p);
	snprintf(p->what + strlen(p->what), sizeof(p->what) - strlen(p->what),
		 ", %s", defect_names[d]);
}

void fz_plan_fill(const struct fz_plan *p)
{
	uint64_t sbytes = p->in_place && p->out_bytes > p->in_bytes ?
			  p->out_bytes : p->in_bytes;

	if (p->send_slot) {
		memset(p->send_slot, FZ_MARGIN_BYTE, p->send_buf - p->send_slot);
		fz_fill(p->send_buf, sbytes, p->pat);
		memset(p->send_buf + sbytes, FZ_MARGIN_BYTE, FZ_MARGIN);
	}
	if (p->recv_slot) {
		memset(p->recv_slot, FZ_MARGIN_BYTE, p->recv_buf - p->recv_slot);
		fz_fill(p->recv_buf, p->out_bytes, p->pat ^ 0x5a5a5a5a);
		memset(p->recv_buf + p->out_bytes, FZ_MARGIN_BYTE, FZ_MARGIN);
	}
}

void fz_plan_to_submit(const struct fz_plan *p, struct collx_submit *s)
{
	s->flags = p->flags;
	s->comm_id = p->comm_id;
	s->coll = p->coll;
	s->dtype = p->dtype;
	s->redop = p->redop;
	s->root = p->root;
	s->__reserved = p->reserved;
	s->count = p->count;
	s->sendbuf = (uint64_t)(uintptr_t)p->send;
	s->recvbuf = (uint64_t)(uintptr_t)p->recv;
}

void fz_plan_drop(struct fz_plan *p)
{
	fz_slot_put(p->send_slot, p->send_pages);
	fz_slot_put(p->recv_slot, p->recv_pages);
	p->send_slot = p->recv_slot = NULL;
}

void fz_plan_queued(struct fz_thread *t, struct fz_plan *p, int fdi,
		    uint64_t id, uint64_t t_submit)
{
	struct fz_op *op;
	int oi;

	if (!p->valid)
		taint(p);
	pthread_mutex_lock(&fz_lock);
	if (!fz_id_seen_add(fdi, id))
		fz_finding(t, F_IDS, "op_id %llu on fd%d was returned before",
			   (unsigned long long)id, fdi);
	oi = fz_op_alloc();
	if (oi < 0) {
		pthread_mutex_unlock(&fz_lock);
		fz_finding(t, F_LOST, "no room to track op %llu",
			   (unsigned long long)id);
		return;
	}
	op = &fz_ops[oi];
	op->fdi = fdi;
	op->id = id;
	op->ci = p->ci;
	op->cgen = p->cgen;
	op->comm_id = p->comm_id;
	op->nranks = p->nranks;
	op->coll = p->coll;
	op->in_bytes = p->in_bytes;
	op->out_bytes = p->out_bytes;
	op->send = p->send;
	op->recv = p->recv;
	op->send_buf = p->send_buf;
	op->recv_buf = p->recv_buf;
	op->send_slot = p->send_slot;
	op->recv_slot = p->recv_slot;
	op->send_pages = p->send_pages;
	op->recv_pages = p->recv_pages;
	op->pat = p->pat;
	op->ro_src = p->ro_src;
	op->in_place = p->in_place;
	op->checkable = p->checkable;
	op->expect_ok = p->expect_ok;
	op->t_submit = t_submit;
	op->callno = t->cur_no;
	fz_op_insert(oi);
	fz_limbo_match(t, fdi, id);
	pthread_mutex_unlock(&fz_lock);
	p->send_slot = p->recv_slot = NULL;
}

void fz_plan_unknown(struct fz_plan *p, int fdi)
{
	taint(p);
	pthread_mutex_lock(&fz_lock);
	fz_fds[fdi].maybe_queued++;
	pthread_mutex_unlock(&fz_lock);
	/* The kernel may still write its buffers: they stay taken. */
	p->send_slot = p->recv_slot = NULL;
}
