# rmmod is clean: the device node and the ib_client go, nothing is left.
. "$COLLX_SRC/tests/lab/lib.sh"
lab_run rmmod collx
[ ! -e /dev/collx ] || lab_fail "/dev/collx still there after rmmod"
grep -q '^collx ' /proc/modules && lab_fail "collx still loaded"
dmesg | tail -n 20 | grep -q 'collx: rxe0: removed' || lab_fail "no 'rxe0: removed' at unload"
dmesg | tail -n 20 | grep -q 'collx: unloaded' || lab_fail "no 'unloaded' line"
# Load it again for the cases that follow, and unload once more.
lab_run insmod "$COLLX_MODULE"
lab_run rmmod collx
lab_run insmod "$COLLX_MODULE"
echo "unloaded and reloaded cleanly"
