# collx-doctor across nodes with a mismatched parameter: the last node
# reloads collx with slot_kib=128; --gather on every node and --compare on
# node0 name that node and the parameter, and a collective through the
# doctor fails instead of passing.  The module is reloaded as it was after.
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
DOCTOR=$COLLX_SRC/user/doctor/collx-doctor
OUT=$COLLX_NODE_DIR/doctor
G=$COLLX_LAB_DIR/doctor/params
mkdir -p "$OUT"
[ "$COLLX_NRANKS" -ge 2 ] || lab_skip "needs two nodes"
[ -n "$COLLX_MODULE" ] || lab_skip "the lab loaded no module"
LAST=$((COLLX_NRANKS - 1))
reload() {
	rmmod collx || return 1
	insmod "$COLLX_MODULE" "$@"
}
if [ "$COLLX_RANK" = "$LAST" ]; then
	case_cleanup() { [ "$(cat /sys/module/collx/parameters/slot_kib 2>/dev/null)" = 128 ] && reload; }
	trap case_cleanup EXIT
	reload slot_kib=128 || lab_fail "reload with slot_kib=128"
fi
lab_barrier doctor-params-set 120 || lab_fail barrier
"$DOCTOR" --gather "$G" >/dev/null
rc=0
COLLX_TIMEOUT_MS=10000 "$DOCTOR" --collective >"$OUT/params-coll.txt" || rc=$?
grep collective "$OUT/params-coll.txt"
[ "$rc" = 1 ] && grep -q "^FAIL  collective" "$OUT/params-coll.txt" ||
	lab_fail "a collective with mismatched slot_kib did not fail in the doctor"
lab_barrier doctor-params-gathered 120 || lab_fail barrier
if [ "$COLLX_RANK" = 0 ]; then
	rc=0
	"$DOCTOR" --compare "$G" --no-probe >"$OUT/params.txt" || rc=$?
	cat "$OUT/params.txt"
	[ "$rc" = 1 ] || lab_fail "compare exit $rc with a mismatch"
	grep -q "^FAIL  param slot_kib .*128 on node$LAST" "$OUT/params.txt" ||
		lab_fail "compare does not name node$LAST's slot_kib"
	grep -q "^ok    param nslots" "$OUT/params.txt" || lab_fail "nslots should match"
fi
lab_barrier doctor-params-done 120 || lab_fail barrier
if [ "$COLLX_RANK" = "$LAST" ]; then
	reload || lab_fail "reload"
	[ "$(cat /sys/module/collx/parameters/slot_kib)" = 64 ] || lab_fail "slot_kib not restored"
fi
