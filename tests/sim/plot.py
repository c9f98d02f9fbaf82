#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The cost model's choice against ranks and bytes (tests/sim/Makefile: plot).

Runs `collx-sim grid` (every collective, 8..16,384 ranks, 8 B..1 GiB, the
model's pick and today's fixed pick, collx_algo_choose()) and draws one
panel per collective: the colour is the model's algorithm, a dot marks a
cell where today's thresholds pick another one.
"""
import argparse
import csv
import io
import subprocess

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

ALGOS = ["ring", "tree", "rd", "pairwise"]
COLOURS = ["#4477aa", "#66ccee", "#ee6677", "#ccbb44"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", required=True)
    ap.add_argument("--conf", required=True)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cmd = [args.sim, "grid", "-c", args.conf]
    if args.profile:
        cmd += ["-p", args.profile]
    rows = list(csv.DictReader(io.StringIO(subprocess.check_output(cmd, text=True))))
    colls = list(dict.fromkeys(r["collective"] for r in rows))
    ranks = sorted({int(r["ranks"]) for r in rows})
    sizes = sorted({int(float(r["bytes"])) for r in rows})
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True, sharey=True)
    cmap = ListedColormap(COLOURS)
    for ax, coll in zip(axes.flat, colls):
        grid = [[0] * len(sizes) for _ in ranks]
        for r in rows:
            if r["collective"] != coll:
                continue
            i = ranks.index(int(r["ranks"]))
            j = sizes.index(int(float(r["bytes"])))
            grid[i][j] = ALGOS.index(r["model"])
            if r["model"] != r["today"]:
                ax.plot(j, i, "k.", markersize=3)
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(ALGOS) - 0.5,
                  origin="lower", aspect="auto", interpolation="nearest")
        ax.set_title(coll.replace("_", "-"))
        ax.set_xticks(range(0, len(sizes), 4))
        ax.set_xticklabels([fmt(sizes[k]) for k in range(0, len(sizes), 4)],
                           rotation=45)
        ax.set_yticks(range(len(ranks)))
        ax.set_yticklabels([str(n) for n in ranks], fontsize=7)
    for ax in axes[-1]:
        ax.set_xlabel("bytes (largest buffer per rank)")
    for ax in axes[:, 0]:
        ax.set_ylabel("ranks")
    fig.legend(handles=[Patch(color=c, label=a) for a, c in zip(ALGOS, COLOURS)]
               + [plt.Line2D([], [], color="k", marker=".", linestyle="",
                             label="today's thresholds pick another")],
               loc="lower center", ncol=5)
    prof = args.profile or "first profile"
    fig.suptitle("collx cost model: the algorithm it picks (%s, %s)"
                 % (args.conf.split("/")[-1], prof))
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(args.out, metadata={"Date": None})
    print(args.out)


def fmt(b):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if b < 1024:
            return "%d %s" % (b, unit)
        b //= 1024
    return "%d TiB" % b


if __name__ == "__main__":
    main()
