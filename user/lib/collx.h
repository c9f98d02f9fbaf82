/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libcollx: user-space API of collx.
 */
#ifndef COLLX_H
#define COLLX_H

#include <stdint.h>
#include <linux/collx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An open /dev/collx. */
struct collx_dev;

/*
 * Open the collx device (/dev/collx, or $COLLX_DEVICE) and check that the
 * module speaks an ABI major this library knows.  Returns 0 or a negative
 * errno: -ENOENT (module not loaded), -EPROTO (ABI major mismatch), or the
 * errno of open()/ioctl().
 */
int collx_dev_open(struct collx_dev **devp);
void collx_dev_close(struct collx_dev *dev);

/* The module's answer to COLLX_IOC_VERSION, as read at open. */
const struct collx_version *collx_dev_version(const struct collx_dev *dev);

/* The fd, for poll() and for callers that issue ioctls themselves. */
int collx_dev_fd(const struct collx_dev *dev);

/* A message for a negative errno returned by a collx_* call. */
const char *collx_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* COLLX_H */
