# 1-rank communicators: every node makes one of its own and runs every
# collective on it (every algorithm, all dtypes x ops, in and out of
# place, registered and bounced; send/recv to itself in a group), every
# element checked; and each nccl-tests program on it.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_need_abi11
collx_one_rank $((29670 + COLLX_RANK))
collx_matrix \
	allreduce:all:all:all:0,1,1021:-:both:both \
	reduce:all:all:all:7:first:both:unreg \
	reduce_scatter:all:all:all:7:-:both:unreg \
	broadcast:all:all:-:0,13:first:both:both \
	allgather:all:all:-:0,13:-:both:both \
	alltoall:all:all:-:0,13:-:oop:both \
	sendrecv:all:all:-:0,13:-:oop:both \
	barrier:all:int8:-:0:-:oop:unreg
collx_port $((29674 + COLLX_RANK))
for p in all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf alltoall_perf sendrecv_perf; do
	out=$(lab_run lab_timeout 60 "$TOOLS/$p" -b 8 -e 4K -f 8 -n 2 -w 1 -c 1) ||
		lab_fail "$p on 1 rank failed"
	printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || lab_fail "$p on 1 rank: no '0 OK' footer"
done
collx_no_leak
