# Every collective on 2 nodes (tests/progs/collx-lab.inc collx_matrix_all:
# every algorithm that can run it, all dtypes x ops on the ring, counts 0,
# 1, fewer than the ranks, primes, roots first/middle/last, in and out of
# place, registered and bounced), every element and each record's
# algorithm and memory path checked; and zero copy seen in the counters:
# registered allreduces are sent from and placed straight into the
# outputs, bounced ones are not.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 2
collx_port 29610
collx_need_abi11
collx_zc_mark
collx_matrix allreduce:ring:float,int8:sum:1021,65537:-:both:reg
collx_zc_expect grew grew
collx_zc_mark
collx_matrix allreduce:ring:float,int8:sum:1021,65537:-:both:unreg
collx_zc_expect same same
collx_matrix_all
collx_no_leak
