// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: the list syntax of NCCL_IB_HCA and NCCL_SOCKET_IFNAME, which
 * COLLX_IB_HCA and COLLX_SOCKET_IFNAME take as they are:
 *
 *   mlx5              every name starting with "mlx5" (prefix match)
 *   =mlx5_0,mlx5_1    exactly these names
 *   ^mlx5_1           every name but those starting with "mlx5_1"
 *   ^=mlx5_1          every name but exactly "mlx5_1"
 *   mlx5_0:1,mlx5_1:1 with a port each (COLLX_IB_HCA only)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collx_int.h"

int collx_nlist_parse(const char *spec, bool ports, struct collx_nlist *l)
{
	const char *s = spec, *end, *colon;

	memset(l, 0, sizeof(*l));
	if (!s || !*s)
		return 0;
	if (*s == '^') {
		l->exclude = true;
		s++;
	}
	if (*s == '=') {
		l->exact = true;
		s++;
	}
	for (;;) {
		long port = 0;

		end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		colon = memchr(s, ':', end - s);
		if (colon) {
			char num[16];

			if (!ports || end - colon - 1 <= 0 || end - colon - 1 >= (long)sizeof(num))
				return -EINVAL;
			memcpy(num, colon + 1, end - colon - 1);
			num[end - colon - 1] = 0;
			if (collx_parse_long(num, 1, 255, &port))
				return -EINVAL;
		} else {
			colon = end;
		}
		if (colon == s || (size_t)(colon - s) >= sizeof(l->e[0].name) ||
		    l->n == COLLX_NLIST_MAX)
			return -EINVAL;
		memcpy(l->e[l->n].name, s, colon - s);
		l->e[l->n].name[colon - s] = 0;
		l->e[l->n].port = (int)port;
		l->n++;
		if (!*end)
			return 0;
		s = end + 1;
	}
}

bool collx_nlist_match(const struct collx_nlist *l, const char *name, int port)
{
	bool hit = false;
	int i;

	if (!l->n)
		return true;
	for (i = 0; i < l->n && !hit; i++) {
		const char *e = l->e[i].name;

		if (l->exact ? strcmp(name, e) : strncmp(name, e, strlen(e)))
			continue;
		hit = !l->e[i].port || !port || l->e[i].port == port;
	}
	return l->exclude ? !hit : hit;
}
