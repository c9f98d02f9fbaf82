// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Clocks and whole writes. */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_int.h"

double ckpt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t ckpt_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int ckpt_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

int ckpt_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		err = -errno;
	close(fd);
	return err;
}
