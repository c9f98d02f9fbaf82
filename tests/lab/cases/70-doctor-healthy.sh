# collx-doctor on a healthy lab node: every local check as soft-RoCE really
# is (PFC, ECN and DSCP trust: "warn", no DCB, never faked), a collective on
# a comm of every node with its parameter-hash comparison, and the nodes'
# gathered facts compared on node0 (parameters equal, path MTU probed).
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
DOCTOR=$COLLX_SRC/user/doctor/collx-doctor
OUT=$COLLX_NODE_DIR/doctor
G=$COLLX_LAB_DIR/doctor/healthy
mkdir -p "$OUT"
# status:message of one check in a --json report (one python3 per report,
# read into FILE.tsv: a python start costs seconds under TCG)
verdict() {
	[ -f "$1.tsv" ] || python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["verdicts"]:
    print(x["check"], x["status"] + ": " + " ".join(x["message"].split()), sep="\t")' "$1" >"$1.tsv"
	awk -F '\t' -v c="$2" '$1 == c { print $2 }' "$1.tsv"
}
expect() {	# FILE CHECK STATUS [TEXT]
	local got
	got=$(verdict "$1" "$2")
	case $got in
	"$3: "*"${4:-}"*) echo "$2 -> $got" ;;
	*) lab_fail "$2: want $3${4:+ with '$4'}, got '$got'" ;;
	esac
}

"$DOCTOR" >"$OUT/healthy.txt" || { cat "$OUT/healthy.txt"; lab_fail "doctor fails a healthy node"; }
cat "$OUT/healthy.txt"
lab_barrier doctor-coll 120 || lab_fail barrier
# every check, the collective among them, in one run (python starts slowly under TCG)
COLLX_TIMEOUT_MS=20000 "$DOCTOR" --collective --gather "$G" --json >"$OUT/healthy.json" ||
	{ cat "$OUT/healthy.json"; lab_fail "doctor --collective --json fails a healthy node"; }
J=$OUT/healthy.json
expect "$J" module ok "ABI 1."
expect "$J" port ok "ACTIVE"
expect "$J" gid ok "RoCE v2 GID index"
expect "$J" mtu ok "active MTU 4096"
expect "$J" pfc warn "no DCB on this device (soft-RoCE)"
expect "$J" ecn warn "soft-RoCE has no DCQCN"
expect "$J" trust warn "no DCB on this device (soft-RoCE)"
expect "$J" memlock ok
expect "$J" params ok "slot_kib="
# what iproute2's dcb says agrees: this netdev has no DCB
dcb pfc show dev eth0 >/dev/null 2>&1 && lab_fail "dcb reads PFC on eth0, the doctor said no DCB"
expect "$J" collective ok "module parameters equal on every rank"
lab_barrier doctor-gathered 120 || lab_fail barrier
if [ "$COLLX_RANK" = 0 ]; then
	"$DOCTOR" --compare "$G" >"$OUT/compare.txt" || { cat "$OUT/compare.txt"; lab_fail "compare"; }
	cat "$OUT/compare.txt"
	grep -q "^ok    nodes .*$COLLX_NRANKS nodes" "$OUT/compare.txt" || lab_fail "not every node gathered"
	[ "$COLLX_NRANKS" -lt 2 ] || grep -q "^ok    path mtu .* reach node1" "$OUT/compare.txt" ||
		lab_fail "no path MTU probe to node1"
fi
