# SPDX-License-Identifier: GPL-2.0
#
# collx: build the module, the user-space library and tools, and the BPF
# programs; run the tests.  `make help` lists the targets.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build

# No headers for the running kernel (a build host, a container): use the
# newest installed ones, and say so.
ifeq ($(wildcard $(KDIR)/Makefile),)
  _newest := $(lastword $(sort $(patsubst /lib/modules/%/build/Makefile,%,\
		$(wildcard /lib/modules/*/build/Makefile))))
  ifneq ($(_newest),)
    $(info collx: no headers for $(KVER); building against $(_newest))
    KVER := $(_newest)
    KDIR := /lib/modules/$(KVER)/build
  endif
endif

# The module is built in a per-kernel copy of the sources, so builds for
# several kernels live side by side: build/<KVER>/kmod/collx.ko
# (COLLX_BUILD=DIR: DIR/<KVER>/kmod/collx.ko, as make check's lint uses).
BUILD := $(or $(COLLX_BUILD),$(CURDIR)/build)
MODDIR := $(BUILD)/$(KVER)
MODULE := $(MODDIR)/kmod/collx.ko
KBUILD_FLAGS := W=1 KCFLAGS=-Werror

LAB_KERNEL ?= 6.12
LAB_NODES ?= 4

.PHONY: all module modules-all user bpf lint check check-build check-lint check-unit \
	check-kunit check-lab check-debug lab demo deps bench-reduce bench bench-ckpt deb modules-arm64 \
	check-arm64 clean help

all: module user bpf

module:
	@test -f $(KDIR)/Makefile || { echo "collx: no kernel headers in $(KDIR);" \
		"run scripts/install-deps.sh or set KVER/KDIR" >&2; exit 1; }
	@mkdir -p $(MODDIR)
	@cp -ru --preserve=timestamps Kbuild kmod include $(MODDIR)/
	$(MAKE) -C $(KDIR) M=$(MODDIR) $(KBUILD_FLAGS) modules
	@echo "collx: built $(MODULE)"

# The module for every installed kernel that has headers.
modules-all:
	@for k in $(patsubst /lib/modules/%/build/Makefile,%,\
			$(wildcard /lib/modules/*/build/Makefile)); do \
		$(MAKE) --no-print-directory module KVER=$$k KDIR=/lib/modules/$$k/build || exit 1; \
	done

user:
	$(MAKE) -C user

bpf:
	@if [ -f bpf/Makefile ]; then $(MAKE) -C bpf; fi

# checkpatch (options in .checkpatch.conf) and sparse over the module.
lint: module
	tests/lint.sh $(KDIR) $(MODDIR)

deps:
	scripts/install-deps.sh

check: deps
	tests/check.sh all

check-build check-lint check-unit check-lab: deps
	tests/check.sh $(patsubst check-%,%,$@)

# KUnit under UML, even when its ledger (tests/kunit/passed) has kmod/core.
check-kunit: deps
	COLLX_KUNIT_FORCE=1 tests/check.sh kunit

# One lab case (a number, a name or a glob) on a fresh boot:
# make lab CASE=36 [KERNEL=6.1|6.12|debug] [NODES=4].
KERNEL ?= 6.12
NODES ?= 4
lab: deps
	@test -n "$(CASE)" || { echo "make lab CASE=36 [KERNEL=6.12] [NODES=4]" >&2; exit 2; }
	tests/lab/run-one.sh '$(CASE)' $(KERNEL) $(NODES)

# The lab's debug kernel (KASAN, lockdep, kmemleak, ...), built and cached
# in .build/debug-kernel, and a 4-node boot of it running the collective,
# fault, fuzz, load and dma-buf cases (tests/check.sh stage_debug).
check-debug: deps
	tests/check.sh debug

demo:
	scripts/install-deps.sh --demo
	tests/lab/demo.sh -k $(LAB_KERNEL) -n $(LAB_NODES)

bench-reduce:
	scripts/install-deps.sh --bench
	$(MAKE) -C tests/bench bench-reduce

# The Debian packages (collx-dkms, libcollx1, libcollx-dev, collx-tools)
# in .build/deb; Documentation/install.md.
deb:
	scripts/deb/build.sh

# arm64: the module cross-built against Debian's arm64 kernels, the unit
# tests under qemu-user, and a 2-node aarch64 lab (tests/arm64/check.sh).
modules-arm64:
	scripts/arm64/build-module.sh

check-arm64: deps
	tests/arm64/check.sh

# collx against the link and Gloo on the lab (Documentation/bench.md).
bench:
	scripts/install-deps.sh --bench
	tests/bench/bench.sh

bench-ckpt: deps
	tests/bench/bench-ckpt.sh -k $(LAB_KERNEL)
	tests/bench/bench-ckpt-ddp.sh -k $(LAB_KERNEL)

# install, install-module, install-user, uninstall (GNU directory
# variables; what the packages install).
include scripts/install/install.mk
install-module: module
install-user: user

clean:
	rm -rf $(BUILD) .build
	$(MAKE) -C user clean
	@if [ -f bpf/Makefile ]; then $(MAKE) -C bpf clean; fi

help:
	@echo "make [KVER=<release>]   module for KVER (default: running or newest), library, tools, BPF"
	@echo "make modules-all        the module for every installed kernel's headers"
	@echo "make lint               checkpatch --strict and sparse"
	@echo "make demo               4-node soft-RoCE lab (LAB_KERNEL=6.1|6.12, LAB_NODES=N)"
	@echo "make check              every test: build, lint, unit, kunit, arm64, lab on 6.1 and 6.12, arm64 lab"
	@echo "make check-{build,lint,unit,kunit,lab}  one stage"
	@echo "make lab CASE=36        one lab case (number, name or glob; KERNEL=6.1|6.12|debug, NODES=4)"
	@echo "make check-debug        the debug kernel (KASAN, lockdep, kmemleak): built, then a 4-node lab of it"
	@echo "make bench-reduce       reduction kernels vs STREAM and MPI_Reduce_local"
	@echo "make bench              collx vs ib_write_bw and Gloo on the lab"
	@echo "make bench-ckpt         checkpoint pause and restore: archive folder, local file, peers' memory; DDP's step while one replicates"
	@echo "make deb                the Debian packages in .build/deb"
	@echo "make install            module for KVER, library, tools, man pages, system files"
	@echo "make modules-arm64      the module cross-built for Debian's arm64 kernels"
	@echo "make check-arm64        arm64: cross builds, unit tests under qemu-user, a 2-node lab"
