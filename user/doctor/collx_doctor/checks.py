# SPDX-License-Identifier: GPL-2.0
"""Verdicts from facts: pure functions (no I/O), so the host unit test can
feed them what a ConnectX with DCB would report.

Each check returns {"check", "status": ok|warn|fail, "message", "advice"}:
fail when collx will not work or will lose data, warn when it works below
what the fabric can do or cannot be verified here, ok otherwise."""
import hashlib

OK, WARN, FAIL = "ok", "warn", "fail"
ROCE_MTU = 4096
# Headroom of a full RoCE v2 packet over its IB MTU payload: IPv4 20, UDP 8,
# BTH 12, RETH 16, ICRC 4 (Ethernet's own header is outside the netdev MTU).
ROCE_OVERHEAD = 60
MEMLOCK_MIN = 64 << 20
# rt_tos2priority(): skb priority of a TOS byte without DSCP trust.
TOS2PRIO = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4]
SEL_DSCP = 5
MATCH_PARAMS = ("slot_kib", "nslots", "listen_port")


def v(check, status, message, advice=""):
    return {"check": check, "status": status, "message": message, "advice": advice}


def params_hash(params):
    """64 bits of SHA-256 over the parameters that must match."""
    s = ";".join("%s=%s" % (k, params.get(k)) for k in MATCH_PARAMS)
    return int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little")


def check_module(m, ioctl, lib):
    if not m.get("loaded"):
        return v("module", FAIL, "collx is not loaded",
                 "modprobe collx (collx-dkms builds it for this kernel: dkms status collx)")
    msg = "collx %s loaded %s" % (m.get("version"), "from " + m["path"] if m.get("path")
                                  else "(insmod'ed: no collx.ko under /lib/modules)")
    if ioctl.get("error"):
        return v("module", FAIL, msg + "; " + ioctl["error"],
                 "check /dev/collx (udev rule 60-collx.rules, group collx)")
    msg += ", ABI %d.%d" % tuple(ioctl["abi"])
    if lib is None:
        return v("module", WARN, msg + "; libcollx.so.1 not found, the library's ABI is unchecked",
                 "install libcollx1, or set COLLX_LIB to the library")
    if lib.get("rc"):
        return v("module", FAIL, msg + "; %s refuses it: %s" % (lib["path"], lib["error"]),
                 "libcollx and the module must speak one ABI major: install matching "
                 "collx-dkms and libcollx1 versions")
    return v("module", OK, msg + "; %s speaks it" % lib["path"])


def check_devnode(d, module_loaded):
    if not d.get("exists"):
        return v("device", FAIL if module_loaded else WARN, "no /dev/collx",
                 "modprobe collx; udev creates /dev/collx")
    msg = "/dev/collx %s group %s" % (d["mode"], d["group"])
    if not d["access"]:
        return v("device", FAIL, msg + ", not readable and writable by this user",
                 "add the user to group %s (usermod -aG %s USER) and log in again"
                 % (d["group"], d["group"]))
    if int(d["mode"], 8) & 0o002:
        return v("device", WARN, msg + ": every local user may use it",
                 "install the udev rule of collx-dkms (60-collx.rules: group collx, mode 0660)")
    return v("device", OK, msg + ", usable by this user")


def check_port(r):
    if r.get("error"):
        return v("port", FAIL, r["error"], "rdma link show; load the NIC's driver (rxe: rdma link add)")
    msg = "%s/%d %s (%s), %s over %s" % (r["device"], r["port"], r["state"], r["phys_state"],
                                        r["link_layer"], r.get("netdev"))
    if not r["state"].endswith("ACTIVE"):
        return v("port", FAIL, msg, "the port must be ACTIVE: check the cable and the switch port "
                 "(InfiniBand: a subnet manager); rdma link show %s/%d" % (r["device"], r["port"]))
    return v("port", OK, msg)


def ipv4_gid(addr):
    p = [int(x) for x in addr.split(".")]
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(p)


def check_gid(r, n):
    if r.get("error") or r.get("link_layer") == "InfiniBand":
        return v("gid", OK, "InfiniBand: no RoCE GID needed") if r.get("link_layer") == "InfiniBand" \
            else v("gid", FAIL, "no RDMA port")
    if n.get("error"):
        return v("gid", FAIL, n["error"])
    v4 = [a for a in n["addrs"] if "." in a]
    if not n["addrs"]:
        return v("gid", FAIL, "%s has no IP address: rdma_cm cannot reach this node" % n["name"],
                 "ip addr add ADDR/PREFIX dev %s" % n["name"])
    found, missing = [], []
    for a in v4:
        g = [x for x in r["gids"] if x["gid"] == ipv4_gid(a) and x["type"] == "RoCE v2"]
        (found if g else missing).append((a, g[0]["index"] if g else None))
    if not v4:
        return v("gid", WARN, "%s has only IPv6 addresses (%s); collx's bootstrap uses IPv4"
                 % (n["name"], ", ".join(n["addrs"])), "add an IPv4 address")
    if missing:
        return v("gid", FAIL, "no RoCE v2 GID for %s on %s/%d" % (
            ", ".join(a for a, _ in missing), r["device"], r["port"]),
            "the GID table follows the netdev's addresses: check `rdma link` and that the "
            "address is on %s itself, not on a bridge above it" % n["name"])
    return v("gid", OK, ", ".join("RoCE v2 GID index %d for %s" % (i, a) for a, i in found))


