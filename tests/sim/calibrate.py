#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fit the cost model's alpha and beta to `make bench` output.

    tests/sim/calibrate.py [-o new.conf] [--name lab-4node] FILE...

FILE is collx-bench's JSON (`collx-bench -J`, nccl-tests' format: config
collective/nranks/algorithm, results[].size and out_of_place.time in µs)
or `make bench`'s summary (.build/bench/bench-<N>nodes.json: series
"collx <algorithm> <collective>" with points [bytes, time_us, ...]).
Only collx's measured algorithms are used (not "auto", not Gloo).

The model (tests/sim/model.c) is linear in its constants: for each point
`collx-sim coef` gives a, b, g with time = a alpha + b beta + g gamma.
gamma (the CPU's reduction, not separable from link-bound timings) is
taken from the base file; alpha and beta are the non-negative least
squares fit of the rest, relative errors weighted alike (each point
divided by its time).  Prints the fit and its residuals, writes a
constants file with the section [--name] that collx-sim reads.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COLLS = {"allreduce", "broadcast", "reduce", "allgather", "reduce_scatter",
         "alltoall"}
ALGOS = {"ring", "tree", "rd", "pairwise"}


def norm_coll(c):
    c = c.lower().replace("-", "_").replace("reducescatter", "reduce_scatter")
    return c


def points_from(path):
    """[(collective, algorithm, nranks, bytes, seconds)] of one file."""
    with open(path) as f:
        doc = json.load(f)
    out = []
    if "config" in doc and "results" in doc:       # collx-bench -J
        cfg = doc["config"]
        coll = norm_coll(cfg.get("collective", ""))
        algo = (cfg.get("algorithm") or "").lower()
        n = int(cfg.get("nranks", 0))
        for r in doc["results"] or []:
            half = r.get("out_of_place") or r.get("in_place")
            if not half or half.get("time") is None:
                continue
            out.append((coll, algo, n, float(r["size"]), half["time"] * 1e-6))
    elif "series" in doc:                          # make bench summary
        n = int(doc.get("nodes", 0))
        for s in doc["series"]:
            parts = s.get("name", "").split()
            if len(parts) != 3 or parts[0] != "collx":
                continue
            _, algo, coll = parts
            for p in s.get("points", []):
                out.append((norm_coll(coll), algo, n, float(p[0]), p[1] * 1e-6))
    else:
        sys.exit("%s: neither collx-bench -J nor make bench JSON" % path)
    return [p for p in out if p[0] in COLLS and p[1] in ALGOS and p[2] >= 2
            and p[4] > 0]


def read_conf(path, name):
    """The profile @name of a constants file (None: the first)."""
    prof, cur = {}, None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                cur = line.strip("[]")
                if name is None:
                    name = cur
                continue
            k, v = [x.strip() for x in line.split("=", 1)]
            if cur == name:
                prof[k] = float(v)
    return prof


def nnls2(rows, ys):
    """min sum ((a x + b y - t) / t)^2 over x, y >= 0 (2 unknowns)."""
    def solve(cols):
        # normal equations on the chosen columns
        k = len(cols)
        m = [[0.0] * k for _ in range(k)]
        v = [0.0] * k
        for r, t in zip(rows, ys):
            w = 1.0 / t
            for i, ci in enumerate(cols):
                v[i] += r[ci] * w * t * w
                for j, cj in enumerate(cols):
                    m[i][j] += r[ci] * w * r[cj] * w
        if k == 1:
            return [v[0] / m[0][0]] if m[0][0] > 0 else [0.0]
        det = m[0][0] * m[1][1] - m[0][1] * m[1][0]
        if abs(det) < 1e-300:
            return None
        return [(v[0] * m[1][1] - v[1] * m[0][1]) / det,
                (m[0][0] * v[1] - m[1][0] * v[0]) / det]

    def err(x):
        return sum(((r[0] * x[0] + r[1] * x[1] - t) / t) ** 2
                   for r, t in zip(rows, ys))

    best = None
    full = solve([0, 1])
    cands = []
    if full and full[0] >= 0 and full[1] >= 0:
        cands.append(full)
    a = solve([0])
    cands.append([max(a[0], 0.0), 0.0])
    b = solve([1])
    cands.append([0.0, max(b[0], 0.0)])
    for c in cands:
        if best is None or err(c) < err(best):
            best = c
    return best, err(best)


def selftest(args):
    """Synthetic collx-bench -J files from known constants: fit them back."""
    import tempfile
    known_a, known_b = 2.5e-3, 4.0e-8
    base = read_conf(args.base, args.base_profile)
    gamma = base.get("gamma", 0.0)
    sizes = [8 << (2 * i) for i in range(11)]          # 8 B .. 8 MiB
    series = [("allreduce", "ring"), ("allreduce", "rd"), ("allreduce", "tree"),
              ("broadcast", "tree"), ("allgather", "ring")]
    query = "".join("%s %s 4 %d\n" % (c, a, b) for c, a in series for b in sizes)
    cmd = [args.sim, "coef", "-c", args.base]
    coef = subprocess.run(cmd, input=query, capture_output=True, text=True,
                          check=True).stdout.split("\n")
    files, k = [], 0
    with tempfile.TemporaryDirectory() as d:
        for c, a in series:
            res = []
            for b in sizes:
                ca, cb, cg = (float(x) for x in coef[k].split())
                k += 1
                t = ca * known_a + cb * known_b + cg * gamma
                res.append({"size": b, "out_of_place": {"time": t * 1e6}})
            path = os.path.join(d, "%s-%s.json" % (c, a))
            with open(path, "w") as f:
                json.dump({"config": {"collective": c, "nranks": 4,
                                      "algorithm": a}, "results": res}, f)
            files.append(path)
        pts = []
        for f in files:
            pts += [(f,) + p for p in points_from(f)]
        alpha, beta, e, _ = fit(args, pts)
    ok = abs(alpha / known_a - 1) < 1e-3 and abs(beta / known_b - 1) < 1e-3
    print("%s - calibrate.py fits alpha %.4g (made with %.4g) and beta %.4g "
          "(made with %.4g) back from %d synthetic collx-bench -J points"
          % ("ok" if ok else "not ok", alpha, known_a, beta, known_b, len(pts)))
    return 0 if ok else 1


def fit(args, pts):
    base = read_conf(args.base, args.base_profile)
    gamma = base.get("gamma", 0.0)
    query = "".join("%s %s %d %.0f\n" % (p[1], p[2], p[3], p[4]) for p in pts)
    cmd = [args.sim, "coef", "-c", args.base]
    if args.base_profile:
        cmd += ["-p", args.base_profile]
    coef = subprocess.run(cmd, input=query, capture_output=True, text=True,
                          check=True).stdout.split("\n")
    rows, ys, used = [], [], []
    for p, line in zip(pts, coef):
        a, b, g = (float(x) for x in line.split())
        t = p[5] - g * gamma
        if a != a or t <= 0:
            continue
        rows.append((a, b))
        ys.append(t)
        used.append(p)
    (alpha, beta), e = nnls2(rows, ys)
    return alpha, beta, e, (rows, ys, used, gamma, base)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--base", default=os.path.join(HERE, "fabric-lab.conf"),
                    help="constants file giving gamma, slot, staging")
    ap.add_argument("--base-profile", default=None)
    ap.add_argument("--name", default="fitted")
    ap.add_argument("--sim", default=os.path.join(ROOT, ".build/sim/collx-sim"))
    ap.add_argument("-o", "--output", default=None)
    args = ap.parse_args()
    if args.selftest:
        sys.exit(selftest(args))

    pts = []
    for f in args.files:
        pts += [(f,) + p for p in points_from(f)]
    if len(pts) < 2:
        sys.exit("calibrate: fewer than 2 usable collx points")
    alpha, beta, e, (rows, ys, used, gamma, base) = fit(args, pts)
    print("calibrate: %d points from %d files; alpha %.4g s, beta %.4g s/B "
          "(%.1f MB/s), gamma %.4g s/B kept; rms relative error %.1f %%"
          % (len(used), len(args.files), alpha, beta,
             1e-6 / beta if beta else float("inf"), gamma,
             100 * (e / len(used)) ** 0.5))
    for p, r, t in zip(used, rows, ys):
        m = r[0] * alpha + r[1] * beta
        print("  %-15s %-8s n=%-3d %10.0f B  measured %10.3f ms  model %10.3f ms"
              % (p[1], p[2], p[3], p[4], p[5] * 1e3, (m + (p[5] - t)) * 1e3))
    text = ["# written by tests/sim/calibrate.py on %s" %
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "# from: " + " ".join(args.files),
            "# %d points, rms relative error %.1f %%; gamma, slot, staging and"
            " qp_bytes from %s" % (len(used), 100 * (e / len(used)) ** 0.5,
                                    args.base),
            "[%s]" % args.name,
            "alpha = %.6g" % alpha, "beta = %.6g" % beta,
            "gamma = %.6g" % gamma]
    for k in ("slot", "staging", "qp_bytes"):
        if k in base:
            text.append("%s = %.0f" % (k, base[k]))
    if args.output:
        with open(args.output, "w") as f:
            f.write("\n".join(text) + "\n")
        print("calibrate: wrote %s" % args.output)
    else:
        print("\n".join(text))


if __name__ == "__main__":
    main()
