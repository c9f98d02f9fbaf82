/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The errno contract of /dev/collx as include/uapi/linux/collx.h documents
 * it, as data: every ioctl's number, its struct's full and mandatory size,
 * the errnos it may return, and the completion statuses a record may
 * carry.  Shared by collx_fuzz (anything outside these sets is a finding)
 * and collx_errno (the targeted cases).
 */
#ifndef FUZZ_CONTRACT_H
#define FUZZ_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/collx.h>

#ifndef offsetofend
#define offsetofend(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))
#endif
#define FZ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* What a call can be: the ioctls, then the other entry points. */
enum fz_entry {
	FZ_VERSION,
	FZ_COMM_CREATE,
	FZ_COMM_DESTROY,
	FZ_MR_REG,
	FZ_MR_DEREG,
	FZ_SUBMIT,
	FZ_WAIT,
	FZ_SUBMIT_GROUP,
	FZ_NR_IOCTLS,
	FZ_BADNR = FZ_NR_IOCTLS,	/* an ioctl number collx does not define */
	FZ_READ,
	FZ_POLL,
	FZ_NR_ENTRIES,
};

/**
 * struct fz_ioctl - one collx ioctl
 * @name: as the uapi names it, without COLLX_IOC_
 * @nr: the ioctl number
 * @ksize: sizeof its struct in this uapi (ABI 1.1)
 * @min: its mandatory part: the struct as ABI 1.0 defined it (1.0 callers
 *	keep working), or all of it for what 1.1 added
 * @writes_back: the kernel writes output fields back on success
 */
struct fz_ioctl {
	const char *name;
	unsigned long nr;
	uint32_t ksize;
	uint32_t min;
	bool writes_back;
};

extern const struct fz_ioctl fz_ioctls[FZ_NR_IOCTLS];

const char *fz_entry_name(enum fz_entry e);
/* Is @err (0: success) a result the uapi documents for @e? */
bool fz_documented(enum fz_entry e, int err);
/* The documented set of @e as "ENOENT EPIPE ...", in @buf. */
const char *fz_documented_list(enum fz_entry e, char *buf, size_t len);
/* Is @status (0 or a negative errno) a documented collx_completion.status? */
bool fz_status_documented(int32_t status);
/* Would the VFS answer @nr itself before the driver sees it? */
bool fz_nr_is_vfs(unsigned long nr);
/* "EINVAL", "ok" for 0, or the number. */
const char *fz_errname(int err, char *buf, size_t len);
/*
 * How many times slower than Debian's kernels the module runs here:
 * COLLX_FUZZ_SLOW (1-20, default 1; 3 on the lab's debug kernel).  The
 * bounds on waiting for a hang or a cleanup, and the timeouts of comms
 * that must connect, multiply by it; what a call may return does not.
 */
unsigned int fz_slowdown(void);

/* Element size of a dtype, 0 if unknown. */
size_t fz_dtype_size(uint32_t dtype);
const char *fz_coll_name(uint32_t coll);
const char *fz_dtype_name(uint32_t dtype);
/* Can @algo run @coll, as enum collx_algo says?  AUTO runs everything. */
bool fz_algo_runs(uint32_t algo, uint32_t coll);
/* Does @coll read @redop? */
bool fz_coll_reduces(uint32_t coll);

/**
 * fz_coll_bytes() - bytes of a collective's buffers on one rank
 * @coll: a known collective
 * @count: elements
 * @esize: element size
 * @nranks: ranks
 * @in: out, bytes of the send buffer
 * @out: out, bytes of the output buffer (for send: of its input), as
 *	&collx_completion.bytes reports them
 *
 * Return: false if a product overflows 64 bits.
 */
bool fz_coll_bytes(uint32_t coll, uint64_t count, uint64_t esize,
		   uint32_t nranks, uint64_t *in, uint64_t *out);

/* Stats counters of /sys/kernel/debug/collx/stats the fuzzer compares. */
struct fz_counters {
	long long comms, mrs, pinned_pages, ops_in_flight;
};

/* Read them; 0, or an errno (not root, no debugfs, module without it). */
int fz_counters_read(struct fz_counters *c);

#endif /* FUZZ_CONTRACT_H */
