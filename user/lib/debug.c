// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: debug log, NCCL_DEBUG style.
 *
 *   COLLX_DEBUG=WARN|INFO|TRACE   what to log (default: nothing)
 *   COLLX_DEBUG_FILE=path         where (default stderr); %h is the host
 *                                 name, %p the pid, %% a percent sign
 *
 * Lines read "host:pid:tid [rank] COLLX INFO text".
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collx_int.h"

int collx_log_level_cur = -1;
static FILE *log_file;
static char log_host[64];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

int collx_log_parse_level(const char *s)
{
	if (!s || !*s)
		return COLLX_LOG_NONE;
	if (!strcasecmp(s, "VERSION") || !strcasecmp(s, "NONE"))
		return COLLX_LOG_NONE;
	if (!strcasecmp(s, "WARN"))
		return COLLX_LOG_WARN;
	if (!strcasecmp(s, "INFO"))
		return COLLX_LOG_INFO;
	if (!strcasecmp(s, "TRACE"))
		return COLLX_LOG_TRACE;
	return -1;
}

int collx_log_expand_path(const char *pattern, char *out, size_t outlen)
{
	char host[64];
	size_t o = 0;
	const char *p;
	int n;

	if (gethostname(host, sizeof(host)))
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	for (p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'h') {
			n = snprintf(out + o, outlen - o, "%s", host);
			p++;
		} else if (p[0] == '%' && p[1] == 'p') {
			n = snprintf(out + o, outlen - o, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			n = snprintf(out + o, outlen - o, "%%");
			p++;
		} else {
			n = snprintf(out + o, outlen - o, "%c", *p);
		}
		if (n < 0 || (size_t)n >= outlen - o)
			return -ENAMETOOLONG;
		o += n;
	}
	if (o >= outlen)
		return -ENAMETOOLONG;
	out[o] = 0;
	return 0;
}

static void log_setup(void)
{
	const char *lvl = getenv("COLLX_DEBUG");
	const char *file = getenv("COLLX_DEBUG_FILE");
	char path[4096];
	int l = collx_log_parse_level(lvl);

	if (gethostname(log_host, sizeof(log_host)))
		strcpy(log_host, "unknown");
	log_host[sizeof(log_host) - 1] = 0;
	log_file = stderr;
	if (l < 0) {
		fprintf(stderr, "libcollx: COLLX_DEBUG=%s is not WARN, INFO or TRACE; using WARN\n",
			lvl);
		l = COLLX_LOG_WARN;
	}
	if (l > COLLX_LOG_NONE && file && *file) {
		if (collx_log_expand_path(file, path, sizeof(path)) == 0) {
			FILE *f = fopen(path, "a");

			if (f) {
				setvbuf(f, NULL, _IOLBF, 0);
				log_file = f;
			} else {
				fprintf(stderr, "libcollx: COLLX_DEBUG_FILE %s: %s\n",
					path, strerror(errno));
			}
		}
	}
	collx_log_level_cur = l;
}

void collx_log_init(void)
{
	pthread_once(&log_once, log_setup);
}

void collx_log(enum collx_log_level lvl, int rank, const char *fmt, ...)
{
	static const char *const names[] = { "NONE", "WARN", "INFO", "TRACE" };
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s:%d:%d [%d] COLLX %s ", log_host,
		     (int)getpid(), (int)syscall(SYS_gettid), rank, names[lvl]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fprintf(log_file, "%s\n", line);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}
