# Collectives larger than the kernel's staging area (4 slots of 64 KiB per
# connection), every element checked, on 4 nodes and on 3: each collective
# on each of its algorithms, registered (zero copy) and bounced.  A 4 MiB
# registered allreduce is sent zero copy and placed through several
# overlapping windows (rxe registers at most 512 pages at once).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_port 29613
collx_need_abi11
[ "$COLLX_NRANKS" -ge 3 ] || lab_skip "needs 3 nodes"
if [ "$COLLX_RANK" -lt 4 ]; then
	collx_nodes 4
	collx_zc_mark
	collx_matrix allreduce:ring:float:sum:1048579:-:oop:reg
	collx_zc_expect grew grew
	# All-gather, half of the bytes sent, starts long after the outputs'
	# windows went out: at least 80 % of it lands directly, whatever the
	# pages' layout.
	collx_zc_placed_share 40
	collx_matrix \
		allreduce:tree,rd:int32:prod:262145:-:both:both \
		allreduce:ring:int8:max:786433:-:ip:unreg \
		broadcast:ring,tree:float:-:70001:mid:both:both \
		reduce:ring,tree:float:sum:70001:last:oop:both \
		allgather:ring,rd:int32:-:20011:-:both:both \
		reduce_scatter:ring,rd:float:sum:20011:-:both:both \
		alltoall:ring,pairwise:float:-:20011:-:oop:both \
		sendrecv:p2p:double:-:40009:-:oop:both
fi
lab_barrier large-3 120 || lab_fail "barrier"
collx_port 29623
[ "$COLLX_RANK" -lt 3 ] || { collx_no_leak; lab_skip "3-node part: node$COLLX_RANK sits out"; }
export COLLX_NRANKS=3
collx_matrix \
	allreduce:ring,rd:bfloat16:avg:262147:-:oop:reg \
	reduce_scatter:ring,rd:int64:sum:40009:-:ip:unreg \
	allgather:ring,rd:f8e4m3:-:100003:-:oop:both
collx_no_leak
