# Every collective on 3 nodes: counts not divisible by the rank count, a
# rank count that is no power of two (recursive doubling folds a rank in
# and out); the same matrix as 10-coll-2node.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 3
collx_port 29611
collx_need_abi11
collx_matrix_all
collx_no_leak
