#!/bin/bash
# collx bench, on each lab node (tests/bench/bench.sh boots the lab with
# this as the job; see Documentation/bench.md).  Every node runs the same
# steps in the same order, each behind a file barrier:
#   link    ib_write_bw node0 -> node1 one way, then both ways (-b), at
#           every size (node0 and node1 only; the others wait)
#   collx   collx-bench, every collective x every algorithm that can run
#           it, registered (-R 1), each collective waited for (-z 1, as
#           Gloo's run() is), with --cpu
#   cpu     a 1 MiB registered async allreduce (-R 1 -z 0, auto), --cpu
#   gloo    tests/bench/gloo_bench (when built): Gloo over ibverbs
#   small   on 4+ nodes, target (1) again: SMALL_ROUNDS (5) rounds of the
#           4 KiB allreduce, every collx algorithm then Gloo's two, so
#           that collx and Gloo are timed seconds apart, not minutes
#   wire    what one 4 KiB allreduce puts on the wire: rxe's packet and
#           message counters and the node's context switches around 300
#           of them, per collx algorithm and Gloo algorithm
# Results go to $COLLX_NODE_DIR (rank 0 writes collx-bench's JSON);
# bench_report.py reads them on the host.
#
#   bench-node.sh [-s SIZES] [-x EXTRA_SIZES] [-p STEPS] [-c SERIES]
#
# SIZES (bytes, comma-separated; default 4K..4M x4) are the table's;
# EXTRA_SIZES (default none) are run as well by the collectives that have
# algorithm thresholds (allreduce, broadcast, reduce, allgather,
# reduce-scatter) and by Gloo, for Documentation/engine.md's crossovers.
# STEPS: comma-separated from link,collx,cpu,gloo,small,wire (default all).  SERIES
# (default all): comma-separated collective:algo pairs for the collx step.
# Iterations fall with the size (iters_for below): the whole bench stays
# within its time budget under TCG.  Every command runs under timeout.
. "$COLLX_SRC/tests/lab/lib.sh"
set -u

SIZES=4096,16384,65536,262144,1048576,4194304
EXTRA=
STEPS=link,collx,cpu,gloo,small,wire
SMALL_ROUNDS=${SMALL_ROUNDS:-5}
SERIES="allreduce:ring allreduce:tree allreduce:rd broadcast:ring broadcast:tree reduce:ring reduce:tree allgather:ring allgather:rd reduce_scatter:ring reduce_scatter:rd alltoall:pairwise alltoall:ring sendrecv:p2p"
while getopts "s:x:p:c:" opt; do
	case $opt in
	s) SIZES=$OPTARG ;;
	x) EXTRA=$OPTARG ;;
	p) STEPS=$OPTARG ;;
	c) SERIES=${OPTARG//,/ } ;;
	*) echo "usage: bench-node.sh [-s SIZES] [-x EXTRA_SIZES] [-p STEPS] [-c SERIES]" >&2; exit 2 ;;
	esac
done

BENCH=$COLLX_SRC/user/tools/collx-bench
GLOO=$COLLX_SRC/.build/bench/gloo_bench
OUT=$COLLX_NODE_DIR
N=$COLLX_NRANKS
R=$COLLX_RANK
export COLLX_BOOTSTRAP_TIMEOUT=60 COLLX_DEBUG=WARN
rc=0
PORT=29700

# A barrier may wait for a node still in a long step (a 4 MiB series).
barrier() {
	lab_barrier "bench-$1" 600 || { echo "bench: barrier $1 failed" >&2; exit 1; }
}

has_step() {
	case ",$STEPS," in *",$1,"*) return 0 ;; esac
	return 1
}

# host-clock seconds a step took, one line per step, for bench.sh's
# account of where the time went
step_log() {
	printf '%s %s %s %s\n' "$1" "$2" "$(lab_host_now)" "$3" >>"$OUT/steps.log"
}

# Timed iterations per size, fewer for the large ones (one collx-bench
# run per count: each run's start costs a few seconds under TCG).
iters_for() {
	if [ "$1" -le 65536 ]; then
		echo 20
	elif [ "$1" -le 1048576 ]; then
		echo 4
	else
		echo 2
	fi
}

# nccl-tests' count for S bytes of fp32: per rank for allgather,
# reduce-scatter and alltoall (at least one element).
count_for() {
	local c
	case $1 in
	allgather | reduce_scatter | alltoall) c=$(($2 / 4 / N)) ;;
	*) c=$(($2 / 4)) ;;
	esac
	[ "$c" -ge 1 ] || c=1
	echo "$c"
}

sizes_of() {
	case $1 in
	allreduce | broadcast | reduce | allgather | reduce_scatter)
		echo "${EXTRA:+$EXTRA,}$SIZES" ;;
	*) echo "$SIZES" ;;
	esac
}

