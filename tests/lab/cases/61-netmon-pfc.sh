# collx-netmon: PFC and PAUSE frames sent by the switch into this node's port
# are counted exactly (frames, quanta, resumes apart), per priority.
. "$COLLX_SRC/tests/lab/lib.sh"
. "$COLLX_SRC/tests/netmon/lab-lib.sh"
nm_require
nm_require_switch
# virtio-net drops multicast groups the guest has not joined (lab-notes.md)
ip maddr add 01:80:c2:00:00:01 dev eth0 2>/dev/null
nm_start pfc -I eth0 -i 1
switch_inject pfc --prio 3 --quanta 0xffff --count 100 || lab_fail "inject prio 3"
switch_inject pfc --prio 5 --quanta 0x100 --count 40 || lab_fail "inject prio 5"
switch_inject pfc --prio 5 --quanta 0 --count 10 || lab_fail "inject resumes"
switch_inject pause --quanta 0x200 --count 5 || lab_fail "inject 802.3x"
sleep 1.5
nm_stop pfc
# one quantum = 512 bit times; netmon assumes 100 Gb/s on virtio (no speed)
nm_check pfc \
	'pause("eth0","rx",3)["frames"] == 100' \
	'pause("eth0","rx",3)["quanta"] == 100 * 0xffff' \
	'pause("eth0","rx",3)["resumes"] == 0' \
	'pause("eth0","rx",5)["frames"] == 40' \
	'pause("eth0","rx",5)["quanta"] == 40 * 0x100' \
	'pause("eth0","rx",5)["resumes"] == 10' \
	'pause("eth0","rx",0,"pause")["frames"] == 5' \
	'pause("eth0","rx",0,"pause")["quanta"] == 5 * 0x200' \
	'0xffff * 512 * 1000 // 100000 <= pause("eth0","rx",3)["paused_ns"] <= 100 * (0xffff * 512 * 1000 // 100000)' \
	'pause("eth0","rx",5)["paused_ns"] <= 40 * (0x100 * 512 * 1000 // 100000)' \
	'not [r for r in j["pause"] if r["dir"] == "tx"]' \
	'len([r for r in j["pause"] if r["dir"] == "rx"]) == 3'
