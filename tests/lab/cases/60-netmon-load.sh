# collx-netmon: the CO-RE object loads and attaches on this kernel (tcx
# links on 6.6+, clsact filters on 6.1), the maps are pinned and readable
# by bpftool; it names the capabilities it lacks, refuses a second
# instance, and a SIGKILLed monitor leaves nothing attached on tcx.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$NETMON" -I eth0 -d 1 2>&1) && lab_fail "ran without privileges: $out"
echo "unprivileged: $out"
echo "$out" | grep -q 'missing CAP_BPF CAP_PERFMON CAP_NET_ADMIN' ||
	lab_fail "no clear message without privileges"
# root with only the capabilities the man page names: it runs
setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon,+net_admin,+syslog \
	"$NETMON" -I eth0 -d 0.5 --table=/dev/null || lab_fail "fails with the documented capabilities"
for cap in bpf perfmon net_admin; do
	keep=$(echo "bpf perfmon net_admin syslog" | tr ' ' '\n' | grep -vx "$cap" | sed 's/^/+/' | paste -sd,)
	out=$(setpriv --inh-caps=-all --bounding-set=-all,"$keep" "$NETMON" -I eth0 -d 0.5 -P 2>&1) &&
		lab_fail "ran without $cap"
	want=$(echo "CAP_$cap" | tr a-z A-Z)
	echo "$out" | grep -q "missing $want" || lab_fail "without $cap: $out"
	echo "without $want: $out"
done

nm_start load -I eth0
out=$("$NETMON" -I eth0 -d 1 2>&1) && lab_fail "a second instance ran"
echo "second instance: $out"
echo "$out" | grep -q "another collx-netmon (pid $NM_PID)" || lab_fail "second instance: $out"
for m in pfc roce drops op_lat ops speed stats; do
	bpftool map dump pinned /sys/fs/bpf/collx/$m >/dev/null ||
		lab_fail "bpftool cannot dump /sys/fs/bpf/collx/$m"
done
bpftool map dump pinned /sys/fs/bpf/collx/speed
bpftool prog show name netmon_tc_ingress | grep -q netmon_tc_ingress || lab_fail "no ingress program"
if nm_has_tcx; then
	mode=tcx
	tc filter show dev eth0 ingress | grep -q netmon && lab_fail "tc filter on a tcx kernel"
else
	mode=tc
	tc filter show dev eth0 ingress | grep -q 'name netmon_tc_' || lab_fail "no tc ingress filter"
	tc filter show dev eth0 egress | grep -q 'name netmon_tc_' || lab_fail "no tc egress filter"
	tc filter show dev eth0 ingress
fi
nm_stop load >/dev/null
nm_check load "j['attach'] == '$mode'"
[ ! -e /sys/fs/bpf/collx/pfc ] || lab_fail "pins left behind"
tc filter show dev eth0 ingress | grep -q netmon && lab_fail "tc program left behind"
bpftool prog show name netmon_tc_ingress | grep -q . && lab_fail "program left loaded"

# SIGKILL: on tcx the links die with the process; on tc the filter stays
# until the next instance replaces it and cleans up.
nm_start kill -I eth0
kill -KILL "$NM_PID"
wait "$NM_PID" 2>/dev/null
n=0
while bpftool prog show name netmon_tc_ingress | grep -q . && [ "$n" -lt 50 ]; do
	n=$((n + 1)); sleep 0.1
done
if [ "$mode" = tcx ]; then
	bpftool prog show name netmon_tc_ingress | grep -q . && lab_fail "tcx program survived SIGKILL"
	echo "SIGKILL: nothing left attached (tcx)"
else
	tc filter show dev eth0 ingress | grep -q 'name netmon_tc_' ||
		lab_fail "expected the clsact filter to outlive SIGKILL on $(uname -r)"
	echo "SIGKILL: clsact filter left behind, as documented for $(uname -r)"
fi
nm_start again -I eth0
nm_stop again >/dev/null
tc filter show dev eth0 ingress | grep -q netmon && lab_fail "stale tc program not cleaned"
bpftool prog show name netmon_tc_ingress | grep -q . && lab_fail "program left loaded"
echo "loaded, attached ($mode), pinned and cleaned up on $(uname -r)"
