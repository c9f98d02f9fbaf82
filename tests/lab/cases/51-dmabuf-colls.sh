# collx imports dma-bufs of the test exporter in each of its modes --
# dynamic (move_notify), static (mapped by the core at attach), refusing
# dynamic importers (collx falls back to a static attachment) and pinned
# only -- and runs allreduce (out of place, from an offset, in place),
# broadcast, allgather and reduce-scatter with inputs and outputs in them,
# checked exactly, zero copy, with collx's CPU access bracketed by
# dma_buf_begin/end_cpu_access() (collx_dmabuf_test counts them);
# registration errors as documented; nothing left behind.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
collx_nodes 2
collx_port 29651
texp_load
dmabuf_need_collx
texp_mark
collx_zc_mark
dmabuf_run colls dynamic,static,refuse,pinonly
collx_zc_expect grew grew
dmabuf_no_leak
