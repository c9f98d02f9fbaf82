// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract of include/uapi/linux/collx.h, as tables.  Each set
 * below quotes the header: the general errors of "General ioctl format"
 * for every ioctl, plus the ones its struct's DOC block and "Limits" name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "contract.h"

#define IOCTL(_name, _struct, _last, _wb)                               \
	[FZ_##_name] = {                                                \
		.name = #_name,                                         \
		.nr = COLLX_IOC_##_name,                                \
		.ksize = sizeof(struct _struct),                        \
		.min = offsetofend(struct _struct, _last),              \
		.writes_back = _wb,                                     \
	}

/*
 * The mandatory parts are the ABI 1.0 structs: version up to __reserved,
 * comm_create up to failed_rank, mr_reg up to __reserved; submit, wait,
 * destroy and dereg did not grow; submit_group is new in 1.1.
 */
const struct fz_ioctl fz_ioctls[FZ_NR_IOCTLS] = {
	IOCTL(VERSION, collx_version, __reserved, true),
	IOCTL(COMM_CREATE, collx_comm_create, failed_rank, true),
	IOCTL(COMM_DESTROY, collx_comm_destroy, __reserved, false),
	IOCTL(MR_REG, collx_mr_reg, __reserved, true),
	IOCTL(MR_DEREG, collx_mr_dereg, __reserved, false),
	IOCTL(SUBMIT, collx_submit, op_id, true),
	IOCTL(WAIT, collx_wait, completion, true),
	IOCTL(SUBMIT_GROUP, collx_submit_group, __reserved, true),
};

/* "General ioctl format": what every ioctl may return. */
#define GENERAL E2BIG, EOPNOTSUPP, EINVAL, EFAULT, ENOMEM

static const int doc_version[] = { 0, GENERAL, -1 };
/* struct collx_comm_create: "Errors beyond the general ones". */
static const int doc_comm_create[] = {
	0, GENERAL, ETIMEDOUT, EHOSTUNREACH, ENODEV, EXDEV, EACCES, EEXIST,
	EMFILE, EINTR, -1
};
/* struct collx_comm_destroy: ENOENT. */
static const int doc_comm_destroy[] = { 0, GENERAL, ENOENT, -1 };
/* struct collx_mr_reg: ENOMEM, EFAULT, EMFILE; dma-buf: EBADF. */
static const int doc_mr_reg[] = { 0, GENERAL, EMFILE, EBADF, -1 };
/* struct collx_mr_dereg: EBUSY, ENOENT. */
static const int doc_mr_dereg[] = { 0, GENERAL, EBUSY, ENOENT, -1 };
/*
 * struct collx_submit: ENOENT, EPIPE, EAGAIN and (waiting for a dma-buf's
 * device work) EINTR beyond the general ones.
 */
static const int doc_submit[] = {
	0, GENERAL, ENOENT, EPIPE, EAGAIN, EINTR, -1
};
/* struct collx_wait: EAGAIN, ENOENT, EINTR. */
static const int doc_wait[] = { 0, GENERAL, EAGAIN, ENOENT, EINTR, -1 };
/*
 * struct collx_submit_group names no errors of its own beyond EINVAL; its
 * entries are struct collx_submit, so SUBMIT's apply to them.
 */
static const int doc_group[] = {
	0, GENERAL, ENOENT, EPIPE, EAGAIN, EINTR, -1
};
/* "ENOTTY: unknown ioctl number." */
static const int doc_badnr[] = { ENOTTY, -1 };
/*
 * struct collx_completion: "a short buffer gets EINVAL", "blocks unless
 * O_NONBLOCK (EAGAIN)"; a signal interrupts the block; a buffer that
 * cannot be written is EFAULT.
 */
static const int doc_read[] = { 0, EINVAL, EAGAIN, EINTR, EFAULT, -1 };
static const int doc_poll[] = { 0, EINTR, -1 };

