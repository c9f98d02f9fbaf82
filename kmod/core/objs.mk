# SPDX-License-Identifier: GPL-2.0
#
# collx core objects: the one list of the shared C files and their flags.
# Included by kmod/Kbuild (objects prefixed with core/) and by
# kmod/core/Makefile for the in-tree KUnit build (COLLX_CORE_DIR empty).
#
# Kbuild keys per-object flags by the object's path relative to the
# directory being built ($(target-stem) in scripts/Makefile.lib, the same
# in 6.1 and 6.12), hence CFLAGS_$(COLLX_CORE_DIR)foo.o.

COLLX_CORE_DIR ?= core/

COLLX_CORE_OBJS := $(addprefix $(COLLX_CORE_DIR), \
	reduce.o reduce_scalar.o reduce_avx2.o sched.o coll.o uapi_check.o)

# Float and SIMD code.  The kernel builds with -mno-sse -mno-sse2 -mno-avx
# -mno-80387; these files put SSE back (AVX2 comes per function from
# target attributes) and only run between kernel_fpu_begin/end.  6.12 has
# CC_FLAGS_FPU; 6.1 does not, so use what its amdgpu/dml Makefile uses.
ifneq ($(strip $(CC_FLAGS_FPU)),)
COLLX_FPU_CFLAGS := $(CC_FLAGS_FPU)
else
COLLX_FPU_CFLAGS := -mhard-float -msse -msse2
endif
# No contraction of a*b+c into FMA: scalar and SIMD must stay bit-identical.
COLLX_FPU_CFLAGS += -ffp-contract=off -DCOLLX_FPU_UNIT

COLLX_CORE_FPU_OBJS := $(addprefix $(COLLX_CORE_DIR), \
	reduce_scalar.o reduce_avx2.o)

$(foreach o,$(COLLX_CORE_FPU_OBJS),$(eval CFLAGS_$(o) += $(COLLX_FPU_CFLAGS)))
