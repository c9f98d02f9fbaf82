# A rank that joins but never submits (rank 2): nothing hangs.  Its ring
# neighbours wait for it — rank 3 for data, rank 1 for credits — and
# debugfs collx/<comm>/state says so while they wait.  Rank 1 has the
# shortest comm timeout: its allreduce ends ETIMEDOUT naming rank 2, and
# it hangs up; rank 3's ends naming rank 2 too (its own timeout, or rank
# 2's comm failing and hanging up), and rank 0's names rank 2 as well:
# its neighbours' ABORTs say so.  The staggered timeouts keep the order
# whatever the emulator's timing.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/fault/lab-lib.sh"
collx_nodes 4
collx_port 29635
STUCK=2
case $COLLX_RANK in
1) export COLLX_TIMEOUT_MS=6000 ;;
3) export COLLX_TIMEOUT_MS=10000 ;;
*) export COLLX_TIMEOUT_MS=15000 ;;
esac
fault_baseline
READY=$COLLX_LAB_DIR/barrier/stall-ready-$COLLX_RANK
OUT=stall.$$
rm -f "$READY"
lab_timeout 90 "$LABPROG" stall "$STUCK" "$READY" >"$OUT" 2>&1 &
pid=$!
state=
if [ "$COLLX_RANK" != "$STUCK" ]; then
	n=0
	until [ -e "$READY" ]; do
		n=$((n + 1))
		[ "$n" -lt 600 ] || { cat "$OUT"; lab_fail "no allreduce submitted in 60 s"; }
		sleep 0.1
	done
	# debugfs while the neighbours wait: polled from the submit until it
	# shows what this rank waits for, with builtins only (a loaded guest
	# starts processes slowly, and rank 1's wait ends at its 6 s timeout).
	case $COLLX_RANK in
	1) want='waiting for rank 2 (credits)|waiting for rank 2 (acks)' ;;
	3) want='waiting for rank 2 (data)' ;;
	*) want='waiting for rank' ;;
	esac
	n=0
	while [ -z "$state" ] && [ "$n" -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
		n=$((n + 1))
		for f in /sys/kernel/debug/collx/*/state; do
			s=
			while IFS= read -r l; do
				s="$s$l
"
			done 2>/dev/null <"$f"
			IFS='|'
			for w in $want; do
				case $s in *"$w"*) state=$s ;; esac
			done
			unset IFS
		done
		[ -n "$state" ] || sleep 0.1
	done
	printf '%s' "$state"
fi
wait "$pid"
rc=$?
out=$(cat "$OUT")
rm -f "$OUT"
printf '%s\n' "$out"
[ "$rc" = 0 ] || lab_fail "collx_lab stall exited $rc"
# "after" counts from the submit: the fault is there from the start.
printf '%s\n' "$out" | sed -n 's/^rank \([0-9]*\): allreduce ended after \([0-9.]*\) s: \(.*\), failed_rank \([0-9-]*\), phase.*/fault-result 34-stuck-rank rank=\1 outcome=failed op=0 after=\2 blames=\4 err="\3"/p'
case $COLLX_RANK in
1)	printf '%s\n' "$state" | grep -Eq 'waiting for rank 2 \((credits|acks)\)' ||
		lab_fail "debugfs state does not say rank 1 waits for rank 2's credits"
	printf '%s\n' "$out" | grep -q 'timed out .*failed_rank 2, phase' ||
		lab_fail "rank 1's allreduce did not time out naming rank 2" ;;
3)	printf '%s\n' "$state" | grep -q 'waiting for rank 2 (data)' ||
		lab_fail "debugfs state does not say rank 3 waits for rank 2's data"
	printf '%s\n' "$out" | grep -q 'failed_rank 2, phase' ||
		lab_fail "rank 3's allreduce does not name rank 2" ;;
0)	printf '%s\n' "$out" | grep -Eq 'failed_rank 2, phase' ||
		lab_fail "rank 0's allreduce does not name rank 2 (its neighbours' ABORTs name it)" ;;
esac
dmesg | grep 'made no progress' || true
fault_finish 30
