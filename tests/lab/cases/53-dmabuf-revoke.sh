# The exporter revokes a registered dma-buf: the next collectives on it
# fail with EFAULT, registering it again fails, a new buffer registers and
# works on the same communicator; revoked during a 4 MiB allreduce, the
# allreduce completes or fails with EFAULT; no write reached the revoked
# pages, nothing is left behind.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
collx_nodes 2
collx_port 29653
export COLLX_TIMEOUT_MS=10000
texp_load
dmabuf_need_collx
texp_mark
dmabuf_run revoke
dmabuf_no_leak
