#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A timeline of one collx-netmon run: every rank's collx ops as bars (one
row per rank), with the pause frames it received and the CE marks, CNPs
and NAKs it saw as marks on the same time axis.

    timeline.py -o run.svg node0.events node1.events ...

Inputs are collx-netmon --events files, one per node.  Each starts with a
line pairing that node's CLOCK_MONOTONIC with CLOCK_REALTIME, which puts
the nodes on one axis (--align realtime, the default: as good as the
nodes' clock sync); --align op instead shifts every node so that the end
of the first op all of them ran coincides (an allreduce ends within a
message latency on every rank), for nodes without synchronised clocks.
The output format follows the file name (.png, .svg, .pdf)."""
import argparse
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARKS = {  # event type -> (label, marker, colour, row offset)
    "pfc": ("PFC pause received", "|", "tab:red", 0.32),
    "pause": ("802.3x PAUSE received", "|", "darkred", 0.32),
    "ce": ("ECN CE", "x", "tab:orange", -0.32),
    "cnp": ("CNP", "^", "tab:purple", -0.32),
    "nak": ("NAK", "v", "black", -0.32),
}
COLL = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall",
        "barrier", "send", "recv"]


def load(path):
    clock, ev = None, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            e = json.loads(line)
            if e.get("type") == "clock":
                clock = e
            else:
                ev.append(e)
    return clock, ev


def node_of(path, clock, ev, idx):
    """Ops (start, end, comm, op, coll, status) and marks of one node."""
    rank, starts, ops, marks = None, {}, [], []
    submits = {}
    for e in ev:
        t = e["type"]
        if t == "op_submit":
            submits[(e["comm"], e["op"])] = e
            rank = e["b"] if rank is None else rank
        elif t == "op_start":
            starts[(e["comm"], e["op"])] = e["ts"]
        elif t == "op_done":
            k = (e["comm"], e["op"])
            if k in starts:
                coll = submits.get(k, e)["coll"]
                ops.append((starts[k], e["ts"], k[0], k[1], coll, e["status"]))
        elif t in MARKS and (t not in ("pfc", "pause") or (e.get("dir") == "rx" and e["b"] > 0)):
            marks.append((e["ts"], t))
    return {"path": path, "host": clock["host"] if clock else path,
            "rank": idx if rank is None else rank, "clock": clock, "ops": ops, "marks": marks}


def offsets(nodes, align):
    """Per node, what to add to its CLOCK_MONOTONIC to get the common axis (ns)."""
    if align == "op":
        ends = [{(c, o): e for _, e, c, o, _, _ in n["ops"]} for n in nodes]
        common = set(ends[0]).intersection(*ends[1:]) if ends else set()
        if not common:
            sys.exit("timeline: --align op: no op that every node ran")
        first = min(common, key=lambda k: ends[0][k])
        return [ends[0][first] - e[first] for e in ends]
    if align == "realtime":
        if any(n["clock"] is None for n in nodes):
            sys.exit("timeline: an events file without its clock line (collx-netmon too old?)")
        return [n["clock"]["realtime_ns"] - n["clock"]["mono_ns"] for n in nodes]
    return [0] * len(nodes)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("events", nargs="+", help="collx-netmon --events files, one per node")
    p.add_argument("-o", "--output", required=True, help="PNG, SVG or PDF")
    p.add_argument("--align", choices=("realtime", "op", "none"), default="realtime")
    p.add_argument("--comm", type=int, help="only this comm's ops")
    p.add_argument("--title", default="collx ops and the fabric")
    a = p.parse_args()

    nodes = [node_of(f, *load(f), i) for i, f in enumerate(a.events)]
    if a.comm is not None:
        for n in nodes:
            n["ops"] = [o for o in n["ops"] if o[2] == a.comm]
    off = offsets(nodes, a.align)
    t0 = min([o[0] + d for n, d in zip(nodes, off) for o in n["ops"]] +
             [m[0] + d for n, d in zip(nodes, off) for m in n["marks"]] or [0])
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.9 * len(nodes)))
    colours = plt.get_cmap("tab10")
    seen_coll, seen_mark = set(), set()
    for n, d in zip(nodes, off):
        y = n["rank"]
        for s, e, comm, op, coll, status in n["ops"]:
            name = COLL[coll] if 0 <= coll < len(COLL) else "coll%d" % coll
            label = None if name in seen_coll else name
            seen_coll.add(name)
            ax.barh(y, (e - s) / 1e6, left=(s + d - t0) / 1e6, height=0.5,
                    color="lightgrey" if status else colours(coll % 10), edgecolor="black",
                    linewidth=0.3, label=label)
        for t, kind in n["marks"]:
            lab, marker, col, dy = MARKS[kind]
            ax.plot((t + d - t0) / 1e6, y + dy, marker, color=col, markersize=9,
                    label=None if kind in seen_mark else lab)
            seen_mark.add(kind)
    ax.set_yticks([n["rank"] for n in nodes])
    ax.set_yticklabels(["rank %d (%s)" % (n["rank"], n["host"]) for n in nodes])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)%s" % {"realtime": ", node clocks by CLOCK_REALTIME",
                                    "op": ", aligned on the first common op's end",
                                    "none": ""}[a.align])
    ax.set_title(a.title)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    fig.tight_layout()
    fig.savefig(a.output)
    print("%s: %d nodes, %d ops, %d marks" % (a.output, len(nodes), sum(len(n["ops"]) for n in nodes),
                                              sum(len(n["marks"]) for n in nodes)))


if __name__ == "__main__":
    main()
