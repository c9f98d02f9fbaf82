# The kernel's own exporters, udmabuf and the system DMA heap (6.12 only:
# Debian's 6.1 has neither): allreduce, broadcast, allgather and
# reduce-scatter from and into them, exact and zero copy, nothing left.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
collx_nodes 2
collx_port 29656
[ -e /dev/udmabuf ] && [ -e /dev/dma_heap/system ] ||
	lab_skip "$(uname -r) has no udmabuf or system DMA heap (CONFIG_UDMABUF, CONFIG_DMABUF_HEAPS_SYSTEM)"
dmabuf_need_collx
collx_zc_mark
dmabuf_run colls udmabuf,heap
collx_zc_expect grew grew
collx_no_leak
