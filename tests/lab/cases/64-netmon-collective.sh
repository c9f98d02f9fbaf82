# collx-netmon: pauses injected while a collective runs are attributed to the
# ops that were in flight, checked against the ops' own timestamps (the
# collx:op_start/op_done events in netmon's event log).  make check draws
# the picture of every node's events on the host afterwards (check.sh:
# matplotlib under TCG costs a minute of the lab).  The tracepoints are the
# module's own and 60 attaches netmon in both labs: this runs in one.
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
nm_require_switch
BENCH=$COLLX_SRC/user/tools/collx-bench
if [ ! -x "$BENCH" ] || [ ! -d /sys/kernel/tracing/events/collx ]; then
	lab_barrier nm-coll 120
	lab_skip "collx cannot run collectives yet (no user/tools/collx-bench or no collx tracepoints)"
fi
ip maddr add 01:80:c2:00:00:01 dev eth0 2>/dev/null
nm_start coll -I eth0 -i 1
lab_barrier nm-coll 120 || lab_fail barrier
lab_timeout 120 "$BENCH" -b 256K -e 256K -n 20 -w 2 >"$NM_DIR/bench.log" 2>&1 &
bpid=$!
sleep 2
# 30 pauses of 0xffff quanta on priority 3, spaced 20 ms, while ops run
switch_inject pfc --prio 3 --quanta 0xffff --count 30 --interval-us 20000 ||
	lab_fail "inject"
wait "$bpid" || { cat "$NM_DIR/bench.log"; lab_fail "collx-bench failed"; }
sleep 1
nm_stop coll
python3 - "$NM_DIR/coll" <<'PY' || lab_fail "attribution does not match the ops' timestamps"
import json, sys
p = sys.argv[1]
ev = [json.loads(l) for l in open(p + ".events")]
rep = json.loads(open(p + ".json").readlines()[-1])
start = {(e["comm"], e["op"]): e["ts"] for e in ev if e["type"] == "op_start"}
done = {(e["comm"], e["op"]): e["ts"] for e in ev if e["type"] == "op_done"}
pfc = [e for e in ev if e["type"] == "pfc" and e["dir"] == "rx" and e["b"] > 0]
want = {k: 0 for k in done}
for e in pfc:
    for k in done:
        if start.get(k, 1 << 64) <= e["ts"] <= done[k]:
            want[k] += 1
got = {(o["comm"], o["op"]): o["pauses"] for o in rep["ops"] if o["done"]}
bad = [(k, want[k], got.get(k)) for k in want if got.get(k) != want[k]]
print("%d pause frames, %d ops, %d ops paused" % (len(pfc), len(want),
      sum(1 for v in want.values() if v)))
print("mismatches:", bad[:10])
# Whether a pause lands inside an op depends on the emulator's timing (a
# node may finish its ops before its pauses arrive); what must always hold
# is that netmon's per-op counts equal those derived from the timestamps.
if not any(want.values()):
    print("note: no pause landed inside an op on this node this time")
sys.exit(1 if bad or len(pfc) != 30 else 0)
PY
