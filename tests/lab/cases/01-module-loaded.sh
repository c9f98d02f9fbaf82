# The fresh collx.ko is loaded on every node and says so.
. "$COLLX_SRC/tests/lab/lib.sh"
grep -q '^collx ' /proc/modules || lab_fail "collx not in /proc/modules"
want=$(sed -n 's/^#define COLLX_MODULE_VERSION[[:space:]]*"\(.*\)"/\1/p' "$COLLX_SRC/kmod/collx_loc.h")
have=$(cat /sys/module/collx/version)
[ "$have" = "$want" ] || lab_fail "module version '$have', source says '$want'"
dmesg | grep -q "collx: version $want loaded" || lab_fail "no 'loaded' line in dmesg"
echo "collx $have loaded on node$COLLX_RANK ($(uname -r))"
