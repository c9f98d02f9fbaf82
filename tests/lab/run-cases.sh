#!/bin/sh
# collx lab: run the test cases in tests/lab/cases on this node, in order,
# in step with the other live nodes.  Writes TAP to $COLLX_NODE_DIR/cases.tap
# and each case's output to $COLLX_NODE_DIR/cases/<case>.log.
#
#   tests/lab/run-cases.sh [CASE-GLOB...]     (default: every case)
#
# A case with a "# lab-last" line runs after all the others (a case that
# kills a node's VM: no later case could use that node), and one with
# "# lab-timeout: SECONDS" gets that long instead of COLLX_CASE_TIMEOUT
# (times lab_slowdown on the debug kernel; a COLLX_CASE_TIMEOUT that is
# longer still wins: lab.sh -e COLLX_CASE_TIMEOUT=900 for a long run).
# COLLX_CASE_REPEAT=N (lab.sh -e) runs each case, lab-last ones excepted,
# N times in a row in the same boot (the fault matrix's "ten in a row"):
# TAP names the runs after the first "<case>#2" and so on, and each run
# gets barriers and fault files of its own (COLLX_CASE_RUN).
# A case with a "# lab-once" line (or "# lab-once: why"; user space, a
# benchmark, or engine logic whose verbs calls another case runs on both
# kernels) runs in one of make check's Debian labs only:
# COLLX_LAB_SHARE=I/N (from tests/check.sh) runs the lab-once cases whose
# order among them is I modulo N, and skips the others, saying so.
. /lab/env
. "$COLLX_SRC/tests/lab/lib.sh"

CASE_TIMEOUT=${COLLX_CASE_TIMEOUT:-300}
# Kernel reports that fail a case (LAB_BAD_RE/LAB_BENIGN_RE, from lab.sh).
BAD=$LAB_BAD_RE
BENIGN=$LAB_BENIGN_RE
TAP=$COLLX_NODE_DIR/cases.tap
mkdir -p "$COLLX_NODE_DIR/cases"
: >"$TAP"

SLOWDOWN=$(lab_slowdown)
case_timeout() {
	local t
	t=$(sed -n 's/^# lab-timeout: *\([0-9][0-9]*\)$/\1/p' "$1" | head -n1)
	t=$((${t:-$CASE_TIMEOUT} * SLOWDOWN))
	if [ -n "${COLLX_CASE_TIMEOUT:-}" ] && [ "$t" -lt "$CASE_TIMEOUT" ]; then
		t=$CASE_TIMEOUT
	fi
	echo "$t"
}

first='' last=''
if [ "$#" -eq 0 ]; then
	set -- '*'
fi
for g in "$@"; do
	for c in "$COLLX_SRC"/tests/lab/cases/$g.sh; do
		[ -f "$c" ] || continue
		if grep -q '^# lab-last$' "$c"; then
			last="$last $c"
		else
			first="$first $c"
		fi
	done
done
cases="$first $last"

# A node waits at a case's barrier for as long as the slowest case before
# it may take on another node.
longest=$CASE_TIMEOUT
: >"$COLLX_NODE_DIR/cases.plan"
for c in $cases; do
	basename "$c" .sh >>"$COLLX_NODE_DIR/cases.plan"
	t=$(case_timeout "$c")
	[ "$t" -le "$longest" ] || longest=$t
done

kernel_reports() {
	dmesg | tail -n +"$(($1 + 1))" | grep -E "$BAD" | grep -Ev "$BENIGN"
}

REPEAT=${COLLX_CASE_REPEAT:-1}
case $REPEAT in '' | *[!0-9]* | 0) echo "Bail out! COLLX_CASE_REPEAT=$REPEAT" >>"$TAP"; exit 1 ;; esac
runs=
for c in $cases; do
	i=1
	runs="$runs $c"
	grep -q '^# lab-last$' "$c" && continue
	while [ "$i" -lt "$REPEAT" ]; do
		i=$((i + 1))
		runs="$runs $c#$i"
	done
