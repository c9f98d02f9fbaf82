// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * collx-info: the library's and the loaded module's versions, every RDMA
 * device and port with its state, MTU and GID table, and which of them a
 * communicator would use (COLLX_IB_HCA, COLLX_IB_GID_INDEX and
 * COLLX_RDMA_ADDR applied as libcollx applies them).  --json prints one
 * JSON object instead.  Exits 1 when the module is not loaded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collx_int.h"

static const struct {
	unsigned long long bit;
	const char *name;
} features[] = {
	{ COLLX_FEATURE_COLLECTIVES, "collectives" }, { COLLX_FEATURE_GROUP, "group" },
	{ COLLX_FEATURE_AUTH, "auth" }, { COLLX_FEATURE_TOS, "tos" },
	{ COLLX_FEATURE_FP8, "fp8" }, { COLLX_FEATURE_DMABUF, "dmabuf" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: collx-info [options]\n"
		"The collx module's version and ABI, every RDMA device, port and GID, and the\n"
		"port a communicator would use (COLLX_IB_HCA, COLLX_IB_GID_INDEX applied).\n\n"
		"  -j, --json   one JSON object instead of text\n"
		"  -h, --help   this text\n");
}

static const char *link_name(int ll)
{
	switch (ll) {
	case IBV_LINK_LAYER_INFINIBAND:
		return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET:
		return "Ethernet";
	default:
		return "unknown";
	}
}

/* As rdma link and ibv_devinfo print it. */
static const char *state_name(int state)
{
	switch (state) {
	case IBV_PORT_DOWN:
		return "DOWN";
	case IBV_PORT_INIT:
		return "INIT";
	case IBV_PORT_ARMED:
		return "ARMED";
	case IBV_PORT_ACTIVE:
		return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER:
		return "ACTIVE_DEFER";
	default:
		return "NOP";
	}
}

static void gid_text(const struct collx_gid_entry *g, char *gid, size_t glen, char *v4,
		     size_t vlen)
{
	struct in_addr a;

	inet_ntop(AF_INET6, g->raw, gid, glen);
	v4[0] = 0;
	if (collx_gid_ipv4(g->raw, &a))
		inet_ntop(AF_INET, &a, v4, vlen);
}

/* ---- text ---- */

static void print_text(const struct collx_version *v, const char *deverr,
		       const struct collx_port_info *ports, int n, const char *scanerr,
		       const struct collx_ibdev_info *sel, const char *selerr)
{
	char gid[INET6_ADDRSTRLEN], v4[INET_ADDRSTRLEN], ip[INET_ADDRSTRLEN];
	size_t f;
	int i, k;

	printf("libcollx: %d.%d\n", COLLX_LIB_MAJOR, COLLX_LIB_MINOR);
	if (v) {
		printf("module: %s, ABI %u.%u, %u RDMA device%s served, features 0x%llx",
		       v->module_version, v->abi_major, v->abi_minor, v->nr_devices,
		       v->nr_devices == 1 ? "" : "s", (unsigned long long)v->features);
		for (f = 0, k = 0; f < sizeof(features) / sizeof(features[0]); f++)
			if (v->features & features[f].bit)
				printf("%s%s", k++ ? " " : " (", features[f].name);
		printf("%s\n", k ? ")" : "");
	} else {
		printf("module: not loaded (%s)\n", deverr);
	}
	printf("\n");
	if (scanerr) {
		printf("RDMA devices: %s\n", scanerr);
	} else if (!n) {
		printf("RDMA devices: none\n");
	} else {
		printf("%-12s %4s  %-8s %5s  %-10s %-9s %5s  %-7s  %-39s %s\n", "device", "port", "state",
		       "mtu", "link", "netdev", "gid", "type", "address", "ipv4");
		for (i = 0; i < n; i++) {
			const struct collx_port_info *p = &ports[i];

			printf("%-12s %4d  %-8s %5d  %-10s %-9s", p->dev, p->port,
			       state_name(p->state), p->active_mtu, link_name(p->link_layer),
			       p->netdev[0] ? p->netdev : "-");
			if (!p->ngids)
				printf("\n");
			for (k = 0; k < p->ngids; k++) {
				gid_text(&p->gids[k], gid, sizeof(gid), v4, sizeof(v4));
				if (k)
					printf("%-12s %4s  %-8s %5s  %-10s %-9s", "", "", "", "", "", "");
				printf(" %5d  %-7s  %-39s %s\n", p->gids[k].index,
				       collx_gid_type_name(p->gids[k].type), gid, v4[0] ? v4 : "-");
			}
		}
	}
	printf("\n");
	if (!sel) {
		printf("a communicator would use: nothing: %s\n", selerr);
		return;
	}
	inet_ntop(AF_INET, &sel->addr, ip, sizeof(ip));
	if (sel->gid_index >= 0)
		printf("a communicator would use: %s:%d, GID %d (%s) %s, address %s, MTU %d (from %s)\n",
		       sel->name, sel->port, sel->gid_index, collx_gid_type_name(sel->gid_type),
		       sel->gid, ip, sel->mtu, sel->how);
	else
		printf("a communicator would use: %s:%d, address %s, MTU %d (from %s)\n", sel->name,
		       sel->port, ip, sel->mtu, sel->how);
}

