#!/bin/bash
# collx lab: boot N QEMU nodes of a Debian kernel on a private bridge,
# bring up soft-RoCE on each, load the fresh collx.ko and run a command on
# every node.  See tests/lab/README.md.
#
#   tests/lab/lab.sh [-k 6.1|6.12|<release>] [-n NODES] [-t SECONDS]
#                    [-o OUTDIR] [-m MODULE.ko|-M] [-s SCRIPT|-S] [-q]
#                    -- COMMAND [ARGS...]
#
# -s SCRIPT runs on the host inside the lab's namespace (the "switch": br0
# and the taps), in OUTDIR, alongside the nodes, and is stopped when they
# finish (default: tests/netmon/switch-agent.sh when present; -S: none).
#
# Exit status: 0 when every node's command exited 0 and no node's kernel
# log shows an oops, WARN, BUG or KFENCE report; 1 otherwise (each failed
# node and the reason are printed); 2 on bad usage.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAB_DIR=$SRC/tests/lab
CACHE=$SRC/.build/lab

KERNEL=6.12
NODES=4
TIMEOUT=600
OUT=
MODULE=auto
QUIET=0
SWITCH=auto
NET_PREFIX=10.77.0
HOST_BASE=10
MTU=9000
MEM_MB=${COLLX_LAB_MEM_MB:-1024}

usage() {
	sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while getopts "k:n:t:o:m:Ms:Sqh" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	t) TIMEOUT=$OPTARG ;;
	o) OUT=$OPTARG ;;
	m) MODULE=$OPTARG ;;
	M) MODULE= ;;
	s) SWITCH=$OPTARG ;;
	S) SWITCH= ;;
	q) QUIET=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] || usage
case $NODES in '' | *[!0-9]*) echo "lab: -n wants a number" >&2; exit 2 ;; esac
[ "$NODES" -ge 1 ] && [ "$NODES" -le 16 ] || { echo "lab: -n must be 1..16" >&2; exit 2; }

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# "6.1" or "6.12": the newest installed Debian kernel of that series.
resolve_kernel() {
	local k=$1 rel
	if [ -e "/boot/vmlinuz-$k" ]; then
		echo "$k"
		return
	fi
	rel=$(cd /boot && ls -1 vmlinuz-"$k".[0-9]* 2>/dev/null |
		sed 's/^vmlinuz-//' | sort -V | tail -n1)
	[ -n "$rel" ] || die "no kernel $k in /boot (scripts/install-deps.sh installs 6.1 and 6.12)"
	echo "$rel"
}

KREL=$(resolve_kernel "$KERNEL")
VMLINUZ=/boot/vmlinuz-$KREL
[ -r "$VMLINUZ" ] || die "cannot read $VMLINUZ"
[ -d "/lib/modules/$KREL" ] || die "no /lib/modules/$KREL"

if [ "$MODULE" = auto ]; then
	MODULE=$SRC/build/$KREL/kmod/collx.ko
	[ -f "$MODULE" ] || die "$MODULE not built: run 'make module KVER=$KREL'"
fi
if [ "$SWITCH" = auto ]; then
	SWITCH=$SRC/tests/netmon/switch-agent.sh
	[ -x "$SWITCH" ] || SWITCH=
fi
if [ -n "$SWITCH" ]; then
	SWITCH=$(readlink -f "$SWITCH")
	[ -x "$SWITCH" ] || die "switch script $SWITCH is not executable"
fi
if [ -n "$MODULE" ]; then
	MODULE=$(readlink -f "$MODULE")
	[ -f "$MODULE" ] || die "no module $MODULE"
fi

# The initramfs: static busybox, the modules that reach the host's root
# (virtio, 9p, overlay) in dependency order, and initramfs-init.
build_initramfs() {
	local img=$CACHE/initramfs-$KREL.cpio.gz dir m f
	if [ -f "$img" ] && [ "$img" -nt "$LAB_DIR/initramfs-init" ] &&
		[ "$img" -nt "$0" ]; then
		echo "$img"
		return
	fi
	[ -x /bin/busybox ] || die "no /bin/busybox (package busybox-static)"
	dir=$(mktemp -d)
	mkdir -p "$dir"/{bin,dev,proc,sys,modules}
	cp /bin/busybox "$dir/bin/busybox"
	cp "$LAB_DIR/initramfs-init" "$dir/init"
	: >"$dir/modules/order"
	modprobe -S "$KREL" --show-depends -a virtio_pci 9pnet_virtio 9p overlay |
		awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
		while read -r f; do
			m=$(basename "$f")
			case $m in
			*.xz) xz -dc "$f" >"$dir/modules/${m%.xz}"; m=${m%.xz} ;;
			*.zst) zstd -qdc "$f" >"$dir/modules/${m%.zst}"; m=${m%.zst} ;;
			*) cp "$f" "$dir/modules/$m" ;;
			esac
			echo "$m" >>"$dir/modules/order"
		done
	mkdir -p "$CACHE"
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$img.tmp"
	mv "$img.tmp" "$img"
	rm -rf "$dir"
	echo "$img"
}

