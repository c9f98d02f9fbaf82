#!/bin/bash
# make bench-ckpt, on each lab node (tests/bench/bench-ckpt.sh boots them):
# the training pause of three ways to checkpoint one rank's shard of
# CKPT_MIB MiB, then two ways to restore it, every rank at once:
#   (a) write(2) + fsync of the shard into the archive folder (the lab's
#       results folder: the host's disk over 9p, as a parallel file
#       system's mount), what torch.save into a shared folder costs;
#   (b) the same into a node-local file (this node's root: tmpfs, faster
#       than the seed's local NVMe);
#   (c) collx_ckpt_save: phase 1 into k=1 peer's registered area, of
#       which the pause (p) is the snapshot save_async returns after, the
#       rest the replication behind it (ckpt_lab prints both);
# then collx-ckptd --once archives it (phase 2, off the training path),
# and the shard is restored from the own area, from the peer's replica
# (its own copy dropped) and from the archive (every rank's area wiped).  Each step
# prints "time STEP SECONDS" (ckpt_lab); bench-ckpt.sh reads them.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
BYTES=$((${CKPT_MIB:-128} << 20))
OUT=$COLLX_NODE_DIR/ckpt-bench.txt
SYNC=$COLLX_LAB_DIR/ckpt-bench-sync
LOCAL=/tmp/ckpt-bench-local
export CKPT_TIMEOUT=900 COLLX_TIMEOUT_MS=60000
mkdir -p "$SYNC"
collx_nodes "$CKPT_N"
ckpt_cleanup
: >"$OUT"
run() {
	ckpt_run "$@" | tee -a "$OUT"
	[ "${PIPESTATUS[0]}" = 0 ] || lab_fail "ckpt_lab $*"
}
# one registered shard (as a training job's), the same bytes for all three
run 29950 --bytes "$BYTES" barrier write:"$SYNC/r$COLLX_RANK" barrier \
	write:"$LOCAL" barrier save:1:11
rm -f "$SYNC/r$COLLX_RANK" "$LOCAL"
lab_barrier ckpt-bench-saved 600 || lab_fail barrier
t0=$(date +%s.%N)
ckpt_archive | tee -a "$OUT"
[ "${PIPESTATUS[0]}" = 0 ] || lab_fail "collx-ckptd"
echo "time archive $(echo "$(date +%s.%N) - $t0" | bc)" | tee -a "$OUT"
lab_barrier ckpt-bench-archived 600 || lab_fail barrier
run 29951 --bytes "$BYTES" load:1:local:11 barrier dropown barrier load:1:peer:11
lab_barrier ckpt-bench-peer 600 || lab_fail barrier
run 29952 --bytes "$BYTES" wipe barrier load:1:archive:11
ckpt_cleanup
rm -rf "$COLLX_CKPT_DIR"
