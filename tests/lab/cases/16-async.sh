# Asynchrony: an allreduce (4 MiB) completes while the caller only
# computes (no library call between submit and a single collx_test());
# 16 collectives of every kind in flight at once on one comm, reaped
# through poll() on its fd; and what the caller's CPU pays for a 1 MiB
# registered async allreduce (collx-bench --cpu: getrusage against the
# wall time, beside the node's busy CPU from /proc/stat).
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29616
lab_run lab_timeout 200 "$LABPROG" async
out=$(lab_run lab_timeout 120 "$BENCH" -b 1M -e 1M -n 5 -w 1 -c 1 -R 1 --cpu) ||
	lab_fail "collx-bench --cpu failed"
printf '%s\n' "$out"
if [ "$COLLX_RANK" = 0 ]; then
	printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK$' || lab_fail "collx-bench: no '0 OK' footer"
	# size count type redop root, time algbw busbw #wrong twice, caller node twice
	printf '%s\n' "$out" | awk '$1 == 1048576 { printf "1 MiB registered async allreduce: caller CPU %s %% of wall time out of place, %s %% in place; node busy %s %%, %s %%\n", $14, $16, $15, $17 }'
fi
collx_need_abi11
collx_port 29626
lab_run lab_timeout 200 "$LABPROG" inflight
collx_no_leak
