# A peer VM killed outright: the switch SIGKILLs node3's QEMU mid-allreduce,
# so no disconnect ever reaches its peers.  Every survivor's allreduce
# fails within the comm's timeout + 1 s with an error naming rank 3, and
# their collx counters, QPs, MRs and pinned pages are back to baseline.
# The run's last case (no later case could use node3): lab.sh reports
# node3 as killed by request, and barriers stop waiting for it.  Every
# rank has the same timeout: rank 1, not a ring neighbour of rank 3, times
# out with rank 3's neighbours, and names rank 3 because the neighbour it
# waits for answers that it waits for rank 3 (kmod/ask.c).
# lab-last
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29640
export COLLX_TIMEOUT_MS=5000
VICTIM=3
# Last of the run: a case before may have left collx unloaded (95-dkms).
[ -c /dev/collx ] || lab_run insmod "$COLLX_MODULE"
fault_baseline
fault_loop_start 60
if [ "$COLLX_RANK" = 0 ]; then
	fault_wait_ready 4
	lab_fault_kill_node "$VICTIM"
	fault_mark "$LAB_FAULT_T"
fi
# node3 ends here, inside its allreduce
fault_loop_end
fault_expect_failed "$(fault_deadline)" "$VICTIM"
lab_is_killed "$VICTIM" || fault_problem "node$VICTIM is not recorded as killed"
lab_barrier vm-kill-after 60 || fault_problem "survivors' barrier waited for the killed node"
fault_finish 30
