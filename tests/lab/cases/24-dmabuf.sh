# dma-buf memory (udmabuf: a sealed memfd made a dma-buf by /dev/udmabuf,
# registered with collx_mem_register_dmabuf): allreduce and allgather on
# it, every element checked, and each collective's log line says its data
# took the dma-buf path.  Kernels without CONFIG_UDMABUF (6.1) skip.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29625
collx_need_abi11
[ -e /dev/udmabuf ] || lab_skip "no /dev/udmabuf on $(uname -r)"
for t in all_reduce_perf all_gather_perf; do
	out=$(COLLX_DEBUG=INFO COLLX_DEBUG_SUBSYS=COLL lab_run lab_timeout 120 \
		"$TOOLS/$t" -G 1 -b 4K -e 256K -f 8 -n 2 -w 1 -c 1) || lab_fail "$t -G 1 failed"
	printf '%s\n' "$out" | grep -v ' COLLX INFO ' | grep -v '^#  Rank'
	if [ "$COLLX_RANK" = 0 ]; then
		printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || lab_fail "$t -G 1: no '0 OK' footer"
	fi
	n=$(printf '%s\n' "$out" | grep -c ' COLLX INFO comm [0-9]* op [0-9]*: .* mem [a-z+-]*dma-buf')
	echo "$t -G 1: $n collectives logged on the dma-buf path"
	[ "$n" -gt 0 ] || lab_fail "$t -G 1: no collective took the dma-buf path"
done
collx_no_leak
