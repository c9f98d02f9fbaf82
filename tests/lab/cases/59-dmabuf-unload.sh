# The test exporter unloads: no buffer, attachment or importer of cases
# 50-58 holds a reference to it any more.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/progs/collx-lab.inc"
. "$COLLX_SRC/tests/dmabuf/dmabuf-lab.inc"
grep -q '^collx_test_exporter ' /proc/modules || lab_skip "collx_test_exporter not loaded on node$COLLX_RANK"
lab_run rmmod collx_test_exporter
[ ! -e /dev/collx_test_exporter ] || lab_fail "/dev/collx_test_exporter still there"
echo "collx_test_exporter unloaded"
