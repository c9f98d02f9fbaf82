#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Filter the kernel's `kernel-doc -rst` output (Sphinx flavour) into plain
reStructuredText that pandoc reads: each `.. c:type::` / `.. c:macro::` /
`.. c:function::` becomes a bold title with its one-line summary, Sphinx
labels go, and names ending in an underscore (COLLX_MEM_*) are escaped so
they are not taken for references."""
import re
import sys

out = []
lines = sys.stdin.read().splitlines()
i = 0
while i < len(lines):
    line = lines[i]
    m = re.match(r"^\.\. c:(type|macro|function|struct|enum)::\s*(.*)$", line)
    if re.match(r"^\.\. _.*:$", line):
        i += 1
        continue
    if m:
        out += ["", "**%s**" % m.group(2), ""]
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("   ")):
            if lines[i].strip():
                out.append(lines[i].strip())
            i += 1
        out.append("")
        continue
    # outside ``literals``: NAME_* and NAME_ followed by a non-word character
    parts = re.split(r"(``[^`]*``)", line)
    parts = [p if p.startswith("``") else re.sub(r"(\w)_(?=[^\w]|$)", r"\1\\_", p) for p in parts]
    out.append("".join(parts))
    i += 1
print("\n".join(out))