: >"$OUT/steps.log"
uname -r >"$OUT/kernel"

# ---- link: ib_write_bw node0 (client) -> node1 (server) ----
if has_step link && [ "$N" -ge 2 ]; then
	mkdir -p "$OUT/link"
	t0=$(lab_host_now)
	k=0
	for mode in one both; do
		flag=
		[ "$mode" = both ] && flag=-b
		for s in ${SIZES//,/ }; do
			k=$((k + 1))
			# about 8 MiB per run, at least 5 messages (perftest's
			# least), at most 1000
			n=$((8388608 / s))
			[ "$n" -ge 5 ] || n=5
			[ "$n" -le 1000 ] || n=1000
			port=$((18515 + k))
			barrier "link-$k"
			case $R in
			1)
				# shellcheck disable=SC2086
				timeout 120 ib_write_bw -d rxe0 -x 1 $flag -s "$s" -n "$n" -p "$port" -F \
					>"$OUT/link/$mode-$s.txt" 2>&1 &
				srv=$!
				barrier "link-go-$k"
				wait "$srv" || rc=1
				;;
			0)
				barrier "link-go-$k"
				# The server may still be starting: try again (a few
				# times) while it cannot be reached.  Every try's
				# output stays in the file; the report reads the last
				# result line.
				: >"$OUT/link/$mode-$s.txt"
				try=0
				until sleep 0.5 && timeout 120 ib_write_bw -d rxe0 -x 1 $flag -s "$s" \
					-n "$n" -p "$port" -F "$(lab_addr 1)" </dev/null \
					>>"$OUT/link/$mode-$s.txt" 2>&1; do
					try=$((try + 1))
					if [ "$try" -ge 5 ] ||
						! tail -n 3 "$OUT/link/$mode-$s.txt" | grep -q "Couldn't connect"; then
						rc=1
						echo "bench: ib_write_bw $mode $s failed (node0/link/$mode-$s.txt)" >&2
						break
					fi
				done
				;;
			*) barrier "link-go-$k" ;;
			esac
		done
	done
	step_log link "$t0" "$rc"
fi

