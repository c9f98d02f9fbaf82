/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collx core: the one place where the shared C (reductions, schedules,
 * uapi checks) learns whether it is built into the kernel (the module and
 * KUnit) or into a user-space program (host tests, benchmark).
 *
 * Everything under kmod/core/ includes this header instead of kernel or libc
 * headers directly; nothing else may test __KERNEL__.
 */
#ifndef _COLLX_CORE_SHIM_H
#define _COLLX_CORE_SHIM_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/bits.h>

#if defined(CONFIG_X86_64)
#include <asm/cpufeature.h>
#define COLLX_HAVE_X86_SIMD	1

/*
 * Files built with FPU flags (COLLX_FPU_UNIT) hold only the kernels; they
 * must not see the FPU section API (6.12's <linux/fpu.h> forbids it).
 */
#ifndef COLLX_FPU_UNIT
#include <asm/fpu/api.h>

/* Kernel float/SIMD code runs only between these two calls. */
static inline bool collx_fpu_usable(void)
{
	return irq_fpu_usable();
}

static inline void collx_fpu_begin(void)
{
	kernel_fpu_begin();
}

static inline void collx_fpu_end(void)
{
	kernel_fpu_end();
}

/*
 * AVX-512 needs the OS to save the opmask and ZMM state too; the crypto
 * code asks the same way.  UML runs on a host kernel that did.
 */
#ifdef CONFIG_UML
#define collx_os_has_zmm()	true
#else
#define collx_os_has_zmm()						\
	cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |	\
			  XFEATURE_MASK_AVX512, NULL)
#endif

static inline bool collx_cpu_has_avx512(void)
{
	return boot_cpu_has(X86_FEATURE_AVX512F) &&
	       boot_cpu_has(X86_FEATURE_AVX512BW) &&
	       boot_cpu_has(X86_FEATURE_AVX512DQ) &&
	       boot_cpu_has(X86_FEATURE_AVX512VL) && collx_os_has_zmm();
}

static inline bool collx_cpu_has_avx512_bf16(void)
{
	return boot_cpu_has(X86_FEATURE_AVX512_BF16);
}
#endif /* !COLLX_FPU_UNIT */

static inline bool collx_cpu_has_avx2(void)
{
	return boot_cpu_has(X86_FEATURE_AVX) &&
	       boot_cpu_has(X86_FEATURE_AVX2);
}

static inline bool collx_cpu_has_f16c(void)
{
	return boot_cpu_has(X86_FEATURE_F16C);
}

#elif defined(CONFIG_ARM64)
#include <asm/cpufeature.h>
#define COLLX_HAVE_NEON		1

#ifndef CONFIG_KERNEL_MODE_NEON
#error "collx core: arm64 kernels need CONFIG_KERNEL_MODE_NEON for float code"
#endif

#ifndef COLLX_FPU_UNIT
#include <asm/neon.h>
#include <asm/simd.h>
#include <asm/sysreg.h>

/*
 * All float code, scalar included, uses the FP/SIMD registers, which the
 * kernel lends only between kernel_neon_begin() and kernel_neon_end().
 * The FPCR they come with is whatever task used them last (one built
 * with -ffast-math runs with flush-to-zero): the saved user state has its
 * own copy, so set the IEEE defaults (round to nearest even, no FZ, no
 * default NaN, no traps) for the section.
 */
static inline bool collx_fpu_usable(void)
{
	return may_use_simd();
}

static inline void collx_fpu_begin(void)
{
	kernel_neon_begin();
	write_sysreg(0, fpcr);
}

static inline void collx_fpu_end(void)
{
	kernel_neon_end();
}
#endif /* !COLLX_FPU_UNIT */

static inline bool collx_cpu_has_neon(void)
{
	return system_supports_fpsimd();
}

#else
/*
 * Other architectures: the scalar kernels still do float arithmetic, so a
 * port must provide an FPU section here.
 */
#error "collx core: no kernel FPU section for this architecture"
#endif

#else /* !__KERNEL__ */

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <errno.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define BIT(n)		(1UL << (n))
#define fallthrough	__attribute__((__fallthrough__))

#if defined(__x86_64__)
#define COLLX_HAVE_X86_SIMD	1

static inline bool collx_cpu_has_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}

static inline bool collx_cpu_has_f16c(void)
{
	return __builtin_cpu_supports("f16c");
}

/* __builtin_cpu_supports() also asks XGETBV whether the OS saves ZMM */
static inline bool collx_cpu_has_avx512(void)
{
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
}

static inline bool collx_cpu_has_avx512_bf16(void)
{
	return __builtin_cpu_supports("avx512bf16");
}
#elif defined(__aarch64__)
#define COLLX_HAVE_NEON		1

/* Advanced SIMD is part of the AArch64 base architecture. */
static inline bool collx_cpu_has_neon(void)
{
	return true;
}
#endif

/* User space owns its FPU: sections are empty. */
static inline bool collx_fpu_usable(void)
{
	return true;
}

static inline void collx_fpu_begin(void)
{
}

static inline void collx_fpu_end(void)
{
}

#endif /* __KERNEL__ */

/*
 * The uapi header sits at include/uapi/linux/collx.h in the repository;
 * a relative include finds it from the module build, the in-tree KUnit
 * build (lib/collx is a symlink to kmod/core) and the host build alike.
 */
#include "../../include/uapi/linux/collx.h"

#endif /* _COLLX_CORE_SHIM_H */
