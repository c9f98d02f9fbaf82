# collx-netmon: drops on RoCE v2 flows equal the tc and qdisc counters:
#  1. a tc egress filter drops exactly K crafted RoCE packets;
#  2. netem loss on the RoCE band of a prio qdisc under a real ib_write_bw.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
[ "$COLLX_NRANKS" -ge 2 ] || lab_skip "needs two nodes"
peer=$((COLLX_RANK ^ 1))
# Pairs 0-1, 2-3: the even rank runs ib_write_bw's client, the odd its server.
client=$((COLLX_RANK & ~1))
role=client
[ "$client" = "$COLLX_RANK" ] || role=server
if [ "$peer" -ge "$COLLX_NRANKS" ]; then
	lab_barrier nm-drop-a 120; lab_barrier nm-drop-b 120; lab_barrier nm-drop-c 120
	lab_skip "no partner for rank $COLLX_RANK"
fi
K=13
case_cleanup() {
	tc filter del dev eth0 egress pref 10 2>/dev/null
	tc qdisc del dev eth0 root 2>/dev/null
	tc qdisc del dev eth0 clsact 2>/dev/null
}

# 1. tc filter dropping exactly K RoCE packets (netmon on tcx makes no
# clsact qdisc: the test makes its own)
nm_start tcdrop -I eth0
tc qdisc add dev eth0 clsact 2>/dev/null
tc filter add dev eth0 egress pref 10 protocol ip u32 match ip dport 4791 0xffff \
	action drop || lab_fail "tc filter"
python3 - "$(lab_addr "$peer")" "$K" <<'PY' || lab_fail "send"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(b"\x0a\x00\xff\xff\x00\x00\x00\x11" + bytes(40), (sys.argv[1], 4791))
PY
sleep 1
tc -s filter show dev eth0 egress
tcdrop=$(tc -s filter show dev eth0 egress | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n1)
tc filter del dev eth0 egress pref 10
nm_stop tcdrop
echo "tc filter dropped $tcdrop"
[ "$tcdrop" = "$K" ] || lab_fail "tc filter dropped '$tcdrop', expected $K"
nm_check tcdrop "drops('eth0', cls='qdisc') == $K" "drops('eth0') == $K"

# 2. netem loss on the RoCE band under ib_write_bw
lab_barrier nm-drop-a 120 || lab_fail barrier
tc qdisc add dev eth0 root handle 1: prio || lab_fail "prio qdisc"
tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 1% || lab_fail "netem"
tc filter add dev eth0 parent 1: protocol ip pref 1 u32 match ip dport 4791 0xffff \
	flowid 1:3 || lab_fail "classifier"
nm_start netem -I eth0
port=18600
bw="ib_write_bw -d rxe0 -x 1 -s 65536 -n 200 -p $port"
# perftest times its report with the TSC and refuses to print one when
# the TSC does not track gettimeofday() closely (r^2 < 0.9: a TCG vCPU
# descheduled by a busy host).  The traffic has run by then, and the
# traffic is all this case needs: the client says so for its server.
clockdir=$COLLX_LAB_DIR/63-clock${COLLX_CASE_RUN:+-$COLLX_CASE_RUN}
mkdir -p "$clockdir"
bwrc=0
if [ "$role" = server ]; then
	lab_timeout 120 $bw >"$NM_DIR/bw.log" 2>&1 &
	bwpid=$!
	sleep 1
	lab_barrier nm-drop-b 120 || lab_fail barrier
	wait "$bwpid" || bwrc=$?
else
	lab_barrier nm-drop-b 120 || lab_fail barrier
	sleep 0.5
	lab_timeout 120 $bw "$(lab_addr "$peer")" >"$NM_DIR/bw.log" 2>&1 || bwrc=$?
	if [ "$bwrc" != 0 ] && grep -q "Can't produce a report" "$NM_DIR/bw.log"; then
		: >"$clockdir/$COLLX_RANK"
	fi
fi
cat "$NM_DIR/bw.log"
sleep 1
nm_stop netem
tc -s qdisc show dev eth0
qdrop=$(tc -s qdisc show dev eth0 | sed -n '/netem 30:/,/^qdisc/p' |
	sed -n 's/.*dropped \([0-9]*\),.*/\1/p' | head -n1)
lab_barrier nm-drop-c 120
if [ "$bwrc" != 0 ]; then
	[ -e "$clockdir/$client" ] || lab_fail "ib_write_bw $role exit $bwrc"
	echo "perftest's clock check failed on rank $client after the traffic: no report, counters still checked"
fi
echo "netem dropped $qdrop RoCE packets"
[ -n "$qdrop" ] || lab_fail "no netem counter"
# the client's 12800 RoCE packets at 1% loss: none lost means none sent
[ "$role" = server ] || [ "$qdrop" -gt 0 ] || lab_fail "netem dropped nothing: no traffic"
# rxe frees the packets it consumed with kfree_skb: class "rxe", not drops
nm_check netem "drops('eth0', cls='qdisc') == $qdrop" \
	"drops('eth0', cls='stack') == 0"
