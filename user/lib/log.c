// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: debug log, NCCL_DEBUG style.
 *
 *   COLLX_DEBUG=VERSION|WARN|INFO|TRACE  what to log (default: nothing);
 *                                 VERSION and above print the library's
 *                                 and module's versions once
 *   COLLX_DEBUG_SUBSYS=LIST       INIT, COLL, P2P, BOOTSTRAP, ENV, NET,
 *                                 REG or ALL (default); a leading '^'
 *                                 logs everything but the list; NCCL's
 *                                 other names select nothing, unknown
 *                                 ones are skipped with a warning
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
unsigned int collx_log_mask = COLLX_SUB_ALL;
static FILE *log_file;
static char log_host[64];
static bool log_ready, version_done;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = { "NONE", "VERSION", "WARN", "INFO", "TRACE" };

static const struct {
	const char *name;
	unsigned int bit;
} subsys_names[] = {
	{ "INIT", COLLX_SUB_INIT }, { "COLL", COLLX_SUB_COLL },
	{ "P2P", COLLX_SUB_P2P }, { "BOOTSTRAP", COLLX_SUB_BOOTSTRAP },
	{ "ENV", COLLX_SUB_ENV }, { "NET", COLLX_SUB_NET },
	{ "REG", COLLX_SUB_REG }, { "ALL", COLLX_SUB_ALL },
	/* NCCL_DEBUG_SUBSYS's names for what collx does not have */
	{ "SHM", 0 }, { "GRAPH", 0 }, { "TUNING", 0 }, { "ALLOC", 0 }, { "CALL", 0 },
	{ "PROXY", 0 }, { "NVLS", 0 }, { "PROFILE", 0 }, { "RAS", 0 },
};

static int subsys_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++)
		if (!strcasecmp(name, subsys_names[i].name))
			return (int)i;
	return -1;
}

int collx_log_parse_level(const char *s)
{
	size_t i;

	if (!s || !*s)
		return COLLX_LOG_NONE;
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (!strcasecmp(s, level_names[i]))
			return (int)i;
	return -1;
}

int collx_log_parse_subsys(const char *s, unsigned int *mask, char *unknown, size_t len)
{
	char buf[256], *tok, *save;
	bool exclude = false, known = false;
	unsigned int m = 0;
	int i, rc = 0;

	*mask = COLLX_SUB_ALL;
	if (!s || !*s)
		return 0;
	if (*s == '^') {
		exclude = true;
		s++;
	}
	if (strlen(s) >= sizeof(buf)) {
		snprintf(unknown, len, "%.32s...", s);
		return -EINVAL;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		i = subsys_find(tok);
		if (i < 0) {
			if (!rc)
				snprintf(unknown, len, "%s", tok);
			rc = -EINVAL;
			continue;
		}
		known = true;
		m |= subsys_names[i].bit;
	}
	if (known)
		*mask = exclude ? COLLX_SUB_ALL & ~m : m;
	return rc;
}

int collx_log_expand_path(const char *pattern, char *out, size_t outlen)
{
	char host[64];
	size_t o = 0;
	const char *p;
	int n;

	collx_host_name(host, sizeof(host));
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

static FILE *open_log_file(const char *pattern)
{
	char path[4096];
	FILE *f;

	if (collx_log_expand_path(pattern, path, sizeof(path))) {
		fprintf(stderr, "libcollx: COLLX_DEBUG_FILE=%s is too long\n", pattern);
		return stderr;
	}
	f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "libcollx: COLLX_DEBUG_FILE %s: %s\n", path, strerror(errno));
		return stderr;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/* With log_lock held. */
static void log_setup(void)
{
	const char *lvl = getenv("COLLX_DEBUG");
	const char *sub = getenv("COLLX_DEBUG_SUBSYS");
	const char *file = getenv("COLLX_DEBUG_FILE");
	int l = collx_log_parse_level(lvl);
	char bad[64];

	collx_host_name(log_host, sizeof(log_host));
	if (log_file && log_file != stderr)
		fclose(log_file);
	log_file = stderr;
	if (l < 0) {
		fprintf(stderr, "libcollx: COLLX_DEBUG=%s is not VERSION, WARN, INFO or TRACE; using WARN\n",
			lvl);
		l = COLLX_LOG_WARN;
	}
	if (collx_log_parse_subsys(sub, &collx_log_mask, bad, sizeof(bad)))
		fprintf(stderr, "libcollx: COLLX_DEBUG_SUBSYS=%s: %s is not INIT, COLL, P2P, BOOTSTRAP, ENV, NET, REG or ALL; skipped%s\n",
			sub, bad, collx_log_mask == COLLX_SUB_ALL ? ", using ALL" : "");
	if (l > COLLX_LOG_NONE && file && *file)
		log_file = open_log_file(file);
	__atomic_store_n(&collx_log_level_cur, l, __ATOMIC_RELEASE);
}

void collx_log_init(void)
{
	if (__atomic_load_n(&log_ready, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&log_lock);
	if (!log_ready) {
		log_setup();
		__atomic_store_n(&log_ready, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&log_lock);
}

void collx_log_reinit(void)
{
	pthread_mutex_lock(&log_lock);
	log_setup();
	log_ready = true;
	version_done = false;
	pthread_mutex_unlock(&log_lock);
}

void collx_log(enum collx_log_level lvl, int rank, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "%s:%d:%d [%d] COLLX %s ", log_host,
		     (int)getpid(), (int)syscall(SYS_gettid), rank, level_names[lvl]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fprintf(log_file, "%s\n", line);
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}

void collx_log_version(const struct collx_version *v)
{
	bool first;

	collx_log_init();
	if (collx_log_level_cur < COLLX_LOG_VERSION)
		return;
	pthread_mutex_lock(&log_lock);
	first = !version_done;
	version_done = true;
	pthread_mutex_unlock(&log_lock);
	if (!first)
		return;
	if (v)
		collx_log(collx_log_level_cur >= COLLX_LOG_INFO ? COLLX_LOG_INFO : COLLX_LOG_VERSION,
			  -1, "libcollx %d.%d, module %s (ABI %u.%u, features 0x%llx)",
			  COLLX_LIB_MAJOR, COLLX_LIB_MINOR, v->module_version, v->abi_major,
			  v->abi_minor, (unsigned long long)v->features);
	else
		collx_log(collx_log_level_cur >= COLLX_LOG_INFO ? COLLX_LOG_INFO : COLLX_LOG_VERSION,
			  -1, "libcollx %d.%d, module not loaded", COLLX_LIB_MAJOR,
			  COLLX_LIB_MINOR);
}
