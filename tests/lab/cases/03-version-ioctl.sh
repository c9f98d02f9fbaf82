# COLLX_IOC_VERSION answers, and the dispatch keeps its errno contract.
. "$COLLX_SRC/tests/lab/lib.sh"
json=$(lab_run "$COLLX_SRC/user/tools/collx-info" --json)
echo "$json"
echo "$json" | grep -q '"abi_major": 1,' || lab_fail "abi_major is not 1"
echo "$json" | grep -q '"nr_devices": 1,' || lab_fail "the module should serve exactly rxe0"
lab_run "$COLLX_SRC/tests/progs/uapi_version"
