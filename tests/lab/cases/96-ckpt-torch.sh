# collx.checkpoint, the Python API (user/torch/python/collx/checkpoint.py,
# ctypes over libcollx_ckpt): on N (2..4) nodes, one plain python3 process
# each (user/ckpt/tests/ckpt_torch.py, no torch.distributed), a model's
# and an Adam optimizer's state_dict plus tensors of 7 other dtypes are
# saved async and changed as soon as save returns; after the wait,
# latest names the step and load restores every byte in place; a state of
# 80 tensors takes the packed path (over the library's 64 regions); an
# unknown step is ENOENT.  Most of the time is the import of torch under
# TCG.
# lab-timeout: 600
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
. "$COLLX_SRC/user/torch/tests/lab.inc"
lab_need_ranks "$CKPT_N"
collx_nodes "$CKPT_N"
torch_env 29960
unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
ckpt_cleanup
out=$(COLLX_MASTER_PORT=29961 lab_timeout 540 "$TORCH_PY" \
	"$CKPT/tests/ckpt_torch.py" 2>&1) || { printf '%s\n' "$out"; lab_fail "ckpt_torch.py failed"; }
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "load step 1 from local: every byte of" &&
	printf '%s\n' "$out" | grep -q "load step 2 from local: 80 tensors (packed) right" &&
	printf '%s\n' "$out" | grep -q "unknown step refused" ||
	lab_fail "collx.checkpoint did not save, restore and refuse as expected"
ckpt_cleanup
collx_no_leak 30
