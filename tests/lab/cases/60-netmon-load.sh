# collx-netmon: the CO-RE object loads and attaches on this kernel, the maps
# are pinned and readable by bpftool, and without privileges it says why.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$NETMON" -I eth0 -d 1 2>&1) && lab_fail "ran without privileges: $out"
echo "unprivileged: $out"
echo "$out" | grep -q 'needs CAP_BPF and CAP_NET_ADMIN (run as root)' ||
	lab_fail "no clear message without privileges"
nm_start load -I eth0
for m in pfc roce drops op_lat ops speed stats; do
	bpftool map dump pinned /sys/fs/bpf/collx/$m >/dev/null ||
		lab_fail "bpftool cannot dump /sys/fs/bpf/collx/$m"
done
bpftool map dump pinned /sys/fs/bpf/collx/speed
tc filter show dev eth0 ingress | grep -q 'name netmon_tc_' || lab_fail "no tc ingress program"
tc filter show dev eth0 egress | grep -q 'name netmon_tc_' || lab_fail "no tc egress program"
tc filter show dev eth0 ingress
nm_stop load >/dev/null
[ ! -e /sys/fs/bpf/collx/pfc ] || lab_fail "pins left behind"
tc filter show dev eth0 ingress | grep -q netmon && lab_fail "tc program left behind"
echo "loaded, attached, pinned and cleaned up on $(uname -r)"
