#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# collx lab: the switch's side.  lab.sh runs this on the host inside the
# lab's network namespace (br0, tap0..tapN-1), in the results folder, while
# the nodes run.  A node asks for frames by writing switch/req.<rank>.<seq>
# (one inject.py argument per line, written to a .tmp and renamed); the
# agent sends them into that node's port (tap<rank>) with inject.py and
# answers in switch/resp.<rank>.<seq> (exit code on the first line, then
# the output).  Only inject.py runs; traffic stays on the lab's taps.
# Bounded: lab.sh wraps it in timeout and kills it when the nodes finish.
SRC=${LAB_SRC:?}
DIR=${LAB_OUT:?}/switch
mkdir -p "$DIR"
echo "switch agent in namespace ${LAB_NS:-?}, $LAB_NODES node(s)"
: >"$DIR/ready"
while :; do
	for req in "$DIR"/req.*; do
		[ -f "$req" ] || continue
		case $req in *.tmp) continue ;; esac
		id=${req##*/req.}
		rank=${id%%.*}
		case $rank in '' | *[!0-9]*) rm -f "$req"; continue ;; esac
		# one argument per line
		set --
		while IFS= read -r a; do set -- "$@" "$a"; done <"$req"
		rm -f "$req"
		out=$(timeout 120 python3 "$SRC/tests/netmon/inject.py" --iface "tap$rank" "$@" 2>&1)
		rc=$?
		echo "$(date +%T) tap$rank: $* -> $rc: $out"
		printf '%s\n%s\n' "$rc" "$out" >"$DIR/resp.$id.tmp"
		mv "$DIR/resp.$id.tmp" "$DIR/resp.$id"
	done
	sleep 0.05
done
