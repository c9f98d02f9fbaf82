# SPDX-License-Identifier: GPL-2.0
# collx fault matrix: helpers for the lab's fault cases (tests/lab/cases/3x);
# sourced after tests/lab/lib.sh and tests/progs/collx-lab.inc.
#
# A case starts a collective load on every node (fault_loop_start), waits
# until all are in flight (fault_wait_ready), breaks something, and then
# reports how each node's load ended (fault_loop_end) as one line,
#
#   fault-result <case> rank=R outcome=failed|done|timeout|none op=N
#       after=S kernel=S blames=P err="..."
#
# (after: seconds from the fault to the process's report of it, host
# clock; kernel: to the module's log line of it; blames: the rank the
# error names) which lab.sh collects into faults.txt.  fault_expect
# records what the contract wants; fault_finish checks that the collx
# counters, the RDMA resources and the pinned pages are back to (at most)
# what fault_baseline saw, and fails the case with every unmet expectation
# at once.
FAULT_CASE=$(basename "$0" .sh)
FAULT_DIR=$COLLX_LAB_DIR/fault/$FAULT_CASE${COLLX_CASE_RUN:+.run$COLLX_CASE_RUN}
FAULT_TOOLS=$COLLX_SRC/tests/fault
mkdir -p "$FAULT_DIR"
FAULT_PROBLEMS=

# Loops are bounded by the clock: under TCG an iteration's commands can
# take longer than its sleep.
fault_deadline_in() {
	echo $(($(date +%s) + $1))
}

fault_before() {
	[ "$(date +%s)" -lt "$1" ]
}

fault_problem() {
	echo "problem: $*"
	FAULT_PROBLEMS="$FAULT_PROBLEMS; $*"
}

# What must come back after the fault: the module's counters of live
# objects, this node's RDMA QPs and MRs (rdma res), and pinned pages
# (FOLL_PIN acquired minus released, /proc/vmstat).  vmstat folds each
# CPU's delta into the global count only now and then, so the read asks
# for the fold first (stat_refresh); without it the difference drifts by a
# few pages either way and a clean case looks like a leak.
fault_snapshot() {
	local c v
	for c in comms mrs pinned_pages ops_in_flight; do
		v=$(stat_of "$c" 2>/dev/null)
		printf '%s %s ' "$c" "${v:--}"
	done
	printf 'qps %s ' "$(rdma res show qp 2>/dev/null | wc -l)"
	printf 'rdma_mrs %s ' "$(rdma res show mr 2>/dev/null | wc -l)"
	echo 1 2>/dev/null >/proc/sys/vm/stat_refresh
	awk '/^nr_foll_pin_acquired/ { a = $2 } /^nr_foll_pin_released/ { r = $2 }
		END { printf "foll_pins %d\n", a - r }' /proc/vmstat
}

# fault_back NOW BASE: every count in snapshot NOW is at most its value in
# BASE.  Below is fine: what an earlier case (or the kernel) still held
# when the baseline was taken has been released since; only more is a leak.
fault_back() {
	awk -v now="$1" -v base="$2" 'BEGIN {
		n = split(now, a, " "); split(base, b, " ")
		for (i = 2; i <= n; i += 2) {
			if (a[i] == b[i])
				continue
			if (a[i] !~ /^-?[0-9]+$/ || b[i] !~ /^-?[0-9]+$/ ||
			    a[i] + 0 > b[i] + 0)
				exit 1
		}
	}'
}

fault_baseline() {
	FAULT_BASE=$(fault_snapshot)
	echo "baseline: $FAULT_BASE"
	FAULT_OFFSET=$(lab_clock_offset)
	echo "clock: host - node$COLLX_RANK = $FAULT_OFFSET s"
}

# The load: `collx_lab loop` (allreduces of 1 MiB until one fails), each
# output line stamped with this node's time; bounded by $1 seconds.
fault_loop_start() {
	# On the debug kernel the first allreduces alone took 45 s of
	# 32-kill-midop's 60: lab_timeout scales the bound.
	FAULT_LOOP=$COLLX_NODE_DIR/$FAULT_CASE.loop
	rm -f "$FAULT_DIR/ready-$COLLX_RANK"
	(
		lab_timeout "${1:-90}" "$LABPROG" loop "$FAULT_DIR/ready-$COLLX_RANK" 2>&1
		echo "exit $?"
	) | lab_stamp >"$FAULT_LOOP" &
	FAULT_PID=$!
}