# ---- collx: collx-bench, one run per (collective, algorithm, iteration count) ----
# $1 collective, $2 algorithm, $3 tag, $4 sizes, then collx-bench's flags;
# results in $OUT/$RUN_DIR (collx)
run_collx() {
	local coll=$1 algo=$2 tag=$3 sizes=$4 counts='' s n='' t0 r dir=$OUT/${RUN_DIR:-collx}
	shift 4
	for s in ${sizes//,/ }; do
		counts=${counts:+$counts,}$(count_for "$coll" "$s")
		n=$(iters_for "$s")
	done
	PORT=$((PORT + 1))
	barrier "$coll-$algo-$tag"
	t0=$(lab_host_now)
	COLLX_MASTER_PORT=$PORT timeout -k 5 400 "$BENCH" -t "$coll" --algo "$algo" \
		--counts "$counts" -n "$n" -c 1 --cpu -T 120 \
		-J "$dir/$coll-$algo-$tag.json" "$@" </dev/null >"$dir/$coll-$algo-$tag.txt" 2>&1
	r=$?
	[ "$r" = 0 ] || { rc=1; echo "bench: collx-bench $coll $algo $tag: exit $r" >&2; }
	step_log "${RUN_DIR:-collx}:$coll:$algo:$tag" "$t0" "$r"
}

# sizes grouped by their iteration count, one collx-bench run per group
groups_of() {
	local s n prev='' list=''
	for s in ${1//,/ }; do
		n=$(iters_for "$s")
		if [ -n "$prev" ] && [ "$n" != "$prev" ]; then
			echo "$prev $list"
			list=
		fi
		prev=$n
		list=${list:+$list,}$s
	done
	[ -z "$list" ] || echo "$prev $list"
}

mkdir -p "$OUT/collx"
if has_step collx; then
	for sa in $SERIES; do
		coll=${sa%%:*}
		algo=${sa#*:}
		while read -r n list; do
			# warm-up: 2 per size for the small ones, 1 for the large
			w=1
			[ "$n" -lt 20 ] || w=2
			run_collx "$coll" "$algo" "n$n" "$list" -w "$w" -R 1 -z 1
		done <<<"$(groups_of "$(sizes_of "$coll")")"
	done
fi

# ---- cpu: target (3), a 1 MiB registered async allreduce ----
if has_step cpu; then
	run_collx allreduce auto async 1048576 -n 10 -w 2 -R 1 -z 0
fi

# ---- gloo: gloo_bench, every collective in one process ----
if has_step gloo; then
	if [ -x "$GLOO" ]; then
		spec=
		for s in ${EXTRA:+${EXTRA//,/ }} ${SIZES//,/ }; do
			spec=${spec:+$spec,}$s:$(iters_for "$s")
		done
		mkdir -p "$COLLX_LAB_DIR/gloo-store"
		barrier gloo
		t0=$(lab_host_now)
		# GID index 1: rxe's RoCE v2 GID of the IPv4 address.
		timeout -k 5 900 "$GLOO" "$R" "$N" "$COLLX_LAB_DIR/gloo-store" rxe0 1 \
			allreduce_ring,allreduce_hd,broadcast,allgather,reduce_scatter,reduce,alltoall "$spec" \
			>"$OUT/gloo.txt" 2>&1
		r=$?
		[ "$r" = 0 ] || { rc=1; echo "bench: gloo_bench: exit $r" >&2; }
		step_log gloo "$t0" "$r"
	else
		echo "bench: no $GLOO (libgloo-dev: scripts/install-deps.sh --bench): no Gloo columns" >&2
	fi
fi

# ---- small: target (1), collx and Gloo alternating ----
# The table's collx and Gloo runs are minutes apart, and a TCG lab's speed
# drifts that much (two boots read the 4 KiB ratio as 0.72 and 1.29):
# here each round times every collx algorithm and then Gloo's two within
# seconds, and bench_report.py takes the median of the rounds' ratios.
if has_step small && [ "$N" -ge 4 ]; then
	mkdir -p "$OUT/small"
	k=0
	while [ "$k" -lt "$SMALL_ROUNDS" ]; do
		k=$((k + 1))
		for algo in ring tree rd; do
			RUN_DIR=small run_collx allreduce "$algo" "r$k" 4096 -w 2 -R 1 -z 1
		done
		[ -x "$GLOO" ] || continue
		mkdir -p "$COLLX_LAB_DIR/gloo-small-$k"
		barrier "gloo-small-$k"
		t0=$(lab_host_now)
		timeout -k 5 300 "$GLOO" "$R" "$N" "$COLLX_LAB_DIR/gloo-small-$k" rxe0 1 \
			allreduce_ring,allreduce_hd 4096:20 >"$OUT/small/gloo-r$k.txt" 2>&1
		r=$?
		[ "$r" = 0 ] || { rc=1; echo "bench: gloo_bench, small round $k: exit $r" >&2; }
		step_log "small:gloo:r$k" "$t0" "$r"
	done
fi

# ---- wire: rxe's counters around 300 back-to-back 4 KiB allreduces ----
# Setup (connections, rendezvous) is in the counts too, spread over the
# 300.  node0 writes "name ops sent_pkts rcvd_pkts rdma_sends rdma_recvs
# ctxt" deltas to wire.txt.
HC=/sys/class/infiniband/rxe0/ports/1/hw_counters
wire_snap() {
	echo "$(cat $HC/sent_pkts $HC/rcvd_pkts $HC/rdma_sends $HC/rdma_recvs) $(awk '$1 == "ctxt" { print $2 }' /proc/stat)"
}
wire_log() {	# $1 name, $2 ops, $3 before, $4 after
	# shellcheck disable=SC2086 # the snapshots' words
	set -- "$1" "$2" $3 $4
	[ "$R" != 0 ] || echo "$1 $2 $(($8 - $3)) $(($9 - $4)) $((${10} - $5)) $((${11} - $6)) $((${12} - $7))" >>"$OUT/wire.txt"
}
if has_step wire && [ -r "$HC/sent_pkts" ]; then
	: >"$OUT/wire.txt"
	t0=$(lab_host_now)
	for algo in ring tree rd; do
		barrier "wire-$algo"
		b=$(wire_snap)
		PORT=$((PORT + 1))
		COLLX_MASTER_PORT=$PORT timeout -k 5 300 "$BENCH" -t allreduce --algo "$algo" \
			--counts 1024 -n 300 -w 0 -c 0 -R 1 -z 1 </dev/null >/dev/null 2>&1 ||
			{ rc=1; echo "bench: wire: collx-bench $algo failed" >&2; }
		wire_log "collx:$algo" 301 "$b" "$(wire_snap)"
	done
	if [ -x "$GLOO" ]; then
		for g in allreduce_ring allreduce_hd; do
			mkdir -p "$COLLX_LAB_DIR/gloo-wire-$g"
			barrier "wire-$g"
			b=$(wire_snap)
			timeout -k 5 300 "$GLOO" "$R" "$N" "$COLLX_LAB_DIR/gloo-wire-$g" rxe0 1 \
				"$g" 4096:300 >/dev/null 2>&1 ||
				{ rc=1; echo "bench: wire: gloo_bench $g failed" >&2; }
			wire_log "gloo:$g" 301 "$b" "$(wire_snap)"
		done
	fi
	step_log wire "$t0" "$rc"
fi

barrier end
exit $rc
