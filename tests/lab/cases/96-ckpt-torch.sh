# collx.checkpoint (user/torch/python/collx/checkpoint.py) on 2 nodes:
# (1) user/torch/tests/ckpt_dtypes.py, plain python3 per node: a tensor of
# every dtype (0-d, empty, transposed, NaN, -0.0, extremes), Adam's state
# and plain values saved async and scribbled over at once; latest; load
# every byte back in place and into an empty dict; a wrong shape refused
# naming its key.  (2) user/torch/examples/ddp_ckpt.py under torchrun
# --max_restarts 1: DDP on collx from a fixed seed, a checkpoint every 2
# steps; before step 6 rank 1 SIGKILLs itself, rank 0's allreduce fails
# within the 30 s timeout, torchrun restarts both workers, which resume
# from the committed step 4, train to step 8, then rerun steps 1..8
# uninterrupted in the same process: parameters and Adam's state must be
# bitwise equal (at step 4 and at step 8).  Most of the time is importing
# torch under TCG: 4 imports per node (ckpt_dtypes.py, torchrun's agent,
# two workers), 20 s each on an idle host, 90 to 140 s on a loaded one, and
# the nodes' imports end far apart: init_all's bootstrap waits up to 600 s.
# lab-timeout: 1300
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
. "$COLLX_SRC/user/torch/tests/lab.inc"
[ "$COLLX_NRANKS" -ge 2 ] || lab_skip "needs 2 nodes"
collx_nodes 2
torch_env 29960
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
export COLLX_BOOTSTRAP_TIMEOUT=600
rm -f /dev/shm/collx-ckpt-96-*
OUT=/tmp/96-ckpt-torch.$$
{ COLLX_CKPT_NAME=96-dtypes COLLX_MASTER_PORT=29961 lab_timeout 600 "$TORCH_PY" \
	"$TORCH_DIR/tests/ckpt_dtypes.py"; echo $? >"$OUT.rc"; } 2>&1 | tee "$OUT"
[ "$(cat "$OUT.rc")" = 0 ] && grep -q "every dtype round-trips exactly" "$OUT" ||
	lab_fail "ckpt_dtypes.py failed"
{ COLLX_MASTER_PORT=29963 torch_run 700 29962 --max_restarts 1 \
	"$TORCH_DIR/examples/ddp_ckpt.py" --steps 8 --every 2 --kill-step 6 --kill-rank 1 \
	--expect-step 4; echo $? >"$OUT.rc"; } 2>&1 | tee "$OUT"
rc=$(cat "$OUT.rc")
grep -q "rank $COLLX_RANK attempt 1: resumed from committed step 4" "$OUT" ||
	lab_fail "the restarted worker did not resume from the committed step 4"
grep -q "rank $COLLX_RANK attempt 1: parameters and Adam state bitwise equal" "$OUT" ||
	lab_fail "the resumed run's parameters differ from an uninterrupted run's"
[ "$rc" = 0 ] || lab_fail "torchrun ddp_ckpt.py exited $rc"
rm -f "$OUT" "$OUT.rc" /dev/shm/collx-ckpt-96-*
collx_no_leak 30
