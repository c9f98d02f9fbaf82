# A crash in the middle of a save leaves the previous checkpoint loadable,
# also right after a rollback: N (2..4) ranks save tags 1 and 2 (8 MiB
# shards: the snapshot copies with two threads), both committed globally.
# Restarted, they roll back to tag 1 (every byte checked) and save tag 3;
# the last rank's process is SIGKILLed right after its snapshot, with the
# replication in flight.  Every survivor's save of tag 3 fails (its
# acknowledgement can never complete) and names the dead rank.  Restarted
# again (the victim reopening its area, which outlived the process), tag
# 3 is restorable nowhere (never globally committed) and tag 1, the
# checkpoint restored from, still loads from every own area: the save of
# tag 3 overwrote tag 2's slot, though tag 2 is newer.  Then tag 5 saves
# in a new epoch above tag 1's; collx_ckpt_latest and collx-ckptd
# --latest (reading the area file) name it.
# lab-timeout: 300
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
lab_need_ranks "$CKPT_N"
collx_nodes "$CKPT_N"
ckpt_cleanup
B=8388608
VICTIM=$((CKPT_N - 1))

# ckpt_crash PORT TAG PAT [STEPS BEFORE]: the victim dies mid-save, the
# others' saves must fail naming it
ckpt_crash() {
	local port=$1 tag=$2 pat=$3 out rc
	shift 3
	if [ "$COLLX_RANK" = $VICTIM ]; then
		COLLX_MASTER_PORT=$port lab_timeout 90 "$CKPT_LAB" --bytes $B "$@" die:$tag:$pat \
			>die.$$ 2>&1
		rc=$?
		cat die.$$
		rm -f die.$$
		[ "$rc" = 137 ] || lab_fail "the victim was not killed mid-save of tag $tag (exit $rc)"
	else
		out=$(ckpt_run $port --bytes $B "$@" savefail:$tag:$pat) ||
			{ printf '%s\n' "$out"; lab_fail "the survivors' run failed"; }
		printf '%s\n' "$out"
		printf '%s\n' "$out" | grep -q "save tag $tag failed as expected: .*rank $VICTIM" ||
			lab_fail "the failed save of tag $tag does not name the dead rank $VICTIM"
	fi
}

out=$(ckpt_run 29920 --bytes $B save:1:11 save:2:22) ||
	{ printf '%s\n' "$out"; lab_fail "saving tags 1 and 2 failed"; }
printf '%s\n' "$out"
# the rollback, then the save that dies
ckpt_crash 29921 3 33 load:1:local:11
lab_barrier ckpt92-crashed 60 || lab_fail "ranks never reached the restart"
out=$(ckpt_run 29922 --bytes $B loadfail:3:ENOENT load:1:local:11 save:5:55 show latest:5) ||
	{ printf '%s\n' "$out"; lab_fail "tag 1 did not survive the save that died after its restore"; }
printf '%s\n' "$out"
e1=$(printf '%s\n' "$out" | sed -n "s/.*entry 0 (rank $COLLX_RANK's): complete, tag 1, seq [0-9]*, epoch \([0-9]*\), globally committed/\1/p")
e5=$(printf '%s\n' "$out" | sed -n "s/.*entry 0 (rank $COLLX_RANK's): complete, tag 5, seq [0-9]*, epoch \([0-9]*\), globally committed/\1/p")
echo "epochs: tag 1 $e1, tag 5 $e5"
[ -n "$e1" ] && [ -n "$e5" ] && [ "$e5" -gt "$e1" ] ||
	lab_fail "tag 5 was not saved, globally committed, in a new epoch above tag 1's"
# the area file, read by the CLI: this rank's view of what it can restore
out=$(lab_run "$CKPTD" --area "$(ckpt_area)" --latest) ||
	{ printf '%s\n' "$out"; lab_fail "collx-ckptd --latest failed"; }
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "^last global commit: epoch $e5 tag 5 " &&
	printf '%s\n' "$out" | grep -q "^own shard (rank $COLLX_RANK): epoch $e5 tag 5," ||
	lab_fail "collx-ckptd --latest does not name tag 5 of epoch $e5"
ckpt_cleanup
collx_no_leak 30
