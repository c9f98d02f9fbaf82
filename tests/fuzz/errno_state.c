// SPDX-License-Identifier: GPL-2.0
/*
 * Errnos that depend on state: records (read() and WAIT, each record
 * once), poll, ids that are gone, and a communicator of this node with
 * itself (two fds, ranks 0 and 1 at this node's address: no traffic
 * leaves the node) to hold a collective in flight: EAGAIN from WAIT,
 * EBUSY from MR_DEREG, the peer leaving (the collective fails, the comm
 * is in its error state: EPIPE), ECANCELED on destroy.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etest.h"

#define REC	sizeof(struct collx_completion)

/* One completed op on a fresh 1-rank comm; its id. */
static int one_op(int fd, uint32_t *comm, uint64_t *id)
{
	struct collx_submit s;
	int err = et_comm(fd, 0, comm);

	if (err)
		return err;
	et_allreduce(&s, *comm, 16, et.buf, et.buf + 4096);
	err = et_submit(fd, &s);
	*id = s.op_id;
	if (!err && !et_readable(fd, 2000))
		err = ETIMEDOUT;
	return err;
}

static void records(void)
{
	struct collx_completion c[2];
	struct collx_submit s;
	struct collx_wait *w;
	struct pollfd p;
	uint32_t comm;
	uint64_t id;
	ssize_t r;
	int fd = et_open(), err;

	err = one_op(fd, &comm, &id);
	r = err ? -1 : read(fd, c, REC - 1);
	et_expect(r < 0 ? errno : 0, EINVAL, -1,
		  "read: a buffer one byte short of a record, one queued -> EINVAL");
	r = read(fd, c, sizeof(c));
	et_ok(r == REC && c[0].op_id == id, "lost by the short read",
	      "read: that record is still there, whole -> 1 record");
	et_expect(read(fd, c, sizeof(c)) < 0 ? errno : 0, EAGAIN, -1,
		  "read: O_NONBLOCK and nothing queued -> EAGAIN");
	p.fd = fd;
	p.events = POLLIN;
	et_ok(poll(&p, 1, 0) == 0, "EPOLLIN", "poll: nothing queued -> no EPOLLIN");
	et_expect(et_wait(fd, id, 0, NULL), ENOENT, -1,
		  "WAIT: an op whose record read() returned -> ENOENT");
	et_expect(et_wait(fd, 0x7fffffffffffULL, 0, NULL), ENOENT, -1,
		  "WAIT: an op_id never handed out -> ENOENT");

	if (!one_op(fd, &comm, &id)) {
		p.revents = 0;
		et_ok(poll(&p, 1, 0) == 1 && (p.revents & POLLIN), "no EPOLLIN",
		      "poll: a record queued -> EPOLLIN");
		r = read(fd, et.ro, REC);
		et_expect(r < 0 ? errno : 0, EFAULT, -1,
			  "read: into read-only memory, a record queued -> EFAULT");
		et_ok(et_wait(fd, id, 0, c) == 0 && c[0].op_id == id,
		      "the record was lost",
		      "WAIT: the record read() could not write is still there -> ok");
		et_expect(et_wait(fd, id, 0, NULL), ENOENT, -1,
			  "WAIT: the same op again -> ENOENT");
	}
	if (!one_op(fd, &comm, &id)) {
		mprotect(et.ro, 4 * ET_PAGE, PROT_READ | PROT_WRITE);
		w = (struct collx_wait *)(et.ro + ET_PAGE);
		memset(w, 0, sizeof(*w));
		w->size = sizeof(*w);
		w->op_id = id;
		mprotect(et.ro, 4 * ET_PAGE, PROT_READ);
		et_expect(et_ioctl(fd, COLLX_IOC_WAIT, w), EFAULT, -1,
			  "WAIT: completion in read-only memory -> EFAULT");
		r = read(fd, c, sizeof(c));
		et_ok(r == REC && c[0].op_id == id, "the record was lost",
		      "read: the record WAIT could not write is still there -> 1 record");
	}
	et_destroy(fd, comm);
	et_allreduce(&s, comm, 16, et.buf + 8192, et.buf + 12288);
	et_expect(et_submit(fd, &s), ENOENT, -1,
		  "SUBMIT: on a destroyed comm -> ENOENT");
	close(fd);
}

