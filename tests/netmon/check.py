#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check collx-netmon's outputs of one run: PREFIX.json (last line = final
report), PREFIX.prom, PREFIX.txt.  Every argument is a Python expression
that must be true, evaluated with:
  pause(dev, dir, prio, kind="pfc")  -> the JSON row (dict, {} if absent)
  roce(dev, dir, qpn, peer=None)     -> the JSON row
  drops(dev, roce=True)              -> summed packets of matching rows
  j                                  -> the final JSON report
Also checks that the table and the Prometheus text carry the JSON's numbers.
"""
import json
import re
import sys

prefix = sys.argv[1]
lines = [l for l in open(prefix + ".json") if l.strip()]
j = json.loads(lines[-1])
for l in lines:
    json.loads(l)  # every line parses
prom = open(prefix + ".prom").read()
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


# Prometheus: parse every sample.
samples = {}
for l in prom.splitlines():
    if not l or l.startswith("#"):
        continue
    m = re.match(r'^([a-z_]+)(\{.*\})? (\S+)$', l)
    if not m:
        fail("prometheus line does not parse: " + l)
        continue
    labels = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', m.group(2) or "")))
    samples[(m.group(1), labels)] = float(m.group(3))


def prom_val(name, **labels):
    return samples.get((name, tuple(sorted((k, str(v)) for k, v in labels.items()))))


# Final table block: the last report in the file.
final = table[table.rfind("collx-netmon on "):]
for r in j["pause"]:
    lab = dict(dev=r["dev"], dir=r["dir"], kind=r["kind"], prio=r["prio"], source="bpf")
    for key, name in (("frames", "collx_netmon_pause_frames_total"),
                      ("resumes", "collx_netmon_pause_resume_frames_total"),
                      ("quanta", "collx_netmon_pause_quanta_total")):
        if prom_val(name, **lab) != r[key]:
            fail("prometheus %s%s = %s, json %s" % (name, lab, prom_val(name, **lab), r[key]))
    row = r"^%s\s+%s\s+%s\s+%d\s+%d\s+%d\s+%d\s" % (r["dev"], r["dir"], r["kind"], r["prio"],
                                                   r["frames"], r["resumes"], r["quanta"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)
for r in j["roce"]:
    lab = dict(dev=r["dev"], dir=r["dir"], peer=r["peer"], qpn=r["qpn"], source="bpf")
    for key in ("packets", "ce", "cnp", "nak"):
        if prom_val("collx_netmon_roce_%s_total" % key, **lab) != r[key]:
            fail("prometheus roce %s %s != json %s" % (key, lab, r[key]))
    row = r"^%s\s+%s\s+%s\s+0x%06x\s+%d\s+%d\s+%d\s+%d\s+%d\s+%d\s" % (
        r["dev"], r["dir"], re.escape(r["peer"]), r["qpn"], r["packets"], r["bytes"],
        r["ect"], r["ce"], r["cnp"], r["nak"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)
for r in j["drops"]:
    lab = dict(dev=r["dev"], reason=r["reason_name"], where=r["where"], **{"class": r["class"]},
               roce="yes" if r["roce"] else "no", source="bpf")
    if prom_val("collx_netmon_drops_total", **lab) != r["packets"]:
        fail("prometheus drops %s != json %s" % (lab, r["packets"]))
    row = r"^%s\s+%s\s+%s\s+%s\s+%s\s+%d\s" % (r["dev"], re.escape(r["reason_name"]), re.escape(r["where"]),
                                         r["class"], "yes" if r["roce"] else "no", r["packets"])
    if not re.search(row, final, re.M):
        fail("table has no row " + row)

for expr in sys.argv[2:]:
    try:
        ok = eval(expr)
    except Exception as e:  # noqa: BLE001
        ok = False
        expr += " (%r)" % e
    print("%s: %s" % ("ok" if ok else "FAIL", expr))
    if not ok:
        bad += 1
print("json, prometheus and table agree" if not bad else "%d check(s) failed" % bad)
sys.exit(1 if bad else 0)
