// SPDX-License-Identifier: GPL-2.0
/*
 * This node's IPv4 address (node.h).
 */
#include <ifaddrs.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include "node.h"

uint32_t fz_node_addr(const char *given)
{
	struct ifaddrs *ifa, *i;
	struct in_addr in;
	uint32_t a = 0;

	if (!given)
		given = getenv("COLLX_NODE_ADDR");
	if (given)
		return inet_pton(AF_INET, given, &in) == 1 ? in.s_addr : 0;
	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && !a; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    !(i->ifa_flags & IFF_LOOPBACK) && (i->ifa_flags & IFF_UP))
			a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
	freeifaddrs(ifa);
	return a;
}
