#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of collx-doctor's judgement: facts as a ConnectX with DCB, or
a misconfigured node, would report them (the lab has soft-RoCE only, which
has no DCB), and a DCB netlink reply built byte by byte.  Prints TAP."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from collx_doctor import checks, cluster, dcbnl  # noqa: E402

n = 0
bad = 0


def expect(what, ok):
    global n, bad
    n += 1
    bad += not ok
    print("%s %d - doctor: %s" % ("ok" if ok else "not ok", n, what))


def port(**kw):
    r = {"device": "mlx5_0", "port": 1, "state": "4: ACTIVE", "phys_state": "5: LinkUp",
         "link_layer": "Ethernet", "netdev": "enp1s0", "soft": False, "active_mtu": 4096,
         "max_mtu": 4096, "gids": [{"index": 3, "gid": checks.ipv4_gid("10.0.0.1"),
                                    "type": "RoCE v2", "netdev": "enp1s0"}]}
    r.update(kw)
    return r


NET = {"name": "enp1s0", "mtu": 9000, "addrs": ["10.0.0.1"], "tcp_ecn": "2", "driver": "mlx5_core"}


def dcb(pfc_en, app=()):
    return {"pfc": {"pfc_cap": 8, "pfc_en": pfc_en}, "app": [list(a) for a in app]}


# DSCP 26 (TOS 0x68, RoCE's usual) trusted and mapped to priority 3
APP = [(5, 3, 26)]
S = lambda x: x["status"]  # noqa: E731

expect("PFC on the RoCE priority only: ok", S(checks.check_pfc(port(), dcb(1 << 3, APP), 0x68)) == "ok")
expect("PFC off on the RoCE priority: fail",
       S(checks.check_pfc(port(), dcb(1 << 4, APP), 0x68)) == "fail")
v = checks.check_pfc(port(), dcb(0, APP), 0x68)
expect("PFC off everywhere: fail naming priority 3 and the dcb command",
       S(v) == "fail" and "priority 3" in v["message"] and "prio-pfc 3:on" in v["advice"])
expect("PFC on other priorities too: warn",
       S(checks.check_pfc(port(), dcb(1 << 3 | 1 << 5, APP), 0x68)) == "warn")
v = checks.check_pfc(port(soft=True, device="rxe0"), {"errno": 95, "error": "EOPNOTSUPP"}, 0)
expect("soft-RoCE without DCB: warn, not supported", S(v) == "warn" and
       "no DCB on this device (soft-RoCE)" in v["message"])
expect("DSCP unmapped: the NIC's default priority dscp>>3",
       checks.traffic_prio(0x68, dcb(0, [(5, 1, 10)]))[2] == 26 >> 3)
expect("no DSCP trust: rt_tos2priority of the TOS", checks.traffic_prio(0x10, dcb(0))[2] == 6)
expect("trust DSCP: ok", S(checks.check_trust(port(), dcb(8, APP), 0x68)) == "ok")
expect("trust PCP: warn with a dcb app command",
       "dscp-prio 26:" in checks.check_trust(port(), dcb(8), 0x68)["advice"])

net = dict(NET, ecn={"roce_np": {3: True}, "roce_rp": {3: True}})
expect("DCQCN on the RoCE priority: ok", S(checks.check_ecn(port(), net, dcb(8, APP), 0x68)) == "ok")
net = dict(NET, ecn={"roce_np": {3: True}, "roce_rp": {3: False}})
v = checks.check_ecn(port(), net, dcb(8, APP), 0x68)
expect("reaction point off: fail", S(v) == "fail" and "roce_rp" in v["message"])
v = checks.check_ecn(port(soft=True), NET, {"error": "EOPNOTSUPP"}, 0)
expect("no ECN knobs: warn, naming tcp_ecn as TCP's", S(v) == "warn" and "tcp_ecn=2" in v["message"])

