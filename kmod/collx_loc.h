/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx: prototypes shared between the module's files, grouped by the file
 * that defines them.
 */
#ifndef COLLX_LOC_H
#define COLLX_LOC_H

#include <linux/types.h>

#define COLLX_MODULE_VERSION	"0.1.0"

/* chardev.c */
int collx_chardev_init(void);
void collx_chardev_exit(void);

/* device.c */
int collx_device_init(void);
void collx_device_exit(void);
u32 collx_device_count(void);

#endif /* COLLX_LOC_H */
