#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the plot scripts on inputs of the documented shapes: two
nodes' netmon event logs (clocks 5 s apart), a series document and
nccl-tests JSON.  Checks what each script says it drew and that the files
are PNG and SVG.  Prints TAP."""
import json
import shutil
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.realpath(__file__))
n = bad = 0


def expect(what, ok):
    global n, bad
    n += 1
    bad += not ok
    print("%s %d - plots: %s" % ("ok" if ok else "not ok", n, what))


def run(*args):
    p = subprocess.run([sys.executable] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


d = tempfile.mkdtemp()
for rank, skew in ((0, 0), (1, 5_000_000_000)):
    with open(os.path.join(d, "n%d.events" % rank), "w") as f:
        f.write(json.dumps({"type": "clock", "host": "node%d" % rank, "mono_ns": 1_000_000_000 + skew,
                            "realtime_ns": 10**18}) + "\n")
        for op in range(3):
            t = 2_000_000_000 + skew + op * 10_000_000
            f.write(json.dumps({"ts": t, "type": "op_submit", "comm": 1, "op": op, "coll": 0,
                                "peer": -1, "phase": 0, "status": 0, "a": 64, "b": rank, "c": 2}) + "\n")
            f.write(json.dumps({"ts": t, "type": "op_start", "comm": 1, "op": op, "coll": 0,
                                "peer": -1, "phase": 0, "status": 0, "a": 256, "b": 0, "c": 0}) + "\n")
            f.write(json.dumps({"ts": t + 5_000_000, "type": "op_done", "comm": 1, "op": op, "coll": 0,
                                "peer": -1, "phase": 0, "status": 0, "a": 256, "b": 5_000_000, "c": 0}) + "\n")
        f.write(json.dumps({"ts": 2_003_000_000 + skew, "type": "pfc", "dev": "eth0", "dir": "rx",
                            "a": 3, "b": 65535, "c": 335544}) + "\n")
        f.write(json.dumps({"ts": 2_013_000_000 + skew, "type": "ce", "dev": "eth0", "dir": "rx",
                            "addr": "10.0.0.2", "a": 17, "b": 10, "c": 3}) + "\n")
evs = [os.path.join(d, "n%d.events" % r) for r in (0, 1)]
png, svg = os.path.join(d, "t.png"), os.path.join(d, "t.svg")
rc, out = run(os.path.join(HERE, "timeline.py"), "-o", png, *evs)
expect("timeline: 2 nodes, 6 ops, 4 marks (%s)" % out.strip(),
       rc == 0 and "2 nodes, 6 ops, 4 marks" in out and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n")
rc, out = run(os.path.join(HERE, "timeline.py"), "--align", "op", "-o", svg, *evs)
expect("timeline --align op: an SVG", rc == 0 and ET.parse(svg).getroot().tag.endswith("svg"))
with open(os.path.join(d, "n2.events"), "w") as f:
    f.write(json.dumps({"ts": 1, "type": "pfc", "dev": "eth0", "dir": "rx", "a": 3, "b": 1, "c": 1}) + "\n")
rc, out = run(os.path.join(HERE, "timeline.py"), "-o", png, os.path.join(d, "n2.events"))
expect("timeline refuses a log without its clock line", rc != 0 and "clock line" in out)

series = {"series": [{"name": "collx ring", "points": [[8, 0.001], [1024, 0.01]]},
                     {"name": "Gloo ring", "points": [[8, 0.0005], [1024, 0.008]]}],
          "lines": [{"name": "ib_write_bw", "GBps": 0.02}]}
nccl = {"version": 3, "config": {"collective": "allreduce", "algorithm": "tree", "nranks": 2},
        "results": [{"size": 8, "out_of_place": {"bus_bw": 0.002}, "in_place": {"bus_bw": 0.002}},
                    {"size": 1024, "out_of_place": {"bus_bw": 0.02}, "in_place": None}]}
for name, doc in (("s.json", series), ("n.json", nccl)):
    json.dump(doc, open(os.path.join(d, name), "w"))
rc, out = run(os.path.join(HERE, "busbw.py"), "--in-place", "-o", svg, os.path.join(d, "s.json"),
              os.path.join(d, "n.json"))
expect("busbw: series document and nccl-tests JSON, 4 series, 1 line (%s)" % out.strip(),
       rc == 0 and "4 series, 1 reference lines" in out and ET.parse(svg).getroot().tag.endswith("svg"))
bench = {"nodes": 2, "kernel": "6.12.117+deb12-amd64", "accel": None, "note": None,
         "series": [{"name": "collx ring allreduce", "points": [[4096, 900.0, 0.004, 1.0, 50.0],
                                                                [1048576, 60000.0, 0.017, 1.0, 60.0]]},
                    {"name": "collx rd allreduce", "points": [[4096, 800.0, 0.005, 1.0, 50.0]]},
                    {"name": "collx ring broadcast", "points": [[4096, 500.0, 0.008, 1.0, 40.0]]},
                    {"name": "collx tree allreduce", "points": [], "error": "failed"},
                    {"name": "gloo ring allreduce", "points": [[4096, 1000.0, 0.003, 5.0, 60.0]]}],
         "link": {"one_way_MBps": 33.51, "both_ways_MBps": 38.41, "points": []},
         "targets": [], "crossovers": []}
json.dump(bench, open(os.path.join(d, "b.json"), "w"))
rc, out = run(os.path.join(HERE, "busbw.py"), "-o", svg, os.path.join(d, "b.json"))
expect("busbw: make bench's allreduce series, 3 series (the failed one left out), 2 link lines (%s)"
       % out.strip(), rc == 0 and "3 series, 2 reference lines" in out)
rc, out = run(os.path.join(HERE, "busbw.py"), "--coll", "broadcast", "-o", png, os.path.join(d, "b.json"))
expect("busbw --coll broadcast: 1 series (%s)" % out.strip(), rc == 0 and "1 series, 2 reference" in out)
json.dump({"x": 1}, open(os.path.join(d, "bad.json"), "w"))
rc, out = run(os.path.join(HERE, "busbw.py"), "-o", svg, os.path.join(d, "bad.json"))
expect("busbw refuses another shape", rc != 0 and "neither" in out)
shutil.rmtree(d)
print("1..%d" % n)
sys.exit(1 if bad else 0)