# Wait until ranks 0..$1-1 all completed a first allreduce, then a moment
# more so that the next one is in flight everywhere.
fault_wait_ready() {
	local end r bound
	# On the debug kernel a first 1 MiB allreduce of 4 nodes has taken
	# over 70 s after a connect of over 90 s.
	bound=$((90 * $(lab_slowdown)))
	end=$(fault_deadline_in "$bound")
	while :; do
		r=0
		while [ "$r" -lt "$1" ] && [ -e "$FAULT_DIR/ready-$r" ]; do
			r=$((r + 1))
		done
		[ "$r" -ge "$1" ] && break
		if ! fault_before "$end"; then
			cat "$FAULT_LOOP"
			lab_fail "rank $r never completed a first allreduce in $bound s"
		fi
		sleep 0.1
	done
	sleep 1
}

# The fault happened at host time $1, for every node to measure from.
fault_mark() {
	echo "$1" >"$FAULT_DIR/t.tmp"
	mv "$FAULT_DIR/t.tmp" "$FAULT_DIR/t"
}

# The fault is the next command: fault_mark_here notes the host's time
# with shell builtins only (a file created in the results folder gets the
# host's clock as its mtime), and fault_mark_publish, after the fault,
# hands it to fault_mark.  Starting a process first (lab_host_now's stat,
# a date) would put that much time before the fault: under TCG on a
# loaded host, a second or more.
fault_mark_here() {
	: >"$FAULT_DIR/t.here"
}

fault_mark_publish() {
	fault_mark "$(lab_host_time_of "$FAULT_DIR/t.here")"
}

fault_time() {
	local end
	end=$(fault_deadline_in 30)
	until [ -f "$FAULT_DIR/t" ]; do
		fault_before "$end" || lab_fail "no fault time in 30 s"
		sleep 0.1
	done
	cat "$FAULT_DIR/t"
}

# Wait for the load to end, print its output and its fault-result line;
# sets FAULT_OUTCOME, FAULT_AFTER, FAULT_BLAMES and FAULT_ERR.
fault_loop_end() {
	local t0 line ts rc
	wait "$FAULT_PID"
	cat "$FAULT_LOOP"
	t0=$(fault_time)
	rc=$(sed -n 's/^[0-9.]* exit \([0-9]*\)$/\1/p' "$FAULT_LOOP")
	line=$(grep -m1 ' allreduce [0-9]* failed after ' "$FAULT_LOOP")
	FAULT_OP=$(printf '%s\n' "$line" | sed -n 's/.* allreduce \([0-9]*\) failed after .*/\1/p')
	FAULT_ERR=$(printf '%s\n' "$line" | sed -n 's/.* on rank [0-9]*: \([^;]*\);.*/\1/p')
	FAULT_BLAMES=$(printf '%s\n' "$line" | sed -n 's/.*; rank \([0-9]*\) (.*/\1/p')
	case $rc in
	3) FAULT_OUTCOME=failed ;;
	124) FAULT_OUTCOME=timeout ;;
	137) FAULT_OUTCOME=killed ;;
	'') FAULT_OUTCOME=none ;;
	*) FAULT_OUTCOME=exit$rc ;;
	esac
	FAULT_AFTER=
	if [ -n "$line" ]; then
		ts=${line%% *}
		FAULT_AFTER=$(awk -v t="$ts" -v o="$FAULT_OFFSET" -v f="$t0" \
			'BEGIN { printf "%.1f", t + o - f }')
	fi
	fault_kernel_log "$t0"
	echo "fault-result $FAULT_CASE${COLLX_CASE_RUN:+#$COLLX_CASE_RUN} rank=$COLLX_RANK" \
		"outcome=$FAULT_OUTCOME op=${FAULT_OP:-?} after=${FAULT_AFTER:-?}" \
		"kernel=${FAULT_KAFTER:-?} blames=${FAULT_BLAMES:-none} err=\"${FAULT_ERR:-}\""
}

