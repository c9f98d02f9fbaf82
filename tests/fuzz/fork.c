// SPDX-License-Identifier: GPL-2.0
/*
 * Fork after register: a child process submits, on the inherited fd and
 * comm, a collective on the very addresses of the parent's registration.
 * The registration belongs to the parent's address space, so the child's
 * collective must bounce the child's own pages (its output is its own
 * input) or fail cleanly, and the parent's pinned pages must not change.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

struct child_report {
	int submit_err, wait_err;
	int32_t status;
	int64_t bad;		/* first byte of its output not its input */
};

/* Only system calls and its own memory: the parent has other threads. */
static void child(int fd, uint32_t comm_id, uint8_t *send, uint8_t *recv,
		  uint64_t bytes, uint32_t pat, int out)
{
	struct collx_submit s = { .size = sizeof(s) };
	struct collx_wait w = { .size = sizeof(w) };
	struct child_report rep = { .bad = -1 };

	fz_fill(send, bytes, pat);
	memset(recv, 0, bytes);
	s.comm_id = comm_id;
	s.coll = COLLX_COLL_ALLREDUCE;
	s.dtype = COLLX_UINT8;
	s.redop = COLLX_OP_SUM;
	s.count = bytes;
	s.sendbuf = (uint64_t)(uintptr_t)send;
	s.recvbuf = (uint64_t)(uintptr_t)recv;
	rep.submit_err = ioctl(fd, COLLX_IOC_SUBMIT, &s) ? errno : 0;
	if (!rep.submit_err) {
		w.op_id = s.op_id;
		w.timeout_ms = 3000;
		rep.wait_err = ioctl(fd, COLLX_IOC_WAIT, &w) ? errno : 0;
		rep.status = w.completion.status;
		if (!rep.wait_err && !rep.status)
			rep.bad = fz_check_fill(recv, bytes, pat);
	}
	if (write(out, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

void fz_fork_after_register(struct fz_thread *t)
{
	struct fz_rng *r = &t->rng;
	size_t pages, len = (2 + fz_below(r, 62)) * FZ_PAGE;
	uint32_t pat = (uint32_t)fz_next(r), comm_id;
	struct child_report rep = { 0 };
	uint8_t *region, *send, *recv;
	int fd, fdi = -1, ci, mi = -1, p[2] = { -1, -1 }, err, st;
	char b1[16], b2[16];
	uint64_t bytes;
	unsigned int bound;
	double end;
	pid_t pid;
	int64_t bad;

	region = fz_slot_get(len, &pages);
	fd = open("/dev/collx", O_RDWR | O_CLOEXEC);
	if (!region || fd < 0 || pipe(p))
		goto out;
	pthread_mutex_lock(&fz_lock);
	fdi = fz_fd_add(fd, false, true, true);
	pthread_mutex_unlock(&fz_lock);
	if (fdi < 0)
		goto out;
	ci = fz_create_1rank(t, fdi, UINT32_MAX, &err);
	if (ci >= 0)
		mi = fz_reg(t, fdi, region, len);
	if (mi < 0)
		goto out;
	comm_id = fz_comms[ci].id;
	fz_fill(region, len, pat);
	send = region + 64;
	recv = region + len / 2 + 64;
	bytes = 1 + fz_below(r, len / 2 - 128);
	/* The child's records are its own; the parent reads none of them. */
	fz_fds[fdi].shared = true;
	fz_begin(t, "fork after register");
	pid = fork();
	if (!pid)
		child(fd, comm_id, send, recv, bytes, ~pat, p[1]);
	fz_end(t);
	if (pid < 0)
		goto out;
	close(p[1]);
	p[1] = -1;
	bound = 10 * fz_slowdown();
	end = fz_now() + bound;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (fz_now() > end) {
			fz_finding(t, F_HANG, "fork after register: the child did not exit in %u s",
				   bound);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep(1000);
	}
	if (read(p[0], &rep, sizeof(rep)) == sizeof(rep)) {
		fz_count(t, FZ_SUBMIT, rep.submit_err,
			 "SUBMIT in a forked child, on the parent's registered addresses");
		if (!rep.submit_err)
			fz_count(t, FZ_WAIT, rep.wait_err, "WAIT in a forked child");
		if (!rep.submit_err && !rep.wait_err &&
		    !fz_status_documented(rep.status))
			fz_finding(t, F_RECORD, "fork after register: the child's op ended with status %d",
				   rep.status);
		if (rep.bad >= 0)
			fz_finding(t, F_DATA, "fork after register: the child's output is not its input at byte %lld (the parent's pinned pages were used?)",
				   (long long)rep.bad);
		if (!rep.submit_err && rep.wait_err == EAGAIN)
			fz_finding(t, F_HANG, "fork after register: the child's local copy did not end in 3 s");
	} else {
		fz_finding(t, F_HANG, "fork after register: the child reported nothing (%s %s)",
			   fz_errname(rep.submit_err, b1, sizeof(b1)),
			   fz_errname(rep.wait_err, b2, sizeof(b2)));
	}
	bad = fz_check_fill(region, len, pat);
	if (bad >= 0)
		fz_finding(t, F_DATA, "fork after register: the parent's registered memory changed at byte %lld",
			   (long long)bad);
out:
	if (mi >= 0)
		fz_dereg(t, fdi, mi);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (fdi >= 0) {
		pthread_mutex_lock(&fz_lock);
		fz_fd_closing(fdi);
		pthread_mutex_unlock(&fz_lock);
	}
	if (fd >= 0)
		close(fd);
	if (fdi >= 0) {
		pthread_mutex_lock(&fz_lock);
		fz_fd_forget(fdi);
		pthread_mutex_unlock(&fz_lock);
	}
	fz_slot_put(region, pages);
}
