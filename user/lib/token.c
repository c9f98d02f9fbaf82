// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: the job's token, which authenticates the rendezvous.
 *
 *   COLLX_JOB_TOKEN=STRING     at least 16 bytes, the same on every rank
 *                              (hex from a random source, say)
 *   COLLX_JOB_TOKEN_FILE=PATH  a file holding it: owned by the caller and
 *                              with no group or other permission bits, as
 *                              ssh wants of a private key, since whoever
 *                              reads it can join the job
 *
 * Only what the launcher already gives every rank can be trusted, so the
 * token comes from it.  The token itself is used once: it keys the
 * derivation of the job key, and both are wiped.  Neither is ever logged,
 * so the variable is read with getenv(), not collx_getenv().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collx_int.h"

/* Longer than any sensible token, short enough for the stack. */
#define TOKEN_MAX	4096

static const char job_key_label[] = "collx job key v1";

void collx_job_key_derive(const void *token, size_t len, uint8_t key[COLLX_JOB_KEY_BYTES])
{
	collx_hmac_sha256(token, len, job_key_label, sizeof(job_key_label) - 1, key);
}

/* Trailing newlines and blanks are not the token: "echo tok > file". */
static size_t token_trim(const char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
		       s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return len;
}

/* A file only the caller can read, or why not. */
static int token_file_check(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s is not a regular file", path);
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s is owned by uid %u, not by this process's uid %u: another user could change the job's token",
			 path, (unsigned int)st.st_uid, (unsigned int)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s has mode %04o: others may read it and join the job; chmod 600 it",
			 path, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int token_file_read(const char *path, char *buf, size_t *len,
			   char *err, size_t errlen)
{
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s: %s", path, strerror(errno));
		return rc;
	}
	rc = token_file_check(fd, path, err, errlen);
	while (!rc && got < TOKEN_MAX) {
		n = read(fd, buf + got, TOKEN_MAX - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s: %s", path, strerror(errno));
		}
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	if (!rc && got == TOKEN_MAX) {
		snprintf(err, errlen, "COLLX_JOB_TOKEN_FILE=%s is longer than %d bytes", path,
			 TOKEN_MAX - 1);
		rc = -EINVAL;
	}
	*len = got;
	return rc;
}

int collx_job_key(uint8_t key[COLLX_JOB_KEY_BYTES], char *err, size_t errlen)
{
	const char *env = getenv("COLLX_JOB_TOKEN");
	const char *path = getenv("COLLX_JOB_TOKEN_FILE");
	const char *what = "COLLX_JOB_TOKEN";
	char buf[TOKEN_MAX];
	size_t len = 0;
	int rc = 0;

	if (env && *env && path && *path) {
		snprintf(err, errlen, "both COLLX_JOB_TOKEN and COLLX_JOB_TOKEN_FILE are set: set one");
		return -EINVAL;
	}
	if (env && *env) {
		len = strlen(env);
		if (len >= TOKEN_MAX) {
			snprintf(err, errlen, "COLLX_JOB_TOKEN is longer than %d bytes", TOKEN_MAX - 1);
			return -EINVAL;
		}
		memcpy(buf, env, len);
	} else if (path && *path) {
		what = "COLLX_JOB_TOKEN_FILE";
		rc = token_file_read(path, buf, &len, err, errlen);
	} else {
		return 0;
	}
	len = token_trim(buf, len);
	if (!rc && len < COLLX_JOB_TOKEN_MIN) {
		snprintf(err, errlen, "%s: the token has %zu bytes, fewer than %d: too easy to guess",
			 what, len, COLLX_JOB_TOKEN_MIN);
		rc = -EINVAL;
	}
	if (!rc)
		collx_job_key_derive(buf, len, key);
	explicit_bzero(buf, sizeof(buf));
	return rc ? rc : 1;
}

static pthread_once_t warn_once = PTHREAD_ONCE_INIT;
static uint16_t warn_port;

static void warn_unauth(void)
{
	fprintf(stderr, "collx: the rendezvous is not authenticated (no COLLX_JOB_TOKEN/COLLX_JOB_TOKEN_FILE): any host that reaches port %u can join this job\n",
		warn_port);
}

void collx_warn_unauthenticated(uint16_t port)
{
	warn_port = port;
	pthread_once(&warn_once, warn_unauth);
}
