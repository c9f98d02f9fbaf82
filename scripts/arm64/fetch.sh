#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Download Debian's arm64 kernel headers and images and the arm64 userland
# packages of the lab, and extract them into the cache:
#   $ARM64_CACHE/debs/*.deb            as apt-get download got them
#   $ARM64_CACHE/kernel/<KVER>/        headers and image trees of one kernel
#   $ARM64_CACHE/sysroot/              the userland packages, one tree
# Idempotent: a stamp per tree.  Enables the arm64 architecture in dpkg and
# refreshes apt's lists once if they have no arm64 packages yet (nothing
# arm64 is installed on the host).  The headers are the arm64 package's own
# tree; its scripts/ link resolves to the host's amd64 linux-kbuild, which
# is how Debian cross-builds modules.
set -euo pipefail
. "$(dirname "$0")/env.sh"

mkdir -p "$ARM64_CACHE/debs" "$ARM64_CACHE/kernel"
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	arm64_log "dpkg --add-architecture arm64"
	dpkg --add-architecture arm64
fi
if ! apt-cache show busybox-static:arm64 >/dev/null 2>&1; then
	arm64_log "apt-get update (arm64 lists)"
	apt-get update -qq
fi

fetch() {	# fetch PKG...: download what is not in the cache yet
	local p need=()
	for p in "$@"; do
		ls "$ARM64_CACHE/debs/${p}_"*_arm64.deb >/dev/null 2>&1 || need+=("$p:arm64")
	done
	[ ${#need[@]} -eq 0 ] && return 0
	arm64_log "apt-get download ${need[*]}"
	(cd "$ARM64_CACHE/debs" && apt-get download -qq "${need[@]}")
}

extract() {	# extract DIR PKG...
	local dir=$1 p
	shift
	[ -e "$dir/.extracted" ] && return 0
	rm -rf "$dir"
	mkdir -p "$dir"
	for p in "$@"; do
		dpkg-deb -x "$(ls "$ARM64_CACHE/debs/${p}_"*_arm64.deb | tail -n1)" "$dir"
	done
	touch "$dir/.extracted"
}

for kver in $(arm64_kvers); do
	img=$(arm64_image_pkg "$kver")
	fetch "linux-headers-$kver" "$img"
	extract "$ARM64_CACHE/kernel/$kver" "linux-headers-$kver" "$img"
	# The image's postinst runs depmod; do it for the extracted tree.
	[ -f "$ARM64_CACHE/kernel/$kver/lib/modules/$kver/modules.dep" ] ||
		depmod -b "$ARM64_CACHE/kernel/$kver" "$kver"
	# The headers' common part is arch-independent and installed on the
	# host with the amd64 headers; scripts/ and tools/ link to
	# ../../lib/linux-kbuild-<ver>, which is the host's own (amd64).
	common=/usr/src/linux-headers-${kver%-arm64}-common
	[ -d "$common" ] || { arm64_log "missing $common (linux-headers-${kver%-arm64}-common)"; exit 1; }
	kb=$(readlink "$ARM64_CACHE/kernel/$kver/usr/src/linux-headers-$kver/scripts")
	kb=${kb#../../lib/}
	kb=${kb%/scripts}
	[ -d "/usr/lib/$kb" ] || { arm64_log "missing /usr/lib/$kb (package $kb)"; exit 1; }
	ln -sfn "/usr/lib/$kb" "$ARM64_CACHE/kernel/$kver/usr/lib/$kb"
done
# shellcheck disable=SC2086
fetch $ARM64_USER_DEBS $ARM64_DEV_DEBS
# shellcheck disable=SC2086
extract "$ARM64_CACHE/sysroot" $ARM64_USER_DEBS $ARM64_DEV_DEBS
arm64_log "cache ready: $ARM64_CACHE ($(du -sh "$ARM64_CACHE" | cut -f1))"
