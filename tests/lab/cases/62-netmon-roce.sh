# collx-netmon: crafted RoCE v2 packets with ECN CE, CNPs and NAKs, from the
# switch (rx) and from this node (tx), counted exactly per QP and peer.
# The parsing is netmon's BPF and user space alike on every kernel; 60
# loads and attaches it (tc or tcx) in both labs, this runs in one.
# lab-once
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
nm_require_switch
me=$(lab_addr "$COLLX_RANK")
mac=$(cat /sys/class/net/eth0/address)
nm_start roce -I eth0 -i 1
R="roce --dst-mac $mac --src-ip 10.77.0.200 --dst-ip $me"
# shellcheck disable=SC2086
{
	switch_inject $R --qpn 0x11 --ecn 3 --count 25 &&
	switch_inject $R --qpn 0x11 --ecn 2 --count 4 &&
	switch_inject $R --qpn 0x22 --opcode 0x81 --count 7 &&
	switch_inject $R --qpn 0x33 --opcode 0x11 --aeth 0x60 --count 3 &&
	switch_inject $R --qpn 0x33 --opcode 0x11 --aeth 0x20 --count 2
} || lab_fail "switch injection failed"
# tx: from this node towards a made-up peer on the bridge
python3 "$INJECT" --iface eth0 roce --dst-mac 02:c0:11:00:00:77 --src-ip "$me" \
	--dst-ip 10.77.0.201 --qpn 0x44 --ecn 3 --count 9 || lab_fail "local injection"
python3 "$INJECT" --iface eth0 roce --dst-mac 02:c0:11:00:00:77 --src-ip "$me" \
	--dst-ip 10.77.0.201 --qpn 0x45 --opcode 0x81 --count 6 || lab_fail "local injection"
sleep 1.5
nm_stop roce
nm_check roce \
	'roce("eth0","rx",0x11,"10.77.0.200")["packets"] == 29' \
	'roce("eth0","rx",0x11,"10.77.0.200")["ce"] == 25' \
	'roce("eth0","rx",0x11,"10.77.0.200")["ect"] == 4' \
	'roce("eth0","rx",0x22,"10.77.0.200")["cnp"] == 7' \
	'roce("eth0","rx",0x33,"10.77.0.200")["nak"] == 3' \
	'roce("eth0","rx",0x33,"10.77.0.200")["rnr_nak"] == 2' \
	'roce("eth0","tx",0x44,"10.77.0.201")["ce"] == 9' \
	'roce("eth0","tx",0x45,"10.77.0.201")["cnp"] == 6' \
	'sum(r["ce"] for r in j["roce"]) == 34' \
	'sum(r["cnp"] for r in j["roce"]) == 13'
