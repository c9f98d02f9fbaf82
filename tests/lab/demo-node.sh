#!/bin/sh
# collx demo, on each node: a one-line summary of its RDMA link and of the
# collx module, then collx-bench allreduce (fp32 sum, 8 B to 1 MiB) on all
# nodes, then the link's own figure from ib_write_bw between node0 and
# node1, both ways at once (a ring sends and receives at once), then Gloo's
# ring allreduce over ibverbs on the same nodes when it is built, then
# (with collx-netmon built, BTF and the switch agent) a run of 256 KiB
# allreduces with pause frames injected on every node while collx-netmon
# logs ops and pauses, for demo.sh's timeline picture.
. "$COLLX_SRC/tests/lab/lib.sh"
state=$(rdma link show rxe0/1 | sed -n 's/.* state \([A-Z_]*\) physical_state.*/\1/p')
mtu=$(ibv_devinfo -d rxe0 | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
gid=$(cat /sys/class/infiniband/rxe0/ports/1/gids/1)
# An IPv4-mapped GID reads better as ::ffff:a.b.c.d.
case $gid in
0000:0000:0000:0000:0000:ffff:*)
	h=$(printf '%s' "${gid#0000:0000:0000:0000:0000:ffff:}" | tr -d :)
	gid=$(printf '::ffff:%d.%d.%d.%d' 0x$(echo "$h" | cut -c1-2) 0x$(echo "$h" | cut -c3-4) \
		0x$(echo "$h" | cut -c5-6) 0x$(echo "$h" | cut -c7-8))
	;;
esac
collx=$("$COLLX_SRC/user/tools/collx-info" --json | sed -n \
	's/.*"module_version": "\([^"]*\)", "abi_major": \([0-9]*\), "abi_minor": \([0-9]*\), "nr_devices": \([0-9]*\).*/v\1 ABI \2.\3, \4 device(s)/p')
printf '%-6s %-12s %-6s %-7s %-5s %-22s %s\n' "node$COLLX_RANK" "$COLLX_NODE_ADDR" \
	rxe0 "$state" "$mtu" "$gid" "loaded $collx" >"$COLLX_NODE_DIR/summary"
[ "$COLLX_NRANKS" -ge 2 ] || exit 0

lab_barrier demo-bench 120 || exit 1
timeout 600 "$COLLX_SRC/user/tools/collx-bench" -b 8 -e 1M -f 2 -d float -o sum \
	-n 5 -w 1 -c 1 -J "$COLLX_NODE_DIR/bench.json" >"$COLLX_NODE_DIR/bench.txt" 2>&1
rc=$?

lab_barrier demo-bw 120 || exit 1
case $COLLX_RANK in
1)
	timeout 120 ib_write_bw -d rxe0 -x 1 -b -s 1048576 -n 50 -F >/dev/null 2>&1 &
	sleep 1
	lab_barrier demo-bw-go 60
	wait $!
	;;
0)
	lab_barrier demo-bw-go 60
	sleep 1
	timeout 120 ib_write_bw -d rxe0 -x 1 -b -s 1048576 -n 50 -F "$(lab_addr 1)" \
		>"$COLLX_NODE_DIR/write_bw.txt" 2>&1
	;;
*) lab_barrier demo-bw-go 60 ;;
esac

GLOO=$COLLX_SRC/.build/bench/gloo_allreduce
if [ -x "$GLOO" ]; then
	mkdir -p "$COLLX_LAB_DIR/gloo-store"
	lab_barrier demo-gloo 120 || exit 1
	# GID index 1: rxe's RoCE v2 GID of the IPv4 address.
	timeout 300 "$GLOO" "$COLLX_RANK" "$COLLX_NRANKS" "$COLLX_LAB_DIR/gloo-store" \
		rxe0 1 8 1048576 5 >"$COLLX_NODE_DIR/gloo.txt" 2>&1 || rc=1
fi

# The same conditions on every node, so all or none reach the barrier.
if [ -x "$COLLX_SRC/user/netmon/collx-netmon" ] && [ -e /sys/kernel/btf/vmlinux ] &&
	[ -f "$COLLX_LAB_DIR/switch/ready" ] && [ -d /sys/kernel/tracing/events/collx ]; then
	. "$COLLX_SRC/tests/netmon/lab-lib.sh"
	# PFC frames go to 01:80:c2:00:00:01: let eth0 take them in
	ip maddr add 01:80:c2:00:00:01 dev eth0 2>/dev/null
	nm_start demo -I eth0 -i 1
	lab_barrier demo-netmon 120 || exit 1
	timeout 120 "$COLLX_SRC/user/tools/collx-bench" -b 256K -e 256K -n 20 -w 2 \
		>"$NM_DIR/bench.log" 2>&1 &
	bpid=$!
	sleep 2
	# 30 pauses of 0xffff quanta on priority 3, 20 ms apart, while ops run
	switch_inject pfc --prio 3 --quanta 0xffff --count 30 --interval-us 20000 || rc=1
	wait "$bpid" || rc=1
	sleep 1
	nm_stop demo
fi
exit $rc
