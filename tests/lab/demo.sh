#!/bin/bash
# collx demo: a local soft-RoCE cluster running collx.
#   tests/lab/demo.sh [-k 6.1|6.12] [-n NODES] [-D]
# Boots the nodes, shows each one's RDMA link and the loaded module, runs
# collx-bench allreduce (fp32 sum, 8 B to 1 MiB) on every node and prints
# rank 0's table, then the link's own figure (ib_write_bw) and Gloo's ring
# allreduce over ibverbs on the same nodes (when libgloo-dev is installed:
# scripts/install-deps.sh --bench), with collx's ratio to each.  Draws
# two pictures (python3-matplotlib): busbw against size for collx, Gloo
# and the link, and the timeline of a collx-netmon run (every rank's ops
# as bars, the pause frames injected meanwhile as marks), and says where
# they are.  Ends with DDP training on the nodes, collx beside gloo
# (tests/lab/demo-ddp.sh; when python3-torch is installed; -D: not).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12
NODES=4
DDP=1
while getopts "k:n:Dh" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	D) DDP=0 ;;
	*) sed -n '2,5p' "$0"; exit 2 ;;
	esac
done
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
cd "$SRC"
# Everything the nodes run, from this tree: a fresh clone has none of it.
tests/lab/demo-build.sh -k "$KERNEL" $([ "$DDP" = 1 ] || echo -D)
OUT=$SRC/.build/lab/demo-$KERNEL
status=0
# with the switch agent (tests/netmon/switch-agent.sh): it injects the
# pause frames of the timeline
tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 900 -q -o "$OUT" -- tests/lab/demo-node.sh ||
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

# The pictures: busbw from collx-bench's nccl-tests JSON beside a series
# document of Gloo's figures and the link's; the netmon timeline.
PIC=$OUT/pictures
rm -rf "$PIC"
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
	echo "demo: no python3-matplotlib (scripts/install-deps.sh): no pictures" >&2
elif [ -s "$OUT/node0/bench.json" ]; then
	mkdir -p "$PIC"
	/usr/bin/python3 - "$OUT/node0" "$PIC/gloo-link.json" <<'PY' || status=1
import json, os, sys
node, out = sys.argv[1], sys.argv[2]
doc = {"series": [], "lines": []}
pts = []
if os.path.exists(node + "/gloo.txt"):
    for line in open(node + "/gloo.txt"):
        f = line.split()
        if len(f) >= 6 and f[0].isdigit():
            pts.append([int(f[0]), float(f[5])])  # bytes, busbw GB/s
if pts:
    doc["series"].append({"name": "Gloo ring (ibverbs)", "points": pts})
if os.path.exists(node + "/write_bw.txt"):
    for line in open(node + "/write_bw.txt"):
        f = line.split()
        if len(f) >= 4 and f[0] == "1048576":
            # perftest MB/sec (2^20), both directions at once: per direction
            doc["lines"].append({"name": "ib_write_bw -b at 1 MiB, per direction",
                                 "GBps": float(f[3]) * 1048576 / 1e9 / 2})
json.dump(doc, open(out, "w"))
PY
	if out=$(/usr/bin/python3 tests/plots/busbw.py --title "allreduce fp32 sum, $NODES ranks, kernel $KREL" 		-o "$PIC/busbw.svg" "$OUT/node0/bench.json" "$PIC/gloo-link.json"); then
		echo "picture: $out"
	else
		echo "demo: busbw picture: $out" >&2
		status=1
	fi
	set -- "$OUT"/node*/netmon/demo.events
	if [ -s "$1" ]; then
		if out=$(/usr/bin/python3 tests/plots/timeline.py --align op -o "$PIC/netmon-timeline.svg" "$@"); then
			echo "picture: $out"
		else
			echo "demo: timeline picture: $out" >&2
			status=1
		fi
	else
		echo "demo: no collx-netmon events (see $OUT/node0/netmon and switch.log): no timeline" >&2
		status=1
	fi
fi

if [ "$DDP" = 0 ]; then
	:
elif [ -f /usr/lib/python3/dist-packages/torch/__init__.py ] && [ "$NODES" -ge 2 ]; then
	echo
	tests/lab/demo-ddp.sh -k "$KERNEL" -n "$NODES" -m "$SRC/build/$KREL/kmod/collx.ko" ||
		status=1
else
	echo "demo: no python3-torch (scripts/install-deps.sh) or one node: no DDP training" >&2
fi
exit $status
