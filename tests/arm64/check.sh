#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 stage of make check, as flat TAP lines ("ok - ..." or
# "not ok - ..."), for tests/check.sh to count:
#   1. collx.ko cross-built with W=1 -Werror for each Debian arm64 kernel
#      (scripts/arm64/build-module.sh), vermagic as Debian's image has it;
#   2. the host unit tests built for arm64 and run under qemu-user;
#   3. on each kernel, 2 qemu-system-aarch64 nodes (TCG) bring up rxe and
#      run collx-bench's allreduce of every dtype x op at 1, 7, 1021 and
#      65537 elements, every result checked exactly.
# Environment: COLLX_ARM64_SRC, the tree the module and the tools are
# built from (default this repository); COLLX_ARM64_KERNELS, a subset of
# the kernels; COLLX_ARM64_LAB=0, no lab (step 3); COLLX_ARM64_UNIT=0, no
# unit tests (step 2: make check runs them first, the lab later); COLLX_LAB_LOCK, the
# lock the QEMU runs take (default /tmp/collx-lab.lock; empty for none,
# when the caller holds it).
# Exit status: 0 when every line is ok.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../scripts/arm64/env.sh"
SCRIPTS=$COLLX_ROOT/scripts/arm64
src=${COLLX_ARM64_SRC:-$COLLX_ROOT}
lock=${COLLX_LAB_LOCK-/tmp/collx-lab.lock}
fail=0

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; fail=1; }
# shellcheck disable=SC2015
locked() { if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }

t0=$(date +%s)
if ! "$SCRIPTS/fetch.sh" >&2; then
	notok "arm64: fetch Debian's arm64 kernels and userland"
	exit 1
fi
ok "arm64: Debian arm64 packages cached ($(($(date +%s) - t0)) s)"
kvers=${COLLX_ARM64_KERNELS:-$(arm64_kvers)}

declare -A ko
for k in $kvers; do
	t=$(date +%s)
	if m=$("$SCRIPTS/build-module.sh" -s "$src" "$k"); then
		ko[$k]=$m
		ok "arm64: collx.ko for $k, W=1 clean ($(modinfo -F vermagic "$m" | cut -d' ' -f1), $(($(date +%s) - t)) s)"
	else
		notok "arm64: collx.ko for $k"
	fi
done

t=$(date +%s)
if [ "${COLLX_ARM64_UNIT:-1}" = 0 ]; then
	:
elif "$HERE/unit.sh" >"$ARM64_CACHE/unit.tap" 2>"$ARM64_CACHE/unit.err"; then
	ok "arm64: host unit tests under qemu-user ($(grep -c '^ok' "$ARM64_CACHE/unit.tap") passed, $(($(date +%s) - t)) s)"
else
	grep '^not ok' "$ARM64_CACHE/unit.tap" | head -n 20 | sed 's/^/# /'
	tail -n 5 "$ARM64_CACHE/unit.err" | sed 's/^/# /'
	notok "arm64: host unit tests under qemu-user ($(grep -c '^not ok' "$ARM64_CACHE/unit.tap") failed)"
fi

t=$(date +%s)
if user=$("$SCRIPTS/build-user.sh" -s "$src"); then
	ok "arm64: libcollx and collx-bench cross-built ($(($(date +%s) - t)) s)"
else
	notok "arm64: libcollx and collx-bench cross-built"
	exit 1
fi

# COLLX_ARM64_LAB=0: the builds and unit tests only; COLLX_ARM64_LAB_KERNELS:
# the kernels the lab boots (default: every one built).
[ "${COLLX_ARM64_LAB:-1}" != 0 ] || exit $fail
for k in ${COLLX_ARM64_LAB_KERNELS:-$kvers}; do
	[ -n "${ko[$k]:-}" ] || { notok "arm64 lab $k: no module"; continue; }
	root=$ARM64_CACHE/root-$k.cpio.gz
	logs=$ARM64_CACHE/lab-$k
	if ! "$SCRIPTS/mkroot.sh" "$k" "${ko[$k]}" "$user" "$root" >&2; then
		notok "arm64 lab $k: initramfs"
		continue
	fi
	t=$(date +%s)
	if locked "$HERE/lab.sh" -k "$k" -r "$root" -n 2 -t 600 -l "$logs" -- \
		/collx/collx-bench -t allreduce -d all -o all \
		--counts 1,7,1021,65537 -n 1 -w 0 -c 1 >&2; then
		rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +[a-z0-9]+ +(sum|prod|max|min|avg) ' "$logs/node0.log")
		boot=$(sed -n 's/.*peers reachable, up \([0-9.]*\) s/\1/p' "$logs/node0.log")
		ok "arm64 lab $k: 2 nodes, allreduce of every dtype x op exact ($rows sizes, rxe up at ${boot:-?} s, $(($(date +%s) - t)) s with the lock)"
	else
		notok "arm64 lab $k: 2-node allreduce (logs: $logs)"
	fi
done
exit $fail
