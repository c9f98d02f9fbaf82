#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build libcollx and its tools (collx-bench, collx-info) for arm64:
#   scripts/arm64/build-user.sh [-s SRC] [-o OUT]
# SRC holds user/ and include/ (default: this repository), OUT (default
# $ARM64_CACHE/user) receives a fresh copy built with the cross compiler
# against the arm64 libibverbs of the cache's sysroot.  The tools link
# libcollx statically and libibverbs dynamically (its rxe provider is a
# plugin).  Prints OUT/user.
set -euo pipefail
. "$(dirname "$0")/env.sh"

src=$COLLX_ROOT
out=$ARM64_CACHE/user
while getopts "s:o:" o; do
	case $o in
	s) src=$(cd "$OPTARG" && pwd) ;;
	o) out=$OPTARG ;;
	*) echo "usage: $0 [-s SRC] [-o OUT]" >&2; exit 2 ;;
	esac
done
"$(dirname "$0")/fetch.sh"
sys=$ARM64_CACHE/sysroot
rm -rf "$out"
mkdir -p "$out"
cp -r "$src/user" "$src/include" "$out/"
# Flags in CC reach both the compile and the link lines of user/Makefile.
cc="${ARM64_CROSS}gcc -isystem $sys/usr/include -L$sys/usr/lib/aarch64-linux-gnu"
cc+=" -Wl,-rpath-link,$sys/usr/lib/aarch64-linux-gnu:$sys/lib/aarch64-linux-gnu"
arm64_log "building libcollx and tools from $src/user"
# pkg-config (json-c) answers for the sysroot, not the host.
export PKG_CONFIG_SYSROOT_DIR=$sys
export PKG_CONFIG_LIBDIR=$sys/usr/lib/aarch64-linux-gnu/pkgconfig:$sys/usr/share/pkgconfig
if ! nice -n 10 make -C "$out/user" CC="$cc" AR="${ARM64_CROSS}ar" \
	-j"$(nproc)" all >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	arm64_log "user build failed (log: $out/build.log)"
	exit 1
fi
file "$out/user/tools/collx-bench" | grep -q 'ARM aarch64' ||
	{ arm64_log "collx-bench is not an arm64 binary"; exit 1; }
echo "$out/user"
