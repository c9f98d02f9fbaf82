#!/bin/bash
# collx bench (make bench): collx's collectives against Gloo's over
# ibverbs and against the link (ib_write_bw), on the soft-RoCE lab, one
# boot per node count.  See Documentation/bench.md.
#
#   tests/bench/bench.sh [-k 6.1|6.12] [-n "2 4"] [-m MODULE.ko] [-B] [-o DIR]
#
# -k: the lab's kernel (6.12); -n: the node counts, one boot each ("2 4");
# -m: boot this collx.ko instead of building build/<release>/kmod/collx.ko;
# -B: build nothing (use the built libcollx, collx-bench, gloo_bench);
# -o: where the lab runs go (.build/bench/lab).  COLLX_LAB_LOCK=FILE
# wraps each boot in flock FILE (a shared machine's lab lock).
#
# Prints, per node count, the link, the table, the targets of issue 9
# (PASS/MISS, measured in that boot) and, on 4 or more nodes, the
# algorithm crossovers; writes .build/bench/bench-<N>nodes.json (and the
# text beside it) and, with python3-matplotlib, a busbw picture per
# collective: .build/bench/busbw-<N>nodes-<collective>.svg.  Exit status 1 when a boot, a run or a check failed;
# timings never fail it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12
COUNTS="2 4"
MODULE=
BUILD=1
LABOUT=
while getopts "k:n:m:Bo:h" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) COUNTS=$OPTARG ;;
	m) MODULE=$(readlink -f "$OPTARG") ;;
	B) BUILD=0 ;;
	o) LABOUT=$OPTARG ;;
	*) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
for n in $COUNTS; do
	case $n in [2-9] | 1[0-6]) ;; *) echo "bench: -n wants node counts 2..16, not '$n'" >&2; exit 2 ;; esac
done
cd "$SRC"
OUT=$SRC/.build/bench
: "${LABOUT:=$OUT/lab}"
mkdir -p "$OUT" "$LABOUT"
# shellcheck disable=SC2012 # as demo.sh: the newest of the series
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
START=$(date +%s)

if [ "$BUILD" = 1 ]; then
	[ -n "$MODULE" ] || make --no-print-directory -s module KVER="$KREL" >/dev/null
	make --no-print-directory -s -C user >/dev/null
	if [ -e /usr/include/gloo/allreduce_ring.h ]; then
		make --no-print-directory -s -C tests/bench -f gloo.mk gloo-bench >/dev/null
	else
		rm -f "$OUT/gloo_bench"
		echo "bench: no libgloo-dev (scripts/install-deps.sh --bench): no Gloo columns" >&2
	fi
fi
LAB=(tests/lab/lab.sh)
[ -z "${COLLX_LAB_LOCK:-}" ] || LAB=(flock "$COLLX_LAB_LOCK" tests/lab/lab.sh)
MOD=()
[ -z "$MODULE" ] || MOD=(-m "$MODULE")

# busbw against size for each collective of a results document (SVG):
# collx per algorithm, Gloo, the link (tests/plots/busbw.py)
plots() {
	local c out
	[ -s "$1" ] || return 0
	if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
		echo "bench: no python3-matplotlib: no pictures" >&2
		return 0
	fi
	for c in allreduce broadcast reduce allgather reduce_scatter alltoall; do
		grep -q "\"collx [a-z0-9-]* $c\"" "$1" || continue
		out=$(/usr/bin/python3 tests/plots/busbw.py --coll "$c" -o "$2-$c.svg" "$1") ||
			{ echo "bench: plot of $c: $out" >&2; status=1; continue; }
		echo "picture: $out"
	done
}

status=0
for n in $COUNTS; do
	run=$LABOUT/$KERNEL-${n}nodes
	node_args=()
	# the sizes below the table's: the algorithm crossovers (4+ nodes)
	[ "$n" -lt 4 ] || node_args=(-x "8,1024")
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s)
	# -S: no switch agent (nothing to inject; its polling would cost CPU)
	"${LAB[@]}" -k "$KERNEL" -n "$n" -t 1500 -q -S "${MOD[@]}" -o "$run" -- \
		tests/bench/bench-node.sh "${node_args[@]}" || status=1
	t1=$(date +%s)
	accel=$(sed -n 's/.* x [0-9]* vCPU, \([a-z]*\):.*/\1/p' "$run/summary.txt" 2>/dev/null | head -n1)
	echo
	python3 tests/bench/bench_report.py "$run" --json "$OUT/bench-${n}nodes.json" \
		--accel "${accel:-?}" \
		--note "boot and run $((t1 - t0)) s; host load average $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after" |
		tee "$OUT/bench-${n}nodes.txt" || status=1
	plots "$OUT/bench-${n}nodes.json" "$OUT/busbw-${n}nodes"
done
echo
echo "bench: $(($(date +%s) - START)) s in all (kernel $KREL, nodes: $COUNTS)"
exit $status
