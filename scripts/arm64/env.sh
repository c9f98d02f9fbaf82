# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: GPL-2.0
#
# What the arm64 scripts share: where the cache lives, which Debian
# kernels, and which arm64 packages.  Sourced, not run.
#
# COLLX_ARM64_CACHE (default <repo>/.build/arm64) holds the downloaded
# .debs and their extracted trees; it survives between runs, so only a
# fresh machine pays for the downloads.

COLLX_ROOT=${COLLX_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
ARM64_CACHE=${COLLX_ARM64_CACHE:-$COLLX_ROOT/.build/arm64}
ARM64_CROSS=${ARM64_CROSS:-aarch64-linux-gnu-}

# The arm64 builds of the same Debian kernels the x86 lab boots; their
# ABI names follow the amd64 ones installed (linux-headers-*-amd64).
arm64_kvers() {
	local k
	for k in /usr/src/linux-headers-*-amd64; do
		[ -d "$k" ] || continue
		k=${k#/usr/src/linux-headers-}
		echo "${k%-amd64}-arm64"
	done | sort -V
}

# The Debian image for a kernel: 6.1's signed one is what linux-image-arm64
# installs; 6.12 comes as -unsigned only.
arm64_image_pkg() {
	case $1 in
	6.1.*) echo "linux-image-$1" ;;
	*) echo "linux-image-$1-unsigned" ;;
	esac
}

# The userland of a node: busybox, the rdma tool and libibverbs with its
# rxe provider, and the C library they run on.
ARM64_USER_DEBS="busybox-static libc6 libibverbs1 ibverbs-providers
libnl-3-200 libnl-route-3-200 iproute2 libmnl0 libbsd0 libmd0 libcap2
libjson-c5"
# Linking libcollx and the tools for arm64 also needs these headers.
ARM64_DEV_DEBS="libibverbs-dev libjson-c-dev"

arm64_log() { printf 'arm64: %s\n' "$*" >&2; }
