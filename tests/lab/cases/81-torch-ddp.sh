# DDP, one process per node (user/torch/examples/ddp_train.py --backend
# compare; under torchrun on 6.12): the same MLP from the same seed trained
# on collx and on gloo, step by step on the same batches, for 30 steps
# (6 on 6.1).
# Parameters identical on every rank at every step (a hash of them
# all-gathered each step), the two mean losses within 1e-4 of each other
# (relative to max(1, |loss|): the gradient sums differ only by rounding),
# and collx's steady state (steps 3..N, after DDP rebuilt its 3 buckets in
# step 2) all zero copy: every bucket registered once, none anew.
# Prints the loss per step, collx beside gloo, and each one's step time.
# Under TCG most of the time is torch: importing it in torchrun's agent,
# then in its worker (half a minute each on an idle host, 90 to 140 s
# each with 4 nodes and another lab on 2 host cores), and their exits;
# the 30 steps take about 80 s (about a second per step per backend).
# 380 s in all on such a loaded host.
# lab-timeout: 600
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/torch/tests/lab.inc"
# Both kernels: on 6.12 under torchrun for 30 steps; on the others 6 steps
# (steps 3..6 are still DDP's steady state), the worker started directly
# with torch's env:// rendezvous, as torchrun would start it, without
# torchrun's agent: an import of torch and a step cost tens of seconds of
# TCG, and make check's time is bounded.
collx_nodes 4
collx_need_abi11
torch_env 29582
case $(uname -r) in
6.12.*)
	STEPS=30
	# torchrun sets these for its worker.
	unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
	set -- torch_run 560 29582 ;;
*)
	STEPS=6
	export LOCAL_RANK=0 LOCAL_WORLD_SIZE=1
	set -- timeout -k 5 560 "$TORCH_PY" ;;
esac
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
