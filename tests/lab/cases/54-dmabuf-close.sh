# The dma-buf fds are closed while a 4 MiB allreduce on them runs: it and
# the next one are exact (the registration holds the buffer), and the
# buffers are freed when the registrations go; dynamic and pinned-only.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
collx_nodes 2
collx_port 29654
texp_load
dmabuf_need_collx
texp_mark
dmabuf_run close dynamic
collx_port 29655
dmabuf_run close pinonly
dmabuf_no_leak
