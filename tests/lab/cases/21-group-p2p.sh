# Grouped send/recv: every rank sends 4 MiB (far beyond the staging
# slots) to its right neighbour and receives as many from its left,
# submitted send first.  Without a group each send waits for a recv its
# peer never gets to post: the deadlock ends at the comm's 4 s timeout,
# naming another rank in phase p2p.  In a group the same pattern completes,
# bounced and registered, every element checked.
# lab-once: the engine's logic over the same verbs calls as 12-coll-4node,
# which runs on both kernels (tests/lab/README.md, "Which kernel runs what")
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
collx_nodes 4
collx_port 29621
collx_need_abi11
lab_run lab_timeout 120 "$LABPROG" ringp2p 1048576 4000
collx_no_leak 30