done

SHARE=${COLLX_LAB_SHARE:-0/1}
case $SHARE in
[0-9]*/[1-9]*) ;;
*) echo "Bail out! COLLX_LAB_SHARE=$SHARE (I/N)" >>"$TAP"; exit 1 ;;
esac
# The lab-once cases that are another lab's share.
others=
i=0
for c in $cases; do
	grep -qE '^# lab-once(:|$)' "$c" || continue
	[ $((i % ${SHARE#*/})) = "${SHARE%/*}" ] || others="$others $c"
	i=$((i + 1))
done

n=0
for run in $runs; do
	n=$((n + 1))
	c=${run%%#*}
	name=$(basename "$c" .sh)
	export COLLX_CASE_RUN=
	case $run in
	*#*)
		COLLX_CASE_RUN=${run##*#}
		name=$name#$COLLX_CASE_RUN ;;
	esac
	case "$others " in
	*" $c "*)
		echo "ok $n - $name # SKIP lab-once: make check runs it in another kernel's lab (COLLX_LAB_SHARE=$SHARE)" >>"$TAP"
		continue ;;
	esac
	if ! lab_barrier "case-$name" $((longest + 60)); then
		echo "Bail out! node$COLLX_RANK: other nodes never reached $name" >>"$TAP"
		exit 1
	fi
	echo "$name" >"$COLLX_NODE_DIR/current"
	log=$COLLX_NODE_DIR/cases/$(echo "$name" | tr '#' _).log
	before=$(dmesg | wc -l)
	start=$(date +%s)
	limit=$(case_timeout "$c")
	timeout -k 5 "$limit" sh "$c" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	# A case's own netem (lab_fault_netem without a switch that can) ends
	# with it, whatever became of the case.
	if [ -f "$COLLX_NODE_DIR/netem-local" ]; then
		tc qdisc del dev eth0 root 2>/dev/null
		rm -f "$COLLX_NODE_DIR/netem-local"
		echo "run-cases: cleared the netem this case left on eth0" >>"$log"
	fi
	# TAP's reason: the case's own FAIL line, else its last line.
	why=$(grep -m1 '^FAIL: ' "$log" | cut -c7-)
	[ -n "$why" ] || why=$(tail -n1 "$log")
	if [ -n "$(kernel_reports "$before")" ]; then
		echo "kernel reported during the case:" >>"$log"
		dmesg | tail -n +"$((before + 1))" | grep -E -A5 "$BAD" >>"$log"
		why="kernel reported: $(kernel_reports "$before" | head -n1)"
		rc=1
	fi
	# A failed case keeps the module's own account of it (a timeout logs
	# each peer's and op's state): the node's log is gone after the boot.
	case $rc in
	0 | 77) ;;
	*)
		echo "the module's log during the case:" >>"$log"
		dmesg | tail -n +"$((before + 1))" | grep 'collx:' | tail -n 200 >>"$log"
		# The VM's NIC, not collx: QEMU stopped completing this
		# node's virtio-net transmits (a lost kick under TCG, see
		# README.md); rxe's packets and QPs then hang with it.
		nic=$(dmesg | grep -m1 'NETDEV WATCHDOG')
		[ -z "$nic" ] || why="this node's NIC stopped sending (${nic#*] }); $why"
		;;
	esac
	case $rc in
	0) echo "ok $n - $name # ${secs}s" >>"$TAP" ;;
	77) echo "ok $n - $name # SKIP $(grep -m1 '^SKIP:' "$log" | cut -c7-) (${secs}s)" >>"$TAP" ;;
	124) echo "not ok $n - $name # timed out after ${limit}s" >>"$TAP" ;;
	*) echo "not ok $n - $name # exit $rc: $why (${secs}s)" >>"$TAP" ;;
	esac
done
rm -f "$COLLX_NODE_DIR/current"
echo "1..$n" >>"$TAP"
cat "$TAP"
# Case failures are in the TAP; the exit status says the run itself worked.
exit 0