expect("MTU 4096: ok", S(checks.check_mtu(port(), NET)) == "ok")
v = checks.check_mtu(port(active_mtu=1024), dict(NET, mtu=1500))
expect("MTU 1024 on a 1500 netdev: warn with ip link advice", S(v) == "warn" and "mtu 9000" in v["advice"])
expect("GID for the address: ok", S(checks.check_gid(port(), NET)) == "ok")
expect("no RoCE v2 GID for the address: fail",
       S(checks.check_gid(port(gids=[]), NET)) == "fail")
expect("port DOWN: fail", S(checks.check_port(port(state="1: DOWN"))) == "fail")

expect("memlock 64 KiB without CAP_IPC_LOCK: fail",
       S(checks.check_memlock({"soft": 65536, "hard": 65536, "cap_ipc_lock": False})) == "fail")
expect("memlock 1 GiB: warn",
       S(checks.check_memlock({"soft": 1 << 30, "hard": None, "cap_ipc_lock": False})) == "warn")
expect("memlock unlimited: ok",
       S(checks.check_memlock({"soft": None, "hard": None, "cap_ipc_lock": False})) == "ok")
expect("CAP_IPC_LOCK: ok",
       S(checks.check_memlock({"soft": 65536, "hard": 65536, "cap_ipc_lock": True})) == "ok")
expect("/dev/collx 0666: warn", S(checks.check_devnode(
    {"exists": True, "mode": "0666", "group": "root", "access": True}, True)) == "warn")
expect("/dev/collx 0660 not ours: fail", S(checks.check_devnode(
    {"exists": True, "mode": "0660", "group": "collx", "access": False}, True)) == "fail")

lib = {"path": "libcollx.so.1", "rc": -71, "error": "collx_dev_open: protocol error (EPROTO)"}
expect("library refusing the module's ABI: fail", S(checks.check_module(
    {"loaded": True, "version": "0.1.0"}, {"abi": [2, 0]}, lib)) == "fail")
expect("parameter hash depends on slot_kib",
       checks.params_hash({"slot_kib": "64"}) != checks.params_hash({"slot_kib": "128"}))


def node(host, slot):
    return {"host": host, "module": {"version": "0.1.0", "params": {"slot_kib": slot, "nslots": "4",
                                                                     "listen_port": "18888"}},
            "rdma": {"active_mtu": 4096}, "dcb": {}, "netdev": {"addrs": []}}


out = cluster.compare([node("a", "64"), node("b", "128"), node("c", "64")], "a", probe=False)
bad_p = [x for x in out if x["check"] == "param slot_kib"][0]
expect("compare names the node whose slot_kib differs",
       bad_p["status"] == "fail" and "128 on b" in bad_p["message"].replace('"', ""))
expect("compare: equal nslots ok", [x for x in out if x["check"] == "param nslots"][0]["status"] == "ok")


def nla(t, payload):
    b = struct.pack("=HH", 4 + len(payload), t) + payload
    return b + b"\0" * (-len(b) % 4)


pfc = dcbnl.IEEE_PFC.pack(8, 0x08, 0, 0, *([0] * 8), *([7] * 8))
app = nla(dcbnl.DCB_ATTR_IEEE_APP, dcbnl.DCB_APP.pack(5, 3, 26))
reply = nla(dcbnl.DCB_ATTR_IFNAME, b"enp1s0\0") + nla(dcbnl.DCB_ATTR_IEEE | 0x8000,
                                                      nla(dcbnl.DCB_ATTR_IEEE_PFC, pfc) +
                                                      nla(dcbnl.DCB_ATTR_IEEE_APP_TABLE | 0x8000, app))
got = dcbnl.parse_ieee(reply)
expect("DCB reply: pfc_en and the APP table parsed",
       got["pfc"]["pfc_en"] == 8 and got["pfc"]["indications"][3] == 7 and got["app"] == [[5, 3, 26]])

print("1..%d" % n)
sys.exit(1 if bad else 0)
