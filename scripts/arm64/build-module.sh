#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build collx.ko for Debian's arm64 kernels on this amd64 machine:
#   scripts/arm64/build-module.sh [-s SRC] [-o OUT] [KVER...]
# SRC is a tree holding Kbuild, kmod/ and include/ (default: this
# repository; the lead's main branch copy works the same way), KVER an
# arm64 kernel of scripts/arm64/env.sh (default: all of them).  Each build
# starts from a fresh copy of SRC in OUT/<KVER> (default
# $ARM64_CACHE/module) and runs with W=1 and -Werror against the arm64
# headers package, whose Module.symvers and config give the vermagic and
# symbol versions of Debian's arm64 image.  Prints the .ko paths.
set -euo pipefail
. "$(dirname "$0")/env.sh"

src=$COLLX_ROOT
out=$ARM64_CACHE/module
while getopts "s:o:" o; do
	case $o in
	s) src=$(cd "$OPTARG" && pwd) ;;
	o) out=$OPTARG ;;
	*) echo "usage: $0 [-s SRC] [-o OUT] [KVER...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
# shellcheck disable=SC2046
[ $# -gt 0 ] || set -- $(arm64_kvers)
command -v "${ARM64_CROSS}gcc-12" >/dev/null ||
	{ arm64_log "no ${ARM64_CROSS}gcc-12 (apt-get install gcc-aarch64-linux-gnu)"; exit 1; }
"$(dirname "$0")/fetch.sh"

for kver in "$@"; do
	kdir=$ARM64_CACHE/kernel/$kver/usr/src/linux-headers-$kver
	dir=$out/$kver
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r "$src/Kbuild" "$src/kmod" "$src/include" "$dir/"
	arm64_log "building collx.ko for $kver from $src"
	start=$(date +%s)
	if ! nice -n 10 make -C "$kdir" M="$dir" ARCH=arm64 \
		CROSS_COMPILE="$ARM64_CROSS" W=1 KCFLAGS=-Werror \
		-j"$(nproc)" modules >"$dir/build.log" 2>&1; then
		grep -E 'error|warning' "$dir/build.log" | head -n 40 >&2 || tail -n 40 "$dir/build.log" >&2
		arm64_log "$kver: build failed (log: $dir/build.log)"
		exit 1
	fi
	if grep -E '(warning|error):' "$dir/build.log" | grep -v 'Skipping BTF' >&2; then
		arm64_log "$kver: warnings (log: $dir/build.log)"
		exit 1
	fi
	arm64_log "$kver: $(modinfo -F vermagic "$dir/kmod/collx.ko") in $(($(date +%s) - start)) s"
	echo "$dir/kmod/collx.ko"
done
