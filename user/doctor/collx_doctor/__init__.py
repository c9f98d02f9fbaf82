# SPDX-License-Identifier: GPL-2.0
"""collx-doctor: the RDMA troubleshooting checklist as checks with verdicts.

facts.py and dcbnl.py read the node, uapi.py talks to /dev/collx and
libcollx, checks.py judges facts (pure functions, unit-tested on the host),
cluster.py compares nodes, report.py prints.
"""
