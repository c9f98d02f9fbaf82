# Forged wire messages (tests/fuzz/collx_forge): on each node alone, a
# hostile rank 0 that knows its comm's secret joins a 2-rank comm with a
# real rank 1 and, while rank 1 has an allreduce in flight, sends one bad
# message: ABORTs with impossible counts, short ones, undocumented and
# positive errnos, a rank out of range; control messages with a wrong
# magic, an unknown type, 4 bytes, a DEST for no window, a second READY;
# credits beyond the slots or of zero; a chunk nobody expects, more chunks
# than credits.  Each allreduce must end at once with the errno the
# contract names, naming rank 0; the comm destroys cleanly; the module's
# counters return to 0, and no kernel report (run-cases.sh checks dmesg).
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
FORGE=$COLLX_SRC/tests/fuzz/collx_forge
[ -x "$FORGE" ] || lab_fail "tests/fuzz is not built (make -C tests/fuzz)"
lab_run lab_timeout 240 "$FORGE" "${COLLX_NODE_ADDR:-}"
collx_no_leak 30
