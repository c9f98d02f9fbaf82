// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: groups, as ncclGroupStart()/ncclGroupEnd(): per thread and
 * nestable.  Between the outermost start and end, collectives are only
 * queued; the end submits each communicator's ops together (one
 * COLLX_IOC_SUBMIT_GROUP per communicator, in the order they were issued)
 * and then waits for the blocking calls among them.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "collx_int.h"

static __thread int depth;
static __thread struct collx_op *qhead, *qtail;

int collx_group_start(void)
{
	if (depth == INT_MAX)
		return -EINVAL;
	depth++;
	return 0;
}

bool collx_group_take(struct collx_op *op)
{
	if (!depth)
		return false;
	op->gnext = NULL;
	if (qtail)
		qtail->gnext = op;
	else
		qhead = op;
	qtail = op;
	return true;
}

/* Submit the ops of @list, one call per communicator. */
static int submit_all(struct collx_op *list, struct collx_op **batch)
{
	struct collx_op *op, **pp;
	int err = 0, k, rc;

	while (list) {
		struct collx_comm *comm = list->comm;

		k = 0;
		for (pp = &list; (op = *pp); ) {
			if (op->comm != comm) {
				pp = &op->gnext;
				continue;
			}
			*pp = op->gnext;
			batch[k++] = op;
		}
		rc = collx_op_submit(comm, batch, k);
		if (rc && !err)
			err = rc;
	}
	return err;
}

/* Out of memory for the batches: each op alone, in order. */
static int submit_one_by_one(struct collx_op *list)
{
	struct collx_op *op, *next;
	int err = 0, rc, done;

	for (op = list; op; op = next) {
		bool blocking = op->blocking;

		next = op->gnext;
		rc = collx_op_submit(op->comm, &op, 1);
		if (blocking)
			rc = collx_op_finish(op, -1, &done, NULL);
		if (rc && !err)
			err = rc;
	}
	return err;
}

int collx_group_end(void)
{
	struct collx_op *list, *op, **batch, **blocking;
	int n = 0, nb = 0, err, rc, done, i;

	if (!depth) {
		collx_set_error(NULL, "group: collx_group_end() without collx_group_start()");
		return -EINVAL;
	}
	if (--depth)
		return 0;
	list = qhead;
	qhead = qtail = NULL;
	for (op = list; op; op = op->gnext)
		n++;
	if (!n)
		return 0;
	batch = malloc(n * sizeof(*batch));
	blocking = malloc(n * sizeof(*blocking));
	if (!batch || !blocking) {
		free(batch);
		free(blocking);
		return submit_one_by_one(list);
	}
	/* Noted before submitting: once submitted, an async op belongs to
	 * its caller and may be freed by another thread. */
	for (op = list; op; op = op->gnext)
		if (op->blocking)
			blocking[nb++] = op;
	err = submit_all(list, batch);
	for (i = 0; i < nb; i++) {
		rc = collx_op_finish(blocking[i], -1, &done, NULL);
		if (rc && !err)
			err = rc;
	}
	free(batch);
	free(blocking);
	return err;
}
