# SPDX-License-Identifier: GPL-2.0
#
# collx core objects: the one list of the shared C files and their flags.
# Included by kmod/Kbuild (objects prefixed with core/) and by
# kmod/core/Makefile for the in-tree KUnit build (COLLX_CORE_DIR empty);
# the host builds (tests/unit, tests/bench) take the list, and the bench
# COLLX_CORE_VEC_CFLAGS too.
#
# Kbuild keys per-object flags by the object's path relative to the
# directory being built ($(target-stem) in scripts/Makefile.lib, the same
# in 6.1 and 6.12), hence CFLAGS_$(COLLX_CORE_DIR)foo.o.

COLLX_CORE_DIR ?= core/

# The SIMD files compile to nothing on the other architecture.
COLLX_CORE_OBJS := $(addprefix $(COLLX_CORE_DIR), \
	reduce.o reduce_scalar.o reduce_avx2.o reduce_avx512.o reduce_neon.o \
	sched.o coll.o coll_ring.o coll_tree.o coll_rd.o coll_pairwise.o \
	uapi_check.o)

# Float and SIMD code, only run between collx_fpu_begin/end.
COLLX_CORE_FPU_OBJS := $(addprefix $(COLLX_CORE_DIR), \
	reduce_scalar.o reduce_avx2.o reduce_avx512.o reduce_neon.o)

# The vectoriser with its full cost model (-O2 in GCC 12 only takes loops
# whose trip count needs no epilogue), so reduce_elem.h's loops become
# SIMD code for the scalar fallback, the tails and fp8; and float code
# taken as trap-free (FP exceptions are masked in kernel and user space
# alike), without which GCC keeps the narrow-format conversions' selects
# as branches and vectorises nothing.  Neither changes a result bit.
COLLX_CORE_VEC_CFLAGS := -ftree-vectorize -fvect-cost-model=dynamic \
	-fno-trapping-math

ifeq ($(SRCARCH),arm64)
# arm64 builds the kernel with -mgeneral-regs-only; these files take the
# FP/SIMD registers back (as lib/raid6's NEON files do).  6.12 names the
# flag CC_FLAGS_NO_FPU; 6.1 has no name for it.
COLLX_FPU_CFLAGS := $(CC_FLAGS_FPU)
COLLX_FPU_REMOVE := -mgeneral-regs-only $(CC_FLAGS_NO_FPU)
else
# x86 (and UML) build with -mno-sse -mno-sse2 -mno-avx -mno-80387; these
# files put SSE back (AVX2 and AVX-512 come per function from target
# attributes).  6.12 has CC_FLAGS_FPU; 6.1 does not, so use what its
# amdgpu/dml Makefile uses.
ifneq ($(strip $(CC_FLAGS_FPU)),)
COLLX_FPU_CFLAGS := $(CC_FLAGS_FPU)
else
COLLX_FPU_CFLAGS := -mhard-float -msse -msse2
endif
COLLX_FPU_REMOVE :=
endif
# No contraction of a*b+c into FMA: scalar and SIMD must stay bit-identical.
COLLX_FPU_CFLAGS += -ffp-contract=off -DCOLLX_FPU_UNIT $(COLLX_CORE_VEC_CFLAGS)

$(foreach o,$(COLLX_CORE_FPU_OBJS),$(eval CFLAGS_$(o) += $(COLLX_FPU_CFLAGS)))
$(foreach o,$(COLLX_CORE_FPU_OBJS),$(eval CFLAGS_REMOVE_$(o) += $(COLLX_FPU_REMOVE)))
