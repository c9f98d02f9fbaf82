#!/bin/bash
# Install, idempotently, everything collx's build, lab and tests need from
# Debian's archive. Used by `make demo`, `make check` and .ci/run.
#   scripts/install-deps.sh [--demo|--bench]
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

log() { printf 'install-deps: %s\n' "$*" >&2; }

stamp_ok() {
	# Every package in "$@" is installed?
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || return 1
	done
}

BASE_PKGS=(
	build-essential bc flex bison libssl-dev libelf-dev kmod cpio xz-utils
	qemu-system-x86 busybox-static iproute2 bridge-utils
	rdma-core ibverbs-utils libibverbs-dev librdmacm-dev rdmacm-utils
	perftest libbpf-dev bpftool clang llvm dkms sparse
	linux-image-amd64 linux-headers-amd64
	linux-source-6.1 linux-source-6.12
	python3
	# libcollx's tools, collx-netmon's exporter, collx-ckptd
	libjson-c-dev libmicrohttpd-dev libmnl-dev zlib1g-dev liburing-dev
	libxxhash-dev prometheus iputils-ping
	# the torch.distributed backend and its tests (gloo beside it)
	python3-torch libtorch-dev libgloo-dev pybind11-dev
	# make deb, man pages; the pictures (tests/plots)
	debhelper dh-dkms pandoc python3-matplotlib
	# the arm64 stage: cross compiler, qemu-user, the aarch64 lab
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static qemu-system-arm file
)

if [ "${COLLX_SKIP_APT_UPDATE:-0}" != 1 ] && ! stamp_ok "${BASE_PKGS[@]}"; then
	log "apt-get update"
	apt-get update -qq
fi

# The newest 6.12 "-unsigned" image and its headers, resolved, not hard-coded.
k612_image=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.]+\+deb12-amd64-unsigned$' 2>/dev/null |
	awk '{print $1}' | sort -V | tail -n1)
if [ -z "$k612_image" ]; then
	apt-get update -qq
	k612_image=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.]+\+deb12-amd64-unsigned$' |
		awk '{print $1}' | sort -V | tail -n1)
fi
[ -n "$k612_image" ] || { log "no linux-image-6.12.*-amd64-unsigned in the archive"; exit 1; }
k612_headers=${k612_image/linux-image-/linux-headers-}
k612_headers=${k612_headers%-unsigned}

PKGS=("${BASE_PKGS[@]}" "$k612_image" "$k612_headers")
# Peers that only benchmarks compare against: --demo (Gloo, for make
# demo's comparison), --bench (also Open MPI, for make bench-reduce).
case ${1:-} in
--bench) PKGS+=(libopenmpi-dev openmpi-bin gnuplot-nox) ;;
--demo) ;;
esac
if stamp_ok "${PKGS[@]}"; then
	log "all packages present"
else
	log "installing: ${PKGS[*]}"
	# --force-unsafe-io: dpkg unpacks without an fsync per file (about
	# 60,000 files here: two kernel sources, torch, QEMU); a machine that
	# crashes mid-install installs again, as it would anyway.
	apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
		"${PKGS[@]}" >/dev/null
fi
