# The lab's fabric: an RC ping-pong over rxe between node pairs (0-1, 2-3…).
. "$COLLX_SRC/tests/lab/lib.sh"
[ "$COLLX_NRANKS" -ge 2 ] || lab_skip "one node"
peer=$((COLLX_RANK ^ 1))
if [ "$peer" -ge "$COLLX_NRANKS" ]; then
	lab_barrier fabric-up 60
	lab_skip "no partner for rank $COLLX_RANK"
fi
port=$((18515 + COLLX_RANK / 2))
# 50 round trips take seconds on Debian's kernels, over a minute on the
# debug kernel with four nodes on two host cores.
bound=$((60 * $(lab_slowdown)))
# stdbuf -oL: a run that timeout kills still shows how far it got.
if [ $((COLLX_RANK % 2)) = 1 ]; then
	timeout $((bound + 60)) stdbuf -oL ibv_rc_pingpong -d rxe0 -g 1 -p "$port" -n 50 >pingpong.$$ 2>&1 &
	pid=$!
	sleep 1
	lab_barrier fabric-up 60 || lab_fail "barrier"
	wait "$pid" || { cat pingpong.$$; rm -f pingpong.$$; lab_fail "server side failed"; }
else
	lab_barrier fabric-up 60 || lab_fail "barrier"
	timeout "$bound" stdbuf -oL ibv_rc_pingpong -d rxe0 -g 1 -p "$port" -n 50 "$(lab_addr "$peer")" >pingpong.$$ 2>&1 ||
		{ cat pingpong.$$; rm -f pingpong.$$; lab_fail "client side failed"; }
fi
cat pingpong.$$
rm -f pingpong.$$
