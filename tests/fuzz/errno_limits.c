// SPDX-License-Identifier: GPL-2.0
/*
 * The limits of "DOC: Limits": COLLX_MAX_COMMS_PER_FD comms (EMFILE),
 * COLLX_MAX_MRS_PER_FD registrations (EMFILE), COLLX_MAX_OPS_PER_FD
 * unread ops (EAGAIN, for a group too, all or nothing), and pinned pages
 * against RLIMIT_MEMLOCK (ENOMEM) for a process without CAP_IPC_LOCK:
 * a child that lowers its limit and, when root, becomes nobody first.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etest.h"

#define NOBODY		65534
#define LOW_LIMIT	(64 * 1024)

static void comms(void)
{
	static uint32_t ids[COLLX_MAX_COMMS_PER_FD];
	uint32_t extra, i, made = 0;
	int fd = et_open(), err = 0;

	for (i = 0; i < COLLX_MAX_COMMS_PER_FD && !err; i++)
		if (!(err = et_comm(fd, 0, &ids[i])))
			made++;
	et_expect(err, 0, -1, "COMM_CREATE: COLLX_MAX_COMMS_PER_FD (%u) 1-rank comms on one fd -> ok",
		  made);
	err = et_comm(fd, 0, &extra);
	et_expect(err, EMFILE, -1, "COMM_CREATE: COLLX_MAX_COMMS_PER_FD + 1 -> EMFILE");
	if (!err)
		et_destroy(fd, extra);
	if (made) {
		et_destroy(fd, ids[--made]);
		err = et_comm(fd, 0, &ids[made]);
		et_expect(err, 0, -1, "COMM_CREATE: again after destroying one -> ok");
		if (!err)
			made++;
	}
	for (i = 0; i < made; i++)
		et_destroy(fd, ids[i]);
	close(fd);
}

static void mrs(void)
{
	struct rlimit rl;
	uint32_t id, i, made = 0;
	int fd, err = 0;

	if (!et.root && (getrlimit(RLIMIT_MEMLOCK, &rl) ||
			 rl.rlim_cur < (COLLX_MAX_MRS_PER_FD + 1) * ET_PAGE)) {
		et_skip("RLIMIT_MEMLOCK below COLLX_MAX_MRS_PER_FD + 1 pages",
			"MR_REG: COLLX_MAX_MRS_PER_FD + 1 -> EMFILE");
		return;
	}
	fd = et_open();
	for (i = 0; i < COLLX_MAX_MRS_PER_FD && !err; i++)
		if (!(err = et_reg(fd, et.buf + (i % 64) * ET_PAGE, ET_PAGE, &id)))
			made++;
	et_expect(err, 0, -1, "MR_REG: COLLX_MAX_MRS_PER_FD (%u) registrations on one fd -> ok",
		  made);
	err = et_reg(fd, et.buf, ET_PAGE, &id);
	et_expect(err, EMFILE, -1, "MR_REG: COLLX_MAX_MRS_PER_FD + 1 -> EMFILE");
	close(fd);		/* and every registration with it */
}

