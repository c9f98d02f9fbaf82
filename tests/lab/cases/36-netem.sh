# A lossy, slow fabric: netem drops 5 % of the packets into every node and
# delays them 50 ms (each switch port's egress).  No link is cut, so every
# allreduce of every size completes, exactly (collx-bench checks each
# element), and so does the last one, whose ACKs the loss may eat before
# the peer destroys its comm (its ABORT says what arrived); the table
# gives each size's time.  Afterwards the counters, QPs, MRs and pinned
# pages are back to their baseline.  COLLX_FAULT_NETEM (lab.sh -e) runs
# other netem arguments.  Sizes: one element, a page, and 64 KiB (many
# packets per op); 256 KiB ops took 8-11 s each on 6.1 under this loss,
# and collx-bench runs 8 of the largest (sync, 2 timed, check, each
# placement): 160 s of the case.
# lab-timeout: 300
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29638
NETEM=${COLLX_FAULT_NETEM:-loss 5% delay 50ms}
# Where the case's time goes: the host sits idle through most of it.
# The collx tracepoints' op_submit and op_done, around collx-bench, split
# its time into the comm's setup, the ops and the teardown.
T0=$(date +%s)
phase() {
	echo "phase: $* after $(($(date +%s) - T0)) s"
}
TR=/sys/kernel/tracing
trace_ops() {
	local e
	[ -w "$TR/trace_marker" ] && [ -d "$TR/events/collx/op_submit" ] || return 0
	for e in op_submit op_done; do
		echo "$1" >"$TR/events/collx/$e/enable"
	done
	[ "$1" = 1 ] || return 0
	: >"$TR/trace"
	echo "collx-lab: collx-bench starts" >"$TR/trace_marker"
}
trace_report() {
	[ -r "$TR/trace" ] || return 0
	echo "collx-lab: collx-bench ended" >"$TR/trace_marker" 2>/dev/null || return 0
	awk '/collx-lab: collx-bench starts/ { t0 = $0 }
		/collx-lab: collx-bench ended/ { t1 = $0 }
		/ op_submit:/ && !s { s = $0 }
		/ op_done:/ { d = $0 }
		function ts(l) { if (match(l, /[0-9]+\.[0-9]+:/)) return substr(l, RSTART, RLENGTH - 1) + 0; return -1 }
		END {
			if (t0 == "" || s == "" || d == "")
				exit
			printf "phase: collx-bench: comm set up in %.1f s, ops %.1f s, teardown %.1f s\n",
				ts(s) - ts(t0), ts(d) - ts(s), ts(t1) - ts(d)
		}' "$TR/trace"
	trace_ops 0
}
fault_baseline
# Each node asks for its own port; the switch clears it after 280 s at
# most (the debug kernel's bounds are longer, up to the switch's 600 s).
NETEM_SECS=$((280 * $(lab_slowdown)))
[ "$NETEM_SECS" -le 600 ] || NETEM_SECS=600
lab_fault_netem "$COLLX_RANK" "$NETEM" "$NETEM_SECS"
trap 'trace_ops 0; lab_fault_netem_clear "$COLLX_RANK" >/dev/null' EXIT
lab_barrier netem-on 60 || lab_fail "barrier"
phase "netem on everywhere"
BENCH_TIMEOUT=$((NETEM_SECS - 40))
trace_ops 1
out=$(collx_bench_ok -d float -o sum --counts 1,1021,16384 -n 2 -w 0 -c 1 -z 1) ||
	{ printf '%s\n' "$out"; lab_fail "an allreduce under '$NETEM' failed or was wrong"; }
printf '%s\n' "$out"
phase "collx-bench done"
trace_report
# One line per size (rank 0 prints the table): mean time of one blocking
# allreduce, out of place and in place, and the elements found wrong.
printf '%s\n' "$out" | awk -v c="$(basename "$0" .sh)" -v r="$COLLX_RANK" \
	'$3 == "float" && $4 == "sum" { printf "fault-result %s rank=%s outcome=done size=%s time=%.3f inplace_time=%.3f wrong=%s/%s netem=\"%s\"\n", c, r, $1, $6 / 1e6, $10 / 1e6, $9, $13, "'"$NETEM"'" }'
trap - EXIT
lab_fault_netem_clear "$COLLX_RANK"
lab_barrier netem-off 60 || lab_fail "barrier"
phase "netem off everywhere"
fault_finish 30
