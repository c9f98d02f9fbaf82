// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: which RDMA device and port this rank uses, and the IPv4 address
 * the kernel's rdma_cm reaches it at.
 *
 *   COLLX_IB_HCA=LIST       the devices and ports to consider, in
 *                           NCCL_IB_HCA syntax (hca.c); default: all.  One
 *                           port serves a communicator: the first ACTIVE
 *                           one that matches and has an IPv4 address
 *   COLLX_IB_GID_INDEX=N    take the address from GID N of that port
 *                           (default: a RoCE v2 GID holding an IPv4-mapped
 *                           address, as rdma_cm routes on, then RoCE v1,
 *                           then the port's netdev)
 *   COLLX_RDMA_ADDR=a.b.c.d skip the lookup and use this address
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

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

const char *collx_gid_type_name(int type)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	}
	return "?";
}

bool collx_gid_ipv4(const uint8_t raw[16], struct in_addr *out)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(raw, v4mapped, sizeof(v4mapped)))
		return false;
	if (out)
		memcpy(out, raw + 12, 4);
	return true;
}

/* ---- scanning the devices ---- */

static bool netdev_ipv4(const char *ifname, struct in_addr *out)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !strcmp(i->ifa_name, ifname)) {
			*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* IPoIB and other devices with a netdev of their own (sysfs device/net). */
static void port_netdev(struct collx_port_info *pi)
{
	char path[256];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", pi->dev);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		if (!pi->netdev[0])
			snprintf(pi->netdev, sizeof(pi->netdev), "%.*s", IF_NAMESIZE - 1, d->d_name);
		if (netdev_ipv4(d->d_name, &pi->netdev_addr)) {
			snprintf(pi->netdev, sizeof(pi->netdev), "%.*s", IF_NAMESIZE - 1, d->d_name);
			pi->netdev_ipv4 = true;
			break;
		}
	}
	if (dir)
		closedir(dir);
}

static int scan_gids(struct ibv_context *ctx, struct collx_port_info *ports, int first,
		     int nports, size_t total)
{
	struct ibv_gid_entry *e;
	ssize_t n, k;
	int p;

	if (!total)
		return 0;
	e = calloc(total, sizeof(*e));
	if (!e)
		return -ENOMEM;
	n = ibv_query_gid_table(ctx, e, total, 0);
	for (k = 0; k < n; k++) {
		for (p = first; p < first + nports; p++) {
			struct collx_port_info *pi = &ports[p];
			struct collx_gid_entry *g;

			if ((uint32_t)pi->port != e[k].port_num || pi->ngids >= pi->gid_cap)
				continue;
			g = &pi->gids[pi->ngids++];
			g->index = (int)e[k].gid_index;
			g->type = (int)e[k].gid_type;
			memcpy(g->raw, e[k].gid.raw, sizeof(g->raw));
			if (!e[k].ndev_ifindex || !if_indextoname(e[k].ndev_ifindex, g->netdev))
				g->netdev[0] = 0;
			if (g->netdev[0] && !pi->netdev[0])
				snprintf(pi->netdev, sizeof(pi->netdev), "%s", g->netdev);
		}
	}
	free(e);
	return 0;
}

/* Append @dev's ports to *@ports. */
static int scan_device(struct ibv_device *dev, struct collx_port_info **ports, int *nports)
{
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	struct collx_port_info *pa;
	size_t total = 0;
	int first = *nports, p, err = 0;

	ctx = ibv_open_device(dev);
	if (!ctx)
		return 0;	/* another user's device, or it went away */
	if (ibv_query_device(ctx, &da) || !da.phys_port_cnt)
		goto out;
	pa = realloc(*ports, (first + da.phys_port_cnt) * sizeof(**ports));
	if (!pa) {
		err = -ENOMEM;
		goto out;
	}
	*ports = pa;
	for (p = 1; p <= da.phys_port_cnt; p++) {
		struct collx_port_info *pi = &pa[first + p - 1];
		struct ibv_port_attr attr;

		memset(pi, 0, sizeof(*pi));
		snprintf(pi->dev, sizeof(pi->dev), "%s", ibv_get_device_name(dev));
		pi->port = p;
		if (!ibv_query_port(ctx, p, &attr)) {
			pi->state = attr.state;
			pi->link_layer = attr.link_layer;
			pi->active_mtu = mtu_bytes(attr.active_mtu);
			pi->gids = calloc(attr.gid_tbl_len ? attr.gid_tbl_len : 1, sizeof(*pi->gids));
			if (!pi->gids)
				err = -ENOMEM;
			else
				pi->gid_cap = attr.gid_tbl_len;
			total += attr.gid_tbl_len;
		}
		port_netdev(pi);
		(*nports)++;
	}
	if (!err)
		err = scan_gids(ctx, pa, first, da.phys_port_cnt, total);
out:
	ibv_close_device(ctx);
	return err;
}

