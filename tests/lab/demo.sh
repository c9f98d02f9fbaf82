#!/bin/bash
# collx demo: a local soft-RoCE cluster running collx.
#   tests/lab/demo.sh [-k 6.1|6.12] [-n NODES]
# Boots the nodes, shows each one's RDMA link and the loaded module, runs
# collx-bench allreduce (fp32 sum, 8 B to 1 MiB) on every node and prints
# rank 0's table, then the link's own figure (ib_write_bw) and Gloo's ring
# allreduce over ibverbs on the same nodes (when libgloo-dev is installed:
# scripts/install-deps.sh --bench), with collx's ratio to each.  Ends with
# DDP training on the nodes, collx beside gloo (tests/lab/demo-ddp.sh; when
# python3-torch is installed).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12
NODES=4
while getopts "k:n:h" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	*) sed -n '2,5p' "$0"; exit 2 ;;
	esac
done
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
cd "$SRC"
make --no-print-directory -s module KVER="$KREL" >/dev/null
make --no-print-directory -s -C user >/dev/null
rm -f .build/bench/gloo_allreduce
if [ -e /usr/include/gloo/allreduce_ring.h ]; then
	make --no-print-directory -s -C tests/bench gloo >/dev/null
else
	echo "demo: no libgloo-dev (scripts/install-deps.sh --bench): no Gloo comparison" >&2
fi
OUT=$SRC/.build/lab/demo-$KERNEL
status=0
tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 900 -q -S -o "$OUT" -- tests/lab/demo-node.sh ||
	status=1
echo
printf '%-6s %-12s %-6s %-7s %-5s %-22s %s\n' NODE ADDRESS DEVICE STATE MTU GID COLLX
for ((i = 0; i < NODES; i++)); do
	cat "$OUT/node$i/summary"
done
if [ -s "$OUT/node0/bench.txt" ]; then
	echo
	echo "collx-bench allreduce on $NODES nodes (rank 0):"
	cat "$OUT/node0/bench.txt"
fi
if [ -s "$OUT/node0/write_bw.txt" ]; then
	echo
	echo "ib_write_bw -b, node0 <-> node1 (the link's own figure, both ways at once):"
	cat "$OUT/node0/write_bw.txt"
	# busbw at the largest size (from its time, for more digits than the
	# table prints) over the link's own per-direction rate.
	bus=$(awk -v n="$NODES" '$1 ~ /^[0-9]+$/ && NF >= 13 && $6 > 0 {
		b = $1 / ($6 * 1e3) * 2 * (n - 1) / n } END { print b }' "$OUT/node0/bench.txt")
	bw=$(awk '$1 == 1048576 { print $4 }' "$OUT/node0/write_bw.txt")
	if [ -n "$bus" ] && [ -n "$bw" ]; then
		awk -v bus="$bus" -v bw="$bw" 'BEGIN {
			dir = bw / 2 * 1048576 / 1e9	# perftest MB/s (2^20), both ways
			ratio = dir > 0 ? bus / dir : 0
			printf "\ncollx busbw at 1 MiB: %.4f GB/s; ib_write_bw per direction: %.4f GB/s; ratio %.2f\n", bus, dir, ratio }'
	fi
fi
if [ -s "$OUT/node0/gloo.txt" ]; then
	echo
	echo "Gloo allreduce_ring over ibverbs on the same $NODES nodes (rank 0):"
	cat "$OUT/node0/gloo.txt"
	gbus=$(awk '$1 == 1048576 { print $6 }' "$OUT/node0/gloo.txt")
	if [ -n "${bus:-}" ] && [ -n "$gbus" ]; then
		awk -v bus="$bus" -v g="$gbus" 'BEGIN {
			ratio = g > 0 ? bus / g : 0
			printf "\ncollx busbw at 1 MiB: %.4f GB/s; Gloo: %.4f GB/s; ratio %.2f\n", bus, g, ratio }'
	fi
fi
if [ -f /usr/lib/python3/dist-packages/torch/__init__.py ] && [ "$NODES" -ge 2 ]; then
	echo
	tests/lab/demo-ddp.sh -k "$KERNEL" -n "$NODES" -m "$SRC/build/$KREL/kmod/collx.ko" ||
		status=1
else
	echo "demo: no python3-torch (scripts/install-deps.sh) or one node: no DDP training" >&2
fi
exit $status
