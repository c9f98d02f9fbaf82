# collx lab: helpers for case scripts (sourced; runs inside a node).
. "$COLLX_LAB_DIR/env"
# A case exits 0 (pass), 77 (skip) or anything else (fail).

lab_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

lab_skip() {
	echo "SKIP: $*"
	exit 77
}

# Wait until every node has reached the barrier NAME (files in the shared
# results folder, so no network is needed).  Bounded: fails after
# ${2:-120} seconds and names the ranks that never came.
lab_barrier() {
	local name=$1 limit=${2:-120} dir=$COLLX_LAB_DIR/barrier/$1 n=0 have
	mkdir -p "$dir"
	: >"$dir/$COLLX_RANK"
	while :; do
		have=$(ls "$dir" | wc -l)
		[ "$have" -ge "$COLLX_NRANKS" ] && return 0
		n=$((n + 1))
		if [ "$n" -gt $((limit * 2 + 15)) ]; then
			echo "barrier $name: only ranks $(ls "$dir" | tr '\n' ' ')of $COLLX_NRANKS after $limit s" >&2
			return 1
		fi
		# Quick at first; then slower, so idle nodes leave the host's
		# CPUs to the busy one (e.g. a DKMS build).
		if [ "$n" -le 20 ]; then
			sleep 0.1
		else
			sleep 0.5
		fi
	done
}

lab_addr() {
	echo "$LAB_NET_PREFIX.$((LAB_HOST_BASE + $1))"
}

# Run "$@" expecting success; on failure print the command and its output.
lab_run() {
	local out
	if ! out=$("$@" 2>&1); then
		echo "$out" >&2
		lab_fail "command failed: $*"
	fi
	printf '%s\n' "$out"
}
