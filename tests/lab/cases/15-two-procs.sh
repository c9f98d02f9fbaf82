# Two processes per node: 8 ranks on 4 nodes, two ranks behind each rxe0
# address; allreduce of every dtype, registered and bounced.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29615
node=$COLLX_RANK
export COLLX_NRANKS=8
out=$COLLX_NODE_DIR/cases/15-proc
COLLX_RANK=$((2 * node)) lab_timeout 240 "$BENCH" -d all -o sum --counts 1,13,4099 -n 0 -w 0 -c 1 -R 1 >"$out.0" 2>&1 &
p0=$!
COLLX_RANK=$((2 * node + 1)) lab_timeout 240 "$BENCH" -d all -o sum --counts 1,13,4099 -n 0 -w 0 -c 1 -R 0 >"$out.1" 2>&1 &
p1=$!
wait $p0; r0=$?
wait $p1; r1=$?
cat "$out.0" "$out.1"
if [ "$node" = 0 ] && ! grep -q '^# Out of bounds values : 0 OK$' "$out.0"; then
	rm -f "$out.0" "$out.1"
	lab_fail "no '0 OK' footer from rank 0"
fi
rm -f "$out.0" "$out.1"
[ "$r0" = 0 ] && [ "$r1" = 0 ] || lab_fail "ranks $((2 * node)), $((2 * node + 1)) exited $r0, $r1"
collx_no_leak
