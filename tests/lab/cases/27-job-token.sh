# libcollx's rendezvous with a job token (issue 37's H4,
# Documentation/security.md): 4 nodes sharing one COLLX_JOB_TOKEN run an
# allreduce over the authenticated rendezvous (wire version 3: MACed
# hello and reply, each rank's address the one its TCP connection came
# from, the secret derived, never sent) and none prints the
# unauthenticated warning; without a token each process prints it
# exactly once; with the token on node0 only, every rank's init fails and
# says the token is the reason (the joiners at once, rank 0 at its
# rendezvous deadline).  The host-side tests (tests/unit/lib, T=auth)
# cover impostors, replays and address mismatches on loopback.
# On both kernels: it is short, and every other multi-node case's first
# step is this rendezvous (without a token).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_need_abi11
SPEC=allreduce:ring:float:sum:1021:-:oop:unreg
WARN_RE='the rendezvous is not authenticated'
# The case's own token, the same on every node (not a secret).
TOKEN=6c61622d6a6f622d746f6b656e2d3237
SLOW=$(lab_slowdown)

collx_port 29617
out=$(COLLX_JOB_TOKEN=$TOKEN collx_matrix "$SPEC") ||
	lab_fail "with a job token on every node: the allreduce failed"
printf '%s\n' "$out"
if printf '%s\n' "$out" | grep -q "$WARN_RE"; then
	lab_fail "with a job token, init still says the rendezvous is not authenticated"
fi
echo "node$COLLX_RANK: with the token: the allreduce passed, no warning"

collx_port 29618
out=$(collx_matrix "$SPEC") || lab_fail "without a token: the allreduce failed"
n=$(printf '%s\n' "$out" | grep -c "$WARN_RE")
[ "$n" = 1 ] || lab_fail "without a token: the warning $n times in one process, want once"
echo "node$COLLX_RANK: without a token: the warning once"

# The token on node0 only: nobody may get through.
collx_port 29619
token=
[ "$COLLX_RANK" != 0 ] || token=$TOKEN
start=$(date +%s)
if out=$(COLLX_JOB_TOKEN=$token COLLX_BOOTSTRAP_TIMEOUT=$((15 * SLOW)) \
	timeout -k 5 $((90 * SLOW)) "$LABPROG" matrix "$SPEC" 2>&1); then
	printf '%s\n' "$out"
	lab_fail "the token on node0 only: rank $COLLX_RANK's init succeeded"
fi
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -qi 'token' ||
	lab_fail "the token on node0 only: rank $COLLX_RANK's error does not name the token"
echo "node$COLLX_RANK: the token on node0 only: init failed after $(($(date +%s) - start)) s, naming the token"
collx_no_leak
