// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* libcollx: opening /dev/collx, checking its ABI, and ioctls on it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collx_int.h"

int collx_ioctl(int fd, unsigned long req, void *arg)
{
	int rc;

	while ((rc = ioctl(fd, req, arg)) && errno == EINTR)
		;
	return rc ? -errno : 0;
}

/*
 * What a failed collx_dev_open() means.  Its errnos are open(2)'s and the
 * version check's, not a communicator's: collx_strerror(-EACCES) speaks of
 * a peer's secret, which would mislead someone outside the device's group.
 */
const char *collx_dev_strerror(int err)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		return "permission denied: not a member of its group (ls -l /dev/collx; the package's udev rule gives it to group collx)";
	case -ENOENT:
	case -ENXIO:
	case -ENODEV:
		return "no such device: is the collx module loaded? (modprobe collx)";
	case -EPROTO:
		return "the module speaks another ABI major version than this libcollx";
	default:
		return strerror(-err);
	}
}

int collx_dev_open(struct collx_dev **devp)
{
	const char *path = collx_getenv("COLLX_DEVICE");
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
	err = collx_ioctl(dev->fd, COLLX_IOC_VERSION, &dev->version);
	if (err)
		goto out_close;
	dev->version.module_version[sizeof(dev->version.module_version) - 1] = 0;
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

bool collx_dev_abi11(const struct collx_dev *dev)
{
	return dev->version.abi_minor >= 1;
}
