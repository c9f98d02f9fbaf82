#!/bin/sh
# The exporter's self-test on one lab node, collx not needed:
#
#   flock /tmp/collx-lab.lock tests/lab/lab.sh -k 6.1 -n 1 -M -- tests/dmabuf/selftest.sh
#
# Loads build/<release>/dmabuf/collx_test_exporter.ko with a small page
# budget (so the limit test runs), runs selftest and a CLI round trip, and
# unloads the module, which only succeeds once every buffer and importer
# is gone.  Extra arguments go to selftest.
SRC=${COLLX_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
D=$SRC/tests/dmabuf
KO=$SRC/build/$(uname -r)/dmabuf/collx_test_exporter.ko
CTL=$D/dmabuf-ctl
status=0

fail() {
	echo "selftest.sh: $*" >&2
	status=1
}

[ -f "$KO" ] || { echo "no $KO: make -C tests/dmabuf module KVER=$(uname -r)" >&2; exit 1; }
[ -x "$D/selftest" ] || { echo "no $D/selftest: make -C tests/dmabuf" >&2; exit 1; }
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
if grep -q '^collx_test_exporter ' /proc/modules; then
	rmmod collx_test_exporter || exit 1
fi
insmod "$KO" max_buf_mib=16 max_total_mib=64 || exit 1
echo "# $(uname -r): $(dmesg | grep 'collx_test_exporter: loaded' | tail -n1)"

"$D/selftest" "$@" || fail "selftest failed"

# The CLI: fill, move, check, revoke; an fd lives only inside create's CMD.
out=$("$CTL" create 1M dynamic -- sh -c "
	$CTL fill 3 7 && $CTL move 3 >/dev/null && $CTL check 3 7 &&
	$CTL revoke 3 >/dev/null && ! $CTL check 3 7 2>/dev/null &&
	$CTL stats 3") || fail "dmabuf-ctl round trip failed"
echo "$out" | grep -qx 'generation 2' || fail "dmabuf-ctl: not moved and revoked: $out"
echo "$out" | grep -qx 'revoked 1' || fail "dmabuf-ctl: not revoked: $out"
echo "$out" | grep -qx 'late_write_pages 0' || fail "dmabuf-ctl: late writes: $out"
[ "$status" = 0 ] && echo "ok - dmabuf-ctl create/fill/move/check/revoke/stats"

"$CTL" counters | sed 's/^/# /'
rmmod collx_test_exporter || fail "rmmod: something still holds the module"
exit $status
