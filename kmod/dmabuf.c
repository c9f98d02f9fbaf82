// SPDX-License-Identifier: GPL-2.0
/*
 * collx: dma-buf registrations (peer memory).  Not wired up yet: every
 * dma-buf registration is refused with EOPNOTSUPP, which the uapi
 * documents for an exporter or device that cannot do it.
 */
#include "collx_loc.h"

int collx_dmabuf_reg(struct collx_mr *mr, int fd, u64 offset)
{
	return -EOPNOTSUPP;
}

void collx_dmabuf_release(struct collx_mr *mr)
{
}

int collx_dmabuf_dmap(struct collx_buf *b, struct ib_device *ibdev, u64 pos)
{
	return -EOPNOTSUPP;
}
