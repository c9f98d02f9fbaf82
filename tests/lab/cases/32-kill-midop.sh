# A process killed mid-allreduce: the others' allreduces fail (naming a
# peer) instead of hanging, every node's counters go back to 0, and no
# kernel error is logged (run-cases checks dmesg; 90-rmmod unloads).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29632
export COLLX_TIMEOUT_MS=20000
collx_loop_start kill
pid=$LOOP_PID
if [ "$COLLX_RANK" = 1 ]; then
	collx_loop_wait_ready
	pid_c=$(pgrep -P "$pid" collx_lab || echo "$pid")
	kill -9 $pid_c
	echo "killed rank 1 (pid $pid_c) mid-allreduce"
fi
wait "$pid"
rc=$?
cat loop.$$
if [ "$COLLX_RANK" != 1 ]; then
	[ "$rc" = 3 ] || { rm -f loop.$$; lab_fail "rank $COLLX_RANK exited $rc, want 3 (an allreduce failed)"; }
	grep -q 'failed after' loop.$$ || { rm -f loop.$$; lab_fail "no failure message"; }
fi
rm -f loop.$$
collx_no_leak 30
echo "counters back to 0: $(tr '\n' ' ' <"$STATS")"
