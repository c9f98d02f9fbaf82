# The exporter moves a registered dma-buf: between collectives, the next
# ones fail with EFAULT until it is registered again; during a 4 MiB
# allreduce, the allreduce is exact or fails with EFAULT, never wrong.
# collx was told (a dynamic attachment), no write reached the pages taken
# back, and nothing is left behind.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
collx_nodes 2
collx_port 29652
export COLLX_TIMEOUT_MS=10000
texp_load
dmabuf_need_collx
texp_mark
dmabuf_run move
dmabuf_no_leak
