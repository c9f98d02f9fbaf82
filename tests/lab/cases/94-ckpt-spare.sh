# Checkpoints, a node lost and a spare in its rank: ranks 0 and 1 (node0,
# node1) save two checkpoints, each shard replicated in the other's area;
# then the switch SIGKILLs node1's QEMU, and its area (tmpfs) goes with
# the VM.  node2, the spare, which has no area of this job, joins a new
# comm with node0 as rank 1; the two load both tags: rank 0 from its own
# area, the spare from the replica node0 holds, which node0 pushes into
# the spare's registered regions (zero copy), every byte checked.
# Run after 39-vm-kill (both are lab-last; 39 takes node3), on the three
# nodes left: 2 ranks and a spare (make check boots 4 VMs per kernel).
# lab-last
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/user/ckpt/tests/lab-ckpt.sh"
VICTIM=1
SPARE=2
B=4194304
[ "$COLLX_NRANKS" -ge 3 ] || lab_skip "needs 3 nodes: 2 ranks and a spare"
lab_need_ranks 3
collx_nodes 3
# Last of the run: a case before may have left collx unloaded (95-deb).
[ -c /dev/collx ] || lab_run insmod "$COLLX_MODULE"
ckpt_cleanup
lab_barrier ckpt94-start 60 || lab_fail "barrier"
if [ "$COLLX_RANK" != $SPARE ]; then
	out=$(COLLX_NRANKS=2 ckpt_run 29940 --bytes $B save:1:11 save:2:22 show)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "slot .* entry 1 (rank $((1 - COLLX_RANK))'s): complete, tag 2" ||
		lab_fail "rank $COLLX_RANK holds no complete replica of rank $((1 - COLLX_RANK))'s tag 2"
fi
lab_barrier ckpt94-saved 60 || lab_fail "barrier"
if [ "$COLLX_RANK" = "$VICTIM" ]; then
	# node0 kills this VM now; its case ends here.
	sleep 120
	lab_fail "node$VICTIM was not killed"
fi
if [ "$COLLX_RANK" = 0 ]; then
	lab_fault_kill_node $VICTIM
	lab_is_killed $VICTIM || lab_fail "node$VICTIM is not recorded as killed"
fi
lab_barrier ckpt94-killed 60 || lab_fail "barrier"
if [ "$COLLX_RANK" = 0 ]; then
	out=$(COLLX_NRANKS=2 ckpt_run 29941 --bytes $B load:2:local:22 load:1:local:11)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "load tag 2 from local: .* $B sent" ||
		lab_fail "rank 0 did not push the whole replica of rank 1's tag 2 to the spare"
else
	# (ckpt_cleanup above: the spare starts with no area of the job.)
	out=$(COLLX_RANK=$VICTIM COLLX_NRANKS=2 ckpt_run 29941 --bytes $B load:2:peer:22 load:1:peer:11)
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "load tag 2 from peer: .* $B received, 0 sent, mem zero-copy" ||
		lab_fail "the spare's restore was not the whole shard, placed zero copy"
	printf '%s\n' "$out" | grep -q "all $B bytes of tag 1 are right" ||
		lab_fail "the spare did not restore tag 1"
fi
ckpt_cleanup
collx_no_leak 30
