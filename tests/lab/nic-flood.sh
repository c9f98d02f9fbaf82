#!/bin/sh
# collx lab: stress the nodes' virtio-net queues, then check every node
# still reaches every other and no NIC stalled.  A job for lab.sh, e.g.
#
#   tests/lab/lab.sh -k 6.1 -n 4 -t 360 -S -M -e FLOOD_S=200 \
#       -- tests/lab/nic-flood.sh
#
# Each node ping-floods the next one (ring order) with FLOOD_PRELOAD
# (default 64) echo requests of FLOOD_SIZE (default 200) bytes in flight,
# for FLOOD_S (default 120) seconds: many small packets both ways, so the
# guest adds buffers to its queues while QEMU's I/O thread drains them.
# That is the race of tests/lab/README.md "When a node's NIC stops
# sending".  Traffic stays on the lab's bridge.  Exit 1 when a node cannot
# reach another afterwards or its kernel logged a NETDEV WATCHDOG.
. "$COLLX_SRC/tests/lab/lib.sh"
R=$COLLX_RANK
N=$COLLX_NRANKS

ping -q -f -l "${FLOOD_PRELOAD:-64}" -s "${FLOOD_SIZE:-200}" \
	-w "${FLOOD_S:-120}" "$(lab_addr $(((R + 1) % N)))" 2>&1 | tail -n 3
# Every node checks while every other is still up (a node that finished
# early must not be taken for a stalled one).
lab_barrier flooded 120 || exit 1
rc=0
i=0
while [ "$i" -lt "$N" ]; do
	if [ "$i" -ne "$R" ] && ! ping -q -c 3 -W 2 "$(lab_addr "$i")" >/dev/null 2>&1; then
		echo "node$R: cannot reach node$i after the flood"
		rc=1
	fi
	i=$((i + 1))
done
if dmesg | grep -m2 'NETDEV WATCHDOG'; then
	echo "node$R: its NIC stalled"
	rc=1
fi
lab_barrier checked 120
exit $rc
