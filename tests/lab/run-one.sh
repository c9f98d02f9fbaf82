#!/bin/bash
# One lab case, or a few, on a fresh boot (make lab CASE=36):
#   tests/lab/run-one.sh CASE [KERNEL] [NODES]
# CASE is a case's number (36), name (36-netem) or a glob ('3*');
# KERNEL 6.1, 6.12 (default) or debug (the lab's debug kernel, built and
# cached first); NODES default 4.  Builds what the nodes run, boots, runs
# the cases (lab-once ones included) and prints make check's TAP lines for
# them; the nodes' logs are in .build/lab/check-KERNEL/nodeN/cases/.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
[ "$#" -ge 1 ] && [ -n "$1" ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
case $1 in
*[*?[]*) glob=$1 ;;
*-*) glob=$1 ;;
*) glob="$1-*" ;;
esac
KERNEL=${2:-6.12}
NODES=${3:-4}
ls "$SRC"/tests/lab/cases/$glob.sh >/dev/null 2>&1 ||
	{ echo "run-one: no case matches $glob (tests/lab/cases/)" >&2; exit 2; }
export COLLX_LAB_NODES=$NODES
if [ "$KERNEL" = debug ]; then
	COLLX_DEBUG_CASES=$glob exec "$SRC/tests/check.sh" debug
fi
COLLX_LAB_CASES=$glob exec "$SRC/tests/check.sh" "build lab" "$KERNEL"