int collx_ibdev_scan(struct collx_port_info **ports, int *nports, char *err, size_t errlen)
{
	struct ibv_device **list;
	int ndev, i, rc = 0;

	*ports = NULL;
	*nports = 0;
	list = ibv_get_device_list(&ndev);
	if (!list) {
		snprintf(err, errlen, "no RDMA devices (ibv_get_device_list: %s)", strerror(errno));
		return -ENODEV;
	}
	for (i = 0; i < ndev && !rc; i++)
		rc = scan_device(list[i], ports, nports);
	ibv_free_device_list(list);
	if (rc) {
		collx_ibdev_scan_free(*ports, *nports);
		*ports = NULL;
		*nports = 0;
		snprintf(err, errlen, "scanning RDMA devices: %s", strerror(-rc));
	}
	return rc;
}

void collx_ibdev_scan_free(struct collx_port_info *ports, int nports)
{
	int i;

	for (i = 0; i < nports; i++)
		free(ports[i].gids);
	free(ports);
}

/* ---- choosing ---- */

static const struct collx_gid_entry *find_gid(const struct collx_port_info *pi, int type,
					      int index)
{
	int i;

	for (i = 0; i < pi->ngids; i++) {
		const struct collx_gid_entry *g = &pi->gids[i];

		if (index >= 0 ? g->index == index :
		    (g->type == type && collx_gid_ipv4(g->raw, NULL)))
			return g;
	}
	return NULL;
}

static void take_gid(const struct collx_port_info *pi, const struct collx_gid_entry *g,
		     const char *how, struct collx_ibdev_info *info)
{
	collx_gid_ipv4(g->raw, &info->addr);
	info->gid_index = g->index;
	info->gid_type = g->type;
	inet_ntop(AF_INET6, g->raw, info->gid, sizeof(info->gid));
	snprintf(info->netdev, sizeof(info->netdev), "%s", g->netdev[0] ? g->netdev : pi->netdev);
	info->how = how;
}

/* The address of @pi, or why not in @why. */
static bool port_address(const struct collx_port_info *pi, int gid_index,
			 struct collx_ibdev_info *info, char *why, size_t len)
{
	const struct collx_gid_entry *g;
	char gs[INET6_ADDRSTRLEN];

	if (gid_index >= 0) {
		g = find_gid(pi, -1, gid_index);
		if (!g) {
			snprintf(why, len, "%s:%d has no GID %d", pi->dev, pi->port, gid_index);
			return false;
		}
		if (!collx_gid_ipv4(g->raw, NULL)) {
			snprintf(why, len, "GID %d of %s:%d is %s (%s), not an IPv4 address", gid_index,
				 pi->dev, pi->port, inet_ntop(AF_INET6, g->raw, gs, sizeof(gs)),
				 collx_gid_type_name(g->type));
			return false;
		}
		take_gid(pi, g, "COLLX_IB_GID_INDEX", info);
		return true;
	}
	if ((g = find_gid(pi, IBV_GID_TYPE_ROCE_V2, -1))) {
		take_gid(pi, g, "RoCE v2 GID", info);
		return true;
	}
	if ((g = find_gid(pi, IBV_GID_TYPE_ROCE_V1, -1))) {
		take_gid(pi, g, "RoCE v1 GID", info);
		return true;
	}
	if (pi->netdev_ipv4) {
		info->addr = pi->netdev_addr;
		info->gid_index = -1;
		snprintf(info->netdev, sizeof(info->netdev), "%s", pi->netdev);
		info->how = "netdev";
		return true;
	}
	snprintf(why, len, "%s:%d has no IPv4 address in its GID table or netdev", pi->dev,
		 pi->port);
	return false;
}

