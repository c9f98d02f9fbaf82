/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * collx: collective communication as a kernel service.
 *
 * User-space ABI of /dev/collx.
 */
#ifndef _UAPI_LINUX_COLLX_H
#define _UAPI_LINUX_COLLX_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define COLLX_TYPE	'X'

/**
 * DOC: General ioctl format
 *
 * Every ioctl takes a pointer to a struct whose first field is ``__u32 size``,
 * the number of bytes user space passes.  The kernel reads
 * min(size, sizeof(kernel struct)) bytes, treats missing trailing bytes as
 * zero and, when user space is newer, requires every byte it does not know
 * to be zero (copy_struct_from_user() semantics).  Fields called ``flags``
 * must be zero unless a flag is defined for them; ``__reserved`` fields
 * must be zero.
 *
 * The ioctl number does not encode the size, so a struct may grow at its end
 * without a new number.  Output is written back up to the size user space
 * passed.
 *
 * Errors:
 *
 * - ENOTTY: unknown ioctl number.
 * - E2BIG: user space passed bytes, beyond what this kernel knows, that are
 *   not zero.
 * - EOPNOTSUPP: a flag, dtype, operation or other value this kernel does not
 *   support (it may be valid in a newer ABI).
 * - EINVAL: ``size`` is smaller than the struct's mandatory part, a reserved
 *   field is not zero, or a field's value is out of its range.
 * - EFAULT: a user pointer could not be read or written.
 * - ENOMEM: the kernel could not allocate what the request needs.
 */

/**
 * enum collx_dtype - element type of a collective's buffers
 * @COLLX_INT8: signed 8-bit integer
 * @COLLX_UINT8: unsigned 8-bit integer
 * @COLLX_INT32: signed 32-bit integer
 * @COLLX_UINT32: unsigned 32-bit integer
 * @COLLX_INT64: signed 64-bit integer
 * @COLLX_UINT64: unsigned 64-bit integer
 * @COLLX_FP16: IEEE 754 binary16
 * @COLLX_FP32: IEEE 754 binary32
 * @COLLX_FP64: IEEE 754 binary64
 * @COLLX_BF16: bfloat16 (the upper half of a binary32)
 * @COLLX_DTYPE_COUNT: number of types; not a type
 *
 * The values are NCCL's (ncclDataType_t), so code moving between the two
 * keeps its numbers.
 */
enum collx_dtype {
	COLLX_INT8 = 0,
	COLLX_UINT8 = 1,
	COLLX_INT32 = 2,
	COLLX_UINT32 = 3,
	COLLX_INT64 = 4,
	COLLX_UINT64 = 5,
	COLLX_FP16 = 6,
	COLLX_FP32 = 7,
	COLLX_FP64 = 8,
	COLLX_BF16 = 9,
	COLLX_DTYPE_COUNT,
};

/**
 * enum collx_redop - reduction operation
 * @COLLX_OP_SUM: sum
 * @COLLX_OP_PROD: product
 * @COLLX_OP_MAX: maximum
 * @COLLX_OP_MIN: minimum
 * @COLLX_OP_AVG: sum divided by the number of ranks (integers truncate)
 * @COLLX_OP_COUNT: number of operations; not an operation
 *
 * The values are NCCL's (ncclRedOp_t).
 */
enum collx_redop {
	COLLX_OP_SUM = 0,
	COLLX_OP_PROD = 1,
	COLLX_OP_MAX = 2,
	COLLX_OP_MIN = 3,
	COLLX_OP_AVG = 4,
	COLLX_OP_COUNT,
};

/* ABI version reported by COLLX_IOC_VERSION. */
#define COLLX_ABI_MAJOR	1
#define COLLX_ABI_MINOR	0

enum {
	COLLX_CMD_BASE = 0x80,
	COLLX_CMD_VERSION = COLLX_CMD_BASE,
};

/**
 * struct collx_version - COLLX_IOC_VERSION
 * @size: sizeof(struct collx_version)
 * @flags: must be 0
 * @abi_major: out, COLLX_ABI_MAJOR of the loaded module; a library built
 *	for another major must not talk to it
 * @abi_minor: out, COLLX_ABI_MINOR of the loaded module; newer minors only
 *	add ioctls and fields
 * @nr_devices: out, number of RDMA devices the module currently serves
 * @__reserved: must be 0
 * @features: out, bit mask of COLLX_FEATURE_* the module supports
 * @module_version: out, NUL-terminated version string of the module
 *
 * Tells user space which ABI the loaded module speaks.  Libraries call it
 * right after open() and refuse a major they do not know.
 */
struct collx_version {
	__u32 size;
	__u32 flags;
	__u32 abi_major;
	__u32 abi_minor;
	__u32 nr_devices;
	__u32 __reserved;
	__aligned_u64 features;
	char module_version[32];
};

#define COLLX_IOC_VERSION	_IO(COLLX_TYPE, COLLX_CMD_VERSION)

#endif /* _UAPI_LINUX_COLLX_H */
