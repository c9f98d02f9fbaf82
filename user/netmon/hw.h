/* SPDX-License-Identifier: GPL-2.0 */
/* Counters kept where the hardware consumes PFC: ethtool, dcbnl, RDMA. */
#ifndef COLLX_NETMON_HW_H
#define COLLX_NETMON_HW_H

#include <stdint.h>

struct hw_counter {
	char dev[64];		/* netdev, or rdma device/port */
	char source[32];	/* "ethtool", "dcbnl ieee_pfc", "rdma hw_counters" */
	char name[64];
	uint64_t value;
};

struct hw_note {
	char dev[64];
	char source[32];
	char text[96];		/* e.g. "not supported by this netdev" */
};

struct hw_set {
	struct hw_counter *c;
	int n, cap;
	struct hw_note notes[32];
	int nnotes;
};

/* Read every source for @netdev; @all keeps every ethtool statistic, not
 * only the congestion ones.
 */
void hw_collect(struct hw_set *s, const char *netdev, int all);
void hw_reset(struct hw_set *s);
/* The RDMA device whose port runs over @netdev, or "" (rxe, mlx5, ...). */
void hw_rdma_dev_of(const char *netdev, char *ibdev, size_t len);

#endif
