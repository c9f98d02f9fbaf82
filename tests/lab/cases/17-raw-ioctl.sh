# The ioctl ABI without libcollx: COMM_CREATE from a hand-made rank table,
# MR_REG/MR_DEREG, SUBMIT, completions through COLLX_IOC_WAIT and through
# poll() + read(), on 4 ranks and then 3, with every element checked; and
# the debugfs state file of a live communicator.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
lab_run timeout -k 5 200 "$COLLX_SRC/tests/progs/ring_smoke" 4 0x1704
collx_no_leak
lab_barrier raw-3 120 || lab_fail "barrier"
if [ "$COLLX_RANK" -lt 3 ]; then
	lab_run timeout -k 5 200 "$COLLX_SRC/tests/progs/ring_smoke" 3 0x1703
fi
collx_no_leak
