# The fd closed from another thread during a wait: rank 0 blocks in
# COLLX_IOC_WAIT on an allreduce that rank 1 never joins, and a second
# thread close()s the fd.  close() returns at once, the wait ends within
# the comm's timeout + 1 s, the fd is gone, and once the wait has returned
# (and with it the file's last reference) everything the fd held is freed:
# counters, QPs, MRs and pinned pages back to their baseline on both nodes.
# lab-timeout: 90
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 2
TIMEOUT_MS=5000
PROG=$FAULT_TOOLS/closewait
[ -x "$PROG" ] || lab_fail "$PROG not built (make -C tests/fault)"
fault_baseline
if [ "$COLLX_RANK" = 0 ]; then
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$FAULT_DIR/secret"
fi
lab_barrier closewait-secret 60 || lab_fail "barrier"
out=$(lab_timeout 60 "$PROG" "$COLLX_RANK" "$TIMEOUT_MS" "$(cat "$FAULT_DIR/secret")" \
	"$(lab_addr 0)" "$(lab_addr 1)" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$COLLX_RANK" = 0 ]; then
	printf '%s\n' "$out" | sed -n 's/^closewait rank=0 close_at=\([0-9.]*\) wait_ended=\([0-9.]*\) ret=\([-0-9]*\) errno=\([0-9]*\) status=\([-0-9]*\) failed_rank=\([-0-9]*\)$/fault-result 38-closewait rank=0 outcome=status\5 op=0 after=\2 blames=\6 err="close at \1 s, wait ret \3 errno \4"/p'
fi
[ "$rc" = 0 ] || fault_problem "closewait exited $rc"
fault_finish 30