int collx_ibdev_choose(const struct collx_port_info *ports, int nports,
		       const struct collx_nlist *hca, int gid_index,
		       struct collx_ibdev_info *info, char *err, size_t errlen)
{
	char why[160] = "", first_why[160] = "";
	int i, named = 0, active = 0;

	memset(info, 0, sizeof(*info));
	info->gid_index = -1;
	for (i = 0; i < nports; i++) {
		const struct collx_port_info *pi = &ports[i];
		struct collx_ibdev_info cand;

		if (!collx_nlist_match(hca, pi->dev, pi->port))
			continue;
		named++;
		if (pi->state != IBV_PORT_ACTIVE)
			continue;
		active++;
		memset(&cand, 0, sizeof(cand));
		if (!port_address(pi, gid_index, &cand, why, sizeof(why))) {
			if (!first_why[0])
				snprintf(first_why, sizeof(first_why), "%s", why);
			continue;
		}
		if (!info->ncandidates++) {
			snprintf(cand.name, sizeof(cand.name), "%s", pi->dev);
			cand.port = pi->port;
			cand.mtu = pi->active_mtu;
			*info = cand;
			info->ncandidates = 1;
		}
	}
	if (info->ncandidates)
		return 0;
	if (!nports)
		snprintf(err, errlen, "no RDMA devices");
	else if (!named)
		snprintf(err, errlen, "COLLX_IB_HCA matches none of the %d RDMA port%s", nports,
			 nports == 1 ? "" : "s");
	else if (!active)
		snprintf(err, errlen, "no ACTIVE port among the %d RDMA port%s%s", named,
			 named == 1 ? "" : "s", hca->n ? " COLLX_IB_HCA matches" : "");
	else
		snprintf(err, errlen, "no ACTIVE RDMA port has an IPv4 address: %s", first_why);
	return -ENODEV;
}

/* " (COLLX_IB_HCA=mlx5, COLLX_IB_GID_INDEX=3)": the variables that shaped a choice. */
static void select_vars(const char *spec, long gid, char *out, size_t len)
{
	const char *sep = " (";
	size_t o = 0;

	out[0] = 0;
	if (spec && *spec) {
		o += snprintf(out + o, len - o, "%sCOLLX_IB_HCA=%.64s", sep, spec);
		sep = ", ";
	}
	if (gid >= 0 && o < len)
		o += snprintf(out + o, len - o, "%sCOLLX_IB_GID_INDEX=%ld", sep, gid);
	if (o && o < len)
		snprintf(out + o, len - o, ")");
}

int collx_ibdev_select(struct collx_ibdev_info *info, char *err, size_t errlen)
{
	const char *raddr = collx_getenv("COLLX_RDMA_ADDR");
	const char *spec = collx_getenv("COLLX_IB_HCA");
	struct collx_port_info *ports;
	struct collx_nlist hca;
	char e[COLLX_ERRLEN], vars[112];
	int nports, rc;
	long gid;

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
	if (collx_nlist_parse(spec, true, &hca)) {
		snprintf(err, errlen, "COLLX_IB_HCA=%s is not [^][=]device[:port],... (NCCL_IB_HCA syntax)",
			 spec);
		return -EINVAL;
	}
	if (collx_env_long("COLLX_IB_GID_INDEX", -1, -1, 65535, &gid)) {
		snprintf(err, errlen, "COLLX_IB_GID_INDEX=%s is not a GID index in 0..65535 (-1: choose)",
			 getenv("COLLX_IB_GID_INDEX"));
		return -EINVAL;
	}
	select_vars(spec, gid, vars, sizeof(vars));
	rc = collx_ibdev_scan(&ports, &nports, e, sizeof(e));
	if (!rc) {
		rc = collx_ibdev_choose(ports, nports, &hca, (int)gid, info, e, sizeof(e));
		collx_ibdev_scan_free(ports, nports);
	}
	if (rc)
		snprintf(err, errlen, "%s%s", e, vars);
	return rc;
}