def check_mtu(r, n):
    if r.get("error") or n.get("error"):
        return v("mtu", FAIL, "no RDMA port or netdev")
    if r.get("active_mtu") is None:
        return v("mtu", WARN, "active MTU unknown: %s" % r.get("mtu_error"),
                 "install ibverbs-utils")
    msg = "active MTU %d on %s/%d (max %s), %s MTU %d" % (
        r["active_mtu"], r["device"], r["port"], r.get("max_mtu"), n["name"], n["mtu"])
    if r["active_mtu"] >= ROCE_MTU:
        return v("mtu", OK, msg)
    if r.get("max_mtu") and r["max_mtu"] < ROCE_MTU:
        return v("mtu", WARN, msg + ": the device cannot do 4096", "")
    need = ROCE_MTU + ROCE_OVERHEAD
    return v("mtu", WARN, msg + ": RDMA messages travel in %d-byte packets, not %d" % (
        r["active_mtu"], ROCE_MTU),
        "RoCE fabrics run MTU 4096: ip link set %s mtu 9000 (at least %d) on every node, "
        "and jumbo frames on every switch port on the path" % (n["name"], need))


def traffic_prio(tos, dcb):
    """(trust, dscp, priority, how) of collx's RoCE traffic."""
    dscp = tos >> 2
    dmap = {proto: prio for sel, prio, proto in dcb.get("app", []) if sel == SEL_DSCP}
    if dmap:
        if dscp in dmap:
            return "dscp", dscp, dmap[dscp], "DSCP %d -> priority %d (APP table)" % (dscp, dmap[dscp])
        return "dscp", dscp, dscp >> 3, "DSCP %d not in the APP table: the NIC's default, priority %d" % (
            dscp, dscp >> 3)
    p = TOS2PRIO[(tos >> 1) & 0xF]
    return "pcp", dscp, p, "TOS 0x%02x -> skb priority %d (no DSCP trust)" % (tos, p)


def no_dcb(check, r, dcb, what):
    if r.get("soft"):
        return v(check, WARN, "no DCB on this device (soft-RoCE): %s cannot be set or read here" % what,
                 "soft-RoCE has no hardware queues; on a RoCE NIC this check reads dcbnl")
    return v(check, WARN, "no DCB on %s (%s): %s cannot be read here" % (
        r.get("netdev"), dcb.get("text") or dcb.get("error"), what),
        "the NIC's firmware may own it (mlnx_qos -i DEV, or lldpad): check it there and on the switch")


def check_pfc(r, dcb, tos):
    if r.get("link_layer") == "InfiniBand":
        return v("pfc", OK, "InfiniBand: lossless by credit-based flow control")
    if dcb.get("error") or not dcb.get("pfc"):
        return no_dcb("pfc", r, dcb, "PFC")
    trust, dscp, prio, how = traffic_prio(tos, dcb)
    en = [p for p in range(8) if dcb["pfc"]["pfc_en"] >> p & 1]
    msg = "collx's traffic: %s; PFC enabled on %s" % (how, ", ".join(map(str, en)) or "no priority")
    if prio not in en:
        return v("pfc", FAIL, msg + ": RoCE on priority %d is lossy" % prio,
                 "dcb pfc set dev %s prio-pfc %d:on (and on the switch ports), or move collx's "
                 "traffic (COLLX_IB_TC) to the lossless priority" % (r.get("netdev"), prio))
    others = [p for p in en if p != prio]
    if others:
        return v("pfc", WARN, msg + ": also on %s" % ", ".join(map(str, others)),
                 "enable PFC on the RoCE priority only: more lossless priorities mean more "
                 "head-of-line blocking and pause-storm/deadlock risk")
    return v("pfc", OK, msg)


