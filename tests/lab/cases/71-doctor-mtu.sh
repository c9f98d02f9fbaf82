# collx-doctor with an MTU of 1500 on node0's eth0: rxe's active MTU drops
# to 1024 and the doctor says so, with what to do; --compare names the node
# whose MTU differs.  The MTU is restored after (70 saw the doctor's ok).
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
DOCTOR=$COLLX_SRC/user/doctor/collx-doctor
OUT=$COLLX_NODE_DIR/doctor
G=$COLLX_LAB_DIR/doctor/mtu
mkdir -p "$OUT"
active_mtu() { ibv_devinfo -d rxe0 -i 1 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p'; }
wait_mtu() {
	local n=0
	while [ "$(active_mtu)" != "$1" ]; do
		n=$((n + 1))
		[ "$n" -lt 50 ] || lab_fail "rxe0 active MTU stays $(active_mtu), want $1"
		sleep 0.1
	done
}
case_cleanup() { ip link set eth0 mtu "$LAB_MTU"; }
trap case_cleanup EXIT
if [ "$COLLX_RANK" = 0 ]; then
	ip link set eth0 mtu 1500 || lab_fail "ip link set mtu 1500"
	wait_mtu 1024
	"$DOCTOR" >"$OUT/mtu1500.txt"
	cat "$OUT/mtu1500.txt"
	grep -q "^WARN  mtu .*active MTU 1024 on rxe0/1 .*eth0 MTU 1500" "$OUT/mtu1500.txt" ||
		lab_fail "no MTU warning at 1500"
	grep -A1 "^WARN  mtu" "$OUT/mtu1500.txt" | grep -q "ip link set eth0 mtu 9000" ||
		lab_fail "no advice for the MTU"
fi
lab_barrier doctor-mtu-set 120 || lab_fail barrier
"$DOCTOR" --gather "$G" >/dev/null
lab_barrier doctor-mtu-gathered 120 || lab_fail barrier
if [ "$COLLX_RANK" = 0 ]; then
	"$DOCTOR" --compare "$G" --no-probe >"$OUT/mtu-compare.txt"
	cat "$OUT/mtu-compare.txt"
	[ "$COLLX_NRANKS" -lt 2 ] || grep -q "^WARN  mtu .*1024 on node0" "$OUT/mtu-compare.txt" ||
		lab_fail "compare does not name node0's MTU"
	ip link set eth0 mtu "$LAB_MTU"
	wait_mtu 4096
fi
