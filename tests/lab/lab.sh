#!/bin/bash
# collx lab: boot N QEMU nodes of a Debian kernel on a private bridge,
# bring up soft-RoCE on each, load the fresh collx.ko and run a command on
# every node.  See tests/lab/README.md.
#
#   tests/lab/lab.sh [-k 6.1|6.12|debug|<release>] [-n NODES] [-c CPUS]
#                    [-t SECONDS] [-o OUTDIR] [-m MODULE.ko|-M]
#                    [-s SCRIPT|-S] [-e NAME=VALUE]... [-r ROOT] [-q]
#                    -- COMMAND [ARGS...]
#
# -k debug boots the lab's debug kernel (KASAN, lockdep, kmemleak, ...;
# tests/lab/debug-kernel/build.sh builds it).  -c gives each node CPUS
# vCPUs (default 1).  -e exports NAME=VALUE to the command on every node.
# -s SCRIPT runs on the host inside the lab's namespace (the "switch": br0
# and the taps), in OUTDIR, alongside the nodes, and is stopped when they
# finish (default: tests/netmon/switch-agent.sh when present; -S: none).
# -r ROOT: the nodes' root is ROOT, not the host's / (e.g. an overlay of /
# with packages installed: tests/lab/deb-lab.sh); it must hold this tree
# at the same path.  Read-only as /, under each node's tmpfs overlay.
#
# Exit status: 0 when every node's command exited 0 and no node's kernel
# log shows an oops, WARN, BUG, KFENCE, KASAN, lockdep or debugobjects
# report, nor kmemleak a leak; 1 otherwise (each failed node and the reason
# are printed); 2 on bad usage.  A node whose VM the switch killed on
# request (tests/lab/lib.sh: lab_fault_kill_node) is reported as such, not
# as a failure.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAB_DIR=$SRC/tests/lab
CACHE=$SRC/.build/lab
DEBUG_KERNEL=${COLLX_DEBUG_KERNEL:-$SRC/.build/debug-kernel}

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
MEM_MB=${COLLX_LAB_MEM_MB:-}
# How nodes cache the host's root (9p cache=): loose, as nothing under it
# changes while a job runs (edit the tree between jobs, not during one);
# COLLX_LAB_9P_CACHE=none reads every access through.
P9CACHE=${COLLX_LAB_9P_CACHE:-loose}
# COLLX_LAB_SMP overrides QEMU's -smp (default: see SMP below; =1 brings
# back the lost-kick race that stalls a node's NIC under TCG).
CPUS=1
NODE_ENV=()
ROOT=/

# Kernel reports that fail a node (here) and a case (run-cases.sh), and
# lines that match them but are no report.  kmemleak's own findings are
# read from its debugfs file at the end of the job (guest.sh).
BAD_RE='Oops|BUG:|WARNING:|KFENCE:|UBSAN:|KASAN|general protection fault|Kernel panic|kernel BUG at|Call Trace:|possible circular locking|lockdep|ODEBUG|BUG: sleeping function|kmemleak|blocked for more than'
BENIGN_RE='RCU lockdep checking is enabled|kmemleak: Kernel memory leak detector initialized|kmemleak: [0-9]+ new suspected memory leaks'

usage() {
	sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

while getopts "k:n:c:t:o:m:Ms:Se:r:qh" opt; do
	case $opt in
	k) KERNEL=$OPTARG ;;
	n) NODES=$OPTARG ;;
	c) CPUS=$OPTARG ;;
	e) NODE_ENV+=("$OPTARG") ;;
	t) TIMEOUT=$OPTARG ;;
	o) OUT=$OPTARG ;;
	m) MODULE=$OPTARG ;;
	M) MODULE= ;;
	s) SWITCH=$OPTARG ;;
	S) SWITCH= ;;
	r) ROOT=$OPTARG ;;
	q) QUIET=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] || usage
