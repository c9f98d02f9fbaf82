// SPDX-License-Identifier: GPL-2.0
/*
 * Counters where the hardware consumes PFC, each labelled with its source:
 *   ethtool            SIOCETHTOOL GSTRINGS/GSTATS (mlx5 rx_prio3_pause, ...)
 *   dcbnl ieee_pfc     RTM_GETDCB DCB_CMD_IEEE_GET through libmnl (as
 *                      iproute2's dcb): struct ieee_pfc pfc_en, requests[8],
 *                      indications[8], per priority
 *   rdma hw_counters   /sys/class/infiniband/<dev>/ports/<p>/hw_counters of
 *                      every port that runs over the netdev
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include "hw.h"

static struct hw_counter *add(struct hw_set *s, const char *dev, enum hw_source src,
			      const char *name, uint64_t v)
{
	struct hw_counter *c;

	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		void *p = realloc(s->c, cap * sizeof(*s->c));

		if (!p)
			return NULL;
		s->c = p;
		s->cap = cap;
	}
	c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->netdev, sizeof(c->netdev), "%s", dev);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->source = src;
	c->prio = -1;
	c->value = v;
	return c;
}

static struct hw_note *note(struct hw_set *s, const char *dev, enum hw_source src,
			    const char *fmt, const char *arg)
{
	struct hw_note *n;

	if (s->nnotes == (int)(sizeof(s->notes) / sizeof(s->notes[0])))
		return NULL;
	n = &s->notes[s->nnotes++];
	snprintf(n->dev, sizeof(n->dev), "%s", dev);
	n->source = src;
	n->quiet = 0;
	snprintf(n->text, sizeof(n->text), fmt, arg);
	return n;
}

void hw_reset(struct hw_set *s)
{
	s->n = 0;
	s->nnotes = 0;
}

const char *hw_source_name(enum hw_source s)
{
	switch (s) {
	case HW_ETHTOOL: return "ethtool";
	case HW_DCB_PFC: return "dcbnl ieee_pfc";
	case HW_RDMA: return "rdma hw_counters";
	}
	return "?";
}

const char *hw_label(const struct hw_counter *c)
{
	static char buf[48];

	if (c->source != HW_RDMA)
		return c->netdev;
	snprintf(buf, sizeof(buf), "%s/%d", c->rdma_dev, c->port);
	return buf;
}

const char *hw_display_name(const struct hw_counter *c, char *buf, size_t len)
{
	if (c->prio < 0)
		return c->name;
	snprintf(buf, len, "%s[%d]", c->name, c->prio);
	return buf;
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
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&drv;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
		note(s, dev, HW_ETHTOOL, "no driver info: %s", strerror(errno));
		goto out;
	}
	n = drv.n_stats;
	if (!n) {
		note(s, dev, HW_ETHTOOL, "driver %s has no statistics", drv.driver);
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
			add(s, dev, HW_ETHTOOL, name, st->data[i]);
			shown++;
		}
	}
	if (!shown) {
		struct hw_note *q = note(s, dev, HW_ETHTOOL,
					 "driver %s: no pause/pfc/prio/cnp/ecn/drop statistics",
					 drv.driver);

		if (q)
			q->quiet = 1;
	}
out:
	free(strs);
	free(st);
	close(fd);
}

struct dcb_ctx {
	struct hw_set *s;
	const char *dev;
	int found;
};

static int dcb_ieee_cb(const struct nlattr *a, void *data)
{
	struct dcb_ctx *x = data;
	const struct ieee_pfc *pfc;
	struct hw_counter *c;
	int i;

	if (mnl_attr_get_type(a) != DCB_ATTR_IEEE_PFC ||
	    mnl_attr_get_payload_len(a) < sizeof(*pfc))
		return MNL_CB_OK;
	pfc = mnl_attr_get_payload(a);
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		c = add(x->s, x->dev, HW_DCB_PFC, "pfc_enabled", (pfc->pfc_en >> i) & 1);
		if (c)
			c->prio = i;
		c = add(x->s, x->dev, HW_DCB_PFC, "pfc_requests", pfc->requests[i]);
		if (c)
			c->prio = i;
		c = add(x->s, x->dev, HW_DCB_PFC, "pfc_indications", pfc->indications[i]);
		if (c)
			c->prio = i;
	}
	x->found = 1;
	return MNL_CB_OK;
}

static int dcb_attr_cb(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == DCB_ATTR_IEEE)
		mnl_attr_parse_nested(a, dcb_ieee_cb, data);
	return MNL_CB_OK;
}

static int dcb_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct dcbmsg), dcb_attr_cb, data);
}

static void dcbnl_pfc(struct hw_set *s, const char *dev)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct dcb_ctx x = { .s = s, .dev = dev };
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct dcbmsg *d;
	unsigned int seq = time(NULL), portid;
	int ret;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto out;
	portid = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETDCB;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->dcb_family = AF_UNSPEC;
	d->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, dev);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		goto out;
	ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (ret < 0)
		goto out;
	ret = mnl_cb_run(buf, ret, seq, portid, dcb_msg_cb, &x);
	if (ret < 0)
		note(s, dev, HW_DCB_PFC, "%s", errno == EOPNOTSUPP ?
		     "not supported by this netdev (no DCB)" : strerror(errno));
	else if (!x.found)
		note(s, dev, HW_DCB_PFC, "%s", "no ieee_pfc in the reply");
out:
	mnl_socket_close(nl);
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Calls @fn for every RDMA port whose first GID's netdev is @netdev. */
static int for_each_port(const char *netdev,
			 int (*fn)(const char *ibdev, int port, void *arg), void *arg)
{
	DIR *d = opendir("/sys/class/infiniband"), *pd;
	struct dirent *de, *pe;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[512], nd[64];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports", de->d_name);
		pd = opendir(path);
		if (!pd)
			continue;
		while ((pe = readdir(pd))) {
			int port = atoi(pe->d_name);

			if (port <= 0)
				continue;
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/0",
				 de->d_name, port);
			if (read_line(path, nd, sizeof(nd)) || strcmp(nd, netdev))
				continue;
			n++;
			if (fn(de->d_name, port, arg))
				break;
		}
		closedir(pd);
	}
	closedir(d);
	return n;
}

