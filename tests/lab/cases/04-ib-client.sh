# The ib_client saw rxe0 at load, and follows devices that come and go.
. "$COLLX_SRC/tests/lab/lib.sh"
info() { "$COLLX_SRC/user/tools/collx-info" --json; }

dmesg | grep -q 'collx: rxe0: added' || lab_fail "no 'rxe0: added' in dmesg"
dmesg | grep -q 'collx: rxe0: port 1 ACTIVE, RoCE' || lab_fail "rxe0 port not logged ACTIVE"

ip link add collxdummy0 type dummy || lab_fail "cannot add a dummy netdev"
ip link set collxdummy0 up
lab_run rdma link add rxe_t1 type rxe netdev collxdummy0
n=0
until dmesg | grep -q 'collx: rxe_t1: added'; do
	n=$((n + 1)); [ "$n" -lt 50 ] || lab_fail "no 'rxe_t1: added' after 5 s"
	sleep 0.1
done
info | grep -q '"nr_devices": 2,' || lab_fail "nr_devices is not 2 with rxe_t1"
lab_run rdma link delete rxe_t1
dmesg | grep -q 'collx: rxe_t1: removed' || lab_fail "no 'rxe_t1: removed' in dmesg"
info | grep -q '"nr_devices": 1,' || lab_fail "nr_devices is not back to 1"
ip link del collxdummy0
echo "rxe_t1 added and removed; collx followed"
