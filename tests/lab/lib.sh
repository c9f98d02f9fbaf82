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

# How many times slower than Debian's kernels this one runs everything:
# 3 on the lab's debug kernel (KASAN, lockdep, kmemleak; cases took 3-10
# times as long there), else 1; COLLX_LAB_SLOWDOWN=N (lab.sh -e, or
# tests/check.sh's environment) says N instead, for a slower host (on
# 2026-12-07's, 17-raw-ioctl's 3-rank ring took over 200 s on the debug
# kernel; the whole case takes 20 s on 6.1).  Time bounds set for
# Debian's kernels multiply by it.
lab_slowdown() {
	case ${COLLX_LAB_SLOWDOWN:-} in
	[1-9] | [1-9][0-9]) echo "$COLLX_LAB_SLOWDOWN"; return ;;
	esac
	case $(uname -r) in
	*-collx-debug) echo 3 ;;
	*) echo 1 ;;
	esac
}

# `timeout -k 5` with a bound of $1 seconds times lab_slowdown: a case's
# bound on a command that hangs, set for Debian's kernels.
lab_timeout() {
	local secs=$1
	shift
	timeout -k 5 $((secs * $(lab_slowdown))) "$@"
}

# Ranks whose VM the switch killed (lab_fault_kill_node), one a line.
LAB_KILLED=$COLLX_LAB_DIR/killed

lab_is_killed() {
	local k
	[ -f "$LAB_KILLED" ] || return 1
	while read -r k; do
		[ "$k" = "$1" ] && return 0
	done <"$LAB_KILLED"
	return 1
}

# Skip (on every node) a case that needs ranks 0..N-1 when one of them
# was killed earlier in the run.
lab_need_ranks() {
	local r=0
	while [ "$r" -lt "$1" ]; do
		lab_is_killed "$r" && lab_skip "needs ranks 0..$(($1 - 1)); node$r was killed earlier"
		r=$((r + 1))
	done
	return 0
}

# Wait until every live node of ranks 0..COLLX_NRANKS-1 has reached the
# barrier NAME (files in the shared results folder, so no network is
# needed; a repeated case's run has names of its own); killed nodes are
# not waited for.  Bounded: fails after ${2:-120} seconds and names the
# ranks that never came.
lab_barrier() {
	local name=$1 limit=${2:-120} n=0 r missing end
	local dir=$COLLX_LAB_DIR/barrier/${COLLX_CASE_RUN:+run$COLLX_CASE_RUN-}$1
	mkdir -p "$dir"
	: >"$dir/$COLLX_RANK"
	end=$(($(date +%s) + limit))
	while :; do
		missing=
		r=0
		while [ "$r" -lt "$COLLX_NRANKS" ]; do
			[ -e "$dir/$r" ] || lab_is_killed "$r" || missing="$missing $r"
			r=$((r + 1))
		done
		[ -z "$missing" ] && return 0
		n=$((n + 1))
		# The clock, not the count, bounds it (a poll may take longer
		# than its sleep); read every 10th poll, polls fork nothing else.
		if [ $((n % 10)) = 0 ] && [ "$(date +%s)" -ge "$end" ]; then
			echo "barrier $name: ranks$missing of $COLLX_NRANKS never came in $limit s" >&2
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

# ---- time ---------------------------------------------------------------
# Each node's clock is set from the RTC at boot (whole seconds), so times
# compared across nodes are converted to the host's clock: a file created
# in the shared results folder gets the host's time as its mtime.

lab_host_now() {
	local f=$COLLX_LAB_DIR/barrier/.clock.$COLLX_RANK.$$
	: >"$f"
	lab_host_time_of "$f"
}

# The host's time when FILE, in the results folder, was created (its
# mtime); removes it.  Creating it (": >FILE") is a shell builtin, so a
# caller can mark a moment without starting a process first.
lab_host_time_of() {
	stat -c %.9Y "$1"
	rm -f "$1"
}

# Host clock minus this node's clock, in seconds (good to a few ms).
lab_clock_offset() {
	local g0 h g1
	g0=$(date +%s.%N)
	h=$(lab_host_now)
	g1=$(date +%s.%N)
	awk -v a="$g0" -v h="$h" -v b="$g1" 'BEGIN { printf "%.3f\n", h - (a + b) / 2 }'
}

# Prefix every line read with this node's time (date +%s.%N).
lab_stamp() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "$(date +%s.%N)" "$line"
	done
}

