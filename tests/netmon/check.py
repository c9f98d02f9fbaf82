#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check collx-netmon's outputs of one run: PREFIX.json (last line = final
report), PREFIX.prom (the --textfile exposition), PREFIX.txt (the table).
Every argument is a Python expression that must be true, evaluated with:
  pause(dev, dir, prio, kind="pfc")  -> the JSON row (dict, {} if absent)
  roce(dev, dir, qpn, peer=None)     -> the JSON row
  drops(dev, roce=True, cls=None)    -> summed packets of matching rows
  prom(name, **labels)               -> a sample's value (None if absent)
  j                                  -> the final JSON report
Also checks that the table and the exposition carry the JSON's numbers
(the exposition sums per device and direction what JSON shows per QP), and
that `promtool check metrics` accepts the exposition when promtool exists.
"""
import json
import re
import shutil
import subprocess
import sys

prefix = sys.argv[1]
lines = [line for line in open(prefix + ".json") if line.strip()]
for line in lines:
    json.loads(line)  # every line parses
j = json.loads(lines[-1])
text = open(prefix + ".prom").read()
table = open(prefix + ".txt").read()
bad = 0


def fail(msg):
    global bad
    bad += 1
    print("FAIL:", msg)


def pause(dev, dir, prio, kind="pfc"):
    for r in j["pause"]:
        if (r["dev"], r["dir"], r["prio"], r["kind"]) == (dev, dir, prio, kind):
            return r
    return {}


def roce(dev, dir, qpn, peer=None):
    for r in j["roce"]:
        if (r["dev"], r["dir"], r["qpn"]) == (dev, dir, qpn) and (peer is None or r["peer"] == peer):
            return r
    return {}


def drops(dev, roce=True, cls=None):
    return sum(r["packets"] for r in j["drops"]
               if r["dev"] == dev and r["roce"] == roce and (cls is None or r["class"] == cls))


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


samples = {}
for line in text.splitlines():
    if not line or line.startswith("#"):
        continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$', line)
    if not m:
        fail("exposition line does not parse: " + line)
        continue
    labels = tuple(sorted((k, unescape(v)) for k, v in
                          re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))
    samples[(m.group(1), labels)] = float(m.group(3))


def prom(name, **labels):
    return samples.get((name, tuple(sorted((k, str(v)) for k, v in labels.items()))))


if shutil.which("promtool"):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                       capture_output=True)
    if p.returncode:
        fail("promtool check metrics: " + (p.stdout + p.stderr).strip())
    else:
        print("ok: promtool check metrics")

# The final table: the last report in the file.
final = table[table.rfind("collx-netmon on "):]
for r in j["pause"]:
    lab = dict(device=r["dev"], direction=r["dir"], kind=r["kind"], priority=r["prio"])
    for key, name in (("frames", "collx_netmon_pause_frames_total"),
                      ("resumes", "collx_netmon_pause_resume_frames_total"),
                      ("quanta", "collx_netmon_pause_quanta_total")):
        if prom(name, **lab) != r[key]:
            fail("exposition %s%s = %s, json %s" % (name, lab, prom(name, **lab), r[key]))
    row = r"^%s\s+%s\s+%s\s+%d\s+%d\s+\S+\s+%d\s+%d\s" % (
        r["dev"], r["dir"], r["kind"], r["prio"], r["frames"], r["resumes"], r["quanta"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)
sums = {}
for r in j["roce"]:
    s = sums.setdefault((r["dev"], r["dir"]), {})
    for key in ("packets", "bytes", "ce", "ect", "cnp", "nak", "rnr_nak"):
        s[key] = s.get(key, 0) + r[key]
    row = r"^%s\s+%s\s+%s\s+0x%06x\s+%d\s+%d\s+\S+\s+\S+\s+%d\s+%d\s+\S+\s+%d\s+%d\s" % (
        r["dev"], r["dir"], re.escape(r["peer"]), r["qpn"], r["packets"], r["bytes"],
        r["ect"], r["ce"], r["cnp"], r["nak"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)
names = {"packets": "packets", "bytes": "bytes", "ce": "ecn_ce_packets",
         "ect": "ecn_ect_packets", "cnp": "cnp_packets", "nak": "nak_packets",
         "rnr_nak": "rnr_nak_packets"}
for (dev, dir), s in sums.items():
    for key, v in s.items():
        name = "collx_netmon_roce_%s_total" % names[key]
        if prom(name, device=dev, direction=dir) != v:
            fail("exposition %s{%s,%s} = %s, json sum %s" %
                 (name, dev, dir, prom(name, device=dev, direction=dir), v))
dsum = {}
for r in j["drops"]:
    k = (r["dev"], r["reason_name"], r["class"], "true" if r["roce"] else "false")
    dsum[k] = dsum.get(k, 0) + r["packets"]
    row = r"^%s\s+%s\s+%s\s+%s\s+%s\s+%d\s" % (r["dev"], re.escape(r["reason_name"]),
                                               re.escape(r["where"]), r["class"],
                                               "yes" if r["roce"] else "no", r["packets"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)
for (dev, reason, cls, rc), v in dsum.items():
    got = prom("collx_netmon_dropped_packets_total", device=dev, reason=reason,
               **{"class": cls}, roce=rc)
    if got != v:
        fail("exposition drops %s = %s, json %s" % ((dev, reason, cls, rc), got, v))
if not any(n == "collx_netmon_build_info" and dict(lab).get("attach") == j["attach"]
           for n, lab in samples):
    fail("no collx_netmon_build_info with attach=%s" % j["attach"])

for expr in sys.argv[2:]:
    try:
        ok = eval(expr)
    except Exception as e:  # noqa: BLE001
        ok = False
        expr += " (%r)" % e
    print("%s: %s" % ("ok" if ok else "FAIL", expr))
    if not ok:
        bad += 1
print("json, exposition and table agree" if not bad else "%d check(s) failed" % bad)
sys.exit(1 if bad else 0)
