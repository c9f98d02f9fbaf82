// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* libcollx: opening /dev/collx and checking its ABI. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collx.h"

struct collx_dev {
	int fd;
	struct collx_version version;
};

int collx_dev_open(struct collx_dev **devp)
{
	const char *path = getenv("COLLX_DEVICE");
	struct collx_dev *dev;
	int err;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->fd = open(path && *path ? path : "/dev/collx", O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		err = -errno;
		goto out_free;
	}
	dev->version.size = sizeof(dev->version);
	if (ioctl(dev->fd, COLLX_IOC_VERSION, &dev->version)) {
		err = -errno;
		goto out_close;
	}
	if (dev->version.abi_major != COLLX_ABI_MAJOR) {
		err = -EPROTO;
		goto out_close;
	}
	*devp = dev;
	return 0;

out_close:
	close(dev->fd);
out_free:
	free(dev);
	return err;
}

void collx_dev_close(struct collx_dev *dev)
{
	if (!dev)
		return;
	close(dev->fd);
	free(dev);
}

const struct collx_version *collx_dev_version(const struct collx_dev *dev)
{
	return &dev->version;
}

int collx_dev_fd(const struct collx_dev *dev)
{
	return dev->fd;
}
