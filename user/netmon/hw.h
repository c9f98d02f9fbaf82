/* SPDX-License-Identifier: GPL-2.0 */
/* Counters kept where the hardware consumes PFC: ethtool, dcbnl, RDMA. */
#ifndef COLLX_NETMON_HW_H
#define COLLX_NETMON_HW_H

#include <stddef.h>
#include <stdint.h>

#define HW_NAME_LEN	64

enum hw_source {
	HW_ETHTOOL,		/* SIOCETHTOOL GSTATS (mlx5 rx_prio3_pause, ...) */
	HW_DCB_PFC,		/* dcbnl DCB_CMD_IEEE_GET: struct ieee_pfc */
	HW_RDMA,		/* /sys/class/infiniband/<dev>/ports/<p>/hw_counters */
};

struct hw_counter {
	char netdev[16];
	enum hw_source source;
	char name[HW_NAME_LEN];	/* driver's name; dcb: pfc_enabled, pfc_requests, pfc_indications */
	char rdma_dev[32];	/* HW_RDMA */
	int port;		/* HW_RDMA */
	int prio;		/* HW_DCB_PFC: the priority, else -1 */
	uint64_t value;
};

struct hw_note {
	char dev[16];		/* the netdev */
	enum hw_source source;
	int quiet;		/* the source works, it has nothing to show */
	char text[96];		/* e.g. "not supported by this netdev (no DCB)" */
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
/* The RDMA device and port that run over @netdev, or "" (rxe, mlx5, ...). */
void hw_rdma_dev_of(const char *netdev, char *ibdev, size_t len, int *port);
const char *hw_source_name(enum hw_source s);
/* "eth0", or "rxe0/1" for an RDMA port. */
const char *hw_label(const struct hw_counter *c);
/* The name as the table shows it: "pfc_requests[3]" for a priority's. */
const char *hw_display_name(const struct hw_counter *c, char *buf, size_t len);

#endif
