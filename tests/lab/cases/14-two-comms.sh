# Two communicators in one process, their allreduces interleaved.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29614
lab_run lab_timeout 200 "$LABPROG" twocomm
collx_no_leak