static const int *const doc_sets[FZ_NR_ENTRIES] = {
	[FZ_VERSION] = doc_version,
	[FZ_COMM_CREATE] = doc_comm_create,
	[FZ_COMM_DESTROY] = doc_comm_destroy,
	[FZ_MR_REG] = doc_mr_reg,
	[FZ_MR_DEREG] = doc_mr_dereg,
	[FZ_SUBMIT] = doc_submit,
	[FZ_WAIT] = doc_wait,
	[FZ_SUBMIT_GROUP] = doc_group,
	[FZ_BADNR] = doc_badnr,
	[FZ_READ] = doc_read,
	[FZ_POLL] = doc_poll,
};

const char *fz_entry_name(enum fz_entry e)
{
	switch (e) {
	case FZ_BADNR:
		return "BAD_NR";
	case FZ_READ:
		return "read";
	case FZ_POLL:
		return "poll";
	default:
		return e < FZ_NR_IOCTLS ? fz_ioctls[e].name : "?";
	}
}

bool fz_documented(enum fz_entry e, int err)
{
	const int *p;

	for (p = doc_sets[e]; *p >= 0; p++)
		if (*p == err)
			return true;
	return false;
}

const char *fz_errname(int err, char *buf, size_t len)
{
	const char *n;

	if (!err)
		return "ok";
	n = strerrorname_np(err);
	if (n)
		return n;
	snprintf(buf, len, "errno%d", err);
	return buf;
}

const char *fz_documented_list(enum fz_entry e, char *buf, size_t len)
{
	char tmp[16];
	size_t used = 0;
	const int *p;

	buf[0] = 0;
	for (p = doc_sets[e]; *p >= 0 && used < len; p++)
		used += snprintf(buf + used, len - used, "%s%s",
				 used ? " " : "", fz_errname(*p, tmp, sizeof(tmp)));
	return buf;
}

/* struct collx_completion @status. */
bool fz_status_documented(int32_t status)
{
	static const int ok[] = { 0, ETIMEDOUT, ECONNRESET, ENODEV, ECANCELED,
				  EPROTO, EFAULT };
	size_t i;

	for (i = 0; i < FZ_ARRAY_SIZE(ok); i++)
		if (status == -ok[i])
			return true;
	return false;
}

/*
 * do_vfs_ioctl() answers these for every file before the driver: FIOCLEX
 * and friends ('T'), FIGETBSZ (0x00), FS_IOC_* ('f', 0x15), FICLONE and
 * friends (0x94), and on type 'X' (collx's) FS_IOC_FS[GS]ETXATTR (31, 32),
 * FIFREEZE, FITHAW, FITRIM (119-121).  The fuzzer never sends them: their
 * answers are the VFS's, and FIFREEZE as root would freeze a filesystem.
 */
bool fz_nr_is_vfs(unsigned long nr)
{
	unsigned int type = _IOC_TYPE(nr), n = _IOC_NR(nr);

	switch (type) {
	case 0x00:
	case 0x15:
	case 'T':
	case 'f':
	case 0x94:
		return true;
	case 'X':
		return n == 31 || n == 32 || (n >= 119 && n <= 121);
	default:
		return false;
	}
}

size_t fz_dtype_size(uint32_t dtype)
{
	static const unsigned char size[COLLX_DTYPE_COUNT] = {
		[COLLX_INT8] = 1, [COLLX_UINT8] = 1,
		[COLLX_INT32] = 4, [COLLX_UINT32] = 4,
		[COLLX_INT64] = 8, [COLLX_UINT64] = 8,
		[COLLX_FP16] = 2, [COLLX_FP32] = 4, [COLLX_FP64] = 8,
		[COLLX_BF16] = 2, [COLLX_FP8_E4M3] = 1, [COLLX_FP8_E5M2] = 1,
	};

	return dtype < COLLX_DTYPE_COUNT ? size[dtype] : 0;
}

const char *fz_coll_name(uint32_t coll)
{
	static const char *const names[COLLX_COLL_COUNT] = {
		"allreduce", "broadcast", "reduce", "allgather",
		"reduce_scatter", "alltoall", "barrier", "send", "recv",
	};

	return coll < COLLX_COLL_COUNT ? names[coll] : "coll?";
}