/* ---- JSON ---- */

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *json_ports(const struct collx_port_info *ports, int n)
{
	char gid[INET6_ADDRSTRLEN], v4[INET_ADDRSTRLEN];
	json_object *a = json_object_new_array();
	int i, k;

	for (i = 0; i < n; i++) {
		const struct collx_port_info *p = &ports[i];
		json_object *o = json_object_new_object(), *g = json_object_new_array();

		json_object_object_add(o, "device", jstr(p->dev));
		json_object_object_add(o, "port", json_object_new_int(p->port));
		json_object_object_add(o, "state", jstr(state_name(p->state)));
		json_object_object_add(o, "mtu", json_object_new_int(p->active_mtu));
		json_object_object_add(o, "link_layer", jstr(link_name(p->link_layer)));
		json_object_object_add(o, "netdev", jstr(p->netdev[0] ? p->netdev : NULL));
		for (k = 0; k < p->ngids; k++) {
			json_object *e = json_object_new_object();

			gid_text(&p->gids[k], gid, sizeof(gid), v4, sizeof(v4));
			json_object_object_add(e, "index", json_object_new_int(p->gids[k].index));
			json_object_object_add(e, "type", jstr(collx_gid_type_name(p->gids[k].type)));
			json_object_object_add(e, "gid", jstr(gid));
			json_object_object_add(e, "ipv4", jstr(v4[0] ? v4 : NULL));
			json_object_object_add(e, "netdev",
					       jstr(p->gids[k].netdev[0] ? p->gids[k].netdev : NULL));
			json_object_array_add(g, e);
		}
		json_object_object_add(o, "gids", g);
		json_object_array_add(a, o);
	}
	return a;
}

static void print_json(const struct collx_version *v, const char *deverr,
		       const struct collx_port_info *ports, int n, const char *scanerr,
		       const struct collx_ibdev_info *sel, const char *selerr)
{
	json_object *o = json_object_new_object(), *fa = json_object_new_array(), *s;
	char lib[16], ip[INET_ADDRSTRLEN];
	size_t f;

	/* The first keys, in this order, as scripts read them. */
	json_object_object_add(o, "module_version", jstr(v ? v->module_version : NULL));
	json_object_object_add(o, "abi_major", v ? json_object_new_int((int)v->abi_major) : NULL);
	json_object_object_add(o, "abi_minor", v ? json_object_new_int((int)v->abi_minor) : NULL);
	json_object_object_add(o, "nr_devices", v ? json_object_new_int((int)v->nr_devices) : NULL);
	json_object_object_add(o, "features",
			       v ? json_object_new_int64((int64_t)v->features) : NULL);
	for (f = 0; v && f < sizeof(features) / sizeof(features[0]); f++)
		if (v->features & features[f].bit)
			json_object_array_add(fa, jstr(features[f].name));
	json_object_object_add(o, "feature_names", fa);
	json_object_object_add(o, "module_error", jstr(v ? NULL : deverr));
	snprintf(lib, sizeof(lib), "%d.%d", COLLX_LIB_MAJOR, COLLX_LIB_MINOR);
	json_object_object_add(o, "library_version", jstr(lib));
	json_object_object_add(o, "ports", json_ports(ports, n));
	json_object_object_add(o, "ports_error", jstr(scanerr));
	s = NULL;
	if (sel) {
		s = json_object_new_object();
		inet_ntop(AF_INET, &sel->addr, ip, sizeof(ip));
		json_object_object_add(s, "device", jstr(sel->name));
		json_object_object_add(s, "port", json_object_new_int(sel->port));
		json_object_object_add(s, "gid_index", json_object_new_int(sel->gid_index));
		json_object_object_add(s, "gid", jstr(sel->gid[0] ? sel->gid : NULL));
		json_object_object_add(s, "gid_type",
				       jstr(sel->gid_index >= 0 ? collx_gid_type_name(sel->gid_type) : NULL));
		json_object_object_add(s, "address", jstr(ip));
		json_object_object_add(s, "mtu", json_object_new_int(sel->mtu));
		json_object_object_add(s, "from", jstr(sel->how));
	}
	json_object_object_add(o, "selected", s);
	json_object_object_add(o, "selected_error", jstr(sel ? NULL : selerr));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char deverr[128] = "", scanerr[COLLX_ERRLEN], selerr[COLLX_ERRLEN] = "";
	const struct collx_version *v = NULL;
	struct collx_port_info *ports = NULL;
	struct collx_ibdev_info sel;
	struct collx_dev *dev = NULL;
	int json = 0, c, err, nports = 0, scan, chosen;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	err = collx_dev_open(&dev);
	if (err)
		snprintf(deverr, sizeof(deverr), "%s", collx_dev_strerror(err));
	else
		v = collx_dev_version(dev);
	scan = collx_ibdev_scan(&ports, &nports, scanerr, sizeof(scanerr));
	chosen = collx_ibdev_select(&sel, selerr, sizeof(selerr)) == 0;
	if (json)
		print_json(v, deverr, ports, nports, scan ? scanerr : NULL, chosen ? &sel : NULL,
			   selerr);
	else
		print_text(v, deverr, ports, nports, scan ? scanerr : NULL, chosen ? &sel : NULL,
			   selerr);
	collx_ibdev_scan_free(ports, nports);
	collx_dev_close(dev);
	if (!v && !json)
		fprintf(stderr, "collx-info: /dev/collx: %s\n", deverr);
	return v ? 0 : 1;
}
