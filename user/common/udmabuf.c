// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* udmabuf-backed dma-bufs; see udmabuf.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include "udmabuf.h"

int bench_udmabuf(size_t size, char *err, size_t errlen)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = size };
	int memfd, dev, buf, e;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		e = -errno;
		snprintf(err, errlen, "/dev/udmabuf: %s%s", strerror(-e),
			 e == -ENOENT ? " (this kernel has no CONFIG_UDMABUF)" : "");
		return e;
	}
	memfd = memfd_create("collx-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		e = -errno;
		snprintf(err, errlen, "memfd of %zu bytes: %s", size, strerror(-e));
		goto out;
	}
	c.memfd = memfd;
	buf = ioctl(dev, UDMABUF_CREATE, &c);
	if (buf < 0) {
		e = -errno;
		snprintf(err, errlen, "UDMABUF_CREATE of %zu bytes: %s", size, strerror(-e));
		goto out;
	}
	e = buf;
out:
	if (memfd >= 0)
		close(memfd);
	close(dev);
	return e;
}