const char *fz_dtype_name(uint32_t dtype)
{
	static const char *const names[COLLX_DTYPE_COUNT] = {
		"int8", "uint8", "int32", "uint32", "int64", "uint64",
		"fp16", "fp32", "fp64", "bf16", "fp8e4m3", "fp8e5m2",
	};

	return dtype < COLLX_DTYPE_COUNT ? names[dtype] : "dtype?";
}

/* enum collx_algo: which collectives each algorithm runs. */
bool fz_algo_runs(uint32_t algo, uint32_t coll)
{
	switch (algo) {
	case COLLX_ALGO_AUTO:
		return coll < COLLX_COLL_COUNT;
	case COLLX_ALGO_RING:
		/* a barrier passes a token around the ring */
		return coll < COLLX_COLL_COUNT && coll != COLLX_COLL_SEND &&
		       coll != COLLX_COLL_RECV;
	case COLLX_ALGO_TREE:
		return coll == COLLX_COLL_ALLREDUCE ||
		       coll == COLLX_COLL_REDUCE ||
		       coll == COLLX_COLL_BROADCAST;
	case COLLX_ALGO_RD:
		return coll == COLLX_COLL_ALLREDUCE ||
		       coll == COLLX_COLL_ALLGATHER ||
		       coll == COLLX_COLL_REDUCE_SCATTER ||
		       coll == COLLX_COLL_BARRIER;
	case COLLX_ALGO_PAIRWISE:
		return coll == COLLX_COLL_ALLTOALL;
	case COLLX_ALGO_P2P:
		return coll == COLLX_COLL_SEND || coll == COLLX_COLL_RECV;
	default:
		return false;
	}
}

bool fz_coll_reduces(uint32_t coll)
{
	return coll == COLLX_COLL_ALLREDUCE || coll == COLLX_COLL_REDUCE ||
	       coll == COLLX_COLL_REDUCE_SCATTER;
}

bool fz_coll_bytes(uint32_t coll, uint64_t count, uint64_t esize,
		   uint32_t nranks, uint64_t *in, uint64_t *out)
{
	uint64_t one, all;

	if (__builtin_mul_overflow(count, esize, &one) ||
	    __builtin_mul_overflow(one, (uint64_t)nranks, &all))
		return false;
	switch (coll) {
	case COLLX_COLL_ALLGATHER:
		*in = one;
		*out = all;
		break;
	case COLLX_COLL_REDUCE_SCATTER:
		*in = all;
		*out = one;
		break;
	case COLLX_COLL_ALLTOALL:
		*in = all;
		*out = all;
		break;
	case COLLX_COLL_BARRIER:
		*in = 0;
		*out = 0;
		break;
	case COLLX_COLL_RECV:
		*in = 0;
		*out = one;
		break;
	default:	/* allreduce, broadcast, reduce, send */
		*in = one;
		*out = one;
		break;
	}
	return true;
}

int fz_counters_read(struct fz_counters *c)
{
	FILE *f = fopen("/sys/kernel/debug/collx/stats", "r");
	char key[64];
	long long v;
	int found = 0;

	if (!f)
		return errno;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "comms"))
			c->comms = v, found |= 1;
		else if (!strcmp(key, "mrs"))
			c->mrs = v, found |= 2;
		else if (!strcmp(key, "pinned_pages"))
			c->pinned_pages = v, found |= 4;
		else if (!strcmp(key, "ops_in_flight"))
			c->ops_in_flight = v, found |= 8;
	}
	fclose(f);
	return found == 15 ? 0 : ENODATA;
}

unsigned int fz_slowdown(void)
{
	const char *v = getenv("COLLX_FUZZ_SLOW");
	unsigned long slow = v ? strtoul(v, NULL, 10) : 1;

	return slow >= 1 && slow <= 20 ? (unsigned int)slow : 1;
}