static void ops(void)
{
	struct collx_submit_group g = { .size = sizeof(g) };
	struct collx_submit s, e;
	uint32_t comm, mr, i, queued = 0;
	struct collx_completion c;
	unsigned int got;
	int fd = et_open(), err = 0;

	if (et_comm(fd, 0, &comm) || et_reg(fd, et.buf, ET_PAGE, &mr)) {
		et_ok(false, "setup", "SUBMIT: COLLX_MAX_OPS_PER_FD unread ops -> ok");
		close(fd);
		return;
	}
	/* In place in a registration: nothing to pin per op. */
	et_allreduce(&s, comm, 1, et.buf, et.buf);
	for (i = 0; i < COLLX_MAX_OPS_PER_FD && !err; i++)
		if (!(err = et_submit(fd, &s)))
			queued++;
	et_expect(err, 0, -1, "SUBMIT: COLLX_MAX_OPS_PER_FD (%u) ops, no record read -> ok",
		  queued);
	et_readable(fd, 1000);
	err = et_submit(fd, &s);
	et_expect(err, EAGAIN, -1,
		  "SUBMIT: COLLX_MAX_OPS_PER_FD + 1 unread ops -> EAGAIN");
	queued += !err;
	e = s;
	g.count = 1;
	g.entry_size = sizeof(e);
	g.entries = (uint64_t)(uintptr_t)&e;
	err = et_ioctl(fd, COLLX_IOC_SUBMIT_GROUP, &g);
	et_expect(err, EAGAIN, -1,
		  "SUBMIT_GROUP: one more op than COLLX_MAX_OPS_PER_FD -> EAGAIN");
	queued += !err;
	err = read(fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
	if (!err) {
		queued--;
		err = et_submit(fd, &s);
		queued += !err;
	}
	et_expect(err, 0, -1, "SUBMIT: after reading one record -> ok");
	got = et_drain(fd, 1000);
	et_ok(got == queued, "records lost or invented",
	      "read: every other record, once (%u of %u)", got, queued);
	et_destroy(fd, comm);
	close(fd);
}

struct memlock_report {
	int setup, reg_big, reg_small, submit;
};

/* In a child: a low RLIMIT_MEMLOCK and no CAP_IPC_LOCK. */
static void memlock_child(int out)
{
	struct memlock_report rep = { 0 };
	struct rlimit rl = { LOW_LIMIT, LOW_LIMIT };
	struct collx_submit s;
	uint32_t comm, id;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    (!geteuid() && (setgroups(0, NULL) || setgid(NOBODY) ||
			    setuid(NOBODY))) || !geteuid())
		rep.setup = errno ? errno : EPERM;
	fd = rep.setup ? -1 : et_open();
	if (fd < 0 && !rep.setup)
		rep.setup = errno;
	if (!rep.setup) {
		rep.reg_big = et_reg(fd, et.buf, 1 << 20, &id);
		rep.reg_small = et_reg(fd, et.buf, 4 * ET_PAGE, &id);
		rep.submit = et_comm(fd, 0, &comm);
		if (!rep.submit) {
			et_allreduce(&s, comm, (1 << 20) / 4, et.buf + (1 << 20),
				     et.buf + (2 << 20));
			rep.submit = et_submit(fd, &s);
		}
	}
	if (write(out, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

static void memlock(void)
{
	struct memlock_report rep = { .setup = EIO };
	int p[2], st;
	pid_t pid;

	if (pipe(p)) {
		et_ok(false, "pipe", "MR_REG: over RLIMIT_MEMLOCK -> ENOMEM");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (!pid)
		memlock_child(p[1]);
	close(p[1]);
	if (pid > 0) {
		if (read(p[0], &rep, sizeof(rep)) != sizeof(rep))
			rep.setup = EIO;
		waitpid(pid, &st, 0);
	}
	close(p[0]);
	if (rep.setup) {
		et_ok(false, et_err(rep.setup),
		      "MR_REG: 1 MiB over a %u KiB RLIMIT_MEMLOCK, as nobody -> ENOMEM",
		      LOW_LIMIT / 1024);
		return;
	}
	et_expect(rep.reg_big, ENOMEM, -1,
		  "MR_REG: 1 MiB over a %u KiB RLIMIT_MEMLOCK, as nobody -> ENOMEM",
		  LOW_LIMIT / 1024);
	et_expect(rep.reg_small, 0, -1,
		  "MR_REG: 16 KiB under a %u KiB RLIMIT_MEMLOCK, as nobody -> ok",
		  LOW_LIMIT / 1024);
	et_expect(rep.submit, ENOMEM, -1,
		  "SUBMIT: 1 MiB bounced over a %u KiB RLIMIT_MEMLOCK, as nobody -> ENOMEM",
		  LOW_LIMIT / 1024);
}

void et_limit_cases(void)
{
	comms();
	mrs();
	ops();
	memlock();
}
