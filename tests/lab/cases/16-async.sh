# An async allreduce (4 MiB) completes while the caller only computes: no
# library call between submit and a single collx_test().
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29616
lab_run timeout -k 5 200 "$LABPROG" async
collx_no_leak
