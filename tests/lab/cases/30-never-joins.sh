# A rank that never joins: the rendezvous names it on every rank within
# COLLX_BOOTSTRAP_TIMEOUT; and at the kernel's connect, the ring
# neighbours of a rank that never calls COMM_CREATE name it (failed_rank).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29630
if [ "$COLLX_RANK" = 3 ]; then
	echo "rank 3 stays away from the rendezvous"
	sleep 12
else
	out=$(COLLX_BOOTSTRAP_TIMEOUT=6 lab_timeout 40 "$LABPROG" init 2>&1)
	rc=$?
	echo "$out"
	[ "$rc" = 2 ] || lab_fail "init without rank 3 exited $rc, want 2 (failed)"
	echo "$out" | grep -q 'rank 3 never joined within 6 s' ||
		lab_fail "the error does not name rank 3"
fi
lab_barrier never-joins-kernel 60 || lab_fail "barrier"
addrs="$(lab_addr 0) $(lab_addr 1) $(lab_addr 2) $(lab_addr 3)"
out=$(lab_timeout 60 "$LABPROG" rawcreate 3 4000 $addrs 2>&1)
echo "$out"
case $COLLX_RANK in
0 | 2)	# rank 3's ring neighbours
	echo "$out" | grep -Eq 'COMM_CREATE failed: .*failed_rank 3$' ||
		lab_fail "rank $COLLX_RANK does not blame rank 3" ;;
1)	echo "$out" | grep -Eq 'COMM_CREATE (ok|failed)' || lab_fail "no result" ;;
3)	;;
esac
collx_no_leak
