# SPDX-License-Identifier: GPL-2.0
#
# gloo-bench: Gloo's collectives over ibverbs (allreduce ring and
# halving-doubling, broadcast, allgather, reduce-scatter; reduce and
# alltoall where the transport has them), timed as collx-bench times
# collx's, for
# tests/bench/bench.sh.  The CPU columns come from the same code as
# collx-bench's (user/common/cpustat.c).  Needs libgloo-dev
# (scripts/install-deps.sh --bench).  Included by tests/bench/Makefile;
# also usable alone: make -f gloo.mk gloo-bench.

# Included anywhere, it leaves the including Makefile's default goal.
GLOO_SAVED_GOAL := $(.DEFAULT_GOAL)
GLOO_INCLUDED := $(filter-out 1,$(words $(MAKEFILE_LIST)))
GLOO_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
GLOO_OUT ?= $(GLOO_ROOT)/.build/bench
GLOO_COMMON := $(GLOO_ROOT)/user/common

.PHONY: gloo-bench
gloo-bench: $(GLOO_OUT)/gloo_bench

$(GLOO_OUT)/gloo_cpustat.o: $(GLOO_COMMON)/cpustat.c $(GLOO_COMMON)/cpustat.h
	@mkdir -p $(GLOO_OUT)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -c -o $@ $<

$(GLOO_OUT)/gloo_bench: $(GLOO_ROOT)/tests/bench/gloo_bench.cc $(GLOO_OUT)/gloo_cpustat.o \
		$(GLOO_COMMON)/cpustat.h
	@mkdir -p $(GLOO_OUT)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -I$(GLOO_COMMON) -o $@ $< \
		$(GLOO_OUT)/gloo_cpustat.o -lgloo -libverbs

ifneq ($(GLOO_INCLUDED),)
.DEFAULT_GOAL := $(GLOO_SAVED_GOAL)
endif