# ---- faults from the switch -------------------------------------------
# The switch agent (tests/netmon/switch-agent.sh, on the host in the lab's
# namespace) applies them; each helper waits for its answer (bounded),
# prints it, fails the case if the fault could not be applied, and leaves
# the host time it took effect in LAB_FAULT_T.
# "lab_fault -u ..." returns 3 instead of failing when the host cannot
# apply that fault.
_lab_fault_seq=0
lab_fault() {
	local id req resp n=0 a rc soft=
	[ "$1" = -u ] && { soft=1; shift; }
	[ -f "$COLLX_LAB_DIR/switch/ready" ] ||
		lab_fail "no switch agent (lab.sh ran with -S or without tests/netmon/switch-agent.sh)"
	_lab_fault_seq=$((_lab_fault_seq + 1))
	id=$COLLX_RANK.f$$.$_lab_fault_seq
	req=$COLLX_LAB_DIR/switch/req.$id
	resp=$COLLX_LAB_DIR/switch/resp.$id
	printf 'fault\n' >"$req.tmp"
	for a in "$@"; do printf '%s\n' "$a" >>"$req.tmp"; done
	mv "$req.tmp" "$req"
	while [ ! -f "$resp" ]; do
		n=$((n + 1))
		[ "$n" -le 300 ] || lab_fail "switch: no answer to 'fault $*' in 30 s"
		sleep 0.1
	done
	rc=$(head -n1 "$resp")
	LAB_FAULT_OUT=$(sed 1d "$resp")
	rm -f "$resp"
	echo "switch: fault $*: $LAB_FAULT_OUT"
	[ "$rc" = 3 ] && [ -n "$soft" ] && return 3
	[ "$rc" = 0 ] || lab_fail "switch: fault $* failed ($rc): $LAB_FAULT_OUT"
	LAB_FAULT_T=$(printf '%s\n' "$LAB_FAULT_OUT" | sed -n 's/^t=\([0-9.]*\) .*/\1/p' | tail -n1)
}

# SIGKILL node N's QEMU: its VM vanishes without a word to its peers.  Its
# rank joins $LAB_KILLED; lab.sh reports it as killed by request.
lab_fault_kill_node() {
	lab_fault kill "$1"
}

# Take node N's switch port down (the switch undoes it after ${2:-60} s
# at most) and up again.
lab_fault_link_down() {
	lab_fault link-down "$1" "${2:-60}"
}

lab_fault_link_up() {
	lab_fault link-up "$1"
}

# netem on node N's switch port (traffic towards node N): e.g.
# lab_fault_netem 2 "loss 5% delay 50ms" [SECONDS, default 120].  A host
# kernel without sch_netem cannot: then a node asking for its own port
# gets netem on its eth0 egress instead (traffic from node N; applied on
# every node, each packet still passes one netem), which run-cases.sh
# clears after the case at the latest.
LAB_NETEM_LOCAL=$COLLX_NODE_DIR/netem-local
lab_fault_netem() {
	local rc
	# shellcheck disable=SC2086 # the netem arguments are words
	lab_fault -u netem "$1" "${3:-120}" $2
	rc=$?
	[ "$rc" = 3 ] || return "$rc"
	[ "$1" = "$COLLX_RANK" ] || lab_fail "the switch has no netem, and node$1 is not this node"
	# shellcheck disable=SC2086
	tc qdisc replace dev eth0 root netem $2 || lab_fail "netem $2 on eth0"
	: >"$LAB_NETEM_LOCAL"
	LAB_FAULT_T=$(lab_host_now)
	echo "netem $2 on node$1's eth0 egress instead"
}

lab_fault_netem_clear() {
	if [ "$1" = "$COLLX_RANK" ] && [ -f "$LAB_NETEM_LOCAL" ]; then
		tc qdisc del dev eth0 root || lab_fail "clearing netem on eth0"
		rm -f "$LAB_NETEM_LOCAL"
		echo "netem on eth0 cleared"
		return 0
	fi
	lab_fault netem-clear "$1"
}
