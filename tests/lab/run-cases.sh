#!/bin/sh
# collx lab: run the test cases in tests/lab/cases on this node, in order,
# in step with the other nodes.  Writes TAP to $COLLX_NODE_DIR/cases.tap and
# each case's output to $COLLX_NODE_DIR/cases/<case>.log.
#
#   tests/lab/run-cases.sh [CASE-GLOB...]     (default: every case)
. /lab/env
. "$COLLX_SRC/tests/lab/lib.sh"

CASE_TIMEOUT=${COLLX_CASE_TIMEOUT:-300}
BAD='Oops|BUG:|WARNING:|KFENCE:|UBSAN:|general protection fault|kernel BUG at|Call Trace:'
TAP=$COLLX_NODE_DIR/cases.tap
mkdir -p "$COLLX_NODE_DIR/cases"
: >"$TAP"

cases=
if [ "$#" -eq 0 ]; then
	set -- '*'
fi
for g in "$@"; do
	for c in "$COLLX_SRC"/tests/lab/cases/$g.sh; do
		[ -f "$c" ] && cases="$cases $c"
	done
done

n=0
for c in $cases; do
	n=$((n + 1))
	name=$(basename "$c" .sh)
	if ! lab_barrier "case-$name" 300; then
		echo "Bail out! node$COLLX_RANK: other nodes never reached $name" >>"$TAP"
		exit 1
	fi
	log=$COLLX_NODE_DIR/cases/$name.log
	before=$(dmesg | wc -l)
	start=$(date +%s)
	# A case may ask for more time with a "# lab-timeout: SECONDS" line.
	limit=$(sed -n 's/^# lab-timeout: *\([0-9][0-9]*\)$/\1/p' "$c" | head -n1)
	limit=${limit:-$CASE_TIMEOUT}
	timeout -k 5 "$limit" sh "$c" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	if dmesg | tail -n +"$((before + 1))" | grep -Eq "$BAD"; then
		echo "kernel reported during the case:" >>"$log"
		dmesg | tail -n +"$((before + 1))" | grep -E -A5 "$BAD" >>"$log"
		rc=1
	fi
	case $rc in
	0) echo "ok $n - $name # ${secs}s" >>"$TAP" ;;
	77) echo "ok $n - $name # SKIP $(grep -m1 '^SKIP:' "$log" | cut -c7-)" >>"$TAP" ;;
	124) echo "not ok $n - $name # timed out after ${limit}s" >>"$TAP" ;;
	*) echo "not ok $n - $name # exit $rc: $(tail -n1 "$log")" >>"$TAP" ;;
	esac
done
echo "1..$n" >>"$TAP"
cat "$TAP"
# Case failures are in the TAP; the exit status says the run itself worked.
exit 0
