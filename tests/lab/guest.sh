#!/bin/sh
# collx lab: second stage of a node, running in the host's userland.
# Brings up eth0 and soft-RoCE (rxe0), loads the freshly built collx.ko and
# runs the job with COLLX_RANK, COLLX_NRANKS and rank 0's address in the
# environment; leaves the exit code, output and dmesg (and, on kernels
# with kmemleak, its findings) in /lab/nodeN/.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C

. /lab/env
for w in $(cat /proc/cmdline); do
	case "$w" in
	lab.rank=*) LAB_RANK=${w#lab.rank=} ;;
	esac
done
NODE_DIR=/lab/node$LAB_RANK
mkdir -p "$NODE_DIR"
exec >"$NODE_DIR/setup.log" 2>&1
KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak reports objects unreferenced for 5 s or more: wait that long
# after the job, scan once, and keep what it found.  A boot of the debug
# kernel alone leaves nothing to report, so every finding is the job's (a
# scan costs ~9 s of emulated CPU: there is no baseline scan).
kmemleak_report() {
	[ -w "$KMEMLEAK" ] || return 0
	sleep 5
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >"$NODE_DIR/kmemleak"
	[ -s "$NODE_DIR/kmemleak" ] || rm -f "$NODE_DIR/kmemleak"
}

finish() {
	[ "$1" = 125 ] || kmemleak_report
	echo "$1" >"$NODE_DIR/rc.tmp" && mv "$NODE_DIR/rc.tmp" "$NODE_DIR/rc"
	dmesg >"$NODE_DIR/dmesg"
	sync
	poweroff -f
}

fail_setup() {
	echo "setup: $*"
	echo "setup: $*" >"$NODE_DIR/setup-error"
	finish 125
}

mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm 2>/dev/null
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname "node$LAB_RANK"

# A kernel built outside the host's /lib/modules (the lab's debug
# kernel): show its modules where modprobe looks.  The root is an overlay,
# so the host is untouched.
KREL=$(uname -r)
if [ -n "${LAB_KMODS:-}" ] && [ ! -d "/lib/modules/$KREL" ]; then
	mkdir -p "/lib/modules/$KREL"
	mount --bind "$LAB_KMODS" "/lib/modules/$KREL" || fail_setup "bind $LAB_KMODS"
fi

addr_of() { echo "$LAB_NET_PREFIX.$((LAB_HOST_BASE + $1))"; }
MY_ADDR=$(addr_of "$LAB_RANK")
: >/etc/hosts
i=0
while [ "$i" -lt "$LAB_NODES" ]; do
	echo "$(addr_of $i) node$i" >>/etc/hosts
	i=$((i + 1))
done
echo "127.0.0.1 localhost" >>/etc/hosts

modprobe virtio_net || fail_setup "modprobe virtio_net"
ip link set lo up
ip link set eth0 mtu "$LAB_MTU" up || fail_setup "eth0 up"
ip addr add "$MY_ADDR/24" dev eth0 || fail_setup "eth0 address"
modprobe rdma_rxe || fail_setup "modprobe rdma_rxe"
modprobe rdma_ucm
rdma link add rxe0 type rxe netdev eth0 || fail_setup "rdma link add rxe0"
n=0
until rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'; do
	n=$((n + 1))
	[ "$n" -lt 100 ] || fail_setup "rxe0 not ACTIVE after 10 s"
	sleep 0.1
done
if [ -n "$LAB_MODULE" ]; then
	insmod "$LAB_MODULE" || fail_setup "insmod $LAB_MODULE"
fi

export COLLX_RANK=$LAB_RANK COLLX_NRANKS=$LAB_NODES
export COLLX_MASTER_ADDR=$(addr_of 0) COLLX_NODE_ADDR=$MY_ADDR
export COLLX_LAB_DIR=/lab COLLX_NODE_DIR=$NODE_DIR COLLX_SRC=$LAB_SRC
export COLLX_KREL=$KREL COLLX_MODULE=$LAB_MODULE
cd "$LAB_SRC" || fail_setup "no $LAB_SRC"
# The host reads this file's mtime as the end of boot and setup.
cut -d' ' -f1 /proc/uptime >"$NODE_DIR/job-start"
echo "node$LAB_RANK: $MY_ADDR, $KREL, job starting after $(cat "$NODE_DIR/job-start") s"
timeout -k 5 "$LAB_JOB_TIMEOUT" sh /lab/job.sh >"$NODE_DIR/out.log" 2>&1
finish $?
