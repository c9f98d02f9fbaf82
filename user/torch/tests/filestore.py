# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
"""Rendezvous through a FileStore: two forked processes on this node make
a 2-rank collx group from a store file in /tmp (node-local: the lab's
shared folder has no file locks across nodes) and allreduce/broadcast."""
import datetime
import os
import tempfile

import torch
import torch.distributed as dist

import collx.torch


def _child(path, rank):
    store = dist.FileStore(path, 2)
    pg = collx.torch.ProcessGroupCollx(store, rank, 2, datetime.timedelta(seconds=30))
    t = torch.full((5000,), rank + 1.0)
    pg.allreduce([t]).wait()
    b = torch.arange(10) * (rank + 1)
    pg.broadcast([b]).wait()
    ok = bool((t == 3.0).all()) and bool((b == torch.arange(10)).all())
    return 0 if ok else 3


def check_filestore(T):
    path = tempfile.mktemp(prefix="collx-filestore-")
    pids = []
    for rank in (0, 1):
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                code = _child(path, rank)
            except Exception as e:  # noqa: BLE001 - reported through the exit code
                print("filestore rank %d: %s" % (rank, e), flush=True)
            os._exit(code)
        pids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids]
    T.ok(codes == [0, 0], "FileStore rendezvous: 2 ranks on this node", "exit codes %s" % codes)
    if os.path.exists(path):
        os.unlink(path)
