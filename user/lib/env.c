// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: environment variables and strict parsing of their values.
 *
 *   COLLX_BOOTSTRAP_TIMEOUT   seconds for the rendezvous (default 60)
 *   COLLX_TIMEOUT_MS          the kernel's connect/progress timeout
 *                             (default 0: the module's comm_timeout_ms)
 *   COLLX_IB_TC               IP type of service of RoCE packets, 0..255
 *                             (DSCP << 2, as NCCL_IB_TC)
 *   COLLX_ALGO                ring|tree|rd|pairwise|auto: the algorithm of
 *                             every collective it can run that asks AUTO
 *
 * Each variable that is set is logged once at INFO (subsystem ENV), as
 * NCCL does: "COLLX_IB_TC set by environment to 106".
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "collx_int.h"

#define MAX_LOGGED 32
static const char *logged[MAX_LOGGED];
static pthread_mutex_t logged_lock = PTHREAD_MUTEX_INITIALIZER;

const char *collx_getenv(const char *name)
{
	const char *v = getenv(name);
	bool first = true;
	int i;

	if (!v || !*v)
		return v;
	collx_log_init();
	if (collx_log_level_cur < COLLX_LOG_INFO || !(collx_log_mask & COLLX_SUB_ENV))
		return v;
	pthread_mutex_lock(&logged_lock);
	for (i = 0; i < MAX_LOGGED && logged[i]; i++)
		if (!strcmp(logged[i], name))
			first = false;
	if (first && i < MAX_LOGGED)
		logged[i] = name;	/* names are string literals */
	pthread_mutex_unlock(&logged_lock);
	if (first)
		collx_log(COLLX_LOG_INFO, -1, "%s set by environment to %s", name, v);
	return v;
}

int collx_parse_long(const char *s, long min, long max, long *out)
{
	const char *start = s;
	char *end;
	int base = 10;
	long v;

	/* Decimal ("010" is ten) or 0x hex, never octal; no blanks or '+'. */
	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		start = s + 2;
		base = 16;
	}
	if (!(*start >= '0' && *start <= '9') && !(base == 10 && *start == '-') &&
	    !(base == 16 && isxdigit((unsigned char)*start)))
		return -EINVAL;
	errno = 0;
	v = strtol(start, &end, base);
	if (errno || end == start || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int collx_env_long(const char *name, long def, long min, long max, long *out)
{
	const char *s = collx_getenv(name);

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	return collx_parse_long(s, min, max, out);
}

int collx_parse_hostport(const char *s, char *host, size_t hostlen,
			 uint16_t *port)
{
	const char *colon, *h = s, *hend;
	long p = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		hend = strchr(s, ']');
		if (!hend)
			return -EINVAL;
		h = s + 1;
		colon = hend[1] == ':' ? hend + 1 : NULL;
		if (hend[1] && !colon)
			return -EINVAL;
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon)
			return -EINVAL;	/* bare IPv6: use [addr]:port */
		hend = colon ? colon : s + strlen(s);
	}
	if (hend == h || (size_t)(hend - h) >= hostlen)
		return -EINVAL;
	if (colon) {
		char *end;

		errno = 0;
		p = strtol(colon + 1, &end, 10);
		if (errno || *end || colon[1] == 0 || p < 1 || p > 65535)
			return -EINVAL;
	}
	memcpy(host, h, hend - h);
	host[hend - h] = 0;
	*port = (uint16_t)p;
	return 0;
}

int collx_parse_algo(const char *s, enum collx_algo *algo)
{
	int a;

	for (a = 0; a < COLLX_ALGO_COUNT; a++) {
		if (!strcasecmp(s, collx_algo_name(a))) {
			*algo = a;
			return 0;
		}
	}
	return -EINVAL;
}

int collx_env_comm_read(struct collx_env_comm *e, char *err, size_t errlen)
{
	const char *s;
	long v;

	memset(e, 0, sizeof(*e));
	if (collx_env_long("COLLX_BOOTSTRAP_TIMEOUT", 60, 1, 86400, &v)) {
		snprintf(err, errlen, "COLLX_BOOTSTRAP_TIMEOUT=%s is not seconds in 1..86400",
			 getenv("COLLX_BOOTSTRAP_TIMEOUT"));
		return -EINVAL;
	}
	e->bs_timeout_ms = (int)v * 1000;
	if (collx_env_long("COLLX_TIMEOUT_MS", 0, 0, COLLX_MAX_TIMEOUT_MS, &v)) {
		snprintf(err, errlen, "COLLX_TIMEOUT_MS=%s is not milliseconds in 0..%u",
			 getenv("COLLX_TIMEOUT_MS"), COLLX_MAX_TIMEOUT_MS);
		return -EINVAL;
	}
	e->timeout_ms = (int)v;
	if (collx_env_long("COLLX_IB_TC", 0, 0, 255, &v)) {
		snprintf(err, errlen, "COLLX_IB_TC=%s is not a traffic class in 0..255 (DSCP << 2)",
			 getenv("COLLX_IB_TC"));
		return -EINVAL;
	}
	e->tos = (int)v;
	e->algo = COLLX_ALGO_AUTO;
	s = collx_getenv("COLLX_ALGO");
	if (s && *s && (collx_parse_algo(s, &e->algo) || e->algo == COLLX_ALGO_P2P)) {
		snprintf(err, errlen, "COLLX_ALGO=%s is not ring, tree, rd, pairwise or auto", s);
		return -EINVAL;
	}
	return 0;
}
