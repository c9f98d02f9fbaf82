#!/bin/bash
# collx demo: a local soft-RoCE cluster running collx.
#   tests/lab/demo.sh [-k 6.1|6.12] [-n NODES]
# Boots the nodes, shows each one's RDMA link and the loaded module, and
# measures the link between node0 and node1 with ib_write_bw.
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
OUT=$SRC/.build/lab/demo-$KERNEL
tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 300 -q -o "$OUT" -- tests/lab/demo-node.sh
echo
printf '%-6s %-12s %-6s %-7s %-5s %-22s %s\n' NODE ADDRESS DEVICE STATE MTU GID COLLX
for ((i = 0; i < NODES; i++)); do
	cat "$OUT/node$i/summary"
done
if [ -s "$OUT/node0/write_bw.txt" ]; then
	echo
	echo "ib_write_bw, node0 -> node1 (the link's own figure):"
	cat "$OUT/node0/write_bw.txt"
fi
