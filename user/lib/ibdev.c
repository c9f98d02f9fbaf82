// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: which RDMA device this rank uses, and the IPv4 address the
 * kernel's rdma_cm reaches it at.
 *
 *   COLLX_IB_HCA=dev[:port]   the device (NCCL_IB_HCA syntax: a leading
 *                             '=' or '^' list is not supported beyond its
 *                             first entry); default: the first ACTIVE port
 *   COLLX_RDMA_ADDR=a.b.c.d   skip the lookup and use this address
 *
 * The address comes from the port's GID table (a RoCE v2 GID holding an
 * IPv4-mapped address, as rdma_cm uses), else from the port's netdev.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collx_int.h"

int collx_parse_hca(const char *spec, char *name, size_t namelen, int *port)
{
	const char *s = spec, *end, *colon;
	char *e;
	long p = 0;

	if (*s == '=')
		s++;
	if (*s == '^')
		return -EINVAL;
	end = strchr(s, ',');
	if (!end)
		end = s + strlen(s);
	colon = memchr(s, ':', end - s);
	if (colon) {
		p = strtol(colon + 1, &e, 10);
		if (e != end || p < 1 || p > 255)
			return -EINVAL;
	} else {
		colon = end;
	}
	if (colon == s || (size_t)(colon - s) >= namelen)
		return -EINVAL;
	memcpy(name, s, colon - s);
	name[colon - s] = 0;
	*port = (int)p;
	return 0;
}

int collx_first_ipv4(struct in_addr *out)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

static int netdev_ipv4(const char *ifname, struct in_addr *out)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !strcmp(i->ifa_name, ifname)) {
			*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* The IPv4 address of @port: RoCE v2 GID first, then v1, then netdev. */
static int port_ipv4(struct ibv_context *ctx, int port, int gid_len,
		     struct collx_ibdev_info *info)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	int pass, idx;

	for (pass = 0; pass < 2; pass++) {
		for (idx = 0; idx < gid_len; idx++) {
			struct ibv_gid_entry e;

			if (ibv_query_gid_ex(ctx, port, idx, &e, 0))
				continue;
			if (pass == 0 && e.gid_type != IBV_GID_TYPE_ROCE_V2)
				continue;
			if (memcmp(e.gid.raw, v4mapped, sizeof(v4mapped)))
				continue;
			memcpy(&info->addr, e.gid.raw + 12, 4);
			info->gid_index = idx;
			inet_ntop(AF_INET6, e.gid.raw, info->gid, sizeof(info->gid));
			if (!e.ndev_ifindex || !if_indextoname(e.ndev_ifindex, info->netdev))
				snprintf(info->netdev, sizeof(info->netdev), "?");
			info->how = pass == 0 ? "RoCE v2 GID" : "RoCE v1 GID";
			return 0;
		}
	}
	/* InfiniBand (IPoIB) or a GID table without IPv4: the port's netdev. */
	{
		char path[256];
		struct dirent *d;
		DIR *dir;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net",
			 ibv_get_device_name(ctx->device));
		dir = opendir(path);
		if (!dir)
			return -EADDRNOTAVAIL;
		while ((d = readdir(dir))) {
			if (d->d_name[0] == '.')
				continue;
			if (!netdev_ipv4(d->d_name, &info->addr)) {
				snprintf(info->netdev, sizeof(info->netdev), "%.63s", d->d_name);
				info->how = "netdev";
				closedir(dir);
				return 0;
			}
		}
		closedir(dir);
	}
	return -EADDRNOTAVAIL;
}

int collx_ibdev_select(struct collx_ibdev_info *info, char *err, size_t errlen)
{
	const char *spec = getenv("COLLX_IB_HCA"), *raddr = getenv("COLLX_RDMA_ADDR");
	char want[64] = "";
	int want_port = 0, ndev, i, rc = -ENODEV;
	struct ibv_device **list;
	bool seen = false;

	memset(info, 0, sizeof(*info));
	info->gid_index = -1;
	if (raddr && *raddr) {
		if (inet_pton(AF_INET, raddr, &info->addr) != 1) {
			snprintf(err, errlen, "COLLX_RDMA_ADDR=%s is not an IPv4 address", raddr);
			return -EINVAL;
		}
		snprintf(info->name, sizeof(info->name), "-");
		snprintf(info->netdev, sizeof(info->netdev), "-");
		info->how = "COLLX_RDMA_ADDR";
		return 0;
	}
	if (spec && *spec &&
	    collx_parse_hca(spec, want, sizeof(want), &want_port)) {
		snprintf(err, errlen, "COLLX_IB_HCA=%s is not device[:port]", spec);
		return -EINVAL;
	}
	list = ibv_get_device_list(&ndev);
	if (!list) {
		snprintf(err, errlen, "no RDMA devices (ibv_get_device_list: %s)",
			 strerror(errno));
		return -ENODEV;
	}
	for (i = 0; i < ndev && rc; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_device_attr da;
		struct ibv_context *ctx;
		int port;

		if (want[0] && strcmp(name, want))
			continue;
		seen = true;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		if (ibv_query_device(ctx, &da)) {
			ibv_close_device(ctx);
			continue;
		}
		for (port = 1; port <= da.phys_port_cnt && rc; port++) {
			struct ibv_port_attr pa;

			if (want_port && port != want_port)
				continue;
			if (ibv_query_port(ctx, port, &pa) || pa.state != IBV_PORT_ACTIVE)
				continue;
			if (port_ipv4(ctx, port, pa.gid_tbl_len, info))
				continue;
			snprintf(info->name, sizeof(info->name), "%s", name);
			info->port = port;
			info->mtu = mtu_bytes(pa.active_mtu);
			rc = 0;
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	if (rc) {
		if (want[0] && !seen)
			snprintf(err, errlen, "COLLX_IB_HCA=%s: no such RDMA device", spec);
		else if (want[0])
			snprintf(err, errlen, "COLLX_IB_HCA=%s: no ACTIVE port with an IPv4 address", spec);
		else
			snprintf(err, errlen, "no RDMA device has an ACTIVE port with an IPv4 address (%d device%s)",
				 ndev, ndev == 1 ? "" : "s");
	}
	return rc;
}
