# SPDX-License-Identifier: GPL-2.0
# collx-netmon lab cases: helpers (sourced after tests/lab/lib.sh).
NETMON=$COLLX_SRC/user/netmon/collx-netmon
INJECT=$COLLX_SRC/tests/netmon/inject.py
NM_DIR=$COLLX_NODE_DIR/netmon
mkdir -p "$NM_DIR"
_nm_seq=0

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
		-p "$NM_DIR/$tag.prom" -e "$NM_DIR/$tag.events" -r "$NM_DIR/$tag.ready" \
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
	kill -INT "$NM_PID"
	wait "$NM_PID" || { cat "$NM_DIR/$1.err" >&2; lab_fail "collx-netmon exited $?"; }
	cat "$NM_DIR/$1.txt"
}

# nm_check TAG 'python expression over j (final JSON), prom, table' ...
nm_check() {
	local tag=$1
	shift
	python3 "$COLLX_SRC/tests/netmon/check.py" "$NM_DIR/$tag" "$@" || lab_fail "check failed: see above"
}
