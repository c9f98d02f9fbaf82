// SPDX-License-Identifier: GPL-2.0
/*
 * Counters where the hardware consumes PFC, each labelled with its source:
 *   ethtool            SIOCETHTOOL GSTRINGS/GSTATS (mlx5 rx_prio3_pause, ...)
 *   dcbnl ieee_pfc     RTM_GETDCB DCB_CMD_IEEE_GET: struct ieee_pfc
 *                      requests[8] / indications[8]
 *   rdma hw_counters   /sys/class/infiniband/<dev>/ports/<p>/hw_counters
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include "hw.h"

static void add(struct hw_set *s, const char *dev, const char *src, const char *name, uint64_t v)
{
	struct hw_counter *c;

	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		void *p = realloc(s->c, cap * sizeof(*s->c));

		if (!p)
			return;
		s->c = p;
		s->cap = cap;
	}
	c = &s->c[s->n++];
	snprintf(c->dev, sizeof(c->dev), "%s", dev);
	snprintf(c->source, sizeof(c->source), "%s", src);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->value = v;
}

static void note(struct hw_set *s, const char *dev, const char *src, const char *fmt, const char *arg)
{
	struct hw_note *n;

	if (s->nnotes == (int)(sizeof(s->notes) / sizeof(s->notes[0])))
		return;
	n = &s->notes[s->nnotes++];
	snprintf(n->dev, sizeof(n->dev), "%s", dev);
	snprintf(n->source, sizeof(n->source), "%s", src);
	snprintf(n->text, sizeof(n->text), fmt, arg);
}

void hw_reset(struct hw_set *s)
{
	s->n = 0;
	s->nnotes = 0;
}

static int congestion_stat(const char *name)
{
	static const char *const pats[] = {
		"*pause*", "*pfc*", "*prio*", "*cnp*", "*ecn*", "*discard*",
		"*drop*", "*out_of_buffer*",
	};
	size_t i;

	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (!fnmatch(pats[i], name, FNM_CASEFOLD))
			return 1;
	return 0;
}

static void ethtool_stats(struct hw_set *s, const char *dev, int all)
{
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_gstrings *strs = NULL;
	struct ethtool_stats *st = NULL;
	struct ifreq ifr = {};
	unsigned int i, n, shown = 0;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&drv;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
		note(s, dev, "ethtool", "no driver info: %s", strerror(errno));
		goto out;
	}
	n = drv.n_stats;
	if (!n) {
		note(s, dev, "ethtool", "driver %s has no statistics", drv.driver);
		goto out;
	}
	strs = calloc(1, sizeof(*strs) + n * ETH_GSTRING_LEN);
	st = calloc(1, sizeof(*st) + n * sizeof(__u64));
	if (!strs || !st)
		goto out;
	strs->cmd = ETHTOOL_GSTRINGS;
	strs->string_set = ETH_SS_STATS;
	strs->len = n;
	ifr.ifr_data = (void *)strs;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto out;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	ifr.ifr_data = (void *)st;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto out;
	for (i = 0; i < n && i < strs->len; i++) {
		char name[ETH_GSTRING_LEN + 1];

		memcpy(name, strs->data + i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = 0;
		if (all || congestion_stat(name)) {
			add(s, dev, "ethtool", name, st->data[i]);
			shown++;
		}
	}
	if (!shown)
		note(s, dev, "ethtool", "driver %s: no pause/pfc/prio/cnp/ecn/drop statistics", drv.driver);
out:
	free(strs);
	free(st);
	close(fd);
}

static void dcbnl_pfc(struct hw_set *s, const char *dev)
{
	struct {
		struct nlmsghdr nh;
		struct dcbmsg dcb;
		char attrs[64];
	} req = {};
	char buf[8192];
	struct rtattr *rta;
	struct nlmsghdr *nh;
	int fd, len, i;
	size_t dlen = strlen(dev) + 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return;
	req.nh.nlmsg_type = RTM_GETDCB;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.dcb.dcb_family = AF_UNSPEC;
	req.dcb.cmd = DCB_CMD_IEEE_GET;
	rta = (struct rtattr *)req.attrs;
	rta->rta_type = DCB_ATTR_IFNAME;
	rta->rta_len = RTA_LENGTH(dlen);
	memcpy(RTA_DATA(rta), dev, dlen);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.dcb)) + RTA_ALIGN(rta->rta_len);
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		goto out;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0)
		goto out;
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (unsigned int)len))
		goto out;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *err = NLMSG_DATA(nh);

		note(s, dev, "dcbnl ieee_pfc", "%s", err->error == -EOPNOTSUPP ?
		     "not supported by this netdev (no DCB)" : strerror(-err->error));
		goto out;
	}
	{
		struct dcbmsg *d = NLMSG_DATA(nh);
		int alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*d));

		for (rta = (struct rtattr *)((char *)d + NLMSG_ALIGN(sizeof(*d)));
		     RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen)) {
			struct rtattr *in;
			int ilen;

			if (rta->rta_type != DCB_ATTR_IEEE)
				continue;
			ilen = RTA_PAYLOAD(rta);
			for (in = RTA_DATA(rta); RTA_OK(in, ilen); in = RTA_NEXT(in, ilen)) {
				struct ieee_pfc *pfc = RTA_DATA(in);
				char name[64];

				if (in->rta_type != DCB_ATTR_IEEE_PFC ||
				    RTA_PAYLOAD(in) < sizeof(*pfc))
					continue;
				add(s, dev, "dcbnl ieee_pfc", "pfc_en", pfc->pfc_en);
				for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
					snprintf(name, sizeof(name), "requests[%d]", i);
					add(s, dev, "dcbnl ieee_pfc", name, pfc->requests[i]);
					snprintf(name, sizeof(name), "indications[%d]", i);
					add(s, dev, "dcbnl ieee_pfc", name, pfc->indications[i]);
				}
				goto out;
			}
		}
		note(s, dev, "dcbnl ieee_pfc", "%s", "no ieee_pfc in the reply");
	}
out:
	close(fd);
}

void hw_rdma_dev_of(const char *netdev, char *ibdev, size_t len)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *de;

	ibdev[0] = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[512], nd[64] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(nd, sizeof(nd), f))
			nd[strcspn(nd, "\n")] = 0;
		fclose(f);
		if (!strcmp(nd, netdev)) {
			snprintf(ibdev, len, "%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

static void rdma_counters(struct hw_set *s, const char *netdev)
{
	char ibdev[24], path[512], label[32];
	struct dirent *de;
	DIR *d;

	hw_rdma_dev_of(netdev, ibdev, sizeof(ibdev));
	if (!ibdev[0]) {
		note(s, netdev, "rdma hw_counters", "%s", "no RDMA device on this netdev");
		return;
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters", ibdev);
	snprintf(label, sizeof(label), "%s/1", ibdev);
	d = opendir(path);
	if (!d) {
		note(s, label, "rdma hw_counters", "%s", "none exposed");
		return;
	}
	while ((de = readdir(d))) {
		char p[800], line[64];
		FILE *f;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f))
			add(s, label, "rdma hw_counters", de->d_name, strtoull(line, NULL, 10));
		fclose(f);
	}
	closedir(d);
}

void hw_collect(struct hw_set *s, const char *netdev, int all)
{
	ethtool_stats(s, netdev, all);
	dcbnl_pfc(s, netdev);
	rdma_counters(s, netdev);
}
