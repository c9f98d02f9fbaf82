# The RDMA device goes away mid-allreduce (`rdma link delete rxe0` on
# node0): node0's allreduce ends with ENODEV, its neighbours' with a reset
# naming node0, nothing hangs or leaks, and after rxe0 comes back a new
# communicator works.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29633
export COLLX_TIMEOUT_MS=20000
collx_loop_start rm
pid=$LOOP_PID
if [ "$COLLX_RANK" = 0 ]; then
	collx_loop_wait_ready
	rdma link delete rxe0 || lab_fail "rdma link delete rxe0"
	echo "deleted rxe0 mid-allreduce"
fi
wait "$pid"
rc=$?
cat loop.$$
[ "$rc" = 3 ] || { rm -f loop.$$; lab_fail "rank $COLLX_RANK exited $rc, want 3 (an allreduce failed)"; }
if [ "$COLLX_RANK" = 0 ]; then
	grep -q 'device' loop.$$ || { rm -f loop.$$; lab_fail "node0's error does not say the device went away"; }
	dmesg | grep -q 'collx: rxe0: removed (its communicators failed with ENODEV)' ||
		lab_fail "no removal line in dmesg"
	rdma link add rxe0 type rxe netdev eth0 || lab_fail "rdma link add rxe0"
	n=0
	until rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'; do
		n=$((n + 1)); [ "$n" -lt 100 ] || lab_fail "rxe0 not ACTIVE again"
		sleep 0.1
	done
fi
rm -f loop.$$
collx_no_leak 30
lab_barrier rm-back 120 || lab_fail "barrier"
# The fabric and collx work again: an exact allreduce on a new comm (a
# collective, so no rank tears down before the others are connected).
collx_port 29634
BENCH_TIMEOUT=150
collx_bench_ok -d float -o sum -C 1021 -n 0 -w 0 -c 1 -R 0
collx_no_leak 30
