#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of dkms.conf as Debian 12's dkms 3.0.10 reads it (sourced by
# bash with $kernelver, $arch, $kernel_source_dir, $dkms_tree): the
# kernels it builds for, and MLNX/DOCA-OFED.  An OFED node is made up in a
# private mount namespace (an overlay over /usr/src, so the host's is
# never written): /usr/src/ofa_kernel/<arch>/<kver>/Module.symvers with
# ib_core's symbols under other CRCs, as OFED's own ib_core exports them.
# The module DKMS would build there must carry OFED's CRCs (so it loads
# against OFED's ib_core and is refused by the in-tree one, and the other
# way round), and Kbuild must put OFED's headers first.  Prints TAP.
#
#   scripts/deb/test-dkms-conf.sh [KVER]      (root: unshare -m, mount)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KVER=${1:-$(cd /lib/modules && ls -d 6.12.* 2>/dev/null | sort -V | tail -n1)}
KDIR=/lib/modules/$KVER/build
[ -f "$KDIR/Module.symvers" ] || { echo "not ok - dkms.conf: no headers for $KVER"; exit 1; }
if [ -z "${COLLX_IN_NS:-}" ]; then
	exec unshare -m --propagation private env COLLX_IN_NS=1 "$0" "$KVER"
fi
T=$(mktemp -d)
trap 'umount /usr/src 2>/dev/null; rm -rf "$T"' EXIT
n=0 bad=0
tap() {	# OK? TEXT
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - dkms.conf: $2"; else echo "not ok $n - dkms.conf: $2"; bad=1; fi
}
# What dkms does with dkms.conf (dkms 3.0.10 read_conf/safe_source).
conf() {	# KVER -> MAKE[0] and BUILD_EXCLUSIVE_KERNEL, one a line
	bash -c 'kernelver=$1 arch=x86_64 kernel_source_dir=/lib/modules/$1/build \
		dkms_tree=/var/lib/dkms; . "$2" >/dev/null; echo "${MAKE[0]}"; echo "$BUILD_EXCLUSIVE_KERNEL"' \
		sh "$1" "$SRC/dkms.conf"
}
excl=$(conf "$KVER" | sed -n 2p)
ok=0
for k in 6.1.0-57-amd64 6.12.117+deb12-amd64 6.6.3 7.0.0-1-amd64 10.1.0; do
	[[ $k =~ $excl ]] || { ok=1; echo "# $k should build"; }
done
for k in 5.10.0-30-amd64 6.0.12-amd64 4.19.0; do
	[[ $k =~ $excl ]] && { ok=1; echo "# $k should not build"; }
done
tap $ok "BUILD_EXCLUSIVE_KERNEL builds 6.1 and later only (dkms 3.0.10 has no _MIN)"
grep -q '^CLEAN=' "$SRC/dkms.conf"
tap $((!$?)) "no CLEAN (deprecated; dkms runs make clean itself)"

make0=$(conf "$KVER" | sed -n 1p)
case $make0 in *KBUILD_EXTRA_SYMBOLS*) tap 1 "no OFED, no extra symbols: $make0" ;;
*) tap 0 "without OFED: plain kbuild" ;; esac

# The made-up OFED node.
mkdir -p "$T/u" "$T/w"
mount -t overlay overlay -o lowerdir=/usr/src,upperdir="$T/u",workdir="$T/w" /usr/src ||
	{ tap 1 "overlay over /usr/src"; exit 1; }
OFA=/usr/src/ofa_kernel/x86_64/$KVER
mkdir -p "$OFA/include/linux"
grep -E '\s(drivers/infiniband/core/ib_core|drivers/infiniband/core/rdma_cm)\s' "$KDIR/Module.symvers" |
	awk -F'\t' 'BEGIN { OFS = "\t" } { $1 = "0x0fed0fed"; $3 = "/usr/src/ofa_kernel/" $3; print }' \
	>"$OFA/Module.symvers"
# OFED's compat header, force-included first: proves the include order
printf '#warning "collx: built against ofa_kernel headers"\n' >"$OFA/include/linux/compat-2.6.h"
make0=$(conf "$KVER" | sed -n 1p)
case $make0 in
*"COLLX_OFA=$OFA KBUILD_EXTRA_SYMBOLS=$OFA/Module.symvers"*) tap 0 "with $OFA: $make0" ;;
*) tap 1 "with OFED: $make0" ;;
esac

build() {	# DIR MAKE-ARGS...: the module as dkms builds it, in a copy
	local d=$1
	shift
	mkdir -p "$d"
	cp -r "$SRC/Kbuild" "$SRC/kmod" "$SRC/include" "$d/"
	make -C "$KDIR" M="$d" "$@" modules >"$d/make.log" 2>&1
}
crc() { modprobe --dump-modversions "$1" | awk '$2 == "ib_register_client" { print $1 }'; }
build "$T/upstream" || { tail "$T/upstream/make.log"; tap 1 "build against in-tree ib_core"; exit 1; }
# shellcheck disable=SC2086
build "$T/ofed" ${make0#*M=*/build } 2>/dev/null
up=$(crc "$T/upstream/kmod/collx.ko") of=$(crc "$T/ofed/kmod/collx.ko" 2>/dev/null)
echo "# ib_register_client CRC: in-tree build $up, OFED build ${of:-none}"
[ -n "$up" ] && [ "$up" != 0x0fed0fed ]
tap $? "in-tree build: the kernel's ib_core CRCs ($up)"
[ "$of" = 0x0fed0fed ]
tap $? "OFED build: ofa_kernel's CRCs, so only OFED's ib_core accepts it"
grep -q 'built against ofa_kernel headers' "$T/ofed/make.log"
tap $? "OFED build: ofa_kernel's headers come first (Kbuild honours COLLX_OFA)"
echo "1..$n"
exit $bad
