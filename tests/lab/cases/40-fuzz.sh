# The ioctl errno contract (tests/fuzz/collx_errno: one TAP line per
# case) and the seeded ioctl fuzzer (tests/fuzz/collx_fuzz: 100000 calls
# or 30 s, whichever ends first, 2 threads; FUZZ_CALLS and FUZZ_SECS set
# them, the debug kernel triples the time), on each node alone: 1-rank
# comms and a comm of the node with itself, no traffic between nodes.
# Both as root, then as nobody under an 8 MiB RLIMIT_MEMLOCK.  The fuzzer
# runs with a fixed seed as root and a random one (printed, with the
# command that repeats it) as nobody.  A contract failure, a hang, a
# finding of any class (issue 10's "lost", "ids" and "oracle" ones were
# the fuzzer model's, fixed: tests/fuzz/model_test.c), a kernel report
# (run-cases.sh), or the module's counters not back where they were fails
# the case.
# lab-timeout: 150
. "$COLLX_SRC/tests/lab/lib.sh"
FUZZ=$COLLX_SRC/tests/fuzz
STATS=/sys/kernel/debug/collx/stats
CALLS=${FUZZ_CALLS:-100000}
THREADS=2
# The fuzzer's own bound, and the timeout around it: after SECS it still
# waits for its child processes (up to 10 s) and closes its fds.  Both
# grow on the debug kernel.  make check's time is bounded: a full run of
# CALLS takes lab.sh -e FUZZ_SECS=600 -e COLLX_CASE_TIMEOUT=1500.
SLOW=$(lab_slowdown)
# The fuzzer's and the contract's own bounds on a hang or a cleanup.
export COLLX_FUZZ_SLOW=$SLOW
SECS=$((${FUZZ_SECS:-30} * SLOW))
LIMIT=$((SECS + 20 * SLOW))
ERRNO_LIMIT=$((30 * SLOW))
FIXED_SEED=40
NOBODY="prlimit --memlock=8388608:8388608 setpriv --reuid=65534 --regid=65534 --clear-groups"

[ -x "$FUZZ/collx_fuzz" ] && [ -x "$FUZZ/collx_errno" ] ||
	lab_fail "tests/fuzz is not built (make -C tests/fuzz)"
[ -r "$STATS" ] || lab_fail "no $STATS"

counters() {
	sed -n 's/^\(comms\|mrs\|pinned_pages\|ops_in_flight\) \(.*\)/\1=\2/p' "$STATS" | tr '\n' ' '
}

# The counters back to BEFORE within 10 s, else fail.
counters_back() {
	local n=0 now
	while now=$(counters) && [ "$now" != "$1" ]; do
		n=$((n + 1))
		[ "$n" -le 100 ] || lab_fail "$2: counters $now, before $1"
		sleep 0.1
	done
	echo "$2: counters back to $now"
}

failed=
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# NAME LIMIT COMMAND...: run it under timeout; note a failure, go on.
run() {
	local name=$1 limit=$2 before start rc
	shift 2
	before=$(counters)
	start=$(date +%s)
	timeout -k 5 "$limit" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	echo "$name: exit $rc after $(($(date +%s) - start)) s"
	# A failure names its first finding (or contract line): CI shows
	# only TAP's reason.
	case $name:$rc in
	*:0) ;;
	*) failed="$failed $name (exit $rc: $(grep -m1 -E '^(FINDING|not ok|Bail out)' "$out"))" ;;
	esac
	case $name in
	fuzz*)
		# The parent's summary comes last (its children print theirs).
		summary=$(grep '^summary: ' "$out" | tail -n1)
		calls=$(echo "$summary" | sed -n 's/^summary: \([0-9]*\) calls.*/\1/p')
		case $summary in
		*"ended by the time bound"*) ;;
		*) [ "${calls:-0}" -ge "$CALLS" ] ||
			failed="$failed $name(only ${calls:-0} calls)" ;;
		esac
		;;
	esac
	counters_back "$before" "$name"
}

seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "node$COLLX_RANK: random seed $seed; repeat with:"
echo "  $NOBODY $FUZZ/collx_fuzz -s $seed -n $CALLS -t $THREADS -T $SECS"

run errno-root "$ERRNO_LIMIT" "$FUZZ/collx_errno"
run fuzz-root "$LIMIT" "$FUZZ/collx_fuzz" -s "$FIXED_SEED" -n "$CALLS" -t "$THREADS" -T "$SECS"
# shellcheck disable=SC2086 # NOBODY is words
run errno-nobody "$ERRNO_LIMIT" $NOBODY "$FUZZ/collx_errno"
# shellcheck disable=SC2086
run fuzz-nobody "$LIMIT" $NOBODY "$FUZZ/collx_fuzz" -s "$seed" -n "$CALLS" -t "$THREADS" -T "$SECS"

[ -z "$failed" ] || lab_fail "failed:$failed"
