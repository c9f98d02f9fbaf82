# Traffic classes on the wire: two comms of the same two nodes, one with
# COLLX_IB_TC=104 (DSCP 26) and one with 184 (DSCP 46), as NCCL_IB_TC
# means it (the IP type-of-service byte), run allreduces at once; a
# capture on each node (tests/lab/roce-tos.py, RoCE v2 packets by TOS)
# must see both classes leave and both arrive (the acceptor's side of a
# connection keeps the class the connecting side asked for), and the
# module's debugfs must show each comm with its class.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 2
collx_need_abi11
CAP=$COLLX_NODE_DIR/tos.json
STOP=$COLLX_NODE_DIR/tos.stop
rm -f "$CAP" "$CAP.ready" "$STOP"
lab_timeout 150 python3 "$COLLX_SRC/tests/lab/roce-tos.py" eth0 "$CAP" "$STOP" 140 &
sniffer=$!
n=0
until [ -e "$CAP.ready" ]; do
	n=$((n + 1))
	[ "$n" -le 300 ] || lab_fail "the capture did not start in 30 s"
	sleep 0.1
done
lab_barrier tos-capturing 90

# One comm per class, at once.
bench() {
	COLLX_IB_TC=$1 COLLX_MASTER_PORT=$2 lab_timeout 150 "$BENCH" \
		-t allreduce -b 256K -e 256K -n 20 -w 1 -R 1 -c 1 \
		>"$COLLX_NODE_DIR/tos-$1.out" 2>&1
}
bench 104 29626 &
b1=$!
bench 184 29627 &
b2=$!
# While they run: each comm with its class in debugfs (the module's view).
# The classes are gathered over the comms' lives (under load the two need
# not overlap) by shell builtins only, so that a loaded guest still reads
# every comm's first line ("... tos N") several times in its life.  Polls
# until both are seen or both benches exit.
t104=
t184=
while [ -z "$t104" ] || [ -z "$t184" ]; do
	alive=
	kill -0 "$b1" 2>/dev/null && alive=1
	kill -0 "$b2" 2>/dev/null && alive=1
	for f in /sys/kernel/debug/collx/*/state; do
		line=
		read -r line 2>/dev/null <"$f" || :
		case "${line##* tos }" in
		104) t104=104 ;;
		184) t184=184 ;;
		esac
	done
	[ -n "$alive" ] || break
	sleep 0.1
done
seen=$(echo $t104 $t184)
rc=0
wait "$b1" || rc=$?
wait "$b2" || rc=$((rc + $?))
cat "$COLLX_NODE_DIR/tos-104.out" "$COLLX_NODE_DIR/tos-184.out"
[ "$rc" = 0 ] || lab_fail "collx-bench failed (see above)"
touch "$STOP"
wait "$sniffer" || lab_fail "the capture failed"
echo "debugfs: comms with tos $seen"
[ "$seen" = "104 184" ] || lab_fail "debugfs showed the classes '$seen', want 104 and 184"
echo "capture: $(cat "$CAP")"
python3 - "$CAP" <<'PY' || lab_fail "a class is missing on the wire"
import json, sys
c = json.load(open(sys.argv[1]))
bad = []
for way in ("out", "in"):
    by_dscp = {}
    for tos, n in c[way].items():
        by_dscp[int(tos) >> 2] = by_dscp.get(int(tos) >> 2, 0) + n
    for dscp in (26, 46):
        n = by_dscp.get(dscp, 0)
        print("%-3s DSCP %d: %d packets" % (way, dscp, n))
        if n < 20:   # a sample: the capture drops under TCG
            bad.append("%s DSCP %d: %d packets" % (way, dscp, n))
sys.exit(1 if bad else 0)
PY
collx_no_leak
