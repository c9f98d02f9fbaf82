/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: validation of ioctl arguments as pure functions.  The ioctl
 * layer copies the user struct in, then asks these; each returns 0 or the
 * errno include/uapi/linux/collx.h documents for the failure.
 */
#ifndef _COLLX_CORE_UAPI_CHECK_H
#define _COLLX_CORE_UAPI_CHECK_H

#include "core_shim.h"

/**
 * collx_uapi_check_size() - is the size user space passed large enough
 * @usize: the struct's ``size`` field
 * @min_size: size of the struct's mandatory part (up to and including its
 *	last mandatory field)
 *
 * Context: any.
 * Return: 0, or -EINVAL if @usize < @min_size.
 */
int collx_uapi_check_size(u32 usize, size_t min_size);

/**
 * collx_uapi_check_tail() - are the bytes this kernel does not know zero
 * @buf: what user space passed, @usize bytes (a kernel copy)
 * @usize: bytes user space passed
 * @ksize: size of the struct this kernel knows
 *
 * The pure half of copy_struct_from_user(): bytes at [@ksize, @usize) must
 * be zero when user space is newer than the kernel.
 *
 * Context: any.
 * Return: 0, or -E2BIG if one of those bytes is not zero.
 */
int collx_uapi_check_tail(const void *buf, size_t usize, size_t ksize);

/**
 * collx_uapi_check_zero() - is a reserved field zero
 * @p: the field
 * @len: its size in bytes
 *
 * Context: any.
 * Return: 0, or -EINVAL if any byte is not zero.
 */
int collx_uapi_check_zero(const void *p, size_t len);

/**
 * collx_uapi_check_flags() - does this kernel know every flag set
 * @flags: the ``flags`` field
 * @supported: mask of flags this kernel implements for the struct
 *
 * Context: any.
 * Return: 0, or -EOPNOTSUPP if a bit outside @supported is set.
 */
int collx_uapi_check_flags(u64 flags, u64 supported);

/**
 * collx_uapi_check_dtype() - is @dtype a &enum collx_dtype
 * @dtype: value from user space
 *
 * Context: any.
 * Return: 0, or -EOPNOTSUPP for an unknown type.
 */
int collx_uapi_check_dtype(u32 dtype);

/**
 * collx_uapi_check_redop() - is @op a &enum collx_redop
 * @op: value from user space
 *
 * Context: any.
 * Return: 0, or -EOPNOTSUPP for an unknown operation.
 */
int collx_uapi_check_redop(u32 op);

/**
 * collx_uapi_buf_bytes() - bytes of a buffer of @count elements times @mult
 * @count: elements per rank
 * @dtype: element type (checked)
 * @mult: how many such runs the buffer holds (1, or nranks for an
 *	allgather output), at least 1
 * @max_bytes: largest buffer the caller accepts
 * @bytes: out, @count * element size * @mult
 *
 * Context: any.
 * Return: 0; -EOPNOTSUPP for an unknown @dtype; -EINVAL if @mult is 0 or
 * the product overflows or exceeds @max_bytes.
 */
int collx_uapi_buf_bytes(u64 count, u32 dtype, u64 mult, u64 max_bytes,
			 u64 *bytes);

/**
 * collx_uapi_check_range() - is [@addr, @addr + @len) a sane user range
 * @addr: start address from user space
 * @len: length in bytes
 * @limit: end of the user address space (TASK_SIZE_MAX in the kernel)
 *
 * Does not check that memory is mapped; the pinning or copy does that.
 *
 * Context: any.
 * Return: 0, or -EINVAL if @len is 0, @addr + @len wraps or passes @limit.
 */
int collx_uapi_check_range(u64 addr, u64 len, u64 limit);

/**
 * collx_uapi_check_ranks() - are a rank and a rank count in range
 * @rank: this process's rank
 * @nranks: ranks in the communicator
 * @max_ranks: most ranks the module supports
 *
 * Context: any.
 * Return: 0, or -EINVAL unless 1 <= @nranks <= @max_ranks and
 * @rank < @nranks.
 */
int collx_uapi_check_ranks(u32 rank, u32 nranks, u32 max_ranks);

#endif /* _COLLX_CORE_UAPI_CHECK_H */
