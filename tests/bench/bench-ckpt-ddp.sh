#!/bin/bash
# collx checkpoint bench, the training side (make bench-ckpt): DDP's step
# time while collx.checkpoint replicates, against the same steps without a
# checkpoint, in one lab boot (user/torch/examples/ddp_ckpt_bench.py under
# torchrun, one process per node).  Prints rank 0's lines: both step times,
# the ratio against issue 38's target (<= 1.2), each save's pause and
# replication.  A benchmark: timings never fail it; a failed run does.
#
#   tests/bench/bench-ckpt-ddp.sh [-k 6.1|6.12] [-n NODES] [-- ARGS for ddp_ckpt_bench.py]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${1:-}" = --node ]; then
	# On each node (lab.sh runs this with --node ARGS...).
	shift
	. "$COLLX_SRC/tests/lab/lib.sh"
	. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
	. "$COLLX_SRC/user/torch/tests/lab.inc"
	torch_env 29970
	unset RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
	export COLLX_BOOTSTRAP_TIMEOUT=600 COLLX_CKPT_NAME=bench-ddp COLLX_MASTER_PORT=29971
	rm -f /dev/shm/collx-ckpt-bench-ddp-*
	torch_run 1500 29970 "$TORCH_DIR/examples/ddp_ckpt_bench.py" "$@" \
		>"$COLLX_NODE_DIR/ddp-ckpt.txt" 2>&1
	rc=$?
	rm -f /dev/shm/collx-ckpt-bench-ddp-*
	exit $rc
fi

KERNEL=6.12
NODES=4
while getopts "k:n:h" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	*) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" != -- ] || shift
case $NODES in [2-4]) ;; *) echo "bench-ckpt-ddp: -n wants 2..4 nodes" >&2; exit 2 ;; esac
cd "$SRC"
# shellcheck disable=SC2012 # as demo.sh: the newest of the series
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
make --no-print-directory -s module KVER="$KREL" >/dev/null
for d in user user/ckpt user/torch; do
	make --no-print-directory -s -C "$d" >/dev/null
done
OUT=$SRC/.build/bench/ckpt-ddp-$KERNEL
status=0
tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 1600 -q -S -o "$OUT" -- \
	tests/bench/bench-ckpt-ddp.sh --node "$@" || status=1
echo "DDP step time while a checkpoint replicates ($NODES nodes, kernel $KREL, rank 0):"
if [ -s "$OUT/node0/ddp-ckpt.txt" ]; then
	grep '^ddp-ckpt: ' "$OUT/node0/ddp-ckpt.txt" || { tail -n 20 "$OUT/node0/ddp-ckpt.txt"; status=1; }
else
	echo "no output from node0 (see $OUT)"
	status=1
fi
exit $status
