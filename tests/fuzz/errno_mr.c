// SPDX-License-Identifier: GPL-2.0
/*
 * MR_REG, one defect at a time on a valid registration of one page, the
 * dma-buf flag with fds that are no dma-buf, and MR_DEREG of what is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "etest.h"

static int devnull = -1;

static void m_len0(struct collx_mr_reg *m) { m->length = 0; }
static void m_ro(struct collx_mr_reg *m)
{
	m->addr = (uint64_t)(uintptr_t)et.ro;
}
static void m_unmapped(struct collx_mr_reg *m)
{
	m->addr = (uint64_t)(uintptr_t)et.none;
}
static void m_cross(struct collx_mr_reg *m)
{
	m->addr = (uint64_t)(uintptr_t)(et.end + ET_PAGE / 2);
}
static void m_misaligned(struct collx_mr_reg *m)
{
	m->addr += 3;
	m->length = 2 * ET_PAGE - 5;
}
static void m_flag(struct collx_mr_reg *m) { m->flags = 1U << 1; }
static void m_reserved(struct collx_mr_reg *m) { m->__reserved = 1; }
static void m_reserved2(struct collx_mr_reg *m) { m->__reserved2 = 1; }
static void m_dmabuf_notbuf(struct collx_mr_reg *m)
{
	m->flags = COLLX_MR_F_DMABUF;
	m->dmabuf_fd = devnull;
}
static void m_dmabuf_closed(struct collx_mr_reg *m)
{
	int fd = open("/dev/null", O_RDONLY);

	close(fd);		/* an fd number that is no longer open */
	m->flags = COLLX_MR_F_DMABUF;
	m->dmabuf_fd = fd;
}
static void m_out_junk(struct collx_mr_reg *m) { m->mr_id = 0xdeadbeef; }

static const struct {
	const char *name;
	void (*mutate)(struct collx_mr_reg *m);
	int want, alt;
	bool dmabuf;		/* without COLLX_FEATURE_DMABUF: EOPNOTSUPP */
} cases[] = {
	{ "length 0", m_len0, EINVAL, -1, false },
	{ "read-only memory", m_ro, EFAULT, -1, false },
	{ "unmapped memory", m_unmapped, EFAULT, -1, false },
	{ "a range running into an unmapped page", m_cross, EFAULT, -1, false },
	{ "a range not page aligned", m_misaligned, 0, -1, false },
	{ "unknown flag bit 1", m_flag, EOPNOTSUPP, -1, false },
	{ "__reserved != 0", m_reserved, EINVAL, -1, false },
	{ "__reserved2 != 0", m_reserved2, EINVAL, -1, false },
	{ "COLLX_MR_F_DMABUF with an fd that is no dma-buf", m_dmabuf_notbuf,
	  EINVAL, -1, true },
	{ "COLLX_MR_F_DMABUF with a closed fd", m_dmabuf_closed, EBADF, -1,
	  true },
	{ "junk in mr_id (an out field)", m_out_junk, 0, -1, false },
};

void et_mr_cases(void)
{
	struct collx_mr_reg m;
	uint32_t id;
	unsigned int i;
	int fd = et_open(), err, want;

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (i = 0; i < FZ_ARRAY_SIZE(cases); i++) {
		memset(&m, 0, sizeof(m));
		m.size = sizeof(m);
		m.addr = (uint64_t)(uintptr_t)et.buf;
		m.length = ET_PAGE;
		cases[i].mutate(&m);
		want = cases[i].want;
		if (cases[i].dmabuf && !(et.features & COLLX_FEATURE_DMABUF))
			want = EOPNOTSUPP;
		err = et_ioctl(fd, COLLX_IOC_MR_REG, &m);
		et_expect(err, want, cases[i].alt, "MR_REG: %s -> %s%s",
			  cases[i].name, et_err(want),
			  want != cases[i].want ? " (no COLLX_FEATURE_DMABUF)" : "");
		if (!err)
			et_dereg(fd, m.mr_id);
	}
	err = et_reg(fd, et.buf, ET_PAGE, &id);
	if (!err) {
		et_expect(et_dereg(fd, id), 0, -1, "MR_DEREG: a live registration -> ok");
		et_expect(et_dereg(fd, id), ENOENT, -1,
			  "MR_DEREG: the same registration again -> ENOENT");
	} else {
		et_ok(false, et_err(err), "MR_DEREG: a live registration -> ok");
	}
	et_expect(et_dereg(fd, 0x7fffffff), ENOENT, -1,
		  "MR_DEREG: an mr_id never handed out -> ENOENT");
	close(devnull);
	close(fd);
}
