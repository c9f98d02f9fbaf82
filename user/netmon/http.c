// SPDX-License-Identifier: GPL-2.0
/*
 * --prometheus ADDR:PORT: /metrics over HTTP, served by libmicrohttpd in
 * its own thread.  The main loop renders the exposition once a second and
 * swaps it in; a scrape only copies the latest text under a mutex, so a
 * slow or stuck client never delays the ring-buffer consumer.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "main.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

static struct MHD_Daemon *daemon_h;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *text;
static size_t text_len;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	static const char not_found[] = "collx-netmon serves /metrics only\n";
	static const char bad_method[] = "GET or HEAD\n";
	char *copy;
	size_t len;

	(void)cls;
	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, bad_method, sizeof(bad_method) - 1,
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1,
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	pthread_mutex_lock(&lock);
	len = text_len;
	copy = malloc(len ? len : 1);
	if (copy && len)
		memcpy(copy, text, len);
	pthread_mutex_unlock(&lock);
	if (!copy)
		return MHD_NO;
	return reply(c, MHD_HTTP_OK, copy, len, MHD_RESPMEM_MUST_FREE, CONTENT_TYPE);
}

/* "127.0.0.1:9477", "[::1]:9477", "node0:9477"; ":9477" is every address. */
static int parse_listen(const char *arg, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	char host[256], *end;
	const char *colon = strrchr(arg, ':'), *port;
	long p;
	int err;

	if (!colon || colon - arg >= (long)sizeof(host))
		return -1;
	memcpy(host, arg, colon - arg);
	host[colon - arg] = 0;
	port = colon + 1;
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return -1;
		memmove(host, host + 1, n - 2);
		host[n - 2] = 0;
		hints.ai_family = AF_INET6;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (!*port || *end || errno || p < 1 || p > 65535)
		return -1;
	hints.ai_flags |= AI_NUMERICSERV;
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, res);
	if (err) {
		fprintf(stderr, "collx-netmon: --prometheus %s: %s\n", arg, gai_strerror(err));
		return -2;
	}
	return 0;
}

int http_check(const char *addr)
{
	struct addrinfo *ai = NULL;
	int err = parse_listen(addr, &ai);

	if (err == -1)
		fprintf(stderr, "collx-netmon: --prometheus wants ADDR:PORT (127.0.0.1:9477, "
			"[::1]:9477, :9477 for every address), not '%s'\n", addr);
	if (ai)
		freeaddrinfo(ai);
	return err ? -1 : 0;
}

int http_start(const char *addr)
{
	struct addrinfo *ai = NULL;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int err = parse_listen(addr, &ai);

	if (err == -1)
		fprintf(stderr, "collx-netmon: --prometheus wants ADDR:PORT (127.0.0.1:9477, "
			"[::1]:9477, :9477 for every address), not '%s'\n", addr);
	if (err)
		return -1;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	daemon_h = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL,
				    MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				    MHD_OPTION_CONNECTION_LIMIT, 16U,
				    MHD_OPTION_CONNECTION_TIMEOUT, 10U,
				    MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!daemon_h) {
		fprintf(stderr, "collx-netmon: cannot listen on %s: %s\n", addr, strerror(errno));
		return -1;
	}
	return 0;
}

void http_publish(const struct snapshot *s, const struct attrib *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!daemon_h)
		return;
	m = open_memstream(&buf, &len);
	if (!m)
		return;
	prom_render(m, s, a);
	if (fclose(m)) {
		free(buf);
		return;
	}
	pthread_mutex_lock(&lock);
	free(text);
	text = buf;
	text_len = len;
	pthread_mutex_unlock(&lock);
}

void http_stop(void)
{
	if (daemon_h)
		MHD_stop_daemon(daemon_h);
	daemon_h = NULL;
	free(text);
	text = NULL;
}
