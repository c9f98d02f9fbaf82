// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: the environment collx_comm_init_all() reads.
 *
 *   rank:    COLLX_RANK, else RANK (torchrun)
 *   size:    COLLX_NRANKS, else WORLD_SIZE (torchrun)
 *   rank 0:  COLLX_COMM_ID=host:port (as NCCL_COMM_ID), else
 *            COLLX_MASTER_ADDR[:port] with COLLX_MASTER_PORT (default
 *            29511), else MASTER_ADDR with COLLX_MASTER_PORT, else
 *            MASTER_PORT + 1 (torchrun's own store listens on MASTER_PORT)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collx_int.h"

int collx_env_long(const char *name, long def, long min, long max, long *out)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int collx_parse_hostport(const char *s, char *host, size_t hostlen,
			 uint16_t *port)
{
	const char *colon, *h = s, *hend;
	char *end;
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
	memcpy(host, h, hend - h);
	host[hend - h] = 0;
	if (colon) {
		errno = 0;
		p = strtol(colon + 1, &end, 10);
		if (errno || *end || colon[1] == 0 || p < 1 || p > 65535)
			return -EINVAL;
	}
	*port = (uint16_t)p;
	return 0;
}

static const char *env2(const char *a, const char *b, const char **which)
{
	const char *v = getenv(a);

	if (v && *v) {
		*which = a;
		return v;
	}
	v = getenv(b);
	if (v && *v) {
		*which = b;
		return v;
	}
	*which = a;
	return NULL;
}

static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (errno || *end || end == s || *out < min || *out > max) ? -EINVAL : 0;
}

int collx_env_parse(struct collx_env_cfg *cfg, char *err, size_t errlen)
{
	const char *rs, *ns, *which_r, *which_n, *s;
	long rank, nranks, port;
	uint16_t p;

	memset(cfg, 0, sizeof(*cfg));
	rs = env2("COLLX_RANK", "RANK", &which_r);
	ns = env2("COLLX_NRANKS", "WORLD_SIZE", &which_n);
	if (!rs || !ns) {
		snprintf(err, errlen, "env: %s not set (set COLLX_RANK and COLLX_NRANKS, or torchrun's RANK and WORLD_SIZE)",
			 !rs ? "COLLX_RANK/RANK" : "COLLX_NRANKS/WORLD_SIZE");
		return -EINVAL;
	}
	if (parse_int(ns, 1, COLLX_MAX_RANKS, &nranks)) {
		snprintf(err, errlen, "env: %s=%s is not a number of ranks in 1..%d",
			 which_n, ns, COLLX_MAX_RANKS);
		return -EINVAL;
	}
	if (parse_int(rs, 0, nranks - 1, &rank)) {
		snprintf(err, errlen, "env: %s=%s is not a rank below %s=%ld",
			 which_r, rs, which_n, nranks);
		return -EINVAL;
	}
	cfg->rank = (int)rank;
	cfg->nranks = (int)nranks;

	s = getenv("COLLX_COMM_ID");
	if (s && *s) {
		if (collx_parse_hostport(s, cfg->host, sizeof(cfg->host), &p) || !p) {
			snprintf(err, errlen, "env: COLLX_COMM_ID=%s is not host:port", s);
			return -EINVAL;
		}
		cfg->port = p;
		snprintf(cfg->source, sizeof(cfg->source), "COLLX_COMM_ID");
		return 0;
	}
	if (collx_env_long("COLLX_MASTER_PORT", 0, 1, 65535, &port)) {
		snprintf(err, errlen, "env: COLLX_MASTER_PORT=%s is not a port",
			 getenv("COLLX_MASTER_PORT"));
		return -EINVAL;
	}
	s = getenv("COLLX_MASTER_ADDR");
	if (s && *s) {
		if (collx_parse_hostport(s, cfg->host, sizeof(cfg->host), &p)) {
			snprintf(err, errlen, "env: COLLX_MASTER_ADDR=%s is not host[:port]", s);
			return -EINVAL;
		}
		cfg->port = p ? p : port ? port : COLLX_DEFAULT_PORT;
		snprintf(cfg->source, sizeof(cfg->source), "COLLX_MASTER_ADDR");
		return 0;
	}
	s = getenv("MASTER_ADDR");
	if (s && *s) {
		if (strlen(s) >= sizeof(cfg->host)) {
			snprintf(err, errlen, "env: MASTER_ADDR too long");
			return -EINVAL;
		}
		strcpy(cfg->host, s);
		if (!port) {
			long mp;

			if (collx_env_long("MASTER_PORT", 0, 1, 65534, &mp)) {
				snprintf(err, errlen, "env: MASTER_PORT=%s is not a port below 65535",
					 getenv("MASTER_PORT"));
				return -EINVAL;
			}
			port = mp ? mp + 1 : COLLX_DEFAULT_PORT;
		}
		cfg->port = port;
		snprintf(cfg->source, sizeof(cfg->source), "MASTER_ADDR");
		return 0;
	}
	snprintf(err, errlen, "env: no rendezvous address: set COLLX_COMM_ID=host:port, COLLX_MASTER_ADDR or MASTER_ADDR");
	return -EINVAL;
}
