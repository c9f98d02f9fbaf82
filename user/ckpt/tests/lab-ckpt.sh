# SPDX-License-Identifier: GPL-2.0
# Helpers for the checkpoint lab cases (tests/lab/cases/9[1-4]-ckpt-*.sh);
# sourced after tests/lab/lib.sh and tests/progs/collx-lab.inc.
CKPT=$COLLX_SRC/user/ckpt
CKPT_LAB=$CKPT/tests/ckpt_lab
CKPTD=$CKPT/collx-ckptd
CKPT_CASE=$(basename "$0" .sh)
# small chunks so that a few-MiB shard has enough of them to count
export COLLX_CKPT_CHUNK_KIB=${COLLX_CKPT_CHUNK_KIB:-256}
export COLLX_CKPT_NAME=$CKPT_CASE
# the archive folder is the lab's shared results folder (the host's disk
# over 9p): every node sees it, as a parallel file system's mount
export COLLX_CKPT_DIR=$COLLX_LAB_DIR/ckpt/$CKPT_CASE
export COLLX_CKPT_METRICS_DIR=$COLLX_NODE_DIR/ckpt-metrics/$CKPT_CASE
export COLLX_TIMEOUT_MS=${COLLX_TIMEOUT_MS:-8000}
mkdir -p "$COLLX_CKPT_DIR" "$COLLX_CKPT_METRICS_DIR"
# the areas live on tmpfs at /dev/shm; the lab's devtmpfs has no /dev/shm
# directory, so guest.sh's mount of it fails silently
if ! grep -q ' /dev/shm tmpfs ' /proc/mounts; then
	mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm ||
		lab_fail "cannot mount a tmpfs on /dev/shm for the checkpoint areas"
fi
# the cases run on 2..4 nodes: CKPT_N ranks, the last one the victim of 92
CKPT_N=$COLLX_NRANKS
[ "$CKPT_N" -gt 4 ] && CKPT_N=4
[ "$CKPT_N" -ge 2 ] || lab_skip "checkpoints need 2 nodes or more"
[ -x "$CKPT_LAB" ] && [ -x "$CKPTD" ] || lab_fail "user/ckpt not built (make -C user/ckpt)"

ckpt_area() {
	echo "/dev/shm/collx-ckpt-$COLLX_CKPT_NAME-r${1:-$COLLX_RANK}"
}

# One ckpt_lab process on a rendezvous port of its own: ckpt_run PORT ARGS...
ckpt_run() {
	local port=$1
	shift
	COLLX_MASTER_PORT=$port lab_run timeout -k 5 "${CKPT_TIMEOUT:-60}" "$CKPT_LAB" "$@"
}

# collx-ckptd, once: its output line is what the cases check.
ckpt_archive() {
	lab_run timeout -k 5 60 "$CKPTD" --area "$(ckpt_area)" --dir "$COLLX_CKPT_DIR" \
		--metrics-dir "$COLLX_CKPT_METRICS_DIR" --once "$@"
}

# A metric's value in this rank's textfile: ckpt_metric FILE SERIES
ckpt_metric() {
	sed -n "s/^$2 //p" "$COLLX_CKPT_METRICS_DIR/$1"
}

ckpt_cleanup() {
	rm -f /dev/shm/collx-ckpt-"$COLLX_CKPT_NAME"-r*
}
