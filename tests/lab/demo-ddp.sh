#!/bin/bash
# collx demo: DDP training on the lab's nodes, collx beside gloo.
#   tests/lab/demo-ddp.sh [-k 6.1|6.12] [-n NODES] [-s STEPS] [-m MODULE.ko]
# Builds libcollx and the torch backend (make -C user/torch), boots the
# nodes and runs user/torch/examples/ddp_train.py --backend compare under
# torchrun, one process per node: the same model from the same seed on
# collx and on gloo (torch's, over TCP), step by step.  Prints rank 0's
# table: the loss per step of each, and the time per step of each.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" = --node ]; then
	# On each node (lab.sh runs this with --node STEPS).
	. "$COLLX_SRC/tests/lab/lib.sh"
	. "$COLLX_SRC/user/torch/tests/lab.inc"
	torch_env 29590
	unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
	torch_run 600 29590 "$TORCH_DIR/examples/ddp_train.py" --backend compare --steps "$2" \
		>"$COLLX_NODE_DIR/ddp.txt" 2>&1
	exit
fi

KERNEL=6.12
NODES=4
STEPS=30
MODULE=
while getopts "k:n:s:m:h" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	s) STEPS=$OPTARG ;;
	m) MODULE=$OPTARG ;;
	*) sed -n '2,8p' "$0"; exit 2 ;;
	esac
done
case $STEPS in '' | *[!0-9]*) echo "demo-ddp: -s wants a number of steps" >&2; exit 2 ;; esac
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
cd "$SRC"
if [ -z "$MODULE" ]; then
	make --no-print-directory -s module KVER="$KREL" >/dev/null
	MODULE=$SRC/build/$KREL/kmod/collx.ko
fi
make --no-print-directory -s -C user >/dev/null
make --no-print-directory -s -C user/torch >/dev/null
OUT=$SRC/.build/lab/demo-ddp-$KERNEL
status=0
tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 900 -q -S -o "$OUT" -m "$MODULE" -- \
	tests/lab/demo-ddp.sh --node "$STEPS" || status=1
echo
echo "DDP on $NODES nodes, collx beside gloo (rank 0; ms: each model's own step):"
if [ -s "$OUT/node0/ddp.txt" ]; then
	# torchrun's own banner is not the demo's.
	grep -v -e '^WARNING:torch.distributed.run' -e '^\*\{5,\}' -e '^Setting OMP_NUM_THREADS' \
		"$OUT/node0/ddp.txt"
else
	echo "no output from node0 (see $OUT)"
	status=1
fi
exit $status
