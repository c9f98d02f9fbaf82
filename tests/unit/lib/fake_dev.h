/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake collx module for the host tests: the test binary is linked with
 * -Wl,--wrap=ioctl, and ioctls on an fd of /dev/null (what COLLX_DEVICE
 * points the library at) are answered here as the uapi header says, with
 * every call recorded for the tests to check.  Ops complete when the test
 * says so (fake_complete()), at submit (fake.auto_complete), or with
 * ECANCELED when their communicator is destroyed.
 */
#ifndef FAKE_DEV_H
#define FAKE_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/collx.h>

#define FAKE_MAX_OPS	8192
#define FAKE_MAX_CALLS	256

struct fake_op {
	struct collx_submit s;
	bool done, taken;
	struct collx_completion c;
};

struct fake_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* what the module says it is */
	unsigned int minor;
	bool auto_complete;
	/* what the library did */
	int creates, destroys, submits, groups, waits, mr_regs, mr_deregs;
	int group_sizes[FAKE_MAX_CALLS];
	struct collx_comm_create last_create;
	struct collx_mr_reg last_mr;
	int nops;
	struct fake_op ops[FAKE_MAX_OPS];
	/* a submit whose count is this fails with EINVAL (group: its index) */
	unsigned long long fail_count;
	/* registered ranges, for the completion's mem bits */
	int nmrs;
	struct { unsigned long long start, end; bool dmabuf, live; } mrs[64];
};

extern struct fake_state fake;

/* Forget everything; answer as ABI 1.@minor. */
void fake_reset(unsigned int minor);
/* End op @id with @status (and blame @rank in @phase). */
void fake_complete(unsigned long long id, int status, unsigned int rank, unsigned int phase);
/* Ops submitted and not yet taken by WAIT. */
int fake_pending(void);

#endif
