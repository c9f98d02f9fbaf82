#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make deb: the four collx packages from this tree, in .build/deb/.
#
#   scripts/deb/build.sh [OUTDIR]
#
# The tree's sources (what git tracks, and new files it does not ignore)
# are copied into OUTDIR/collx-VERSION, so the build never sees objects of
# the working tree, and dpkg-buildpackage -b runs there, unsigned.  Needs
# the Build-Depends of debian/control (scripts/install-deps.sh installs
# them); says which are missing.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "${1:-$SRC/.build/deb}" && cd "${1:-$SRC/.build/deb}" && pwd)
cd "$SRC"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
deb=$(dpkg-parsechangelog -S Version)
[ "$ver" = "$deb" ] || { echo "deb: dkms.conf says $ver, debian/changelog $deb: add a changelog entry" >&2; exit 1; }
stage=$OUT/collx-$ver
rm -rf "$stage"
mkdir -p "$stage"
git ls-files -z --cached --others --exclude-standard -- \
	debian dkms.conf Kbuild kmod include user bpf Documentation scripts tests/plots |
	xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh |
	tar -c --null -T - | tar -x -C "$stage"
cd "$stage"
dpkg-checkbuilddeps || { echo "deb: install the missing Build-Depends (apt-get build-dep $stage, or scripts/install-deps.sh)" >&2; exit 1; }
start=$(date +%s)
dpkg-buildpackage -us -uc -b -j"$(nproc)" >"$OUT/build.log" 2>&1 ||
	{ tail -n 40 "$OUT/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $OUT/build.log)" >&2; exit 1; }
rm -rf "$stage"
cd "$OUT"
for d in collx-dkms_"$ver"_all.deb libcollx1_"$ver"_*.deb libcollx-dev_"$ver"_*.deb collx-tools_"$ver"_*.deb; do
	[ -f "$d" ] || { echo "deb: $d was not built" >&2; exit 1; }
	echo "$OUT/$d  $(dpkg-deb -f "$d" Installed-Size) KiB, $(dpkg-deb -c "$d" | grep -vc '/$') files"
done
echo "deb: built in $(($(date +%s) - start)) s (log: $OUT/build.log)"
