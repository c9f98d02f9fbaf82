# A process killed mid-allreduce (SIGKILL on rank 1): every other rank's
# allreduce fails within the comm's timeout + 1 s with an error naming
# rank 1; on every node the collx counters, QPs, MRs and pinned pages
# return to their baseline; no kernel error (run-cases checks dmesg).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29632
export COLLX_TIMEOUT_MS=5000
VICTIM=1
fault_baseline
fault_loop_start 60
if [ "$COLLX_RANK" = "$VICTIM" ]; then
	fault_wait_ready 4
	pid=$(pgrep -x collx_lab) || lab_fail "no collx_lab process"
	fault_mark_here
	kill -KILL "$pid"
	fault_mark_publish
	echo "killed rank $VICTIM (pid $pid) mid-allreduce"
fi
fault_loop_end
[ "$COLLX_RANK" = "$VICTIM" ] || fault_expect_failed "$(fault_deadline)" "$VICTIM"
fault_finish 30
