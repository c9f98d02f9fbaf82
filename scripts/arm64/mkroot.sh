#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The initramfs of an arm64 lab node, the whole root in RAM:
#   scripts/arm64/mkroot.sh KVER COLLX_KO USERDIR OUT
# Holds the arm64 userland of the cache's sysroot (busybox, the C library,
# libibverbs with its rxe provider, json-c, the rdma tool; no headers or
# static libraries), the kernel modules virtio-net, rxe and collx.ko need,
# in dependency order (decompressed: busybox insmod reads plain .ko),
# collx.ko itself, collx-bench and collx-info from USERDIR
# (scripts/arm64/build-user.sh), and tests/arm64/node-init as /init.
set -euo pipefail
. "$(dirname "$0")/env.sh"

[ $# -eq 4 ] || { echo "usage: $0 KVER COLLX_KO USERDIR OUT" >&2; exit 2; }
kver=$1 ko=$2 user=$3 out=$4
kroot=$ARM64_CACHE/kernel/$kver
sys=$ARM64_CACHE/sysroot
[ -f "$kroot/lib/modules/$kver/modules.dep" ] || { arm64_log "no modules for $kver (scripts/arm64/fetch.sh)"; exit 1; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -a "$sys/." "$dir/"
rm -rf "${dir:?}/usr/include" "${dir:?}/usr/share" "${dir:?}/.extracted"
find "$dir" -name '*.a' -delete
mkdir -p "$dir"/{proc,sys,dev,tmp,run,sbin,usr/sbin,modules,collx}
for a in $("$dir/bin/busybox" --list 2>/dev/null || qemu-aarch64-static "$dir/bin/busybox" --list); do
	[ -e "$dir/bin/$a" ] || ln -s busybox "$dir/bin/$a"
done
cp "$COLLX_ROOT/tests/arm64/node-init" "$dir/init"
chmod 755 "$dir/init"

# collx.ko's own dependencies, virtio-net on PCI, and soft-RoCE; rxe asks
# the crypto API for "crc32" when a link is added, through request_module
# (which needs a modprobe the node does not have), so load it up front.
deps=$(modinfo -F depends "$ko" | tr , ' ')
: >"$dir/modules/order"
# shellcheck disable=SC2086
modprobe -d "$kroot" -S "$kver" --show-depends -a virtio_pci virtio_net \
	crc32_generic rdma_rxe $deps |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
	while read -r f; do
		m=$(basename "$f")
		case $m in
		*.xz) xz -dc "$f" >"$dir/modules/${m%.xz}"; m=${m%.xz} ;;
		*.zst) zstd -qdc "$f" >"$dir/modules/${m%.zst}"; m=${m%.zst} ;;
		*) cp "$f" "$dir/modules/$m" ;;
		esac
		echo "$m" >>"$dir/modules/order"
	done
cp "$ko" "$dir/modules/collx.ko"
cp "$user/tools/collx-bench" "$user/tools/collx-info" "$dir/collx/"
(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
arm64_log "$out: $(wc -l <"$dir/modules/order") modules + collx.ko, $(du -h "$out" | cut -f1)"
