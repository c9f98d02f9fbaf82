# Init is a barrier: every rank destroys its comm the moment init returns,
# three times in a row, and no rank's init fails for it (without the
# barrier a fast rank's destroy could break a slower neighbour's connect).
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
for i in 1 2 3; do
	collx_port $((29690 + i))
	lab_run lab_timeout 60 "$LABPROG" init
done
collx_no_leak
