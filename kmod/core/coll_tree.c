// SPDX-License-Identifier: GPL-2.0
/*
 * collx core: double binary tree schedules (allreduce, reduce, broadcast).
 * The data is cut in two halves; half k is reduced up and broadcast down
 * tree k of collx_dtree(), slice by slice, so the two halves use links the
 * other leaves idle.  Ranks are rotated (virtual rank (rank - root) mod n)
 * so that tree 0's root is the collective's root; half 1 takes one extra
 * hop between the root and tree 1's root.  Documentation/schedules.md.
 */
#include "coll_impl.h"

/**
 * struct tree_ctx - one rank's place in both trees
 * @b: the schedule being built
 * @n: ranks
 * @v: this rank's virtual rank
 * @top1: tree 1's root, virtual
 * @node: this rank in each tree, virtual ranks
 * @h: the half each tree carries
 * @tmp: scratch elements handed out so far
 * @acc_buf: where the up pass left this rank's (partial) sum of a half
 * @acc_off: its offset there
 * @last: the last write of that sum (COLLX_NOX: nothing was written)
 * @up: the send of that sum to the parent
 * @top: at a tree's root, the transfer after which its half is final
 */
struct tree_ctx {
	struct collx_bld *b;
	u32 n;
	u32 v;
	u32 top1;
	struct collx_tree_node node[2];
	struct collx_range h[2];
	u64 tmp;
	u8 acc_buf[2];
	u64 acc_off[2];
	s32 last[2];
	s32 up[2];
	s32 top[2];
};

static u32 tree_real(const struct tree_ctx *t, u32 v)
{
	return collx_mod_add(t->n, v, t->b->a->root);
}

static void tree_init(struct tree_ctx *t, struct collx_bld *b)
{
	const struct collx_coll_args *a = b->a;
	u32 k;

	t->b = b;
	t->n = a->nranks;
	t->v = collx_mod_sub(t->n, a->rank, a->root);
	t->top1 = collx_dtree_root(t->n, 1);
	t->tmp = 0;
	for (k = 0; k < 2; k++) {
		collx_dtree(t->n, t->v, k, &t->node[k]);
		collx_split(a->count, 2, k, &t->h[k]);
		t->last[k] = COLLX_NOX;
		t->up[k] = COLLX_NOX;
		t->top[k] = COLLX_NOX;
	}
}

/*
 * Reduce half k up tree k: add the children's sums to this rank's part
 * (one after the other: both write the same elements) and send the sum
 * to the parent.  Allreduce and the root sum into the output; other ranks
 * of a reduce into scratch, their output being none of theirs.
 */
static void tree_up(struct tree_ctx *t, u32 k)
{
	struct collx_bld *b = t->b;
	const struct collx_coll_args *a = b->a;
	const struct collx_tree_node *node = &t->node[k];
	const struct collx_range *h = &t->h[k];
	u8 in = collx_bld_inbuf(b);
	s32 cp, rr;
	u32 i;

	collx_bld_at(b, COLLX_PHASE_REDUCE, k);
	t->acc_buf[k] = in;
	t->acc_off[k] = h->off;
	if (node->nchildren) {
		if (a->coll == COLLX_COLL_ALLREDUCE || !t->v) {
			t->acc_buf[k] = COLLX_BUF_OUT;
		} else {
			t->acc_buf[k] = COLLX_BUF_TMP;
			t->acc_off[k] = t->tmp;
			t->tmp += h->len;
		}
		cp = COLLX_NOX;
		if (t->acc_buf[k] != in)
			cp = collx_bld_copy(b, in, h->off, t->acc_buf[k],
					    t->acc_off[k], h->len);
		t->last[k] = cp;
		for (i = 0; i < node->nchildren; i++) {
			rr = collx_bld_rr(b, tree_real(t, node->child[i]),
					  t->acc_buf[k], t->acc_off[k], h->len);
			collx_bld_sdep(b, rr, t->last[k]);
			t->last[k] = rr;
		}
	}
	/* a leaf sends its part straight from its input */
	if (node->parent >= 0) {
		t->up[k] = collx_bld_send(b, tree_real(t, node->parent),
					  t->acc_buf[k], t->acc_off[k],
					  h->len);
		collx_bld_sdep(b, t->up[k], t->last[k]);
	}
}

/*
 * Broadcast half k down tree k from where this rank holds it, slice by
 * slice as it arrives.  In a broadcast the root has both halves from the
 * start: it neither waits for nor receives half 1 in tree 1, and its
 * parent there does not send it.
 */
