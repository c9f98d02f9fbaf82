# SPDX-License-Identifier: GPL-2.0
"""What the node says about itself: sysfs, /proc, iproute2's JSON, ibv_devinfo.
Every function returns plain data (JSON-able); a missing source is an
"error" entry, never an exception."""
import errno
import grp
import json
import os
import platform
import re
import resource
import shutil
import stat
import subprocess

from . import dcbnl

IB = "/sys/class/infiniband"
NET = "/sys/class/net"
CAP_IPC_LOCK = 14


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def run(argv, timeout=10):
    """(rc, stdout) of a command; rc 127 when it is not installed."""
    if not shutil.which(argv[0]):
        return 127, ""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 126, str(e)
    return p.returncode, p.stdout + p.stderr


def rdma_ports():
    """[(device, port)] of every RDMA device, ACTIVE ports first."""
    out = []
    for dev in sorted(os.listdir(IB)) if os.path.isdir(IB) else []:
        for p in sorted(os.listdir(os.path.join(IB, dev, "ports")), key=int):
            state = read(os.path.join(IB, dev, "ports", p, "state"), "")
            out.append((not state.endswith("ACTIVE"), dev, int(p)))
    return [(d, p) for _, d, p in sorted(out)]


def pick_port(device=None, port=None):
    """The port to check: --device/--port, else COLLX_IB_HCA's first
    entry (NCCL syntax: [^=]dev[:port],...), else the first ACTIVE one."""
    if not device:
        hca = os.environ.get("COLLX_IB_HCA", "").lstrip("^=").split(",")[0]
        if hca and not os.environ.get("COLLX_IB_HCA", "").startswith("^"):
            device, _, p = hca.partition(":")
            port = port or (int(p) if p.isdigit() else None)
    for d, p in rdma_ports():
        if (device is None or d == device) and (port is None or p == port):
            return d, p
    return device, port


def port_facts(dev, port):
    base = os.path.join(IB, dev or "", "ports", str(port))
    if not dev or not os.path.isdir(base):
        have = ", ".join("%s/%d" % dp for dp in rdma_ports())
        if not have:
            return {"error": "no RDMA device (rdma link show lists none)"}
        return {"error": "no RDMA port %s/%s (ports: %s)" % (dev, port or 1, have)}
    f = {"device": dev, "port": port,
         "state": read(base + "/state", "?"), "phys_state": read(base + "/phys_state", "?"),
         "link_layer": read(base + "/link_layer", "?"),
         "netdev": read(base + "/gid_attrs/ndevs/0"), "gids": []}
    f["soft"] = dev.startswith(("rxe", "siw")) or not os.path.exists(os.path.join(IB, dev, "device"))
    for i in sorted(os.listdir(base + "/gids"), key=int) if os.path.isdir(base + "/gids") else []:
        gid = read("%s/gids/%s" % (base, i), "")
        if not gid or set(gid.replace(":", "")) == {"0"}:
            continue
        f["gids"].append({"index": int(i), "gid": gid,
                          "type": read("%s/gid_attrs/types/%s" % (base, i), "?"),
                          "netdev": read("%s/gid_attrs/ndevs/%s" % (base, i), "?")})
    rc, out = run(["ibv_devinfo", "-d", dev, "-i", str(port)])
    m = re.search(r"active_mtu:\s*(\d+)", out)
    n = re.search(r"max_mtu:\s*(\d+)", out)
    f["active_mtu"] = int(m.group(1)) if m else None
    f["max_mtu"] = int(n.group(1)) if n else None
    if not m:
        f["mtu_error"] = "ibv_devinfo (package ibverbs-utils): " + (
            "not installed" if rc == 127 else out.strip().splitlines()[-1] if out.strip() else "no answer")
    return f


def netdev_facts(name):
    if not name or not os.path.isdir(os.path.join(NET, name)):
        return {"error": "no netdev %s" % name}
    f = {"name": name, "mtu": int(read("%s/%s/mtu" % (NET, name), "0")), "addrs": []}
    rc, out = run(["ip", "-j", "addr", "show", "dev", name])
    try:
        for a in json.loads(out)[0].get("addr_info", []):
            if a.get("scope") != "link":
                f["addrs"].append(a["local"])
    except (ValueError, IndexError, KeyError):
        f["addr_error"] = "ip -j addr: " + out.strip()[:200]
    ecn = os.path.join(NET, name, "ecn")
    if os.path.isdir(ecn):
        f["ecn"] = {}
        for point in ("roce_np", "roce_rp"):
            d = os.path.join(ecn, point, "enable")
            f["ecn"][point] = {int(p): read(os.path.join(d, p)) == "1"
                               for p in (os.listdir(d) if os.path.isdir(d) else []) if p.isdigit()}
    f["tcp_ecn"] = read("/proc/sys/net/ipv4/tcp_ecn")
    f["driver"] = os.path.basename(os.path.realpath(os.path.join(NET, name, "device/driver"))) \
        if os.path.exists(os.path.join(NET, name, "device/driver")) else None
    return f


def dcb_facts(name):
    try:
        return dcbnl.ieee_get(name)
    except OSError as e:
        name = "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else errno.errorcode.get(e.errno, str(e.errno))
        return {"errno": e.errno, "error": name, "text": e.strerror}


def module_facts():
    base = "/sys/module/collx"
    if not os.path.isdir(base):
        return {"loaded": False}
    pdir = base + "/parameters"
    params = {p: read(os.path.join(pdir, p)) for p in sorted(os.listdir(pdir))} \
        if os.path.isdir(pdir) else {}
    rc, path = run(["modinfo", "-n", "collx"])
    return {"loaded": True, "version": read(base + "/version"), "srcversion": read(base + "/srcversion"),
            "params": params, "path": path.strip() if rc == 0 else None}


def devnode_facts(path="/dev/collx"):
    try:
        st = os.stat(path)
    except OSError as e:
        return {"exists": False, "error": e.strerror}
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    return {"exists": True, "char": stat.S_ISCHR(st.st_mode), "mode": "%04o" % stat.S_IMODE(st.st_mode),
            "group": group, "access": os.access(path, os.R_OK | os.W_OK)}


def cap_eff():
    m = re.search(r"^CapEff:\s*([0-9a-f]+)", read("/proc/self/status", ""), re.M)
    return int(m.group(1), 16) if m else 0


def memlock_facts():
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard,
            "cap_ipc_lock": bool(cap_eff() & (1 << CAP_IPC_LOCK)), "uid": os.getuid()}


def tos():
    """The IP TOS byte collx's RoCE traffic carries: COLLX_IB_TC (as
    NCCL_IB_TC), 0 when unset."""
    v = os.environ.get("COLLX_IB_TC", "0")
    return int(v, 0) if re.fullmatch(r"(0x)?[0-9a-fA-F]+", v) else 0


def node_facts(device=None, port=None, tos_override=None):
    dev, p = pick_port(device, port)
    port_f = port_facts(dev, p)
    nd = port_f.get("netdev")
    return {
        "host": platform.node(), "kernel": platform.release(),
        "rdma": port_f,
        "netdev": netdev_facts(nd) if nd else {"error": "no netdev for the RDMA port"},
        "dcb": dcb_facts(nd) if nd else {"error": "no netdev"},
        "tos": tos() if tos_override is None else tos_override,
        "module": module_facts(), "devnode": devnode_facts(), "memlock": memlock_facts(),
    }
