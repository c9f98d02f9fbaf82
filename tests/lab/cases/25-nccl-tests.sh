# collx-bench as nccl-tests on 4 nodes: each program name runs its
# collective (every root for broadcast and reduce, -r -1), the table ends
# "0 OK", and -J writes nccl-tests' JSON (one row per size, checked with
# Python's json); bad numbers are refused before any rank starts.
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29627
collx_need_abi11
"$TOOLS/all_reduce_perf" -n abc >/dev/null 2>&1
[ "$?" = 2 ] || lab_fail "all_reduce_perf -n abc was not refused with status 2"
for p in all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf alltoall_perf sendrecv_perf; do
	json=$COLLX_NODE_DIR/cases/25-$p.json
	rm -f "$json"
	out=$(lab_run lab_timeout 90 "$TOOLS/$p" -b 8 -e 32K -f 4096 -n 2 -w 1 -c 1 -R 1 -r -1 -J "$json") ||
		lab_fail "$p failed"
	printf '%s\n' "$out"
	[ "$COLLX_RANK" = 0 ] || continue
	printf '%s\n' "$out" | grep -q "^# Collective test starting: $p$" || lab_fail "$p: not its own test"
	printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || lab_fail "$p: no '0 OK' footer"
	python3 - "$json" "$p" <<'PY' || lab_fail "$p: bad JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 3 and d["config"]["program"] == sys.argv[2], d["config"]
assert d["config"]["nranks"] == 4 and len(d["config"]["devices"]) == 4
assert d["out_of_bounds"]["okay"] and d["results"], d["out_of_bounds"]
assert all(r["out_of_place"]["nwrong"] == 0 for r in d["results"])
print("%s: JSON with %d rows" % (sys.argv[2], len(d["results"])))
PY
	rm -f "$json"
done
collx_no_leak
