# SPDX-License-Identifier: GPL-2.0
"""Printing verdicts: a line each, what to do under it; or JSON."""
import json

MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


def summary(verdicts):
    return {s: sum(1 for x in verdicts if x["status"] == s) for s in ("ok", "warn", "fail")}


def text(out, title, verdicts):
    out.write(title + "\n")
    w = max([len(x["check"]) for x in verdicts] + [5])
    for x in verdicts:
        out.write("%s  %-*s  %s\n" % (MARK[x["status"]], w, x["check"], x["message"]))
        if x["status"] != "ok" and x["advice"]:
            out.write("      %-*s  -> %s\n" % (w, "", x["advice"]))
    s = summary(verdicts)
    out.write("%d ok, %d warn, %d fail\n" % (s["ok"], s["warn"], s["fail"]))


def as_json(out, doc):
    doc["summary"] = summary(doc["verdicts"])
    json.dump(doc, out, indent=1, sort_keys=True)
    out.write("\n")
