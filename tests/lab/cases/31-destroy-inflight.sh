# A comm destroyed with allreduces in flight: they end ECANCELED, nothing
# leaks, and a new comm works right after.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29631
export COLLX_TIMEOUT_MS=20000
lab_run lab_timeout 200 "$LABPROG" destroy
collx_no_leak
