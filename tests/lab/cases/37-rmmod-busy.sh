# rmmod while collx is in use: with allreduces running on every node,
# `rmmod collx` fails with EBUSY ("in use") and changes nothing: the module,
# /dev/collx and the running allreduces carry on.  Once the processes are
# gone the counters, QPs, MRs and pinned pages are back to their baseline
# and rmmod succeeds; the module is loaded again for the cases after.
# lab-timeout: 150
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29639
fault_baseline
fault_loop_start 60
fault_wait_ready 4
for try in 1 2 3; do
	refs=$(cat /sys/module/collx/refcnt)
	out=$(rmmod collx 2>&1) && { lab_run insmod "$COLLX_MODULE"; lab_fail "rmmod collx succeeded with $refs users"; }
	echo "rmmod $try with $refs user(s): $out"
	case $out in
	*"in use"* | *busy* | *EBUSY*) ;;
	*) fault_problem "rmmod said '$out', want EBUSY (in use)" ;;
	esac
	[ -c /dev/collx ] || fault_problem "/dev/collx gone after a refused rmmod"
	sleep 0.5
done
kill -0 "$FAULT_PID" 2>/dev/null || fault_problem "the allreduce loop ended during the rmmod attempts"
grep ' failed after ' "$FAULT_LOOP" && fault_problem "an allreduce failed during the rmmod attempts"
lab_barrier rmmod-tried 60 || lab_fail "barrier"
pkill -x collx_lab
wait "$FAULT_PID"
cat "$FAULT_LOOP"
lab_barrier rmmod-stopped 60 || lab_fail "barrier"
end=$(fault_deadline_in 30)
until [ "$(cat /sys/module/collx/refcnt)" = 0 ]; do
	fault_before "$end" || { fault_problem "collx still has $(cat /sys/module/collx/refcnt) user(s) 30 s after its processes ended"; break; }
	sleep 0.2
done
fault_finish 30
lab_run rmmod collx
lab_run insmod "$COLLX_MODULE"
echo "rmmod refused while in use, then unloaded and reloaded cleanly"
