# DKMS: add, build and install collx for this node's kernel, then load the
# module DKMS built.  One node does it (a compile under emulation is slow).
# lab-timeout: 900
. "$COLLX_SRC/tests/lab/lib.sh"
[ "$COLLX_RANK" = 0 ] || lab_skip "DKMS runs on node0 only"
command -v dkms >/dev/null || lab_fail "dkms not installed"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$COLLX_SRC/dkms.conf")
[ -n "$ver" ] || lab_fail "no PACKAGE_VERSION in dkms.conf"
# The source tree DKMS gets: what dkms.conf builds, nothing else.  The
# node's root is an overlay, so this never touches the host.
dst=/usr/src/collx-$ver
rm -rf "$dst"
mkdir -p "$dst"
cp -r "$COLLX_SRC/dkms.conf" "$COLLX_SRC/Kbuild" "$COLLX_SRC/kmod" "$COLLX_SRC/include" "$dst/"
find "$dst" \( -name '*.o' -o -name '*.ko' -o -name '*.cmd' -o -name '*.mod*' \) -delete
lab_run dkms add -m collx -v "$ver"
lab_run dkms build -m collx -v "$ver" -k "$(uname -r)" || {
	cat "/var/lib/dkms/collx/$ver/build/make.log" >&2
	lab_fail "dkms build"
}
lab_run dkms install -m collx -v "$ver" -k "$(uname -r)"
dkms status -m collx | grep -q installed || lab_fail "dkms status: $(dkms status -m collx)"
rmmod collx 2>/dev/null
lab_run modprobe collx
path=$(modinfo -n collx)
case $path in
*/updates/dkms/*) ;;
*) lab_fail "modprobe loaded $path, not the DKMS module" ;;
esac
[ "$(cat /sys/module/collx/version)" = "$ver" ] || lab_fail "loaded version differs from dkms.conf"
[ -c /dev/collx ] || lab_fail "no /dev/collx from the DKMS module"
"$COLLX_SRC/user/tools/collx-info"
lab_run rmmod collx
echo "DKMS built and installed collx $ver at $path"
