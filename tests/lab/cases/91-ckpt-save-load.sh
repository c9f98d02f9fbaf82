# Checkpoints, the plain case: N (2..4) ranks save two checkpoints (one async),
# each replica written by the peer's NIC straight into the holder's
# registered area; every rank loads both from its own area and checks
# every byte; then, its own copies dropped, from the replica its holder
# pushes.  Unregistered, 5-region shards take the bounced path.  The
# metrics textfile counts the dumps, pauses and restores.
# The async saves overwrite their regions as soon as save_async returns
# (the snapshot freed them) and the loads still find the saved bytes;
# atrain runs 20 allreduces on the training comm while the replication
# runs on the checkpoint's own comm (no EPROTO, every sum right); latest
# names the newest checkpoint every rank can restore.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
lab_need_ranks "$CKPT_N"
collx_nodes "$CKPT_N"
ckpt_cleanup
out=$(ckpt_run 29910 --bytes 4194304 save:1:11 asave:2:22 load:1:local:11 load:2:local:22 \
	dropown load:2:peer:22 load:1:peer:11) || { printf '%s\n' "$out"; lab_fail "the first run failed"; }
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "save tag 1: .*mem zero-copy placed" ||
	lab_fail "the replicas were not sent zero copy and placed into the area"
printf '%s\n' "$out" | grep -q "load tag 2 from peer: .* 4194304 received" ||
	lab_fail "the peer restore did not receive the whole shard"
m=collx_ckpt_rank_r$COLLX_RANK.prom
c=$(ckpt_metric "$m" "collx_ckpt_phase_seconds_count{phase=\"dump\",rank=\"$COLLX_RANK\"}")
r=$(ckpt_metric "$m" "collx_ckpt_phase_seconds_count{phase=\"restore\",rank=\"$COLLX_RANK\"}")
b=$(ckpt_metric "$m" "collx_ckpt_bytes_total{phase=\"dump\",rank=\"$COLLX_RANK\"}")
p=$(ckpt_metric "$m" "collx_ckpt_phase_seconds_count{phase=\"pause\",rank=\"$COLLX_RANK\"}")
s=$(ckpt_metric "$m" "collx_ckpt_last_restore_source{rank=\"$COLLX_RANK\",source=\"peer\"}")
echo "metrics: dumps $c, pauses $p, restores $r, dump bytes $b, last source peer $s"
[ "$c" = 2 ] && [ "$p" = 2 ] && [ "$r" = 4 ] && [ "$b" = $((2 * 2 * 4194304)) ] && [ "$s" = 1 ] ||
	lab_fail "metrics: want 2 dumps, 2 pauses, 4 restores, 16 MiB dumped, last source peer"
ckpt_cleanup
out=$(ckpt_run 29911 --bytes 3000001 --regions 5 --unregistered save:3:33 atrain:4:44:20 \
	latest:4 load:3:local:33 load:4:local:44 dropown load:4:peer:44 load:3:peer:33) ||
	{ printf '%s\n' "$out"; lab_fail "the unregistered run failed"; }
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q "still replicating when the first training allreduce was issued" &&
	printf '%s\n' "$out" | grep -q "20 training allreduces ran during the replication" ||
	lab_fail "the training allreduces did not run while the save replicated"
printf '%s\n' "$out" | grep -q "latest restorable: tag 4" || lab_fail "latest did not name tag 4"
ckpt_cleanup
collx_no_leak 30
