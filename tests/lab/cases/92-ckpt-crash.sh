# A crash in the middle of a save leaves the previous checkpoint loadable:
# N (2..4) ranks save tag 1; then the last rank's process starts saving
# tag 2 and is SIGKILLed while its transfers are in flight.  Every
# survivor's save of tag 2 fails (its acknowledgement can never complete)
# and names the failure; restarted, all N (the victim reopening its area,
# which outlived the process) load tag 1 from their own areas, every byte
# checked.  Tag 2 either loads whole and right or fails cleanly on every
# rank.
# lab-timeout: 120
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
lab_need_ranks "$CKPT_N"
collx_nodes "$CKPT_N"
ckpt_cleanup
B=8388608
ckpt_run 29920 --bytes $B save:1:11
if [ "$COLLX_RANK" = $((CKPT_N - 1)) ]; then
	COLLX_MASTER_PORT=29921 lab_timeout 60 "$CKPT_LAB" --bytes $B die:2:22 >die.$$ 2>&1
	rc=$?
	cat die.$$
	rm -f die.$$
	[ "$rc" = 137 ] || lab_fail "the victim was not killed mid-save (exit $rc)"
else
	out=$(ckpt_run 29921 --bytes $B savefail:2:22)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "save tag 2 failed as expected: .*rank $((CKPT_N - 1))" ||
		lab_fail "the failed save does not name the dead rank $((CKPT_N - 1))"
fi
lab_barrier ckpt92-crashed 60 || lab_fail "ranks never reached the restart"
out=$(ckpt_run 29922 --bytes $B load:1:local:11 show)
printf '%s\n' "$out"
ckpt_run 29923 --bytes $B loadany:2:22
ckpt_cleanup
collx_no_leak 30
