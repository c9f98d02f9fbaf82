# SPDX-License-Identifier: GPL-2.0
"""Across nodes: every node writes its facts into a shared folder
(--gather DIR: a network file system on a cluster, the results folder in
the lab), then one node judges them all (--compare DIR) and probes the
path MTU to each of the others.  No ssh, no launcher needed."""
import glob
import json
import os

from . import checks
from .checks import FAIL, OK, WARN, v
from .facts import run


def gather(path, facts, verdicts):
    os.makedirs(path, exist_ok=True)
    out = os.path.join(path, facts["host"] + ".json")
    with open(out + ".tmp", "w") as f:
        json.dump({"facts": facts, "verdicts": verdicts}, f, indent=1)
    os.replace(out + ".tmp", out)
    return out


def load(path):
    nodes = []
    for p in sorted(glob.glob(os.path.join(path, "*.json"))):
        with open(p) as f:
            nodes.append(json.load(f)["facts"])
    return nodes


def _same(check, nodes, get, what, status, advice):
    vals = {}
    for n in nodes:
        x = get(n)
        vals.setdefault("?" if x is None else str(x), []).append(n["host"])
    if len(vals) <= 1:
        return v(check, OK, "%s: %s on all %d nodes" % (what, next(iter(vals), "?"), len(nodes)))
    groups = "; ".join("%s on %s" % (k, ",".join(h)) for k, h in sorted(vals.items(), key=lambda kv: len(kv[1])))
    return v(check, status, "%s differ: %s" % (what, groups), advice)


def compare(nodes, me, probe=True):
    if not nodes:
        return [v("nodes", FAIL, "no facts gathered", "run collx-doctor --gather DIR on every node")]
    out = [v("nodes", OK, "%d nodes: %s" % (len(nodes), ", ".join(n["host"] for n in nodes)))]
    for p in checks.MATCH_PARAMS:
        out.append(_same("param " + p, nodes, lambda n: n["module"].get("params", {}).get(p),
                         "collx parameter %s" % p, FAIL,
                         "set %s in /etc/modprobe.d/collx.conf on every node, then rmmod collx; "
                         "modprobe collx (connections between them fail: READY mismatch)" % p))
    out.append(_same("module", nodes, lambda n: n["module"].get("version"), "collx module versions",
                     WARN, "install the same collx-dkms version everywhere"))
    out.append(_same("mtu", nodes, lambda n: n["rdma"].get("active_mtu"), "active MTUs", WARN,
                     "a QP runs at the smaller of its two ends' MTUs: set the same netdev MTU on every node"))
    known = [n for n in nodes if n["dcb"].get("pfc")]
    if known:
        out.append(_same("pfc", known, lambda n: n["dcb"]["pfc"]["pfc_en"], "PFC priority masks", WARN,
                         "one lossless priority, the same on every node and switch"))
    if probe:
        out.extend(path_mtu(nodes, me))
    return out


def path_mtu(nodes, me):
    """A ping that may not fragment, as large as a full RoCE packet at MTU
    4096, to every other node: a switch port without jumbo frames drops it
    (and would silently drop collx's 4096-byte packets)."""
    size = checks.ROCE_MTU + checks.ROCE_OVERHEAD - 28
    out = []
    for n in nodes:
        addrs = [a for a in n["netdev"].get("addrs", []) if "." in a]
        if n["host"] == me or not addrs:
            continue
        if (n["rdma"].get("active_mtu") or 0) < checks.ROCE_MTU:
            continue    # that node's own MTU check already says it
        rc, text = run(["ping", "-c", "1", "-W", "2", "-M", "do", "-s", str(size), addrs[0]])
        if rc == 127:
            return [v("path mtu", WARN, "no ping (package iputils-ping): path MTU not probed")]
        if rc == 0:
            out.append(v("path mtu", OK, "%d-byte unfragmented packets reach %s (%s)" % (size + 28, n["host"], addrs[0])))
        else:
            out.append(v("path mtu", FAIL, "%d-byte unfragmented packets do not reach %s (%s): %s" % (
                size + 28, n["host"], addrs[0], text.strip().splitlines()[-1] if text.strip() else rc),
                "a device on the path has a smaller MTU: jumbo frames on every switch port"))
    return out
