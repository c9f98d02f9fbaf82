// SPDX-License-Identifier: GPL-2.0
/*
 * The size-first rules, for every ioctl (iommufd's selftest sends every
 * ioctl one byte short and with non-zero trailing bytes): a well-formed
 * request of each, then the same request one byte short of its mandatory
 * part, with a dirty tail, with a zero tail, with only its mandatory
 * part, with flags and reserved fields set, across an unmapped page, in
 * read-only memory, at NULL; and the numbers next to collx's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etest.h"

/* A request being built: its struct, and what it needs around it. */
struct req {
	int fd;
	union {
		uint8_t b[256];
		struct collx_version version;
		struct collx_comm_create create;
		struct collx_comm_destroy destroy;
		struct collx_mr_reg reg;
		struct collx_mr_dereg dereg;
		struct collx_submit submit;
		struct collx_wait wait;
		struct collx_submit_group group;
	} st;
	uint32_t comm, mr;
	bool have_comm, have_mr;
	struct collx_rank_addr addr;
	struct collx_submit entries[2];
};

static void build_version(struct req *q)
{
	(void)q;
}

static void build_create(struct req *q)
{
	struct collx_comm_create *c = &q->st.create;

	et_rank_addr(&q->addr);
	c->nranks = 1;
	c->comm_key = et_key();
	c->addrs = (uint64_t)(uintptr_t)&q->addr;
	c->addr_size = sizeof(q->addr);
}

static bool need_comm(struct req *q)
{
	q->have_comm = !et_comm(q->fd, 0, &q->comm);
	return q->have_comm;
}

static void build_destroy(struct req *q)
{
	need_comm(q);
	q->st.destroy.comm_id = q->comm;
}

static void build_reg(struct req *q)
{
	q->st.reg.addr = (uint64_t)(uintptr_t)et.buf;
	q->st.reg.length = ET_PAGE;
}

static void build_dereg(struct req *q)
{
	q->have_mr = !et_reg(q->fd, et.buf, ET_PAGE, &q->mr);
	q->st.dereg.mr_id = q->mr;
}

static void build_submit(struct req *q)
{
	need_comm(q);
	et_allreduce(&q->st.submit, q->comm, 16, et.buf, et.buf + 65536);
}

static void build_wait(struct req *q)
{
	struct collx_submit s;

	need_comm(q);
	et_allreduce(&s, q->comm, 16, et.buf, et.buf + 65536);
	if (!et_submit(q->fd, &s))
		et_readable(q->fd, 2000);
	q->st.wait.op_id = s.op_id;
	q->st.wait.timeout_ms = 1000;
}

static void build_group(struct req *q)
{
	need_comm(q);
	et_allreduce(&q->entries[0], q->comm, 16, et.buf, et.buf + 65536);
	et_allreduce(&q->entries[1], q->comm, 16, et.buf + 4096,
		     et.buf + 65536 + 4096);
	q->st.group.count = 2;
	q->st.group.entry_size = sizeof(q->entries[0]);
	q->st.group.entries = (uint64_t)(uintptr_t)q->entries;
}

static const struct {
	enum fz_entry e;
	void (*build)(struct req *q);
	size_t reserved;	/* offset of a __reserved field, or 0 */
} ioctls[] = {
	{ FZ_VERSION, build_version, offsetof(struct collx_version, __reserved) },
	{ FZ_COMM_CREATE, build_create, 0 },
	{ FZ_COMM_DESTROY, build_destroy, offsetof(struct collx_comm_destroy, __reserved) },
	{ FZ_MR_REG, build_reg, offsetof(struct collx_mr_reg, __reserved) },
	{ FZ_MR_DEREG, build_dereg, offsetof(struct collx_mr_dereg, __reserved) },
	{ FZ_SUBMIT, build_submit, offsetof(struct collx_submit, __reserved) },
	{ FZ_WAIT, build_wait, offsetof(struct collx_wait, __reserved) },
	{ FZ_SUBMIT_GROUP, build_group, offsetof(struct collx_submit_group, __reserved) },
};

enum how {
	H_SHORT, H_DIRTY, H_ZERO_TAIL, H_MANDATORY, H_NULL, H_FLAGS,
	H_RESERVED, H_CROSS, H_RO, H_EXACT,
};

/* Release what the request and the call made. */
static void undo(struct req *q, enum fz_entry e, const uint8_t *arg, int err)
{
	const struct collx_comm_create *c = (const void *)arg;
	const struct collx_mr_reg *m = (const void *)arg;

	if (!err && e == FZ_COMM_CREATE && arg)
		et_destroy(q->fd, c->comm_id);
	if (!err && e == FZ_MR_REG && arg)
		et_dereg(q->fd, m->mr_id);
	et_drain(q->fd, 20);
	if (q->have_mr && (err || e != FZ_MR_DEREG))
		et_dereg(q->fd, q->mr);
	if (q->have_comm && (err || e != FZ_COMM_DESTROY))
		et_destroy(q->fd, q->comm);
}

