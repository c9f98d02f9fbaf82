# collx-doctor on PFC: soft-RoCE has no DCB, so "PFC off" cannot be
# configured here; the doctor must say it cannot check (warn, not ok, not a
# made-up fail), agreeing with what dcbnl answers (EOPNOTSUPP) and what
# iproute2's dcb prints.  The ok/warn/fail judgement for a NIC with DCB is
# tested on the host (user/doctor/test_doctor.py).
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
DOCTOR=$COLLX_SRC/user/doctor/collx-doctor
OUT=$COLLX_NODE_DIR/doctor
mkdir -p "$OUT"
[ "$COLLX_RANK" = 0 ] || lab_skip "one node is enough"
"$DOCTOR" --json --tos 0x68 >"$OUT/pfc.json"
python3 - "$OUT/pfc.json" <<'PY' || lab_fail "PFC verdict on soft-RoCE"
import json, sys
d = json.load(open(sys.argv[1]))
v = {x["check"]: x for x in d["verdicts"]}
f = d["facts"]
print("dcbnl:", f["dcb"])
print("pfc:", v["pfc"]["status"], v["pfc"]["message"])
ok = (f["dcb"].get("error") == "EOPNOTSUPP" and f["rdma"]["soft"] and f["tos"] == 0x68 and
      v["pfc"]["status"] == "warn" and "no DCB on this device (soft-RoCE)" in v["pfc"]["message"] and
      v["trust"]["status"] == "warn")
sys.exit(0 if ok else 1)
PY
out=$(dcb pfc show dev eth0 2>&1) && lab_fail "dcb shows PFC on eth0: $out"
echo "dcb pfc show dev eth0: $out"
