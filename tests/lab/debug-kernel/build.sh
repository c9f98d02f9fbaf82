#!/bin/bash
# Build the lab's debug kernel: Debian's linux-source-6.12 configured as
# `make tinyconfig` plus collx-debug.config (KASAN, lockdep, kmemleak,
# debugobjects, and only what a lab node needs).  The result lives outside
# the source tree, in .build/debug-kernel/ (COLLX_DEBUG_KERNEL overrides):
#
#   bzImage              the kernel `tests/lab/lab.sh -k debug` boots
#   release              its release string
#   lib/modules/<rel>/   its modules (rdma_rxe, ...), bound into the nodes
#   build/               the build tree: make module KVER=<rel> KDIR=<this>
#   src/                 the extracted source the build tree refers to
#
# Cached by a hash of the fragment and the source package's version: a
# second run with neither changed does nothing; a changed fragment
# rebuilds incrementally.  Prints how long the build took.  The compiler
# runs under nice -n 10.
#
#   tests/lab/debug-kernel/build.sh [-j JOBS] [-f]     (-f: ignore the cache)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../../.." && pwd)
OUT=${COLLX_DEBUG_KERNEL:-$SRC/.build/debug-kernel}
FRAGMENT=$HERE/collx-debug.config
PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz
JOBS=$(nproc)
FORCE=0

while getopts "j:fh" opt; do
	case $opt in
	j) JOBS=$OPTARG ;;
	f) FORCE=1 ;;
	*) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

[ -r "$TARBALL" ] || die "no $TARBALL (package $PKG)"
command -v pahole >/dev/null || die "no pahole (package pahole, or dwarves): BTF needs it"
VER=$(dpkg-query -W -f '${Version}' "$PKG")
KEY=$( (cat "$FRAGMENT"; echo "$PKG $VER") | sha256sum | cut -d' ' -f1)

mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9
if [ "$FORCE" = 0 ] && [ -f "$OUT/key" ] && [ "$(cat "$OUT/key")" = "$KEY" ] &&
	[ -f "$OUT/bzImage" ]; then
	log "$(cat "$OUT/release") is up to date in $OUT"
	exit 0
fi
rm -f "$OUT/key"
start=$(date +%s)

if [ "$(cat "$OUT/src-version" 2>/dev/null)" != "$VER" ]; then
	log "extracting $PKG $VER"
	rm -rf "$OUT/src" "$OUT/build"
	mkdir -p "$OUT/src"
	tar -xJf "$TARBALL" -C "$OUT/src" --strip-components=1
	echo "$VER" >"$OUT/src-version"
fi

K=(make -C "$OUT/src" O="$OUT/build" ARCH=x86_64 -s)
"${K[@]}" tinyconfig
"$OUT/src/scripts/kconfig/merge_config.sh" -m -O "$OUT/build" "$OUT/build/.config" "$FRAGMENT" >/dev/null
"${K[@]}" olddefconfig

# Every line of the fragment must have survived Kconfig's dependencies: a
# checker silently dropped is worse than a failed build.
missing=
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$OUT/build/.config" || missing="$missing ${line%%=*}" ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		! grep -q "^$sym=" "$OUT/build/.config" || missing="$missing $sym(unset)" ;;
	esac
done <"$FRAGMENT"
[ -z "$missing" ] || die "the fragment asks for what Kconfig did not give:$missing"

log "building with $JOBS jobs"
nice -n 10 "${K[@]}" -j"$JOBS" bzImage modules
REL=$("${K[@]}" kernelrelease)
rm -rf "$OUT/lib"
# Stripped of DWARF (they keep .BTF): the nodes read them over 9p.
"${K[@]}" INSTALL_MOD_PATH="$OUT" INSTALL_MOD_STRIP=1 modules_install
cp "$OUT/build/arch/x86/boot/bzImage" "$OUT/bzImage"
echo "$REL" >"$OUT/release"
echo "$KEY" >"$OUT/key"
log "built $REL in $(($(date +%s) - start)) s: $OUT/bzImage"
log "collx.ko for it: make module KVER=$REL KDIR=$OUT/build"
