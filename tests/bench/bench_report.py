#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""collx bench: the table, the issue's targets and the JSON of one lab run.

Reads what tests/bench/bench-node.sh left in a lab run's results folder
(node0/link/*.txt from ib_write_bw, node0/collx/*.json from collx-bench -J,
nodeN/gloo.txt from gloo_bench on every rank, nodeN/small/ from the
alternating 4 KiB rounds, nodeN/steps.log) and prints:

  - the link: ib_write_bw node0 -> node1, one way and both ways (-b);
  - one table: per collective and size, every collx algorithm and every
    Gloo algorithm, with time (us), busbw (GB/s, nccl-tests' factors),
    the caller's CPU (getrusage) and the node's busy CPU (/proc/stat), in
    % of wall time, and collx's busbw over the best Gloo algorithm's;
  - the targets of issue 9, measured in this boot, PASS or MISS and by
    how much (target 1 from the rounds' median when they ran);
  - what one 4 KiB allreduce puts on the wire, per algorithm of collx
    and Gloo (node0's rxe counters and context switches);
  - with sizes below the table's (bench-node.sh -x), the algorithm
    crossovers for Documentation/engine.md.

Every figure is the mean over the ranks (collx-bench -a 1; gloo_bench's
per-rank lines averaged here).  collx's are its out-of-place half.
Timings never fail anything: the exit status is 1 only when a run failed
or an element of collx's came out wrong (Gloo's wrong results are
reported, not counted), 2 on bad usage.

  bench_report.py RESULTS_DIR [--json FILE] [--accel tcg|kvm] [--note TEXT]
"""
import argparse
import glob
import json
import os
import re
import sys

# nccl-tests' bus bandwidth factors (anchors.md)
def busbw_factor(coll, n):
    if coll == "allreduce":
        return 2.0 * (n - 1) / n
    if coll in ("allgather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    return 1.0

COLLS = ["allreduce", "broadcast", "reduce", "allgather", "reduce_scatter",
         "alltoall", "sendrecv"]
COLLX_ALGOS = {
    "allreduce": ["ring", "tree", "rd"],
    "broadcast": ["ring", "tree"],
    "reduce": ["ring", "tree"],
    "allgather": ["ring", "rd"],
    "reduce_scatter": ["ring", "rd"],
    "alltoall": ["pairwise", "ring"],
    "sendrecv": ["p2p"],
}
# gloo_bench's names: (collective, algorithm as the table names it)
GLOO = {
    "allreduce_ring": ("allreduce", "ring"),
    "allreduce_hd": ("allreduce", "halving-doubling"),
    "broadcast": ("broadcast", "one-to-all"),
    "allgather": ("allgather", "ring"),
    "reduce_scatter": ("reduce_scatter", "halving-doubling"),
    "reduce": ("reduce", "default"),
    "alltoall": ("alltoall", "default"),
}
TARGET_SMALL = 0.5      # (1) 4 KiB allreduce on 4 nodes: <= 0.5 x Gloo's time
TARGET_BUSBW = 1.3      # (2) >= 1 MiB: >= 1.3 x Gloo's busbw
TARGET_CPU = 1.0        # (3) 1 MiB registered async allreduce: caller <= 1 %
BIG = 1 << 20


def human(b):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return "%d%s" % (b // div, unit)
    return str(b)


class Series:
    """One line of the plot: points[bytes] = (time_us, busbw, caller, node)."""

    def __init__(self, impl, algo, coll):
        self.impl, self.algo, self.coll = impl, algo, coll
        self.points = {}
        self.error = None

    @property
    def name(self):
        return "%s %s %s" % (self.impl, self.algo, self.coll)


def read_link(d):
    """{'one': {bytes: MB/s}, 'both': {...}}: perftest's BW average (2^20 B/s)."""
    link = {"one": {}, "both": {}}
    for f in glob.glob(os.path.join(d, "node0", "link", "*.txt")):
        m = re.match(r"(one|both)-(\d+)\.txt$", os.path.basename(f))
        if not m:
            continue
        with open(f, errors="replace") as fh:
            for line in fh:
                w = line.split()
                if len(w) >= 5 and w[0] == m.group(2) and w[1].isdigit():
                    try:
                        link[m.group(1)][int(w[0])] = float(w[3])
                    except ValueError:
                        pass
    return link


def collx_points(doc, s, problems):
    """Series s's points from one collx-bench JSON; its last error or None."""
    error = None
    for err in doc.get("errors") or []:
        error = str(err)
        problems.append("collx-bench %s %s: %s" % (s.algo, s.coll, err))
    for r in doc.get("results") or []:
        h = r.get("out_of_place")
        if not h or h.get("time") is None:
            continue
        if h.get("nwrong"):
            problems.append("collx-bench %s %s %d B: %s wrong" %
                            (s.algo, s.coll, r["size"], h["nwrong"]))
        s.points[int(r["size"])] = (float(h["time"]), float(h["bus_bw"]),
                                    float(h.get("caller_cpu_pct", 0)),
                                    float(h.get("node_busy_pct", 0)))
    return error


def read_small(d, n, problems, gloo_wrong):
    """bench-node.sh's small step: per round, the best collx and the best
    Gloo 4 KiB allreduce time, [(round, collx us, algo, Gloo us, algo)]."""
    rounds = {}
    for f in glob.glob(os.path.join(d, "node0", "small", "allreduce-*-r*.json")):
        m = re.match(r"allreduce-([a-z0-9]+)-r([0-9]+)\.json$", os.path.basename(f))
        if not m:
            continue
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            problems.append("small %s: unreadable JSON: %s" % (os.path.basename(f), e))
            continue
        s = Series("collx", m.group(1), "allreduce")
        collx_points(doc, s, problems)
        rounds.setdefault(int(m.group(2)), []).append(s)
    out = []
    for k in sorted(rounds):
        acc, _ = gloo_lines(d, n, os.path.join("small", "gloo-r%d.txt" % k), gloo_wrong)
        gs = []
        for g, sizes in acc.items():
            if 4096 in sizes:
                s = Series("gloo", GLOO[g][1], "allreduce")
                s.points[4096] = (sizes[4096][1] / sizes[4096][0],)
                gs.append(s)
        t, cb = best(rounds[k], 4096, "time")
        g, gb = best(gs, 4096, "time")
        if t is not None and g is not None:
            out.append((k, t, cb.algo, g, gb.algo))
    return out


def node0_words(d, name):
    """The words of each line of node0's NAME; nothing when it is missing."""
    f = os.path.join(d, "node0", name)
    if not os.path.exists(f):
        return
    with open(f) as fh:
        for line in fh:
            yield line.split()


def read_wire(d):
    """bench-node.sh's wire step: [(series, {counter: per collective})]."""
    out = []
    for w in node0_words(d, "wire.txt"):
        if len(w) != 7 or ":" not in w[0]:
            continue
        impl, algo = w[0].split(":", 1)
        if impl == "gloo":
            algo = GLOO.get(algo, ("", algo))[1]
        ops = int(w[1])
        keys = ("sent_pkts", "rcvd_pkts", "rdma_sends", "rdma_recvs", "ctxt")
        out.append(("%s %s" % (impl, algo),
                    {k: int(v) / ops for k, v in zip(keys, w[2:])}))
    return out


def print_wire(wire):
    if not wire:
        return
    print("wire: one 4 KiB allreduce as node0 saw it (rxe's hw_counters and /proc/stat's ctxt\n"
          "over 301 back to back, their setup included): RoCE packets out and in, SEND work\n"
          "requests completed, messages received that complete, context switches")
    print("  %-26s %8s %8s %8s %8s %8s" % ("series", "pkts out", "pkts in", "SENDs",
                                            "msgs in", "ctxsw"))
    for name, c in wire:
        print("  %-26s %8.1f %8.1f %8.1f %8.1f %8.0f" % (
            name, c["sent_pkts"], c["rcvd_pkts"], c["rdma_sends"], c["rdma_recvs"], c["ctxt"]))
    print()


def read_collx(d, problems):
    """{(coll, algo): Series} from every collx-bench JSON, and the async run."""
    series, async_run = {}, None
    for f in sorted(glob.glob(os.path.join(d, "node0", "collx", "*.json"))):
        base = os.path.basename(f)[:-5]
        m = re.match(r"([a-z_]+)-([a-z0-9]+)-([a-z0-9]+)$", base)
        if not m:
            continue
        coll, algo, tag = m.groups()
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            problems.append("collx-bench %s: unreadable JSON: %s" % (base, e))
            continue
        if tag == "async":
            async_run = doc
            continue
        s = series.setdefault((coll, algo), Series("collx", algo, coll))
        s.error = collx_points(doc, s, problems) or s.error
    # a run whose JSON is missing (the bench died before writing it)
    for f in glob.glob(os.path.join(d, "node0", "collx", "*.txt")):
        if not os.path.exists(f[:-4] + ".json"):
            problems.append("collx-bench %s: no JSON (see %s)" %
                            (os.path.basename(f)[:-4], f))
    return series, async_run


def gloo_lines(d, n, name, gloo_wrong):
    """gloo_bench's lines in nodeR/NAME of every rank: ({gloo name: {bytes:
    [ranks, sum time, sum caller, sum node]}}, {gloo name: its refusal}).
    Wrong elements in Gloo's results go to gloo_wrong: the baseline's
    defect, reported but not a failure of the bench (bench.md)."""
    acc, unsupported = {}, {}
    for r in range(n):
        f = os.path.join(d, "node%d" % r, name)
        if not os.path.exists(f):
            continue
        with open(f, errors="replace") as fh:
            for line in fh:
                w = line.split()
                if len(w) < 3 or w[0] != "gloo" or w[1] not in GLOO:
                    continue
                if w[2] == "unsupported":
                    unsupported[w[1]] = " ".join(w[3:])
                    continue
                if len(w) != 9:
                    continue
                b, t, c, nd, bad = int(w[2]), float(w[5]), float(w[6]), float(w[7]), int(w[8])
                if bad:
                    gloo_wrong.append("gloo %s %d B rank %d: %d wrong" % (w[1], b, r, bad))
                a = acc.setdefault(w[1], {}).setdefault(b, [0, 0.0, 0.0, 0.0])
                a[0] += 1
                a[1] += t
                a[2] += c
                a[3] += nd
    return acc, unsupported


def read_gloo(d, n, gloo_wrong):
    """{(coll, algo): Series}: the mean over the ranks that reported."""
    acc, unsupported = gloo_lines(d, n, "gloo.txt", gloo_wrong)
    series = {}
    for g, (coll, algo) in GLOO.items():
        if g in unsupported:
            s = Series("gloo", algo, coll)
            s.error = "unsupported: " + unsupported[g]
            series[(coll, algo)] = s
            continue
        if g not in acc:
            continue
        s = series.setdefault((coll, algo), Series("gloo", algo, coll))
        for b, (k, t, c, nd) in acc[g].items():
            t, c, nd = t / k, c / k, nd / k
            bus = b / (t * 1e-6) / 1e9 * busbw_factor(coll, n) if t > 0 else 0.0
            s.points[b] = (t, bus, c, nd)
    return series


def steps_time(d, n):
    """{step kind: seconds} on node0's clock (host time, seconds)."""
    out = {}
    for w in node0_words(d, "steps.log"):
        if len(w) < 3:
            continue
        kind = w[0].split(":")[0]
        if w[0].startswith("collx:allreduce:auto:async"):
            kind = "cpu"
        try:
            out[kind] = out.get(kind, 0.0) + float(w[2]) - float(w[1])
        except ValueError:
            pass
    return out


def best(series_list, size, key):
    """(value, series) of the best point at size: key 'time' (min) or 'busbw' (max)."""
    pts = [(s.points[size], s) for s in series_list if size in s.points]
    if not pts:
        return None, None
    if key == "time":
        p, s = min(pts, key=lambda x: x[0][0])
        return p[0], s
    p, s = max(pts, key=lambda x: x[0][1])
    return p[1], s


def fmt_time(t):
    return "%.0f" % t if t >= 100 else "%.1f" % t


def print_table(n, kernel, accel, note, link, collx, gloo, table_sizes):
    print("collx bench: %d nodes, kernel %s%s (one boot; compare ratios, not absolute numbers)" %
          (n, kernel, ", " + accel if accel else ""))
    if note:
        print(note)
    if link["one"] or link["both"]:
        print("\nlink: ib_write_bw node0 -> node1 (perftest MB/s = 2^20 B/s; -b: both ways, the sum)")
        print("%8s %12s %12s %14s" % ("size", "one way", "both ways", "per direction"))
        for b in sorted(set(link["one"]) | set(link["both"])):
            one, both = link["one"].get(b), link["both"].get(b)
            print("%8s %12s %12s %14s" % (
                human(b), "%.2f" % one if one is not None else "-",
                "%.2f" % both if both is not None else "-",
                "%.2f" % (both / 2) if both is not None else "-"))
    print("\ntime: mean per collective (us); busbw: GB/s (1e9), nccl-tests' factors; caller: the"
          "\nprocess's CPU (getrusage), node: the node's busy CPU (/proc/stat), both % of wall time;"
          "\nx Gloo: collx busbw / the best Gloo algorithm's at that size.  collx: registered,"
          "\neach collective waited for (-R 1 -z 1), out of place; Gloo: run() per collective.\n")
    hdr = "%-14s %6s  %-22s %10s %11s %7s %6s %7s" % (
        "collective", "size", "series", "time(us)", "busbw(GB/s)", "caller%", "node%", "x Gloo")
    print(hdr)
    print("-" * len(hdr))
    for coll in COLLS:
        cs = [collx[(coll, a)] for a in COLLX_ALGOS[coll] if (coll, a) in collx]
        gs = [s for (c, _), s in sorted(gloo.items()) if c == coll]
        if not cs and not gs:
            continue
        sizes = sorted(b for b in {b for s in cs + gs for b in s.points}
                       if not table_sizes or b in table_sizes or
                       (coll in ("allgather", "reduce_scatter", "alltoall") and
                        any(abs(b - t) < t / 64 for t in table_sizes)))
        first = True
        for b in sizes:
            gbest, _ = best([g for g in gs if not g.error], b, "busbw")
            rows = cs + gs
            for s in rows:
                if b not in s.points:
                    continue
                t, bus, c, nd = s.points[b]
                ratio = ""
                if s.impl == "collx":
                    ratio = "%.2f" % (bus / gbest) if gbest else "-"
                print("%-14s %6s  %-22s %10s %11.5f %7.2f %6.1f %7s" % (
                    coll if first else "", human(b), s.impl + " " + s.algo,
                    fmt_time(t), bus, c, nd, ratio))
                first = False
        for s in cs + gs:
            if s.error:
                print("%-14s %6s  %-22s %s" % (coll if first else "", "", s.impl + " " + s.algo,
                                               s.error[:90]))
                first = False
        print()


def verdict(ok, text):
    return "%s  %s" % ("PASS" if ok else "MISS", text)


def small_target(rounds):
    """Target (1) from the small step's rounds: the median round's ratio."""
    ratios = sorted((t / g, k, t, ca, g, ga) for k, t, ca, g, ga in rounds)
    r, _, t, ca, g, ga = ratios[len(ratios) // 2]
    line = ("(1) 4 KiB allreduce, 4 nodes, median of %d alternating rounds: collx %s %s us vs "
            "Gloo %s %s us = %.2f x, rounds %s (target <= %.2f x: %s)" % (
                len(ratios), ca, fmt_time(t), ga, fmt_time(g), r,
                " ".join("%.2f" % x[0] for x in sorted(ratios, key=lambda x: x[1])),
                TARGET_SMALL,
                "met with %.0f %% to spare" % (100 * (1 - r / TARGET_SMALL)) if r <= TARGET_SMALL
                else "%.0f %% too slow; needs %s us" % (100 * (r / TARGET_SMALL - 1),
                                                       fmt_time(TARGET_SMALL * g))))
    print("  " + verdict(r <= TARGET_SMALL, line))
    return {"target": 1, "pass": r <= TARGET_SMALL, "ratio": r, "text": line,
            "rounds": [[k, round(t, 1), ca, round(g, 1), ga] for k, t, ca, g, ga in rounds]}


def targets(n, collx, gloo, async_run, rounds):
    print("targets of issue 9, measured in this boot (timings never fail the run):")
    out = []
    # (1) 4 KiB allreduce on 4 nodes <= 0.5 x the better Gloo algorithm's time:
    # from the alternating rounds when they ran, else from the table
    cs = [s for (c, _), s in collx.items() if c == "allreduce"]
    gs = [s for (c, _), s in gloo.items() if c == "allreduce" and not s.error]
    t, cbest = best(cs, 4096, "time")
    g, gb = best(gs, 4096, "time")
    if n != 4:
        line = "(1) 4 KiB allreduce on 4 nodes: n/a on %d nodes" % n
        print("  " + line)
    elif rounds:
        out.append(small_target(rounds))
    elif t is None or g is None:
        line = "(1) 4 KiB allreduce: not measured (collx %s, Gloo %s)" % (
            "ok" if t else "missing", "ok" if g else "missing")
        print("  MISS  " + line)
        out.append({"target": 1, "pass": False, "text": line})
    else:
        r = t / g
        line = ("(1) 4 KiB allreduce, 4 nodes: collx %s %s us vs Gloo %s %s us = %.2f x "
                "(target <= %.2f x: %s)" % (
                    cbest.algo, fmt_time(t), gb.algo, fmt_time(g), r, TARGET_SMALL,
                    "met with %.0f %% to spare" % (100 * (1 - r / TARGET_SMALL)) if r <= TARGET_SMALL
                    else "%.0f %% too slow; needs %s us" % (100 * (r / TARGET_SMALL - 1),
                                                           fmt_time(TARGET_SMALL * g))))
        print("  " + verdict(r <= TARGET_SMALL, line))
        out.append({"target": 1, "pass": r <= TARGET_SMALL, "ratio": r, "text": line})
    # (2) >= 1 MiB: every collective >= 1.3 x Gloo's busbw, where Gloo has it
    for coll in COLLS:
        gs = [s for (c, _), s in gloo.items() if c == coll and not s.error]
        cs = [s for (c, _), s in collx.items() if c == coll]
        if not gs:
            why = [s.error for (c, _), s in gloo.items() if c == coll and s.error]
            if not gloo:
                print("        (2) %-14s not compared: Gloo did not run" % coll)
            else:
                print("        (2) %-14s n/a: Gloo has none on ibverbs%s" % (
                    coll, (" (" + why[0][:60] + ")") if why else ""))
            continue
        for b in sorted({b for s in gs for b in s.points if b >= BIG}):
            g, gb = best(gs, b, "busbw")
            c, cb = best(cs, b, "busbw")
            if c is None:
                line = "(2) %-14s %5s: collx not measured" % (coll, human(b))
                print("  MISS  " + line)
                out.append({"target": 2, "collective": coll, "bytes": b, "pass": False,
                            "text": line})
                continue
            r = c / g if g else float("inf")
            line = ("(2) %-14s %5s: collx %s %.5f GB/s vs Gloo %s %.5f = %.2f x (target >= %.1f x: %s)"
                    % (coll, human(b), cb.algo, c, gb.algo, g, r, TARGET_BUSBW,
                       "+%.0f %%" % (100 * (r / TARGET_BUSBW - 1)) if r >= TARGET_BUSBW
                       else "short by %.0f %%" % (100 * (1 - r / TARGET_BUSBW))))
            print("  " + verdict(r >= TARGET_BUSBW, line))
            out.append({"target": 2, "collective": coll, "bytes": b, "pass": r >= TARGET_BUSBW,
                        "ratio": r, "text": line})
    # (3) caller CPU of a 1 MiB registered async allreduce <= 1 % of wall time
    half = None
    if async_run:
        for r in async_run.get("results") or []:
            if int(r.get("size", 0)) == BIG and r.get("out_of_place"):
                half = r
    if not half:
        line = "(3) 1 MiB registered async allreduce: not measured"
        print("  MISS  " + line)
        out.append({"target": 3, "pass": False, "text": line})
    else:
        oop, ip = half["out_of_place"], half.get("in_place") or {}
        c = float(oop.get("caller_cpu_pct", 0))
        line = ("(3) 1 MiB registered async allreduce (auto): caller CPU %.2f %% of wall time "
                "out of place%s, node busy %.0f %% (target <= %.0f %%: %s)" % (
                    c, ", %.2f %% in place" % ip["caller_cpu_pct"] if "caller_cpu_pct" in ip else "",
                    float(oop.get("node_busy_pct", 0)), TARGET_CPU,
                    "%.2f points to spare" % (TARGET_CPU - c) if c <= TARGET_CPU
                    else "%.2f points over, %.1f x the target" % (c - TARGET_CPU, c / TARGET_CPU)))
        print("  " + verdict(c <= TARGET_CPU, line))
        out.append({"target": 3, "pass": c <= TARGET_CPU, "caller_cpu_pct": c, "text": line})
    print()
    return out


def crossovers(collx, pairs):
    """For each collective: per size the fastest algorithm, and the sizes where it changes."""
    print("algorithm thresholds (time per collective in us; the fastest marked *):")
    res = {}
    for coll, algos in pairs:
        ss = [collx[(coll, a)] for a in algos if (coll, a) in collx]
        if len(ss) < 2:
            continue
        sizes = sorted({b for s in ss for b in s.points if b <= BIG})
        print("  %-14s %8s  %s" % (coll, "size", "  ".join("%12s" % s.algo for s in ss)))
        win = []
        for b in sizes:
            t, sb = best(ss, b, "time")
            cells = []
            for s in ss:
                if b in s.points:
                    cells.append("%11s%s" % (fmt_time(s.points[b][0]), "*" if s is sb else " "))
                else:
                    cells.append("%12s" % "-")
            print("  %-14s %8s  %s" % ("", human(b), "  ".join(cells)))
            win.append((b, sb.algo))
        changes = ["%s from %s" % (a, human(b)) for i, (b, a) in enumerate(win)
                   if i == 0 or win[i - 1][1] != a]
        print("  %-14s fastest: %s" % ("", "; ".join(changes)))
        res[coll] = [[b, a] for b, a in win]
    print()
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--accel", default="", help="tcg or kvm, for the heading")
    ap.add_argument("--note", default="", help="a line for the heading (host load, run time)")
    ap.add_argument("--table-sizes", default="4096,16384,65536,262144,1048576,4194304",
                    help="sizes the table shows (the JSON has every size)")
    args = ap.parse_args()
    d = args.dir
    nodes = sorted(glob.glob(os.path.join(d, "node[0-9]*")))
    if not nodes:
        print("bench_report: no node folders in %s" % d, file=sys.stderr)
        return 2
    n = len(nodes)
    kernel = "?"
    try:
        with open(os.path.join(d, "node0", "kernel")) as fh:
            kernel = fh.read().strip()
    except OSError:
        pass
    problems, gloo_wrong = [], []
    link = read_link(d)
    collx, async_run = read_collx(d, problems)
    gloo = read_gloo(d, n, gloo_wrong)
    table_sizes = {int(x) for x in args.table_sizes.split(",") if x}

    print_table(n, kernel, args.accel, args.note, link, collx, gloo, table_sizes)
    tg = targets(n, collx, gloo, async_run, read_small(d, n, problems, gloo_wrong))
    wire = read_wire(d)
    print_wire(wire)
    cross = {}
    if any(b < min(table_sizes) for s in collx.values() for b in s.points):
        cross = crossovers(collx, [("allreduce", ["ring", "tree", "rd"]),
                                   ("broadcast", ["ring", "tree"]),
                                   ("reduce", ["ring", "tree"]),
                                   ("allgather", ["ring", "rd"]),
                                   ("reduce_scatter", ["ring", "rd"])])
    st = steps_time(d, n)
    if st:
        print("where the time went (node0): " + ", ".join(
            "%s %.0f s" % (k, v) for k, v in sorted(st.items())))
    for p in problems:
        print("bench: problem: " + p)
    for p in gloo_wrong:
        print("bench: Gloo's own result was wrong (its bug, not a failure here; "
              "Documentation/bench.md): " + p)

    if args.json:
        one = link["one"].get(max(link["one"])) if link["one"] else None
        both = link["both"].get(max(link["both"])) if link["both"] else None
        doc = {
            "nodes": n,
            "kernel": kernel,
            "accel": args.accel or None,
            "note": args.note or None,
            "series": [],
            "link": {
                "one_way_MBps": one,
                "both_ways_MBps": both,
                "unit": "perftest MB/sec (2^20 B/s), at the largest size",
                "points": [[b, link["one"].get(b), link["both"].get(b)]
                           for b in sorted(set(link["one"]) | set(link["both"]))],
            },
            "targets": tg,
            "crossovers": cross,
            "wire": {name: {k: round(v, 2) for k, v in c.items()} for name, c in wire},
        }
        if async_run:
            s = Series("collx", "auto", "allreduce async")
            for r in async_run.get("results") or []:
                h = r.get("out_of_place")
                if h:
                    s.points[int(r["size"])] = (h["time"], h["bus_bw"],
                                                h.get("caller_cpu_pct", 0), h.get("node_busy_pct", 0))
            collx[("allreduce async", "auto")] = s
        for s in list(collx.values()) + list(gloo.values()):
            entry = {"name": s.name,
                     "points": [[b] + [round(v, 6) for v in s.points[b]] for b in sorted(s.points)]}
            if s.error:
                entry["error"] = s.error
            doc["series"].append(entry)
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json + ".tmp", "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        os.replace(args.json + ".tmp", args.json)
        print("results: %s" % args.json)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