def check_ecn(r, n, dcb, tos):
    if r.get("link_layer") == "InfiniBand":
        return v("ecn", OK, "InfiniBand: congestion control is the subnet's")
    ecn = n.get("ecn")
    if ecn:
        _, _, prio, how = traffic_prio(tos, dcb if not dcb.get("error") else {})
        np_, rp = ecn.get("roce_np", {}), ecn.get("roce_rp", {})
        off = [k for k, d in (("notification point (roce_np)", np_), ("reaction point (roce_rp)", rp))
               if not d.get(prio)]
        if off:
            return v("ecn", FAIL, "ECN off on priority %d (%s) for the %s" % (prio, how, " and ".join(off)),
                     "echo 1 > /sys/class/net/%s/ecn/roce_np/enable/%d; echo 1 > "
                     "/sys/class/net/%s/ecn/roce_rp/enable/%d" % (n["name"], prio, n["name"], prio))
        return v("ecn", OK, "DCQCN on priority %d: roce_np and roce_rp enabled" % prio)
    tcp = n.get("tcp_ecn")
    what = "no RoCE ECN settings (/sys/class/net/%s/ecn/roce_np|rp)" % n.get("name")
    if r.get("soft"):
        return v("ecn", WARN, "%s: soft-RoCE has no DCQCN; net.ipv4.tcp_ecn=%s is TCP's, not RoCE's"
                 % (what, tcp), "on a RoCE NIC, enable ECN (DCQCN) on the RoCE priority, and ECN "
                 "marking on the switch")
    return v("ecn", WARN, "%s on driver %s; net.ipv4.tcp_ecn=%s is TCP's, not RoCE's"
             % (what, n.get("driver"), tcp),
             "check DCQCN in the NIC's tools (mlnx_qos, devlink) and ECN marking on the switch")


def check_trust(r, dcb, tos):
    if r.get("link_layer") == "InfiniBand":
        return v("trust", OK, "InfiniBand: service levels, no DSCP")
    if dcb.get("error") or dcb.get("pfc") is None and not dcb.get("app"):
        return no_dcb("trust", r, dcb, "the DSCP trust mode")
    trust, dscp, prio, how = traffic_prio(tos, dcb)
    if trust == "dscp":
        return v("trust", OK, "trust DSCP: %s" % how)
    return v("trust", WARN, "trust PCP (no DSCP entries in the APP table): %s; untagged RoCE "
             "carries no PCP" % how,
             "RoCE v2 is routed: trust DSCP, e.g. dcb app add dev %s dscp-prio %d:%d"
             % (r.get("netdev"), dscp, prio))


def human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return "%g %s" % (n, unit)
        n /= 1024
    return "%g PiB" % n


def check_memlock(m):
    if m["cap_ipc_lock"]:
        return v("memlock", OK, "CAP_IPC_LOCK: pinned memory is not limited")
    if m["soft"] is None:
        return v("memlock", OK, "RLIMIT_MEMLOCK unlimited")
    msg = "RLIMIT_MEMLOCK %s (hard %s)" % (human(m["soft"]), "unlimited" if m["hard"] is None
                                           else human(m["hard"]))
    advice = ("collx pins registered and bounced buffers against it: set it unlimited for the job "
              "(limits.conf '* - memlock unlimited', systemd LimitMEMLOCK=infinity, "
              "docker --ulimit memlock=-1, srun --propagate=MEMLOCK)")
    if m["soft"] < MEMLOCK_MIN:
        return v("memlock", FAIL, msg + ": registrations and bounced collectives beyond it fail "
                 "with ENOMEM", advice)
    return v("memlock", WARN, msg + ": buffers larger than that fail with ENOMEM", advice)


def check_params(m):
    if not m.get("loaded"):
        return v("params", WARN, "module not loaded: no parameters to compare")
    p = m.get("params", {})
    msg = " ".join("%s=%s" % (k, p[k]) for k in sorted(p))
    return v("params", OK, msg + " (hash %016x; --gather/--compare or --collective compare them "
             "across nodes)" % params_hash(p))


def node_verdicts(f, ioctl, lib):
    r, n, dcb, tos = f["rdma"], f["netdev"], f["dcb"], f["tos"]
    out = [check_module(f["module"], ioctl, lib), check_devnode(f["devnode"], f["module"].get("loaded")),
           check_port(r)]
    if r.get("error"):
        out += [v(c, WARN, "not checked: no RDMA port") for c in ("gid", "mtu", "pfc", "ecn", "trust")]
    else:
        out += [check_gid(r, n), check_mtu(r, n), check_pfc(r, dcb, tos), check_ecn(r, n, dcb, tos),
                check_trust(r, dcb, tos)]
    return out + [check_memlock(f["memlock"]), check_params(f["module"])]


def check_collective(c):
    if c.get("error"):
        return v("collective", FAIL, c["error"],
                 "see the failing rank and phase above; collx-doctor --gather/--compare "
                 "names parameters that differ")
    msg = "rank %d of %d: allreduce %s, %s B in %.0f us (busbw %.3f GB/s)" % (
        c["rank"], c["nranks"], "correct" if not c["sum_wrong"] else "%d WRONG elements" % c["sum_wrong"],
        c["bytes"], c["time_us"], c["busbw_GBps"])
    if c["sum_wrong"]:
        return v("collective", FAIL, msg)
    if not c["params_equal"]:
        return v("collective", FAIL, msg + "; module parameters differ between ranks",
                 "collx-doctor --gather DIR on every node, then --compare DIR names them")
    return v("collective", OK, msg + "; module parameters equal on every rank")
