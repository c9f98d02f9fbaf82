# torch.distributed on the collx backend beside torch's gloo in the same
# job (user/torch/tests/vs_gloo.py): every call of the backend, in every
# dtype collx has, compared element for element with the same (or the
# equivalent) gloo call; non-contiguous tensors and lists; uneven
# alltoall; async ops overlapping, futures, two collx groups at once; the
# registration cache (zero copy, freed storages, its bound); a FileStore
# rendezvous of two ranks on each node; then rank 2 stops submitting and
# every other rank's RuntimeError names a rank and the phase (its ring
# neighbours name rank 2) within its own new_group timeout.
# Under TCG most of the time is importing torch (half a minute per node on
# an idle host, over two minutes with 4 nodes and another lab on 2 host
# cores); the checks themselves take 30 to 70 s.
# lab-timeout: 420
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/torch/tests/lab.inc"
collx_nodes 4
collx_need_abi11
torch_env 29580
export CHECK_STUCK_RANK=2 CHECK_TIMEOUT=60
# Straight to the log, not through lab_run: what ran is there even when
# the case's timeout stops it.
timeout -k 5 400 "$TORCH_PY" "$TORCH_DIR/tests/vs_gloo.py" 2>&1 ||
	lab_fail "vs_gloo.py exited $?"
collx_no_leak 30
