// SPDX-License-Identifier: GPL-2.0
/*
 * COLLX_IOC_VERSION, and ioctl numbers collx does not define: its own
 * type's neighbours, other types, the same numbers with a size and a
 * direction encoded, and random ones (never those the VFS answers).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "fuzz.h"

void fz_gen_version(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	struct collx_version *v;
	struct fz_call c;

	fz_call_init(&c, FZ_VERSION, fdi);
	v = &c.st.version;
	if (fz_pm(r, 300))
		memset(v, 0xff, sizeof(*v));	/* junk in the out fields */
	v->flags = fz_pm(r, 900) ? 0 : fz_u32(r);
	v->__reserved = fz_pm(r, 900) ? 0 : fz_u32(r);
	c.valid = !v->flags && !v->__reserved;
	if (v->__reserved) {
		c.expect = EINVAL;
		if (v->flags)
			c.alt = EOPNOTSUPP;
	} else if (v->flags) {
		/* An unknown flag: EOPNOTSUPP, or EINVAL ("must be 0"). */
		c.expect = EOPNOTSUPP;
		c.alt = EINVAL;
	}
	snprintf(c.desc, sizeof(c.desc), "flags=%#x reserved=%#x", v->flags,
		 v->__reserved);
	if (fz_ioctl(t, &c) || !c.out_ok)
		return;
	if (c.size >= offsetofend(struct collx_version, abi_major) &&
	    v->abi_major != COLLX_ABI_MAJOR)
		fz_finding(t, F_ORACLE, "VERSION says ABI major %u", v->abi_major);
	if (c.size >= sizeof(*v) &&
	    !memchr(v->module_version, 0, sizeof(v->module_version)))
		fz_finding(t, F_ORACLE, "VERSION: module_version not NUL-terminated");
}

/* A number collx does not define, and that the VFS does not answer. */
static unsigned long bad_number(struct fz_rng *r)
{
	static const unsigned int types[] = { 'Y', 'W', 'x', 0x01, 0xcc,
					      0xfe, 0xff };
	static const unsigned int dirs[] = { _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	unsigned long nr = 0;
	unsigned int k, i, e;

	for (k = 0; k < 16; k++) {
		switch (fz_below(r, 5)) {
		case 0:	/* neighbours of the last and first numbers */
			nr = _IO(COLLX_TYPE, fz_pm(r, 500) ?
				 COLLX_CMD_COMM_QUERY + 1 + fz_below(r, 8) :
				 COLLX_CMD_BASE - 1 - fz_below(r, 8));
			break;
		case 1:	/* any other number of collx's type */
			nr = _IO(COLLX_TYPE, fz_below(r, 256));
			break;
		case 2:	/* collx's numbers under other types */
			nr = _IO(types[fz_below(r, FZ_ARRAY_SIZE(types))],
				 COLLX_CMD_BASE + fz_below(r, FZ_NR_IOCTLS + 1));
			break;
		case 3:	/* collx's numbers with a size and a direction */
			e = (unsigned int)fz_below(r, FZ_NR_IOCTLS);
			nr = _IOC(fz_pm(r, 200) ? _IOC_NONE :
				  dirs[fz_below(r, FZ_ARRAY_SIZE(dirs))],
				  COLLX_TYPE, _IOC_NR(fz_ioctls[e].nr),
				  fz_pm(r, 600) ? fz_ioctls[e].ksize :
				  1 + fz_below(r, _IOC_SIZEMASK));
			break;
		default:
			nr = (uint32_t)fz_next(r);
			break;
		}
		for (i = 0; i < FZ_NR_IOCTLS; i++)
			if ((uint32_t)nr == fz_ioctls[i].nr)
				break;
		/* COMM_QUERY is a known number the fuzzer does not model. */
		if (i == FZ_NR_IOCTLS && !fz_nr_is_vfs(nr) &&
		    (uint32_t)nr != COLLX_IOC_COMM_QUERY)
			return nr;
	}
	return _IO(COLLX_TYPE, COLLX_CMD_COMM_QUERY + 1);
}

void fz_gen_badnr(struct fz_thread *t, int fdi)
{
	struct fz_rng *r = &t->rng;
	unsigned long nr = bad_number(r);
	uint64_t arg;
	const char *what = "a valid struct";
	char desc[128];
	int err;

	if (fz_pm(r, 700)) {
		/* Something that would pass for a struct of any ioctl. */
		memset(t->arg, 0, FZ_PAGE);
		*(uint32_t *)t->arg = fz_ioctls[fz_below(r, FZ_NR_IOCTLS)].ksize;
		arg = (uint64_t)(uintptr_t)t->arg;
	} else {
		arg = fz_ptr_bad(r, &what);
	}
	snprintf(desc, sizeof(desc), "ioctl fd%d nr=%#lx arg=%s", fdi, nr,
		 what);
	fz_begin(t, desc);
	err = ioctl(fz_fds[fdi].fd, nr, (void *)(uintptr_t)arg) ? errno : 0;
	fz_end(t);
	fz_count(t, FZ_BADNR, err, desc);
}