# The module's log lines from 5 s before the fault (host time $1) on, each
# with its time after the fault; sets FAULT_KAFTER to the first "comm N:
# rank R failed" line's (the module prints it once it has completed the
# comm's ops with the error).  A line of our own in the kernel log, beside
# a file created in the results folder (its mtime: the host's clock), both
# written by shell builtins, maps the log's stamps to the host's clock.
fault_kernel_log() {
	local now tag=lab-clock-$$ c=$FAULT_DIR/clock.$COLLX_RANK f=$FAULT_DIR/kernel.$COLLX_RANK
	FAULT_KAFTER=
	: >"$c"
	echo "$tag" >/dev/kmsg 2>/dev/null || return 0
	now=$(lab_host_time_of "$c")
	dmesg | awk -v tag="$tag" -v now="$now" -v f="$1" '
		{ sub(/^\[ */, ""); ts = $1 + 0; sub(/^[^]]*\] /, "") }
		$0 ~ tag { mark = ts; next }
		/^collx: / { n++; t[n] = ts; l[n] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				d = t[i] - mark + now - f
				if (d < -5)
					continue
				printf "kernel %+.2f s: %s\n", d, l[i]
				# (-0.5: the clocks are matched to a few ms)
				if (k == "" && d >= -0.5 && l[i] ~ /^collx: comm [0-9]+: rank [0-9]+ failed/)
					k = sprintf("%.1f", d)
			}
			if (k != "")
				print "first-failed " k
		}' >"$f"
	grep -v '^first-failed ' "$f"
	FAULT_KAFTER=$(sed -n 's/^first-failed //p' "$f")
	rm -f "$f"
}

# fault_expect_failed WITHIN BLAMES...: the load failed, naming one of
# BLAMES (a rank, "none", or "any"); the module failed it within WITHIN
# seconds of the fault (its log line's time), and the process saw that
# within FAULT_WAKE_GRACE (5) s more.  The process's own time adds its
# wake-up and the stamping of its output: under TCG on a loaded host that
# alone took over a second.  A lost wake-up still fails: the loop would
# wait for the next op's timeout, or its own.
fault_expect_failed() {
	local within=$1 b ok= wake=${FAULT_WAKE_GRACE:-5}
	shift
	[ "$FAULT_OUTCOME" = failed ] ||
		{ fault_problem "rank $COLLX_RANK: load ended '$FAULT_OUTCOME', want a failed allreduce"; return; }
	if [ -z "$FAULT_KAFTER" ]; then
		fault_problem "rank $COLLX_RANK: no 'comm N: rank $COLLX_RANK failed' line in the kernel log after the fault"
	elif ! awk -v a="$FAULT_KAFTER" -v w="$within" 'BEGIN { exit !(a <= w) }'; then
		fault_problem "rank $COLLX_RANK: the module failed the comm ${FAULT_KAFTER} s after the fault, want at most $within s"
	fi
	awk -v a="$FAULT_AFTER" -v w="$within" -v g="$wake" 'BEGIN { exit !(a <= w + g) }' ||
		fault_problem "rank $COLLX_RANK: the process saw the failure ${FAULT_AFTER} s after the fault, want at most $within + $wake s"
	for b in "$@"; do
		[ "$b" = any ] && ok=1
		[ "$b" = "${FAULT_BLAMES:-none}" ] && ok=1
	done
	[ -n "$ok" ] || fault_problem "rank $COLLX_RANK: error names rank '${FAULT_BLAMES:-none}', want $*"
}

# The comm's timeout plus the 1 s the contract allows, in seconds; the
# 1 s times lab_slowdown on a slower kernel.  The timeout counts from the
# comm's last progress, and the other peers' data still arrives for a
# while after a fault: 0.7 s on the debug kernel in 39-vm-kill, where
# ranks then failed 6.1-6.8 s after the fault with a 5 s timeout.
fault_deadline() {
	echo $((${COLLX_TIMEOUT_MS:-30000} / 1000 + $(lab_slowdown)))
}

# Everything of fault_baseline back within ${1:-30} s; then fail the case
# with every problem recorded.
fault_finish() {
	local end now
	end=$(fault_deadline_in "${1:-30}")
	while now=$(fault_snapshot) && ! fault_back "$now" "$FAULT_BASE"; do
		if ! fault_before "$end"; then
			fault_problem "not back to baseline after ${1:-30} s: $now (was: $FAULT_BASE)"
			break
		fi
		sleep 0.2
	done
	echo "after: $now"
	[ -z "$FAULT_PROBLEMS" ] || lab_fail "${FAULT_PROBLEMS#; }"
}
