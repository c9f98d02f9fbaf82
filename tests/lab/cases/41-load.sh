# Load: on every node LOAD_PROCS processes (4), each with LOAD_COMMS comms
# (8), run LOAD_OPS rounds (40 here; issue 10's load is 1000: set LOAD_OPS)
# in which every comm has an allreduce in flight at once, every result
# checked (tests/progs/lab/load.c).  Each process is its own 4-rank job on
# its own rendezvous port, so the module carries 32 comms per node and 96
# connections; the live comms are counted while they run, and every counter
# returns to 0 after.  The fuzzer (40) and the fault cases load the module
# in both kernels' labs; this one runs in one of them (lab-once).
# lab-timeout: 900
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
PROCS=${LOAD_PROCS:-4}
COMMS=${LOAD_COMMS:-8}
OPS=${LOAD_OPS:-40}
export LOAD_SECS=${LOAD_SECS:-$((OPS * 2 + 120))}
pids=
for p in $(seq 0 $((PROCS - 1))); do
	COLLX_MASTER_PORT=$((29660 + p)) timeout -k 5 $((LOAD_SECS + 60)) \
		"$LABPROG" load "$COMMS" "$OPS" >"$COLLX_NODE_DIR/load-$p.out" 2>&1 &
	pids="$pids $!"
done
# The most comms live at once, as the module counts them.
peak=0
while kill -0 $pids 2>/dev/null; do
	c=$(stat_of comms)
	[ "${c:-0}" -gt "$peak" ] && peak=$c
	sleep 0.5
done
rc=0
for pid in $pids; do
	wait "$pid" || rc=1
done
cat "$COLLX_NODE_DIR"/load-*.out
echo "node$COLLX_RANK: at most $peak comms live at once (want $((PROCS * COMMS)))"
[ "$rc" = 0 ] || lab_fail "a load process failed (see above)"
[ "$peak" -eq $((PROCS * COMMS)) ] ||
	lab_fail "saw at most $peak comms live, want $((PROCS * COMMS))"
collx_no_leak 30