static void in_flight(void)
{
	struct collx_completion c = { 0 };
	struct collx_submit s;
	struct et_pair p;
	uint32_t mr = 0;
	int err, mr_err, i;

	err = et_pair_up(&p);
	et_expect(err, 0, -1, "COMM_CREATE: ranks 0 and 1 of a comm, both on this node -> ok");
	if (err) {
		et_pair_close(&p);
		return;
	}
	{
		struct collx_comm_create c = {
			.size = sizeof(c), .nranks = 2, .rank = 0,
			.comm_key = p.key,
			.addrs = (uint64_t)(uintptr_t)p.addrs,
			.addr_size = sizeof(p.addrs[0]), .timeout_ms = 2000 * fz_slowdown(),
		};
		int fd2 = et_open();

		err = et_ioctl(fd2, COLLX_IOC_COMM_CREATE, &c);
		et_expect(err, EEXIST, -1,
			  "COMM_CREATE: rank 0 of a live 2-rank comm's key again -> EEXIST");
		close(fd2);
	}
	mr_err = et_reg(p.fd[0], et.buf, 65536, &mr);
	et_allreduce(&s, p.id[0], 1024, et.buf, et.buf + 8192);
	err = et_submit(p.fd[0], &s);
	et_expect(err, 0, -1, "SUBMIT: rank 0 alone in a 2-rank allreduce -> ok (it waits for rank 1)");
	et_expect(et_wait(p.fd[0], s.op_id, 0, NULL), EAGAIN, -1,
		  "WAIT: timeout 0 on a collective still running -> EAGAIN");
	et_expect(et_wait(p.fd[0], s.op_id, 50, NULL), EAGAIN, -1,
		  "WAIT: timeout 50 ms on a collective still running -> EAGAIN");
	et_expect(mr_err ? mr_err : et_dereg(p.fd[0], mr), EBUSY, -1,
		  "MR_DEREG: a registration a running collective uses -> EBUSY");
	et_destroy(p.fd[1], p.id[1]);
	err = et_wait(p.fd[0], s.op_id, 10000 * fz_slowdown(), &c);
	et_ok(!err && (c.status == -ECONNRESET || c.status == -ETIMEDOUT) &&
	      c.failed_rank == 1,
	      err ? et_err(err) : et_err(-c.status),
	      "completion: rank 1 left mid-collective -> ECONNRESET or ETIMEDOUT, failed_rank 1 (%u)",
	      c.failed_rank);
	et_expect(et_submit(p.fd[0], &s), EPIPE, -1,
		  "SUBMIT: on a comm in its error state -> EPIPE");
	/*
	 * A failed comm drains its connections at once and then lets go of
	 * the failed collective's buffers: EBUSY only until then.
	 */
	err = mr_err;
	for (i = 0; !mr_err && i < 100 * (int)fz_slowdown(); i++) {
		err = et_dereg(p.fd[0], mr);
		if (err != EBUSY)
			break;
		usleep(50000);
	}
	et_expect(err, 0, -1,
		  "MR_DEREG: after a collective on it failed, once its comm's connections are drained (EBUSY until then) -> ok");
	et_expect(et_destroy(p.fd[0], p.id[0]), 0, -1,
		  "COMM_DESTROY: a comm in its error state -> ok");
	et_expect(mr_err ? mr_err : et_dereg(p.fd[0], mr), ENOENT, -1,
		  "MR_DEREG: that registration again -> ENOENT");
	et_pair_close(&p);

	if (et_pair_up(&p)) {
		et_ok(false, "no 2-rank comm", "COMM_DESTROY: a collective in flight ends with ECANCELED");
		et_pair_close(&p);
		return;
	}
	et_allreduce(&s, p.id[0], 1024, et.buf, et.buf + 8192);
	err = et_submit(p.fd[0], &s);
	if (!err)
		err = et_destroy(p.fd[0], p.id[0]);
	c.status = 0;
	if (!err)
		err = et_wait(p.fd[0], s.op_id, 5000 * fz_slowdown(), &c);
	et_ok(!err && c.status == -ECANCELED, err ? et_err(err) : et_err(-c.status),
	      "COMM_DESTROY: a collective in flight ends with ECANCELED");
	et_pair_close(&p);
}

void et_state_cases(void)
{
	records();
	in_flight();
}