# KVM where it really boots a distro kernel; TCG otherwise.  The answer is
# cached per machine: a failed probe costs one short timeout.
pick_accel() {
	local initrd=$1 res
	if [ -n "${COLLX_LAB_ACCEL:-}" ]; then
		echo "$COLLX_LAB_ACCEL"
		return
	fi
	if [ ! -w /dev/kvm ]; then
		echo tcg
		return
	fi
	if [ -f "$CACHE/accel" ]; then
		cat "$CACHE/accel"
		return
	fi
	res=tcg
	if timeout -k 2 25 qemu-system-x86_64 -accel kvm -cpu host -m 256 \
		-kernel "$VMLINUZ" -initrd "$initrd" -display none -monitor none \
		-serial stdio -no-reboot \
		-append "console=ttyS0 panic=-1 quiet lab.probe=1" 2>/dev/null |
		grep -q LAB-PROBE-OK; then
		res=kvm
	fi
	echo "$res" >"$CACHE/accel"
	echo "$res"
}

INITRD=$(build_initramfs)
ACCEL=$(pick_accel "$INITRD")
if [ "$ACCEL" = kvm ]; then
	CPU="-accel kvm -cpu host"
else
	CPU="-accel tcg -cpu max"
fi

[ -n "$OUT" ] || OUT=$CACHE/run-$KERNEL-$(date +%Y%m%d-%H%M%S)-$$
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
mkdir -p "$OUT/barrier"

{
	echo "LAB_NODES=$NODES"
	echo "LAB_NET_PREFIX=$NET_PREFIX"
	echo "LAB_HOST_BASE=$HOST_BASE"
	echo "LAB_MTU=$MTU"
	echo "LAB_MODULE=$MODULE"
	echo "LAB_SRC=$SRC"
	echo "LAB_JOB_TIMEOUT=$TIMEOUT"
} >"$OUT/env"
{
	echo "#!/bin/sh"
	printf '%q ' "$@"
	echo
} >"$OUT/job.sh"

NS=collx-lab-$$
PIDS=()
SWITCH_PID=
cleanup() {
	local p
	for p in "${PIDS[@]}" $SWITCH_PID; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}" $SWITCH_PID; do
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The switch: a bridge in a namespace of our own, one tap per node.
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge
ip -n "$NS" link set br0 mtu "$MTU" up
for ((i = 0; i < NODES; i++)); do
	ip -n "$NS" tuntap add "tap$i" mode tap
	ip -n "$NS" link set "tap$i" mtu "$MTU" master br0 up
done

log "$NODES node(s), kernel $KREL, $ACCEL, results in $OUT"
START=$(date +%s)
# The host's timeout covers boot and shutdown as well as the job.
QEMU_TIMEOUT=$((TIMEOUT + 180))
if [ -n "$SWITCH" ]; then
	(cd "$OUT" && LAB_OUT=$OUT LAB_NODES=$NODES LAB_SRC=$SRC LAB_NS=$NS \
		exec ip netns exec "$NS" timeout -k 5 "$QEMU_TIMEOUT" "$SWITCH") \
		>"$OUT/switch.log" 2>&1 &
	SWITCH_PID=$!
fi
for ((i = 0; i < NODES; i++)); do
	mkdir -p "$OUT/node$i"
	# shellcheck disable=SC2086
	ip netns exec "$NS" timeout -k 5 "$QEMU_TIMEOUT" \
		qemu-system-x86_64 -name "node$i" $CPU -smp 1 -m "$MEM_MB" \
		-kernel "$VMLINUZ" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet kfence.sample_interval=1 lab.rank=$i lab.script=$LAB_DIR/guest.sh" \
		-display none -monitor none -no-reboot \
		-serial "file:$OUT/node$i/console.log" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$OUT,mount_tag=lab,security_model=none" \
		-netdev "tap,id=net0,ifname=tap$i,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=net0,mac=52:54:00:c0:11:$(printf %02x $((i + 1)))" \
		>"$OUT/node$i/qemu.log" 2>&1 &
	PIDS+=($!)
done

for p in "${PIDS[@]}"; do
	wait "$p" || true
done
PIDS=()
if [ -n "$SWITCH_PID" ]; then
	kill "$SWITCH_PID" 2>/dev/null || true
	wait "$SWITCH_PID" 2>/dev/null || true
	SWITCH_PID=
fi
log "nodes finished in $(($(date +%s) - START)) s"

BAD='Oops|BUG:|WARNING:|KFENCE:|UBSAN:|general protection fault|Kernel panic|kernel BUG at|Call Trace:'
failed=0
for ((i = 0; i < NODES; i++)); do
	d=$OUT/node$i
	if [ "$QUIET" = 0 ] && [ -f "$d/out.log" ]; then
		sed "s/^/[node$i] /" "$d/out.log"
	fi
	why=
	if [ -f "$d/setup-error" ]; then
		why="setup failed: $(cat "$d/setup-error")"
	elif [ ! -f "$d/rc" ]; then
		why="no result: timeout after ${TIMEOUT} s or crash; console tail:"$'\n'"$(tail -n 15 "$d/console.log" 2>/dev/null)"
	elif [ "$(cat "$d/rc")" = 124 ]; then
		why="command timed out after ${TIMEOUT} s"
	elif [ "$(cat "$d/rc")" != 0 ]; then
		why="command exited $(cat "$d/rc")"
	fi
	if grep -Eq "$BAD" "$d/dmesg" "$d/console.log" 2>/dev/null; then
		why="${why:+$why; }kernel reported: $(grep -Eh -m3 "$BAD" "$d/dmesg" "$d/console.log" 2>/dev/null | head -n3 | tr '\n' ' ')"
	fi
	if [ -n "$why" ]; then
		log "node$i: FAILED: $why"
		failed=1
	fi
done
[ "$failed" = 0 ] && log "all $NODES node(s) ok"
exit "$failed"