static void tree_down(struct tree_ctx *t, u32 k)
{
	struct collx_bld *b = t->b;
	const struct collx_coll_args *a = b->a;
	const struct collx_tree_node *node = &t->node[k];
	const struct collx_range *h = &t->h[k];
	bool bc = a->coll == COLLX_COLL_BROADCAST;
	u8 buf = COLLX_BUF_OUT;
	s32 have, snd;
	u32 i;

	collx_bld_at(b, COLLX_PHASE_BROADCAST, k);
	if (bc && !t->v) {
		buf = collx_bld_inbuf(b);
		have = COLLX_NOX;
	} else if (node->parent < 0) {
		have = t->top[k];
	} else {
		have = collx_bld_recv(b, tree_real(t, node->parent),
				      COLLX_BUF_OUT, h->off, h->len);
		/* the sum went up from the output (zero copy): wait for it */
		if (!bc && t->acc_buf[k] == COLLX_BUF_OUT)
			collx_bld_sdep(b, have, t->up[k]);
	}
	for (i = 0; i < node->nchildren; i++) {
		if (bc && k == 1 && !node->child[i])
			continue;
		snd = collx_bld_send(b, tree_real(t, node->child[i]), buf,
				     h->off, h->len);
		collx_bld_sdep(b, snd, have);
	}
}

/*
 * Order on every rank: tree 0 up, tree 1 up, tree 0 down, tree 1 down.
 * Any two ranks then exchange at most one transfer per pass and
 * direction, in the same order at both ends, and no pass waits for a
 * later one, so the per-peer order of the executor cannot deadlock.
 */
static void tree_allreduce(struct tree_ctx *t)
{
	struct collx_bld *b = t->b;
	u32 k;

	tree_up(t, 0);
	tree_up(t, 1);
	for (k = 0; k < 2; k++) {
		if (t->node[k].parent >= 0)
			continue;
		/* the root of tree k holds the whole sum of half k */
		collx_bld_at(b, COLLX_PHASE_REDUCE, k);
		t->top[k] = collx_bld_avg(b, COLLX_BUF_OUT, t->h[k].off,
					  t->h[k].len);
		collx_bld_sdep(b, t->top[k], t->last[k]);
		if (t->top[k] == COLLX_NOX)
			t->top[k] = t->last[k];
	}
	tree_down(t, 0);
	tree_down(t, 1);
}

static void tree_reduce(struct tree_ctx *t)
{
	struct collx_bld *b = t->b;
	const struct collx_range *h1 = &t->h[1];
	s32 sc, snd, rcv;

	tree_up(t, 0);
	tree_up(t, 1);
	if (!t->v) {
		sc = collx_bld_avg(b, COLLX_BUF_OUT, t->h[0].off,
				   t->h[0].len);
		collx_bld_sdep(b, sc, t->last[0]);
	}
	/* half 1 is complete at tree 1's root: one hop more to the root */
	collx_bld_at(b, COLLX_PHASE_REDUCE, 1);
	if (t->v == t->top1) {
		snd = collx_bld_send(b, tree_real(t, 0), t->acc_buf[1],
				     t->acc_off[1], h1->len);
		collx_bld_sdep(b, snd, t->last[1]);
	}
	if (!t->v) {
		rcv = collx_bld_recv(b, tree_real(t, t->top1), COLLX_BUF_OUT,
				     h1->off, h1->len);
		/* the root's own part of half 1 went up from there */
		if (t->acc_buf[1] == COLLX_BUF_OUT)
			collx_bld_sdep(b, rcv, t->up[1]);
		sc = collx_bld_avg(b, COLLX_BUF_OUT, h1->off, h1->len);
		collx_bld_sdep(b, sc, rcv);
	}
}

static void tree_broadcast(struct tree_ctx *t)
{
	struct collx_bld *b = t->b;
	const struct collx_coll_args *a = b->a;
	const struct collx_range *h1 = &t->h[1];

	collx_bld_at(b, COLLX_PHASE_BROADCAST, 0);
	if (!t->v && !a->inplace)
		collx_bld_copy(b, COLLX_BUF_IN, 0, COLLX_BUF_OUT, 0, a->count);
	/* the root hands half 1 to tree 1's root first */
	collx_bld_at(b, COLLX_PHASE_BROADCAST, 1);
	if (!t->v)
		collx_bld_send(b, tree_real(t, t->top1), collx_bld_inbuf(b),
			       h1->off, h1->len);
	if (t->v == t->top1)
		t->top[1] = collx_bld_recv(b, tree_real(t, 0), COLLX_BUF_OUT,
					   h1->off, h1->len);
	tree_down(t, 0);
	tree_down(t, 1);
}

void collx_tree_build(struct collx_bld *b)
{
	struct tree_ctx t;

	tree_init(&t, b);
	switch (b->a->coll) {
	case COLLX_COLL_ALLREDUCE:
		tree_allreduce(&t);
		break;
	case COLLX_COLL_REDUCE:
		tree_reduce(&t);
		break;
	case COLLX_COLL_BROADCAST:
		tree_broadcast(&t);
		break;
	default:
		b->err = -EOPNOTSUPP;
		break;
	}
}

u32 collx_tree_max_xfers(u32 coll)
{
	switch (coll) {
	case COLLX_COLL_ALLREDUCE:
		/* per tree: copy, 2 reduces, send up, scale, recv, 2 sends */
		return 14;
	case COLLX_COLL_REDUCE:
		/* per tree: copy, 2 reduces, send; the root's hop and scales */
		return 10;
	default:
		/* copy, the hop, per tree a recv and 2 sends */
		return 8;
	}
}
