#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Bus bandwidth against message size: collx per algorithm beside Gloo and
the link, from JSON.

    busbw.py -o busbw.svg bench.json [more.json ...]

Each input is either a series document (what make bench / the demo
writes):

    {"title": "allreduce, 4 ranks, soft-RoCE lab",
     "series": [{"name": "collx ring", "points": [[bytes, busbw_GBps], ...]},
                {"name": "Gloo ring", "points": [...]}],
     "lines": [{"name": "ib_write_bw -b per direction", "GBps": 0.0246}]}

or nccl-tests' JSON as collx-bench -J writes it (config.collective,
config.algorithm and results[].size / out_of_place.bus_bw): one series
named after the collective and algorithm, in place too with --in-place;
or the results of make bench (.build/bench/bench-<N>nodes.json, from
tests/bench/bench_report.py): the series of one collective (--coll,
allreduce by default; points [bytes, time_us, busbw_GBps, ...]), with the
link's ib_write_bw one way and per direction when both ways run at once.
"lines" are horizontal references (the link's own figure).  The output
format follows the file name (.png, .svg, .pdf)."""
import argparse
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402


def human(b, _pos=None):
    for unit in ("B", "K", "M", "G"):
        if b < 1024:
            return "%g%s" % (b, unit)
        b /= 1024
    return "%gT" % b


def perftest_GBps(mbps):
    """perftest's MB/sec (2^20 bytes per second) in GB/s."""
    return mbps * 1048576 / 1e9


def bench_series(doc, coll):
    """The make bench document: one collective's series and the link."""
    s = []
    for x in doc["series"]:
        words = x["name"].split()
        if len(words) < 3 or words[2] != coll or x.get("error"):
            continue  # "collx ring allreduce", "gloo ring allreduce", ...
        pts = [(float(p[0]), float(p[2])) for p in x["points"] if len(p) > 2]
        if pts:
            s.append((" ".join([words[0].replace("gloo", "Gloo")] + words[1:2] + words[3:]), pts))
    lines = []
    link = doc.get("link") or {}
    if link.get("one_way_MBps"):
        lines.append(("ib_write_bw one way", perftest_GBps(link["one_way_MBps"])))
    if link.get("both_ways_MBps"):
        lines.append(("ib_write_bw -b, per direction", perftest_GBps(link["both_ways_MBps"]) / 2))
    title = "%s, %s ranks, %s" % (coll, doc.get("nodes", "?"), doc.get("kernel") or "soft-RoCE lab")
    return s, lines, title


def series_of(doc, path, in_place, coll="allreduce"):
    """[(name, [(bytes, GB/s)])], [(name, GB/s)], title."""
    if "series" in doc and "link" in doc and "nodes" in doc:
        return bench_series(doc, coll)
    if "series" in doc:
        s = [(x["name"], [(float(b), float(g)) for b, g in x["points"]]) for x in doc["series"]]
        return s, [(x["name"], float(x["GBps"])) for x in doc.get("lines", [])], doc.get("title")
    if "results" in doc and "config" in doc:
        c = doc["config"]
        name = "collx %s%s" % (c.get("collective", "?"),
                               " " + c["algorithm"] if c.get("algorithm") not in (None, "") else "")
        out = []
        for half, suffix in (("out_of_place", ""), ("in_place", " in place")):
            if half == "in_place" and not in_place:
                continue
            pts = [(float(r["size"]), float(r[half]["bus_bw"])) for r in doc["results"]
                   if r.get(half)]
            if pts:
                out.append((name + suffix, pts))
        title = "%s, %s ranks" % (c.get("collective", "?"), c.get("nranks", "?"))
        return out, [], title
    sys.exit("busbw: %s is neither a series document nor nccl-tests JSON" % path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+")
    p.add_argument("-o", "--output", required=True, help="PNG, SVG or PDF")
    p.add_argument("--in-place", action="store_true", help="also the in-place half of nccl-tests JSON")
    p.add_argument("--coll", default="allreduce", help="the collective of a make bench document")
    p.add_argument("--title")
    a = p.parse_args()
    series, lines, titles = [], [], []
    for path in a.inputs:
        with open(path) as f:
            s, l, t = series_of(json.load(f), path, a.in_place, a.coll)
        series += s
        lines += l
        titles.append(t)
    if not series:
        sys.exit("busbw: no points")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for name, pts in series:
        pts.sort()
        ax.plot([b for b, _ in pts], [g for _, g in pts], marker="o", markersize=3, label=name)
    for i, (name, g) in enumerate(lines):
        ax.axhline(g, linestyle="--", color="grey" if i == 0 else "dimgrey", linewidth=1)
        # x in axes coordinates, y in data: the label sits on its line
        ax.text(0.01, g, " " + name, transform=ax.get_yaxis_transform(), va="bottom",
                fontsize="small", color="dimgrey")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(human))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(a.title or next((t for t in titles if t), "bus bandwidth"))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    fig.savefig(a.output)
    print("%s: %d series, %d reference lines" % (a.output, len(series), len(lines)))


if __name__ == "__main__":
    main()
