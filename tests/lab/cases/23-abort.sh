# collx_comm_get_async_error() sees a comm fail (rank 1 never submits)
# without any wait; collx_comm_abort() from a watchdog thread ends the
# main thread's wait at once (ECANCELED) instead of the 30 s timeout, as
# PyTorch's watchdog aborts; a new comm works afterwards.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29624
collx_need_abi11
lab_run lab_timeout 120 "$LABPROG" abort 1
collx_no_leak 30
