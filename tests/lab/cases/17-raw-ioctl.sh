# The ioctl ABI without libcollx (tests/progs/ring_smoke.c): COMM_CREATE
# from a hand-made rank table with a secret, MR_REG/MR_DEREG, SUBMIT
# forced onto the ring with each record's algorithm and memory path,
# completions through COLLX_IOC_WAIT and through poll() + read(), a
# SUBMIT_GROUP, EOPNOTSUPP for an algorithm that cannot run a collective,
# on 4 ranks and then 3, every element checked; the debugfs state file of
# a live communicator; and a rank proving another secret: no comm comes up
# and every rank's COMM_CREATE names a peer.  (The dispatch and the limits
# of every 1.1 ioctl: tests/progs/uapi_version.c, case 03.)
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_need_abi11
lab_run lab_timeout 200 "$COLLX_SRC/tests/progs/ring_smoke" 4 0x1704
collx_no_leak
lab_barrier raw-3 120 || lab_fail "barrier"
if [ "$COLLX_RANK" -lt 3 ]; then
	lab_run lab_timeout 200 "$COLLX_SRC/tests/progs/ring_smoke" 3 0x1703
fi
collx_no_leak
lab_barrier raw-secret 120 || lab_fail "barrier"
if [ "$COLLX_RANK" -lt 3 ]; then
	lab_run lab_timeout 60 "$COLLX_SRC/tests/progs/ring_smoke" 3 0x1713 badsecret 2
fi
collx_no_leak
