// SPDX-License-Identifier: GPL-2.0
/*
 * collx: one object model for comms, registrations and ops (iommufd's and
 * rxe's pools): an id is reserved first with XA_ZERO_ENTRY, which lookups
 * do not see; the object is built; only when every fallible step is done
 * is it published with collx_obj_finalize().  The table entry holds a
 * reference of its own; lookups take another under the xarray's lock, and
 * removal erases under that lock before dropping the table's, so a lookup
 * never sees an object that is being freed.  Each table is bounded
 * (COLLX_MAX_*_PER_FD): reserving beyond it fails and changes nothing.
 */
#include <linux/xarray.h>

#include "collx_loc.h"

/**
 * collx_obj_reserve() - reserve an id in a bounded table
 * @xa: the table (XA_FLAGS_ALLOC1)
 * @count: its entry count
 * @max: the bound
 * @id: out
 * @next: for cyclic ids (ops) the allocation cursor, else NULL
 * @full: the errno to return when the table is at its bound
 *
 * Context: process context.
 * Return: 0, @full (the table is at its bound), or -ENOMEM.
 */
int collx_obj_reserve(struct xarray *xa, atomic_t *count, u32 max, u32 *id,
		      u32 *next, int full)
{
	int ret;

	if (atomic_inc_return(count) > max) {
		atomic_dec(count);
		return full;
	}
	if (next)
		ret = xa_alloc_cyclic(xa, id, XA_ZERO_ENTRY, xa_limit_31b, next,
				      GFP_KERNEL_ACCOUNT);
	else
		ret = xa_alloc(xa, id, XA_ZERO_ENTRY, xa_limit_31b,
			       GFP_KERNEL_ACCOUNT);
	if (ret < 0) {
		atomic_dec(count);
		return ret == -EBUSY ? full : ret;
	}
	return 0;
}

/**
 * collx_obj_finalize() - publish an object at its reserved id
 * @xa: the table
 * @id: the id
 * @obj: the object, complete, with the table's reference taken
 *
 * Cannot fail: the slot exists, so storing allocates nothing.
 *
 * Context: process context.
 */
void collx_obj_finalize(struct xarray *xa, u32 id, void *obj)
{
	void *old = xa_store(xa, id, obj, GFP_KERNEL);

	WARN_ON(old);	/* a reserved slot reads back as NULL */
}

/**
 * collx_obj_abort() - give a reserved id back
 * @xa: the table
 * @count: its entry count
 * @id: the id, never finalized
 *
 * Context: process context.
 */
void collx_obj_abort(struct xarray *xa, atomic_t *count, u32 id)
{
	xa_erase(xa, id);
	atomic_dec(count);
}

/**
 * collx_obj_remove() - take a published object out of its table
 * @xa: the table
 * @count: its entry count
 * @id: the id
 *
 * Context: process context.
 * Return: the object, whose table reference the caller now owns, or NULL
 * (no such id, or only reserved).
 */
void *collx_obj_remove(struct xarray *xa, atomic_t *count, u32 id)
{
	void *obj;

	xa_lock(xa);
	obj = xa_load(xa, id);
	if (obj)
		__xa_erase(xa, id);
	xa_unlock(xa);
	if (obj)
		atomic_dec(count);
	return obj;
}
