# Every collective on 4 nodes: the same matrix as 10-coll-2node, with a
# middle root that is neither end of the ring.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29612
collx_need_abi11
collx_matrix_all
collx_no_leak