struct first_port {
	char *ibdev;
	size_t len;
	int port;
};

static int first_port_cb(const char *ibdev, int port, void *arg)
{
	struct first_port *f = arg;

	if (f->ibdev[0])
		return 1;
	snprintf(f->ibdev, f->len, "%s", ibdev);
	f->port = port;
	return 1;
}

void hw_rdma_dev_of(const char *netdev, char *ibdev, size_t len, int *port)
{
	struct first_port f = { .ibdev = ibdev, .len = len };

	ibdev[0] = 0;
	for_each_port(netdev, first_port_cb, &f);
	if (port)
		*port = f.port;
}

struct rdma_ctx {
	struct hw_set *s;
	const char *netdev;
};

static int rdma_port_cb(const char *ibdev, int port, void *arg)
{
	struct rdma_ctx *x = arg;
	char path[512], text[96];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/hw_counters", ibdev, port);
	d = opendir(path);
	if (!d) {
		snprintf(text, sizeof(text), "%s/%d exposes no hw_counters", ibdev, port);
		note(x->s, x->netdev, HW_RDMA, "%s", text);
		return 0;
	}
	while ((de = readdir(d))) {
		char p[800], line[64];
		struct hw_counter *c;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (read_line(p, line, sizeof(line)))
			continue;
		c = add(x->s, x->netdev, HW_RDMA, de->d_name, strtoull(line, NULL, 10));
		if (c) {
			snprintf(c->rdma_dev, sizeof(c->rdma_dev), "%s", ibdev);
			c->port = port;
		}
	}
	closedir(d);
	return 0;
}

static void rdma_counters(struct hw_set *s, const char *netdev)
{
	struct rdma_ctx x = { .s = s, .netdev = netdev };

	if (!for_each_port(netdev, rdma_port_cb, &x))
		note(s, netdev, HW_RDMA, "%s", "no RDMA device on this netdev");
}

void hw_collect(struct hw_set *s, const char *netdev, int all)
{
	ethtool_stats(s, netdev, all);
	dcbnl_pfc(s, netdev);
	rdma_counters(s, netdev);
}
