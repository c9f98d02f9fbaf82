# DDP, one process per node, under torchrun
# (user/torch/examples/ddp_train.py --backend compare): the same MLP from
# the same seed trained on collx and on gloo, step by step on the same
# batches, for 10 steps.
# Parameters identical on every rank at every step (a hash of them
# all-gathered each step), the two mean losses within 1e-4 of each other
# (relative to max(1, |loss|): the gradient sums differ only by rounding),
# and collx's steady state (steps 3..N, after DDP rebuilt its 3 buckets in
# step 2) all zero copy: every bucket registered once, none anew.
# Prints the loss per step, collx beside gloo, and each one's step time.
# Under TCG most of the time is torch: importing it in torchrun's agent,
# then in its worker (half a minute each on an idle host, 90 to 140 s
# each with 4 nodes and another lab on 2 host cores), and their exits;
# a step takes about a second per backend.  300 s for 30 steps on such a
# loaded host, when 10 show the same (steps 3..10 are the steady state).
# lab-timeout: 600
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/torch/tests/lab.inc"
collx_nodes 4
collx_need_abi11
torch_env 29582
STEPS=10
# torchrun sets these for its worker.
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
set -- torch_run 560 29582
# Into the log as it runs (tee), not at the end: what ran is there even
# when the case's timeout stops it.
OUT=/tmp/81-torch-ddp.$$
{ "$@" "$TORCH_DIR/examples/ddp_train.py" --backend compare --steps $STEPS
  echo $? >"$OUT.rc"; } 2>&1 | tee "$OUT"
rc=$(cat "$OUT.rc")
out=$(cat "$OUT")
rm -f "$OUT" "$OUT.rc"
[ "$rc" = 0 ] || lab_fail "ddp_train.py exited $rc"
if [ "$COLLX_RANK" = 0 ]; then
	printf '%s\n' "$out" | grep -q "^parameters identical on all $COLLX_NRANKS ranks at every step, losses within" ||
		lab_fail "rank 0 did not report identical parameters and matching losses"
	[ "$(printf '%s\n' "$out" | grep -c '^ *[0-9][0-9]*  [0-9]')" = $STEPS ] ||
		lab_fail "not $STEPS steps printed"
fi
collx_no_leak 30
