# A rank that never submits (rank 2) on three comms at once: a ring
# broadcast rooted at it, a tree allreduce, an rd barrier.  Nothing hangs;
# every rank's op ends naming a rank and its phase, and the ranks that
# wait for rank 2 itself name it: the root's ring successor (rank 3), the
# barrier's first-step partner (rank 3), and in the tree at least one rank.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29622
collx_need_abi11
lab_run lab_timeout 120 "$LABPROG" stuck 2
collx_no_leak 30