/* One request of ioctl @i, sent as @how says; its errno. */
static int send_req(unsigned int i, enum how how, uint32_t *sizep)
{
	static uint8_t buf[3 * ET_PAGE] __attribute__((aligned(4096)));
	const struct fz_ioctl *io = &fz_ioctls[ioctls[i].e];
	uint32_t size = io->ksize;
	uint8_t *arg = buf;
	struct req q;
	int err;

	memset(&q, 0, sizeof(q));
	memset(buf, 0, sizeof(buf));
	q.fd = et_open();
	if (q.fd < 0)
		return errno;
	ioctls[i].build(&q);
	switch (how) {
	case H_SHORT:
		size = io->min - 1;
		break;
	case H_DIRTY:
		size = io->ksize + 8;
		buf[io->ksize + 7] = 1;
		break;
	case H_ZERO_TAIL:
		size = io->ksize + 64;
		break;
	case H_MANDATORY:
		size = io->min;
		break;
	case H_FLAGS:
		q.st.b[4 + 3] |= 0x80;		/* flags: bit 31 */
		break;
	case H_RESERVED:
		q.st.b[ioctls[i].reserved] = 1;
		break;
	default:
		break;
	}
	memcpy(q.st.b, &size, sizeof(size));
	memcpy(buf, q.st.b, size < io->ksize ? size : io->ksize);
	if (how == H_NULL) {
		arg = NULL;
	} else if (how == H_CROSS) {
		arg = et.end + ET_PAGE - io->ksize / 2;
		memcpy(arg, q.st.b, io->ksize / 2);
	} else if (how == H_RO) {
		arg = et.ro + ET_PAGE;
		mprotect(et.ro, 4 * ET_PAGE, PROT_READ | PROT_WRITE);
		memcpy(arg, q.st.b, io->ksize);
		mprotect(et.ro, 4 * ET_PAGE, PROT_READ);
	}
	err = et_ioctl(q.fd, io->nr, arg);
	undo(&q, ioctls[i].e, arg == buf ? buf : NULL, err);
	close(q.fd);
	if (sizep)
		*sizep = size;
	return err;
}

static void bad_numbers(void)
{
	struct collx_version v = { .size = sizeof(v) };
	int fd = et_open();

	et_expect(et_ioctl(fd, _IO(COLLX_TYPE, COLLX_CMD_COMM_QUERY + 1), &v),
		  ENOTTY, -1, "ioctl: 'X' %#x, one past COMM_QUERY -> ENOTTY",
		  COLLX_CMD_COMM_QUERY + 1);
	et_expect(et_ioctl(fd, _IO(COLLX_TYPE, COLLX_CMD_BASE - 1), &v),
		  ENOTTY, -1, "ioctl: 'X' %#x, one before VERSION -> ENOTTY",
		  COLLX_CMD_BASE - 1);
	et_expect(et_ioctl(fd, _IO('Y', COLLX_CMD_VERSION), &v), ENOTTY, -1,
		  "ioctl: VERSION's number under type 'Y' -> ENOTTY");
	et_expect(et_ioctl(fd, _IOWR(COLLX_TYPE, COLLX_CMD_SUBMIT,
				     struct collx_submit), &v), ENOTTY, -1,
		  "ioctl: SUBMIT's number with a size encoded (_IOWR) -> ENOTTY");
	close(fd);
}

void et_size_cases(void)
{
	struct collx_version v = { .size = sizeof(v) };
	const struct fz_ioctl *io;
	uint32_t size;
	unsigned int i;
	int fd, err;

	fd = et_open();
	err = et_ioctl(fd, COLLX_IOC_VERSION, &v);
	close(fd);
	et_ok(!err && v.abi_major == COLLX_ABI_MAJOR && v.abi_minor >= 1,
	      "an ABI 1.0 module", "VERSION: ABI %u.%u, want 1.1 or a later minor",
	      v.abi_major, v.abi_minor);
	for (i = 0; i < FZ_ARRAY_SIZE(ioctls); i++) {
		io = &fz_ioctls[ioctls[i].e];
		err = send_req(i, H_EXACT, &size);
		et_expect(err, 0, -1, "%s: well formed (size %u) -> ok",
			  io->name, size);
		err = send_req(i, H_SHORT, &size);
		et_expect(err, EINVAL, -1, "%s: one byte short of the mandatory part (size %u) -> EINVAL",
			  io->name, size);
		err = send_req(i, H_DIRTY, &size);
		et_expect(err, E2BIG, -1, "%s: a non-zero byte past the struct (size %u) -> E2BIG",
			  io->name, size);
		err = send_req(i, H_ZERO_TAIL, &size);
		et_expect(err, 0, -1, "%s: longer, zero tail (size %u) -> ok",
			  io->name, size);
		if (io->min < io->ksize) {
			err = send_req(i, H_MANDATORY, &size);
			et_expect(err, 0, -1, "%s: only the mandatory part, as ABI 1.0 (size %u) -> ok",
				  io->name, size);
		}
		err = send_req(i, H_FLAGS, NULL);
		et_expect(err, EOPNOTSUPP, -1, "%s: flags bit 31 -> EOPNOTSUPP",
			  io->name);
		if (ioctls[i].reserved) {
			err = send_req(i, H_RESERVED, NULL);
			et_expect(err, EINVAL, -1, "%s: __reserved != 0 -> EINVAL",
				  io->name);
		}
		err = send_req(i, H_NULL, NULL);
		et_expect(err, EFAULT, -1, "%s: NULL argument -> EFAULT",
			  io->name);
		err = send_req(i, H_CROSS, NULL);
		et_expect(err, EFAULT, -1, "%s: struct running into an unmapped page -> EFAULT",
			  io->name);
		if (io->writes_back) {
			err = send_req(i, H_RO, NULL);
			et_expect(err, EFAULT, -1, "%s: struct in read-only memory (its output cannot be written) -> EFAULT",
				  io->name);
		}
	}
	bad_numbers();
}
