#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot arm64 lab nodes in qemu-system-aarch64 (TCG, -M virt) and run one
# command on each:
#   tests/arm64/lab.sh -k KVER -r ROOT.cpio.gz [-n NODES] [-t SECS] -- CMD
# Every node boots Debian's arm64 kernel KVER (from the cache of
# scripts/arm64/fetch.sh) with ROOT (scripts/arm64/mkroot.sh) as its
# initramfs; node-init brings up rxe0 on a virtio-net link and runs CMD
# with COLLX_RANK/NRANKS/MASTER_ADDR set.  The nodes share one Ethernet
# segment through QEMU's socket backend on 127.0.0.1 (multicast would need
# a route; 2 nodes take a point-to-point stream, more a hub VM would), so
# no root, bridge or tap is needed.  Serial logs go to LOGDIR (-l, default
# $ARM64_CACHE/lab).  Exit status: 0 if every node printed
# "COLLX-ARM64-RESULT 0".  Run it under flock /tmp/collx-lab.lock.
set -euo pipefail
. "$(dirname "$0")/../../scripts/arm64/env.sh"

nodes=2 secs=300 kver='' root='' logdir=$ARM64_CACHE/lab
while getopts "k:r:n:t:l:" o; do
	case $o in
	k) kver=$OPTARG ;;
	r) root=$OPTARG ;;
	n) nodes=$OPTARG ;;
	t) secs=$OPTARG ;;
	l) logdir=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ -n "$kver" ] && [ -f "$root" ] && [ $# -gt 0 ] ||
	{ echo "usage: $0 -k KVER -r ROOT [-n 1|2] [-t SECS] [-l LOGDIR] -- CMD" >&2; exit 2; }
[ "$nodes" -le 2 ] || { echo "lab.sh: at most 2 nodes" >&2; exit 2; }
command -v qemu-system-aarch64 >/dev/null ||
	{ arm64_log "no qemu-system-aarch64 (apt-get install qemu-system-arm)"; exit 1; }
kernel=$ARM64_CACHE/kernel/$kver/boot/vmlinuz-$kver
[ -f "$kernel" ] || { arm64_log "no $kernel (scripts/arm64/fetch.sh)"; exit 1; }
mkdir -p "$logdir"

# The command travels on the kernel command line: spaces become +.
cmdword=$(printf '%s ' "$@" | sed 's/ *$//; s/ /+/g')
port=$((20000 + $$ % 20000))
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

start=$(date +%s)
for ((i = 0; i < nodes; i++)); do
	if [ "$i" = 0 ]; then
		net="socket,id=n0,listen=127.0.0.1:$port"
	else
		net="socket,id=n0,connect=127.0.0.1:$port"
	fi
	log=$logdir/node$i.log
	: >"$log"
	# maxcpus=2: TCG keeps barriers and atomics (tests/lab/lab.sh, SMP)
	timeout -k 5 "$secs" qemu-system-aarch64 -M virt -cpu cortex-a72 \
		-accel tcg -smp 1,maxcpus=2 -m 1024 -display none -monitor none \
		-serial "file:$log" -no-reboot -kernel "$kernel" -initrd "$root" \
		-netdev "$net" -device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:$((10 + i))" \
		-append "console=ttyAMA0 panic=-1 quiet collx.rank=$i collx.nranks=$nodes collx.cmd=$cmdword" \
		</dev/null >"$logdir/qemu$i.log" 2>&1 &
	pids+=($!)
	# the listener must be up before the other node connects
	[ "$i" = 0 ] && [ "$nodes" -gt 1 ] && sleep 1
done
rc=0
for ((i = 0; i < nodes; i++)); do
	wait "${pids[$i]}" || true
	r=$(sed -n 's/.*COLLX-ARM64-RESULT \([0-9]*\).*/\1/p' "$logdir/node$i.log" | tail -n1)
	if [ "$r" != 0 ]; then
		arm64_log "node $i: result ${r:-none} (log: $logdir/node$i.log)"
		tail -n 25 "$logdir/node$i.log" | sed 's/^/arm64: | /' >&2
		rc=1
	fi
done
pids=()
arm64_log "$kver, $nodes node(s): $(($(date +%s) - start)) s wall"
exit $rc
