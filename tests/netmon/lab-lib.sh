# SPDX-License-Identifier: GPL-2.0
# collx-netmon lab cases: helpers (sourced after tests/lab/lib.sh).
NETMON=$COLLX_SRC/user/netmon/collx-netmon
INJECT=$COLLX_SRC/tests/netmon/inject.py
NM_DIR=$COLLX_NODE_DIR/netmon
mkdir -p "$NM_DIR"
_nm_seq=0
NM_PID=

# On any exit of a case: stop a collx-netmon it left running (a failed
# check must not leave the instance lock held for the next case), then the
# case's own case_cleanup, when it defines one.
nm_cleanup() {
	if [ -n "$NM_PID" ] && kill -0 "$NM_PID" 2>/dev/null; then
		kill -INT "$NM_PID"
		wait "$NM_PID" 2>/dev/null
	fi
	if command -v case_cleanup >/dev/null; then
		case_cleanup
	fi
}
trap nm_cleanup EXIT

nm_require() {
	[ -x "$NETMON" ] || lab_fail "$NETMON not built (make bpf)"
	[ -e /sys/kernel/btf/vmlinux ] || lab_skip "kernel without BTF"
}

nm_require_switch() {
	[ -f "$COLLX_LAB_DIR/switch/ready" ] ||
		lab_skip "no switch agent (lab.sh ran with -S or without tests/netmon/switch-agent.sh)"
}

# Ask the switch to send frames into this node's port: switch_inject KIND ARGS...
switch_inject() {
	local id req resp n=0 a
	_nm_seq=$((_nm_seq + 1))
	id=$COLLX_RANK.$$.$_nm_seq
	req=$COLLX_LAB_DIR/switch/req.$id
	resp=$COLLX_LAB_DIR/switch/resp.$id
	: >"$req.tmp"
	for a in "$@"; do printf '%s\n' "$a" >>"$req.tmp"; done
	mv "$req.tmp" "$req"
	while [ ! -f "$resp" ]; do
		n=$((n + 1))
		[ "$n" -lt 1200 ] || { echo "switch: no answer to $* after 120 s" >&2; return 1; }
		sleep 0.1
	done
	sed 1d "$resp"
	a=$(head -n1 "$resp")
	rm -f "$resp"
	return "$a"
}

# Start collx-netmon in the background with its outputs in $NM_DIR/$1.*;
# the remaining arguments go to collx-netmon.
nm_start() {
	local tag=$1 n=0
	shift
	rm -f "$NM_DIR/$tag".*
	"$NETMON" -i 0 --json="$NM_DIR/$tag.json" --table="$NM_DIR/$tag.txt" \
		--textfile="$NM_DIR/$tag.prom" -e "$NM_DIR/$tag.events" -r "$NM_DIR/$tag.ready" \
		"$@" 2>"$NM_DIR/$tag.err" &
	NM_PID=$!
	while [ ! -f "$NM_DIR/$tag.ready" ]; do
		n=$((n + 1))
		if [ "$n" -gt 300 ] || ! kill -0 "$NM_PID" 2>/dev/null; then
			cat "$NM_DIR/$tag.err" >&2
			lab_fail "collx-netmon did not start"
		fi
		sleep 0.1
	done
}

nm_stop() {
	local rc=0
	kill -INT "$NM_PID"
	wait "$NM_PID" || rc=$?
	NM_PID=
	[ "$rc" = 0 ] || { cat "$NM_DIR/$1.err" >&2; lab_fail "collx-netmon exited $rc"; }
	cat "$NM_DIR/$1.txt"
}

# Is the running kernel one with tcx links (6.6+)?
nm_has_tcx() {
	local v
	v=$(uname -r | cut -d. -f1-2)
	[ "${v%%.*}" -gt 6 ] || { [ "${v%%.*}" = 6 ] && [ "${v#*.}" -ge 6 ]; }
}

# nm_check TAG 'python expression over j (final JSON), prom, table' ...
nm_check() {
	local tag=$1
	shift
	python3 "$COLLX_SRC/tests/netmon/check.py" "$NM_DIR/$tag" "$@" || lab_fail "check failed: see above"
}
