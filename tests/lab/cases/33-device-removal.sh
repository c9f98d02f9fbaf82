# The RDMA device goes away mid-allreduce (`rdma link delete rxe0` on
# node0): node0's allreduce ends with ENODEV, every other rank's within
# the comm's timeout + 1 s naming rank 0; nothing hangs or leaks (collx
# counters, QPs, MRs, pins back to baseline), and once rxe0 is back a new
# communicator gives an exact allreduce.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29633
export COLLX_TIMEOUT_MS=5000
fault_baseline
fault_loop_start 60
if [ "$COLLX_RANK" = 0 ]; then
	fault_wait_ready 4
	t0=$(date +%s.%N)
	fault_mark_here
	rdma link delete rxe0 || lab_fail "rdma link delete rxe0"
	fault_mark_publish
	echo "deleted rxe0 mid-allreduce in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
fi
fault_loop_end
if [ "$COLLX_RANK" = 0 ]; then
	fault_expect_failed "$(fault_deadline)" any
	case $FAULT_ERR in
	*[Dd]evice*) ;;
	*) fault_problem "node0's error '$FAULT_ERR' does not say the device went away" ;;
	esac
	dmesg | grep 'collx: rxe0' | tail -n 3
	rdma link add rxe0 type rxe netdev eth0 || lab_fail "rdma link add rxe0"
	n=0
	until rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'; do
		n=$((n + 1)); [ "$n" -lt 100 ] || lab_fail "rxe0 not ACTIVE again"
		sleep 0.1
	done
else
	fault_expect_failed "$(fault_deadline)" 0
fi
lab_barrier rm-back 120 || lab_fail "barrier"
# The fabric and collx work again: an exact allreduce on a new comm (a
# collective, so no rank tears down before the others are connected).
collx_port 29634
BENCH_TIMEOUT=150
collx_bench_ok -d float -o sum --counts 1021 -n 0 -w 0 -c 1 -R 0
fault_finish 30
