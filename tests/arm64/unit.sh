#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host unit tests of kmod/core (tests/unit, the same sources and
# Makefile) cross-built for arm64 and run under qemu-user: the NEON
# kernels, and the scalar ones as an arm64 compiler vectorises them,
# against the same references as on x86; the schedules' full simulations
# up to 16 ranks only (COLLX_SIM_MAX_RANKS: 17..64 ranks took 7 of the
# run's 8 minutes, and run on the host).  UBSan only: ASan's shadow
# mappings do not survive qemu-user.  Prints the tests' flat TAP; exit
# status is theirs.
set -euo pipefail
. "$(dirname "$0")/../../scripts/arm64/env.sh"

out=$ARM64_CACHE/unit
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
[ -n "$qemu" ] || { arm64_log "no qemu-aarch64 (apt-get install qemu-user-static)"; exit 1; }
command -v "${ARM64_CROSS}gcc" >/dev/null ||
	{ arm64_log "no ${ARM64_CROSS}gcc (apt-get install gcc-aarch64-linux-gnu)"; exit 1; }
nice -n 10 make -s -C "$COLLX_ROOT/tests/unit" OUT="$out" CC="${ARM64_CROSS}gcc" \
	SAN="-fsanitize=undefined -fno-sanitize-recover=all" all >&2
file "$out/collx_unit" | grep -q 'ARM aarch64' || { arm64_log "not an arm64 build"; exit 1; }
COLLX_SIM_MAX_RANKS=16 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$qemu" -L "/usr/${ARM64_CROSS%-}" "$out/collx_unit"
