#!/bin/bash
# collx checkpoint bench (make bench-ckpt): the training pause of a
# checkpoint written synchronously to the archive folder (a), to a
# node-local file (b) and by collx phase 1 into a peer's memory (c), and
# the restore from the archive against the restore from a peer's
# replica, all in one lab boot (tests/bench/bench-ckpt-node.sh on every
# node).  See Documentation/checkpoint.md.
#
#   tests/bench/bench-ckpt.sh [-k 6.1|6.12] [-n NODES] [-s MIB] [-o DIR]
#
# -k: the lab's kernel (6.12); -n: nodes, 2..4 (4); -s: MiB per rank (128);
# -o: the lab run's folder (.build/bench/ckpt-lab).  Prints per rank and
# the mean over ranks, the ratios and the issue's targets (PASS/MISS,
# measured in this boot).  Exit status 1 when the boot or a step failed;
# timings never fail it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KERNEL=6.12
NODES=4
MIB=128
LABOUT=
while getopts "k:n:s:o:h" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	s) MIB=$OPTARG ;;
	o) LABOUT=$OPTARG ;;
	*) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
case $NODES in [2-4]) ;; *) echo "bench-ckpt: -n wants 2..4 nodes, not '$NODES'" >&2; exit 2 ;; esac
case $MIB in [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
*) echo "bench-ckpt: -s wants 1..999 MiB, not '$MIB'" >&2; exit 2 ;;
esac
cd "$SRC"
: "${LABOUT:=$SRC/.build/bench/ckpt-lab}"
# shellcheck disable=SC2012 # as demo.sh: the newest of the series
KREL=$(cd /boot && ls -1 vmlinuz-"$KERNEL".[0-9]* 2>/dev/null | sed 's/^vmlinuz-//' | sort -V | tail -n1)
[ -n "$KREL" ] || KREL=$KERNEL
make --no-print-directory -s module KVER="$KREL" >/dev/null
make --no-print-directory -s -C user >/dev/null
make --no-print-directory -s -C user/ckpt >/dev/null
# the shard, the area (own and replica, two slots each) and the local
# file live in the node's memory
mem=$((1024 + 6 * MIB))
status=0
t0=$(date +%s)
COLLX_LAB_MEM_MB=$mem tests/lab/lab.sh -k "$KERNEL" -n "$NODES" -t 1800 -q -S -o "$LABOUT" \
	-e CKPT_MIB="$MIB" -- tests/bench/bench-ckpt-node.sh || status=1
echo
python3 - "$LABOUT" "$NODES" "$MIB" "$KREL" "$(($(date +%s) - t0))" <<'PY' || status=1
import glob, os, sys
out, nodes, mib, krel, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
steps = ["write", "write", "save", "pause", "replicate", "archive", "load-local", "load-peer",
         "load-archive"]
names = {0: "(a) write+fsync to the archive folder", 1: "(b) write+fsync to a node-local file",
         2: "(c) collx phase 1, call to global commit", 3: "(p) the pause: snapshot, save_async",
         4: "    replication behind it (to commit)", 5: "phase 2: collx-ckptd archives",
         6: "restore from the own node's area", 7: "restore from the peer's replica",
         8: "restore from the archive"}
per = {}
for r in range(nodes):
    p = os.path.join(out, "node%d" % r, "ckpt-bench.txt")
    t = [l.split() for l in open(p)] if os.path.exists(p) else []
    t = [(w[1], float(w[2])) for w in t if len(w) == 3 and w[0] == "time"]
    if [s for s, _ in t] != steps:
        print("bench-ckpt: rank %d: steps %s, want %s" % (r, [s for s, _ in t], steps))
        sys.exit(1)
    per[r] = [v for _, v in t]
mean = [sum(per[r][i] for r in per) / nodes for i in range(len(steps))]
print("collx checkpoint bench: %d ranks x %d MiB, kernel %s, k=1, one boot (%s s)" % (nodes, mib, krel, secs))
print("%-42s %s %9s %9s" % ("step", " ".join("%8s" % ("rank%d" % r) for r in per), "mean s", "MB/s"))
for i in range(len(steps)):
    print("%-42s %s %9.3f %9.1f" % (names[i], " ".join("%8.3f" % per[r][i] for r in per), mean[i],
                                    mib * 1.048576 / mean[i] if mean[i] > 0 else 0))
pa, pb, pc, pp, rl, rp, ra = mean[0], mean[1], mean[2], mean[3], mean[6], mean[7], mean[8]
print()
print("pause (p)/(a) = %.2f   (p)/(b) = %.2f   whole save (c)/(a) = %.2f   restore peer/archive = %.2f"
      % (pp / pa, pp / pb, pc / pa, rp / ra))
print("target pause (p) <= 0.2 x (a): %s (%.2f)" % ("PASS" if pp <= 0.2 * pa else "MISS", pp / pa))
print("target restore from the own area <= 0.2 x from the archive: %s (%.2f)" %
      ("PASS" if rl <= 0.2 * ra else "MISS", rl / ra))
print("target restore from a peer <= 0.5 x from the archive: %s (%.2f)" %
      ("PASS" if rp <= 0.5 * ra else "MISS", rp / ra))
PY
exit $status