case $NODES in '' | *[!0-9]*) echo "lab: -n wants a number" >&2; exit 2 ;; esac
[ "$NODES" -ge 1 ] && [ "$NODES" -le 16 ] || { echo "lab: -n must be 1..16" >&2; exit 2; }
case $CPUS in [1-8]) ;; *) echo "lab: -c must be 1..8" >&2; exit 2 ;; esac
case $P9CACHE in none | loose | mmap) ;; *) echo "lab: COLLX_LAB_9P_CACHE must be none, loose or mmap" >&2; exit 2 ;; esac
for e in "${NODE_ENV[@]}"; do
	[[ ${e%%=*} =~ ^[A-Za-z_][A-Za-z0-9_]*$ && $e == *=* && $e != *[\'$'\n']* ]] ||
		{ echo "lab: -e wants NAME=VALUE (no quote, no newline), not '$e'" >&2; exit 2; }
done

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

ROOT=$(readlink -f "$ROOT")
case $ROOT in *,*) die "-r $ROOT: QEMU takes no comma in a path" ;; esac
[ -d "$ROOT$SRC" ] || die "-r $ROOT: no $SRC in it (the nodes run this tree from their root)"

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

# MODROOT holds lib/modules/<release>; KMODS (debug kernel only) is the
# folder the nodes bind over /lib/modules/<release>.
if [ "$KERNEL" = debug ]; then
	[ -f "$DEBUG_KERNEL/release" ] ||
		die "no debug kernel in $DEBUG_KERNEL: run tests/lab/debug-kernel/build.sh"
	KREL=$(cat "$DEBUG_KERNEL/release")
	VMLINUZ=$DEBUG_KERNEL/bzImage
	MODROOT=$DEBUG_KERNEL
	KMODS=$DEBUG_KERNEL/lib/modules/$KREL
	KDIR_HINT=" KDIR=$DEBUG_KERNEL/build"
	# The checkers' memory (KASAN shadow, redzones, kmemleak) on top.
	: "${MEM_MB:=1536}"
	# Every WARN, KASAN and debugobjects report ends the node at once.
	# acpi=noirq: the AML interpreter, this instrumented under TCG, hits
	# its 30 s loop timeout in QEMU's _PRT once per PCI device.
	KERNEL_ARGS="slub_debug=FZPU panic_on_warn=1 acpi=noirq"
else
	KREL=$(resolve_kernel "$KERNEL")
	VMLINUZ=/boot/vmlinuz-$KREL
	MODROOT=/
	KMODS=
	KDIR_HINT=
	: "${MEM_MB:=1024}"
	KERNEL_ARGS="kfence.sample_interval=1 no_timer_check"
fi
[ -r "$VMLINUZ" ] || die "cannot read $VMLINUZ"
[ -d "$MODROOT/lib/modules/$KREL" ] || die "no $MODROOT/lib/modules/$KREL"

if [ "$MODULE" = auto ]; then
	MODULE=$SRC/build/$KREL/kmod/collx.ko
	[ -f "$MODULE" ] || die "$MODULE not built: run 'make module KVER=$KREL$KDIR_HINT'"
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
		[ "$img" -nt "$0" ] && [ "$img" -nt "$MODROOT/lib/modules/$KREL/modules.dep" ]; then
		echo "$img"
		return
	fi
	[ -x /bin/busybox ] || die "no /bin/busybox (package busybox-static)"
	dir=$(mktemp -d)
	mkdir -p "$dir"/{bin,dev,proc,sys,modules}
	cp /bin/busybox "$dir/bin/busybox"
	cp "$LAB_DIR/initramfs-init" "$dir/init"
	: >"$dir/modules/order"
	# Built-in ones (the debug kernel's) show as "builtin": none to add.
	modprobe -d "$MODROOT" -S "$KREL" --show-depends -a virtio_pci 9pnet_virtio 9p overlay |
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
SMP=$CPUS
if [ "$ACCEL" = kvm ]; then
	CPU="-accel kvm -cpu host"
else
	CPU="-accel tcg -cpu max"
	# QEMU before 8.1 (Debian's is 7.2) translates a one-CPU guest
	# without memory barriers or atomic ops, while virtio-net runs in
	# the I/O thread on another host core: a virtqueue kick can then be
	# lost for good and the NIC never sends again (README.md, "When a
	# node's NIC stops sending").  A second, offline CPU slot makes TCG
	# translate for parallel use; upstream fixed it in 8.1 ("tcg: Do not
	# elide memory barriers for !CF_PARALLEL in system mode").
	# With a second CPU possible, the guest would find its TSC
	# "unsynchronized" and time everything with the emulated HPET (slow,
	# and too noisy for perftest's clock check); one online vCPU's TSC
	# is as reliable as with -smp 1.
	if [ "$CPUS" = 1 ]; then
		SMP=1,maxcpus=2
		KERNEL_ARGS="$KERNEL_ARGS tsc=reliable"
	fi
	# The emulated CPU runs nobody else's code: retpolines and RSB
	# filling only cost translated blocks (5 cases on 6.1 took 356 s
	# with them, 320 s and 326 s without).
	KERNEL_ARGS="$KERNEL_ARGS mitigations=off"
fi
SMP=${COLLX_LAB_SMP:-$SMP}

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
	echo "LAB_KMODS=$KMODS"
	echo "LAB_BAD_RE='$BAD_RE'"
	echo "LAB_BENIGN_RE='$BENIGN_RE'"
} >"$OUT/env"
{
	echo "#!/bin/sh"
	for e in "${NODE_ENV[@]}"; do
		echo "export ${e%%=*}='${e#*=}'"
	done
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
		qemu-system-x86_64 -name "node$i" $CPU -smp "$SMP" -m "$MEM_MB" \
		-kernel "$VMLINUZ" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet $KERNEL_ARGS lab.rank=$i lab.script=$LAB_DIR/guest.sh lab.p9cache=$P9CACHE" \
		-display none -monitor none -no-reboot -pidfile "$OUT/node$i/qemu.pid" \
		-serial "file:$OUT/node$i/console.log" \
		-virtfs "local,path=$ROOT,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$OUT,mount_tag=lab,security_model=none" \
		-netdev "tap,id=net0,ifname=tap$i,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=net0,mac=52:54:00:c0:11:$(printf %02x $((i + 1)))" \
		>"$OUT/node$i/qemu.log" 2>&1 &
	PIDS+=($!)
done

# (A node the switch killed ends by SIGKILL: no job notice for it, lab.sh
# reports it below.)
for p in "${PIDS[@]}"; do
	wait "$p" 2>/dev/null || true
done
PIDS=()
if [ -n "$SWITCH_PID" ]; then
	kill "$SWITCH_PID" 2>/dev/null || true
	wait "$SWITCH_PID" 2>/dev/null || true
	SWITCH_PID=
fi
END=$(date +%s)
log "nodes finished in $((END - START)) s"

# Kernel reports in a node's logs, benign lines left out.
kernel_reports() {
	grep -Eh "$BAD_RE" "$1/dmesg" "$1/console.log" 2>/dev/null | grep -Ev "$BENIGN_RE"
}

killed_by_request() {
	grep -qx "$1" "$OUT/killed" 2>/dev/null
}

# A killed node never finished its cases: complete its TAP from the plan
# run-cases.sh wrote, each remaining case a skip, so that merging the
# nodes' results counts only the nodes that ran a case.
complete_killed_tap() {
	local d=$1 k total name cur
	[ -f "$d/cases.plan" ] && [ -f "$d/cases.tap" ] || return 0
	grep -q '^1\.\.' "$d/cases.tap" && return 0
	cur=$(cat "$d/current" 2>/dev/null)
	k=$(grep -cE '^(ok|not ok) ' "$d/cases.tap" || true)
	total=$(wc -l <"$d/cases.plan")
	tail -n +"$((k + 1))" "$d/cases.plan" | while read -r name; do
		k=$((k + 1))
		echo "ok $k - $name # SKIP node killed by request (in ${cur:-?})"
	done >>"$d/cases.tap"
	echo "1..$total" >>"$d/cases.tap"
}

# seconds between the run's start and a file's mtime (host clock: the
# nodes write these files over 9p)
since_start() {
	[ -f "$1" ] || return 0
	echo $(($(stat -c %Y "$1") - START))
}

failed=0
boot_min= boot_max=
for ((i = 0; i < NODES; i++)); do
	d=$OUT/node$i
	if [ "$QUIET" = 0 ] && [ -f "$d/out.log" ]; then
		sed "s/^/[node$i] /" "$d/out.log"
	fi
	b=$(since_start "$d/job-start")
	if [ -n "$b" ]; then
		[ -n "$boot_min" ] && [ "$boot_min" -le "$b" ] || boot_min=$b
		[ -n "$boot_max" ] && [ "$boot_max" -ge "$b" ] || boot_max=$b
	fi
	why=
	if [ -f "$d/setup-error" ]; then
		why="setup failed: $(cat "$d/setup-error")"
	elif [ ! -f "$d/rc" ] && killed_by_request "$i"; then
		log "node$i: killed by request (in $(cat "$d/current" 2>/dev/null || echo '?')): no result expected"
		complete_killed_tap "$d"
	elif [ ! -f "$d/rc" ]; then
		why="no result: timeout after ${TIMEOUT} s or crash; console tail:"$'\n'"$(tail -n 15 "$d/console.log" 2>/dev/null)"
	elif [ "$(cat "$d/rc")" = 124 ]; then
		why="command timed out after ${TIMEOUT} s"
	elif [ "$(cat "$d/rc")" != 0 ]; then
		why="command exited $(cat "$d/rc")"
	fi
	rep=$(kernel_reports "$d" | head -n3 | tr '\n' ' ' || true)
	[ -z "$rep" ] || why="${why:+$why; }kernel reported: $rep"
	if [ -s "$d/kmemleak" ]; then
		why="${why:+$why; }kmemleak: $(grep -c '^unreferenced object' "$d/kmemleak") unreferenced object(s), see $d/kmemleak"
	fi
	if [ -n "$why" ]; then
		log "node$i: FAILED: $why"
		failed=1
	fi
done

# The run in numbers: where the time went and each case's slowest node.
summary() {
	local f
	echo "kernel $KREL, $NODES node(s) x $CPUS vCPU, $ACCEL: boot to job ${boot_min:-?}..${boot_max:-?} s, total $((END - START)) s"
	f=$(ls "$OUT"/node*/cases.tap 2>/dev/null) || return 0
	# shellcheck disable=SC2086 # one file name per word
	awk '
	/^(ok|not ok) [0-9]+ - / {
		line = $0; sub(/^(not ok|ok) [0-9]+ - /, "", line); split(line, w, " ")
		name = w[1]; t = 0
		if (match($0, /# [0-9]+s$/)) t = substr($0, RSTART + 2, RLENGTH - 3) + 0
		else if (match($0, /\([0-9]+s\)$/)) t = substr($0, RSTART + 1, RLENGTH - 3) + 0
		else if (match($0, /after [0-9]+s$/)) t = substr($0, RSTART + 6, RLENGTH - 7) + 0
		if (!(name in max)) { order[++n] = name; max[name] = 0 }
		if (t > max[name]) max[name] = t
		v = /^not ok/ ? "fail" : (/# SKIP/ ? "skip" : "ok")
		if (v == "fail") res[name] = "fail"
		else if (v == "ok" && res[name] != "fail") res[name] = "ok"
		else if (!(name in res)) res[name] = "skip"
	}
	END {
		for (i = 1; i <= n; i++) {
			c = order[i]; sum += max[c]; cnt[res[c]]++
			printf "  %-28s %5d s  %s\n", c, max[c], res[c]
		}
		printf "cases: %d (%d ok, %d failed, %d skipped on every node), %d s end to end at their slowest node\n",
			n, cnt["ok"], cnt["fail"], cnt["skip"], sum
	}' $f
}
summary >"$OUT/summary.txt"
sed 's/^/lab: /' "$OUT/summary.txt" >&2
# Fault cases print "fault-result" lines: one table for the whole run.
if grep -hs '^fault-result ' "$OUT"/node*/cases/*.log >"$OUT/faults.txt"; then
	log "fault results ($OUT/faults.txt):"
	sort -k2,2 -k3,3 "$OUT/faults.txt" | sed 's/^fault-result /lab:   /' >&2
else
	rm -f "$OUT/faults.txt"
fi
[ "$failed" = 0 ] && log "all $NODES node(s) ok"
exit "$failed"
