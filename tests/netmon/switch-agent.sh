#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# collx lab: the switch's side.  lab.sh runs this on the host inside the
# lab's network namespace (br0, tap0..tapN-1), in the results folder, while
# the nodes run.  A node asks by writing switch/req.<rank>.<seq> (one
# argument per line, written to a .tmp and renamed); the agent answers in
# switch/resp.<rank>.<seq>: the exit code on the first line (3: this
# host cannot do that fault), then the output.  Two kinds of request:
#
#   <inject.py arguments>         frames into the asking node's port (tap<rank>)
#   fault kill N                  SIGKILL node N's QEMU: the VM vanishes
#   fault link-down N SECONDS     tapN down; back up after SECONDS at most
#   fault link-up N
#   fault netem N SECONDS ARG...  netem ARGs on tapN's egress (towards node
#                                 N); cleared after SECONDS at most
#   fault netem-clear N
#
# Faults touch only this namespace's taps and the QEMU processes whose
# pidfiles lab.sh wrote in the results folder; each is logged, with the
# host time it took effect, in switch.log and switch/faults.log.  A killed
# rank is added to <results>/killed, which barriers and lab.sh read.
# Bounded: every command runs under timeout, every link-down and netem is
# undone by its deadline, and lab.sh wraps the agent in timeout and stops it
# when the nodes finish.
SRC=${LAB_SRC:?}
OUT=${LAB_OUT:?}
NODES=${LAB_NODES:?}
DIR=$OUT/switch
MAX_FAULT_SECONDS=600
mkdir -p "$DIR"
echo "switch agent in namespace ${LAB_NS:-?}, $NODES node(s)"

now() { date +%s.%N; }

log_fault() {
	echo "$(now) $*" >>"$DIR/faults.log"
	echo "$(date +%T) fault: $*"
}

valid_rank() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ "$1" -lt "$NODES" ]
}

valid_seconds() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ "$1" -ge 1 ] && [ "$1" -le "$MAX_FAULT_SECONDS" ]
}

# The deadline files: restore.<kind>.<rank> holds the epoch second after
# which the agent undoes that fault itself.
set_deadline() {
	echo $(($(date +%s) + $3)) >"$DIR/restore.$1.$2"
}

link_up() {
	timeout 10 ip link set "tap$1" up || return 1
	rm -f "$DIR/restore.link.$1"
	echo "t=$(now) tap$1 up"
}

netem_clear() {
	# "no qdisc" is fine: clearing twice is not an error
	timeout 10 tc qdisc del dev "tap$1" root 2>/dev/null
	rm -f "$DIR/restore.netem.$1"
	echo "t=$(now) tap$1 netem cleared"
}

# The QEMU of node N, only if its command line says it is that node of
# this run (a stale or reused pid is never signalled).
qemu_pid() {
	local pid cmd
	pid=$(cat "$OUT/node$1/qemu.pid" 2>/dev/null) || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	case $cmd in
	*"-name node$1 "*"$OUT/node$1/"*) echo "$pid" ;;
	*) return 1 ;;
	esac
}

kill_node() {
	local pid n=0
	pid=$(qemu_pid "$1") || { echo "node$1: no QEMU of this run found"; return 1; }
	# Recorded first, so that no barrier waits for it once it is gone.
	echo "$1" >>"$OUT/killed"
	kill -KILL "$pid" || return 1
	while [ -d "/proc/$pid" ] && ! grep -q '^[^)]*) Z' "/proc/$pid/stat" 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -le 200 ] || { echo "node$1: QEMU $pid still there after 10 s"; return 1; }
		sleep 0.05
	done
	echo "t=$(now) node$1 QEMU $pid killed"
}

# fault KIND RANK ARGS...; prints what was done, returns non-zero on failure.
fault() {
	local kind=$1 rank=$2 secs a
	valid_rank "$rank" || { echo "fault $kind: rank '$rank' is not one of 0..$((NODES - 1))"; return 2; }
	case $kind in
	kill)
		kill_node "$rank" ;;
	link-down)
		secs=$3
		valid_seconds "$secs" || { echo "link-down: SECONDS must be 1..$MAX_FAULT_SECONDS"; return 2; }
		set_deadline link "$rank" "$secs"
		timeout 10 ip link set "tap$rank" down || return 1
		echo "t=$(now) tap$rank down for at most $secs s" ;;
	link-up)
		link_up "$rank" ;;
	netem)
		secs=$3
		valid_seconds "$secs" || { echo "netem: SECONDS must be 1..$MAX_FAULT_SECONDS"; return 2; }
		shift 3
		[ "$#" -ge 1 ] && [ "$#" -le 16 ] || { echo "netem: 1..16 arguments"; return 2; }
		for a in "$@"; do
			case $a in *[!A-Za-z0-9.%_-]*) echo "netem: bad argument '$a'"; return 2 ;; esac
		done
		set_deadline netem "$rank" "$secs"
		if ! a=$(timeout 10 tc qdisc replace dev "tap$rank" root netem "$@" 2>&1); then
			rm -f "$DIR/restore.netem.$rank"
			case $a in
			*"kind is unknown"*) echo "netem: the host kernel has no sch_netem: $a"; return 3 ;;
			esac
			echo "$a"
			return 1
		fi
		echo "t=$(now) tap$rank netem $* for at most $secs s" ;;
	netem-clear)
		netem_clear "$rank" ;;
	*)
		echo "fault: unknown kind '$kind' (kill, link-down, link-up, netem, netem-clear)"
		return 2 ;;
	esac
}

# Undo link cuts and netem whose deadline has passed.
expire() {
	local f t kind rank
	for f in "$DIR"/restore.*; do
		[ -f "$f" ] || continue
		read -r t <"$f" || continue
		[ "$(date +%s)" -ge "$t" ] || continue
		kind=${f##*/restore.}
		rank=${kind#*.}
		kind=${kind%%.*}
		case $kind in
		link) log_fault "deadline: $(link_up "$rank" 2>&1)" ;;
		netem) log_fault "deadline: $(netem_clear "$rank" 2>&1)" ;;
		esac
		rm -f "$f"
	done
}

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
		if [ "${1:-}" = fault ]; then
			shift
			out=$(fault "$@" 2>&1)
			rc=$?
			log_fault "from node$rank: $* -> $rc: $out"
		else
			out=$(timeout 120 python3 "$SRC/tests/netmon/inject.py" --iface "tap$rank" "$@" 2>&1)
			rc=$?
			echo "$(date +%T) tap$rank: $* -> $rc: $out"
		fi
		printf '%s\n%s\n' "$rc" "$out" >"$DIR/resp.$id.tmp"
		mv "$DIR/resp.$id.tmp" "$DIR/resp.$id"
	done
	expire
	sleep 0.05
done
