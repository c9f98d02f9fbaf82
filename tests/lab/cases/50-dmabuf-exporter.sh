# The test dma-buf exporter works on this kernel before collx imports from
# it (tests/dmabuf/selftest on node0: create, mmap, move, revoke, the
# probe importer in every mode, udmabuf and the system heap where they
# exist, rxe's dma-buf MRs, every buffer freed); every node loads it for
# cases 51-59.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
texp_load
[ "$COLLX_RANK" = 0 ] || lab_skip "the exporter's self-test runs on node0; node$COLLX_RANK only loaded it"
lab_run lab_timeout 100 "$COLLX_SRC/tests/dmabuf/selftest"
