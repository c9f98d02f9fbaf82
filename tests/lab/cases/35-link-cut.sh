# A link cut under load: the switch takes node2's port down (for longer
# than the comm's timeout) mid-allreduce.  Every rank's allreduce fails
# within the comm's timeout + 1 s: ranks 0, 1 and 3 naming rank 2, rank 2
# naming a ring neighbour (1 or 3).  Once the port is up again a new
# communicator gives an exact allreduce across it, and on every node the
# collx counters, QPs, MRs and pinned pages are back to their baseline.
# Every rank has the same timeout: rank 0, not a ring neighbour of rank 2,
# times out with rank 2's neighbours, before their ABORTs can arrive, and
# names rank 2 because the neighbour it waits for answers its ASK that it
# waits for rank 2 (kmod/ask.c).
# lab-timeout: 150
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29636
export COLLX_TIMEOUT_MS=5000
CUT=2
fault_baseline
fault_loop_start 60
if [ "$COLLX_RANK" = 0 ]; then
	fault_wait_ready 4
	# Up again by itself after 40 s should this case die first.
	lab_fault_link_down "$CUT" 40
	fault_mark "$LAB_FAULT_T"
fi
fault_loop_end
if [ "$COLLX_RANK" = "$CUT" ]; then
	fault_expect_failed "$(fault_deadline)" 1 3
else
	fault_expect_failed "$(fault_deadline)" "$CUT"
fi
lab_barrier link-cut-ended 60 || lab_fail "barrier"
[ "$COLLX_RANK" = 0 ] && lab_fault_link_up "$CUT"
lab_barrier link-cut-up 60 || lab_fail "barrier"
collx_port 29637
BENCH_TIMEOUT=120
# Connecting across a port that just came back (ARP, rdma_cm) took over
# the fault's 5 s on the debug kernel: the new comm gets 30.
export COLLX_TIMEOUT_MS=30000
collx_bench_ok -d float -o sum --counts 1021 -n 0 -w 0 -c 1 -R 0
fault_finish 30
